"""A stdio MCP client for mcptape's tap-order test: it spawns its server (argv), calls a
tool, and sends `tools/list` the moment it reads `notifications/tools/list_changed` — a
message caused by one the server sent, which the tape must hold after it."""
import json
import os
import subprocess
import sys

server = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def send(msg):
    server.stdin.write((json.dumps(msg) + "\n").encode())
    server.stdin.flush()


def messages():
    buf = b""
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield json.loads(line)
        chunk = os.read(server.stdout.fileno(), 65536)
        if not chunk:
            return
        buf += chunk


incoming = messages()
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
next(incoming)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}})
answered = 0
for m in incoming:
    if m.get("method") == "notifications/tools/list_changed":
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    if m.get("id") in (1, 2) and "method" not in m:
        answered += 1
        if answered == 2:
            break
print("client done", flush=True)
server.stdin.close()
server.wait()
