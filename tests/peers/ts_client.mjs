#!/usr/bin/env node
// A real MCP client built on the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32.2), for mcptape's tests.
//
// Usage:
//     node ts_client.mjs SCENARIO [--message TEXT] -- CMD [ARGS...]
//
// It launches CMD as a stdio MCP server with the SDK's StdioClientTransport,
// runs SCENARIO, and prints one JSON object per line to stdout, one per step:
//
//     {"step":"initialize","result":{"serverInfo":{...},"capabilities":{...},"instructions":"..."}}
//     {"step":"list_tools","result":{...}}
//     {"step":"call","tool":"echo","arguments":{...},"result":{...CallToolResult...}}
//     {"step":"progress","tool":"slow","progress":1,"total":3,"message":"step 1"}
//     {"step":"list_resources","result":{...}}   (and list_prompts)
//     {"step":"closed"}
//
// The SDK runs `initialize` inside connect() and does not expose the
// negotiated protocol version, so the initialize step reports what the
// client keeps: serverInfo, capabilities and instructions. The exit status is
// 0 when every step succeeded; on any error its stack goes to stderr and the
// exit status is 1. The server's own stderr is passed through to ours.
//
// Scenarios:
//     example     against mcptape's example server: list tools, call echo,
//                 add, slow (with progress), fail, exact, greet.
//     everything  against @modelcontextprotocol/server-everything (stdio):
//                 list tools, call echo and get-sum, list resources, prompts.
//     echo        call echo with --message TEXT (default "hi").
//
// No `env` is given to StdioClientTransport on purpose: the SDK then hands the
// server only its default environment (HOME, LOGNAME, PATH, SHELL, TERM,
// USER), and that scrubbing is part of what the tests observe.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const USAGE =
  "usage: ts_client.mjs {example|everything|echo} [--message TEXT] -- CMD [ARGS...]";

function emit(step, fields = {}) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + "\n");
}

async function call(client, tool, args, options) {
  const result = await client.callTool({ name: tool, arguments: args }, undefined, options);
  emit("call", { tool, arguments: args, result });
}

const SCENARIOS = {
  async example(client) {
    emit("list_tools", { result: await client.listTools() });
    await call(client, "echo", { message: "héllo" });
    await call(client, "add", { a: 2, b: 3 });
    const onprogress = ({ progress, total, message }) =>
      emit("progress", { tool: "slow", progress, total, message });
    await call(client, "slow", { steps: 3, ms: 10 }, { onprogress });
    await call(client, "fail", {});
    await call(client, "exact", {});
    await call(client, "greet", { name: "tape" });
  },
  async everything(client) {
    emit("list_tools", { result: await client.listTools() });
    await call(client, "echo", { message: "hello from typescript" });
    await call(client, "get-sum", { a: 2, b: 3 });
    emit("list_resources", { result: await client.listResources() });
    emit("list_prompts", { result: await client.listPrompts() });
  },
  async echo(client, message) {
    await call(client, "echo", { message });
  },
};

function usage(problem) {
  process.stderr.write((problem ? problem + "\n" : "") + USAGE + "\n");
  process.exit(2);
}

function parseArgs(argv) {
  const split = argv.indexOf("--");
  if (split < 0) usage();
  const [scenario, ...rest] = argv.slice(0, split);
  const command = argv.slice(split + 1);
  if (!(scenario in SCENARIOS) || command.length === 0) usage();
  let message = "hi";
  while (rest.length > 0) {
    if (rest[0] === "--message" && rest.length >= 2) {
      message = rest[1];
      rest.splice(0, 2);
    } else {
      usage(`unexpected argument ${JSON.stringify(rest[0])}`);
    }
  }
  return { scenario, message, command };
}

async function main() {
  const { scenario, message, command } = parseArgs(process.argv.slice(2));
  const transport = new StdioClientTransport({ command: command[0], args: command.slice(1) });
  const client = new Client({ name: "mcptape-ts-client", version: "0.1.0" });
  // The SDK reports non-fatal trouble here (e.g. a progress notification that
  // arrives after its request settled); surface it instead of dropping it.
  client.onerror = (err) => process.stderr.write(`ts_client: SDK error: ${err?.message ?? err}\n`);
  await client.connect(transport);
  try {
    emit("initialize", {
      result: {
        serverInfo: client.getServerVersion(),
        capabilities: client.getServerCapabilities(),
        instructions: client.getInstructions(),
      },
    });
    await SCENARIOS[scenario](client, message);
  } finally {
    await client.close();
  }
  emit("closed");
}

try {
  await main();
} catch (err) {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
}
