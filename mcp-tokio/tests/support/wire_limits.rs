//! The time limits and connection caps of `serve_http_with` and `serve_ws_with`, probed by
//! attackers on plain blocking `std` sockets, so that one set of scenarios runs on every
//! runtime: `mcp-tokio/tests/wire_limits.rs` and `mcp-async-std/tests/wire_limits.rs` start
//! the servers and call these.
//!
//! Each scenario stalls a connection the way an attacker would (a body 4 KiB short of its
//! length, a trickled chunked body, half a request head, a kept-alive connection left idle, a
//! fragmented WebSocket message never finished, a WebSocket peer that never answers) and
//! checks that the server closes it within its (short, configured) deadline plus generous
//! slack, that the server still answers a legitimate client, and that the caps refuse
//! clearly. Loads are a few connections, on loopback only. Nothing here times a fast path.

#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::service::driver::ConnectionLimits;
use crate::service::hyper_server::{BodyLimits, HttpServerOptions};
use crate::service::ws::WsConfig;

/// Added to every deadline before a still-open connection fails a scenario: generous, for
/// loaded CI machines.
pub const SLACK: Duration = Duration::from_secs(4);

/// Starts an HTTP server (`serve_http_with`, endpoint at `/mcp` bound to loopback) with
/// these options and returns its address.
pub type StartHttp<'a> = &'a dyn Fn(HttpServerOptions) -> SocketAddr;
/// Starts a WebSocket server (`serve_ws_with`, bound to loopback) with this configuration
/// and returns its address.
pub type StartWs<'a> = &'a dyn Fn(WsConfig) -> SocketAddr;
/// Starts a raw TCP server (`serve_tcp_with`, newline-delimited JSON-RPC) with these caps and
/// returns its address.
pub type StartTcp<'a> = &'a dyn Fn(ConnectionLimits) -> SocketAddr;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).ok();
    s
}

/// A connection to `addr` from the loopback address `from` (127.0.0.x: Linux routes all of
/// 127/8 to the loopback interface).
fn connect_from(addr: SocketAddr, from: Ipv4Addr) -> TcpStream {
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    socket
        .bind(&SocketAddr::new(IpAddr::V4(from), 0).into())
        .expect("bind the source address");
    socket.connect(&addr.into()).expect("connect");
    let s: TcpStream = socket.into();
    s.set_nodelay(true).ok();
    s
}

/// Reads until the peer closes (EOF or reset) and returns what arrived, or `Err` with what
/// arrived if the connection is still open after `within`.
fn read_until_closed(s: &mut TcpStream, within: Duration) -> Result<Vec<u8>, Vec<u8>> {
    let end = Instant::now() + within;
    let mut got = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(got);
        }
        s.set_read_timeout(Some(left)).ok();
        match s.read(&mut buf) {
            Ok(0) => return Ok(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(got);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // A reset is a close too.
            Err(_) => return Ok(got),
        }
    }
}

/// Asserts that `s` is closed by the server within `deadline` + [`SLACK`]; returns what the
/// server sent before closing.
fn assert_closed(s: &mut TcpStream, deadline: Duration, what: &str) -> Vec<u8> {
    let start = Instant::now();
    match read_until_closed(s, deadline + SLACK) {
        Ok(got) => got,
        Err(got) => panic!(
            "{what}: still open after {:?} (deadline {deadline:?}); the server sent {:?}",
            start.elapsed(),
            String::from_utf8_lossy(&got[..got.len().min(200)])
        ),
    }
}

/// Reads one HTTP response head and its `Content-Length` body from `s` (within 10 s).
fn read_response(s: &mut TcpStream) -> (u16, String) {
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => got.push(byte[0]),
            Ok(_) => panic!(
                "connection closed in a response head: {:?}",
                String::from_utf8_lossy(&got)
            ),
            Err(e) => panic!(
                "no response: {e} (after {:?})",
                String::from_utf8_lossy(&got)
            ),
        }
    }
    let head = String::from_utf8_lossy(&got).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {head:?}"));
    let len = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).expect("the response body");
    (status, head)
}

fn get_404(addr: SocketAddr) -> String {
    format!("GET /nothing-here HTTP/1.1\r\nHost: {addr}\r\n\r\n")
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"legit","version":"1"}}}"#;

/// A legitimate client: `initialize` on a fresh connection is answered 200 within 10 s.
pub fn legit_client_is_served(addr: SocketAddr) {
    let mut s = connect(addr);
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INIT}",
        INIT.len()
    );
    s.write_all(req.as_bytes()).expect("send");
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut head = [0u8; 12];
    s.read_exact(&mut head)
        .expect("a legitimate client is answered within 10 s");
    assert_eq!(
        &head,
        b"HTTP/1.1 200",
        "{:?}",
        String::from_utf8_lossy(&head)
    );
}

fn post_head(addr: SocketAddr, length: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
    )
}

fn assert_408(got: &[u8], what: &str) {
    let text = String::from_utf8_lossy(got);
    assert!(
        text.starts_with("HTTP/1.1 408"),
        "{what}: expected 408, got {text:?}"
    );
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{what}: {text:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------

/// Bodies that stop 4 KiB short of their `Content-Length` are answered 408 and closed at the
/// whole-body deadline (today they pin their buffers for good), and the server keeps serving.
pub fn http_body_short_of_its_length_is_closed_at_the_deadline(start: StartHttp<'_>) {
    let deadline = secs(1.0);
    let addr =
        start(HttpServerOptions::default().body(BodyLimits::unlimited().deadline(Some(deadline))));
    const LEN: usize = 1024 * 1024;
    let stalled: Vec<TcpStream> = (0..8)
        .map(|_| {
            let mut s = connect(addr);
            s.write_all(post_head(addr, LEN).as_bytes()).unwrap();
            s.write_all(&vec![b' '; LEN - 4096]).unwrap();
            s
        })
        .collect();
    for (i, mut s) in stalled.into_iter().enumerate() {
        let got = assert_closed(&mut s, deadline, &format!("stalled body {i}"));
        assert_408(&got, "a body short of its length");
    }
    legit_client_is_served(addr);
}

/// A chunked body trickled at 20 bytes a second is answered 408 and closed once the grace
/// period is over (today it is read for as long as it trickles), and the server keeps
/// serving.
pub fn http_trickled_chunked_body_is_closed_by_the_minimum_rate(start: StartHttp<'_>) {
    let grace = secs(1.0);
    let addr = start(
        HttpServerOptions::default().body(
            BodyLimits::unlimited()
                .min_bytes_per_sec(1024)
                .rate_grace(grace),
        ),
    );
    let mut s = connect(addr);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut writer = s.try_clone().unwrap();
    let trickle = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(15);
        while Instant::now() < until {
            if writer.write_all(b"4\r\n    \r\n").is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let got = assert_closed(&mut s, grace, "a trickled chunked body");
    assert_408(&got, "a trickled chunked body");
    drop(s);
    trickle.join().unwrap();
    legit_client_is_served(addr);
}

/// The read buffer's cap bounds a request's head (431 past it) but not its body: a body
/// larger than the buffer arrives in pieces and is answered whole.
pub fn http_read_buffer_bounds_the_head_not_the_body(start: StartHttp<'_>) {
    let addr = start(HttpServerOptions::default().read_buffer(16 * 1024));
    let call = |extra_header: usize, pad: usize| {
        let body = BIG_CALL.replacen(
            r#""arguments":{}"#,
            &format!(r#""arguments":{{"pad":"{}"}}"#, "p".repeat(pad)),
            1,
        );
        let mut s = connect(addr);
        let head = post_head(addr, body.len()).replacen(
            "\r\n\r\n",
            &format!(
                "\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n\
                 Mcp-Name: big\r\nX-Pad: {}\r\n\r\n",
                "h".repeat(extra_header)
            ),
            1,
        );
        s.write_all(head.as_bytes()).unwrap();
        // The server may answer (431) before reading the rest: a failed write is fine.
        let _ = s.write_all(body.as_bytes());
        read_response(&mut s).0
    };
    assert_eq!(call(20 * 1024, 0), 431, "a head over the read buffer");
    assert_eq!(call(10 * 1024, 0), 200, "a head within the read buffer");
    assert_eq!(
        call(10, 100 * 1024),
        200,
        "a body six times the read buffer"
    );
    legit_client_is_served(addr);
}

/// Half a request head, or nothing at all, is closed at the header timeout (today 30 s,
/// not configurable).
pub fn http_half_a_head_is_closed_at_the_header_timeout(start: StartHttp<'_>) {
    let timeout = secs(1.0);
    let addr = start(HttpServerOptions::default().header_read_timeout(Some(timeout)));
    let mut half = connect(addr);
    half.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .unwrap();
    let mut silent = connect(addr);
    assert_closed(&mut half, timeout, "half a request head");
    assert_closed(&mut silent, timeout, "a connection that sends nothing");
    legit_client_is_served(addr);
}

/// A keep-alive connection is served again after longer than the header timeout (idle time
/// is not header time), then closed once idle for the keep-alive timeout (today both are
/// hyper's fixed 30 s header timeout, which in hyper 1.x also runs between requests).
pub fn http_idle_keep_alive_is_closed_at_the_keep_alive_timeout(start: StartHttp<'_>) {
    let header = secs(1.0);
    let idle = secs(3.0);
    let addr = start(
        HttpServerOptions::default()
            .header_read_timeout(Some(header))
            .keep_alive_timeout(Some(idle)),
    );
    let mut s = connect(addr);
    s.write_all(get_404(addr).as_bytes()).unwrap();
    assert_eq!(read_response(&mut s).0, 404);
    // Idle for longer than the header timeout, well within the keep-alive timeout.
    std::thread::sleep(secs(1.5));
    s.write_all(get_404(addr).as_bytes()).unwrap();
    assert_eq!(
        read_response(&mut s).0,
        404,
        "served again after 1.5 s idle"
    );
    assert_closed(&mut s, idle, "an idle keep-alive connection");
}

/// Over the caps (3 per IP, 6 in all) a connection gets a minimal 503 with `Retry-After` and
/// is closed; another address still gets in until the total cap; a connection given back
/// makes room again. (Today every connection is served.)
pub fn http_connection_caps_refuse_with_503(start: StartHttp<'_>) {
    let addr = start(
        HttpServerOptions::default()
            .connections(ConnectionLimits::default().max_connections(6).max_per_ip(3)),
    );
    let a = Ipv4Addr::new(127, 0, 0, 1);
    let b = Ipv4Addr::new(127, 0, 0, 2);
    let c = Ipv4Addr::new(127, 0, 0, 3);
    let mut held: Vec<TcpStream> = (0..3).map(|_| connect_from(addr, a)).collect();
    // Make sure the server accepted those three before the next one.
    for s in &mut held {
        s.write_all(get_404(addr).as_bytes()).unwrap();
        assert_eq!(read_response(s).0, 404);
    }
    let refused_503 = |from: Ipv4Addr, what: &str| {
        let mut s = connect_from(addr, from);
        let got = assert_closed(&mut s, Duration::ZERO, what);
        let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
        assert!(text.starts_with("http/1.1 503"), "{what}: {text:?}");
        assert!(text.contains("retry-after: 1"), "{what}: {text:?}");
        assert!(text.contains("connection: close"), "{what}: {text:?}");
    };
    refused_503(a, "a fourth connection from one address");
    for _ in 0..3 {
        let mut s = connect_from(addr, b);
        s.write_all(get_404(addr).as_bytes()).unwrap();
        assert_eq!(read_response(&mut s).0, 404, "another address gets in");
        held.push(s);
    }
    refused_503(c, "a seventh connection in all");
    // Give one back: a new connection is served again (once the server saw the close).
    drop(held.remove(0));
    let until = Instant::now() + SLACK;
    loop {
        let mut s = connect_from(addr, a);
        s.write_all(get_404(addr).as_bytes()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).ok();
        let mut head = [0u8; 12];
        if s.read_exact(&mut head).is_ok() && &head == b"HTTP/1.1 404" {
            break;
        }
        assert!(Instant::now() < until, "no room after a connection closed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------------------------
// WebSocket
// ---------------------------------------------------------------------------------------------

/// Opens a WebSocket to `addr` by hand (the `mcp` subprotocol) and returns the socket after
/// the 101.
fn ws_open(addr: SocketAddr) -> TcpStream {
    ws_open_on(connect(addr), addr)
}

/// [`ws_open`] on a connected socket.
fn ws_open_on(mut s: TcpStream, addr: SocketAddr) -> TcpStream {
    let req = format!(
        "GET /ws HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Sec-WebSocket-Protocol: mcp\r\n\r\n"
    );
    s.write_all(req.as_bytes()).unwrap();
    let (status, head) = read_response(&mut s);
    assert_eq!(status, 101, "{head}");
    s
}

/// A client frame (masked with a zero key, so the payload is sent as is).
fn ws_frame(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![if fin { 0x80 } else { 0 } | opcode];
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n <= 0xffff => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&[0, 0, 0, 0]);
    f.extend_from_slice(payload);
    f
}

/// The server's frames in `bytes` (unmasked): `(opcode, payload)`.
fn ws_frames(mut bytes: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while bytes.len() >= 2 {
        let opcode = bytes[0] & 0x0f;
        let (len, at) = match bytes[1] & 0x7f {
            126 if bytes.len() >= 4 => (u16::from_be_bytes([bytes[2], bytes[3]]) as usize, 4),
            127 if bytes.len() >= 10 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&bytes[2..10]);
                (u64::from_be_bytes(b) as usize, 10)
            }
            n if n < 126 => (n as usize, 2),
            _ => break,
        };
        if bytes.len() < at + len {
            break;
        }
        out.push((opcode, bytes[at..at + len].to_vec()));
        bytes = &bytes[at + len..];
    }
    out
}

/// The close code of the server's close frame among `bytes`.
fn close_code(bytes: &[u8]) -> Option<u16> {
    ws_frames(bytes)
        .into_iter()
        .find(|(op, _)| *op == 0x8)
        .and_then(|(_, p)| (p.len() >= 2).then(|| u16::from_be_bytes([p[0], p[1]])))
}

fn ws_config() -> WsConfig {
    WsConfig::new().bound_to(Ipv4Addr::LOCALHOST.into())
}

/// A fragmented message begun and never finished is closed with 1008 at its deadline, even
/// while the peer keeps sending pings (today it is held with no deadline at all).
pub fn ws_unfinished_message_is_closed_at_its_deadline(start: StartWs<'_>) {
    let deadline = secs(1.0);
    let addr = start(
        ws_config()
            .unfinished_message_timeout(Some(deadline))
            .idle_timeout(None),
    );
    let mut s = ws_open(addr);
    s.write_all(&ws_frame(false, 0x1, &vec![b' '; 256 * 1024]))
        .unwrap();
    let mut writer = s.try_clone().unwrap();
    let pinger = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(15);
        while Instant::now() < until {
            if writer.write_all(&ws_frame(true, 0x9, b"hi")).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let got = assert_closed(&mut s, deadline, "an unfinished WebSocket message");
    assert_eq!(close_code(&got), Some(1008), "{:?}", ws_frames(&got));
    drop(s);
    pinger.join().unwrap();
}

/// A fragmented message over the default 4 MiB budget is closed with 1009 as soon as it goes
/// over (today the budget is the session's 16 MiB).
pub fn ws_unfinished_message_over_its_budget_is_closed(start: StartWs<'_>) {
    let addr = start(ws_config());
    let mut s = ws_open(addr);
    let piece = vec![b' '; 1024 * 1024];
    let mut refused = false;
    // 5 MiB in five fragments (the writes may fail once the server closed).
    for i in 0..5 {
        let opcode = if i == 0 { 0x1 } else { 0x0 };
        if s.write_all(&ws_frame(false, opcode, &piece)).is_err() {
            refused = true;
            break;
        }
    }
    let got = assert_closed(&mut s, Duration::ZERO, "a message over its budget");
    assert!(
        close_code(&got) == Some(1009) || (refused && got.is_empty()),
        "{:?}",
        ws_frames(&got)
    );
}

/// A peer that sends nothing and answers no ping is pinged, then closed with 1001 within one
/// and a half idle timeouts; one that answers pings stays (today nothing is ever closed).
pub fn ws_silent_peer_is_closed_at_the_idle_timeout(start: StartWs<'_>) {
    let idle = secs(2.0);
    let addr = start(ws_config().idle_timeout(Some(idle)));
    let mut silent = ws_open(addr);
    let mut live = ws_open(addr);
    // The live peer answers every ping, for longer than the silent one lasts, then checks
    // that the server still answers a ping of its own.
    let live = std::thread::spawn(move || {
        let until = Instant::now() + idle * 3;
        let mut pending = Vec::new();
        let mut buf = [0u8; 1024];
        while Instant::now() < until {
            live.set_read_timeout(Some(Duration::from_millis(100))).ok();
            match live.read(&mut buf) {
                Ok(0) => panic!("a peer answering pings was closed"),
                Ok(n) => {
                    pending.extend_from_slice(&buf[..n]);
                    for (op, payload) in ws_frames(&pending) {
                        assert_ne!(op, 0x8, "a peer answering pings was closed");
                        if op == 0x9 {
                            live.write_all(&ws_frame(true, 0xA, &payload)).unwrap();
                        }
                    }
                    pending.clear();
                }
                Err(_) => {}
            }
        }
        live.write_all(&ws_frame(true, 0x9, b"alive?")).unwrap();
        live.set_read_timeout(Some(Duration::from_secs(5))).ok();
        let n = live.read(&mut buf).expect("a pong");
        assert!(
            ws_frames(&buf[..n])
                .iter()
                .any(|(op, p)| *op == 0xA && p == b"alive?"),
            "{:?}",
            ws_frames(&buf[..n])
        );
    });
    let got = assert_closed(&mut silent, idle * 3 / 2, "a silent WebSocket peer");
    let frames = ws_frames(&got);
    assert!(
        frames.iter().any(|(op, _)| *op == 0x9),
        "pinged first: {frames:?}"
    );
    assert_eq!(close_code(&got), Some(1001), "{frames:?}");
    live.join().expect("the live peer stays connected");
}

/// A connection that never finishes its upgrade request is closed at the header timeout
/// (today hyper's fixed 30 s).
pub fn ws_handshake_is_closed_at_the_header_timeout(start: StartWs<'_>) {
    let timeout = secs(1.0);
    let addr = start(ws_config().header_read_timeout(Some(timeout)));
    let mut half = connect(addr);
    half.write_all(format!("GET /ws HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .unwrap();
    assert_closed(&mut half, timeout, "half an upgrade request");
    let _ok = ws_open(addr);
}

/// Over the WebSocket server's cap a connection gets the same 503 before any handshake.
pub fn ws_connection_cap_refuses_with_503(start: StartWs<'_>) {
    let addr = start(ws_config().connections(ConnectionLimits::default().max_connections(2)));
    let _a = ws_open(addr);
    let _b = ws_open(addr);
    let mut c = connect(addr);
    let got = assert_closed(&mut c, Duration::ZERO, "a third WebSocket connection");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 503"), "{text:?}");
}

// ---------------------------------------------------------------------------------------------
// Raw TCP
// ---------------------------------------------------------------------------------------------

/// Sends `initialize` as one line and reads the answer's line.
fn tcp_initialize(s: &mut TcpStream) -> String {
    s.write_all(format!("{INIT}\n").as_bytes()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).ok();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\n") {
        match s.read(&mut byte) {
            Ok(1) => line.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&line).into_owned()
}

/// Over a raw TCP server's cap a connection is closed at once, unanswered (a JSON-RPC byte
/// stream has no way to say why); a connection given back makes room (today every
/// connection is served).
pub fn tcp_connection_cap_closes(start: StartTcp<'_>) {
    let addr = start(ConnectionLimits::default().max_connections(2));
    let mut a = connect(addr);
    let mut b = connect(addr);
    assert!(tcp_initialize(&mut a).contains("\"result\""));
    assert!(tcp_initialize(&mut b).contains("\"result\""));
    let mut c = connect(addr);
    let got = assert_closed(&mut c, Duration::ZERO, "a third TCP connection");
    assert!(got.is_empty(), "{:?}", String::from_utf8_lossy(&got));
    drop(a);
    let until = Instant::now() + SLACK;
    loop {
        let mut d = connect(addr);
        if tcp_initialize(&mut d).contains("\"result\"") {
            break;
        }
        assert!(Instant::now() < until, "no room after a connection closed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------------------------------------
// Peers that read nothing
// ---------------------------------------------------------------------------------------------

/// The size of the `big` tool's reply.
pub const BIG: usize = 8 * 1024 * 1024;

/// The server every scenario runs: no tools but `big`, whose reply is [`BIG`] bytes of text.
pub fn server() -> crate::service::Server {
    use crate::service::schema::{CallToolResult, Tool};
    use crate::service::server::{ToolContext, schema_of};
    crate::service::Server::builder("wire-limits", "1")
        .tool(
            Tool::new("big", schema_of(serde_json::json!({"type": "object"}))),
            |_: serde_json::Value, _cx: ToolContext| async move {
                Ok(CallToolResult::text("x".repeat(BIG)))
            },
        )
        .build()
}

/// A 2026-07-28 `tools/call` of `big` (no handshake needed).
const BIG_CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"unread","version":"1"}}}}"#;

/// A connection whose receive buffer is small: what the server sends stays in its own
/// buffers.
fn connect_small(addr: SocketAddr) -> TcpStream {
    let socket =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).expect("socket");
    socket.set_recv_buffer_size(4096).ok();
    socket.connect(&addr.into()).expect("connect");
    socket.into()
}

/// Waits `wait` without reading, then asserts that the server closed the connection before
/// all of the [`BIG`] reply was taken.
fn assert_closed_unread(s: &mut TcpStream, wait: Duration) {
    std::thread::sleep(wait);
    match read_until_closed(s, Duration::from_secs(5)) {
        Ok(got) => assert!(
            got.len() < BIG,
            "the whole reply arrived ({} bytes): nothing stalled",
            got.len()
        ),
        Err(got) => panic!(
            "still open {SLACK:?} after the write timeout ({} bytes were sent)",
            got.len()
        ),
    }
}

/// A client that asks for a large reply and reads none of it is closed at the write timeout
/// (before, its connection and everything queued for it were held for as long as it stalled).
pub fn http_unread_reply_is_closed_at_the_write_timeout(start: StartHttp<'_>) {
    let timeout = secs(1.0);
    let addr = start(HttpServerOptions::default().write_timeout(Some(timeout)));
    let mut s = connect_small(addr);
    let req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: big\r\nContent-Length: {}\r\n\r\n{BIG_CALL}",
        BIG_CALL.len()
    );
    s.write_all(req.as_bytes()).expect("send");
    assert_closed_unread(&mut s, timeout + SLACK);
    legit_client_is_served(addr);
}

/// A WebSocket peer that asks for a large reply and reads none of it is closed at the write
/// timeout.
pub fn ws_unread_reply_is_closed_at_the_write_timeout(start: StartWs<'_>) {
    let timeout = secs(1.0);
    let addr = start(ws_config().write_timeout(Some(timeout)).idle_timeout(None));
    let mut s = ws_open_on(connect_small(addr), addr);
    s.write_all(&ws_frame(true, 0x1, BIG_CALL.as_bytes()))
        .unwrap();
    assert_closed_unread(&mut s, timeout + SLACK);
}
