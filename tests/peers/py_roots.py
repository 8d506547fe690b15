#!/usr/bin/env python3
"""A real MCP client (the official Python SDK, `mcp` 2.3.0) that offers roots, for
mcptape's GET-stream tests.

Usage:
    py_roots.py -- CMD [ARGS...]          (stdio)
    py_roots.py -- http://HOST:PORT/mcp   (Streamable HTTP; the SDK opens a GET stream)

It initializes with the roots capability (one fixed root), lists the tools (whose
`readOnlyHint` lets verify play the call), calls server-everything's
`get-roots-list` tool (which asks the client `roots/list`; over HTTP it asks on the
GET stream) and prints one JSON object per line: {"step": "initialize", ...},
{"step": "list_tools", "names": [...]}, {"step": "call", "tool": "get-roots-list",
"result": {...}}, {"step": "closed"}.
Exit status 0 when every step succeeded; on any exception the traceback goes to stderr
and the exit status is 1.
"""

import json
import sys
import traceback
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
import mcp.types as types

ROOT = types.Root(uri="file:///srv/mcptape-root", name="mcptape test root")


def emit(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}, ensure_ascii=False), flush=True)


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def list_roots(_context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[ROOT])


def transport(command: list[str]) -> Any:
    if len(command) == 1 and command[0].startswith(("http://", "https://")):
        return streamable_http_client(command[0])
    return stdio_client(StdioServerParameters(command=command[0], args=command[1:]))


async def run(command: list[str]) -> None:
    async with transport(command) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream, list_roots_callback=list_roots) as session:
            emit("initialize", result=dump(await session.initialize()))
            tools = await session.list_tools()
            emit("list_tools", names=sorted(t.name for t in tools.tools))
            result = await session.call_tool("get-roots-list", {})
            emit("call", tool="get-roots-list", result=dump(result))
    emit("closed")


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") + 1 >= len(argv):
        print("usage: py_roots.py -- CMD [ARGS...] | URL", file=sys.stderr)
        return 2
    command = argv[argv.index("--") + 1 :]
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    try:
        anyio.run(run, command)
    except BaseException:  # noqa: BLE001 - report anything, including exception groups
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
