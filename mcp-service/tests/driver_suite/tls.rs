//! The TLS and HTTP/2 suite: real handshakes with certificates made at test time (`rcgen`: a
//! CA, a server certificate for `localhost` and 127.0.0.1, a client certificate; and a
//! wrong-name, an expired and an unknown-CA one), over real loopback sockets. Written once,
//! generic over the driver; each driver's `tests/tls.rs` includes it and runs every scenario
//! with [`tls_suite!`].
//!
//! Streamable HTTP over https (HTTP/1.1 and HTTP/2 by ALPN, SSE replies and the standalone
//! stream included), prior-knowledge h2c, legacy HTTP+SSE over https, the Auto probe over
//! https, wss WebSocket, client certificates accepted and refused, the refused certificates
//! with their clear errors, and plain/TLS mismatches failing cleanly.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::future::{Either, select};
use mcp_proto::http::{EndpointConfig, LegacySse};
use mcp_service::driver::{self, Driver};
use mcp_service::hyper_server::HttpServerOptions;
use mcp_service::schema::Tool;
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::tls::{TlsClientConfig, TlsServerConfig};
use mcp_service::ws::WsConfig;
use mcp_service::{BoxFuture, Client, ClientOptions, Error, ErrorKind, HttpClientOptions, Server};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    SanType,
};
use serde_json::{Value, json};

/// Instantiates every scenario of this suite as a `#[test]` in a module `$module`, each run
/// by `$run(scenario)` (`$run` a function at the crate's root).
#[macro_export]
macro_rules! tls_suite {
    ($module:ident, $run:ident) => {
        mod $module {
            $crate::tls_tests!($run;
                https_over_http1,
                https_over_http2,
                h2c_prior_knowledge,
                legacy_sse_over_https,
                auto_probe_over_https,
                wss_websocket,
                client_certificates,
                wrong_name_is_refused,
                expired_is_refused,
                unknown_ca_is_refused,
                plain_and_tls_mismatches_fail_cleanly,
                a_dropped_stateless_h2_call_cancels_its_handler,
            );
        }
    };
}

/// The tests of [`tls_suite!`].
#[macro_export]
macro_rules! tls_tests {
    ($run:ident; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                super::tls::install_provider();
                super::$run(super::tls::$name)
            }
        )*
    };
}

/// The process's rustls crypto provider (the library names none): `ring`.
pub fn install_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Generous bound of each scenario: a hang becomes a failure, never a timed assertion.
const LIMIT: Duration = Duration::from_secs(30);

/// A loopback listener of the driver and its port.
pub trait Listen: Driver {
    /// Binds 127.0.0.1 on a free port.
    fn bind_loopback(&self) -> (<Self as Driver>::TcpListener, u16);
}

/// Certificates made for one scenario.
struct Pki {
    ca_pem: String,
    server_cert: String,
    server_key: String,
    client_cert: String,
    client_key: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> (String, Issuer<'static, KeyPair>) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let cert = params.self_signed(&key).unwrap();
    (cert.pem(), Issuer::new(params, key))
}

fn leaf(
    issuer: &Issuer<'static, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
    edit: impl FnOnce(&mut CertificateParams),
) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut params =
        CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    if usage == ExtendedKeyUsagePurpose::ServerAuth {
        params
            .subject_alt_names
            .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    }
    params.extended_key_usages = vec![usage];
    edit(&mut params);
    let cert = params.signed_by(&key, issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

impl Pki {
    fn new() -> Pki {
        let (ca_pem, issuer) = ca("mcp test CA");
        let (server_cert, server_key) = leaf(
            &issuer,
            &["localhost"],
            ExtendedKeyUsagePurpose::ServerAuth,
            |_| {},
        );
        let (client_cert, client_key) = leaf(
            &issuer,
            &["client"],
            ExtendedKeyUsagePurpose::ClientAuth,
            |_| {},
        );
        Pki {
            ca_pem,
            server_cert,
            server_key,
            client_cert,
            client_key,
            issuer,
        }
    }

    fn server(&self) -> TlsServerConfig {
        TlsServerConfig::from_pem(self.server_cert.as_bytes(), self.server_key.as_bytes()).unwrap()
    }

    fn client(&self) -> TlsClientConfig {
        TlsClientConfig::without_default_roots()
            .add_ca_pem(self.ca_pem.as_bytes())
            .unwrap()
    }
}

/// What the `hang` tool reports: it started, and its future was dropped.
#[derive(Default)]
struct Hang {
    started: AtomicBool,
    dropped: AtomicBool,
}

struct DropFlag(Arc<Hang>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

fn server() -> Server {
    server_with(Arc::default())
}

fn server_with(hang: Arc<Hang>) -> Server {
    Server::builder("tls-test", "1.0")
        .tool(
            Tool::new("hang", schema_of(json!({"type": "object"}))),
            move |_: Value, _cx: ToolContext| {
                let flag = DropFlag(hang.clone());
                async move {
                    flag.0.started.store(true, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                    drop(flag);
                    Ok(mcp_service::schema::CallToolResult::text("never"))
                }
            },
        )
        .tool(
            Tool::new("version", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                let v = cx.http_request().map(|p| format!("{:?}", p.version));
                Ok(mcp_service::schema::CallToolResult::text(
                    v.unwrap_or_else(|| "not HTTP".into()),
                ))
            },
        )
        .tool(
            Tool::new("count", schema_of(json!({"type": "object"}))),
            |args: Value, cx: ToolContext| async move {
                let n = args["n"].as_u64().unwrap_or(3);
                for i in 1..=n {
                    cx.progress(i as f64, Some(n as f64), None).await?;
                }
                Ok(mcp_service::schema::CallToolResult::text(format!(
                    "counted to {n}"
                )))
            },
        )
        .build()
}

fn text(result: &mcp_service::schema::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `fut` within [`LIMIT`], on `rt`'s clock.
async fn bounded<D: Driver, T>(rt: &D, fut: impl std::future::Future<Output = T>) -> T {
    let micros = u64::try_from(LIMIT.as_micros()).unwrap();
    let sleep: BoxFuture<()> = rt.sleep_until(mcp_proto::Instant::from_micros(
        rt.now().as_micros() + micros,
    ));
    match select(std::pin::pin!(fut), sleep).await {
        Either::Left((v, _)) => v,
        Either::Right(_) => panic!("the scenario did not finish within {LIMIT:?}"),
    }
}

/// Serves the test server over HTTPS (or plain HTTP with `tls: None`), returning the port.
fn serve_https<D: Listen>(
    rt: &D,
    tls: Option<TlsServerConfig>,
    options: HttpServerOptions,
    legacy: bool,
) -> u16 {
    let (listener, port) = rt.bind_loopback();
    let s = server();
    let mut config = EndpointConfig::new(s.config().clone());
    if legacy {
        config = config.legacy_sse(Some(LegacySse::default()));
    }
    let serve: BoxFuture<()> = match tls {
        Some(tls) => Box::pin({
            let rt = rt.clone();
            async move {
                let _ = driver::serve_http_tls(rt, s, listener, config, options, tls).await;
            }
        }),
        None => Box::pin({
            let rt = rt.clone();
            async move {
                let _ = driver::serve_http_with(rt, s, listener, config, options).await;
            }
        }),
    };
    rt.spawn(serve);
    port
}

async fn check_calls(client: &Client, version: &str) {
    let v = client.call_tool("version", json!({})).await.unwrap();
    assert_eq!(text(&v), version);
    // A reply streamed as SSE (progress notifications before the result).
    let c = client.call_tool("count", json!({"n": 3})).await.unwrap();
    assert_eq!(text(&c), "counted to 3");
    // Concurrent calls (several streams on one HTTP/2 connection, or several connections).
    let calls = (0..4).map(|_| async { client.call_tool("count", json!({"n": 2})).await });
    for r in futures_util::future::join_all(calls).await {
        assert_eq!(text(&r.unwrap()), "counted to 2");
    }
}

async fn connect_https<D: Driver>(
    rt: &D,
    url: &str,
    http: HttpClientOptions,
) -> Result<Client, Error> {
    driver::connect_http(rt.clone(), url, ClientOptions::default(), http).await
}

/// Streamable HTTP over https, HTTP/1.1 only (the client offers no `h2`).
pub async fn https_over_http1<D: Listen>(rt: D) {
    let pki = Pki::new();
    let port = serve_https(&rt, Some(pki.server()), HttpServerOptions::default(), false);
    bounded(&rt, async {
        let http = HttpClientOptions::new().tls(pki.client()).http2(false);
        let url = format!("https://localhost:{port}/mcp");
        let client = connect_https(&rt, &url, http).await.unwrap();
        check_calls(&client, "HTTP/1.1").await;
        assert_eq!(client.list_tools().await.unwrap().len(), 3);
        client.shutdown().await;
        // An IP address is checked against the certificate's IP names.
        let http = HttpClientOptions::new().tls(pki.client()).http2(false);
        let url = format!("https://127.0.0.1:{port}/mcp");
        let client = connect_https(&rt, &url, http).await.unwrap();
        check_calls(&client, "HTTP/1.1").await;
        client.shutdown().await;
    })
    .await;
}

/// Streamable HTTP over https with `h2` chosen by ALPN; and a server serving HTTP/1.1 only
/// to the same client (which then speaks HTTP/1.1).
pub async fn https_over_http2<D: Listen>(rt: D) {
    let pki = Pki::new();
    let port = serve_https(&rt, Some(pki.server()), HttpServerOptions::default(), false);
    let h1_port = serve_https(
        &rt,
        Some(pki.server()),
        HttpServerOptions::default().http2(false),
        false,
    );
    bounded(&rt, async {
        let url = format!("https://localhost:{port}/mcp");
        let client = connect_https(&rt, &url, HttpClientOptions::new().tls(pki.client()))
            .await
            .unwrap();
        check_calls(&client, "HTTP/2.0").await;
        client.shutdown().await;
        let url = format!("https://localhost:{h1_port}/mcp");
        let client = connect_https(&rt, &url, HttpClientOptions::new().tls(pki.client()))
            .await
            .unwrap();
        check_calls(&client, "HTTP/1.1").await;
        client.shutdown().await;
    })
    .await;
}

/// Prior-knowledge HTTP/2 on plain TCP, beside HTTP/1.1 on the same listener.
pub async fn h2c_prior_knowledge<D: Listen>(rt: D) {
    let port = serve_https(&rt, None, HttpServerOptions::default(), false);
    bounded(&rt, async {
        let url = format!("http://127.0.0.1:{port}/mcp");
        let h2c = HttpClientOptions::new().http2_prior_knowledge(true);
        let client = connect_https(&rt, &url, h2c).await.unwrap();
        check_calls(&client, "HTTP/2.0").await;
        client.shutdown().await;
        let client = connect_https(&rt, &url, HttpClientOptions::new())
            .await
            .unwrap();
        check_calls(&client, "HTTP/1.1").await;
        client.shutdown().await;
    })
    .await;
}

/// The legacy HTTP+SSE transport over https (the endpoint event's URL resolved against the
/// https SSE URL), on HTTP/1.1 and HTTP/2.
pub async fn legacy_sse_over_https<D: Listen>(rt: D) {
    let pki = Pki::new();
    let port = serve_https(&rt, Some(pki.server()), HttpServerOptions::default(), true);
    bounded(&rt, async {
        let url = format!("https://localhost:{port}/sse");
        for h2 in [false, true] {
            let http = HttpClientOptions::new().tls(pki.client()).http2(h2);
            let client = driver::connect_sse(rt.clone(), &url, ClientOptions::default(), http)
                .await
                .unwrap();
            let c = client.call_tool("count", json!({"n": 2})).await.unwrap();
            assert_eq!(text(&c), "counted to 2");
            let v = client.call_tool("version", json!({})).await.unwrap();
            assert_eq!(text(&v), if h2 { "HTTP/2.0" } else { "HTTP/1.1" });
            client.shutdown().await;
        }
    })
    .await;
}

/// The backwards-compatible probe over https: Streamable HTTP where `initialize` is
/// accepted, legacy SSE where the Streamable endpoint is not there.
pub async fn auto_probe_over_https<D: Listen>(rt: D) {
    let pki = Pki::new();
    let port = serve_https(&rt, Some(pki.server()), HttpServerOptions::default(), true);
    bounded(&rt, async {
        for path in ["/mcp", "/sse"] {
            let url = format!("https://localhost:{port}{path}");
            let http = HttpClientOptions::new().tls(pki.client());
            let client =
                driver::connect_http_auto(rt.clone(), &url, ClientOptions::default(), http)
                    .await
                    .unwrap();
            let c = client.call_tool("count", json!({"n": 2})).await.unwrap();
            assert_eq!(text(&c), "counted to 2", "{path}");
            client.shutdown().await;
        }
    })
    .await;
}

/// MCP over wss: the WebSocket upgrade over TLS; a plain ws client to it fails cleanly.
pub async fn wss_websocket<D: Listen>(rt: D) {
    let pki = Pki::new();
    let (listener, port) = rt.bind_loopback();
    let config = WsConfig::new().bound_to("127.0.0.1".parse().unwrap());
    rt.spawn(Box::pin({
        let (rt, tls) = (rt.clone(), pki.server());
        async move {
            let _ = driver::serve_ws_tls(rt, server(), listener, config, tls).await;
        }
    }));
    bounded(&rt, async {
        let url = format!("wss://localhost:{port}/ws");
        let client =
            driver::connect_ws_tls(rt.clone(), &url, ClientOptions::default(), &pki.client())
                .await
                .unwrap();
        let c = client.call_tool("count", json!({"n": 2})).await.unwrap();
        assert_eq!(text(&c), "counted to 2");
        // Handlers over WebSocket see the upgrade request's head.
        let v = client.call_tool("version", json!({})).await.unwrap();
        assert_eq!(text(&v), "HTTP/1.1");
        client.shutdown().await;
        // The default roots do not know the test CA.
        let e = driver::connect_ws(rt.clone(), &url, ClientOptions::default())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
        assert!(e.message().contains("unknown authority"), "{e}");
        let plain = format!("ws://localhost:{port}/ws");
        let e = driver::connect_ws(rt.clone(), &plain, ClientOptions::default())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
    })
    .await;
}

/// A server requiring client certificates: a client presenting one its CA signed is served,
/// one without a certificate and one with a certificate of another CA are refused; a server
/// asking optionally serves a client without one.
pub async fn client_certificates<D: Listen>(rt: D) {
    let pki = Pki::new();
    let required = pki
        .server()
        .client_auth_pem(pki.ca_pem.as_bytes(), true)
        .unwrap();
    let port = serve_https(&rt, Some(required), HttpServerOptions::default(), false);
    let optional = pki
        .server()
        .client_auth_pem(pki.ca_pem.as_bytes(), false)
        .unwrap();
    let optional_port = serve_https(&rt, Some(optional), HttpServerOptions::default(), false);
    let (_, other_ca) = ca("another CA");
    let (other_cert, other_key) = leaf(
        &other_ca,
        &["client"],
        ExtendedKeyUsagePurpose::ClientAuth,
        |_| {},
    );
    bounded(&rt, async {
        let url = format!("https://localhost:{port}/mcp");
        for h2 in [false, true] {
            let tls = pki
                .client()
                .client_certificate_pem(pki.client_cert.as_bytes(), pki.client_key.as_bytes())
                .unwrap();
            let http = HttpClientOptions::new().tls(tls).http2(h2);
            let client = connect_https(&rt, &url, http).await.unwrap();
            check_calls(&client, if h2 { "HTTP/2.0" } else { "HTTP/1.1" }).await;
            client.shutdown().await;
        }
        for h2 in [false, true] {
            let anonymous = HttpClientOptions::new().tls(pki.client()).http2(h2);
            let e = connect_https(&rt, &url, anonymous).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
            assert!(
                e.message()
                    .contains("the server requires a client certificate"),
                "{e}"
            );
        }
        let foreign = pki
            .client()
            .client_certificate_pem(other_cert.as_bytes(), other_key.as_bytes())
            .unwrap();
        let e = connect_https(&rt, &url, HttpClientOptions::new().tls(foreign))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
        assert!(
            e.message()
                .contains("the server does not accept the client certificate"),
            "{e}"
        );
        let url = format!("https://localhost:{optional_port}/mcp");
        let client = connect_https(&rt, &url, HttpClientOptions::new().tls(pki.client()))
            .await
            .unwrap();
        check_calls(&client, "HTTP/2.0").await;
        client.shutdown().await;
    })
    .await;
}

/// Connects to a server with `cert`/`key` and returns the refusal.
async fn refused<D: Listen>(rt: &D, pki: &Pki, cert: &str, key: &str) -> Error {
    let tls = TlsServerConfig::from_pem(cert.as_bytes(), key.as_bytes()).unwrap();
    let port = serve_https(rt, Some(tls), HttpServerOptions::default(), false);
    let url = format!("https://localhost:{port}/mcp");
    let e = bounded(
        rt,
        connect_https(rt, &url, HttpClientOptions::new().tls(pki.client())),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
    e
}

/// A certificate for another name fails the connection, saying so.
pub async fn wrong_name_is_refused<D: Listen>(rt: D) {
    let pki = Pki::new();
    let (cert, key) = leaf(
        &pki.issuer,
        &["elsewhere.example"],
        ExtendedKeyUsagePurpose::ClientAuth,
        |p| p.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth],
    );
    let e = refused(&rt, &pki, &cert, &key).await;
    assert!(
        e.message().contains("certificate not valid for name"),
        "{e}"
    );
    assert!(e.message().contains("localhost"), "{e}");
}

/// An expired certificate fails the connection, saying so.
pub async fn expired_is_refused<D: Listen>(rt: D) {
    let pki = Pki::new();
    let (cert, key) = leaf(
        &pki.issuer,
        &["localhost"],
        ExtendedKeyUsagePurpose::ServerAuth,
        |p| {
            p.not_before = rcgen::date_time_ymd(2020, 1, 1);
            p.not_after = rcgen::date_time_ymd(2021, 1, 1);
        },
    );
    let e = refused(&rt, &pki, &cert, &key).await;
    assert!(e.message().contains("certificate expired"), "{e}");
}

/// A certificate from a CA the client does not trust fails the connection, saying so.
pub async fn unknown_ca_is_refused<D: Listen>(rt: D) {
    let pki = Pki::new();
    let (_, other) = ca("untrusted CA");
    let (cert, key) = leaf(
        &other,
        &["localhost"],
        ExtendedKeyUsagePurpose::ServerAuth,
        |_| {},
    );
    let e = refused(&rt, &pki, &cert, &key).await;
    assert!(e.message().contains("unknown authority"), "{e}");
}

/// A plain-HTTP client to a TLS port and a TLS client to a plain port fail with a transport
/// error, neither hanging.
pub async fn plain_and_tls_mismatches_fail_cleanly<D: Listen>(rt: D) {
    let pki = Pki::new();
    let tls_port = serve_https(&rt, Some(pki.server()), HttpServerOptions::default(), false);
    let plain_port = serve_https(&rt, None, HttpServerOptions::default(), false);
    bounded(&rt, async {
        let url = format!("http://localhost:{tls_port}/mcp");
        let e = connect_https(&rt, &url, HttpClientOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
        assert!(e.message().contains("TLS"), "{e}");
        let url = format!("https://localhost:{plain_port}/mcp");
        let e = connect_https(&rt, &url, HttpClientOptions::new().tls(pki.client()))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TransportError, "{e}");
        assert!(e.message().contains("TLS"), "{e}");
    })
    .await;
}

/// Waits (on `rt`'s clock) until `cond` holds.
async fn until<D: Driver>(rt: &D, cond: impl Fn() -> bool) {
    while !cond() {
        rt.sleep_until(mcp_proto::Instant::from_micros(
            rt.now().as_micros() + 5_000,
        ))
        .await;
    }
}

/// Over HTTP/2 a stateless-era call given up resets its stream (the connection, shared by
/// every call, stays): the server drops the handler, and the next call is answered.
pub async fn a_dropped_stateless_h2_call_cancels_its_handler<D: Listen>(rt: D) {
    let hang = Arc::new(Hang::default());
    let (listener, port) = rt.bind_loopback();
    let s = server_with(hang.clone());
    let config = EndpointConfig::new(s.config().clone());
    rt.spawn(Box::pin({
        let rt = rt.clone();
        async move {
            let _ = driver::serve_http(rt, s, listener, config).await;
        }
    }));
    bounded(&rt, async {
        let url = format!("http://127.0.0.1:{port}/mcp");
        let client = driver::connect_http(
            rt.clone(),
            &url,
            ClientOptions::default().discovery(mcp_proto::session::Discovery::Discover),
            HttpClientOptions::new().http2_prior_knowledge(true),
        )
        .await
        .unwrap();
        let hanging = Box::pin(async { client.call_tool("hang", json!({})).await });
        let started = std::pin::pin!(until(&rt, || hang.started.load(Ordering::SeqCst)));
        match select(hanging, started).await {
            Either::Right(((), hanging)) => drop(hanging),
            Either::Left((out, _)) => panic!("the hanging call ended: {out:?}"),
        }
        until(&rt, || hang.dropped.load(Ordering::SeqCst)).await;
        let v = client.call_tool("version", json!({})).await.unwrap();
        assert_eq!(text(&v), "HTTP/2.0");
    })
    .await;
}
