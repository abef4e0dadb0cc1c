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

use std::collections::BTreeMap;

use mcp_service::{ClientOptions, Error};
use serde_json::{Value, json};

const USAGE: &str = "usage: mcp <tools|call NAME JSON|resources|templates|read URI|prompts|prompt NAME JSON|ping> -- SERVER_CMD [ARGS...]";

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

async fn run(command: Vec<String>, server: Vec<String>) -> Result<Value, Error> {
    let mut cmd = tokio::process::Command::new(&server[0]);
    cmd.args(&server[1..]);
    let child = mcp_tokio::spawn(
        cmd,
        ClientOptions::new("mcp-cli", env!("CARGO_PKG_VERSION")),
    )
    .await?;
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
    let _ = child.shutdown(std::time::Duration::from_secs(2)).await;
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
    let Some(split) = raw.iter().position(|a| a == "--") else {
        fail("missing `-- SERVER_CMD`")
    };
    let command = raw[..split].to_vec();
    let server = raw[split + 1..].to_vec();
    if command.is_empty() || server.is_empty() {
        fail("missing command or server");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match rt.block_on(run(command, server)) {
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
