use mcp_tokio::tool;

#[tool]
async fn point((x, y): (i32, i32), _: String) -> String {
    format!("{x},{y}")
}

fn main() {}
