//! Options, an explicit crate path, raw identifiers, `#[args]`, `#[context]`, serde attributes
//! on parameters, and every kind of result.
use std::sync::Arc;

use mcp_tokio::service::schema::{CallToolResult, GetPromptResult, PromptMessage};
use mcp_tokio::service::server::{HandlerContext, Json, ToolContext};

#[derive(serde::Serialize, mcp_tokio::service::schemars::JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct Found {
    hits: Vec<String>,
}
use mcp_tokio::{Server, prompt, router, tool};

type Ctx = ToolContext;

#[derive(serde::Deserialize, mcp_tokio::service::schemars::JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct Query {
    q: String,
}

#[tool(crate = mcp_tokio::service, name = "find", title = "Find", read_only = true, destructive = false)]
async fn search(#[args] query: Query, #[context] _cx: Ctx) -> Result<Json<Found>, String> {
    Ok(Json(Found { hits: vec![query.q] }))
}

#[tool]
async fn raw() -> CallToolResult {
    CallToolResult::text("raw")
}

#[tool]
async fn kinds(
    r#type: String,
    #[serde(default)] count: u32,
    _cx: &HandlerContext,
) -> Result<serde_json::Value, std::fmt::Error> {
    Ok(serde_json::json!({"type": r#type, "count": count}))
}

#[prompt(name = "plain", description = "A plain prompt")]
async fn plain_prompt() -> GetPromptResult {
    GetPromptResult::default()
}

#[prompt]
async fn one_message(verbose: Option<bool>) -> PromptMessage {
    PromptMessage::user(format!("{verbose:?}"))
}

struct Counter;

#[router(crate = "mcp_tokio::service")]
impl Counter {
    #[mcp_tokio::tool(open_world)]
    async fn count(&self) -> &'static str {
        "1"
    }

    #[mcp_tokio::prompt(title = "Counting")]
    async fn counting(&self, n: u64) -> Result<Vec<PromptMessage>, anyhow::Error> {
        Ok(vec![PromptMessage::user(n.to_string())])
    }
}

fn main() {
    let shared = Arc::new(Counter);
    let server = Server::builder("options", "1.0")
        .tool_fn::<search>()
        .tool_fn::<kinds>()
        .tool_fn::<raw>()
        .prompt_fn::<plain_prompt>()
        .prompt_fn::<one_message>()
        .router_arc(shared.clone())
        .try_build();
    if let Err(e) = server {
        panic!("{e}");
    }
}
