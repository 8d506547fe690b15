#!/usr/bin/env node
// A stand-in for the Anthropic Messages API, so that Claude Code runs offline in tests.
//
//   node messages_api.mjs SCRIPT.json LOG.ndjson
//
// Listens on 127.0.0.1, port 0, and prints `listening on PORT` on stdout once it does.
// SCRIPT.json is {"steps": [{"tool_use": {"name": "mcp__a__echo", "input": {...}}}, ...,
// {"text": "..."}]}. A `POST /v1/messages` whose request offers the tools of the agent's
// loop is answered with step N, N being the number of assistant turns already in the
// request's `messages` (so a retried request gets the same step, and the conversation,
// not the count of requests, decides); a step past the end, or a request that does not
// offer the step's tool (Claude Code's side requests: titles, quota checks), gets a short
// text. Each `tool_use` gets a fresh id (`toolu_` and random hex), as the real API gives,
// so two runs of one script differ in their ids. With `"stream": true` the answer is the
// Messages API's SSE event sequence (message_start, content_block_start,
// content_block_delta, content_block_stop, message_delta, message_stop); otherwise one
// JSON message. `POST /v1/messages/count_tokens` answers a token count; any other path
// answers 404 with an API error. Every request is appended to LOG.ndjson as
// {"method", "path", "body"} before it is answered.
import { appendFileSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";

const [scriptPath, logPath] = process.argv.slice(2);
if (!scriptPath || !logPath) {
  console.error("usage: messages_api.mjs SCRIPT.json LOG.ndjson");
  process.exit(2);
}
const steps = JSON.parse(readFileSync(scriptPath, "utf8")).steps;

function toolNames(body) {
  return new Set((body.tools ?? []).map((t) => t.name));
}

/** The content blocks and stop reason that answer one request. */
function answer(body) {
  const turn = (body.messages ?? []).filter((m) => m.role === "assistant").length;
  const step = steps[turn];
  if (step?.tool_use && toolNames(body).has(step.tool_use.name)) {
    const id = "toolu_" + randomBytes(12).toString("hex");
    return {
      content: [{ type: "tool_use", id, name: step.tool_use.name, input: step.tool_use.input }],
      stop_reason: "tool_use",
    };
  }
  const text = step?.text ?? "ok";
  return { content: [{ type: "text", text }], stop_reason: "end_turn" };
}

function message(body, { content, stop_reason }) {
  return {
    id: "msg_" + randomBytes(12).toString("hex"),
    type: "message",
    role: "assistant",
    model: body.model ?? "claude-stand-in",
    content,
    stop_reason,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
}

function sse(res, type, data) {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

function stream(res, msg) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  sse(res, "message_start", {
    message: { ...msg, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  msg.content.forEach((block, index) => {
    if (block.type === "tool_use") {
      sse(res, "content_block_start", { index, content_block: { ...block, input: {} } });
      sse(res, "content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    } else {
      sse(res, "content_block_start", { index, content_block: { type: "text", text: "" } });
      sse(res, "content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
    }
    sse(res, "content_block_stop", { index });
  });
  sse(res, "message_delta", {
    delta: { stop_reason: msg.stop_reason, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  sse(res, "message_stop", {});
  res.end();
}

function json(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const path = new URL(req.url, "http://localhost").pathname;
    let body = null;
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : null;
    } catch {
      body = Buffer.concat(chunks).toString("utf8");
    }
    appendFileSync(logPath, JSON.stringify({ method: req.method, path, body }) + "\n");
    if (req.method === "POST" && path === "/v1/messages/count_tokens") {
      return json(res, 200, { input_tokens: 10 });
    }
    if (req.method === "POST" && path === "/v1/messages" && body && typeof body === "object") {
      const msg = message(body, answer(body));
      return body.stream ? stream(res, msg) : json(res, 200, msg);
    }
    json(res, 404, { type: "error", error: { type: "not_found_error", message: `no ${path} here` } });
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`listening on ${server.address().port}`);
});
// The test ends this process by closing its stdin (or by killing it).
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
