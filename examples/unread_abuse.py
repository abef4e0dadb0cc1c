#!/usr/bin/env python3
"""Peers that stop reading, and hosts that die, against an `everything` binary: the figures of
issue 11's backpressure, isolation and dead-host cases, before and after.

    python3 examples/unread_abuse.py target/debug/everything [--runtimes tokio,async-std]

For each runtime it prints:
- stdio, unread: the server's peak RSS while a tool streams without pause and the host reads
  nothing for 3 s, then how long a `ping` takes once the host reads again;
- stdio, dead host: how long the server keeps running after its host read part of the output
  and closed stdout and stdin; and after only stdout closed;
- HTTP, unread stream: another client's `initialize` + `echo` latency and the server's RSS while
  one client calls the streaming tool and reads nothing.

Everything is on loopback, bounded in time; each server is killed at the end.
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "abuse", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
FLOOD = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "stream", "arguments": {"count": 1_000_000_000, "delay_ms": 0},
    "_meta": {"progressToken": 2}}}


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def spawn(binary, runtime, *extra):
    p = subprocess.Popen([binary, "--runtime", runtime, *extra], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return p


def send(p, msg):
    p.stdin.write((json.dumps(msg) + "\n").encode())
    p.stdin.flush()


def wait_exit(p, limit):
    """Seconds until `p` exits, or None after `limit` (or once it grows past 2 GiB)."""
    start = time.time()
    while time.time() - start < limit:
        if p.poll() is not None:
            return time.time() - start
        if rss_mib(p.pid) > 2048:
            return None
        time.sleep(0.02)
    return None


def stdio_unread(binary, runtime):
    p = spawn(binary, runtime)
    try:
        send(p, INIT)
        send(p, INITIALIZED)
        send(p, FLOOD)
        peak = 0.0
        for _ in range(30):
            time.sleep(0.1)
            peak = max(peak, rss_mib(p.pid))
            if p.poll() is not None or peak > 2048:
                break
        if p.poll() is not None:
            return f"peak RSS {peak:.0f} MiB, then the server died ({p.returncode})"
        send(p, {"jsonrpc": "2.0", "id": "ping", "method": "ping"})
        asked = time.time()
        got = []

        def drain():
            for line in p.stdout:
                if b'"id":"ping"' in line:
                    got.append(time.time())
                    return
        t = threading.Thread(target=drain, daemon=True)
        t.start()
        t.join(30)
        ping = f"{got[0] - asked:.2f} s" if got else "none within 30 s"
        return f"peak RSS {peak:.0f} MiB in 3 s unread; ping after reading again: {ping}"
    finally:
        p.kill()
        p.wait()


def stdio_dead(binary, runtime):
    out = []
    p = spawn(binary, runtime)
    try:
        send(p, INIT)
        send(p, INITIALIZED)
        send(p, FLOOD)
        p.stdout.read(64 * 1024)
        p.stdout.close()
        p.stdin.close()
        t = wait_exit(p, 10)
        out.append(f"stdout+stdin closed: exit {'after %.2f s' % t if t is not None else 'none in 10 s'}"
                   f" (RSS {rss_mib(p.pid):.0f} MiB)")
    finally:
        p.kill()
        p.wait()
    p = spawn(binary, runtime)
    try:
        send(p, INIT)
        send(p, INITIALIZED)
        send(p, FLOOD)
        time.sleep(0.5)
        p.stdout.close()
        t = wait_exit(p, 10)
        out.append(f"stdout closed: exit {'after %.2f s' % t if t is not None else 'none in 10 s'}"
                   f" (RSS {rss_mib(p.pid):.0f} MiB)")
    finally:
        p.kill()
        p.wait()
    return "; ".join(out)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def post(port, body, sid=None, timeout=8):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"content-type": "application/json",
               "accept": "application/json, text/event-stream"}
    if sid:
        headers["mcp-session-id"] = sid
        headers["mcp-protocol-version"] = "2025-11-25"
    c.request("POST", "/mcp", json.dumps(body), headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def http_unread(binary, runtime):
    port = free_port()
    p = subprocess.Popen([binary, "--runtime", runtime, "--transport", "http", "--port",
                          str(port)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    flooder = None
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        r, _ = post(port, INIT)
        sid = r.getheader("mcp-session-id")
        post(port, INITIALIZED, sid)
        flooder = socket.create_connection(("127.0.0.1", port))
        flooder.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        body = json.dumps(FLOOD)
        flooder.sendall((f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n"
                         "content-type: application/json\r\n"
                         "accept: application/json, text/event-stream\r\n"
                         f"mcp-session-id: {sid}\r\nmcp-protocol-version: 2025-11-25\r\n"
                         f"content-length: {len(body)}\r\n\r\n{body}").encode())
        time.sleep(1.0)
        lat = []
        failed = 0
        peak = 0.0
        for i in range(10):
            start = time.time()
            try:
                r, _ = post(port, INIT)
                sid2 = r.getheader("mcp-session-id")
                post(port, INITIALIZED, sid2)
                post(port, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                    "name": "echo", "arguments": {"text": f"hi {i}"}}}, sid2)
                lat.append(time.time() - start)
            except (OSError, http.client.HTTPException):
                failed += 1
            peak = max(peak, rss_mib(p.pid))
            if p.poll() is not None or peak > 2048:
                break
        lat.sort()
        median = f"{lat[len(lat) // 2] * 1000:.1f} ms" if lat else "-"
        worst = f"{lat[-1] * 1000:.1f} ms" if lat else "-"
        return (f"other client (initialize+echo): median {median}, worst {worst}, "
                f"{failed}/10 not answered within 8 s; server peak RSS {peak:.0f} MiB")
    finally:
        if flooder:
            flooder.close()
        p.kill()
        p.wait()


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    binary = sys.argv[1]
    runtimes = ["tokio", "async-std"]
    if "--runtimes" in sys.argv:
        runtimes = sys.argv[sys.argv.index("--runtimes") + 1].split(",")
    for rt in runtimes:
        print(f"{rt}: stdio unread: {stdio_unread(binary, rt)}", flush=True)
        print(f"{rt}: stdio dead host: {stdio_dead(binary, rt)}", flush=True)
        print(f"{rt}: HTTP unread stream: {http_unread(binary, rt)}", flush=True)


if __name__ == "__main__":
    main()
