//! One HTTP/1.1 exchange with a test server, for the HTTP driver tests
//! (`tests/http_driver.rs`, `tests/http_cors.rs`).

#![allow(dead_code)]

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Sends one request on a fresh HTTP/1.1 connection and returns the response with its body
/// still streaming.
pub async fn send(port: u16, req: Request<Full<Bytes>>) -> Response<Incoming> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    sender.send_request(req).await.unwrap()
}

/// The whole body as text, read within 10 s.
pub async fn body_text(resp: Response<Incoming>) -> String {
    let bytes = tokio::time::timeout(Duration::from_secs(10), resp.into_body().collect())
        .await
        .expect("body in time")
        .unwrap()
        .to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A POST of `body` to `/mcp` on `port`, accepting JSON and SSE, in session `sid` (at
/// protocol `version`) when given.
pub fn post_mcp(
    port: u16,
    sid: Option<&str>,
    version: &str,
    body: impl Into<Bytes>,
) -> Request<Full<Bytes>> {
    let mut b = Request::post("/mcp")
        .header("host", format!("127.0.0.1:{port}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(sid) = sid {
        b = b
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", version);
    }
    b.body(Full::new(body.into())).unwrap()
}
