//! What resource and prompt handlers may return besides the full result types (strings,
//! one item, messages), and how each reaches the client, in both eras.

use std::collections::{BTreeMap, HashMap};

use mcp_proto::ProtocolVersion;
use mcp_service::schema::{
    Prompt, PromptArgument, PromptMessage, Resource, ResourceContents, ResourceTemplate, Role,
};
use mcp_service::server::{PromptContext, ResourceContext, Server};
use mcp_service::sim::Sim;
use mcp_service::{ClientOptions, Error, ErrorKind};

fn server() -> Server {
    Server::builder("returns", "1.0")
        .resource(
            Resource::new("text://plain", "plain"),
            |_uri: String, _cx: ResourceContext| async { Ok("just text") },
        )
        .resource(
            Resource::new("text://one", "one"),
            |uri: String, _cx: ResourceContext| async move {
                Ok(ResourceContents::text(uri, "one item"))
            },
        )
        .resource_template(
            ResourceTemplate::new("greet://{name}", "greet"),
            |_uri: String, vars: HashMap<String, String>, _cx: ResourceContext| async move {
                match vars.get("name").map(String::as_str) {
                    Some("nobody") => Err(Error::not_found("nobody to greet")),
                    Some(name) => Ok(format!("hello {name}")),
                    None => Ok(String::new()),
                }
            },
        )
        .prompt(
            Prompt::new("text"),
            |_args: BTreeMap<String, String>, _cx: PromptContext| async { Ok("a user message") },
        )
        .prompt(
            Prompt::new("dialogue").with_argument(PromptArgument::new("topic").required()),
            |args: BTreeMap<String, String>, _cx: PromptContext| async move {
                Ok(vec![
                    PromptMessage::user(format!("tell me about {}", args["topic"])),
                    PromptMessage::assistant("gladly"),
                ])
            },
        )
        .build()
}

#[test]
fn strings_items_and_messages_in_both_eras() {
    for version in [ProtocolVersion::V2025_11_25, ProtocolVersion::V2026_07_28] {
        let sim = Sim::new();
        let server = server();
        let outcome = sim.block_on(async {
            let options = ClientOptions::new("t", "1").versions(&[version]);
            let client = server.test_client_with(sim.runtime(), options).await?;
            assert_eq!(client.protocol_version(), version);

            let plain = client.read_resource("text://plain").await?;
            assert_eq!(plain.contents.len(), 1);
            assert_eq!(plain.contents[0].uri(), "text://plain", "the URI read");
            assert_eq!(plain.contents[0].as_text(), Some("just text"));
            assert_eq!(plain.contents[0].mime_type(), Some("text/plain"));

            let one = client.read_resource("text://one").await?;
            assert_eq!(
                one.contents,
                vec![ResourceContents::text("text://one", "one item")]
            );

            let greet = client.read_resource("greet://ada").await?;
            assert_eq!(greet.contents[0].as_text(), Some("hello ada"));
            assert_eq!(greet.contents[0].uri(), "greet://ada");
            let missing = client.read_resource("greet://nobody").await.unwrap_err();
            assert_eq!(missing.kind(), ErrorKind::NotFound, "{missing}");
            assert_eq!(
                missing.data().map(|d| d.get()),
                Some(r#"{"uri":"greet://nobody"}"#)
            );

            let text = client.get_prompt("text", BTreeMap::new()).await?;
            assert_eq!(text.messages.len(), 1);
            assert_eq!(text.messages[0].role, Role::User);
            assert_eq!(text.messages[0].content.as_text(), Some("a user message"));

            let args = BTreeMap::from([("topic".to_owned(), "owls".to_owned())]);
            let dialogue = client.get_prompt("dialogue", args).await?;
            let texts: Vec<_> = dialogue
                .messages
                .iter()
                .map(|m| (m.role, m.content.as_text().unwrap_or_default().to_owned()))
                .collect();
            assert_eq!(
                texts,
                [
                    (Role::User, "tell me about owls".to_owned()),
                    (Role::Assistant, "gladly".to_owned())
                ]
            );
            Ok::<(), Error>(())
        });
        outcome
            .expect("nothing left waiting")
            .unwrap_or_else(|e| panic!("{version}: {e}"));
    }
}
