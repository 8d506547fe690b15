#!/usr/bin/env node
// A TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) client that asks for progress and
// prints what it saw, for tests/peers/progress-runs.
//
// Usage:
//     node ts_progress.mjs [--steps N] [--duration SECS] -- CMD [ARGS...]
//
// It launches CMD as a stdio MCP server (StdioClientTransport), calls
// server-everything's `trigger-long-running-operation` with `steps` (default 3) and
// `duration` (default 0.3 s) and an `onprogress` callback, and prints one line:
//
//     progress [1,2,3] lost 0
//
// the progress values the callback saw, in order, and how many progress
// notifications the SDK reported as "unknown token" through `onerror` (the ones it
// dropped). The exit status is 0 when the call succeeded, whatever progress came.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const USAGE = "usage: ts_progress.mjs [--steps N] [--duration SECS] -- CMD [ARGS...]";

function parseArgs(argv) {
  const split = argv.indexOf("--");
  const command = split < 0 ? [] : argv.slice(split + 1);
  const options = split < 0 ? argv : argv.slice(0, split);
  let steps = 3;
  let duration = 0.3;
  for (let i = 0; i < options.length; i += 2) {
    const value = Number(options[i + 1]);
    if (options[i] === "--steps" && Number.isInteger(value)) steps = value;
    else if (options[i] === "--duration" && Number.isFinite(value)) duration = value;
    else command.length = 0;
  }
  if (command.length === 0) {
    process.stderr.write(USAGE + "\n");
    process.exit(2);
  }
  return { steps, duration, command };
}

async function main() {
  const { steps, duration, command } = parseArgs(process.argv.slice(2));
  const transport = new StdioClientTransport({ command: command[0], args: command.slice(1) });
  const client = new Client({ name: "mcptape-ts-progress", version: "0.1.0" });
  let lost = 0;
  client.onerror = (err) => {
    if (String(err?.message ?? err).includes("unknown token")) lost += 1;
    else process.stderr.write(`ts_progress: SDK error: ${err?.message ?? err}\n`);
  };
  await client.connect(transport);
  const seen = [];
  try {
    await client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration, steps } },
      undefined,
      { onprogress: ({ progress }) => seen.push(progress) },
    );
    // A dropped notification's microtask runs right after the answer's: let it report.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    await client.close();
  }
  process.stdout.write(`progress ${JSON.stringify(seen)} lost ${lost}\n`);
}

try {
  await main();
} catch (err) {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
}
