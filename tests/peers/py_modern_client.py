#!/usr/bin/env python3
"""A real modern MCP client on the official Python SDK (`mcp` 2.3.0) in its default
`auto` mode (`server/discover` first, the 2026-07-28 stateless revision when the server
offers it, else `initialize`), for mcptape's tests.

Usage:
    py_modern_client.py -- http://HOST:PORT/mcp      (Streamable HTTP)
    py_modern_client.py -- CMD [ARGS...]             (a stdio server)

It prints one JSON object per line to stdout, one per step:

    {"step": "connected", "protocolVersion": "2026-07-28"}
    {"step": "list_tools", "names": [...]}
    {"step": "call", "tool": "echo", "result": {...CallToolResult...}}
    {"step": "closed"}

The calls: echo, add, and confirm (a multi-round-trip call: the server answers
`input_required` with an elicitation, which this client accepts, and the SDK retries).
The exit status is 0 when every step succeeded; on any exception the traceback goes
to stderr and the exit status is 1.
"""

import json
import sys
import traceback
from typing import Any

import anyio
import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters


def emit(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}, ensure_ascii=False), flush=True)


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def accept(_context: Any, _params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def main(target: list[str]) -> None:
    if len(target) == 1 and target[0].startswith("http"):
        server: Any = target[0]
    else:
        server = StdioServerParameters(command=target[0], args=target[1:])
    async with Client(server, elicitation_callback=accept) as client:
        emit("connected", protocolVersion=client.protocol_version)
        tools = await client.list_tools()
        emit("list_tools", names=sorted(t.name for t in tools.tools))
        for tool, arguments in [
            ("echo", {"message": "héllo"}),
            ("add", {"a": 2, "b": 3}),
            ("confirm", {"name": "tape"}),
        ]:
            result = await client.call_tool(tool, arguments)
            emit("call", tool=tool, result=dump(result))
    emit("closed")


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--" not in args or args.index("--") == len(args) - 1:
        print("usage: py_modern_client.py -- URL | CMD [ARGS...]", file=sys.stderr)
        sys.exit(2)
    try:
        anyio.run(main, args[args.index("--") + 1 :])
    except Exception:
        traceback.print_exc()
        sys.exit(1)
