//! The macros through this driver (feature `macros`): the generated code names
//! `mcp_async_std::service`, and a macro-built server answers on smol.

use std::sync::atomic::{AtomicU32, Ordering};

use mcp_async_std::{Server, SmolRuntime, router, tool};

/// Says hello.
#[tool(read_only)]
async fn hello(
    /// Who to greet.
    name: String,
) -> String {
    format!("hello {name}")
}

#[derive(Default)]
struct Counter(AtomicU32);

#[router]
impl Counter {
    /// Counts the calls.
    #[tool]
    async fn bump(&self) -> Result<String, std::io::Error> {
        Ok((self.0.fetch_add(1, Ordering::Relaxed) + 1).to_string())
    }
}

#[test]
fn a_macro_built_server_answers() {
    let server = Server::builder("macros", "1.0")
        .tool_fn::<hello>()
        .router(Counter::default())
        .try_build()
        .unwrap();
    smol::block_on(async {
        let client = server.test_client(SmolRuntime::new()).await.unwrap();
        let tools = client.list_tools().await.unwrap();
        let hello = tools.iter().find(|t| t.name == "hello").unwrap();
        assert_eq!(hello.description.as_deref(), Some("Says hello."));
        assert_eq!(
            hello.input_schema["properties"]["name"]["description"],
            "Who to greet."
        );
        let r = client
            .call_tool("hello", serde_json::json!({"name": "smol"}))
            .await
            .unwrap();
        assert_eq!(r.content[0].as_text(), Some("hello smol"));
        for expected in ["1", "2"] {
            let r = client
                .call_tool("bump", serde_json::json!({}))
                .await
                .unwrap();
            assert_eq!(r.content[0].as_text(), Some(expected));
        }
    });
}
