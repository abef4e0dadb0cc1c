//! `serve_http`: a Streamable HTTP round trip over raw HTTP/1.1 requests.

use mcp_proto::http::EndpointConfig;
use mcp_tokio::Server;
use mcp_tokio::service::schema::Tool;
use mcp_tokio::service::server::{ToolContext, schema_of};
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

fn server() -> Server {
    Server::builder("http-test", "1.0")
        .tool(
            Tool::new(
                "echo",
                schema_of(serde_json::json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
            ),
            |args: EchoArgs, _cx: ToolContext| async move { Ok(args.text) },
        )
        .build()
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Decodes a chunked body.
fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    loop {
        let Some((len, rest)) = s.split_once("\r\n") else {
            return out;
        };
        let n = usize::from_str_radix(len.trim(), 16).expect("chunk size");
        if n == 0 {
            return out;
        }
        out.push_str(&rest[..n]);
        s = &rest[n + 2..];
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`), read to EOF.
async fn post(port: u16, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut raw),
    )
    .await
    .expect("reply in time")
    .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a reply head");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Reply {
        status,
        headers,
        body,
    }
}

/// Serves `server` with the endpoint `config` makes of its default on a port of its own.
async fn start(server: &Server, config: impl FnOnce(EndpointConfig) -> EndpointConfig) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = config(
        EndpointConfig::new(server.config().clone()).bound_to(std::net::Ipv4Addr::LOCALHOST.into()),
    );
    tokio::spawn(mcp_tokio::serve_http(
        mcp_tokio::TokioRuntime::current(),
        server.clone(),
        listener,
        config,
    ));
    port
}

/// The headers of a request in session `sid`.
fn in_session(sid: &str) -> [(&'static str, &str); 2] {
    [
        ("MCP-Session-Id", sid),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]
}

/// Opens a session of protocol version 2025-06-18 (`initialize`, then `initialized`): its id.
async fn open_session(port: u16) -> String {
    let init = post(
        port,
        &[],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert_eq!(init.status, 200, "{}", init.body);
    assert!(
        init.body.contains(r#""protocolVersion":"2025-06-18""#),
        "{}",
        init.body
    );
    let sid = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let initialized = post(
        port,
        &in_session(&sid),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(initialized.status, 202);
    sid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_notify_call_and_origin() {
    let server = server();
    let port = start(&server, |c| c).await;
    let sid = open_session(port).await;
    let session = in_session(&sid);

    let call = post(
        port,
        &session,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello over http"}}}"#,
    )
    .await;
    assert_eq!(call.status, 200, "{}", call.body);
    assert!(
        call.body
            .contains(r#""result":{"content":[{"type":"text","text":"hello over http"}]"#),
        "{}",
        call.body
    );
    assert_eq!(server.connection_count(), 1);

    let foreign = post(
        port,
        &[("Origin", "http://evil.example")],
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    )
    .await;
    assert_eq!(foreign.status, 403);

    // Another path is not the endpoint.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(b"GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    assert!(raw.starts_with("HTTP/1.1 404"), "{raw}");

    // DELETE ends the session.
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    stream
        .write_all(
            format!(
                "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\
                 MCP-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).await.unwrap();
    assert!(raw.starts_with("HTTP/1.1 204"), "{raw}");
    for _ in 0..100 {
        if server.connection_count() == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(server.connection_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_replies_leave_whole_with_their_length() {
    let object = || schema_of(serde_json::json!({"type": "object"}));
    let server = Server::builder("http-test", "1.0")
        .tool(
            Tool::new("echo", object()),
            |args: EchoArgs, _cx: ToolContext| async move { Ok(args.text) },
        )
        // Answers in a later turn of the engine than its request's.
        .tool(
            Tool::new("slow", object()),
            |args: EchoArgs, _cx: ToolContext| async move {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                Ok(args.text)
            },
        )
        .build();
    let port = start(&server, |c| {
        c.response_mode(mcp_proto::http::ResponseMode::Json)
    })
    .await;
    let sid = open_session(port).await;
    let session = in_session(&sid);
    let call = |id: u32, tool: &str, text: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"text":"{text}"}}}}}}"#
        )
    };
    let large = "x".repeat(100_000);
    for (id, tool, text) in [
        (2, "echo", "small"),
        (3, "slow", "small"),
        (4, "echo", large.as_str()),
        (5, "slow", large.as_str()),
    ] {
        let r = post(port, &session, &call(id, tool, text)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.header("content-type"), Some("application/json"));
        // One complete body with its length: not chunked, not a stream.
        assert_eq!(r.header("transfer-encoding"), None, "{tool}");
        let length = r.body.len().to_string();
        assert_eq!(r.header("content-length"), Some(length.as_str()), "{tool}");
        let reply: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        assert_eq!(reply["id"], id);
        assert_eq!(
            reply["result"]["content"][0]["text"], text,
            "{tool}: {reply}"
        );
    }

    // A client that goes away while its reply waits in the server: the server goes on.
    let mut gone = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let body = call(6, "slow", "never read");
    gone.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Session-Id: {sid}\r\n\
             MCP-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    drop(gone);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let r = post(port, &session, &call(7, "slow", "still here")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("still here"), "{}", r.body);
}
