#!/usr/bin/env python3
"""Ten concurrent `tools/call echo` from the official Python SDK (`mcp` 2.3.0) client.

Usage:
    py_concurrent.py -- CMD [ARGS...]            (a stdio server)
    py_concurrent.py -- http://HOST:PORT/mcp     (Streamable HTTP)

The calls go out together (`asyncio.gather`) without a `tools/list` first, so the SDK's
output-schema check (`ClientSession.validate_tool_result`) misses its cache for every
answer that arrives before the first listing's answer, and sends a `tools/list` for
each: how many depends on how the answers bunch up. Prints one line per answer
(`{"call": N, "text": ...}`) in call order, then `{"step": "closed"}`; exit status 1 with
the traceback on stderr on any failure.
"""

import asyncio
import json
import sys
import traceback

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

CALLS = 10


async def play(session: ClientSession) -> None:
    await session.initialize()
    results = await asyncio.gather(
        *(session.call_tool("echo", {"message": f"call {n}"}) for n in range(CALLS))
    )
    for n, result in enumerate(results):
        text = result.content[0].text if result.content else None
        print(json.dumps({"call": n, "text": text}), flush=True)


async def main(target: list[str]) -> None:
    if target[0].startswith("http://"):
        async with streamable_http_client(target[0]) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await play(session)
    else:
        params = StdioServerParameters(command=target[0], args=target[1:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await play(session)
    print(json.dumps({"step": "closed"}), flush=True)


if __name__ == "__main__":
    if "--" not in sys.argv or sys.argv.index("--") == len(sys.argv) - 1:
        print("usage: py_concurrent.py -- CMD [ARGS...] | URL", file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(main(sys.argv[sys.argv.index("--") + 1 :]))
    except Exception:  # noqa: BLE001 - any failure is the test's
        traceback.print_exc()
        sys.exit(1)
