use mcp_tokio::tool;

struct State;

impl State {
    #[tool]
    async fn stateful(&self) -> String {
        String::new()
    }
}

fn main() {}
