#!/usr/bin/env bash
# Issue 13 j by hand: the Python SDK client's ten concurrent calls through the HTTP front
# (`proxy --listen`), recorded once against server-everything (streamableHttp), then
# replayed N times (default 50) with no server. Prints the number of clean replays. Needs
# `cargo build` and tests/peers/install; not part of the test suite (it takes minutes).
set -u
cd "$(dirname "$0")/../.."
N=${1:-50}
BIN=${MCPTAPE_BIN:-target/debug/mcptape}
EVERYTHING=tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js
PY=.venv/bin/python
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export MCPTAPE_HOME=$WORK/home

# Starts the front with ARGS, waits for its `listening on URL` line, sets URL and PID.
front() {
  rm -f "$WORK/front.err"
  "$BIN" proxy --server s --listen 127.0.0.1:0 "$@" 2>"$WORK/front.err" &
  PID=$!
  URL=
  for _ in $(seq 1 100); do
    URL=$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$WORK/front.err" | head -1)
    [ -n "$URL" ] && return 0
    sleep 0.1
  done
  echo "the front did not say where it listens" >&2
  cat "$WORK/front.err" >&2
  exit 2
}

PORT=0 node --require ./tests/peers/listening_port.cjs "$EVERYTHING" streamableHttp 2>"$WORK/server.err" >/dev/null &
SERVER=$!
trap 'kill -TERM "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
PORT=
for _ in $(seq 1 100); do
  PORT=$(sed -n 's/^bound to port \([0-9]*\)$/\1/p' "$WORK/server.err" | head -1)
  [ -n "$PORT" ] && break
  sleep 0.1
done
front --record "$WORK/j.ndjson" --url "http://127.0.0.1:$PORT/mcp"
"$PY" tests/peers/py_concurrent.py -- "$URL" >/dev/null || { echo "recording failed" >&2; cat "$WORK/front.err" >&2; exit 2; }
kill -TERM "$PID"; wait "$PID"
kill -TERM "$SERVER"
echo "recorded $(grep -c '"method":"tools/list"' "$WORK/j.ndjson") tools/list" >&2

ok=0
for i in $(seq 1 "$N"); do
  front --replay "$WORK/j.ndjson"
  if "$PY" tests/peers/py_concurrent.py -- "$URL" >"$WORK/out" 2>"$WORK/client.err"; then
    kill -TERM "$PID"
    if wait "$PID"; then ok=$((ok + 1)); else echo "run $i: the front's verdict failed" >&2; tail -5 "$WORK/front.err" >&2; fi
  else
    echo "run $i: the client failed" >&2; tail -3 "$WORK/client.err" >&2
    kill -TERM "$PID"; wait "$PID"
  fi
done
echo "$ok/$N replays clean"
