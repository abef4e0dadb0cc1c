//! Tools whose schemas come from their handler's types (feature `schemars`), called end to end
//! by our client through `Server::test_client`, in both eras.
#![cfg(feature = "schemars")]

use mcp_proto::ProtocolVersion;
use mcp_proto::session::Discovery;
use mcp_service::schema::{Tool, ToolAnnotations};
use mcp_service::schemars::JsonSchema;
use mcp_service::server::{Json, Server, ToolContext, schema_of};
use mcp_service::sim::Sim;
use mcp_service::{ClientOptions, ErrorKind};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Adds two integers.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcp_service::schemars")]
struct AddArgs {
    /// The first term.
    a: i64,
    /// The second term.
    b: i64,
    /// Added too, when present.
    c: Option<i64>,
}

/// The sum, and how many terms made it.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "mcp_service::schemars")]
struct Sum {
    /// The total.
    total: i64,
    terms: u8,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcp_service::schemars")]
struct Name {
    name: String,
}

fn server() -> Server {
    Server::builder("calc", "1")
        .versions(&ProtocolVersion::ALL)
        .typed_tool("add", "", |args: AddArgs, _cx: ToolContext| async move {
            let terms = 2 + u8::from(args.c.is_some());
            Ok(Json(Sum {
                total: args.a + args.b + args.c.unwrap_or(0),
                terms,
            }))
        })
        .typed_tool_with(
            Tool {
                name: "greet".into(),
                title: Some("Greeter".into()),
                annotations: Some(ToolAnnotations {
                    read_only_hint: Some(true),
                    ..Default::default()
                }),
                ..Default::default()
            },
            |n: Name, _cx: ToolContext| async move { Ok(format!("hello {}", n.name)) },
        )
        .build()
}

fn eras() -> [(ClientOptions, ProtocolVersion); 2] {
    [
        (
            ClientOptions::default().discovery(Discovery::Initialize),
            ProtocolVersion::V2025_11_25,
        ),
        (
            ClientOptions::default()
                .versions(&ProtocolVersion::ALL)
                .discovery(Discovery::Discover),
            ProtocolVersion::V2026_07_28,
        ),
    ]
}

/// What the 2025-11-25 and 2026-07-28 schemas require of `inputSchema` and `outputSchema`:
/// an object with `"type": "object"` at the root, whose `properties` are objects and whose
/// `required` is a list of strings.
fn assert_mcp_object_schema(schema: &Value) {
    assert_eq!(schema["type"], "object", "{schema}");
    if let Some(p) = schema.get("properties") {
        assert!(
            p.as_object().unwrap().values().all(Value::is_object),
            "{schema}"
        );
    }
    if let Some(r) = schema.get("required") {
        assert!(
            r.as_array().unwrap().iter().all(Value::is_string),
            "{schema}"
        );
    }
}

#[test]
fn typed_tools_end_to_end_in_both_eras() {
    let srv = server();
    for (options, version) in eras() {
        let sim = Sim::new();
        let srv = srv.clone();
        let rt = sim.runtime();
        sim.block_on(async move {
            let client = srv.test_client_with(rt, options).await.unwrap();
            assert_eq!(client.protocol_version(), version);

            // The schemas on the wire, raw.
            let raw = client.request("tools/list", &json!({})).await.unwrap();
            let listed: Value = serde_json::from_str(raw.get()).unwrap();
            let tools = listed["tools"].as_array().unwrap();
            let add = tools.iter().find(|t| t["name"] == "add").unwrap();
            assert_eq!(add["description"], "Adds two integers.");
            let input = &add["inputSchema"];
            assert_mcp_object_schema(input);
            assert!(input.get("$schema").is_none());
            assert_eq!(input["properties"]["a"]["type"], "integer");
            assert_eq!(input["properties"]["a"]["description"], "The first term.");
            let mut required: Vec<&str> = input["required"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .collect();
            required.sort_unstable();
            assert_eq!(required, ["a", "b"]);
            let output = &add["outputSchema"];
            assert_mcp_object_schema(output);
            assert_eq!(output["properties"]["total"]["description"], "The total.");

            let greet = tools.iter().find(|t| t["name"] == "greet").unwrap();
            assert_eq!(greet["title"], "Greeter");
            assert_eq!(greet["annotations"]["readOnlyHint"], true);
            assert_mcp_object_schema(&greet["inputSchema"]);
            assert!(
                greet.get("outputSchema").is_none(),
                "a String declares none"
            );

            // structuredContent is the value returned, its text the same JSON.
            let r = client
                .call_tool("add", json!({"a": 2, "b": 3, "c": 4}))
                .await
                .unwrap();
            assert_ne!(r.is_error, Some(true));
            assert_eq!(r.structured_content, Some(json!({"total": 9, "terms": 3})));
            let text: Value = serde_json::from_str(r.content[0].as_text().unwrap()).unwrap();
            assert_eq!(text, json!({"total": 9, "terms": 3}));

            // Arguments the type refuses are the tool's failure (2025-11-25 and later).
            let bad = client
                .call_tool("add", json!({"a": "two", "b": 3}))
                .await
                .unwrap();
            assert_eq!(bad.is_error, Some(true));
            assert!(bad.structured_content.is_none());

            let hi = client
                .call_tool("greet", json!({"name": "ada"}))
                .await
                .unwrap();
            assert_eq!(hi.content[0].as_text(), Some("hello ada"));
            client.shutdown().await;
        })
        .expect("the exchange finished");
    }
}

#[test]
fn schemas_that_are_not_objects_are_refused_at_registration() {
    // Hand-written: a non-object schema, and a value that is not a schema object at all.
    for schema in [json!({"type": "string"}), json!("object"), json!({})] {
        let e = Server::builder("s", "1")
            .tool(
                Tool::new("t", schema_of(schema.clone())),
                |_: Value, _| async { Ok("") },
            )
            .try_build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams, "{schema}");
        assert!(e.message().contains("tool `t`"), "{}", e.message());
    }
    // Typed: arguments or a result that are not objects.
    let e = Server::builder("s", "1")
        .typed_tool("n", "", |n: u32, _cx: ToolContext| async move {
            Ok(n.to_string())
        })
        .try_build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);
    let e = Server::builder("s", "1")
        .typed_tool("v", "", |n: Name, _cx: ToolContext| async move {
            Ok(Json(vec![n.name]))
        })
        .try_build()
        .unwrap_err();
    assert!(e.message().contains("outputSchema"), "{}", e.message());
    // A typed tool given a schema of its own: refused, not overwritten.
    let e = Server::builder("s", "1")
        .typed_tool_with(
            Tool::new("own", schema_of(json!({"type": "object"}))),
            |n: Name, _cx: ToolContext| async move { Ok(n.name) },
        )
        .try_build()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);

    // At runtime too; a good one is served and listed.
    let srv = Server::builder("s", "1").dynamic_tools().build();
    let e = srv
        .add_tool(
            Tool::new("bad", schema_of(json!({"type": "array"}))),
            |_: Value, _| async { Ok("") },
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidParams);
    assert!(
        srv.add_typed_tool(
            Tool::new("n", Default::default()),
            |n: u32, _cx| async move { Ok(n.to_string()) }
        )
        .is_err()
    );
    srv.add_typed_tool(
        Tool::new("late", Default::default()),
        |n: Name, _cx| async move {
            Ok(Json(Sum {
                total: n.name.len() as i64,
                terms: 1,
            }))
        },
    )
    .unwrap();
    let sim = Sim::new();
    let rt = sim.runtime();
    sim.block_on(async move {
        let client = srv.test_client(rt).await.unwrap();
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "late");
        assert!(tools[0].output_schema.is_some());
        let r = client
            .call_tool("late", json!({"name": "abc"}))
            .await
            .unwrap();
        assert_eq!(r.structured_content, Some(json!({"total": 3, "terms": 1})));
    })
    .expect("the exchange finished");
}
