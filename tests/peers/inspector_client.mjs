#!/usr/bin/env node
// The MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0, run from
// node_modules/.bin: no network) for mcptape's interop matrix.
//
// Usage:
//     node inspector_client.mjs ERA [--call TOOL JSON_ARGS]... -- CMD [ARGS...] | URL
//
// ERA is the Inspector's --protocol-era (legacy, modern or auto). It runs
// `mcp-inspector --cli --protocol-era ERA --format json -q --method tools/list -- TARGET`,
// then one `--method tools/call --tool-name TOOL --tool-args-json JSON` per call, each
// invocation its own connection (the Inspector CLI does one method per run), and prints
// one compact JSON line per invocation:
//
//     {"step":"list_tools","result":{...}}
//     {"step":"call","tool":"...","result":{...}}
//
// An invocation that fails prints its error envelope as the step's "error" and makes
// the exit status 1 (after the remaining steps are skipped).

import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const USAGE = "usage: inspector_client.mjs ERA [--call TOOL JSON_ARGS]... -- CMD [ARGS...] | URL";
const inspector = join(dirname(fileURLToPath(import.meta.url)), "node_modules/.bin/mcp-inspector");

function parse(argv) {
  const cut = argv.indexOf("--");
  if (cut < 1 || cut === argv.length - 1) throw new Error(USAGE);
  const [era, ...head] = argv.slice(0, cut);
  const calls = [];
  while (head.length) {
    if (head[0] !== "--call" || head.length < 3) throw new Error(USAGE);
    calls.push([head[1], head[2]]);
    head.splice(0, 3);
  }
  return { era, calls, target: argv.slice(cut + 1) };
}

function invoke(era, target, method) {
  const out = spawnSync(
    inspector,
    // The target goes after `--`: a proxy's own options (`--server NAME`) are not the
    // Inspector's.
    ["--cli", "--protocol-era", era, "--format", "json", "-q", "--method", ...method, "--", ...target],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  const text = out.status === 0 ? out.stdout : out.stderr || out.stdout;
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    value = { unparsed: text };
  }
  return { ok: out.status === 0, value };
}

function main() {
  const { era, calls, target } = parse(process.argv.slice(2));
  const steps = [["list_tools", undefined, ["tools/list"]]];
  for (const [tool, args] of calls) {
    steps.push(["call", tool, ["tools/call", "--tool-name", tool, "--tool-args-json", args]]);
  }
  for (const [step, tool, method] of steps) {
    const { ok, value } = invoke(era, target, method);
    const line = tool === undefined ? { step } : { step, tool };
    process.stdout.write(JSON.stringify(ok ? { ...line, ...value } : { ...line, error: value }) + "\n");
    if (!ok) process.exit(1);
  }
}

main();
