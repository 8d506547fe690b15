#!/usr/bin/env python3
"""The Python SDK 2.3 high-level `Client` (mcp.client.Client) for mcptape's interop matrix.

Usage:
    py_matrix.py MODE [--call TOOL JSON_ARGS]... -- CMD [ARGS...]    (a stdio server)
    py_matrix.py MODE [--call TOOL JSON_ARGS]... -- http://HOST:PORT/mcp

MODE is the Client's `mode`: `auto` (probe server/discover, fall back to initialize),
`legacy` (the initialize handshake), or a pinned modern version such as `2026-07-28`
(adopted without a probe). It prints a deterministic transcript, one JSON line per step:

    {"step": "connected", "protocolVersion": "..."}
    {"step": "list_tools", "tools": [...]}            (sorted by name)
    {"step": "call", "tool": "...", "arguments": {...}, "result": {...}}
    {"step": "closed"}

Results are SDK models dumped with model_dump(mode="json", by_alias=True,
exclude_none=True), keys sorted. Response caching is off (cache=None) so every call
reaches the server. Exit status 1 on any error, with the traceback on stderr.
"""

import json
import sys
import traceback
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters


def emit(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}, ensure_ascii=False, sort_keys=True), flush=True)


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def parse(argv: list[str]) -> tuple[str, list[tuple[str, dict[str, Any]]], list[str]]:
    if "--" not in argv or not argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    head, target = argv[:cut], argv[cut + 1:]
    mode, rest = head[0], head[1:]
    calls = []
    while rest:
        if rest[0] != "--call" or len(rest) < 3:
            sys.exit(__doc__)
        calls.append((rest[1], json.loads(rest[2])))
        rest = rest[3:]
    if not target:
        sys.exit(__doc__)
    return mode, calls, target


async def main() -> None:
    mode, calls, target = parse(sys.argv[1:])
    if target[0].startswith("http://") or target[0].startswith("https://"):
        server: Any = target[0]
    else:
        server = StdioServerParameters(command=target[0], args=target[1:])
    async with Client(server, mode=mode, cache=None) as client:
        emit("connected", protocolVersion=client.protocol_version)
        tools = sorted(dump(await client.list_tools())["tools"], key=lambda t: t["name"])
        emit("list_tools", tools=tools)
        for tool, arguments in calls:
            emit("call", tool=tool, arguments=arguments,
                 result=dump(await client.call_tool(tool, arguments)))
    emit("closed")


if __name__ == "__main__":
    try:
        anyio.run(main)
    except Exception:
        traceback.print_exc()
        sys.exit(1)
