#!/usr/bin/env node
// The official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) for mcptape's
// interop matrix: a generic transcript, one JSON line per step.
//
// Usage:
//     node ts_matrix.mjs [--call TOOL JSON_ARGS]... -- CMD [ARGS...]
//
// It launches CMD as a stdio server (StdioClientTransport, which hands the server only
// the SDK's default environment), lists the tools (sorted by name), makes each call in
// order, and prints:
//
//     {"step":"list_tools","tools":[...]}
//     {"step":"call","tool":"...","arguments":{...},"result":{...}}
//     {"step":"closed"}
//
// Exit status 1 on any error, with its stack on stderr.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const USAGE = "usage: ts_matrix.mjs [--call TOOL JSON_ARGS]... -- CMD [ARGS...]";

function emit(step, fields = {}) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

function parse(argv) {
  const cut = argv.indexOf("--");
  if (cut < 0 || cut === argv.length - 1) throw new Error(USAGE);
  const head = argv.slice(0, cut);
  const calls = [];
  while (head.length) {
    if (head[0] !== "--call" || head.length < 3) throw new Error(USAGE);
    calls.push([head[1], JSON.parse(head[2])]);
    head.splice(0, 3);
  }
  return { calls, command: argv[cut + 1], args: argv.slice(cut + 2) };
}

async function main() {
  const { calls, command, args } = parse(process.argv.slice(2));
  const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
  const client = new Client({ name: "mcptape-ts-matrix", version: "0.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  emit("list_tools", { tools });
  for (const [tool, args] of calls) {
    const result = await client.callTool({ name: tool, arguments: args });
    emit("call", { tool, arguments: args, result });
  }
  await client.close();
  emit("closed");
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
