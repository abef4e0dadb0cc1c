#!/usr/bin/env python3
"""Stalled-connection attacks against `everything` (issue 11, time limits on the wire): the
server's RSS and open descriptors, and a legitimate client's latency, with the default limits
and with `--wire-limits off` (how the servers behaved before they had limits). Loopback only,
bounded counts; Linux (reads /proc, uses prlimit and 127.0.0.2).

    cargo build -p mcp-examples --bin everything
    EVERYTHING=target/debug/everything python3 examples/wire_abuse.py body tokio default 39101

Scenarios: `body` (50 bodies 4 KiB short of 4 MiB), `chunked` (1024 chunked bodies that never
end, the server limited to 1024 descriptors), `ws15` / `ws4` (20 WebSocket messages of 15 MiB
or just under 4 MiB in 1 MiB fragments, never finished). Each samples after 3 s and 33 s (1 s
and 9 s for `chunked`)."""
import os, socket, subprocess, sys, time, struct, json

EVERYTHING = os.environ.get("EVERYTHING", "everything")

def rss_kb(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])
def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))

def start(runtime, transport, port, extra, nofile=None):
    cmd = [EVERYTHING, "--runtime", runtime, "--transport", transport, "--port", str(port)] + extra
    if nofile:
        cmd = ["prlimit", f"--nofile={nofile}", "--"] + cmd
    p = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    time.sleep(0.3)
    return p

INIT = json.dumps({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"legit","version":"1"}}}).encode()

def legit(port, src="127.0.0.2", timeout=10.0):
    t0 = time.time()
    try:
        s = socket.socket(); s.settimeout(timeout); s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n" % (port, len(INIT)) + INIT)
        head = s.recv(12)
        s.close()
        if head != b"HTTP/1.1 200":
            return f"answered {head!r} in {time.time()-t0:.3f}s"
        return f"200 in {(time.time()-t0)*1000:.1f} ms"
    except OSError as e:
        return f"failed after {time.time()-t0:.1f}s: {e}"

def is_open(s):
    s.setblocking(False)
    try:
        d = s.recv(65536)
        return False if d == b"" else "data"
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        s.setblocking(True)

def count_open(socks):
    return sum(1 for s in socks if is_open(s) is True)

def report(tag, pid, socks, port):
    print(f"  {tag}: RSS {rss_kb(pid)/1024:.0f} MB, fds {fds(pid)}, attacker conns still open {count_open(socks)}/{len(socks)}, legit client {legit(port)}", flush=True)

def body_short(runtime, mode, port):
    p = start(runtime, "http", port, ["--wire-limits", mode])
    base = rss_kb(p.pid)
    print(f"[{runtime} --wire-limits {mode}] 50 bodies 4 KiB short of 4 MiB; baseline RSS {base/1024:.0f} MB, fds {fds(p.pid)}", flush=True)
    L = 4*1024*1024
    socks = []
    for i in range(50):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n" % (port, L))
        s.sendall(b" " * (L - 4096))
        socks.append(s)
    time.sleep(3)
    report("after 3 s", p.pid, socks, port)
    time.sleep(30)
    report("after 33 s", p.pid, socks, port)
    p.kill(); p.wait()

def chunked_forever(runtime, mode, port, n=1024):
    p = start(runtime, "http", port, ["--wire-limits", mode], nofile=1024)
    print(f"[{runtime} --wire-limits {mode}] {n} chunked bodies that never end (server RLIMIT_NOFILE 1024); baseline fds {fds(p.pid)}", flush=True)
    socks = []
    refused = 0
    for i in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n    \r\n" % port)
            socks.append(s)
        except OSError:
            refused += 1
    time.sleep(1)
    got503 = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(12, socket.MSG_PEEK).startswith(b"HTTP/1.1 503"):
                got503 += 1
        except OSError:
            pass
        s.setblocking(True)
    print(f"  connects failed {refused}, answered 503 {got503}", flush=True)
    report("after 1 s", p.pid, socks, port)
    time.sleep(8)
    report("after 9 s", p.pid, socks, port)
    p.kill(); p.wait()

def ws_open(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp\r\n\r\n" % port)
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += s.recv(1)
    assert b" 101 " in buf.split(b"\r\n")[0], buf
    return s

def frame(fin, op, payload):
    n = len(payload)
    h = bytes([(0x80 if fin else 0) | op])
    if n < 126: h += bytes([0x80 | n])
    elif n < 65536: h += bytes([0x80 | 126]) + struct.pack(">H", n)
    else: h += bytes([0x80 | 127]) + struct.pack(">Q", n)
    return h + b"\0\0\0\0" + payload

def ws_fragments(runtime, mode, port, size):
    p = start(runtime, "ws", port, ["--wire-limits", mode])
    base = rss_kb(p.pid)
    print(f"[{runtime} --wire-limits {mode}] 20 WebSocket messages of {size/2**20:.1f} MiB in 1 MiB fragments, never finished; baseline RSS {base/1024:.0f} MB", flush=True)
    socks = []
    piece = b" " * (1024 * 1024)
    for i in range(20):
        s = ws_open(port)
        sent = 0
        first = True
        try:
            while sent < size:
                chunk = piece[: min(len(piece), size - sent)]
                s.sendall(frame(False, 1 if first else 0, chunk))
                first = False
                sent += len(chunk)
        except OSError:
            pass
        socks.append(s)
    time.sleep(3)
    print(f"  after 3 s: RSS {rss_kb(p.pid)/1024:.0f} MB, fds {fds(p.pid)}, open {count_open(socks)}/20", flush=True)
    time.sleep(30)
    print(f"  after 33 s: RSS {rss_kb(p.pid)/1024:.0f} MB, fds {fds(p.pid)}, open {count_open(socks)}/20", flush=True)
    p.kill(); p.wait()

if __name__ == "__main__":
    what, runtime, mode, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if what == "body": body_short(runtime, mode, port)
    elif what == "chunked": chunked_forever(runtime, mode, port)
    elif what == "ws15": ws_fragments(runtime, mode, port, 15 * 1024 * 1024)
    elif what == "ws4": ws_fragments(runtime, mode, port, 4 * 1024 * 1024 - 64 * 1024)
