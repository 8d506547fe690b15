#!/usr/bin/env python3
"""A FastMCP 4.x server (fastmcp==4.2.3), a real peer of mcptape's interop matrix.

Usage:
    fastmcp_server.py stdio
    fastmcp_server.py http       (Streamable HTTP, FastMCP's transport="http")

Over HTTP it binds 127.0.0.1 port 0 itself (so nothing can take the port in between),
hands the bound socket to FastMCP, and prints `fastmcp listening on port N` on stderr
before it serves; the endpoint is http://127.0.0.1:N/mcp.

Tools: `echo` (message -> "echo: message"), `add` (a + b), `shout` (text upper-cased).
FASTMCP_PEER_CHANGED=1 makes `echo` answer "changed: message": the "changed server" that
verify must flag.
"""

import os
import socket
import sys

from fastmcp import FastMCP

mcp = FastMCP("mcptape-fastmcp-peer")
CHANGED = os.environ.get("FASTMCP_PEER_CHANGED") == "1"


@mcp.tool
def echo(message: str) -> str:
    """Echoes the message back."""
    return f"changed: {message}" if CHANGED else f"echo: {message}"


@mcp.tool
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@mcp.tool
def shout(text: str) -> str:
    """Upper-cases the text."""
    return text.upper()


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "stdio":
        mcp.run(transport="stdio", show_banner=False)
    elif mode == "http":
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        print(f"fastmcp listening on port {sock.getsockname()[1]}", file=sys.stderr, flush=True)
        mcp.run(transport="http", show_banner=False, host="127.0.0.1", port=0,
                log_level="warning", sockets=[sock])
    else:
        sys.exit("usage: fastmcp_server.py {stdio|http}")


if __name__ == "__main__":
    main()
