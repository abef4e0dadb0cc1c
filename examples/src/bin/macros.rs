use mcp_tokio::{Server, TokioRuntime, tool};

/// Echoes the text back.
#[tool]
async fn echo(text: String) -> String {
    text
}

#[tokio::main]
async fn main() -> Result<(), mcp_tokio::Error> {
    let server = Server::builder("echo", "1.0").tool_fn::<echo>().build();
    mcp_tokio::serve_stdio(TokioRuntime::current(), server).await
}
