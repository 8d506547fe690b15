#!/usr/bin/env python3
"""A stdio MCP server on FastMCP 4.x (fastmcp==4.2.3) that reports progress, for mcptape's
tests of `call`'s progress bar.

Usage: py_progress_server.py

Tools: `steps(n, seconds, message)`: n times, sleeps `seconds` and then reports progress
`i` of `n` with `message` (the client's progressToken decides whether the SDK sends it),
and with `log` true a log message `log i` (notifications/message) after each, then
answers `done after N steps`. The message is sent as given: a test passes one with
terminal escape codes in it, which mcptape must show escaped.
"""

import anyio
from fastmcp import Context, FastMCP

mcp = FastMCP("mcptape-progress-peer")


@mcp.tool
async def steps(n: int, seconds: float, message: str, ctx: Context, log: bool = False) -> str:
    """Sleeps `seconds` n times, reporting progress after each step (and, with `log`,
    a log message `log i` after it)."""
    for i in range(1, n + 1):
        await anyio.sleep(seconds)
        await ctx.report_progress(progress=i, total=n, message=message)
        if log:
            await ctx.info(f"log {i}")
    return f"done after {n} steps"


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False, log_level="warning")
