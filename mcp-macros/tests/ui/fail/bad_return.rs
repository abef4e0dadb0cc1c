use mcp_tokio::{prompt, tool};

#[tool]
async fn number() -> u32 {
    7
}

#[tool]
async fn nothing() {}

#[prompt]
async fn prompt_number() -> Result<u32, std::io::Error> {
    Ok(7)
}

fn main() {}
