#!/usr/bin/env node
// Walks one of the copyable examples (examples/src/bin) with the official TypeScript SDK
// client, by the steps `examples.json` lists for it.
//
//   node ts-examples.mjs NAME -- <server command> [args...]        (stdio)
//   node ts-examples.mjs NAME --url URL [--header 'Name: value']... (Streamable HTTP)
//   node ts-examples.mjs NAME --url URL --refused                   (the server must refuse)
//
// Prints one line per check ("ok"/"FAIL"), then "N passed, M failed"; exits 1 on any failure.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const args = process.argv.slice(2);
const name = args.shift();
const sep = args.indexOf('--');
const command = sep >= 0 ? args.splice(sep).slice(1) : [];
let url = null;
let refused = false;
const headers = {};
for (let i = 0; i < args.length; i++) {
    if (args[i] === '--url') url = args[++i];
    else if (args[i] === '--header') {
        const [k, ...v] = args[++i].split(':');
        headers[k.trim()] = v.join(':').trim();
    } else if (args[i] === '--refused') refused = true;
    else throw new Error(`unknown argument ${args[i]}`);
}
const steps = JSON.parse(readFileSync(new URL('./examples.json', import.meta.url)))[name];
if (!steps || (!url && command.length === 0)) {
    console.error('usage: node ts-examples.mjs NAME (-- <server command> | --url URL [--header H]... [--refused])');
    process.exit(2);
}
const TIMEOUT = { timeout: 15000 };
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
const firstText = (content) => (content ?? []).find((c) => c.type === 'text')?.text ?? '';

const transport = url
    ? new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
    : new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: 'inherit' });
const client = new Client({ name: 'ts-examples', version: '1.0.0' });

async function main() {
    if (refused) {
        await check(`${name}: refused without credentials`, async () => {
            await assert.rejects(client.connect(transport, TIMEOUT), /401|nauthori|bearer token is required/);
        });
        return;
    }
    await check(`${name}: connect`, async () => {
        await client.connect(transport, TIMEOUT);
        return client.getServerVersion()?.name;
    });
    if (failed) return;
    for (const step of steps) {
        if (step.tools) {
            await check(`tools/list = ${step.tools}`, async () => {
                const { tools } = await client.listTools(undefined, TIMEOUT);
                assert.deepEqual(tools.map((t) => t.name).sort(), [...step.tools].sort());
                for (const t of tools) assert.equal(t.inputSchema.type, 'object');
            });
        } else if (step.call) {
            await check(`tools/call ${step.call} ${JSON.stringify(step.args)}`, async () => {
                const r = await client.callTool({ name: step.call, arguments: step.args }, undefined, TIMEOUT);
                assert.ok(!r.isError, `isError: ${JSON.stringify(r)}`);
                if (step.text !== undefined) assert.ok(firstText(r.content).includes(step.text), JSON.stringify(r.content));
                if (step.structured !== undefined) assert.deepEqual(r.structuredContent, step.structured);
            });
        } else if (step.call_error) {
            await check(`tools/call ${step.call_error} with bad arguments is an error`, async () => {
                let r;
                try {
                    r = await client.callTool({ name: step.call_error, arguments: step.args }, undefined, TIMEOUT);
                } catch (e) {
                    return `JSON-RPC error ${e.code}`;
                }
                assert.equal(r.isError, true, JSON.stringify(r));
                return 'isError result';
            });
        } else if (step.templates) {
            await check(`resources/templates/list = ${step.templates}`, async () => {
                const { resourceTemplates } = await client.listResourceTemplates(undefined, TIMEOUT);
                assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate), step.templates);
            });
        } else if (step.read) {
            await check(`resources/read ${step.read}`, async () => {
                const r = await client.readResource({ uri: step.read }, TIMEOUT);
                assert.equal(r.contents[0].uri, step.read);
                assert.equal(r.contents[0].text, step.text);
            });
        } else if (step.read_error) {
            await check(`resources/read ${step.read_error} is "resource not found"`, async () => {
                await assert.rejects(client.readResource({ uri: step.read_error }, TIMEOUT), (e) => {
                    assert.ok([-32002, -32602].includes(e.code), `code ${e.code}: ${e.message}`);
                    return true;
                });
            });
        } else if (step.prompts) {
            await check(`prompts/list = ${step.prompts}`, async () => {
                const { prompts } = await client.listPrompts(undefined, TIMEOUT);
                assert.deepEqual(prompts.map((p) => p.name), step.prompts);
            });
        } else if (step.prompt) {
            await check(`prompts/get ${step.prompt}`, async () => {
                const r = await client.getPrompt({ name: step.prompt, arguments: step.args }, TIMEOUT);
                assert.equal(r.messages[0].content.text, step.text);
            });
        } else {
            throw new Error(`unknown step ${JSON.stringify(step)}`);
        }
    }
}

try {
    await main();
} catch (e) {
    failed++;
    console.log(`FAIL unexpected: ${e?.stack ?? e}`);
} finally {
    await client.close().catch(() => {});
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
