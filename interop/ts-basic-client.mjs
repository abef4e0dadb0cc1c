#!/usr/bin/env node
// Walks a small stdio server (the no-runtime example, `no-runtime-server`) with the official
// TypeScript SDK client: the `echo` tool (checked), the `memo://hello`
// resource (and a missing one), the `greet` prompt, ping, then close.
//
//   node ts-basic-client.mjs -- ../target/debug/no-runtime-server
//
// Prints one line per check ("ok"/"FAIL"), then "N passed, M failed"; exits 1 on any failure.

import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const sep = process.argv.indexOf('--');
const argv = sep >= 0 ? process.argv.slice(sep + 1) : [];
if (argv.length === 0) {
    console.error('usage: node ts-basic-client.mjs -- <server command> [args...]');
    process.exit(2);
}
const TIMEOUT = { timeout: 15000 };
let passed = 0;
let failed = 0;
async function check(name, fn) {
    try {
        const detail = await fn();
        passed++;
        console.log(`ok   ${name}${detail ? ` (${detail})` : ''}`);
    } catch (e) {
        failed++;
        const msg = e instanceof assert.AssertionError ? e.message.split('\n').join('\n       ') : String(e?.stack ?? e);
        console.log(`FAIL ${name}: ${msg}`);
    }
}

const transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: 'inherit' });
const client = new Client({ name: 'ts-basic-client', version: '1.0.0' });

async function main() {
    await check('connect + initialize', async () => {
        await client.connect(transport, TIMEOUT);
        const info = client.getServerVersion();
        const caps = client.getServerCapabilities();
        for (const cap of ['tools', 'resources', 'prompts']) {
            assert.ok(caps?.[cap], `capability ${cap} missing: ${JSON.stringify(caps)}`);
        }
        assert.equal(transport.protocolVersion ?? LATEST_PROTOCOL_VERSION, LATEST_PROTOCOL_VERSION);
        return `${info.name} ${info.version}`;
    });
    if (failed) return;
    await check('tools/list', async () => {
        const { tools } = await client.listTools(undefined, TIMEOUT);
        assert.deepEqual(tools.map((t) => t.name), ['echo', 'countdown', 'jobs']);
        assert.equal(tools[0].inputSchema.type, 'object');
    });
    await check('tools/call echo (progress asked for)', async () => {
        const text = `héllo ${Date.now()}`;
        const progress = [];
        const r = await client.callTool({ name: 'echo', arguments: { text } }, undefined, {
            ...TIMEOUT,
            onprogress: (p) => progress.push(p.progress),
        });
        assert.deepEqual(r.content, [{ type: 'text', text }]);
        // The server writes the progress and the answer in one write; this SDK runs
        // notification handlers a microtask late, after the answer removed the call's progress
        // handler, so it may drop that progress. At most the one report, then.
        assert.ok(progress.length <= 1 && progress.every((p) => p === 1), JSON.stringify(progress));
    });
    await check('countdown on the server timer, with progress', async () => {
        const progress = [];
        const r = await client.callTool({ name: 'countdown', arguments: { steps: 3, interval_ms: 10 } }, undefined, {
            ...TIMEOUT,
            onprogress: (p) => progress.push(p.progress),
        });
        assert.deepEqual(r.content, [{ type: 'text', text: 'counted 3 steps' }]);
        // Steps 1 and 2 come in writes of their own; the last may share the answer's.
        assert.deepEqual(progress.slice(0, 2), [1, 2]);
    });
    await check('a countdown aborted by the client stops on the server', async () => {
        const controller = new AbortController();
        const call = client.callTool({ name: 'countdown', arguments: { steps: 10000, interval_ms: 20 } }, undefined, {
            timeout: 15000,
            signal: controller.signal,
            onprogress: () => controller.abort('enough'),
        });
        await assert.rejects(call);
        let left;
        for (let i = 0; i < 100; i++) {
            const r = await client.callTool({ name: 'jobs', arguments: {} }, undefined, TIMEOUT);
            left = r.content[0].text;
            if (left === '0') break;
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.equal(left, '0');
    });
    await check('tools/call with a wrong argument is a tool error', async () => {
        const r = await client.callTool({ name: 'echo', arguments: { text: 5 } }, undefined, TIMEOUT);
        assert.equal(r.isError, true);
    });
    await check('resources/list + read', async () => {
        const { resources } = await client.listResources(undefined, TIMEOUT);
        assert.deepEqual(resources.map((r) => r.uri), ['memo://hello']);
        const r = await client.readResource({ uri: 'memo://hello' }, TIMEOUT);
        assert.equal(r.contents[0].text, 'Hello from a server with no runtime.');
    });
    await check('resources/read of a missing resource is -32002', async () => {
        await assert.rejects(client.readResource({ uri: 'memo://nope' }, TIMEOUT), (e) => e.code === -32002);
    });
    await check('prompts/list + get', async () => {
        const { prompts } = await client.listPrompts(undefined, TIMEOUT);
        assert.deepEqual(prompts.map((p) => p.name), ['greet']);
        const p = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } }, TIMEOUT);
        assert.equal(p.messages[0].content.text, 'Say hello to Ada.');
    });
    await check('ping', async () => {
        assert.deepEqual(await client.ping(TIMEOUT), {});
    });
    await check('close', async () => {
        await client.close();
    });
}

const watchdog = setTimeout(() => {
    console.log('FAIL walk did not finish within 60 s');
    console.log(`${passed} passed, ${failed + 1} failed`);
    process.exit(1);
}, 60_000);
try {
    await main();
} catch (e) {
    failed++;
    console.log(`FAIL unexpected: ${e?.stack ?? e}`);
}
clearTimeout(watchdog);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
