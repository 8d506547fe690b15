#!/usr/bin/env python3
"""A tiny MCP server on the official Python SDK (`mcp` 2.3.0 `MCPServer`, Streamable HTTP),
for mcptape's tests of cancelled calls.

Usage: py_slow_server.py   (binds 127.0.0.1 on a port the kernel picks, and says
`listening on port N` on stderr once it listens)

Tools: `slow` (waits `seconds`, then answers), `echo` (answers `Echo: MESSAGE`). On the
2025 protocol era the SDK answers a request the client cancelled with
`-32800 Request cancelled`, after the client's `notifications/cancelled`, as FastMCP does.
"""

import socket
import sys

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("slow")


@server.tool()
async def slow(seconds: float) -> str:
    """Waits, then answers."""
    await anyio.sleep(seconds)
    return f"slept {seconds}s"


@server.tool()
async def echo(message: str) -> str:
    """Answers with the message."""
    return f"Echo: {message}"


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    print(f"listening on port {sock.getsockname()[1]}", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
