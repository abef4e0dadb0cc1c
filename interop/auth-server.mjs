#!/usr/bin/env node
// A tiny authorization server for the resource-server walks: an RS256 key generated at start,
// its JWKS served at http://127.0.0.1:<port>/jwks.json, and access tokens minted with it.
//
//   node auth-server.mjs RESOURCE ISSUER
//
// Prints one JSON line on stdout, {"jwks": URL, "issuer": ISSUER, "tokens": {...}}, then serves
// until killed. The tokens: `good` (scope "mcp", for RESOURCE), `stepped_up` ("mcp echo:call"),
// `wrong_audience` (for another resource), `expired`.

import { createServer } from 'node:http';
import { generateKeyPairSync, sign } from 'node:crypto';

const [resource, issuer] = process.argv.slice(2);
if (!resource || !issuer) {
    console.error('usage: node auth-server.mjs RESOURCE ISSUER');
    process.exit(2);
}
const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'interop-1', alg: 'RS256', use: 'sig' };
const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
function mint(claims) {
    const head = b64({ alg: 'RS256', typ: 'at+jwt', kid: jwk.kid });
    const body = b64(claims);
    const sig = sign('sha256', Buffer.from(`${head}.${body}`), privateKey).toString('base64url');
    return `${head}.${body}.${sig}`;
}
const now = Math.floor(Date.now() / 1000);
const claims = (over) => ({
    iss: issuer, sub: 'interop-user', aud: resource, client_id: 'interop-client',
    scope: 'mcp', iat: now, nbf: now - 5, exp: now + 3600, ...over,
});
const tokens = {
    good: mint(claims({})),
    stepped_up: mint(claims({ scope: 'mcp echo:call' })),
    wrong_audience: mint(claims({ aud: 'http://127.0.0.1:1/elsewhere' })),
    expired: mint(claims({ iat: now - 7200, nbf: now - 7200, exp: now - 3600 })),
};
const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/jwks.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: [jwk] }));
    } else {
        res.writeHead(404);
        res.end();
    }
});
server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    console.log(JSON.stringify({ jwks: `http://127.0.0.1:${port}/jwks.json`, issuer, tokens }));
});
