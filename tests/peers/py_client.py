#!/usr/bin/env python3
"""A real MCP client built on the official Python SDK (`mcp` 2.3.0), for mcptape's tests.

Usage:
    py_client.py SCENARIO [--message TEXT] -- CMD [ARGS...]
    py_client.py SCENARIO [--message TEXT] -- http://HOST:PORT/mcp   (Streamable HTTP)

It launches CMD as a stdio MCP server with the SDK's `stdio_client`, runs
SCENARIO, and prints one JSON object per line to stdout, one per step:

    {"step": "initialize", "result": {...InitializeResult...}}
    {"step": "list_tools", "result": {...}}
    {"step": "call", "tool": "echo", "arguments": {...}, "result": {...CallToolResult...}}
    {"step": "progress", "tool": "slow", "progress": 1.0, "total": 3.0, "message": "step 1"}
    {"step": "list_resources", "result": {...}}   (and list_prompts)
    {"step": "closed"}

Results are SDK models dumped with model_dump(mode="json", by_alias=True,
exclude_none=True). The exit status is 0 when every step succeeded; on any
exception the traceback goes to stderr and the exit status is 1. The server's
own stderr is passed through to ours.

Scenarios:
    example     against mcptape's example server: initialize, list_tools, call
                echo, add, slow (with progress), fail, exact, greet.
    everything  against @modelcontextprotocol/server-everything (stdio):
                initialize, list_tools, call echo and get-sum, list_resources,
                list_prompts.
    echo        initialize, call echo with --message TEXT (default "hi").
    replayable  against server-everything, with a sampling callback: echo, a
                long-running call with progress, a sampling request, a tool
                error and an unknown tool (both printed as steps).

No `env` is given to the server parameters on purpose: the SDK then hands the
server only its small default environment (HOME, LOGNAME, PATH, SHELL, TERM,
USER), and that scrubbing is part of what the tests observe.
"""

import json
import sys
import traceback
from typing import Any, NoReturn

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
import mcp.types as types

USAGE = "usage: py_client.py {example|everything|echo} [--message TEXT] -- CMD [ARGS...]"


def emit(step: str, **fields: Any) -> None:
    """Prints one step as a single JSON line."""
    print(json.dumps({"step": step, **fields}, ensure_ascii=False), flush=True)


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def call(session: ClientSession, tool: str, arguments: dict[str, Any], **kwargs: Any) -> None:
    result = await session.call_tool(tool, arguments, **kwargs)
    emit("call", tool=tool, arguments=arguments, result=dump(result))


async def scenario_example(session: ClientSession, _message: str) -> None:
    emit("list_tools", result=dump(await session.list_tools()))
    await call(session, "echo", {"message": "héllo"})
    await call(session, "add", {"a": 2, "b": 3})

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        emit("progress", tool="slow", progress=progress, total=total, message=message)

    await call(session, "slow", {"steps": 3, "ms": 10}, progress_callback=on_progress)
    await call(session, "fail", {})
    await call(session, "exact", {})
    await call(session, "greet", {"name": "tape"})


async def scenario_everything(session: ClientSession, _message: str) -> None:
    emit("list_tools", result=dump(await session.list_tools()))
    await call(session, "echo", {"message": "hello from python"})
    await call(session, "get-sum", {"a": 2, "b": 3})
    emit("list_resources", result=dump(await session.list_resources()))
    emit("list_prompts", result=dump(await session.list_prompts()))


async def call_or_error(session: ClientSession, tool: str, arguments: dict[str, Any], **kwargs: Any) -> None:
    """Calls a tool; a JSON-RPC error is a step too, not a failure of the run."""
    try:
        await call(session, tool, arguments, **kwargs)
    except Exception as error:  # noqa: BLE001 - the error itself is the output
        emit("call_error", tool=tool, arguments=arguments, error=str(error))


async def scenario_replayable(session: ClientSession, _message: str) -> None:
    """Against server-everything: what replay must reproduce exactly."""
    await call(session, "echo", {"message": "hello replay"})

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        emit("progress", tool="trigger-long-running-operation", progress=progress, total=total, message=message)

    await call(session, "trigger-long-running-operation", {"duration": 0.3, "steps": 3}, progress_callback=on_progress)
    await call(session, "trigger-sampling-request", {"prompt": "say hi", "maxTokens": 20})
    await call_or_error(session, "get-sum", {"a": "not a number", "b": 1})
    await call_or_error(session, "no-such-tool", {})


async def sampling(_context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    """A deterministic stand-in for an LLM: the same answer every run."""
    emit("sampling", params=dump(params))
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="hi from the sampling callback"),
        model="mcptape-test-model",
        stop_reason="endTurn",
    )


async def scenario_echo(session: ClientSession, message: str) -> None:
    await call(session, "echo", {"message": message})


SCENARIOS = {
    "example": scenario_example,
    "everything": scenario_everything,
    "echo": scenario_echo,
    "replayable": scenario_replayable,
}


def usage(problem: str = "") -> NoReturn:
    print(f"{problem}\n{USAGE}" if problem else USAGE, file=sys.stderr)
    sys.exit(2)


def parse_args(argv: list[str]) -> tuple[str, str, list[str]]:
    if "--" not in argv:
        usage()
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    if not options or options[0] not in SCENARIOS or not command:
        usage()
    message = "hi"
    rest = options[1:]
    while rest:
        if rest[0] == "--message" and len(rest) >= 2:
            message, rest = rest[1], rest[2:]
        else:
            usage(f"unexpected argument {rest[0]!r}")
    return options[0], message, command


def transport(command: list[str]) -> Any:
    """stdio for a command; Streamable HTTP when the command is a single http(s) URL."""
    if len(command) == 1 and command[0].startswith(("http://", "https://")):
        return streamable_http_client(command[0])
    return stdio_client(StdioServerParameters(command=command[0], args=command[1:]))


async def run(scenario: str, message: str, command: list[str]) -> None:
    async with transport(command) as (read_stream, write_stream):
        callbacks: dict[str, Any] = {"sampling_callback": sampling} if scenario == "replayable" else {}
        async with ClientSession(read_stream, write_stream, **callbacks) as session:
            emit("initialize", result=dump(await session.initialize()))
            await SCENARIOS[scenario](session, message)
    emit("closed")


def main() -> int:
    scenario, message, command = parse_args(sys.argv[1:])
    # Print UTF-8 whatever locale the caller's (possibly scrubbed) environment has.
    sys.stdout.reconfigure(encoding="utf-8")  # type: ignore[union-attr]
    try:
        anyio.run(run, scenario, message, command)
    except BaseException:  # noqa: BLE001 - report anything, including exception groups
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
