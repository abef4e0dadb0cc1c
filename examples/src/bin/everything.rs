//! `everything` — a server exposing every feature: the official conformance suite's fixtures,
//! plus `echo`, a slow cancellable tool with progress (`slow`) and a streaming tool (`stream`).
//!
//! ```text
//! everything [--runtime tokio|async-std|smol] [--transport stdio|http|sse|ws] [--port P] [--host H]
//!            [--stateless] [--json-response] [--eras handshake|both|stateless] [--cors-origin ORIGIN]...
//!            [--wire-limits default|off] [--max-connections N] [--max-per-ip N]
//!            [--header-timeout S] [--keep-alive-timeout S] [--body-deadline S]
//!            [--body-min-rate BYTES_PER_S] [--ws-unfinished-timeout S] [--ws-idle-timeout S]
//!            [--shards N] [--tls-cert PEM --tls-key PEM [--ca PEM]] [--no-http2]
//!            [--auth-jwks URL | --auth-introspect URL [--auth-client-id ID --auth-client-secret S]]
//!            [--auth-issuer ISS] [--auth-audience AUD] [--auth-resource URL] [--auth-scope S]...
//!            [--auth-tool-scope TOOL=SCOPE]... [--redis URL [--instance N] [--redis-prefix P]]
//! ```
//!
//! The `--auth-*` flags make the HTTP (and WebSocket) server an OAuth resource server
//! (`ServerBuilder::resource_server`): every request needs a bearer token, checked against the
//! JWKS at `--auth-jwks` (JWT access tokens) or by the RFC 7662 endpoint at
//! `--auth-introspect` (client_secret_basic with `--auth-client-id`/`--auth-client-secret`);
//! `iss` must be `--auth-issuer` (also the metadata's authorization server), `aud` must be
//! `--auth-audience` (default: the resource, `--auth-resource`, whose default is
//! `http://HOST:PORT/mcp`, or `/ws`); `--auth-scope` is required of every request,
//! `--auth-tool-scope TOOL=SCOPE` of every call of one tool. The Protected Resource Metadata
//! is served at `/.well-known/oauth-protected-resource[/mcp]`.
//!
//! `--tls-cert` and `--tls-key` serve HTTP and WebSocket over TLS (`https://`, `wss://`) with
//! that certificate chain and key; `--ca` then asks clients for a certificate signed by that
//! CA and refuses those without one (mutual TLS). HTTP/2 is served beside HTTP/1.1 (ALPN `h2`
//! over TLS, prior-knowledge h2c on plain TCP) unless `--no-http2`.
//!
//! `--eras` says which protocol eras are served: both (the default, as for any server), the
//! handshake era only (2024-11-05 … 2025-11-25), or only the stateless 2026-07-28 era (a
//! request naming its version in `_meta`, `server/discover`; over HTTP, one POST per request
//! with no session).
//! Over HTTP, `--stateless` serves without sessions (`EndpointConfig::stateless`) and
//! `--json-response` answers POSTs with one JSON body instead of an SSE stream.
//! `--cors-origin ORIGIN` (repeatable, e.g. `http://localhost:8000`) lets a web page served
//! from that origin call the server from a browser: only the origins given are accepted
//! (`EndpointConfig::allowed_origins`), and they get CORS headers (`EndpointConfig::cors`).
//! `--transport sse` serves the legacy HTTP+SSE transport (2024-11-05) at `/sse` (messages
//! POSTed to `/messages`) and Streamable HTTP at `/mcp`, on the same port.
//!
//! The time limits and connection caps on the wire (HTTP and WebSocket) are the library's
//! defaults (`HttpServerOptions`, `WsConfig`); the flags after `--wire-limits` change one each
//! (seconds; 0 turns a timeout off). `--wire-limits off` serves as the servers did before they
//! had limits (no caps, no body or WebSocket deadlines, WebSocket messages up to the session
//! limit, hyper's former fixed 30 s header timeout, which also ran between requests): for
//! measuring what the limits change. `--shards N` serves HTTP with N engines, each owning its
//! share of the sessions (default: one per core).
//!
//! `--redis URL` (e.g. `redis://127.0.0.1:6379/`) makes this process one instance of a
//! server that several processes serve together (`ServerBuilder::cluster` on `RedisStores`):
//! any of them serves any handshake-era session, resumes any SSE stream, and hears the
//! others' resource updates, with no sticky routing in front. Give each process its own
//! `--instance N` (1 or more, default 1); `--redis-prefix` (default `mcp:everything:`) keeps
//! the keys of one deployment apart from another's on a shared Redis. The MRTR
//! `requestState` keys come from Redis too, so a round sealed by one instance opens on any.

const USAGE: &str = "usage: everything [--runtime tokio|async-std|smol] [--transport stdio|http|sse|ws] [--port P] [--host H] [--stateless] [--json-response] [--eras handshake|both|stateless]
                  [--cors-origin ORIGIN]... [--wire-limits default|off] [--max-connections N] [--max-per-ip N] [--header-timeout S] [--keep-alive-timeout S]
                  [--body-deadline S] [--body-min-rate BYTES_PER_S] [--ws-unfinished-timeout S] [--ws-idle-timeout S] [--shards N]
                  [--tls-cert PEM --tls-key PEM [--ca PEM]] [--no-http2]
                  [--auth-jwks URL | --auth-introspect URL [--auth-client-id ID --auth-client-secret S]] [--auth-issuer ISS]
                  [--auth-audience AUD] [--auth-resource URL] [--auth-scope S]... [--auth-tool-scope TOOL=SCOPE]...
                  [--redis URL [--instance N] [--redis-prefix P]]";

/// `--help`: what the server is and its options, on stdout; exit 0.
fn help() -> ! {
    use std::io::Write;
    // (`everything --help | head` closes the pipe early: not worth a panic.)
    let _ = writeln!(
        std::io::stdout(),
        "everything: an MCP server exposing every feature (the conformance suite's fixtures, plus echo,
slow, stream and touch_watched), on stdio by default.

{USAGE}

  --transport http|sse|ws  serve Streamable HTTP at /mcp (sse: also legacy HTTP+SSE at /sse), or
                           WebSocket, on --host (default 127.0.0.1) and --port
  --stateless              HTTP without sessions;  --json-response: one JSON body per POST
  --eras                   which protocol eras are served (default both)
  --cors-origin ORIGIN     HTTP: let pages from ORIGIN (e.g. http://localhost:8000) call from a
                           browser (CORS); repeatable; other origins get 403
  --wire-limits off        no limits on the wire; the other flags change one limit each (seconds)
  --shards N               HTTP: N engines share the sessions (default: one per core)
  --auth-jwks URL          HTTP/WS: require bearer tokens, JWTs checked with the JWKS at URL
  --auth-introspect URL    ... or checked by the RFC 7662 introspection endpoint at URL
  --auth-issuer ISS        the tokens' issuer (iss), named in the protected resource metadata
  --auth-audience AUD      the tokens' audience (default: the resource URL)
  --auth-scope S           a scope every request needs (repeatable)
  --auth-tool-scope T=S    a scope every call of tool T needs (repeatable)
  --tls-cert PEM, --tls-key PEM
                           serve over TLS (https://, wss://) with this certificate chain and key
  --ca PEM                 with --tls-cert: require client certificates signed by this CA (mTLS)
  --no-http2               HTTP/1.1 only (by default HTTP/2 too: ALPN h2 over TLS, h2c otherwise)
  --redis URL              HTTP: one instance of several sharing sessions, events and updates
                           through this Redis; --instance N numbers it (default 1)

Examples:
  everything --transport http --port 8080 &  mcp tools --url http://127.0.0.1:8080/mcp
  everything --transport http --port 8443 --tls-cert cert.pem --tls-key key.pem &
  mcp tools --url https://localhost:8443/mcp --ca ca.pem"
    );
    std::process::exit(0);
}

fn usage(msg: &str) -> ! {
    eprintln!("everything: {msg}\n{USAGE}");
    std::process::exit(2);
}

/// The TLS configuration of `--tls-cert`, `--tls-key` and `--ca`, if TLS was asked for.
fn tls_config(
    cert: Option<String>,
    key: Option<String>,
    client_ca: Option<String>,
) -> Option<mcp_service::tls::TlsServerConfig> {
    let read = |path: &str| {
        std::fs::read(path).unwrap_or_else(|e| usage(&format!("cannot read {path}: {e}")))
    };
    let (cert, key) = match (cert, key) {
        (Some(c), Some(k)) => (c, k),
        (None, None) if client_ca.is_none() => return None,
        (None, None) => usage("--ca needs --tls-cert and --tls-key"),
        _ => usage("--tls-cert and --tls-key go together"),
    };
    let mut tls = mcp_service::tls::TlsServerConfig::from_pem(&read(&cert), &read(&key))
        .unwrap_or_else(|e| usage(&format!("--tls-cert/--tls-key: {}", e.message())));
    if let Some(ca) = client_ca {
        tls = tls
            .client_auth_pem(&read(&ca), true)
            .unwrap_or_else(|e| usage(&format!("--ca {ca}: {}", e.message())));
    }
    Some(tls)
}

fn main() {
    // The crypto provider of TLS (`--tls-cert`).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runtime = "tokio".to_owned();
    let mut transport = "stdio".to_owned();
    let mut host = "127.0.0.1".to_owned();
    let mut port: Option<u16> = None;
    let mut stateless = false;
    let mut json_response = false;
    let mut eras = "both".to_owned();
    let mut cors_origins: Vec<String> = Vec::new();
    let mut limits = WireLimits::default();
    let mut auth = AuthFlags::default();
    let (mut tls_cert, mut tls_key, mut client_ca) = (None, None, None);
    let mut http2 = true;
    let mut redis: Option<String> = None;
    let mut instance = 1u32;
    let mut redis_prefix = "mcp:everything:".to_owned();
    let mut i = 0;
    while i < args.len() {
        let value = || {
            args.get(i + 1)
                .cloned()
                .unwrap_or_else(|| usage(&format!("{} needs a value", args[i])))
        };
        match args[i].as_str() {
            "--stateless" => {
                stateless = true;
                i += 1;
                continue;
            }
            "--json-response" => {
                json_response = true;
                i += 1;
                continue;
            }
            "--no-http2" => {
                http2 = false;
                i += 1;
                continue;
            }
            "--tls-cert" => tls_cert = Some(value()),
            "--tls-key" => tls_key = Some(value()),
            "--ca" => client_ca = Some(value()),
            "--runtime" => runtime = value(),
            "--transport" => transport = value(),
            "--host" => host = value(),
            "--eras" => eras = value(),
            "--cors-origin" => cors_origins.push(value()),
            "--redis" => redis = Some(value()),
            "--redis-prefix" => redis_prefix = value(),
            "--instance" => {
                instance = value()
                    .parse()
                    .ok()
                    .filter(|n| *n >= 1)
                    .unwrap_or_else(|| usage("--instance needs a number, 1 or more"))
            }
            "--port" => {
                port = Some(
                    value()
                        .parse()
                        .unwrap_or_else(|_| usage("--port needs a number")),
                )
            }
            "-h" | "--help" => help(),
            flag if flag.starts_with("--auth-") => auth.set(flag, &value()),
            // (a limit flag without its value is refused by `set` as a wrong value)
            flag if limits.set(flag, args.get(i + 1).map_or("", String::as_str)) => {}
            other => usage(&format!("unknown argument {other:?}")),
        }
        i += 2;
    }
    use mcp_tokio::proto::ProtocolVersion;
    let versions: &[ProtocolVersion] = match eras.as_str() {
        "handshake" => &ProtocolVersion::HANDSHAKE,
        "both" => &ProtocolVersion::ALL,
        "stateless" => &[ProtocolVersion::V2026_07_28],
        other => usage(&format!(
            "unknown --eras {other:?} (handshake, both, stateless)"
        )),
    };
    if auth.is_set() && !matches!(transport.as_str(), "http" | "sse" | "ws") {
        usage("the --auth-* flags apply to --transport http, sse and ws");
    }
    let resource = auth.resource.clone().unwrap_or_else(|| {
        let path = if transport == "ws" { "ws" } else { "mcp" };
        let scheme = if tls_cert.is_some() { "https" } else { "http" };
        format!("{scheme}://{host}:{}/{path}", port.unwrap_or(0))
    });
    let resource_server = auth.resource_server(&resource);
    let tool_scopes = auth.tool_scopes.clone();
    if redis.is_some() && !matches!(transport.as_str(), "http" | "sse") {
        usage("--redis applies to --transport http and sse");
    }
    let cluster = redis.map(|url| {
        let joined = async_io::block_on(async {
            let stores = mcp_service::cluster::RedisStores::connect(
                &url,
                &redis_prefix,
                mcp_service::cluster::StoreLimits::default(),
            )
            .await?;
            let cluster = mcp_service::cluster::Cluster::new(stores, instance);
            let keys = cluster.request_state_keys("everything").await?;
            Ok::<_, mcp_service::Error>((cluster, keys))
        });
        joined.unwrap_or_else(|e| {
            eprintln!("everything: Redis at {url}: {e}");
            std::process::exit(1);
        })
    });
    if cluster.is_some() {
        eprintln!("everything: instance {instance} of a cluster on Redis");
    }
    let server = mcp_examples::everything::server_with(|b| {
        let mut b = b.versions(versions);
        if let Some((cluster, keys)) = cluster {
            b = b.cluster(cluster).request_state_keys(keys);
        }
        if let Some(rs) = resource_server {
            eprintln!("everything: protected resource {resource}");
            b = b.resource_server(rs);
        }
        for (tool, scope) in tool_scopes {
            b = b.tool_scopes(&tool, [scope]);
        }
        b
    });
    let tls = tls_config(tls_cert, tls_key, client_ca);
    if tls.is_some() && transport == "stdio" {
        usage("--tls-cert applies to --transport http, sse and ws");
    }
    match transport.as_str() {
        "stdio" => {
            if stateless || json_response || !cors_origins.is_empty() {
                usage("--stateless, --json-response and --cors-origin apply to --transport http");
            }
        }
        "http" | "sse" => {
            let port =
                port.unwrap_or_else(|| usage(&format!("--transport {transport} needs --port")));
            let options = HttpOptions {
                host,
                port,
                stateless,
                json_response,
                legacy_sse: transport == "sse",
                cors_origins,
                limits: limits.http().http2(http2),
                tls,
            };
            let result = serve_http(server, &runtime, &options);
            if let Err(e) = result {
                eprintln!("everything: {e}");
                std::process::exit(1);
            }
            std::process::exit(0);
        }
        "ws" => {
            let port = port.unwrap_or_else(|| usage("--transport ws needs --port"));
            if !cors_origins.is_empty() {
                usage("--cors-origin applies to --transport http and sse");
            }
            if let Err(e) = serve_ws(server, &runtime, &host, port, &limits, tls) {
                eprintln!("everything: {e}");
                std::process::exit(1);
            }
            std::process::exit(0);
        }
        other => usage(&format!(
            "transport {other:?} is not available yet (stdio, http, sse)"
        )),
    }
    let result = match runtime.as_str() {
        "tokio" => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                rt.block_on(async {
                    mcp_tokio::serve_stdio(mcp_tokio::TokioRuntime::current(), server).await
                })
                .map_err(|e| e.to_string())
            }),
        "async-std" => async_std::task::block_on(mcp_async_std::serve_stdio(
            mcp_async_std::AsyncStdRuntime::new(),
            server,
        ))
        .map_err(|e| e.to_string()),
        "smol" => {
            let rt = mcp_async_std::SmolRuntime::new();
            async_io::block_on(mcp_async_std::serve_stdio(rt, server)).map_err(|e| e.to_string())
        }
        other => usage(&format!("unknown runtime {other:?}")),
    };
    if let Err(e) = result {
        eprintln!("everything: {e}");
        std::process::exit(1);
    }
    // Handlers may have left timers or blocking readers behind: leave promptly.
    std::process::exit(0);
}

/// The `--auth-*` flags: the server as an OAuth resource server.
#[derive(Default)]
struct AuthFlags {
    jwks: Option<String>,
    introspect: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    issuer: Option<String>,
    audience: Option<String>,
    resource: Option<String>,
    scopes: Vec<String>,
    tool_scopes: Vec<(String, String)>,
}

impl AuthFlags {
    fn set(&mut self, flag: &str, value: &str) {
        let v = Some(value.to_owned());
        match flag {
            "--auth-jwks" => self.jwks = v,
            "--auth-introspect" => self.introspect = v,
            "--auth-client-id" => self.client_id = v,
            "--auth-client-secret" => self.client_secret = v,
            "--auth-issuer" => self.issuer = v,
            "--auth-audience" => self.audience = v,
            "--auth-resource" => self.resource = v,
            "--auth-scope" => self.scopes.push(value.to_owned()),
            "--auth-tool-scope" => match value.split_once('=') {
                Some((tool, scope)) => self.tool_scopes.push((tool.to_owned(), scope.to_owned())),
                None => usage("--auth-tool-scope needs TOOL=SCOPE"),
            },
            other => usage(&format!("unknown argument {other:?}")),
        }
    }

    fn is_set(&self) -> bool {
        self.jwks.is_some() || self.introspect.is_some()
    }

    /// The resource server for `resource`, when a validator was asked for. Its fetches (JWKS,
    /// introspection) run on smol's reactor and executor, which serve under any runtime.
    fn resource_server(
        &self,
        resource: &str,
    ) -> Option<mcp_service::resource_server::ResourceServer> {
        use mcp_service::resource_server::{
            ClientAuth, ConnectorFetch, IntrospectionValidator, JwtValidator, ResourceServer,
        };
        let rt = mcp_async_std::SmolRuntime::new();
        let fetch = ConnectorFetch::new(rt, mcp_service::driver::TcpConnector(rt));
        let audience = self.audience.clone().unwrap_or_else(|| resource.to_owned());
        let rs = match (&self.jwks, &self.introspect) {
            (Some(_), Some(_)) => usage("--auth-jwks and --auth-introspect exclude each other"),
            (Some(jwks), None) => {
                let mut v = JwtValidator::new(jwks.clone(), fetch).audience(audience);
                if let Some(iss) = &self.issuer {
                    v = v.issuer(iss.clone());
                }
                ResourceServer::new(resource, v)
            }
            (None, Some(endpoint)) => {
                let client = match (&self.client_id, &self.client_secret) {
                    (Some(id), Some(secret)) => ClientAuth::Basic {
                        client_id: id.clone(),
                        client_secret: secret.clone(),
                    },
                    (None, None) => ClientAuth::None,
                    _ => usage("--auth-client-id and --auth-client-secret go together"),
                };
                let mut v =
                    IntrospectionValidator::new(endpoint.clone(), fetch, client).audience(audience);
                if let Some(iss) = &self.issuer {
                    v = v.issuer(iss.clone());
                }
                ResourceServer::new(resource, v)
            }
            (None, None) => return None,
        };
        let mut rs = rs.unwrap_or_else(|e| usage(&format!("--auth-resource: {e}")));
        if let Some(iss) = &self.issuer {
            rs = rs.authorization_server(iss.clone());
        }
        let tool_scopes: Vec<String> = self.tool_scopes.iter().map(|(_, s)| s.clone()).collect();
        Some(
            rs.required_scopes(self.scopes.clone())
                .scopes_supported(tool_scopes),
        )
    }
}

/// The `--wire-limits` flags: changes to the default time limits and connection caps.
#[derive(Default)]
struct WireLimits {
    off: bool,
    max_connections: Option<usize>,
    max_per_ip: Option<usize>,
    header: Option<Option<Duration>>,
    keep_alive: Option<Option<Duration>>,
    body_deadline: Option<Option<Duration>>,
    body_min_rate: Option<u64>,
    ws_unfinished: Option<Option<Duration>>,
    ws_idle: Option<Option<Duration>>,
    shards: Option<usize>,
}

use std::time::Duration;

impl WireLimits {
    /// Takes `flag value` if it is one of the limits' flags.
    fn set(&mut self, flag: &str, value: &str) -> bool {
        let number = || -> u64 {
            value
                .parse()
                .unwrap_or_else(|_| usage(&format!("{flag} needs a number")))
        };
        let timeout = || Some(Duration::from_secs(number())).filter(|d| !d.is_zero());
        match flag {
            "--wire-limits" => match value {
                "default" => self.off = false,
                "off" => self.off = true,
                other => usage(&format!("unknown --wire-limits {other:?} (default, off)")),
            },
            "--max-connections" => self.max_connections = Some(number() as usize),
            "--max-per-ip" => self.max_per_ip = Some(number() as usize),
            "--header-timeout" => self.header = Some(timeout()),
            "--keep-alive-timeout" => self.keep_alive = Some(timeout()),
            "--body-deadline" => self.body_deadline = Some(timeout()),
            "--body-min-rate" => self.body_min_rate = Some(number()),
            "--ws-unfinished-timeout" => self.ws_unfinished = Some(timeout()),
            "--ws-idle-timeout" => self.ws_idle = Some(timeout()),
            "--shards" => self.shards = Some(number() as usize),
            _ => return false,
        }
        true
    }

    fn connections(&self) -> mcp_service::driver::ConnectionLimits {
        let mut c = if self.off {
            mcp_service::driver::ConnectionLimits::unlimited()
        } else {
            mcp_service::driver::ConnectionLimits::default()
        };
        if let Some(n) = self.max_connections {
            c = c.max_connections(n);
        }
        if let Some(n) = self.max_per_ip {
            c = c.max_per_ip(n);
        }
        c
    }

    fn http(&self) -> mcp_service::hyper_server::HttpServerOptions {
        use mcp_service::hyper_server::{BodyLimits, HttpServerOptions};
        let mut o = HttpServerOptions::default();
        let mut body = BodyLimits::default();
        if self.off {
            let thirty = Some(Duration::from_secs(30));
            o = o
                .header_read_timeout(thirty)
                .keep_alive_timeout(thirty)
                .write_timeout(None);
            body = BodyLimits::unlimited();
        }
        if let Some(t) = self.header {
            o = o.header_read_timeout(t);
        }
        if let Some(n) = self.shards {
            o = o.shards(n);
        }
        if let Some(t) = self.keep_alive {
            o = o.keep_alive_timeout(t);
        }
        if let Some(t) = self.body_deadline {
            body = body.deadline(t);
        }
        if let Some(r) = self.body_min_rate {
            body = body.min_bytes_per_sec(r);
        }
        o.body(body).connections(self.connections())
    }

    fn ws(
        &self,
        config: mcp_service::ws::WsConfig,
        session_max: usize,
    ) -> mcp_service::ws::WsConfig {
        let mut c = config.connections(self.connections());
        if self.off {
            c = c
                .unfinished_message_timeout(None)
                .idle_timeout(None)
                .header_read_timeout(Some(Duration::from_secs(30)))
                .max_message_size(session_max);
        }
        if let Some(t) = self.header {
            c = c.header_read_timeout(t);
        }
        if let Some(t) = self.ws_unfinished {
            c = c.unfinished_message_timeout(t);
        }
        if let Some(t) = self.ws_idle {
            c = c.idle_timeout(t);
        }
        c
    }
}

/// Where and how to serve over HTTP.
struct HttpOptions {
    host: String,
    port: u16,
    stateless: bool,
    json_response: bool,
    /// Also serve the legacy HTTP+SSE transport at `/sse` (`--transport sse`).
    legacy_sse: bool,
    /// The origins whose pages may call from a browser (`--cors-origin`); none: no CORS.
    cors_origins: Vec<String>,
    /// Time limits and connection caps.
    limits: mcp_service::hyper_server::HttpServerOptions,
    /// Serve over TLS (`--tls-cert`, `--tls-key`, `--ca`).
    tls: Option<mcp_service::tls::TlsServerConfig>,
}

/// Serves `server` over Streamable HTTP at `http://HOST:PORT/mcp` on `runtime` (and over
/// legacy HTTP+SSE at `/sse` when asked).
fn serve_http(
    server: mcp_service::Server,
    runtime: &str,
    options: &HttpOptions,
) -> Result<(), String> {
    let (host, port) = (options.host.as_str(), options.port);
    let scheme = if options.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let cannot_listen = |e: std::io::Error| format!("cannot listen on {host}:{port}: {e}");
    let config = |addr: std::net::SocketAddr| {
        let mut config =
            mcp_proto::http::EndpointConfig::new(server.config().clone()).bound_to(addr.ip());
        if options.stateless {
            config = config.stateless(true);
        }
        if options.json_response {
            config = config.response_mode(mcp_proto::http::ResponseMode::Json);
        }
        if !options.cors_origins.is_empty() {
            config = config
                .allowed_origins(mcp_proto::http::AllowList::Only(
                    options.cors_origins.clone(),
                ))
                .cors(Some(mcp_proto::http::Cors::new()));
        }
        if options.legacy_sse {
            let legacy = mcp_proto::http::LegacySse::default();
            eprintln!(
                "everything: serving {scheme}://{addr}{} (legacy SSE, messages to {}) and {scheme}://{addr}/mcp on {runtime}",
                legacy.sse_path, legacy.messages_path
            );
            config = config.legacy_sse(Some(legacy));
        } else {
            eprintln!("everything: serving {scheme}://{addr}/mcp on {runtime}");
        }
        config
    };
    match runtime {
        "tokio" => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                let listener = tokio::net::TcpListener::bind((host, port))
                    .await
                    .map_err(cannot_listen)?;
                let addr = listener.local_addr().map_err(|e| e.to_string())?;
                let config = config(addr);
                let rt = mcp_tokio::TokioRuntime::current();
                let (server, limits) = (server.clone(), options.limits);
                match options.tls.clone() {
                    Some(tls) => {
                        mcp_tokio::serve_http_tls(rt, server, listener, config, limits, tls).await
                    }
                    None => mcp_tokio::serve_http_with(rt, server, listener, config, limits).await,
                }
                .map_err(|e| e.to_string())
            })
        }
        "async-std" | "smol" => {
            let listener = std::net::TcpListener::bind((host, port)).map_err(cannot_listen)?;
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            let config = config(addr);
            let (server, limits) = (server.clone(), options.limits);
            let result = if runtime == "smol" {
                let rt = mcp_async_std::SmolRuntime::new();
                async_io::block_on(async {
                    match options.tls.clone() {
                        Some(tls) => {
                            mcp_async_std::serve_http_tls(rt, server, listener, config, limits, tls)
                                .await
                        }
                        None => {
                            mcp_async_std::serve_http_with(rt, server, listener, config, limits)
                                .await
                        }
                    }
                })
            } else {
                let rt = mcp_async_std::AsyncStdRuntime::new();
                async_std::task::block_on(async {
                    match options.tls.clone() {
                        Some(tls) => {
                            mcp_async_std::serve_http_tls(rt, server, listener, config, limits, tls)
                                .await
                        }
                        None => {
                            mcp_async_std::serve_http_with(rt, server, listener, config, limits)
                                .await
                        }
                    }
                })
            };
            result.map_err(|e| e.to_string())
        }
        other => usage(&format!("unknown runtime {other:?}")),
    }
}

/// Serves `server` over WebSocket at `ws://HOST:PORT/ws` on `runtime` (a transport outside the
/// MCP specification: one JSON-RPC message per text frame, subprotocol `mcp`).
fn serve_ws(
    server: mcp_service::Server,
    runtime: &str,
    host: &str,
    port: u16,
    limits: &WireLimits,
    tls: Option<mcp_service::tls::TlsServerConfig>,
) -> Result<(), String> {
    let listener = std::net::TcpListener::bind((host, port))
        .map_err(|e| format!("cannot listen on {host}:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let scheme = if tls.is_some() { "wss" } else { "ws" };
    eprintln!("everything: serving {scheme}://{addr}/ws");
    let config = limits.ws(
        mcp_service::ws::WsConfig::new().bound_to(addr.ip()),
        server.config().max_message_size,
    );
    match runtime {
        "tokio" => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                listener.set_nonblocking(true).map_err(|e| e.to_string())?;
                let listener =
                    tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
                let rt = mcp_tokio::TokioRuntime::current();
                match tls {
                    Some(tls) => mcp_tokio::serve_ws_tls(rt, server, listener, config, tls).await,
                    None => mcp_tokio::serve_ws_with(rt, server, listener, config).await,
                }
                .map_err(|e| e.to_string())
            })
        }
        "async-std" => {
            let rt = mcp_async_std::AsyncStdRuntime::new();
            async_std::task::block_on(async {
                match tls {
                    Some(tls) => {
                        mcp_async_std::serve_ws_tls(rt, server, listener, config, tls).await
                    }
                    None => mcp_async_std::serve_ws_with(rt, server, listener, config).await,
                }
            })
            .map_err(|e| e.to_string())
        }
        "smol" => {
            let rt = mcp_async_std::SmolRuntime::new();
            async_io::block_on(async {
                match tls {
                    Some(tls) => {
                        mcp_async_std::serve_ws_tls(rt, server, listener, config, tls).await
                    }
                    None => mcp_async_std::serve_ws_with(rt, server, listener, config).await,
                }
            })
            .map_err(|e| e.to_string())
        }
        other => usage(&format!("unknown runtime {other:?}")),
    }
}
