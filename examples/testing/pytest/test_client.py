"""A client test suite that runs against a tape instead of a live MCP server.

Run it under `mcptape replay` (see docs/testing-clients.md):

    mcptape replay tests/fixtures/client.ndjson --match any --record-mode once -- \
        pytest examples/testing/pytest

The first run finds no tape, so it records one (the real server runs); every run after
that replays it, with the server absent. The tests start the server the way a client's
MCP config would, through `mcptape proxy`, which takes its mode from `mcptape replay`.

Environment: MCPTAPE (the mcptape binary, default `mcptape`) and SERVER (the server
command, default mcptape's example server `example-server`).
"""

import os
import shlex
from contextlib import asynccontextmanager

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp import MCPError

MCPTAPE = os.environ.get("MCPTAPE", "mcptape")
SERVER = shlex.split(os.environ.get("SERVER", "example-server"))


def server(*faults: str) -> StdioServerParameters:
    """The server as a client config names it: behind `mcptape proxy`, with faults."""
    args = ["proxy", "--server", "example"]
    for rule in faults:
        args += ["--fault", rule]
    return StdioServerParameters(command=MCPTAPE, args=[*args, "--", *SERVER])


@asynccontextmanager
async def connected(params: StdioServerParameters):
    """An initialized client session with the server."""
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_greets_by_name():
    async with connected(server()) as session:
        result = await session.call_tool("greet", {"name": "Ada"})
    assert not result.is_error
    assert "Ada" in result.content[0].text


@pytest.mark.anyio
async def test_adds():
    async with connected(server()) as session:
        result = await session.call_tool("add", {"a": 2, "b": 3})
    assert result.content[0].text == "5"


@pytest.mark.anyio
async def test_a_rate_limit_reaches_the_client_as_an_error():
    rule = 'tools/call name=add: error -32000 "rate limited"'
    async with connected(server(rule)) as session:
        with pytest.raises(MCPError) as caught:
            await session.call_tool("add", {"a": 2, "b": 3})
    assert caught.value.code == -32000
    assert "rate limited" in caught.value.message
