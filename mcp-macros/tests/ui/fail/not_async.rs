use mcp_tokio::tool;

/// Not async.
#[tool]
fn echo(text: String) -> String {
    text
}

fn main() {}
