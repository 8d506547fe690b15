#!/usr/bin/env python3
"""A Python SDK (`mcp`) client for mcptape's fault tests.

Usage: py_faults.py N -- CMD [ARGS...]   (stdio)   |   py_faults.py N -- URL (HTTP)

Initializes, then calls the `echo` tool N times and prints one JSON line per call:
{"call": i, "error": {"code": C, "message": M}} when the SDK raised MCPError, or
{"call": i, "isError": B, "text": T} for a result. Exit 0 unless something else failed.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp import MCPError


async def calls(session: ClientSession, n: int) -> None:
    await session.initialize()
    for i in range(1, n + 1):
        try:
            r = await session.call_tool("echo", {"message": f"m{i}"})
            text = "".join(getattr(c, "text", "") for c in r.content)
            print(json.dumps({"call": i, "isError": bool(r.is_error), "text": text}), flush=True)
        except MCPError as e:
            print(json.dumps({"call": i, "error": {"code": e.error.code, "message": e.error.message}}), flush=True)


async def main() -> None:
    n = int(sys.argv[1])
    target = sys.argv[sys.argv.index("--") + 1 :]
    if target[0].startswith("http"):
        async with streamable_http_client(target[0]) as (r, w, *_):
            async with ClientSession(r, w) as s:
                await calls(s, n)
    else:
        params = StdioServerParameters(command=target[0], args=target[1:])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await calls(s, n)


anyio.run(main)
