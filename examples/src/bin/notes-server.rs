//! A notes server without macros: two typed tools, a resource template and a prompt, over
//! stdio. Copy it as the start of a server of your own.
//!
//! ```toml
//! [dependencies]
//! mcp-tokio = { version = "0.1", features = ["schemars"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! serde = { version = "1", features = ["derive"] }
//! ```
//!
//! Run it with a client: `mcp tools -- cargo run -q -p mcp-examples --bin notes-server`, or
//! `cargo run -p mcp-examples --bin notes-client` (which starts it).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use mcp_tokio::service::schema::{
    GetPromptResult, Prompt, PromptArgument, PromptMessage, ResourceContents, ResourceTemplate,
};
use mcp_tokio::service::schemars::JsonSchema;
use mcp_tokio::service::server::{Json, PromptContext, ResourceContext, ToolContext};
use mcp_tokio::{Error, Server, TokioRuntime};
use serde::{Deserialize, Serialize};

/// The notes, by id.
#[derive(Default)]
struct Notes {
    next: u64,
    by_id: BTreeMap<u64, Note>,
}

#[derive(Clone, Serialize, JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct Note {
    id: u64,
    title: String,
    body: String,
}

/// Adds a note.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct AddNote {
    /// A short title.
    title: String,
    /// The text of the note.
    body: String,
}

/// Finds the notes whose title or text contains a word.
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct Search {
    /// The word to look for (case-insensitive).
    word: String,
}

#[derive(Serialize, JsonSchema)]
#[schemars(crate = "mcp_tokio::service::schemars")]
struct Found {
    notes: Vec<Note>,
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let notes = Arc::new(Mutex::new(Notes::default()));
    let (add, search, read, summarize) = (notes.clone(), notes.clone(), notes.clone(), notes);

    let server = Server::builder("notes", "1.0")
        .instructions("Keeps short notes: add_note, search_notes, note://{id}, summarize.")
        .typed_tool("add_note", "", move |args: AddNote, _cx: ToolContext| {
            let notes = add.clone();
            async move {
                let mut notes = notes.lock().unwrap_or_else(|e| e.into_inner());
                notes.next += 1;
                let id = notes.next;
                let note = Note {
                    id,
                    title: args.title,
                    body: args.body,
                };
                notes.by_id.insert(id, note);
                Ok(format!("added note {id}: note://{id}"))
            }
        })
        .typed_tool("search_notes", "", move |args: Search, _cx: ToolContext| {
            let notes = search.clone();
            async move {
                let word = args.word.to_lowercase();
                let notes = notes.lock().unwrap_or_else(|e| e.into_inner());
                let found = notes.by_id.values().filter(|n| {
                    n.title.to_lowercase().contains(&word) || n.body.to_lowercase().contains(&word)
                });
                Ok(Json(Found {
                    notes: found.cloned().collect(),
                }))
            }
        })
        .resource_template(
            ResourceTemplate::new("note://{id}", "note").with_mime_type("text/plain"),
            move |uri: String, vars: HashMap<String, String>, _cx: ResourceContext| {
                let note = note_of(&read, vars.get("id"));
                async move {
                    let note = note.ok_or_else(|| Error::not_found(format!("no {uri}")))?;
                    let text = format!("# {}\n\n{}", note.title, note.body);
                    Ok(vec![ResourceContents::text(uri, text)])
                }
            },
        )
        .prompt(
            Prompt::new("summarize")
                .with_description("Asks for a summary of one note")
                .with_argument(
                    PromptArgument::new("id")
                        .with_description("The note's id")
                        .required(),
                ),
            move |args: BTreeMap<String, String>, _cx: PromptContext| {
                let note = note_of(&summarize, args.get("id"));
                async move {
                    let note = note.ok_or_else(|| Error::invalid_params("no such note"))?;
                    let ask = format!("Summarize this note in one line:\n\n{}", note.body);
                    Ok(GetPromptResult::new(vec![PromptMessage::user(ask)]))
                }
            },
        )
        .try_build()?;
    mcp_tokio::serve_stdio(TokioRuntime::current(), server).await
}

/// The note an `id` argument names, if there is one.
fn note_of(notes: &Mutex<Notes>, id: Option<&String>) -> Option<Note> {
    let id = id?.parse::<u64>().ok()?;
    let notes = notes.lock().unwrap_or_else(|e| e.into_inner());
    notes.by_id.get(&id).cloned()
}
