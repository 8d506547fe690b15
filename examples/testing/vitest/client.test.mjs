// A client test suite that runs against a tape instead of a live MCP server.
//
// Run it under `mcptape replay` (see docs/testing-clients.md):
//
//     mcptape replay tests/fixtures/client.ndjson --match any --record-mode once -- \
//         npx vitest run --root examples/testing/vitest
//
// The first run finds no tape, so it records one (the real server runs); every run after
// that replays it, with the server absent. The tests start the server the way a client's
// MCP config would, through `mcptape proxy`, which takes its mode from `mcptape replay`.
//
// Environment: MCPTAPE (the mcptape binary, default `mcptape`) and SERVER (the server
// command, default mcptape's example server `example-server`).
import { describe, expect, test } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const mcptape = process.env.MCPTAPE ?? "mcptape";
const serverCommand = (process.env.SERVER ?? "example-server").split(" ");

/** Calls `tool` through `mcptape proxy`, with `faults` injected. */
async function call(tool, args, faults = []) {
  const proxy = ["proxy", "--server", "example", ...faults.flatMap((r) => ["--fault", r])];
  const transport = new StdioClientTransport({
    command: mcptape,
    args: [...proxy, "--", ...serverCommand],
  });
  const client = new Client({ name: "vitest-example", version: "0.1.0" });
  await client.connect(transport);
  try {
    return await client.callTool({ name: tool, arguments: args });
  } finally {
    await client.close();
  }
}

describe("the example server, from a tape", () => {
  test("greets by name", async () => {
    const result = await call("greet", { name: "Ada" });
    expect(result.isError ?? false).toBe(false);
    expect(result.content[0].text).toContain("Ada");
  });

  test("adds", async () => {
    const result = await call("add", { a: 2, b: 3 });
    expect(result.content[0].text).toBe("5");
  });

  test("a rate limit reaches the client as an error", async () => {
    const rule = 'tools/call name=add: error -32000 "rate limited"';
    const failed = call("add", { a: 2, b: 3 }, [rule]);
    await expect(failed).rejects.toBeInstanceOf(McpError);
    await expect(failed).rejects.toMatchObject({ code: -32000 });
  });
});
