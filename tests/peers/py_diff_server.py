#!/usr/bin/env python3
"""Two versions of one MCP server on the official Python SDK (`mcp` 2.3.0, its low-level
`Server`, so every schema is exactly as written here), for `mcptape diff`'s tests.

Usage:
    py_diff_server.py --version 1|2            (stdio)
    py_diff_server.py --version 1|2 --http     (Streamable HTTP on 127.0.0.1, a port the
                                                kernel picks; says `listening on port N`
                                                on stderr once it accepts connections)
    --broken-list                               tools/list answers error -32603

Version 2 changes version 1 the ways a server's clients care about:
    legacy      removed                                   (breaking)
    lookup      `mode` loses the enum value "full"        (breaking)
                new optional argument `lang`              (compatible)
                a new description                         (info)
                answers "v2 result for Q" instead of "result for Q"
    note        `text` narrowed from ["string","null"] to "string"   (breaking)
                new required argument `author`            (breaking)
    stats       outputSchema loses the property `mean`    (breaking)
    wipe        readOnlyHint true -> destructiveHint true (breaking)
    search      added                                     (compatible)
    tools/list answers in pages of three (`nextCursor`) in both versions.
    resource file:///old removed, file:///new added; prompt `summarize`'s `style`
    becomes required; the template `notes://{id}` is the same in both.
"""

import socket
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import MCPError
from mcp.server.lowlevel import Server


PAGE = 3
"""Tools per `tools/list` page (both versions list theirs in two pages)."""


def tools(version: int) -> list[dict[str, Any]]:
    mode = ["fast", "full"] if version == 1 else ["fast"]
    lookup_props: dict[str, Any] = {
        "query": {"type": "string", "description": "What to look up."},
        "limit": {"type": "integer", "maximum": 100},
        "mode": {"type": "string", "enum": mode},
    }
    if version == 2:
        lookup_props["lang"] = {"type": "string"}
    note_props: dict[str, Any] = {"text": {"type": ["string", "null"] if version == 1 else "string"}}
    note_required = ["text"]
    if version == 2:
        note_props["author"] = {"type": "string"}
        note_required.append("author")
    stats_out: dict[str, Any] = {"count": {"type": "integer"}}
    if version == 1:
        stats_out["mean"] = {"type": "number"}
    wipe_hints = {"readOnlyHint": True} if version == 1 else {"readOnlyHint": False, "destructiveHint": True}
    listed = [
        {
            "name": "lookup",
            "description": "Looks things up." if version == 1 else "Looks things up, faster.",
            "inputSchema": {"type": "object", "properties": lookup_props, "required": ["query"]},
            "annotations": {"readOnlyHint": True},
        },
        {
            "name": "note",
            "description": "Keeps a note.",
            "inputSchema": {"type": "object", "properties": note_props, "required": note_required},
        },
        {
            "name": "stats",
            "description": "Counts.",
            "inputSchema": {"type": "object", "properties": {}},
            "outputSchema": {"type": "object", "properties": stats_out, "required": list(stats_out)},
        },
        {
            "name": "wipe",
            "description": "Clears the cache.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": wipe_hints,
        },
    ]
    if version == 1:
        listed.append({"name": "legacy", "description": "The old way.", "inputSchema": {"type": "object"}})
    else:
        listed.append({"name": "search", "description": "Searches.", "inputSchema": {"type": "object"}})
    return listed


def build(version: int, broken: bool = False) -> Server:
    async def list_tools(_ctx: Any, params: Any) -> types.ListToolsResult:
        if broken:
            # A release whose tools/list fails: the capability is declared, the list errs.
            raise MCPError(-32603, "tools/list crashed")
        # Pages of PAGE tools, the cursor being the index of the next one.
        start = int(params.cursor) if params is not None and params.cursor else 0
        listed = tools(version)
        page = [types.Tool.model_validate(t) for t in listed[start : start + PAGE]]
        more = str(start + PAGE) if start + PAGE < len(listed) else None
        return types.ListToolsResult(tools=page, next_cursor=more)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        query = (params.arguments or {}).get("query", "")
        prefix = "result" if version == 1 else "v2 result"
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{prefix} for {query}")])

    async def list_resources(_ctx: Any, _params: Any) -> types.ListResourcesResult:
        uris = ["file:///readme", "file:///old" if version == 1 else "file:///new"]
        return types.ListResourcesResult(
            resources=[types.Resource.model_validate({"uri": u, "name": u.rsplit("/", 1)[1], "mimeType": "text/plain"}) for u in uris]
        )

    async def list_templates(_ctx: Any, _params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[types.ResourceTemplate.model_validate({"uriTemplate": "notes://{id}", "name": "notes"})]
        )

    async def list_prompts(_ctx: Any, _params: Any) -> types.ListPromptsResult:
        args = [{"name": "text", "required": True}, {"name": "style", "required": version == 2}]
        return types.ListPromptsResult(prompts=[types.Prompt.model_validate({"name": "summarize", "arguments": args})])

    return Server(
        "py-diff",
        version=str(version),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_list_prompts=list_prompts,
    )


async def stdio(server: Server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def http(server: Server) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="warning"))

    async def announce() -> None:
        while not web.started:
            await anyio.sleep(0.01)
        print(f"listening on port {port}", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await web.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main() -> None:
    args = sys.argv[1:]
    if len(args) < 2 or args[0] != "--version" or args[1] not in ("1", "2"):
        sys.exit("usage: py_diff_server.py --version 1|2 [--http] [--broken-list]")
    server = build(int(args[1]), "--broken-list" in args[2:])
    anyio.run(http if "--http" in args[2:] else stdio, server)


if __name__ == "__main__":
    main()
