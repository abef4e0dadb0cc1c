//! `bench-http` — the Streamable HTTP benchmark: K concurrent sessions, each making M `echo`
//! calls, against our `echo` server in its own process, or against any Streamable HTTP server
//! with an `echo` tool (one returning its `text` argument as its text content).
//!
//! ```text
//! bench-http [--runtime tokio|async-std|smol] [--sessions 1,64,1024] [--calls M] [--size S]
//!            [--json-response] [--stateless] [--https] [--h2] [--shards N]
//!            [--server-cmd CMD | --url URL [--server-pid PID]] [--idle N] [--label L]
//!            [--cluster memory|REDIS_URL]
//! ```
//!
//! `--cluster memory` serves as one instance of a cluster on in-memory stores (what sharing
//! sessions, events and updates costs without a backend's latency); `--cluster
//! redis://HOST:PORT/` on Redis (`ServerBuilder::cluster`, `RedisStores`).
//!
//! Other servers: `--server-cmd CMD` starts `CMD` (through `sh -c`, `exec`ed, so that its
//! process is the server's) for each K, with `{port}` replaced by a free port, and waits for
//! the port to accept connections; `--url http://HOST:PORT/PATH` talks to a server already
//! running (the same one for every K), whose memory and CPU are read from `/proc` when
//! `--server-pid PID` names it. A server that answers `initialize` with no `Mcp-Session-Id`
//! (a stateless one) is called without it. Our own server is `--server-cmd` too:
//! `bench-http --serve --port {port}` (with `taskset -c 0` before it to pin it to a CPU).
//!
//! `--idle N` only opens N sessions (no calls) and reports the server's RSS with them idle.
//! `--label L` names the run in its JSON lines. `--stateless` serves our server in stateless
//! mode (no session; with `--json-response`, what an rmcp server's JSON replies need).
//!
//! `--shards N` serves with N engines (default: the library's, one per core), `--shards 1`
//! with one, for the sharded server's speed-up.
//!
//! `--https` serves and connects over TLS (a CA and a certificate for 127.0.0.1 made at start
//! with `rcgen`, the server's `serve_http_tls`); `--h2` speaks HTTP/2 on each connection
//! (ALPN `h2` over TLS, prior-knowledge h2c otherwise) instead of HTTP/1.1. Either way each
//! session has a connection of its own.
//!
//! For each K it starts a fresh server (this binary with `--serve`), opens K sessions
//! (initialize + initialized, each on a connection closed afterwards) and measures the server's
//! RSS with the K sessions idle; then opens one keep-alive HTTP/1.1 connection per session and
//! measures again (the connections' cost); then has every session make M calls back to back on
//! its connection, checking every reply. One JSON line per K: calls per second, p50/p99 latency, the server's idle memory per
//! session and in total, its peak RSS and CPU time, its RSS after the calls and its CPU time per
//! call (the CPU it spent during the calls, divided by their number).
//!
//! The client is a bare hyper client, not our typed client, so that the figures are the
//! server's. `BENCH_HTTP_SERVER_PREFIX` puts a command before the server's (a profiler);
//! the memory figures are then the profiler's process's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_proto::codec::sse::SseDecoder;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::net::TcpStream;
use tokio_util::compat::TokioAsyncReadCompatExt;

const V: &str = "2025-11-25";

fn usage(msg: &str) -> ! {
    eprintln!(
        "bench-http: {msg}\nusage: bench-http [--runtime tokio|async-std|smol] [--sessions 1,64,1024] [--calls M] [--size S] [--json-response] [--stateless] [--https] [--h2] [--shards N] [--server-cmd CMD | --url URL [--server-pid PID]] [--idle N] [--label L] [--cluster memory|REDIS_URL]"
    );
    std::process::exit(2);
}

struct Args {
    runtime: String,
    sessions: Vec<usize>,
    calls: usize,
    size: usize,
    json: bool,
    serve: bool,
    shards: Option<usize>,
    /// `--cluster memory` or a Redis URL.
    cluster: Option<String>,
    /// Over TLS (`--https`).
    https: bool,
    /// HTTP/2 (`--h2`).
    h2: bool,
    /// The server's certificate and key files (given to `--serve` with `--https`).
    tls_files: Option<(String, String)>,
    /// Our server in stateless mode (`--stateless`).
    stateless: bool,
    /// The port `--serve` listens on (`--port`; 0: any).
    port: u16,
    /// Another server, started for each K (`--server-cmd`, `{port}` replaced).
    server_cmd: Option<String>,
    /// A server already running (`--url`).
    url: Option<Target>,
    /// Its process, for its memory and CPU (`--server-pid`).
    server_pid: Option<u32>,
    /// Only open this many sessions and measure them idle (`--idle`).
    idle: Option<usize>,
    /// The name of the run in its JSON lines (`--label`).
    label: Option<String>,
}

/// Where the server listens: address, port and the endpoint's path.
#[derive(Clone, Debug)]
struct Target {
    host: String,
    port: u16,
    path: String,
}

impl Target {
    fn local(port: u16) -> Self {
        Target {
            host: "127.0.0.1".into(),
            port,
            path: "/mcp".into(),
        }
    }

    /// `http://HOST:PORT/PATH` (the path defaults to `/mcp`).
    fn parse(url: &str) -> Option<Self> {
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/mcp"),
        };
        let (host, port) = authority.rsplit_once(':')?;
        Some(Target {
            host: host.trim_matches(['[', ']']).to_owned(),
            port: port.parse().ok()?,
            path: path.to_owned(),
        })
    }

    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// How the client connects: TLS (with the CA it trusts) or not, HTTP/2 or HTTP/1.1.
#[derive(Clone)]
struct Wire {
    tls: Option<mcp_service::tls::TlsClientConfig>,
    h2: bool,
}

fn parse_args() -> Args {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut a = Args {
        runtime: "tokio".into(),
        sessions: vec![1, 64, 1024],
        calls: 200,
        size: 16,
        json: false,
        serve: false,
        shards: None,
        cluster: None,
        https: false,
        h2: false,
        tls_files: None,
        stateless: false,
        port: 0,
        server_cmd: None,
        url: None,
        server_pid: None,
        idle: None,
        label: None,
    };
    let mut i = 0;
    while i < argv.len() {
        let value = |i: usize| {
            argv.get(i + 1)
                .cloned()
                .unwrap_or_else(|| usage(&format!("{} needs a value", argv[i])))
        };
        match argv[i].as_str() {
            "--runtime" => a.runtime = value(i),
            "--sessions" => {
                a.sessions = value(i)
                    .split(',')
                    .map(|s| s.parse().unwrap_or_else(|_| usage("--sessions: numbers")))
                    .collect()
            }
            "--calls" => a.calls = value(i).parse().unwrap_or_else(|_| usage("--calls")),
            "--size" => a.size = value(i).parse().unwrap_or_else(|_| usage("--size")),
            "--shards" => a.shards = Some(value(i).parse().unwrap_or_else(|_| usage("--shards"))),
            "--cluster" => a.cluster = Some(value(i)),
            "--port" => a.port = value(i).parse().unwrap_or_else(|_| usage("--port")),
            "--server-cmd" => a.server_cmd = Some(value(i)),
            "--url" => {
                a.url = Some(
                    Target::parse(&value(i))
                        .unwrap_or_else(|| usage("--url http://HOST:PORT/PATH")),
                )
            }
            "--server-pid" => {
                a.server_pid = Some(value(i).parse().unwrap_or_else(|_| usage("--server-pid")))
            }
            "--idle" => a.idle = Some(value(i).parse().unwrap_or_else(|_| usage("--idle"))),
            "--label" => a.label = Some(value(i)),
            "--stateless" => {
                a.stateless = true;
                i += 1;
                continue;
            }
            "--json-response" => {
                a.json = true;
                i += 1;
                continue;
            }
            "--serve" => {
                a.serve = true;
                i += 1;
                continue;
            }
            "--https" => {
                a.https = true;
                i += 1;
                continue;
            }
            "--h2" => {
                a.h2 = true;
                i += 1;
                continue;
            }
            "--tls-files" => {
                let v = value(i);
                let (c, k) = v
                    .split_once(',')
                    .unwrap_or_else(|| usage("--tls-files C,K"));
                a.tls_files = Some((c.to_owned(), k.to_owned()));
            }
            other => usage(&format!("unknown argument {other:?}")),
        }
        i += 2;
    }
    a
}

fn main() {
    raise_fd_limit();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut args = parse_args();
    if args.serve {
        serve(&args);
        return;
    }
    let wire = Wire {
        tls: args.https.then(|| pki(&mut args)),
        h2: args.h2,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| usage(&e.to_string()));
    if args.server_cmd.is_some() && args.url.is_some() {
        usage("--server-cmd and --url exclude each other");
    }
    if let Some(n) = args.idle {
        match rt.block_on(idle(&args, &wire, n)) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("bench-http: --idle {n}: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    for &k in &args.sessions {
        match rt.block_on(run(&args, &wire, k)) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("bench-http: K={k}: {e}");
                std::process::exit(1);
            }
        }
    }
}

/// A CA and a certificate for 127.0.0.1 it signed, in files for the server; the client's
/// configuration trusting the CA.
fn pki(args: &mut Args) -> mcp_service::tls::TlsClientConfig {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let fail = |e: &dyn std::fmt::Display| -> ! { usage(&format!("certificates: {e}")) };
    let ca_key = KeyPair::generate().unwrap_or_else(|e| fail(&e));
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| fail(&e));
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_pem = ca.self_signed(&ca_key).unwrap_or_else(|e| fail(&e)).pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap_or_else(|e| fail(&e));
    let mut leaf = CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| fail(&e));
    leaf.subject_alt_names
        .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let cert = leaf.signed_by(&key, &issuer).unwrap_or_else(|e| fail(&e));
    let dir = std::env::temp_dir().join(format!("bench-http-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let (c, k) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&c, cert.pem()).unwrap_or_else(|e| fail(&e));
    std::fs::write(&k, key.serialize_pem()).unwrap_or_else(|e| fail(&e));
    args.tls_files = Some((c.display().to_string(), k.display().to_string()));
    mcp_service::tls::TlsClientConfig::without_default_roots()
        .add_ca_pem(ca_pem.as_bytes())
        .unwrap_or_else(|e| fail(&e))
}

/// The server side: `echo` over Streamable HTTP on an ephemeral port, announced on stdout.
fn serve(args: &Args) {
    use mcp_service::cluster::{Cluster, MemoryStores, RedisStores, StoreLimits};
    let cluster = args.cluster.as_deref().map(|c| match c {
        "memory" => Cluster::new(
            MemoryStores::new(StoreLimits::default(), mcp_async_std::SmolRuntime::new()),
            1,
        ),
        url => async_io::block_on(RedisStores::connect(url, "bench:", StoreLimits::default()))
            .map(|s| Cluster::new(s, 1))
            .unwrap_or_else(|e| usage(&format!("--cluster {url}: {e}"))),
    });
    let server = mcp_examples::bench::echo_server_with(|b| match cluster {
        Some(c) => b.cluster(c),
        None => b,
    });
    let listener = std::net::TcpListener::bind(("127.0.0.1", args.port))
        .unwrap_or_else(|e| usage(&e.to_string()));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| usage(&e.to_string()));
    let mut config = mcp_proto::http::EndpointConfig::new(server.config().clone())
        .bound_to(addr.ip())
        .max_sessions(100_000)
        .stateless(args.stateless);
    if args.json {
        config = config.response_mode(mcp_proto::http::ResponseMode::Json);
    }
    println!("{addr}");
    let tls = args.tls_files.as_ref().map(|(c, k)| {
        let read = |p: &str| std::fs::read(p).unwrap_or_else(|e| usage(&format!("{p}: {e}")));
        mcp_service::tls::TlsServerConfig::from_pem(&read(c), &read(k))
            .unwrap_or_else(|e| usage(&e.to_string()))
    });
    // Every connection comes from the load generator's one address: no cap per address
    // below the cap on connections.
    let limits = mcp_service::driver::ConnectionLimits::default();
    let mut options = mcp_service::hyper_server::HttpServerOptions::default()
        .connections(limits.max_per_ip(limits.max_connections));
    if let Some(n) = args.shards {
        options = options.shards(n);
    }
    let result: Result<(), String> = match args.runtime.as_str() {
        // One worker per CPU the server may run on (one when pinned with `taskset -c N`).
        "tokio" => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(
                std::thread::available_parallelism()
                    .map(usize::from)
                    .unwrap_or(2),
            )
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                rt.block_on(async {
                    let _ = listener.set_nonblocking(true);
                    let listener =
                        tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
                    let rt = mcp_tokio::TokioRuntime::current();
                    match tls {
                        Some(tls) => {
                            mcp_tokio::serve_http_tls(rt, server, listener, config, options, tls)
                                .await
                        }
                        None => {
                            mcp_tokio::serve_http_with(rt, server, listener, config, options).await
                        }
                    }
                    .map_err(|e| e.to_string())
                })
            }),
        "async-std" => async_std::task::block_on(async {
            let rt = mcp_async_std::AsyncStdRuntime::new();
            match tls {
                Some(tls) => {
                    mcp_async_std::serve_http_tls(rt, server, listener, config, options, tls).await
                }
                None => mcp_async_std::serve_http_with(rt, server, listener, config, options).await,
            }
        })
        .map_err(|e| e.to_string()),
        "smol" => async_io::block_on(async {
            let rt = mcp_async_std::SmolRuntime::new();
            match tls {
                Some(tls) => {
                    mcp_async_std::serve_http_tls(rt, server, listener, config, options, tls).await
                }
                None => mcp_async_std::serve_http_with(rt, server, listener, config, options).await,
            }
        })
        .map_err(|e| e.to_string()),
        other => Err(format!("unknown runtime {other:?}")),
    };
    if let Err(e) = result {
        eprintln!("bench-http server: {e}");
        std::process::exit(1);
    }
}

/// One connection's request sender, HTTP/1.1 or HTTP/2.
enum SendRequest {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

impl SendRequest {
    async fn send(
        &mut self,
        mut req: Request<Full<Bytes>>,
    ) -> Result<hyper::Response<Incoming>, hyper::Error> {
        match self {
            SendRequest::H1(s) => {
                s.ready().await?;
                s.send_request(req).await
            }
            SendRequest::H2(s) => {
                // HTTP/2 requests carry `:scheme` and `:authority`.
                if let Some(host) = req.headers().get("host").and_then(|h| h.to_str().ok())
                    && let Ok(uri) = format!("http://{host}{}", req.uri()).parse()
                {
                    *req.uri_mut() = uri;
                }
                s.ready().await?;
                s.send_request(req).await
            }
        }
    }
}

struct Session {
    sender: SendRequest,
    /// `None` for a stateless server.
    sid: Option<String>,
}

fn post(target: &Target, sid: Option<&str>, body: String) -> Request<Full<Bytes>> {
    let mut b = Request::post(target.path.as_str())
        .header("host", target.authority())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(sid) = sid {
        b = b.header("mcp-session-id", sid);
    }
    b.header("mcp-protocol-version", V)
        .body(Full::from(body))
        .unwrap_or_else(|e| usage(&e.to_string()))
}

/// The JSON-RPC messages of a reply body: the body itself (JSON) or its SSE `data` events.
fn messages(content_type: &str, body: &[u8]) -> Result<Vec<Value>, String> {
    if content_type.starts_with("text/event-stream") {
        let mut d = SseDecoder::new(64 << 20);
        d.push(body);
        let mut out = Vec::new();
        while let Some(ev) = d.next_event() {
            let ev = ev.map_err(|e| format!("bad SSE: {e:?}"))?;
            if !ev.data.is_empty() {
                out.push(serde_json::from_str(&ev.data).map_err(|e| e.to_string())?);
            }
        }
        Ok(out)
    } else {
        Ok(vec![
            serde_json::from_slice(body).map_err(|e| e.to_string())?,
        ])
    }
}

async fn exchange(
    sender: &mut SendRequest,
    req: Request<Full<Bytes>>,
) -> Result<(http::response::Parts, Vec<Value>), String> {
    let resp = sender.send(req).await.map_err(|e| e.to_string())?;
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
    if !parts.status.is_success() {
        return Err(format!(
            "HTTP {}: {}",
            parts.status,
            String::from_utf8_lossy(&bytes)
        ));
    }
    let ct = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let msgs = if bytes.is_empty() {
        Vec::new()
    } else {
        messages(&ct, &bytes)?
    };
    Ok((parts, msgs))
}

/// A keep-alive connection to the server: TLS or not, HTTP/1.1 or HTTP/2 as `wire` says.
async fn connect(target: &Target, wire: &Wire) -> Result<SendRequest, String> {
    let stream = TcpStream::connect((target.host.as_str(), target.port))
        .await
        .map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    let io: mcp_service::hyper_io::BoxedIo = match &wire.tls {
        Some(tls) => {
            let (tls, h2) = mcp_service::tls::connect(tls, "127.0.0.1", stream.compat(), wire.h2)
                .await
                .map_err(|e| e.to_string())?;
            if h2 != wire.h2 {
                return Err("the server did not choose h2".into());
            }
            Box::new(mcp_service::hyper_io::FuturesIo::new(tls))
        }
        None => Box::new(TokioIo::new(stream)),
    };
    if wire.h2 {
        let (sender, conn) = http2::handshake(TokioExecutor::new(), io)
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        Ok(SendRequest::H2(sender))
    } else {
        let (sender, conn) = http1::handshake(io).await.map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        Ok(SendRequest::H1(sender))
    }
}

/// Opens a session (initialize + initialized) on a connection of its own, closed afterwards;
/// its id (`None` from a stateless server).
async fn open(target: Target, wire: Wire) -> Result<Option<String>, String> {
    let mut sender = connect(&target, &wire).await?;
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion": V, "capabilities": {},
        "clientInfo": {"name": "bench-http", "version": "1"}}});
    let (parts, _) = exchange(&mut sender, post(&target, None, init.to_string())).await?;
    let sid = parts
        .headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
    exchange(&mut sender, post(&target, sid.as_deref(), note)).await?;
    Ok(sid)
}

async fn calls(
    target: Target,
    mut s: Session,
    m: usize,
    text: Arc<String>,
) -> Result<(Vec<Duration>, Reply), String> {
    let mut lat = Vec::with_capacity(m);
    let mut kind = Reply::default();
    for i in 0..m {
        let body = json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/call",
            "params":{"name":"echo","arguments":{"text": text.as_str()}}})
        .to_string();
        let t = Instant::now();
        let (parts, msgs) = exchange(&mut s.sender, post(&target, s.sid.as_deref(), body)).await?;
        lat.push(t.elapsed());
        kind.saw(&parts);
        let reply = msgs
            .iter()
            .find(|m| m["id"] == i + 1)
            .ok_or("no response in the reply")?;
        if reply["result"]["content"][0]["text"].as_str() != Some(text.as_str()) {
            return Err(format!("wrong reply: {reply}"));
        }
    }
    Ok((lat, kind))
}

/// The content types the server answered calls with.
#[derive(Default, Clone, Copy)]
struct Reply {
    json: bool,
    sse: bool,
}

impl Reply {
    fn saw(&mut self, parts: &http::response::Parts) {
        let ct = parts
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if ct.starts_with("text/event-stream") {
            self.sse = true;
        } else {
            self.json = true;
        }
    }

    fn merge(self, other: Reply) -> Reply {
        Reply {
            json: self.json || other.json,
            sse: self.sse || other.sse,
        }
    }

    fn name(self) -> &'static str {
        match (self.json, self.sse) {
            (true, false) => "json",
            (false, true) => "sse",
            (true, true) => "mixed",
            (false, false) => "none",
        }
    }
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e3
}

/// A server being measured: its process, when known, and where it listens.
struct Measured {
    child: Option<tokio::process::Child>,
    pid: Option<u32>,
    target: Target,
    /// Runs under `BENCH_HTTP_SERVER_PREFIX` (a profiler, stopped with SIGINT).
    profiled: bool,
}

impl Measured {
    fn rss_kb(&self) -> u64 {
        self.pid.map(rss_kb).unwrap_or(0)
    }

    /// CPU seconds and peak RSS (KiB) so far.
    fn stats(&self) -> (f64, u64) {
        self.pid
            .and_then(mcp_examples::bench::proc_stats)
            .unwrap_or((0.0, 0))
    }

    async fn stop(self) {
        let Some(mut child) = self.child else {
            return;
        };
        if !self.profiled {
            let _ = child.kill().await;
            return;
        }
        // A profiler writes its data on SIGINT (and then ends the server it runs).
        if let Some(pid) = self.pid {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
        }
        if tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    }
}

/// A port nobody listens on now.
fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// Starts the server to measure (or names the one running at `--url`).
async fn start(args: &Args) -> Result<Measured, String> {
    if let Some(target) = &args.url {
        return Ok(Measured {
            child: None,
            pid: args.server_pid,
            target: target.clone(),
            profiled: false,
        });
    }
    if let Some(template) = &args.server_cmd {
        let port = free_port()?;
        let line = template.replace("{port}", &port.to_string());
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec {line}"))
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("{line}: {e}"))?;
        let pid = child.id();
        let target = Target::local(port);
        let t = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("{line}: exited ({status}) before listening"));
            }
            if t.elapsed() > Duration::from_secs(30) {
                return Err(format!("{line}: not listening on {port} after 30 s"));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        return Ok(Measured {
            child: Some(child),
            pid,
            target,
            profiled: false,
        });
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // `BENCH_HTTP_SERVER_PREFIX="perf record -g --"` (say) runs the server under a profiler.
    let prefix: Vec<String> = std::env::var("BENCH_HTTP_SERVER_PREFIX")
        .map(|p| p.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    let mut cmd = match prefix.split_first() {
        Some((program, args)) => {
            let mut c = tokio::process::Command::new(program);
            c.args(args).arg(exe);
            c
        }
        None => tokio::process::Command::new(exe),
    };
    cmd.arg("--serve").arg("--runtime").arg(&args.runtime);
    if args.json {
        cmd.arg("--json-response");
    }
    if args.stateless {
        cmd.arg("--stateless");
    }
    if let Some(n) = args.shards {
        cmd.arg("--shards").arg(n.to_string());
    }
    if let Some(c) = &args.cluster {
        cmd.arg("--cluster").arg(c);
    }
    if let Some((c, k)) = &args.tls_files {
        cmd.arg("--tls-files").arg(format!("{c},{k}"));
    }
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| e.to_string())?;
    let pid = child.id().ok_or("server exited")?;
    let mut lines = tokio::io::BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let addr = lines
        .next_line()
        .await
        .map_err(|e| e.to_string())?
        .ok_or("the server did not start")?;
    let port: u16 = addr
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .ok_or("bad address")?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(Measured {
        child: Some(child),
        pid: Some(pid),
        target: Target::local(port),
        profiled: !prefix.is_empty(),
    })
}

/// Opens `k` sessions, at most 64 handshakes at a time, each on a connection closed after the
/// handshake: what remains is the sessions' own memory.
async fn open_sessions(
    target: &Target,
    wire: &Wire,
    k: usize,
) -> Result<Vec<Option<String>>, String> {
    use futures_util::StreamExt;
    let mut sids = Vec::with_capacity(k);
    let mut pending = futures_util::stream::FuturesUnordered::new();
    let mut started = 0;
    while sids.len() < k {
        while started < k && pending.len() < 64 {
            pending.push(open(target.clone(), wire.clone()));
            started += 1;
        }
        match pending.next().await {
            Some(s) => sids.push(s?),
            None => break,
        }
    }
    Ok(sids)
}

/// `--idle N`: the server's memory with N sessions open and idle.
async fn idle(args: &Args, wire: &Wire, n: usize) -> Result<String, String> {
    let server = start(args).await?;
    let base_kb = server.rss_kb();
    let sids = open_sessions(&server.target, wire, n).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let idle_kb = server.rss_kb();
    let (cpu, hwm) = server.stats();
    server.stop().await;
    let total = idle_kb.saturating_sub(base_kb);
    Ok(json!({
        "label": args.label,
        "idle_sessions": n,
        "stateful": sids.iter().all(Option::is_some),
        "server_base_rss_kb": base_kb,
        "server_rss_kb": idle_kb,
        "server_rss_mib": ((idle_kb as f64 / 1024.0) * 10.0).round() / 10.0,
        "server_idle_sessions_kb": total,
        "server_idle_kb_per_session": ((total as f64 / n.max(1) as f64) * 10.0).round() / 10.0,
        "server_peak_rss_kb": hwm,
        "server_cpu_s": (cpu * 100.0).round() / 100.0,
    })
    .to_string())
}

async fn run(args: &Args, wire: &Wire, k: usize) -> Result<String, String> {
    let server = start(args).await?;
    let target = server.target.clone();
    let base_kb = server.rss_kb();
    let sids = open_sessions(&target, wire, k).await?;
    let stateful = sids.iter().all(Option::is_some);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle_kb = server.rss_kb();
    // Then one keep-alive connection per session, idle: the cost of the connections.
    let mut sessions = Vec::with_capacity(k);
    for sid in sids {
        sessions.push(Session {
            sender: connect(&target, wire).await?,
            sid,
        });
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let conn_kb = server.rss_kb();

    let text = Arc::new("x".repeat(args.size));
    let (cpu_before, _) = server.stats();
    let t = Instant::now();
    let tasks: Vec<_> = sessions
        .into_iter()
        .map(|s| tokio::spawn(calls(target.clone(), s, args.calls, text.clone())))
        .collect();
    let mut lat = Vec::with_capacity(k * args.calls);
    let mut reply = Reply::default();
    for task in tasks {
        let (l, r) = task.await.map_err(|e| e.to_string())??;
        lat.extend(l);
        reply = reply.merge(r);
    }
    let wall = t.elapsed().as_secs_f64();
    lat.sort();
    let (cpu, hwm) = server.stats();
    let rss_after = server.rss_kb();
    server.stop().await;
    let idle_total = idle_kb.saturating_sub(base_kb);
    let calls_cpu = (cpu - cpu_before).max(0.0);
    Ok(json!({
        "label": args.label,
        "runtime": if args.server_cmd.is_some() || args.url.is_some() { "external" } else { args.runtime.as_str() },
        // What the server answered with (a server may answer JSON unasked).
        "reply": reply.name(),
        "stateful": stateful,
        "shards": args.shards,
        "cluster": args.cluster,
        "wire": format!("{}{}", if args.https { "https" } else { "http" }, if args.h2 { "/2" } else { "/1.1" }),
        "sessions": k,
        "calls": lat.len(),
        "size": args.size,
        "calls_per_s": (lat.len() as f64 / wall).round(),
        "p50_ms": (percentile(&lat, 0.50) * 1000.0).round() / 1000.0,
        "p99_ms": (percentile(&lat, 0.99) * 1000.0).round() / 1000.0,
        "server_base_rss_kb": base_kb,
        "server_idle_sessions_kb": idle_total,
        "server_idle_kb_per_session": ((idle_total as f64 / k as f64) * 10.0).round() / 10.0,
        "server_idle_connections_kb": conn_kb.saturating_sub(idle_kb),
        "server_rss_after_kb": rss_after,
        "server_peak_rss_kb": hwm,
        "server_cpu_s": (cpu * 100.0).round() / 100.0,
        "server_cpu_us_per_call": ((calls_cpu / lat.len().max(1) as f64) * 1e7).round() / 10.0,
    })
    .to_string())
}

/// Lifts the soft limit of open files to the hard limit (1024 sessions need 1024 sockets).
fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            let _ = libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}
