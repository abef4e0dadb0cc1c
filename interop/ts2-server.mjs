#!/usr/bin/env node
// A small MCP server on the official TypeScript SDK v2 (`@modelcontextprotocol/server`), serving
// only the stateless era (protocol 2026-07-28; the handshake era is refused with
// `legacy: 'reject'`), for our client (`interop-client --fixtures`) to walk:
//
//   node ts2-server.mjs stdio                 # serveStdio(factory, { legacy: 'reject' })
//   node ts2-server.mjs http [--port P]       # createMcpHandler(factory, { legacy: 'reject' })
//                                             # on node:http, 127.0.0.1, P=0 picks a port;
//                                             # announces "ts2-server: serving http://…/mcp"
//                                             # on stderr
//
// The fixtures are the same as py-server.py's:
//   tool echo {message}   -> "Echo: <message>"
//   tool greet            -> MRTR: elicits key user_name {name} -> "Hello, <name>!"
//   tool two_step         -> MRTR: round 1 elicits step1 {name}, round 2 (the name carried in an
//                            HMAC-sealed requestState) elicits step2 {color} -> "<name> likes <color>"
//   tool ask_model        -> MRTR: sampling key question -> "Model answered: <text>"
//   resource fixture://greeting (text/plain) "Hello from the <server name>."
//   prompt greeting_prompt {name} -> user "Please greet <name> warmly."; name completes from
//                            Alice, Alan, Bob
//   tool touch            -> announces notifications/resources/updated for fixture://greeting on
//                            the subscriptions/listen streams that asked for it -> "touched
//                            fixture://greeting"

import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import {
    McpServer,
    acceptedContent,
    completable,
    createMcpHandler,
    createRequestStateCodec,
    inputRequired,
    inputResponse,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const NAME = 'interop-ts2-server';
const GREETING = `Hello from the ${NAME}.`;
const NAMES = ['Alice', 'Alan', 'Bob'];

// How `touch` reaches the listen streams: over stdio the connection's pinned instance routes its
// change notifications onto them; over HTTP the handler's event bus does.
let httpNotify;

// One key for the process: every round of a flow reaches this process (stdio, or one HTTP server).
const codec = createRequestStateCodec({ key: randomBytes(32), bind: (ctx) => `${ctx.mcpReq.method}` });

function askOne(message, field) {
    return inputRequired.elicit({
        message,
        requestedSchema: { type: 'object', properties: { [field]: { type: 'string' } }, required: [field] },
    });
}
const text = (t) => ({ content: [{ type: 'text', text: t }] });

function factory() {
    const server = new McpServer(
        { name: NAME, version: '2.4.0-interop' },
        {
            instructions: 'Interop fixtures: echo, greet, two_step, ask_model, touch, fixture://greeting, greeting_prompt',
            capabilities: { resources: { subscribe: true, listChanged: true } },
            requestState: { verify: codec.verify },
        },
    );
    server.registerTool(
        'echo',
        { description: 'Echoes its message', inputSchema: z.object({ message: z.string() }) },
        async ({ message }) => text(`Echo: ${message}`),
    );
    server.registerTool('greet', { description: 'Asks the user for a name (one MRTR round), then greets' }, async (ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name');
        if (typeof answer?.name !== 'string') {
            return inputRequired({ inputRequests: { user_name: askOne('What is your name?', 'name') } });
        }
        return text(`Hello, ${answer.name}!`);
    });
    server.registerTool('two_step', { description: 'Two MRTR rounds; the first answer travels in the sealed requestState' }, async (ctx) => {
        const carried = ctx.mcpReq.requestState();
        const step2 = acceptedContent(ctx.mcpReq.inputResponses, 'step2');
        if (carried?.name !== undefined && typeof step2?.color === 'string') {
            return text(`${carried.name} likes ${step2.color}`);
        }
        const step1 = acceptedContent(ctx.mcpReq.inputResponses, 'step1');
        if (typeof step1?.name === 'string') {
            return inputRequired({
                inputRequests: { step2: askOne('Step 2: What is your favorite color?', 'color') },
                requestState: await codec.mint({ name: step1.name }, ctx),
            });
        }
        return inputRequired({ inputRequests: { step1: askOne('Step 1: What is your name?', 'name') } });
    });
    server.registerTool('ask_model', { description: "Asks the client's model one question (MRTR sampling)" }, async (ctx) => {
        const r = inputResponse(ctx.mcpReq.inputResponses, 'question');
        if (r.kind !== 'sampling') {
            return inputRequired({
                inputRequests: {
                    question: inputRequired.createMessage({
                        messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
                        maxTokens: 50,
                    }),
                },
            });
        }
        const content = Array.isArray(r.result.content) ? r.result.content[0] : r.result.content;
        return text(`Model answered: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`);
    });
    server.registerTool('touch', { description: 'Announces an update of fixture://greeting' }, async () => {
        if (httpNotify) httpNotify.resourceUpdated('fixture://greeting');
        else await server.server.sendResourceUpdated({ uri: 'fixture://greeting' });
        return text('touched fixture://greeting');
    });
    server.registerResource(
        'greeting',
        'fixture://greeting',
        { description: 'A fixed greeting', mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: GREETING }] }),
    );
    server.registerPrompt(
        'greeting_prompt',
        {
            description: 'Asks the model to greet someone',
            argsSchema: z.object({ name: completable(z.string(), (v) => NAMES.filter((n) => n.startsWith(v ?? ''))) }),
        },
        async ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${name} warmly.` } }] }),
    );
    return server;
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === 'stdio') {
    serveStdio(factory, { legacy: 'reject', onerror: (e) => console.error(`ts2-server: ${e?.message ?? e}`) });
} else if (mode === 'http') {
    const port = rest[0] === '--port' ? Number(rest[1]) : 0;
    const handler = createMcpHandler(factory, { legacy: 'reject' });
    httpNotify = handler.notify;
    const http = createServer(async (req, res) => {
        try {
            const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
            if (url.pathname !== '/mcp') {
                res.writeHead(404).end();
                return;
            }
            const chunks = [];
            for await (const c of req) chunks.push(c);
            const body = Buffer.concat(chunks);
            const ac = new AbortController();
            res.on('close', () => ac.abort());
            const request = new Request(url, {
                method: req.method,
                headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
                body: req.method === 'GET' || req.method === 'HEAD' || body.length === 0 ? undefined : body,
                signal: ac.signal,
            });
            const response = await handler.fetch(request);
            res.writeHead(response.status, Object.fromEntries(response.headers));
            if (response.body) {
                for await (const chunk of response.body) res.write(chunk);
            }
            res.end();
        } catch (e) {
            console.error(`ts2-server: ${e?.stack ?? e}`);
            if (!res.headersSent) res.writeHead(500);
            res.end();
        }
    });
    http.listen(port, '127.0.0.1', () => {
        console.error(`ts2-server: serving http://127.0.0.1:${http.address().port}/mcp`);
    });
    const stop = () => {
        http.close();
        handler.close().finally(() => process.exit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
} else {
    console.error('usage: node ts2-server.mjs stdio | http [--port P]');
    process.exit(2);
}
