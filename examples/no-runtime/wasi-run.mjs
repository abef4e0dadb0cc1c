#!/usr/bin/env node
// Runs a WASI (preview 1) module under Node's `node:wasi`, with the process's own stdin,
// stdout and stderr: `node wasi-run.mjs no-runtime-server.wasm`. The module's exit code is
// this process's.
import { readFile } from 'node:fs/promises';
import { argv, exit } from 'node:process';
import { WASI } from 'node:wasi';

if (argv.length < 3) {
    console.error('usage: node wasi-run.mjs <module.wasm> [args...]');
    exit(2);
}
const wasi = new WASI({
    version: 'preview1',
    args: argv.slice(2),
    env: {},
    stdin: 0,
    stdout: 1,
    stderr: 2,
    returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(argv[2]));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
