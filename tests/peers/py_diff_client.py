#!/usr/bin/env python3
"""A real MCP client on the official Python SDK (`mcp` 2.3.0) for `mcptape diff`'s tests.

Usage:
    py_diff_client.py -- CMD [ARGS...]

It starts CMD as a stdio server, lists its tools (every page), resources, resource templates and
prompts, calls `lookup` with {"query": "x"}, and prints `done` on stdout.
"""

import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
import mcp_types as types


async def run(command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (read_stream, write_stream):
        async with ClientSession(read_stream, write_stream) as session:
            await session.initialize()
            listed = await session.list_tools()
            while listed.next_cursor is not None:
                cursor = types.PaginatedRequestParams(cursor=listed.next_cursor)
                listed = await session.list_tools(params=cursor)
            await session.list_resources()
            await session.list_resource_templates()
            await session.list_prompts()
            await session.call_tool("lookup", {"query": "x"})
    print("done", flush=True)


def main() -> None:
    args = sys.argv[1:]
    if not args or args[0] != "--" or len(args) < 2:
        sys.exit("usage: py_diff_client.py -- CMD [ARGS...]")
    anyio.run(run, args[1:])


if __name__ == "__main__":
    main()
