use std::cell::Cell;
use std::rc::Rc;

use mcp_tokio::service::server::LocalHandlers;
use mcp_tokio::{Server, router, tool};

/// Not `Send`, not `Sync`: fine for a local router.
struct Local {
    counter: Rc<Cell<u32>>,
}

#[router(local)]
impl Local {
    #[tool]
    async fn get(&self) -> String {
        let held = self.counter.clone();
        std::future::ready(()).await;
        held.get().to_string()
    }
}

/// A free tool whose future holds an `Rc` across an await.
#[tool(local)]
async fn shared(text: String) -> String {
    let text = Rc::new(text);
    std::future::ready(()).await;
    text.to_string()
}

fn main() {
    let (routes, _runner) = LocalHandlers::new()
        .router(Local { counter: Rc::default() })
        .tool_fn::<shared>()
        .split();
    let _server = Server::builder("local", "1.0").local(routes).build();
}
