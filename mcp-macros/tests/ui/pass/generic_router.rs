//! A generic impl block: the state needs `Send + Sync + 'static` (here through the trait), no
//! `Clone`, `Default` or anything else.
use std::marker::PhantomData;

use mcp_tokio::service::server::ToolContext;
use mcp_tokio::{Server, router, tool};

trait Backend: Send + Sync + 'static {
    fn name(&self) -> String;
}

struct Fixed;
impl Backend for Fixed {
    fn name(&self) -> String {
        "fixed".into()
    }
}

struct Service<B, T> {
    backend: B,
    tag: PhantomData<fn() -> T>,
}

#[router]
impl<B: Backend, T> Service<B, T>
where
    T: 'static,
{
    /// Names the backend.
    #[tool]
    async fn backend(&self, cx: ToolContext, upper: Option<bool>) -> String {
        let _ = cx.request_id();
        let name = self.backend.name();
        if upper.unwrap_or(false) { name.to_uppercase() } else { name }
    }

    fn helper(&self) -> usize {
        1
    }
}

fn main() {
    let service = Service::<Fixed, u8> { backend: Fixed, tag: PhantomData };
    assert_eq!(service.helper(), 1);
    let server = Server::builder("generic", "1.0").router(service).try_build();
    if let Err(e) = server {
        panic!("{e}");
    }
}
