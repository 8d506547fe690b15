#!/usr/bin/env python3
"""The official Python SDK (`mcp` 2.3.0) client cancelling a call, over Streamable HTTP.

Usage: py_cancel.py URL

Calls `slow` (5 s) and gives up after 0.3 s (an anyio cancel scope: the SDK sends
`notifications/cancelled`), then calls `echo`. Prints `{"step": "cancelled"}` when the
slow call was cancelled by the client (an answer to it, error or not, fails the run), the
echo's text, then `{"step": "closed"}`. Exit status 1 with the traceback on any failure.
"""

import json
import sys
import traceback

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


async def main(url: str) -> None:
    async with streamable_http_client(url) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            with anyio.move_on_after(0.3) as scope:
                result = await session.call_tool("slow", {"seconds": 5})
                raise RuntimeError(f"the slow call was answered: {result}")
            if not scope.cancelled_caught:
                raise RuntimeError("the slow call was not cancelled")
            emit("cancelled")
            result = await session.call_tool("echo", {"message": "after the cancel"})
            emit("echo", text=result.content[0].text)
    emit("closed")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: py_cancel.py URL", file=sys.stderr)
        sys.exit(2)
    try:
        anyio.run(main, sys.argv[1])
    except BaseException:  # noqa: BLE001 - any failure is the test's
        traceback.print_exc()
        sys.exit(1)
