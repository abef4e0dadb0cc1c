//! `oauth-probe <server-url>`: connects to an MCP server over Streamable HTTP with OAuth 2.1
//! authorization (`mcp_service::oauth`), then `initialize`, `tools/list` and a call of the first
//! tool. Built to run as the client of the conformance suite's auth scenarios:
//!
//! ```text
//! conformance client --scenario auth/metadata-default --command "oauth-probe"
//! ```
//!
//! Environment: `MCP_CONFORMANCE_CONTEXT` (JSON; `client_id` and `client_secret` make a
//! pre-registered client). Options: `--client-metadata-url <url>` (the Client ID Metadata
//! Document URL; default the conformance suite's), `--redirect-uri <url>`.
//!
//! The authorization server is expected to approve without a user: the authorization request is
//! a plain GET whose redirect carries the code. The HTTP client is a minimal hyper one (HTTP/1.1,
//! no TLS, no redirect following); the real MCP HTTP client transport lives elsewhere.

use std::process::ExitCode;
use std::time::SystemTime;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcp_proto::codec::sse::SseDecoder;
use mcp_service::oauth::{Challenge, Entropy, OAuthClient, OAuthConfig, Step};
use serde_json::{Value, json};

/// Largest reply body read (metadata, tokens, MCP replies).
const MAX_BODY: usize = 4 << 20;
/// The Client ID Metadata Document URL the conformance suite expects.
const CONFORMANCE_CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
const PROTOCOL_VERSION: &str = "2025-11-25";
/// Authorizations per MCP request before giving up.
const MAX_AUTHORIZATIONS: usize = 3;

type HttpClient = Client<HttpConnector, Full<Bytes>>;

struct Probe {
    http: HttpClient,
    oauth: OAuthClient,
    url: String,
    session: Option<String>,
    next_id: u64,
}

fn main() -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("oauth-probe: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("oauth-probe: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let mut url = None;
    let mut cimd = CONFORMANCE_CIMD_URL.to_owned();
    let mut redirect = "http://localhost:3000/callback".to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--client-metadata-url" => {
                cimd = args.next().ok_or("--client-metadata-url needs a value")?
            }
            "--redirect-uri" => redirect = args.next().ok_or("--redirect-uri needs a value")?,
            _ if url.is_none() && !a.starts_with("--") => url = Some(a),
            _ => {
                return Err(format!(
                    "unexpected argument {a:?}; usage: oauth-probe [--client-metadata-url URL] [--redirect-uri URL] <server-url>"
                ));
            }
        }
    }
    let url = url.ok_or(
        "usage: oauth-probe [--client-metadata-url URL] [--redirect-uri URL] <server-url>",
    )?;

    let mut config = OAuthConfig::new("mcp-rs oauth-probe", redirect).client_metadata_url(cimd);
    if let Ok(ctx) = std::env::var("MCP_CONFORMANCE_CONTEXT") {
        let ctx: Value =
            serde_json::from_str(&ctx).map_err(|e| format!("MCP_CONFORMANCE_CONTEXT: {e}"))?;
        if let Some(id) = ctx.get("client_id").and_then(Value::as_str) {
            let secret = ctx
                .get("client_secret")
                .and_then(Value::as_str)
                .map(str::to_owned);
            config = config.pre_registered(id, secret);
        }
    }

    let mut probe = Probe {
        http: Client::builder(TokioExecutor::new()).build_http(),
        oauth: OAuthClient::new(config),
        url,
        session: None,
        next_id: 1,
    };

    let init = probe
        .request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcp-rs-oauth-probe", "version": env!("CARGO_PKG_VERSION")},
            }),
        )
        .await?;
    eprintln!(
        "oauth-probe: initialized with {}",
        init.get("serverInfo").unwrap_or(&Value::Null)
    );
    probe.notify("notifications/initialized").await?;
    let tools = probe.request("tools/list", json!({})).await?;
    let first = tools
        .get("tools")
        .and_then(Value::as_array)
        .and_then(|t| t.first())
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    eprintln!("oauth-probe: tools/list ok");
    if let Some(name) = first {
        let out = probe
            .request("tools/call", json!({"name": name, "arguments": {}}))
            .await?;
        eprintln!("oauth-probe: tools/call {name} -> {out}");
    }
    Ok(())
}

impl Probe {
    /// A JSON-RPC request; returns its `result`.
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let reply = self.post(&body).await?;
        if !reply.status().is_success() {
            return Err(format!("{method}: HTTP {}", reply.status()));
        }
        if let Some(s) = reply
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            self.session = Some(s.to_owned());
        }
        let is_sse = reply
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let messages: Vec<Value> = if is_sse {
            let mut dec = SseDecoder::new(MAX_BODY);
            dec.push(reply.body());
            let mut out = Vec::new();
            while let Some(ev) = dec.next_event() {
                let ev = ev.map_err(|e| format!("{method}: SSE: {e}"))?;
                if !ev.data.is_empty() {
                    out.push(
                        serde_json::from_str(&ev.data)
                            .map_err(|e| format!("{method}: SSE data: {e}"))?,
                    );
                }
            }
            out
        } else {
            vec![serde_json::from_slice(reply.body()).map_err(|e| format!("{method}: {e}"))?]
        };
        let answer = messages
            .into_iter()
            .find(|m| m.get("id") == Some(&json!(id)))
            .ok_or_else(|| format!("{method}: no response in the reply"))?;
        if let Some(err) = answer.get("error") {
            return Err(format!("{method}: error {err}"));
        }
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| format!("{method}: response without result"))
    }

    async fn notify(&mut self, method: &str) -> Result<(), String> {
        let reply = self
            .post(&json!({"jsonrpc": "2.0", "method": method}))
            .await?;
        if reply.status().is_success() {
            Ok(())
        } else {
            Err(format!("{method}: HTTP {}", reply.status()))
        }
    }

    /// POSTs an MCP message with the current access token; on 401 / 403 runs the OAuth flow
    /// and retries, at most [`MAX_AUTHORIZATIONS`] times (the flow itself refuses a step-up
    /// that would ask for nothing new, which ends most loops sooner).
    async fn post(&mut self, body: &Value) -> Result<Response<Vec<u8>>, String> {
        let mut reply = self.post_once(body).await?;
        for _ in 0..MAX_AUTHORIZATIONS {
            if !matches!(
                reply.status(),
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
            ) {
                return Ok(reply);
            }
            let challenge = Challenge::from_response(reply.status(), reply.headers());
            eprintln!(
                "oauth-probe: HTTP {} ({challenge:?}); authorizing",
                reply.status()
            );
            self.authorize(&challenge).await?;
            reply = self.post_once(body).await?;
        }
        if matches!(
            reply.status(),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
        ) {
            return Err(format!(
                "still HTTP {} after {MAX_AUTHORIZATIONS} authorizations",
                reply.status()
            ));
        }
        Ok(reply)
    }

    async fn post_once(&self, body: &Value) -> Result<Response<Vec<u8>>, String> {
        let mut req = Request::post(&self.url)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL_VERSION);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        if let Some(token) = self.oauth.access_token(&self.url, SystemTime::now()) {
            req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let req = req
            .body(body.to_string().into_bytes())
            .map_err(|e| format!("request: {e}"))?;
        self.send(req).await
    }

    async fn authorize(&self, challenge: &Challenge) -> Result<(), String> {
        let mut random = [0u8; 48];
        getrandom::fill(&mut random).map_err(|e| format!("random bytes: {e}"))?;
        let mut flow = self
            .oauth
            .authorize(&self.url, challenge, &Entropy::from_bytes(random))
            .map_err(|e| format!("authorization: {e}"))?;
        loop {
            match flow.step().map_err(|e| format!("authorization: {e}"))? {
                Step::Send(req) | Step::Authorize(req) => {
                    eprintln!("oauth-probe:   {} {}", req.method(), req.uri());
                    let reply = self.send(req).await?;
                    flow.handle_response(SystemTime::now(), reply)
                        .map_err(|e| format!("authorization: {e}"))?;
                }
                Step::Done(_) => return Ok(()),
                other => return Err(format!("authorization: unexpected step {other:?}")),
            }
        }
    }

    async fn send(&self, req: Request<Vec<u8>>) -> Result<Response<Vec<u8>>, String> {
        let uri = req.uri().clone();
        let (parts, body) = req.into_parts();
        let req = Request::from_parts(parts, Full::new(Bytes::from(body)));
        let reply = self
            .http
            .request(req)
            .await
            .map_err(|e| format!("{uri}: {e}"))?;
        let (parts, body) = reply.into_parts();
        let body = Limited::new(body, MAX_BODY)
            .collect()
            .await
            .map_err(|e| format!("{uri}: reading the reply: {e}"))?
            .to_bytes()
            .to_vec();
        Ok(Response::from_parts(parts, body))
    }
}
