#!/usr/bin/env node
// A round-robin TCP proxy for the cluster walk (run.sh): each connection it accepts goes to
// the next backend in turn (a backend that refuses the connection is skipped), so that the
// requests of one client land on either instance of a clustered server.
//
//   node rr-proxy.mjs PORT BACKEND_PORT...
//
// Prints "rr-proxy: listening on http://127.0.0.1:PORT" once it listens. SIGUSR1 drops every
// open connection (clients must reconnect, and resume their SSE streams, on either backend).

import net from 'node:net';

const [port, ...backends] = process.argv.slice(2).map(Number);
if (!port && port !== 0 || backends.length === 0) {
    console.error('usage: node rr-proxy.mjs PORT BACKEND_PORT...');
    process.exit(2);
}
let turn = 0;
const open = new Set();

function connect(client, tries) {
    const backend = backends[turn++ % backends.length];
    const upstream = net.connect({ host: '127.0.0.1', port: backend });
    upstream.once('connect', () => {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
    });
    upstream.once('error', (e) => {
        if (!upstream.readyState || upstream.connecting) {
            if (tries + 1 < backends.length) return connect(client, tries + 1);
        }
        client.destroy(e);
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    open.add(client);
    open.add(upstream);
    client.once('close', () => open.delete(client));
    upstream.once('close', () => open.delete(upstream));
}

const server = net.createServer({ pauseOnConnect: true }, (client) => {
    client.on('error', () => {});
    connect(client, 0);
});
process.on('SIGUSR1', () => {
    for (const s of open) s.destroy();
});
server.listen(port, '127.0.0.1', () => {
    console.error(`rr-proxy: listening on http://127.0.0.1:${server.address().port}`);
});
