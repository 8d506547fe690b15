#!/usr/bin/env python3
"""A small MCP server on the official Python SDK (`mcp` 2.3.0 `MCPServer`) for mcptape's
policy tests: it appends one JSON line per tools/call it receives to LOG (an argument:
SDK clients scrub the environment of the servers they start), so a test can show that a
call the gate refused never reached it.

Usage:
    py_policy_server.py stdio LOG
    py_policy_server.py http LOG  (Streamable HTTP on 127.0.0.1, a port the kernel picks;
                                  says `listening on port N` on stderr once it listens)

Tools (none with an outputSchema):
    echo(message)        -> "Echo: MESSAGE"        no annotations
    read_file(path)      -> "contents of PATH"     readOnlyHint: true
    delete_file(path)    -> "deleted PATH"         destructiveHint: true
    write_file(path, content) -> "wrote N bytes to PATH"   destructiveHint: false
    transfer(amount: int, confirm: bool) -> "sent AMOUNT"  destructiveHint: false; pydantic's
                         lax mode reads "5000" as 5000 and "yes" as True (logged as read)
"""

import json
import socket
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("policy-peer")


def log(tool: str, arguments: dict) -> None:
    path = sys.argv[2] if len(sys.argv) > 2 else None
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool(structured_output=False)
def echo(message: str) -> str:
    """Answers with the message."""
    log("echo", {"message": message})
    return f"Echo: {message}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def read_file(path: str) -> str:
    """Reads a file (pretends to)."""
    log("read_file", {"path": path})
    return f"contents of {path}"


@server.tool(annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False), structured_output=False)
def delete_file(path: str) -> str:
    """Deletes a file (pretends to)."""
    log("delete_file", {"path": path})
    return f"deleted {path}"


@server.tool(annotations=ToolAnnotations(destructiveHint=False, readOnlyHint=False), structured_output=False)
def write_file(path: str, content: str) -> str:
    """Writes a file (pretends to)."""
    log("write_file", {"path": path, "content": content})
    return f"wrote {len(content)} bytes to {path}"


@server.tool(annotations=ToolAnnotations(destructiveHint=False, readOnlyHint=False), structured_output=False)
def transfer(amount: int, confirm: bool = False) -> str:
    """Sends an amount (pretends to)."""
    log("transfer", {"amount": amount, "confirm": confirm})
    return f"sent {amount}"


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
        print(f"listening on port {sock.getsockname()[1]}", file=sys.stderr, flush=True)
        uvicorn.Server(config).run(sockets=[sock])
    else:
        sys.exit("usage: py_policy_server.py {stdio|http} LOG")


if __name__ == "__main__":
    main()
