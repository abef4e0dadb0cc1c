//! The unread-output suite: a peer that stops reading. A handler that streams without pause is
//! paced by its connection's output budget (it waits, the server does not buffer), a `ping` is
//! answered as soon as the peer reads again, and over Streamable HTTP a client that reads
//! nothing of its stream delays no other client. Written once, generic over the driver; each
//! driver's `tests/unread.rs` includes it and instantiates the scenarios with
//! [`unread_suite!`].
//!
//! Nothing here is timed but the bounds that turn a hang into a failure.

use std::future::Future;
use std::io::{BufReader, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use futures_util::future::{Either, select};
use futures_util::io::{AsyncBufReadExt, AsyncWriteExt};
use mcp_service::driver::{self, Driver};
use mcp_service::schema::{Content, Tool};
use mcp_service::server::{ToolContext, schema_of};
use mcp_service::{BoxFuture, DEFAULT_OUTPUT_BUDGET, Server};
use serde_json::{Value, json};

/// Instantiates the named scenarios of this suite as `#[test]`s in a module `$module`, each
/// run by `$run(scenario)` (`$run` a function at the crate's root).
#[macro_export]
macro_rules! unread_suite {
    ($module:ident, $run:ident; $($name:ident),* $(,)?) => {
        mod $module {
            $(
                #[test]
                fn $name() {
                    super::$run(super::unread::$name)
                }
            )*
        }
    };
}

const LIMIT: Duration = Duration::from_secs(20);
/// The size of one streamed item.
const ITEM: usize = 1000;

/// `flood`: streams items of [`ITEM`] bytes without pause until cancelled, counting them;
/// `echo`.
fn server(sent: &Arc<AtomicU64>) -> Server {
    let sent = sent.clone();
    Server::builder("unread", "1.0")
        .tool(
            Tool::new("echo", schema_of(json!({"type": "object"}))),
            |args: Value, _cx: ToolContext| async move {
                Ok(args["text"].as_str().unwrap_or("").to_owned())
            },
        )
        .tool(
            Tool::new("flood", schema_of(json!({"type": "object"}))),
            move |_: Value, cx: ToolContext| {
                let sent = sent.clone();
                async move {
                    let item = "x".repeat(ITEM);
                    loop {
                        cx.stream(Content::text(item.clone())).await?;
                        sent.fetch_add(1, Ordering::Relaxed);
                    }
                    #[allow(unreachable_code)]
                    Ok(String::new())
                }
            },
        )
        .build()
}

fn sleep<D: Driver>(rt: &D, d: Duration) -> BoxFuture<()> {
    let micros = u64::try_from(d.as_micros()).unwrap();
    rt.sleep_until(mcp_proto::Instant::from_micros(
        rt.now().as_micros() + micros,
    ))
}

async fn deadline<D: Driver, T>(rt: &D, what: &str, fut: impl Future<Output = T>) -> T {
    match select(std::pin::pin!(fut), sleep(rt, LIMIT)).await {
        Either::Left((out, _)) => out,
        Either::Right(_) => panic!("{what}: nothing within {LIMIT:?}"),
    }
}

/// Waits until `count` stops growing (the same over 300 ms); returns it.
async fn settled<D: Driver>(rt: &D, what: &str, count: &AtomicU64) -> u64 {
    deadline(rt, what, async {
        let mut last = count.load(Ordering::Relaxed);
        loop {
            sleep(rt, Duration::from_millis(300)).await;
            let now = count.load(Ordering::Relaxed);
            if now == last && now > 0 {
                return now;
            }
            last = now;
        }
    })
    .await
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"unread","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const FLOOD: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flood","arguments":{},"_meta":{"progressToken":2}}}"#;

/// A byte-stream peer that stops reading pauses the streaming handler within the output
/// budget (before, the server queued without bound); once it reads again, a `ping` is
/// answered and the handler goes on.
pub async fn an_unread_connection_pauses_its_handler<D: Driver>(rt: D) {
    let sent = Arc::new(AtomicU64::new(0));
    let (client_end, server_end) = mcp_service::memory::duplex(64 * 1024);
    let serve_rt = rt.clone();
    let server = server(&sent);
    rt.spawn(Box::pin(async move {
        let _ = server.serve(serve_rt, server_end).await;
    }));
    let (reader, mut writer) = client_end.into_parts();
    let mut reader = futures_util::io::BufReader::new(reader);
    for line in [INIT, INITIALIZED] {
        writer
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut line = String::new();
    deadline(&rt, "initialize", reader.read_line(&mut line))
        .await
        .unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    writer
        .write_all(format!("{FLOOD}\n").as_bytes())
        .await
        .unwrap();
    let paused = settled(&rt, "the handler pauses while nothing is read", &sent).await;
    assert!(
        paused * ITEM as u64 <= 3 * DEFAULT_OUTPUT_BUDGET as u64,
        "{paused} items of {ITEM} bytes went out to a peer that reads nothing"
    );
    // Reading again: the ping is answered, and the handler went on meanwhile.
    writer
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"ping\",\"method\":\"ping\"}\n")
        .await
        .unwrap();
    deadline(&rt, "ping once reading again", async {
        loop {
            line.clear();
            assert!(reader.read_line(&mut line).await.unwrap() > 0, "EOF");
            if line.contains("\"id\":\"ping\"") {
                break;
            }
        }
    })
    .await;
    assert!(sent.load(Ordering::Relaxed) > paused, "the handler went on");
    writer
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}}\n")
        .await
        .unwrap();
}

/// The resident memory of this process in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// One raw HTTP/1.1 request on its own connection (`Connection: close`); the response read to
/// its end unless `read` is false (then the socket is returned unread).
fn raw_post(port: u16, sid: Option<&str>, body: &str, read: bool) -> (String, std::net::TcpStream) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let session = sid.map_or(String::new(), |sid| {
        format!("mcp-session-id: {sid}\r\nmcp-protocol-version: 2025-11-25\r\n")
    });
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\n{session}connection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    if read {
        s.set_read_timeout(Some(LIMIT)).unwrap();
        BufReader::new(&s).read_to_string(&mut out).unwrap();
    }
    (out, s)
}

/// Over Streamable HTTP, a client that calls a tool streaming without pause and reads nothing
/// of the reply delays no other client, and the server's memory stays bounded (before, the
/// endpoint stopped answering anyone and grew by gigabytes).
#[cfg(all(feature = "http-server", feature = "http-client"))]
pub async fn an_unread_http_stream_does_not_stall_the_others<D: HttpListen>(rt: D) {
    let sent = Arc::new(AtomicU64::new(0));
    let (listener, port) = rt.bind_loopback();
    let server = server(&sent);
    let config = mcp_proto::http::EndpointConfig::new(server.config().clone())
        .bound_to(std::net::Ipv4Addr::LOCALHOST.into());
    rt.spawn(Box::pin({
        let rt = rt.clone();
        async move {
            let _ = driver::serve_http(rt, server, listener, config).await;
        }
    }));
    let before = rss_kib();
    // The flooding client, on a thread of its own with blocking sockets.
    let stop = Arc::new(AtomicBool::new(false));
    let flooder = std::thread::spawn({
        let stop = stop.clone();
        move || {
            let (head, _) = raw_post(port, None, INIT, true);
            let sid = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("mcp-session-id")
                        .then(|| value.trim().to_owned())
                })
                .unwrap_or_else(|| panic!("no session id in {head}"));
            raw_post(port, Some(&sid), INITIALIZED, true);
            let (_, unread) = raw_post(port, Some(&sid), FLOOD, false);
            while !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(unread);
        }
    });
    struct Stop(Arc<AtomicBool>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let _stop = Stop(stop.clone());
    deadline(&rt, "the flood starts", async {
        while sent.load(Ordering::Relaxed) < 100 {
            sleep(&rt, Duration::from_millis(10)).await;
        }
    })
    .await;
    let other = deadline(
        &rt,
        "a new session while another floods",
        driver::connect_http(
            rt.clone(),
            &format!("http://127.0.0.1:{port}/mcp"),
            mcp_service::ClientOptions::default(),
            mcp_service::HttpClientOptions::default(),
        ),
    )
    .await
    .unwrap();
    for i in 0..20 {
        let text = format!("other session {i}");
        let out = deadline(
            &rt,
            "echo while another session floods",
            other
                .call_tool("echo", json!({ "text": text }))
                .into_future(),
        )
        .await
        .unwrap();
        assert_eq!(
            serde_json::to_value(&out).unwrap()["content"][0]["text"],
            text
        );
    }
    sleep(&rt, Duration::from_secs(1)).await;
    let grown = rss_kib().saturating_sub(before);
    assert!(
        grown < 256 * 1024,
        "the server grew by {grown} KiB for a client that reads nothing"
    );
    eprintln!(
        "flooding session: {} items sent; this process grew by {grown} KiB",
        sent.load(Ordering::Relaxed)
    );
    stop.store(true, Ordering::SeqCst);
    flooder.join().unwrap();
    other.close();
}

/// A driver whose listener the HTTP scenario can bind.
#[cfg(all(feature = "http-server", feature = "http-client"))]
pub trait HttpListen: Driver {
    /// A listener on 127.0.0.1 and its port.
    fn bind_loopback(&self) -> (Self::TcpListener, u16);
}
