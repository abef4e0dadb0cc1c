use mcp_tokio::{prompt, tool};

#[tool(readonly)]
async fn a() -> String {
    String::new()
}

#[prompt(read_only)]
async fn b() -> String {
    String::new()
}

#[tool(name = 7)]
async fn c() -> String {
    String::new()
}

fn main() {}
