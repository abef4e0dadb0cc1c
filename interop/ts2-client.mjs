#!/usr/bin/env node
// Walks our `everything` server (served with `--eras both`) with the official TypeScript SDK v2
// client (`@modelcontextprotocol/client`) in the stateless era, protocol 2026-07-28, over stdio
// or Streamable HTTP:
//
//   node ts2-client.mjs --mode pin  -- ../target/debug/everything --eras both --transport stdio
//   node ts2-client.mjs --mode auto --url http://127.0.0.1:PORT/mcp
//
// `--mode pin` is `versionNegotiation: { mode: { pin: '2026-07-28' } }` (server/discover must
// offer 2026-07-28, no fallback); `--mode auto` is `versionNegotiation: { mode: 'auto' }`
// (server/discover first, the `initialize` handshake only on a legacy verdict; this walk then
// requires the modern era). Both answer `input_required` rounds (MRTR) through the client's
// registered `elicitation/create`, `sampling/createMessage` and `roots/list` handlers.
//
// Prints one line per check ("ok"/"FAIL"/"SKIP"), then "N passed, M failed" (", K skipped"
// when a step was skipped); exits 1 on any failure. The expected values are the fixtures of
// examples/src/everything.rs. `subscriptions/listen` is required: a server answering it with
// -32601 (method not found) fails the step, or makes it a SKIP with INTEROP_REQUIRE_LISTEN=0
// (for a tree from before the server had it).

import assert from 'node:assert/strict';
import {
    Client,
    StreamableHTTPClientTransport,
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const VERSION = '2026-07-28';
const USAGE = 'usage: node ts2-client.mjs [--mode pin|auto] -- <server command> [args...]\n'
    + '       node ts2-client.mjs [--mode pin|auto] --url <Streamable HTTP URL>';
function usage(msg) {
    console.error(msg ? `ts2-client: ${msg}\n${USAGE}` : USAGE);
    process.exit(2);
}
// { mode: 'pin' | 'auto', kind: 'stdio', argv } | { mode, kind: 'http', url }.
function parseArgs(argv) {
    let mode = 'pin';
    let i = 0;
    if (argv[0] === '--mode') {
        mode = argv[1];
        if (mode !== 'pin' && mode !== 'auto') usage(`--mode takes pin or auto, not ${mode}`);
        i = 2;
    }
    const rest = argv.slice(i);
    if (rest[0] === '--url') {
        if (rest.length !== 2) usage('--url takes exactly one URL');
        let url;
        try {
            url = new URL(rest[1]);
        } catch {
            usage(`not a URL: ${rest[1]}`);
        }
        return { mode, kind: 'http', url };
    }
    const sep = rest.indexOf('--');
    const serverArgv = sep >= 0 ? rest.slice(sep + 1) : rest;
    if (serverArgv.length === 0) usage();
    return { mode, kind: 'stdio', argv: serverArgv };
}
const target = parseArgs(process.argv.slice(2));
const label = process.env.INTEROP_LABEL ? `[${process.env.INTEROP_LABEL}] ` : '';
const requireListen = process.env.INTEROP_REQUIRE_LISTEN !== '0';

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const TIMEOUT = { timeout: 15000 };
const ROOT_URI = 'file:///tmp/ts2-root';

const FIXTURE_TOOLS = [
    'echo', 'test_simple_text', 'test_image_content', 'test_error_handling', 'test_tool_with_progress',
    'test_logging_tool', 'test_custom_headers', 'touch_watched',
    'test_input_required_result_elicitation', 'test_input_required_result_sampling',
    'test_input_required_result_list_roots', 'test_input_required_result_request_state',
    'test_input_required_result_multiple_inputs', 'test_input_required_result_multi_round',
    'test_input_required_result_tampered_state',
];
const FIXTURE_PROMPTS = [
    'test_simple_prompt', 'test_prompt_with_arguments', 'test_input_required_result_prompt',
];

let passed = 0;
let failed = 0;
let skipped = 0;
class Skip extends Error {}
async function check(name, fn) {
    try {
        const detail = await fn();
        passed++;
        console.log(`${label}ok   ${name}${detail ? ` (${detail})` : ''}`);
        return true;
    } catch (e) {
        if (e instanceof Skip) {
            skipped++;
            console.log(`${label}SKIP ${name}: ${e.message}`);
            return false;
        }
        failed++;
        const msg = e instanceof assert.AssertionError ? e.message.split('\n').join('\n       ') : String(e?.stack ?? e);
        console.log(`${label}FAIL ${name}: ${msg}`);
        return false;
    }
}

function onlyText(result) {
    assert.equal(result.content?.length, 1, `expected one content item, got ${JSON.stringify(result.content)}`);
    assert.equal(result.content[0].type, 'text', `expected text, got ${JSON.stringify(result.content[0])}`);
    return result.content[0].text;
}
// A rejected promise's JSON-RPC error code (fails when it resolves or has no code).
async function errorCode(promise) {
    let r;
    try {
        r = await promise;
    } catch (e) {
        assert.equal(typeof e.code, 'number', `not a JSON-RPC error: ${e}`);
        return e.code;
    }
    assert.fail(`expected a JSON-RPC error, got ${JSON.stringify(r)}`);
}
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// The SDK runs notification handlers on a microtask but settles responses synchronously, so a
// progress notification read in the same chunk as its response is dropped (and reported to
// `onerror` as "unknown token"): typescript-sdk issue #2580, still so in v2 2.4.0
// (`Protocol._onnotification` dispatches through `Promise.resolve().then(..)`). The walk checks
// the wire order itself and lets the SDK's `onprogress` miss the last item.
function progressPrefix(got, expected) {
    assert.ok(got.length >= expected.length - 1, `progress ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
    assert.deepEqual(got, expected.slice(0, got.length), 'progress notifications');
    return got.length === expected.length
        ? `${got.length} progress notifications`
        : `${got.length}/${expected.length} progress notifications through onprogress; the last raced the response (typescript-sdk#2580), all ${expected.length} on the wire`;
}

// ------------------------------------------------------------------------------ the client
const logs = [];
const updates = [];
const sampling = [];
const elicitations = [];
let rootsAsked = 0;

const client = new Client(
    { name: 'interop-ts2-client', version: '1.0.0' },
    {
        capabilities: { sampling: {}, elicitation: { form: {} }, roots: {} },
        versionNegotiation: { mode: target.mode === 'auto' ? 'auto' : { pin: VERSION } },
    },
);
client.setNotificationHandler('notifications/message', (n) => {
    logs.push(n.params);
});
client.setNotificationHandler('notifications/resources/updated', (n) => {
    updates.push(n.params);
});
client.setRequestHandler('sampling/createMessage', async (request) => {
    sampling.push(request.params);
    const first = request.params.messages[0];
    const prompt = first?.content?.type === 'text' ? first.content.text : JSON.stringify(first?.content);
    return {
        model: 'interop-ts2-model',
        role: 'assistant',
        content: { type: 'text', text: `ts2 says: ${prompt}` },
        stopReason: 'endTurn',
    };
});
// Answers each one-field form of the fixtures by its field's name.
const ANSWERS = { name: 'Ada', color: 'teal', context: 'interop', ok: true, text: 'streamed words' };
client.setRequestHandler('elicitation/create', async (request) => {
    elicitations.push(request.params);
    const content = {};
    for (const field of Object.keys(request.params.requestedSchema?.properties ?? {})) {
        if (field in ANSWERS) content[field] = ANSWERS[field];
    }
    return { action: 'accept', content };
});
client.setRequestHandler('roots/list', async () => {
    rootsAsked++;
    return { roots: [{ uri: ROOT_URI, name: 'ts2-root' }] };
});

// Every message the client writes and reads, and (HTTP) every request's and response's headers.
const sent = [];
const received = [];
const exchanges = [];
function recordingFetch(url, init) {
    const headers = new Headers(init?.headers);
    let body;
    try {
        body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    } catch {
        body = undefined;
    }
    const exchange = { method: init?.method ?? 'GET', headers, body, response: undefined };
    exchanges.push(exchange);
    return fetch(url, init).then((res) => {
        exchange.response = { status: res.status, headers: res.headers };
        return res;
    });
}
function makeTransport() {
    if (target.kind === 'http') {
        return new StreamableHTTPClientTransport(target.url, { fetch: recordingFetch });
    }
    const [command, ...args] = target.argv;
    return new StdioClientTransport({ command, args, stderr: 'inherit' });
}
const transport = makeTransport();
const send = transport.send.bind(transport);
transport.send = (message, options) => {
    sent.push(message);
    return send(message, options);
};

async function main() {
    await check(`connect (versionNegotiation ${target.mode === 'auto' ? "'auto'" : `{ pin: '${VERSION}' }`})`, async () => {
        await client.connect(transport, TIMEOUT);
        const onmessage = transport.onmessage;
        transport.onmessage = (message, extra) => {
            received.push(message);
            onmessage?.(message, extra);
        };
        assert.equal(client.getProtocolEra(), 'modern', 'protocol era');
        assert.equal(client.getNegotiatedProtocolVersion(), VERSION, 'negotiated protocol version');
        const info = client.getServerVersion();
        assert.equal(info?.name, 'mcp-everything', `serverInfo: ${JSON.stringify(info)}`);
        const caps = client.getServerCapabilities();
        for (const cap of ['tools', 'resources', 'prompts', 'completions']) {
            assert.ok(caps?.[cap], `capability ${cap} missing: ${JSON.stringify(caps)}`);
        }
        assert.ok(client.getInstructions(), 'no instructions');
        const discover = client.getDiscoverResult();
        assert.ok(discover?.supportedVersions?.includes(VERSION), `supportedVersions: ${JSON.stringify(discover)}`);
        return `${info.name} ${info.version}, era ${client.getProtocolEra()}, protocol ${VERSION}; `
            + `supportedVersions ${discover.supportedVersions.join(' ')}`;
    });
    if (failed) return;

    // ----------------------------------------------------------------------------- tools
    await check('tools/list has the fixtures (ttlMs, cacheScope)', async () => {
        const r = await client.listTools(undefined, { ...TIMEOUT, cacheMode: 'refresh' });
        const names = r.tools.map((t) => t.name);
        const missing = FIXTURE_TOOLS.filter((n) => !names.includes(n));
        assert.deepEqual(missing, [], `missing tools; got ${names.join(', ')}`);
        for (const t of r.tools) assert.equal(t.inputSchema?.type, 'object', `${t.name}: inputSchema.type`);
        assert.equal(typeof r.ttlMs, 'number', `ttlMs: ${r.ttlMs}`);
        assert.ok(['public', 'private'].includes(r.cacheScope), `cacheScope: ${r.cacheScope}`);
        return `${names.length} tools, ttlMs ${r.ttlMs}, cacheScope ${r.cacheScope}`;
    });
    await check('tools/call echo', async () => {
        const r = await client.callTool({ name: 'echo', arguments: { text: 'héllo, wörld ✓ 2026' } }, TIMEOUT);
        assert.deepEqual(r.content, [{ type: 'text', text: 'héllo, wörld ✓ 2026' }]);
        assert.equal(r.isError ?? false, false);
    });
    await check('tools/call test_simple_text', async () => {
        const r = await client.callTool({ name: 'test_simple_text', arguments: {} }, TIMEOUT);
        assert.equal(onlyText(r), 'This is a simple text response for testing.');
    });
    await check('tools/call test_image_content', async () => {
        const r = await client.callTool({ name: 'test_image_content', arguments: {} }, TIMEOUT);
        assert.deepEqual(r.content, [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }]);
    });
    await check('tools/call test_error_handling -> isError', async () => {
        const r = await client.callTool({ name: 'test_error_handling', arguments: {} }, TIMEOUT);
        assert.equal(r.isError, true, JSON.stringify(r));
        assert.equal(onlyText(r), 'This tool intentionally returns an error for testing');
    });
    await check('tools/call unknown tool -> -32602', async () => {
        const code = await errorCode(client.callTool({ name: 'no_such_tool', arguments: {} }, TIMEOUT));
        assert.equal(code, -32602);
    });
    await check('tools/call echo with invalid arguments -> error', async () => {
        let r;
        try {
            r = await client.callTool({ name: 'echo', arguments: { text: 42 } }, TIMEOUT);
        } catch (e) {
            assert.equal(typeof e.code, 'number', `not a JSON-RPC error: ${e}`);
            return `JSON-RPC error ${e.code}`;
        }
        assert.equal(r.isError, true, `neither an error nor isError: ${JSON.stringify(r)}`);
        return 'isError result';
    });
    await check('tools/call test_custom_headers (x-mcp-header arguments)', async () => {
        const before = exchanges.length;
        const r = await client.callTool({ name: 'test_custom_headers', arguments: { region: 'eu-west', priority: 3, query: 'q' } }, TIMEOUT);
        assert.equal(onlyText(r), 'region="eu-west" priority=3 query="q"');
        if (target.kind !== 'http') return 'stdio: no headers';
        const posts = exchanges.slice(before).filter((x) => x.body?.method === 'tools/call');
        const last = posts[posts.length - 1];
        assert.ok(last, 'no tools/call POST recorded');
        assert.equal(last.headers.get('mcp-param-region'), 'eu-west', 'Mcp-Param-Region');
        assert.equal(last.headers.get('mcp-param-priority'), '3', 'Mcp-Param-Priority');
        assert.equal(last.headers.get('mcp-param-query'), null, 'Mcp-Param-Query (not annotated)');
        return `Mcp-Param-Region: eu-west, Mcp-Param-Priority: 3; ${posts.length} POST(s)`;
    });

    // -------------------------------------------------------------- logging and progress
    await check('tools/call test_logging_tool without a logLevel -> no notifications/message', async () => {
        logs.length = 0;
        const r = await client.callTool({ name: 'test_logging_tool', arguments: {} }, TIMEOUT);
        assert.equal(onlyText(r), 'logged at info, warning and error');
        await sleep(50);
        assert.deepEqual(logs, []);
    });
    await check(`tools/call test_logging_tool with _meta ${LOG_LEVEL_META_KEY} warning`, async () => {
        logs.length = 0;
        const r = await client.callTool(
            { name: 'test_logging_tool', arguments: {}, _meta: { [LOG_LEVEL_META_KEY]: 'warning' } }, TIMEOUT);
        assert.equal(onlyText(r), 'logged at info, warning and error');
        for (let i = 0; i < 25 && logs.length < 2; i++) await sleep(20);
        assert.deepEqual(logs.map((l) => [l.level, l.data]), [['warning', 'logging tool: warning'], ['error', 'logging tool: error']]);
        return `${logs.length} log messages`;
    });
    await check('tools/call test_tool_with_progress with onprogress', async () => {
        const progress = [];
        const from = received.length;
        const r = await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, {
            ...TIMEOUT,
            onprogress: (p) => progress.push([p.progress, p.total]),
        });
        assert.match(onlyText(r), /^Tool with progress executed successfully \(progress token .+\)$/);
        // On the wire: all three notifications, before the response.
        const wire = received.slice(from);
        const last = wire.findLastIndex((m) => m.id !== undefined && (m.result !== undefined || m.error !== undefined));
        const onWire = wire.slice(0, last).filter((m) => m.method === 'notifications/progress')
            .map((m) => [m.params.progress, m.params.total]);
        const expected = [[0, 100], [50, 100], [100, 100]];
        assert.deepEqual(onWire, expected, 'progress notifications on the wire before the response');
        return progressPrefix(progress, expected);
    });
    // ------------------------------------------------------------ MRTR (input_required)
    await check('MRTR tools/call test_input_required_result_elicitation (elicitation handler)', async () => {
        elicitations.length = 0;
        const r = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }, TIMEOUT);
        assert.equal(onlyText(r), 'Hello, Ada!');
        assert.equal(elicitations.length, 1, 'elicitation handler calls');
        assert.equal(elicitations[0].message, 'What is your name?');
        assert.deepEqual(elicitations[0].requestedSchema.required, ['name']);
    });
    await check('MRTR tools/call test_input_required_result_sampling (sampling handler)', async () => {
        sampling.length = 0;
        const r = await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} }, TIMEOUT);
        assert.equal(onlyText(r), 'Model answered: ts2 says: What is the capital of France?');
        assert.equal(sampling.length, 1, 'sampling handler calls');
        assert.equal(sampling[0].maxTokens, 100);
    });
    await check('MRTR tools/call test_input_required_result_list_roots (roots handler)', async () => {
        rootsAsked = 0;
        const r = await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} }, TIMEOUT);
        assert.equal(onlyText(r), `Client roots: ${ROOT_URI}`);
        assert.equal(rootsAsked, 1, 'roots handler calls');
    });
    await check('MRTR tools/call test_input_required_result_multi_round (two rounds)', async () => {
        elicitations.length = 0;
        const r = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }, TIMEOUT);
        assert.equal(onlyText(r), 'Ada likes teal');
        assert.deepEqual(elicitations.map((e) => e.message), ['Step 1: What is your name?', 'Step 2: What is your favorite color?']);
    });
    await check('MRTR tools/call test_input_required_result_multiple_inputs (one round, three asks)', async () => {
        elicitations.length = 0;
        sampling.length = 0;
        rootsAsked = 0;
        const r = await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} }, TIMEOUT);
        assert.equal(onlyText(r), 'name=Ada, greeting=ts2 says: Generate a greeting, roots=1');
        assert.deepEqual([elicitations.length, sampling.length, rootsAsked], [1, 1, 1], 'handler calls');
    });
    await check('MRTR tools/call test_input_required_result_request_state (sealed requestState)', async () => {
        const r = await client.callTool({ name: 'test_input_required_result_request_state', arguments: {} }, TIMEOUT);
        assert.equal(onlyText(r), 'state-ok: confirmed ok=true');
    });
    await check('MRTR manual (allowInputRequired): round 1, retry with the answers -> complete', async () => {
        const name = 'test_input_required_result_tampered_state';
        const round1 = await client.callTool({ name, arguments: {} }, { ...TIMEOUT, allowInputRequired: true });
        assert.equal(round1.resultType, 'input_required', JSON.stringify(round1));
        assert.equal(round1.inputRequests?.confirm?.method, 'elicitation/create', JSON.stringify(round1.inputRequests));
        assert.equal(typeof round1.requestState, 'string', 'requestState');
        const inputResponses = { confirm: { action: 'accept', content: { ok: true } } };
        const r = await client.callTool(
            { name, arguments: {}, inputResponses, requestState: round1.requestState }, { ...TIMEOUT, allowInputRequired: true });
        assert.equal(onlyText(r), 'confirmed ok=true');
        return `requestState ${round1.requestState.length} chars`;
    });
    await check('MRTR manual: a tampered requestState -> JSON-RPC error', async () => {
        const name = 'test_input_required_result_tampered_state';
        const round1 = await client.callTool({ name, arguments: {} }, { ...TIMEOUT, allowInputRequired: true });
        const state = round1.requestState;
        assert.equal(typeof state, 'string', JSON.stringify(round1));
        const i = Math.floor(state.length / 2);
        const tampered = state.slice(0, i) + (state[i] === 'A' ? 'B' : 'A') + state.slice(i + 1);
        const code = await errorCode(client.callTool(
            { name, arguments: {}, inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: tampered },
            { ...TIMEOUT, allowInputRequired: true }));
        return `error ${code}`;
    });
    await check('MRTR prompts/get test_input_required_result_prompt (elicitation handler)', async () => {
        elicitations.length = 0;
        const r = await client.getPrompt({ name: 'test_input_required_result_prompt' }, TIMEOUT);
        assert.deepEqual(r.messages, [{ role: 'user', content: { type: 'text', text: 'Answer with this context in mind: interop' } }]);
        assert.equal(elicitations.length, 1);
    });

    // ------------------------------------------------------------------------- resources
    await check('resources/list', async () => {
        const r = await client.listResources(undefined, { ...TIMEOUT, cacheMode: 'refresh' });
        const uris = r.resources.map((x) => x.uri);
        for (const u of ['test://static-text', 'test://static-binary', 'test://watched-resource']) {
            assert.ok(uris.includes(u), `${u} missing from ${uris}`);
        }
        assert.equal(r.resources.find((x) => x.uri === 'test://static-text').mimeType, 'text/plain');
        assert.equal(typeof r.ttlMs, 'number', 'ttlMs');
        return `${uris.length} resources`;
    });
    await check('resources/read test://static-text (ttlMs, cacheScope)', async () => {
        const r = await client.readResource({ uri: 'test://static-text' }, { ...TIMEOUT, cacheMode: 'bypass' });
        assert.deepEqual(r.contents, [{
            uri: 'test://static-text',
            mimeType: 'text/plain',
            text: 'This is the content of the static text resource.',
        }]);
        assert.equal(typeof r.ttlMs, 'number', `ttlMs: ${JSON.stringify(r)}`);
        assert.ok(['public', 'private'].includes(r.cacheScope), `cacheScope: ${r.cacheScope}`);
    });
    await check('resources/read test://static-binary', async () => {
        const r = await client.readResource({ uri: 'test://static-binary' }, { ...TIMEOUT, cacheMode: 'bypass' });
        assert.deepEqual(r.contents, [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_1X1 }]);
    });
    await check('resources/templates/list + read test://template/42/data', async () => {
        const t = await client.listResourceTemplates(undefined, TIMEOUT);
        assert.ok(t.resourceTemplates.some((x) => x.uriTemplate === 'test://template/{id}/data'), JSON.stringify(t));
        const r = await client.readResource({ uri: 'test://template/42/data' }, { ...TIMEOUT, cacheMode: 'bypass' });
        assert.deepEqual(JSON.parse(r.contents[0].text), { id: '42', templateTest: true, data: 'Data for ID: 42' });
    });
    await check('resources/read unknown URI -> -32602 (2026-07-28 resource not found)', async () => {
        const code = await errorCode(client.readResource({ uri: 'test://no-such-resource' }, { ...TIMEOUT, cacheMode: 'bypass' }));
        assert.equal(code, -32602);
    });

    // --------------------------------------------------------------------------- prompts
    await check('prompts/list', async () => {
        const r = await client.listPrompts(undefined, { ...TIMEOUT, cacheMode: 'refresh' });
        const names = r.prompts.map((p) => p.name);
        const missing = FIXTURE_PROMPTS.filter((n) => !names.includes(n));
        assert.deepEqual(missing, [], `missing prompts; got ${names}`);
        const withArgs = r.prompts.find((p) => p.name === 'test_prompt_with_arguments');
        assert.deepEqual(withArgs.arguments.map((a) => [a.name, a.required]), [['arg1', true], ['arg2', true]]);
        return `${names.length} prompts`;
    });
    await check('prompts/get test_simple_prompt', async () => {
        const r = await client.getPrompt({ name: 'test_simple_prompt' }, TIMEOUT);
        assert.deepEqual(r.messages, [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }]);
    });
    await check('prompts/get test_prompt_with_arguments', async () => {
        const r = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'alpha', arg2: 'beta' } }, TIMEOUT);
        assert.deepEqual(r.messages, [{ role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='alpha', arg2='beta'" } }]);
    });
    await check('prompts/get without a required argument -> error', async () => {
        await errorCode(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'alpha' } }, TIMEOUT));
    });

    // ------------------------------------------------------------------------ completion
    await check('completion/complete ref/prompt arg1 "pa"', async () => {
        const r = await client.complete({
            ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
            argument: { name: 'arg1', value: 'pa' },
        }, TIMEOUT);
        assert.deepEqual(r.completion.values, ['paris', 'park', 'party']);
        assert.equal(r.completion.total, 3);
    });
    await check('completion/complete ref/prompt arg2 with context', async () => {
        const r = await client.complete({
            ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
            argument: { name: 'arg2', value: 'w' },
            context: { arguments: { arg1: 'paris' } },
        }, TIMEOUT);
        assert.deepEqual(r.completion.values, ['world']);
    });
    await check('completion/complete ref/resource template {id}', async () => {
        const r = await client.complete({
            ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
            argument: { name: 'id', value: '4' },
        }, TIMEOUT);
        assert.deepEqual(r.completion.values, ['42']);
    });

    // ---------------------------------------------------------------- subscriptions/listen
    await check('subscriptions/listen + touch_watched -> notifications/resources/updated', async () => {
        let sub;
        try {
            sub = await client.listen({ resourceSubscriptions: ['test://watched-resource'] }, TIMEOUT);
        } catch (e) {
            const code = e?.code ?? e?.data?.code;
            const text = String(e?.message ?? e);
            if (!requireListen && (code === -32601 || /-32601|method not found: subscriptions\/listen/i.test(text))) {
                throw new Skip(`the server does not implement subscriptions/listen yet (${text.slice(0, 160)})`);
            }
            throw e;
        }
        try {
            assert.deepEqual(sub.honoredFilter.resourceSubscriptions, ['test://watched-resource'], JSON.stringify(sub.honoredFilter));
            updates.length = 0;
            await client.callTool({ name: 'touch_watched', arguments: {} }, TIMEOUT);
            for (let i = 0; i < 100 && updates.length === 0; i++) await sleep(20);
            assert.deepEqual(updates.map((u) => u.uri), ['test://watched-resource']);
            assert.ok(updates[0]._meta?.[SUBSCRIPTION_ID_META_KEY] !== undefined, `no ${SUBSCRIPTION_ID_META_KEY}: ${JSON.stringify(updates[0])}`);
        } finally {
            await sub.close();
        }
        const how = await Promise.race([sub.closed, sleep(2000).then(() => 'not closed')]);
        assert.equal(how, 'local', 'subscription end');
    });

    // ------------------------------------------------------------------- the wire itself
    await check(`every request carried the ${VERSION} _meta envelope; no initialize`, async () => {
        const requests = sent.filter((m) => m.method !== undefined && m.id !== undefined);
        assert.ok(requests.length > 10, `only ${requests.length} requests recorded`);
        const methods = new Set(requests.map((m) => m.method));
        assert.ok(!methods.has('initialize'), 'initialize was sent');
        assert.ok(!sent.some((m) => m.method === 'notifications/initialized'), 'notifications/initialized was sent');
        for (const m of requests) {
            const meta = m.params?._meta ?? {};
            assert.equal(meta[PROTOCOL_VERSION_META_KEY], VERSION, `${m.method}: protocolVersion`);
            assert.equal(typeof meta[CLIENT_CAPABILITIES_META_KEY], 'object', `${m.method}: clientCapabilities`);
            assert.equal(meta[CLIENT_INFO_META_KEY]?.name, 'interop-ts2-client', `${m.method}: clientInfo`);
        }
        return `${requests.length} requests: ${[...methods].sort().join(' ')}`;
    });
    if (target.kind === 'http') {
        await check('HTTP: MCP-Protocol-Version, Mcp-Method and Mcp-Name headers; no session', async () => {
            const all = exchanges.filter((x) => x.method === 'POST' && x.body?.method !== undefined);
            // Requests only: the SDK derives Mcp-Method/Mcp-Name from request bodies alone (its
            // notification POSTs, e.g. the listen's notifications/cancelled, carry neither;
            // StreamableHTTPClientTransport._applyBodyDerivedHeaders).
            const posts = all.filter((x) => x.body.id !== undefined);
            const notes = all.filter((x) => x.body.id === undefined);
            assert.ok(posts.length > 10, `${posts.length} POSTs`);
            for (const x of notes) assert.equal(x.response?.status, 202, `${x.body.method} POST: status`);
            for (const x of posts) {
                const m = x.body.method;
                assert.equal(x.headers.get('mcp-protocol-version'), VERSION, `${m}: MCP-Protocol-Version`);
                assert.equal(x.headers.get('mcp-method'), m, `${m}: Mcp-Method`);
                const name = m === 'resources/read' ? x.body.params?.uri
                    : (m === 'tools/call' || m === 'prompts/get') ? x.body.params?.name : undefined;
                if (name !== undefined) assert.equal(x.headers.get('mcp-name'), name, `${m}: Mcp-Name`);
                assert.equal(x.headers.get('mcp-session-id'), null, `${m}: the client sent Mcp-Session-Id`);
                assert.equal(x.response?.headers.get('mcp-session-id') ?? null, null, `${m}: the server answered with Mcp-Session-Id`);
            }
            const others = exchanges.filter((x) => x.method !== 'POST');
            assert.deepEqual(others.map((x) => x.method), [], 'GET/DELETE requests in the stateless era');
            return `${posts.length} request POSTs, statuses ${[...new Set(posts.map((x) => x.response?.status))].join(' ')}; `
                + `${notes.length} notification POST(s) (${notes.map((x) => x.body.method).join(' ') || 'none'}) answered 202`;
        });
    }
    await check('close', async () => {
        await client.close();
    });
}

const watchdog = setTimeout(() => {
    console.log(`${label}FAIL walk did not finish within 120 s`);
    console.log(`${label}${passed} passed, ${failed + 1} failed`);
    process.exit(1);
}, 120_000);
try {
    await main();
} catch (e) {
    failed++;
    console.log(`${label}FAIL unexpected: ${e?.stack ?? e}`);
}
clearTimeout(watchdog);
try {
    await client.close();
} catch {
    // already closed
}
console.log(`${label}${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed ? 1 : 0);
