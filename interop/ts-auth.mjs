#!/usr/bin/env node
// The official TypeScript SDK client against our `everything` as an OAuth resource server
// (`--auth-jwks`, `--auth-scope mcp`, `--auth-tool-scope echo=echo:call`): refused with a 401
// and the RFC 9728 challenge without a token, served with one (sent through `requestInit`),
// refused with a 403 step-up challenge for a tool whose scope the token lacks.
//
//   node ts-auth.mjs --url URL --tokens JSON   (JSON: the line auth-server.mjs printed)
//
// Prints one line per check ("ok"/"FAIL"), then "N passed, M failed"; exits 1 on any failure.

import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const args = process.argv.slice(2);
let url = null;
let auth = null;
for (let i = 0; i < args.length; i++) {
    if (args[i] === '--url') url = args[++i];
    else if (args[i] === '--tokens') auth = JSON.parse(args[++i]);
    else throw new Error(`unknown argument ${args[i]}`);
}
if (!url || !auth) {
    console.error('usage: node ts-auth.mjs --url URL --tokens JSON');
    process.exit(2);
}
const TIMEOUT = { timeout: 15000 };
const metadataUrl = new URL('/.well-known/oauth-protected-resource' + new URL(url).pathname, url).href;
let passed = 0;
let failed = 0;
async function check(label, fn) {
    try {
        const detail = await fn();
        passed++;
        console.log(`ok   ${label}${detail ? ` (${detail})` : ''}`);
    } catch (e) {
        failed++;
        console.log(`FAIL ${label}: ${e instanceof assert.AssertionError ? e.message : String(e?.stack ?? e)}`);
    }
}
const init = JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const post = (headers) => fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: init,
});
const connect = async (token) => {
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    const client = new Client({ name: 'ts-auth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }), TIMEOUT);
    return client;
};

async function main() {
    await check('no token: 401 with the Bearer challenge (resource_metadata, scope)', async () => {
        const r = await post({});
        assert.equal(r.status, 401);
        const c = r.headers.get('www-authenticate') ?? '';
        assert.match(c, /^Bearer /);
        assert.ok(c.includes(`resource_metadata="${metadataUrl}"`), c);
        assert.ok(c.includes('scope="mcp"'), c);
        assert.ok(!c.includes('error='), c);
        return c;
    });
    await check('an expired token: 401 invalid_token', async () => {
        const r = await post({ Authorization: `Bearer ${auth.tokens.expired}` });
        assert.equal(r.status, 401);
        assert.match(r.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    });
    await check('the protected resource metadata (RFC 9728)', async () => {
        const r = await fetch(metadataUrl);
        assert.equal(r.status, 200);
        const doc = await r.json();
        assert.equal(doc.resource, url);
        assert.deepEqual(doc.authorization_servers, [auth.issuer]);
        assert.deepEqual(doc.bearer_methods_supported, ['header']);
        assert.ok(doc.scopes_supported.includes('mcp') && doc.scopes_supported.includes('echo:call'), doc.scopes_supported);
    });
    await check('the SDK client without a token is refused', async () => {
        await assert.rejects(connect(null), /401|nauthori|invalid_token/);
    });
    await check('the SDK client with a token for another resource is refused', async () => {
        await assert.rejects(connect(auth.tokens.wrong_audience), /401|nauthori|invalid_token/);
    });
    let client = null;
    await check('the SDK client with a valid token connects', async () => {
        client = await connect(auth.tokens.good);
        return client.getServerVersion()?.name;
    });
    if (!client) return;
    await check('tools/list and a tool open to the token', async () => {
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === 'echo'), tools.map((t) => t.name));
        const r = await client.callTool({ name: 'test_simple_text', arguments: {} });
        assert.ok(!r.isError, JSON.stringify(r));
    });
    await check('a tool whose scope the token lacks: refused (403 insufficient_scope)', async () => {
        await assert.rejects(client.callTool({ name: 'echo', arguments: { text: 'hi' } }), /403|insufficient_scope|orbidden/);
    });
    await client.close();
    await check('with the stepped-up token the tool answers', async () => {
        const c = await connect(auth.tokens.stepped_up);
        const r = await c.callTool({ name: 'echo', arguments: { text: 'scoped hello' } });
        assert.equal(r.content?.[0]?.text, 'scoped hello');
        await c.close();
    });
}

try {
    await main();
} catch (e) {
    failed++;
    console.log(`FAIL unexpected: ${e?.stack ?? e}`);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
