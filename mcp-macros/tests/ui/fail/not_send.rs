use std::rc::Rc;

use mcp_tokio::{router, tool};

struct Local {
    counter: Rc<u32>,
}

#[router]
impl Local {
    #[tool]
    async fn get(&self) -> String {
        self.counter.to_string()
    }
}

fn main() {}
