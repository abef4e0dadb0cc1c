use mcp_tokio::{router, tool};

struct State;

#[router]
impl State {
    #[tool]
    async fn by_value(self) -> String {
        String::new()
    }

    #[tool]
    async fn by_mut(&mut self) -> String {
        String::new()
    }

    #[tool]
    async fn boxed(self: Box<Self>) -> String {
        String::new()
    }
}

fn main() {}
