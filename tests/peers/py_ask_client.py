#!/usr/bin/env python3
"""A Python SDK (`mcp`) client for mcptape's `ask` tests: a call held for approval while
the same connection goes on.

Usage: py_ask_client.py MODE -- CMD [ARGS...]   (stdio)  |  ... -- URL  (HTTP)

Initializes and lists the tools, then calls `write_file` (the call a policy holds) and,
while it is under way, `echo` on the same session, concurrently. Prints one JSON line
per answer as it comes, `{"call": TOOL, "isError": B, "text": TEXT}` (or
`{"call": TOOL, "error": {"code": C, "message": M}}` when the SDK raised MCPError):
the echo's first, while the other is held. The echo is sent after `write_file` (they
are written in the order they are started), so its answer also means the proxy has read
the held call.

MODE:
    wait     then waits for `write_file`'s answer, whatever a person decides;
    cancel   gives up on `write_file` once the echo is answered (an anyio cancel scope:
             the SDK sends `notifications/cancelled`), prints `{"step": "cancelled"}`, and
             calls `echo` again.

Ends with `{"step": "closed"}`; exit status 1 with the traceback on any failure.
"""

import json
import sys
import traceback

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp import MCPError


def emit(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


async def call(session: ClientSession, tool: str, arguments: dict) -> None:
    try:
        r = await session.call_tool(tool, arguments)
        text = "".join(getattr(c, "text", "") for c in r.content)
        emit(call=tool, isError=bool(r.is_error), text=text)
    except MCPError as e:
        emit(call=tool, error={"code": e.error.code, "message": e.error.message})


async def play(session: ClientSession, mode: str) -> None:
    await session.initialize()
    await session.list_tools()
    scope = anyio.CancelScope()

    async def held() -> None:
        with scope:
            await call(session, "write_file", {"path": "/srv/app.yaml", "content": "x: 1"})
            return
        emit(step="cancelled")

    async with anyio.create_task_group() as tg:
        tg.start_soon(held)
        # Let the held call's request go out first.
        await anyio.lowlevel.checkpoint()
        await call(session, "echo", {"message": "while held"})
        if mode == "cancel":
            scope.cancel()
    if mode == "cancel":
        await call(session, "echo", {"message": "after the cancel"})


async def main(mode: str, target: list[str]) -> None:
    if target[0].startswith("http"):
        async with streamable_http_client(target[0]) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await play(session, mode)
    else:
        params = StdioServerParameters(command=target[0], args=target[1:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await play(session, mode)
    emit(step="closed")


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("wait", "cancel") or sys.argv[2] != "--":
        print("usage: py_ask_client.py wait|cancel -- CMD [ARGS...] | URL", file=sys.stderr)
        sys.exit(2)
    try:
        anyio.run(main, sys.argv[1], sys.argv[3:])
    except BaseException:  # noqa: BLE001 - any failure is the test's
        traceback.print_exc()
        sys.exit(1)
