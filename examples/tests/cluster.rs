//! The deployment test of a clustered server: a real `redis-server`, two `everything`
//! processes sharing it (`--redis URL --instance N`), and a round-robin TCP proxy in front of
//! them (written here: each connection goes to the next instance, so one client's requests
//! land on both). Our client walks every feature through the proxy; its SSE streams resume
//! after the proxy drops every connection; a resource update made on whichever instance
//! serves the call reaches the client's stream on the other; and when one instance is killed
//! mid-call, only what was in flight on it fails, with a clear error, and the session goes on
//! on the other.
//!
//! Needs `redis-server` (Debian's package); skipped without it unless `MCP_REQUIRE_REDIS=1`.
//! The official TypeScript SDK client walks the same deployment in `interop/run.sh`.

#[path = "../../mcp-service/tests/support/cluster.rs"]
mod cluster_support;

use std::net::TcpListener as StdListener;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use mcp_examples::walk::{options, walk};
use mcp_proto::session::Discovery;
use mcp_service::Client;
use mcp_tokio::{HttpClientOptions, TokioRuntime};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// One `everything` instance, killed on drop.
struct Instance {
    child: Child,
    port: u16,
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

async fn start(redis: &str, prefix: &str, instance: u32) -> Instance {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_everything"))
        .args(["--transport", "http", "--port", &port.to_string()])
        .args(["--redis", redis, "--redis-prefix", prefix])
        .args(["--instance", &instance.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("everything starts");
    let instance_ = Instance { child, port };
    for _ in 0..500 {
        if TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return instance_;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("everything --instance {instance} did not listen on {port}");
}

/// The round-robin proxy: each accepted connection is piped to the next backend that
/// accepts one. [`Proxy::drop_all`] cuts every open connection.
#[derive(Clone)]
struct Proxy {
    port: u16,
    open: Arc<Mutex<Vec<AbortHandle>>>,
    /// Connections piped to each backend.
    served: Arc<Vec<AtomicUsize>>,
    /// The backend of the last request that called the `slow` tool (seen in its bytes).
    slow_on: Arc<AtomicUsize>,
}

impl Proxy {
    async fn start(backends: Vec<u16>) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Proxy {
            port: listener.local_addr().unwrap().port(),
            open: Arc::default(),
            served: Arc::new(backends.iter().map(|_| AtomicUsize::new(0)).collect()),
            slow_on: Arc::new(AtomicUsize::new(usize::MAX)),
        };
        let p = proxy.clone();
        tokio::spawn(async move {
            let mut turn = 0usize;
            while let Ok((client, _)) = listener.accept().await {
                let _ = client.set_nodelay(true);
                let mut upstream = None;
                for _ in 0..backends.len() {
                    let i = turn % backends.len();
                    turn += 1;
                    if let Ok(s) = TcpStream::connect(("127.0.0.1", backends[i])).await {
                        p.served[i].fetch_add(1, Ordering::Relaxed);
                        upstream = Some((i, s));
                        break;
                    }
                }
                let Some((backend, upstream)) = upstream else {
                    continue; // every backend is down: the client sees its connection close
                };
                let _ = upstream.set_nodelay(true);
                let slow_on = p.slow_on.clone();
                let task = tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let (mut from_client, mut to_client) = client.into_split();
                    let (mut from_server, mut to_server) = upstream.into_split();
                    let up = async {
                        let mut buf = vec![0u8; 64 * 1024];
                        loop {
                            let n = match from_client.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            let chunk = &buf[..n];
                            if chunk.windows(13).any(|w| w == br#""name":"slow""#) {
                                slow_on.store(backend, Ordering::SeqCst);
                            }
                            if to_server.write_all(chunk).await.is_err() {
                                break;
                            }
                        }
                        let _ = to_server.shutdown().await;
                    };
                    let down = async {
                        let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
                        let _ = to_client.shutdown().await;
                    };
                    tokio::join!(up, down);
                });
                let mut open = p.open.lock().unwrap();
                open.retain(|h| !h.is_finished());
                open.push(task.abort_handle());
            }
        });
        proxy
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn drop_all(&self) {
        for h in self.open.lock().unwrap().drain(..) {
            h.abort();
        }
    }

    fn served(&self) -> Vec<usize> {
        self.served
            .iter()
            .map(|n| n.load(Ordering::Relaxed))
            .collect()
    }
}

async fn connect(proxy: &Proxy, discovery: Discovery) -> Client {
    mcp_tokio::connect_http(
        TokioRuntime::current(),
        &proxy.url(),
        options().discovery(discovery),
        HttpClientOptions::new(),
    )
    .await
    .expect("connects through the proxy")
}

/// Calls `touch_watched` (on whichever instance the connection reaches) until an update
/// arrives, at most `touches` times; how many it took.
async fn touch_until_updated(
    client: &Client,
    updates: &mut (
             impl futures_util::Stream<Item = mcp_service::schema::ResourceUpdatedNotificationParams>
             + Unpin
         ),
    touches: usize,
    what: &str,
) -> usize {
    for n in 1..=touches {
        let r = client
            .call_tool("touch_watched", json!({}))
            .await
            .unwrap_or_else(|e| panic!("{what}: touch_watched: {e}"));
        assert_ne!(r.is_error, Some(true), "{what}: {r:?}");
        if let Ok(got) = tokio::time::timeout(Duration::from_secs(3), updates.next()).await {
            assert_eq!(
                got.expect("the update stream goes on").uri,
                "test://watched-resource"
            );
            return n;
        }
    }
    panic!("{what}: no update after {touches} touches");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_redis_behind_a_round_robin_proxy() {
    let Some(redis) = cluster_support::redis_server() else {
        return;
    };
    let prefix = format!("deploy-{:x}:", std::process::id());
    let a = start(&redis.url, &prefix, 1).await;
    let b = start(&redis.url, &prefix, 2).await;
    let proxy = Proxy::start(vec![a.port, b.port]).await;

    // Both eras walk every feature (tools with progress, sampling, elicitation, roots,
    // resources, subscriptions, prompts, completion, logging; in the stateless era the
    // multi-round MRTR tools too, their requestState sealed by one instance and opened by
    // the other), each connection on the next instance.
    let old = connect(&proxy, Discovery::Initialize).await;
    assert_eq!(old.protocol_version().as_str(), "2025-11-25");
    walk(&old)
        .await
        .expect("the handshake era walks across two instances");
    let new = connect(&proxy, Discovery::Auto).await;
    assert_eq!(new.protocol_version().as_str(), "2026-07-28");
    walk(&new)
        .await
        .expect("the stateless era walks across two instances");
    let served = proxy.served();
    assert!(
        served.iter().all(|n| *n > 1),
        "both instances served: {served:?}"
    );

    // The proxy drops every connection: the handshake-era client resumes its standalone
    // stream (with `Last-Event-ID`, on whichever instance its new connection reaches), and the
    // update of the first touch after each drop, made on either instance, reaches it.
    let mut updates = old.subscribe("test://watched-resource").await.unwrap();
    for round in 0..4 {
        proxy.drop_all();
        // (Its pool sees the closed connections before the next request is sent.)
        tokio::time::sleep(Duration::from_millis(300)).await;
        let what = format!("handshake era, round {round}");
        assert_eq!(touch_until_updated(&old, &mut updates, 1, &what).await, 1);
    }
    // The stateless client's listen stream is opened again too (what is published while it
    // is away is not kept, in that era: a few touches may pass before it is back).
    let mut updates = new.subscribe("test://watched-resource").await.unwrap();
    for round in 0..2 {
        proxy.drop_all();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let what = format!("stateless era, round {round}");
        touch_until_updated(&new, &mut updates, 10, &what).await;
    }

    // The instance serving a slow call dies during it: that call fails, with a clear error
    // (not a hang); the session goes on on the other instance.
    let slow = {
        let client = old.clone();
        tokio::spawn(async move {
            client
                .call_tool("slow", json!({"steps": 20, "delay_ms": 50}))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (dead, alive) = match proxy.slow_on.load(Ordering::SeqCst) {
        0 => (a, b),
        1 => (b, a),
        other => panic!("the slow call reached no instance ({other})"),
    };
    drop(dead);
    let e = tokio::time::timeout(Duration::from_secs(60), slow)
        .await
        .expect("the call in flight on the dead instance ends")
        .unwrap()
        .expect_err("the call in flight on the dead instance fails");
    assert_eq!(e.kind(), mcp_service::ErrorKind::TransportError, "{e}");
    assert!(e.message().contains("SSE stream broke"), "{e}");
    for client in [&old, &new] {
        let mut failures = Vec::new();
        let r = loop {
            match client.call_tool("echo", json!({"text": "after"})).await {
                Ok(r) => break r,
                // A pooled connection that died with instance 1 may fail one request.
                Err(e) if failures.is_empty() => failures.push(e),
                Err(e) => panic!("no service without instance 1: {failures:?} then {e}"),
            }
        };
        assert_eq!(r.content[0].as_text(), Some("after"), "{failures:?}");
    }
    drop(alive);
}

/// A proxy that sends each HTTP request (not each connection) to the next backend, on a
/// fresh connection: the rounds of one MRTR call land on alternate instances.
async fn per_request_proxy(backends: Vec<u16>) -> u16 {
    use http_body_util::BodyExt;
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let turn = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (backends, turn) = (backends.clone(), turn.clone());
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let backend = backends[turn.fetch_add(1, Ordering::Relaxed) % backends.len()];
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = body.collect().await?.to_bytes();
                        let up = TcpStream::connect(("127.0.0.1", backend)).await.unwrap();
                        let (mut sender, conn) =
                            hyper::client::conn::http1::handshake(TokioIo::new(up))
                                .await
                                .unwrap();
                        tokio::spawn(conn);
                        let req =
                            hyper::Request::from_parts(parts, http_body_util::Full::new(body));
                        sender.send_request(req).await
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    port
}

/// Two in-process instances of `everything` on one memory store, `shared_keys` deciding
/// whether their MRTR keys come from the cluster; a client through the per-request proxy.
async fn mrtr_pair(shared_keys: bool) -> Client {
    use mcp_service::cluster::{Cluster, MemoryStores, StoreLimits};
    let stores = MemoryStores::new(StoreLimits::default(), TokioRuntime::current());
    let mut ports = Vec::new();
    for instance in [1, 2] {
        let cluster = Cluster::new(stores.clone(), instance);
        let keys = cluster.request_state_keys("everything").await.unwrap();
        let server = mcp_examples::everything::server_with(move |b| {
            let b = b.cluster(cluster);
            if shared_keys {
                b.request_state_keys(keys)
            } else {
                b
            }
        });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        ports.push(listener.local_addr().unwrap().port());
        let config = mcp_proto::http::EndpointConfig::new(server.config().clone())
            .bound_to(std::net::Ipv4Addr::LOCALHOST.into());
        tokio::spawn(mcp_tokio::serve_http_with(
            TokioRuntime::current(),
            server,
            listener,
            config,
            Default::default(),
        ));
    }
    let url = format!("http://127.0.0.1:{}/mcp", per_request_proxy(ports).await);
    mcp_tokio::connect_http(
        TokioRuntime::current(),
        &url,
        options(),
        HttpClientOptions::new(),
    )
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mrtr_round_sealed_by_one_instance_opens_on_the_other() {
    // Three requests (the call, then two retries with the answers and the requestState), on
    // alternate instances: with the cluster's keys, every instance opens every round.
    let client = mrtr_pair(true).await;
    assert_eq!(client.protocol_version().as_str(), "2026-07-28");
    let r = client
        .call_tool("test_input_required_result_multi_round", json!({}))
        .await
        .expect("the rounds open on either instance");
    assert_eq!(r.is_error, None, "{r:?}");

    // Each instance with a key of its own refuses the other's rounds.
    let client = mrtr_pair(false).await;
    let refused = client
        .call_tool("test_input_required_result_multi_round", json!({}))
        .await;
    assert!(
        refused.is_err() || refused.as_ref().is_ok_and(|r| r.is_error == Some(true)),
        "{refused:?}"
    );
}
