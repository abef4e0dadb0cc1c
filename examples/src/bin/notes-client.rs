//! A client of the notes server (`notes-server`): starts it as a child process, then lists its
//! tools, adds a note, searches, reads the note as a resource and gets a prompt. Copy it as the
//! start of a client of your own.
//!
//! ```toml
//! [dependencies]
//! mcp-tokio = "0.1"
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! serde_json = "1"
//! ```
//!
//! `cargo run -p mcp-examples --bin notes-client` (it finds `notes-server` beside itself), or
//! `notes-client -- COMMAND [ARGS]` for another server of the same tools.

use std::collections::BTreeMap;
use std::time::Duration;

use mcp_tokio::{ClientOptions, Error, TokioRuntime};
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let client = mcp_tokio::spawn(
        TokioRuntime::current(),
        server_command()?,
        ClientOptions::default(),
    )
    .await?;
    if let Some(server) = client.server_info().implementation() {
        println!("connected to {} {}", server.name, server.version);
    }

    for tool in client.list_tools().await? {
        println!(
            "tool {}: {}",
            tool.name,
            tool.description.unwrap_or_default()
        );
    }

    let added = client
        .call_tool(
            "add_note",
            json!({"title": "groceries", "body": "eggs, flour and milk"}),
        )
        .timeout(Duration::from_secs(10))
        .await?;
    println!("{}", added.content[0].as_text().unwrap_or_default());

    let found = client
        .call_tool("search_notes", json!({"word": "flour"}))
        .await?;
    let notes = found.structured_content.unwrap_or_default();
    println!(
        "found {} note(s): {}",
        notes["notes"].as_array().map_or(0, Vec::len),
        notes
    );

    let note = client.read_resource("note://1").await?;
    for contents in &note.contents {
        println!(
            "note://1 reads: {:?}",
            contents.as_text().unwrap_or_default()
        );
    }
    match client.read_resource("note://99").await {
        Err(e) => println!("note://99: {} ({})", e.message(), e.code()),
        Ok(_) => println!("note://99 unexpectedly exists"),
    }

    let args = BTreeMap::from([("id".to_owned(), "1".to_owned())]);
    let prompt = client.get_prompt("summarize", args).await?;
    for message in &prompt.messages {
        println!(
            "prompt {:?}: {:?}",
            message.role,
            message.content.as_text().unwrap_or_default()
        );
    }

    let _status = client.shutdown_within(Duration::from_secs(2)).await;
    Ok(())
}

/// The server to run: the arguments after `--`, else `notes-server` beside this program.
fn server_command() -> Result<std::process::Command, Error> {
    let args: Vec<String> = std::env::args().skip_while(|a| a != "--").skip(1).collect();
    if let Some((program, rest)) = args.split_first() {
        let mut cmd = std::process::Command::new(program);
        cmd.args(rest);
        return Ok(cmd);
    }
    let me = std::env::current_exe()?;
    Ok(std::process::Command::new(
        me.with_file_name("notes-server"),
    ))
}
