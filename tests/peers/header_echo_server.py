#!/usr/bin/env python3
"""A FastMCP (fastmcp==4.2.3) Streamable HTTP server whose `whoami` tool answers with the
`Authorization` header of the HTTP request that called it: the install tests check that
a header install moved into an entry's env reached the server.

Usage: header_echo_server.py — binds 127.0.0.1 port 0 itself and prints
`header-echo listening on port N` on stderr before it serves http://127.0.0.1:N/mcp.
"""

import socket
import sys

from fastmcp import FastMCP
from fastmcp.server.dependencies import get_http_request

mcp = FastMCP("mcptape-header-echo")


@mcp.tool
def whoami() -> str:
    """The Authorization header this call came with."""
    return "authorization: " + get_http_request().headers.get("authorization", "<none>")


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"header-echo listening on port {sock.getsockname()[1]}", file=sys.stderr, flush=True)
    mcp.run(transport="http", show_banner=False, host="127.0.0.1", port=0,
            log_level="warning", sockets=[sock])


if __name__ == "__main__":
    main()
