#!/usr/bin/env python3
"""Calls tools in a given order with the official Python SDK (`mcp`), for mcptape's tests.

Usage:
    py_calls.py [--sampling] TOOL=JSON_ARGS [TOOL=JSON_ARGS ...] -- CMD [ARGS...]
    py_calls.py [--sampling] TOOL=JSON_ARGS ... -- http://HOST:PORT/mcp   (Streamable HTTP)

It starts CMD as a stdio MCP server with the SDK's `stdio_client`, initializes, calls
each tool in turn with its JSON arguments, and prints one JSON line per call, after
one line per progress notification the call got:

    {"tool": "slow", "progress": 1.0}
    {"tool": "echo", "isError": false, "text": "..."}

A call the SDK raises for (a JSON-RPC error) prints {"tool": ..., "error": CODE,
"message": ...} and the exit status becomes 1; every call is still made. A tool error
(`isError: true`) is a result, not a failure. With --sampling the client declares the
sampling capability and answers each sampling request with the text "sampled: PROMPT",
printing {"sampling": PROMPT} first.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
import mcp.types as types
from mcp.shared.exceptions import MCPError


async def sampling(_context, params: types.CreateMessageRequestParams):
    prompt = "".join(m.content.text for m in params.messages if m.content.type == "text")
    print(json.dumps({"sampling": prompt}), flush=True)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"sampled: {prompt}"),
        model="py-calls",
    )


def transport(cmd: list):
    if len(cmd) == 1 and cmd[0].startswith(("http://", "https://")):
        return streamable_http_client(cmd[0])
    return stdio_client(StdioServerParameters(command=cmd[0], args=cmd[1:]))


async def main(calls: list, cmd: list, with_sampling: bool) -> int:
    status = 0
    callbacks = {"sampling_callback": sampling} if with_sampling else {}
    async with transport(cmd) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write, **callbacks) as session:
            await session.initialize()
            for tool, args in calls:
                async def progress(p, total, message, tool=tool):
                    print(json.dumps({"tool": tool, "progress": p}), flush=True)

                try:
                    result = await session.call_tool(tool, args, progress_callback=progress)
                except MCPError as e:
                    print(json.dumps({"tool": tool, "error": e.code,
                                      "message": e.message}), flush=True)
                    status = 1
                    continue
                text = "".join(c.text for c in result.content if c.type == "text")
                print(json.dumps({"tool": tool, "isError": bool(result.is_error),
                                  "text": text}), flush=True)
    return status


if __name__ == "__main__":
    argv = sys.argv[1:]
    with_sampling = argv[:1] == ["--sampling"]
    argv = argv[1:] if with_sampling else argv
    if "--" not in argv:
        sys.exit("usage: py_calls.py TOOL=JSON_ARGS... -- CMD [ARGS...]")
    cut = argv.index("--")
    calls = []
    for spec in argv[:cut]:
        tool, _, args = spec.partition("=")
        calls.append((tool, json.loads(args or "{}")))
    sys.exit(anyio.run(main, calls, argv[cut + 1:], with_sampling))
