#!/usr/bin/env node
// A Streamable HTTP MCP server built on the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32.2), for mcptape's resumption test.
//
// Usage:
//     PORT=N node ts_polling_server.mjs
//
// It keeps its events in the SDK's in-memory event store, so its SSE answers carry
// event ids (and a `retry:` of 100 ms). Its one tool, `late`, closes the answer's
// event stream before answering (the SDK's closeSSEStream, the server half of SEP-1699
// polling), so a client gets the answer only if it resumes with `Last-Event-ID`.
// One session at a time. It prints "listening on port N" to stderr when ready.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';

const server = new McpServer({ name: 'polling-server', version: '1.0.0' });
server.registerTool(
    'late',
    { description: 'Closes the event stream, then answers on the resumed one.' },
    async (extra) => {
        if (!extra.closeSSEStream) throw new Error('no event store: cannot close the stream');
        extra.closeSSEStream();
        await new Promise((done) => setTimeout(done, 300));
        return { content: [{ type: 'text', text: 'answered after the stream closed' }] };
    },
);

const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: new InMemoryEventStore(),
    retryInterval: 100,
});
await server.connect(transport);

const port = Number(process.env.PORT || 3001);
createServer(async (req, res) => {
    let body;
    if (req.method === 'POST') {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    }
    await transport.handleRequest(req, res, body);
}).listen(port, '127.0.0.1', () => console.error(`listening on port ${port}`));
