//! Handlers that are not `Send` (`LocalHandlers`) on smol: the runner on a `LocalExecutor`
//! of the test's thread, the server on the smol runtime's tasks.

use std::cell::RefCell;
use std::rc::Rc;

use mcp_async_std::service::schema::Tool;
use mcp_async_std::service::server::{LocalHandlers, ToolContext, schema_of};
use mcp_async_std::{Server, SmolRuntime};
use serde_json::json;

#[derive(serde::Deserialize)]
struct Word {
    word: String,
}

#[test]
fn local_handlers_answer_on_a_local_executor() {
    // Not `Send`: an `Rc<RefCell<..>>`, held across an await.
    let words: Rc<RefCell<Vec<String>>> = Rc::default();
    let (routes, runner) = LocalHandlers::new()
        .tool(Tool::new("say", schema_of(json!({"type": "object"}))), {
            let words = words.clone();
            move |w: Word, _cx: ToolContext| {
                let words = words.clone();
                async move {
                    smol::future::yield_now().await;
                    words.borrow_mut().push(w.word);
                    smol::future::yield_now().await;
                    Ok(words.borrow().join(" "))
                }
            }
        })
        .split();
    let server = Server::builder("words", "1.0")
        .local(routes)
        .try_build()
        .unwrap();
    let local = smol::LocalExecutor::new();
    let runner = local.spawn(runner.run());
    smol::block_on(local.run(async {
        let client = server.test_client(SmolRuntime::new()).await.unwrap();
        for (word, said) in [("hello", "hello"), ("world", "hello world")] {
            let result = client
                .call_tool("say", json!({"word": word}))
                .await
                .unwrap();
            assert_eq!(result.content[0].as_text(), Some(said));
        }
        drop(client);
        drop(server);
        // The server gone, the runner finishes.
        let deadline = async {
            smol::Timer::after(std::time::Duration::from_secs(10)).await;
            panic!("the runner did not finish once the server was dropped");
        };
        smol::future::or(runner, deadline).await;
    }));
    assert_eq!(words.borrow().len(), 2);
}
