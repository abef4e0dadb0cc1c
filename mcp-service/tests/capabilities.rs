//! A server declares the capabilities of what it has (or was told to declare), clients see
//! exactly that in both eras, and the server behaves accordingly.

use std::collections::BTreeMap;

use mcp_proto::ProtocolVersion;
use mcp_proto::session::Discovery;
use mcp_service::schema::{
    CallToolResult, GetPromptResult, LoggingLevel, Prompt, Resource, ResourceContents, Tool,
};
use mcp_service::server::{Server, ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::{Client, ClientOptions, ErrorKind};
use serde_json::{Value, json};

fn eras() -> [ClientOptions; 2] {
    [
        ClientOptions::default().discovery(Discovery::Initialize),
        ClientOptions::default()
            .versions(&ProtocolVersion::ALL)
            .discovery(Discovery::Discover),
    ]
}

fn tool(name: &str) -> Tool {
    Tool::new(name, schema_of(json!({"type": "object"})))
}

fn caps_of(server: &Server) -> Value {
    serde_json::from_str(server.config().capabilities.get()).unwrap()
}

/// Runs `f` with a client of each era connected to `server` in memory.
fn with_clients<F, Fut>(server: &Server, f: F)
where
    F: Fn(Client) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for options in eras() {
        let sim = Sim::new();
        let rt = sim.runtime();
        let server = server.clone();
        sim.block_on(async {
            let client = server.test_client_with(rt, options).await.unwrap();
            f(client.clone()).await;
            client.shutdown().await;
        })
        .expect("the exchange finished");
    }
}

#[test]
fn an_empty_server_declares_nothing_and_serves_no_list() {
    let server = Server::builder("empty", "1").build();
    assert_eq!(caps_of(&server), json!({}));
    with_clients(&server, |client| async move {
        let caps: Value = serde_json::from_str(client.server_info().capabilities.get()).unwrap();
        assert_eq!(caps, json!({}));
        for method in ["tools/list", "prompts/list", "resources/list"] {
            let e = client.request(method, &json!({})).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::MethodNotFound, "{method}");
        }
        let e = client
            .request("logging/setLevel", &json!({"level": "debug"}))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MethodNotFound);
        client.ping().await.unwrap();
    });
    // Nothing can be added at runtime that clients were not told of.
    let e = server
        .add_tool(tool("t"), |_: Value, _| async { Ok("") })
        .unwrap_err();
    assert!(e.message().contains("dynamic_tools"), "{}", e.message());
    assert!(
        server
            .add_prompt(Prompt::new("p"), |_: BTreeMap<String, String>, _| async {
                Ok(GetPromptResult::default())
            })
            .is_err()
    );
    assert!(
        server
            .add_resource(Resource::new("test://r", "r"), |_, _| async { Ok(vec![]) })
            .is_err()
    );
}

#[test]
fn each_kind_is_declared_when_registered() {
    let tools = Server::builder("t", "1")
        .tool(tool("t"), |_: Value, _| async { Ok("") })
        .build();
    assert_eq!(caps_of(&tools), json!({"tools": {"listChanged": true}}));
    let resources = Server::builder("r", "1")
        .resource(Resource::new("test://r", "r"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "r")])
        })
        .build();
    assert_eq!(
        caps_of(&resources),
        json!({"resources": {"listChanged": true}})
    );
    let prompts = Server::builder("p", "1")
        .prompt(Prompt::new("p"), |_, _| async {
            Ok(GetPromptResult::default())
        })
        .completion(|_, _| async { Ok(Default::default()) })
        .build();
    assert_eq!(
        caps_of(&prompts),
        json!({"prompts": {"listChanged": true}, "completions": {}})
    );
    let all = Server::builder("a", "1")
        .logging()
        .resource_subscriptions()
        .build();
    assert_eq!(
        caps_of(&all),
        json!({"logging": {}, "resources": {"listChanged": true, "subscribe": true}})
    );
}

#[test]
fn dynamic_tools_are_declared_and_announced() {
    let server = Server::builder("dyn", "1")
        .versions(&ProtocolVersion::ALL)
        .dynamic_tools()
        .build();
    assert_eq!(caps_of(&server), json!({"tools": {"listChanged": true}}));
    let srv = server.clone();
    let sim = Sim::new();
    let rt = sim.runtime();
    sim.block_on(async move {
        // Handshake era: list changes are notifications of the connection.
        let options = ClientOptions::default().discovery(Discovery::Initialize);
        let client = srv.test_client_with(rt, options).await.unwrap();
        assert!(client.list_tools().await.unwrap().is_empty());
        let mut notes = client.notifications();
        srv.add_tool(tool("late"), |_: Value, _| async {
            Ok(CallToolResult::text("late"))
        })
        .unwrap();
        loop {
            if let Some(mcp_service::client::ServerNotification::ToolsListChanged) =
                notes.recv().await
            {
                break;
            }
        }
        assert_eq!(client.list_tools().await.unwrap().len(), 1);
        let r = client.call_tool("late", json!({})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("late"));
    })
    .expect("the exchange finished");
}

#[test]
fn overrides_win_and_the_server_follows_them() {
    let server = Server::builder("o", "1")
        .tool(tool("t"), |_: Value, _| async { Ok("") })
        .prompt(Prompt::new("p"), |_, _| async {
            Ok(GetPromptResult::default())
        })
        .capability("tools", Some(json!({})))
        .capability("prompts", None)
        .capability("logging", Some(json!({})))
        .build();
    assert_eq!(caps_of(&server), json!({"tools": {}, "logging": {}}));
    with_clients(&server, |client| async move {
        let caps: Value = serde_json::from_str(client.server_info().capabilities.get()).unwrap();
        assert_eq!(caps, json!({"tools": {}, "logging": {}}));
        assert_eq!(client.list_tools().await.unwrap().len(), 1);
        let e = client
            .request("prompts/list", &json!({}))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::MethodNotFound);
        client.set_logging_level(LoggingLevel::Info).await.unwrap();
    });
}

#[test]
fn log_messages_go_out_only_when_logging_is_declared() {
    for logging in [false, true] {
        let mut builder = Server::builder("l", "1").tool(
            tool("chatty"),
            |_: Value, cx: ToolContext| async move {
                cx.log(LoggingLevel::Warning, None, "careful").await?;
                Ok("said")
            },
        );
        if logging {
            builder = builder.logging();
        }
        let server = builder.build();
        let sim = Sim::new();
        let rt = sim.runtime();
        let heard = sim
            .block_on(async move {
                let client = server
                    .test_client_with(
                        rt,
                        ClientOptions::default().discovery(Discovery::Initialize),
                    )
                    .await
                    .unwrap();
                let mut logs = client.log_messages();
                let r = client.call_tool("chatty", json!({})).await.unwrap();
                assert_eq!(r.content[0].as_text(), Some("said"));
                server.log(LoggingLevel::Error, None, json!("from the server"));
                client.ping().await.unwrap();
                let mut heard = Vec::new();
                while let Some(m) = logs.try_next() {
                    heard.push(m.data);
                }
                heard
            })
            .expect("the exchange finished");
        if logging {
            assert_eq!(heard, [json!("careful"), json!("from the server")]);
        } else {
            assert!(heard.is_empty(), "{heard:?}");
        }
    }
}
