"""A stdio MCP server for mcptape's tap-order test: its answer to `tools/call` is a
`notifications/tools/list_changed` and the call's result in ONE write, so the proxy, which
writes an answer that follows a notification only once the client has read the
notification, has to split that write and wait in between."""
import json
import os
import sys

for line in sys.stdin:
    m = json.loads(line)
    mid, method = m.get("id"), m.get("method")
    out = None
    if method == "initialize":
        out = json.dumps({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "order", "version": "1"}}}) + "\n"
    elif method == "tools/call":
        out = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\n"
        out += json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"content": []}}) + "\n"
    elif method == "tools/list":
        out = json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"tools": []}}) + "\n"
    if out:
        os.write(1, out.encode())
