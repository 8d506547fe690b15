#!/usr/bin/env node
// A TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) client that offers roots, against
// @modelcontextprotocol/server-everything over stdio, for mcptape's causal-order tests.
//
// Usage: node ts_roots.mjs -- CMD [ARGS...]
//
// server-everything asks `roots/list` 350 ms after `notifications/initialized`, on its own
// (not in answer to any request). The client starts a long-running call at once, so the
// server's request comes while that call is under way and the client answers it between
// other traffic; then it calls `echo`. Prints one JSON line per step:
//     {"step":"roots"}              (each time the server asked for roots)
//     {"step":"call","tool":...,"result":{...}}
//     {"step":"closed"}
// Exit status 1 with the stack on stderr on any error.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

function emit(step, fields = {}) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

const split = process.argv.indexOf("--");
if (split < 0 || split === process.argv.length - 1) {
  process.stderr.write("usage: ts_roots.mjs -- CMD [ARGS...]\n");
  process.exit(2);
}
const [command, ...args] = process.argv.slice(split + 1);

try {
  const client = new Client(
    { name: "mcptape-roots", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    emit("roots");
    return { roots: [{ uri: "file:///tmp/mcptape-root", name: "root" }] };
  });
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  const call = async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    emit("call", { tool: name, result });
  };
  await call("trigger-long-running-operation", { duration: 1, steps: 2 });
  await call("echo", { message: "after the roots" });
  await client.close();
  emit("closed");
} catch (error) {
  process.stderr.write((error && error.stack) || String(error));
  process.stderr.write("\n");
  process.exit(1);
}
