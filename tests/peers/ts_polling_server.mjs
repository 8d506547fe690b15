#!/usr/bin/env node
// A Streamable HTTP MCP server built on the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32.2), for mcptape's resumption test.
//
// Usage:
//     PORT=N node ts_polling_server.mjs    (PORT=0: any free port; it prints the one it got)
//
// It keeps its events in an event log (the SDK's EventStore interface; the SDK's
// example store cannot replay the GET stream, whose id starts with `_`), so its SSE
// answers carry event ids (and a `retry:` of 100 ms). Its one tool, `late`, closes the answer's
// event stream before answering (the SDK's closeSSEStream, the server half of SEP-1699
// polling), so a client gets the answer only if it resumes with `Last-Event-ID`.
// Its tool `aside` logs "before" on the GET stream, closes that stream, and logs
// "after": a client gets "after" only if it reopens the GET stream from the last
// event id it saw there.
// One session at a time. It prints "listening on port N" to stderr when ready.

import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** Every event, in order; an event's id is its position (from 1). */
class EventLog {
    constructor() {
        this.events = [];
    }
    async storeEvent(streamId, message) {
        this.events.push({ streamId, message });
        return String(this.events.length);
    }
    async getStreamIdForEventId(id) {
        return this.events[Number(id) - 1]?.streamId;
    }
    async replayEventsAfter(lastEventId, { send }) {
        const last = this.events[Number(lastEventId) - 1];
        if (!last) throw new Error(`unknown event id ${lastEventId}`);
        for (let i = Number(lastEventId); i < this.events.length; i++) {
            const { streamId, message } = this.events[i];
            // Priming events ({}) carry no message.
            if (streamId === last.streamId && Object.keys(message).length > 0) {
                await send(String(i + 1), message);
            }
        }
        return last.streamId;
    }
}

const server = new McpServer(
    { name: 'polling-server', version: '1.0.0' },
    { capabilities: { logging: {} } },
);
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

server.registerTool(
    'aside',
    { description: 'Logs on the GET stream, closes it, and logs again.' },
    async (extra) => {
        if (!extra.closeStandaloneSSEStream) throw new Error('no event store');
        await server.sendLoggingMessage({ level: 'info', data: 'before' });
        extra.closeStandaloneSSEStream();
        await server.sendLoggingMessage({ level: 'info', data: 'after' });
        return { content: [{ type: 'text', text: 'logged aside' }] };
    },
);

const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: new EventLog(),
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
}).listen(port, '127.0.0.1', function () {
    console.error(`listening on port ${this.address().port}`);
});
