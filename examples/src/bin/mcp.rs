//! `mcp` — a command-line MCP client. Output is JSON on stdout.
//!
//! ```text
//! mcp tools                    -- SERVER_CMD ARGS...
//! mcp call NAME '{"a":1}'      -- SERVER_CMD ARGS...
//! mcp resources                -- SERVER_CMD ARGS...
//! mcp templates                -- SERVER_CMD ARGS...
//! mcp read URI                 -- SERVER_CMD ARGS...
//! mcp prompts                  -- SERVER_CMD ARGS...
//! mcp prompt NAME '{"k":"v"}'  -- SERVER_CMD ARGS...
//! mcp ping                     -- SERVER_CMD ARGS...
//! ```
//!
//! Instead of `-- SERVER_CMD`, a server reachable over HTTP:
//!
//! ```text
//! mcp tools --url http://127.0.0.1:8080/mcp   # Streamable HTTP, falling back to legacy SSE
//! mcp tools --sse-url http://127.0.0.1:3001/sse  # legacy HTTP+SSE (2024-11-05)
//! mcp tools --url URL --bearer TOKEN          # with `Authorization: Bearer TOKEN`
//! mcp tools --ws-url ws://127.0.0.1:8080/ws   # WebSocket (outside the MCP specification)
//! ```

use std::collections::BTreeMap;

use mcp_service::{ClientOptions, Error, HttpClientOptions, HttpTransport};
use serde_json::{Value, json};

const USAGE: &str = "usage: mcp <tools|call NAME JSON|resources|templates|read URI|prompts|prompt NAME JSON|ping> (-- SERVER_CMD [ARGS...] | --url URL | --sse-url URL | --ws-url URL) [--bearer TOKEN]";

/// Where the server is.
enum Target {
    Command(Vec<String>),
    /// Streamable HTTP with the probe's fallback to legacy SSE.
    Url(String),
    /// Legacy HTTP+SSE.
    SseUrl(String),
    /// WebSocket.
    WsUrl(String),
}

/// The connection: a child process, or an HTTP client and its transport's end.
enum Conn {
    Child(Box<mcp_tokio::ChildClient>),
    Http(
        mcp_service::Client,
        mcp_service::http_client::TransportFinished,
    ),
    Ws(mcp_service::Client),
}

impl std::ops::Deref for Conn {
    type Target = mcp_service::Client;
    fn deref(&self) -> &mcp_service::Client {
        match self {
            Conn::Child(c) => c,
            Conn::Http(c, _) => c,
            Conn::Ws(c) => c,
        }
    }
}

impl Conn {
    async fn open(target: Target, bearer: Option<String>) -> Result<Conn, Error> {
        // Either era (`Discovery::Auto`, the default); legacy HTTP+SSE is the handshake era's.
        let mut options = ClientOptions::new("mcp-cli", env!("CARGO_PKG_VERSION"));
        if matches!(target, Target::SseUrl(_)) {
            options = options.discovery(mcp_proto::session::Discovery::Initialize);
        }
        let (url, kind) = match target {
            Target::Command(server) => {
                let mut cmd = std::process::Command::new(&server[0]);
                cmd.args(&server[1..]);
                return Ok(Conn::Child(Box::new(
                    mcp_tokio::spawn(mcp_tokio::TokioRuntime::current(), cmd, options).await?,
                )));
            }
            Target::Url(url) => (url, HttpTransport::Auto),
            Target::SseUrl(url) => (url, HttpTransport::LegacySse),
            Target::WsUrl(url) => {
                return Ok(Conn::Ws(
                    mcp_tokio::connect_ws(mcp_tokio::TokioRuntime::current(), &url, options)
                        .await?,
                ));
            }
        };
        let mut http = HttpClientOptions::new();
        if let Some(token) = bearer {
            http = http.bearer(token);
        }
        let rt = mcp_tokio::TokioRuntime::current();
        let (stream, finished) = mcp_service::http_client::http_transport(
            rt.clone(),
            mcp_tokio::TcpConnector(rt.clone()),
            &url,
            kind,
            http,
        )?;
        let client = mcp_service::Client::connect(rt, stream, options).await?;
        Ok(Conn::Http(client, finished))
    }

    async fn close(self) {
        match self {
            Conn::Child(child) => {
                let _ = child
                    .shutdown_within(std::time::Duration::from_secs(2))
                    .await;
            }
            Conn::Http(client, finished) => {
                // Closing ends the session (DELETE); wait for it before the process exits.
                client.close();
                drop(client);
                let _ = tokio::time::timeout(std::time::Duration::from_secs(5), finished).await;
            }
            Conn::Ws(client) => client.close(),
        }
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("mcp: {msg}\n{USAGE}");
    std::process::exit(2);
}

fn json_arg(s: Option<&String>) -> Value {
    match s {
        None => json!({}),
        Some(s) => {
            serde_json::from_str(s).unwrap_or_else(|e| fail(&format!("invalid JSON argument: {e}")))
        }
    }
}

async fn run(command: Vec<String>, target: Target, bearer: Option<String>) -> Result<Value, Error> {
    let child = Conn::open(target, bearer).await?;
    let to = |v: &dyn ToJson| v.to_value();
    let out = match command[0].as_str() {
        "tools" => to(&child.list_tools().await?),
        "call" => {
            let name = command
                .get(1)
                .unwrap_or_else(|| fail("call needs a tool name"));
            to(&child.call_tool(name, json_arg(command.get(2))).await?)
        }
        "resources" => to(&child.list_resources().await?),
        "templates" => to(&child.list_resource_templates().await?),
        "read" => {
            let uri = command.get(1).unwrap_or_else(|| fail("read needs a URI"));
            to(&child.read_resource(uri).await?)
        }
        "prompts" => to(&child.list_prompts().await?),
        "prompt" => {
            let name = command
                .get(1)
                .unwrap_or_else(|| fail("prompt needs a name"));
            let args: BTreeMap<String, String> = match json_arg(command.get(2)) {
                Value::Object(m) => m
                    .into_iter()
                    .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), String::from)))
                    .collect(),
                _ => fail("prompt arguments must be a JSON object"),
            };
            to(&child.get_prompt(name, args).await?)
        }
        "ping" => {
            child.ping().await?;
            json!({})
        }
        other => fail(&format!("unknown command {other:?}")),
    };
    child.close().await;
    Ok(out)
}

/// Serialises any result (object-safe helper).
trait ToJson {
    fn to_value(&self) -> Value;
}

impl<T: serde::Serialize> ToJson for T {
    fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let (before, server) = match raw.iter().position(|a| a == "--") {
        Some(split) => (raw[..split].to_vec(), Some(raw[split + 1..].to_vec())),
        None => (raw, None),
    };
    let mut command = Vec::new();
    let mut url = None;
    let mut sse_url = None;
    let mut ws_url = None;
    let mut bearer = None;
    let mut it = before.into_iter();
    while let Some(arg) = it.next() {
        let slot = match arg.as_str() {
            "--url" => &mut url,
            "--sse-url" => &mut sse_url,
            "--ws-url" => &mut ws_url,
            "--bearer" => &mut bearer,
            _ => {
                command.push(arg);
                continue;
            }
        };
        match it.next() {
            Some(v) => *slot = Some(v),
            None => fail(&format!("{arg} needs a value")),
        }
    }
    let target = match (server, url, sse_url, ws_url) {
        (Some(server), None, None, None) if !server.is_empty() => Target::Command(server),
        (None, Some(url), None, None) => Target::Url(url),
        (None, None, Some(url), None) => Target::SseUrl(url),
        (None, None, None, Some(url)) => Target::WsUrl(url),
        (None, None, None, None) => {
            fail("missing `-- SERVER_CMD`, `--url URL`, `--sse-url URL` or `--ws-url URL`")
        }
        _ => fail("give exactly one of `-- SERVER_CMD`, `--url`, `--sse-url`, `--ws-url`"),
    };
    if command.is_empty() {
        fail("missing command");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match rt.block_on(run(command, target, bearer)) {
        Ok(v) => {
            // A closed stdout (`mcp tools | head`) is not an error worth a panic.
            use std::io::Write;
            let _ = writeln!(
                std::io::stdout(),
                "{}",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            );
        }
        Err(e) => {
            println!(
                "{}",
                json!({"error": {"code": e.code(), "message": e.message(), "kind": format!("{:?}", e.kind())}})
            );
            std::process::exit(1);
        }
    }
}
