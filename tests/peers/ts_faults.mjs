#!/usr/bin/env node
// The official TypeScript SDK client (@modelcontextprotocol/sdk 1.32.2) against a
// server with injected faults, for mcptape's tests: how the SDK's own handling sees
// them. One JSON line per step on stdout.
//
// Usage:
//     node ts_faults.mjs SCENARIO FIRST SECOND (--url URL | -- CMD [ARGS...])
//
// FIRST and SECOND are calls, `TOOL=JSON_ARGS`. With --url it speaks Streamable HTTP
// (StreamableHTTPClientTransport); else it launches CMD as a stdio server, passing it
// our whole environment (so a test's HOME and MCPTAPE_* reach mcptape).
//
// Scenarios:
//     timeout     FIRST with a request timeout of 500 ms (RequestOptions `timeout`),
//                 which the SDK turns into McpError RequestTimeout (-32001) and a
//                 notifications/cancelled; then SECOND, which must be answered:
//                   {"step":"first","error":{"code":-32001,"message":"..."}}
//                   {"step":"second","result":{...}}
//     delay       FIRST, then SECOND without waiting for FIRST's answer; each answer as
//                 it arrives, with the milliseconds since its own request was sent:
//                   {"step":"second","ms":12,"result":{...}}
//                   {"step":"first","ms":812,"result":{...}}
//     disconnect  FIRST, whose answer never comes because the server goes away: the
//                 error the SDK gives (its class, code and message):
//                   {"step":"first","error":{"name":"McpError","code":-32000,...}}
//
// Every scenario ends with {"step":"done"}. Exit status 1 on anything unexpected (a
// call answered that should not have been), with its stack on stderr.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const USAGE =
  "usage: ts_faults.mjs {timeout|delay|disconnect} TOOL=JSON TOOL=JSON (--url URL | -- CMD [ARGS...])";

/// The request timeout of the timed-out call, in milliseconds.
const TIMEOUT_MS = 500;

function emit(step, fields = {}) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

function call(spec) {
  const at = spec.indexOf("=");
  if (at < 0) throw new Error(USAGE);
  return { name: spec.slice(0, at), arguments: JSON.parse(spec.slice(at + 1)) };
}

function parse(argv) {
  const [scenario, first, second, ...rest] = argv;
  if (!scenario || !first || !second) throw new Error(USAGE);
  if (rest[0] === "--url" && rest[1]) {
    return { scenario, first: call(first), second: call(second), url: rest[1] };
  }
  if (rest[0] !== "--" || rest.length < 2) throw new Error(USAGE);
  return { scenario, first: call(first), second: call(second), command: rest[1], args: rest.slice(2) };
}

function failure(err) {
  return { name: err?.constructor?.name, code: err?.code, message: String(err?.message ?? err) };
}

const SCENARIOS = {
  async timeout(client, first, second) {
    try {
      const result = await client.callTool(first, undefined, { timeout: TIMEOUT_MS });
      throw new Error(`the first call was answered: ${JSON.stringify(result)}`);
    } catch (err) {
      if (err?.code !== -32001) throw err;
      emit("first", { error: failure(err) });
    }
    emit("second", { result: await client.callTool(second) });
  },

  async delay(client, first, second) {
    const timed = (step, spec) => {
      const sent = performance.now();
      return client.callTool(spec).then((result) => {
        emit(step, { ms: Math.round(performance.now() - sent), result });
      });
    };
    const one = timed("first", first);
    // The second request goes out only once the first is on its way.
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all([one, timed("second", second)]);
  },

  async disconnect(client, first) {
    try {
      const result = await client.callTool(first, undefined, { timeout: 10000 });
      throw new Error(`the call was answered: ${JSON.stringify(result)}`);
    } catch (err) {
      if (err?.code === -32001) throw err;
      emit("first", { error: failure(err) });
    }
  },
};

async function main() {
  const { scenario, first, second, url, command, args } = parse(process.argv.slice(2));
  const run = SCENARIOS[scenario];
  if (!run) throw new Error(USAGE);
  const transport = url
    ? new StreamableHTTPClientTransport(new URL(url))
    : new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "mcptape-ts-faults", version: "0.0.0" });
  await client.connect(transport);
  await run(client, first, second);
  emit("done");
  await client.close().catch(() => {});
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
