use mcp_tokio::{router, tool};

struct Notes;

#[router]
impl Notes {
    #[tool(local)]
    async fn get(&self) -> String {
        String::new()
    }
}

fn main() {}
