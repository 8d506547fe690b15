#!/usr/bin/env python3
"""A Python SDK (`mcp`) client for mcptape's policy tests: an agent that reads refusals
and goes on.

Usage: py_policy_client.py CALLS -- CMD [ARGS...]   (stdio)  |  ... -- URL  (HTTP)

CALLS is a JSON array of [tool, arguments] pairs. Initializes, lists the tools, then calls
each in turn and prints one JSON line per call: {"call": i, "tool": T, "isError": B,
"text": TEXT}, or {"call": i, "tool": T, "error": {"code": C, "message": M}} when the SDK
raised MCPError. Every call is made whatever the one before it answered. Exit 0 unless
something else failed.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp import MCPError


async def calls(session: ClientSession, plan: list) -> None:
    await session.initialize()
    await session.list_tools()
    for i, (tool, arguments) in enumerate(plan, start=1):
        try:
            r = await session.call_tool(tool, arguments)
            text = "".join(getattr(c, "text", "") for c in r.content)
            print(json.dumps({"call": i, "tool": tool, "isError": bool(r.is_error), "text": text}), flush=True)
        except MCPError as e:
            print(json.dumps({"call": i, "tool": tool, "error": {"code": e.error.code, "message": e.error.message}}), flush=True)


async def main() -> None:
    plan = json.loads(sys.argv[1])
    target = sys.argv[sys.argv.index("--") + 1 :]
    if target[0].startswith("http"):
        async with streamable_http_client(target[0]) as (r, w, *_):
            async with ClientSession(r, w) as s:
                await calls(s, plan)
    else:
        params = StdioServerParameters(command=target[0], args=target[1:])
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await calls(s, plan)


anyio.run(main)
