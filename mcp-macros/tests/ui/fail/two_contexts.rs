use mcp_tokio::service::server::ToolContext;
use mcp_tokio::tool;

#[tool]
async fn twice(a: ToolContext, text: String, b: &ToolContext) -> String {
    let _ = (a, b);
    text
}

fn main() {}
