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
//! mcp tools --ws-url ws://127.0.0.1:8080/ws      (any command, against a WebSocket server)
//! ```

use std::collections::BTreeMap;

use mcp_service::{ClientOptions, Error};
use serde_json::{Value, json};

const USAGE: &str = "usage: mcp <tools|call NAME JSON|resources|templates|read URI|prompts|prompt NAME JSON|ping> (-- SERVER_CMD [ARGS...] | --ws-url ws://HOST:PORT/PATH)";

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

/// Where the server is: a command to spawn (stdio) or a WebSocket URL.
enum Target {
    Command(Vec<String>),
    WebSocket(String),
}

async fn run(command: Vec<String>, target: Target) -> Result<Value, Error> {
    let options = ClientOptions::new("mcp-cli", env!("CARGO_PKG_VERSION"));
    match target {
        Target::Command(server) => {
            let mut cmd = tokio::process::Command::new(&server[0]);
            cmd.args(&server[1..]);
            let child = mcp_tokio::spawn(cmd, options).await?;
            let out = execute(&command, child.client()).await;
            let _ = child.shutdown(std::time::Duration::from_secs(2)).await;
            out
        }
        Target::WebSocket(url) => {
            let client = mcp_tokio::connect_ws(&url, options).await?;
            let out = execute(&command, &client).await;
            client.close();
            out
        }
    }
}

async fn execute(command: &[String], client: &mcp_service::Client) -> Result<Value, Error> {
    let to = |v: &dyn ToJson| v.to_value();
    let out = match command[0].as_str() {
        "tools" => to(&client.list_tools().await?),
        "call" => {
            let name = command
                .get(1)
                .unwrap_or_else(|| fail("call needs a tool name"));
            to(&client.call_tool(name, json_arg(command.get(2))).await?)
        }
        "resources" => to(&client.list_resources().await?),
        "templates" => to(&client.list_resource_templates().await?),
        "read" => {
            let uri = command.get(1).unwrap_or_else(|| fail("read needs a URI"));
            to(&client.read_resource(uri).await?)
        }
        "prompts" => to(&client.list_prompts().await?),
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
            to(&client.get_prompt(name, args).await?)
        }
        "ping" => {
            client.ping().await?;
            json!({})
        }
        other => fail(&format!("unknown command {other:?}")),
    };
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
    let mut raw: Vec<String> = std::env::args().skip(1).collect();
    let split = raw.iter().position(|a| a == "--").unwrap_or(raw.len());
    let ws_url = match raw[..split].iter().position(|a| a == "--ws-url") {
        Some(i) if i + 1 < split => {
            let url = raw.remove(i + 1);
            raw.remove(i);
            Some(url)
        }
        Some(_) => fail("--ws-url needs a URL"),
        None => None,
    };
    let (command, target) = match (raw.iter().position(|a| a == "--"), ws_url) {
        (Some(_), Some(_)) => fail("give either `-- SERVER_CMD` or `--ws-url`, not both"),
        (Some(split), None) => (
            raw[..split].to_vec(),
            Target::Command(raw[split + 1..].to_vec()),
        ),
        (None, Some(url)) => (raw, Target::WebSocket(url)),
        (None, None) => fail("missing `-- SERVER_CMD` or `--ws-url URL`"),
    };
    if command.is_empty() || matches!(&target, Target::Command(s) if s.is_empty()) {
        fail("missing command or server");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match rt.block_on(run(command, target)) {
        Ok(v) => println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default()),
        Err(e) => {
            println!(
                "{}",
                json!({"error": {"code": e.code(), "message": e.message(), "kind": format!("{:?}", e.kind())}})
            );
            std::process::exit(1);
        }
    }
}
