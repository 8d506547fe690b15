#!/usr/bin/env python3
"""A real MCP client (the official Python SDK, `mcp` 2.3.0) that calls the tools it is
told, in the order given, for mcptape's `--match any` tests.

Usage:
    py_calls.py [--sampling] CALL... -- CMD [ARGS...]          (stdio)
    py_calls.py [--sampling] CALL... -- http://HOST:PORT/mcp   (Streamable HTTP)

Each CALL is `TOOL` or `TOOL:JSON` (the arguments as a JSON object), e.g.
`echo:{"message":"hi"}`. One JSON line per step goes to stdout:

    {"step": "call", "tool": "echo", "text": "hi"}
    {"step": "progress", "tool": "slow", "progress": 1.0}
    {"step": "error", "tool": "echo", "code": -32090, "message": "..."}

With --sampling the client declares the sampling capability and answers each sampling
request with the text "sampled: PROMPT", after the step {"step": "sampling", "prompt": ...}.

An `MCPError` (McpError in older SDKs) is a step, not a failure (the run goes on); anything else ends the run
with exit status 1 and a traceback on stderr.
"""

import json
import sys
import traceback
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp import MCPError
import mcp.types as types


def emit(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}, ensure_ascii=False), flush=True)


async def sampling(_context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    prompt = "".join(m.content.text for m in params.messages if m.content.type == "text")
    emit("sampling", prompt=prompt)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"sampled: {prompt}"),
        model="py-calls",
    )


def transport(command: list[str]):
    if command[0].startswith("http://"):
        return streamable_http_client(command[0])
    return stdio_client(StdioServerParameters(command=command[0], args=command[1:]))


async def run(calls: list[str], command: list[str], with_sampling: bool) -> None:
    callbacks: dict[str, Any] = {"sampling_callback": sampling} if with_sampling else {}
    async with transport(command) as streams:
        read_stream, write_stream = streams[0], streams[1]
        async with ClientSession(read_stream, write_stream, **callbacks) as session:
            await session.initialize()
            for spec in calls:
                tool, _, raw = spec.partition(":")
                arguments = json.loads(raw) if raw else {}

                async def on_progress(progress: float, total: float | None, message: str | None, tool=tool) -> None:
                    emit("progress", tool=tool, progress=progress)

                try:
                    result = await session.call_tool(tool, arguments, progress_callback=on_progress)
                except MCPError as error:
                    emit("error", tool=tool, code=error.error.code, message=error.error.message)
                    continue
                text = " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")
                emit("call", tool=tool, text=text, is_error=bool(result.is_error))


def main() -> int:
    argv = sys.argv[1:]
    with_sampling = argv[:1] == ["--sampling"]
    argv = argv[1:] if with_sampling else argv
    if "--" not in argv:
        print("usage: py_calls.py CALL... -- CMD [ARGS...]", file=sys.stderr)
        return 2
    at = argv.index("--")
    try:
        anyio.run(run, argv[:at], argv[at + 1 :], with_sampling)
    except Exception:  # noqa: BLE001 - report and fail
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
