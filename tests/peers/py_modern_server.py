#!/usr/bin/env python3
"""A real modern (2026-07-28-capable) MCP server on the official Python SDK (`mcp` 2.3.0),
over Streamable HTTP, for mcptape's tests.

Usage:
    py_modern_server.py

It binds 127.0.0.1 on a port the kernel picks and says `listening on port N` on stderr
once it accepts connections. The SDK serves both eras on `/mcp`: `initialize` sessions
and sessionless 2026-07-28 requests (`server/discover`, then each request on its own).

Tools:
    echo(message)   the message back as text.
    add(a, b)       the sum as text.
    wait(seconds)   says `wait started` on stderr, sleeps, answers `waited`; says
                    `wait cancelled` when the request is cancelled (its stream closed).
    confirm(name)   multi-round-trip (MRTR): the first round answers `input_required`
                    with an elicitation and a sealed `requestState`; the retry with an
                    accepting answer gets `confirmed NAME`, anything else `declined`.
"""

import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

app = MCPServer("py-modern")


@app.tool()
def echo(message: str) -> str:
    """Echoes the message."""
    return message


@app.tool()
def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return str(a + b)


@app.tool()
async def wait(seconds: float) -> str:
    """Waits, then answers."""
    print("wait started", file=sys.stderr, flush=True)
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        print("wait cancelled", file=sys.stderr, flush=True)
        raise
    return "waited"


@app.tool()
def confirm(name: str, ctx: Context) -> str | InputRequiredResult:
    """Asks the client to confirm, then says what it answered."""
    answers = ctx.input_responses
    if not answers:
        ask = ElicitRequest(
            params=ElicitRequestFormParams(
                message=f"confirm {name}?",
                requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
            )
        )
        return InputRequiredResult(input_requests={"ok": ask}, request_state=f"round-1:{name}")
    answer = answers.get("ok")
    accepted = getattr(answer, "action", None) == "accept"
    return f"confirmed {name}" if accepted else "declined"


async def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app.streamable_http_app(), log_level="warning")
    server = uvicorn.Server(config)

    async def announce() -> None:
        while not server.started:
            await anyio.sleep(0.01)
        print(f"listening on port {port}", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
