//! Human-readable output of each result (the JSON forms are the results as the server sent
//! them, typed).

use std::fmt::Write as _;

use serde_json::Value;

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// A one-line form of a (possibly multi-line) description.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `tools`: each tool, its description and its arguments.
pub fn tools(tools: &Value) -> String {
    let mut out = String::new();
    for t in items(tools) {
        let name = s(t, "name").unwrap_or("?");
        let _ = write!(out, "{name}");
        if let Some(d) = s(t, "description").or_else(|| s(t, "title")) {
            let _ = write!(out, "  {}", one_line(d));
        }
        out.push('\n');
        let schema = t.get("inputSchema");
        let required: Vec<&str> = schema
            .and_then(|s| s.get("required"))
            .map(|r| items(r).iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(Value::Object(props)) = schema.and_then(|s| s.get("properties")) {
            for (arg, p) in props {
                let ty = type_name(p);
                let req = if required.contains(&arg.as_str()) {
                    ", required"
                } else {
                    ""
                };
                let _ = write!(out, "    {arg} ({ty}{req})");
                if let Some(d) = s(p, "description") {
                    let _ = write!(out, "  {}", one_line(d));
                }
                out.push('\n');
            }
        }
    }
    if out.is_empty() {
        out.push_str("(no tools)\n");
    }
    out
}

/// A property schema's type, as written in `tools`.
fn type_name(p: &Value) -> String {
    match p.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ if p.get("enum").is_some() => "enum".into(),
        _ => "any".into(),
    }
}

/// One content block (of a tool result or a prompt message).
fn content(c: &Value, out: &mut String) {
    match s(c, "type") {
        Some("text") => {
            out.push_str(s(c, "text").unwrap_or(""));
            out.push('\n');
        }
        Some(kind @ ("image" | "audio")) => {
            let len = s(c, "data").map_or(0, |d| d.len() * 3 / 4);
            let _ = writeln!(
                out,
                "[{kind} {}, about {len} bytes]",
                s(c, "mimeType").unwrap_or("?")
            );
        }
        Some("resource") => {
            let r = c.get("resource").unwrap_or(&Value::Null);
            resource_contents(r, out);
        }
        Some("resource_link") => {
            let _ = writeln!(
                out,
                "[link {} {}]",
                s(c, "uri").unwrap_or("?"),
                s(c, "name").unwrap_or("")
            );
        }
        _ => {
            out.push_str(&pretty(c));
            out.push('\n');
        }
    }
}

/// One item of `contents` (text as is, a blob as a summary).
fn resource_contents(r: &Value, out: &mut String) {
    let uri = s(r, "uri").unwrap_or("?");
    let mime = s(r, "mimeType")
        .map(|m| format!(" {m}"))
        .unwrap_or_default();
    if let Some(text) = s(r, "text") {
        let _ = writeln!(out, "[resource {uri}{mime}]");
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    } else if let Some(blob) = s(r, "blob") {
        let _ = writeln!(
            out,
            "[resource {uri}{mime}, binary, about {} bytes; --json shows its base64]",
            blob.len() * 3 / 4
        );
    } else {
        let _ = writeln!(out, "[resource {uri}{mime}]");
    }
}

/// `call`: the content blocks, or the structured content when there is no content.
pub fn call(result: &Value) -> String {
    let mut out = String::new();
    for c in items(result.get("content").unwrap_or(&Value::Null)) {
        content(c, &mut out);
    }
    if let Some(sc) = result.get("structuredContent")
        && out.is_empty()
    {
        out.push_str(&pretty(sc));
        out.push('\n');
    }
    out
}

/// `resources`: URI, name, MIME type and description.
pub fn resources(resources: &Value) -> String {
    let mut out = String::new();
    for r in items(resources) {
        listing(&mut out, s(r, "uri"), r);
    }
    if out.is_empty() {
        out.push_str("(no resources)\n");
    }
    out
}

/// `templates`: URI template, name, MIME type and description.
pub fn templates(templates: &Value) -> String {
    let mut out = String::new();
    for r in items(templates) {
        listing(&mut out, s(r, "uriTemplate"), r);
    }
    if out.is_empty() {
        out.push_str("(no resource templates)\n");
    }
    out
}

fn listing(out: &mut String, uri: Option<&str>, r: &Value) {
    let _ = write!(out, "{}", uri.unwrap_or("?"));
    if let Some(n) = s(r, "title").or_else(|| s(r, "name")) {
        let _ = write!(out, "  {n}");
    }
    if let Some(m) = s(r, "mimeType") {
        let _ = write!(out, "  ({m})");
    }
    if let Some(d) = s(r, "description") {
        let _ = write!(out, "  {}", one_line(d));
    }
    out.push('\n');
}

/// `read`: one text as it is (`mcp read URI > file`), or each of the contents under a
/// heading.
pub fn read(result: &Value) -> String {
    let mut out = String::new();
    match items(result.get("contents").unwrap_or(&Value::Null)) {
        [one] if s(one, "text").is_some() => out.push_str(s(one, "text").unwrap_or_default()),
        all => {
            for r in all {
                resource_contents(r, &mut out);
            }
        }
    }
    out
}

/// `prompts`: each prompt, its description and its arguments.
pub fn prompts(prompts: &Value) -> String {
    let mut out = String::new();
    for p in items(prompts) {
        let _ = write!(out, "{}", s(p, "name").unwrap_or("?"));
        if let Some(d) = s(p, "description").or_else(|| s(p, "title")) {
            let _ = write!(out, "  {}", one_line(d));
        }
        out.push('\n');
        for a in items(p.get("arguments").unwrap_or(&Value::Null)) {
            let req = if a.get("required").and_then(Value::as_bool) == Some(true) {
                " (required)"
            } else {
                ""
            };
            let _ = write!(out, "    {}{req}", s(a, "name").unwrap_or("?"));
            if let Some(d) = s(a, "description") {
                let _ = write!(out, "  {}", one_line(d));
            }
            out.push('\n');
        }
    }
    if out.is_empty() {
        out.push_str("(no prompts)\n");
    }
    out
}

/// `prompt`: each message as `role: content`.
pub fn prompt(result: &Value) -> String {
    let mut out = String::new();
    for m in items(result.get("messages").unwrap_or(&Value::Null)) {
        let _ = write!(out, "{}: ", s(m, "role").unwrap_or("?"));
        match m.get("content") {
            Some(Value::Array(blocks)) => {
                for c in blocks {
                    content(c, &mut out);
                }
            }
            Some(c) => content(c, &mut out),
            None => out.push('\n'),
        }
    }
    out
}

/// `complete`: one value a line.
pub fn complete(result: &Value) -> String {
    let completion = result.get("completion").unwrap_or(&Value::Null);
    let mut out = String::new();
    for v in items(completion.get("values").unwrap_or(&Value::Null)) {
        out.push_str(v.as_str().unwrap_or(""));
        out.push('\n');
    }
    if completion.get("hasMore").and_then(Value::as_bool) == Some(true) {
        let _ = match completion.get("total").and_then(Value::as_u64) {
            Some(total) => writeln!(out, "(more: {total} in all)"),
            None => writeln!(out, "(more)"),
        };
    }
    out
}

/// `info`: the server's name, version, protocol version, capabilities and instructions.
pub fn info(info: &Value) -> String {
    let mut out = String::new();
    let server = info.get("serverInfo").unwrap_or(&Value::Null);
    let _ = writeln!(
        out,
        "{} {}",
        s(server, "name").unwrap_or("?"),
        s(server, "version").unwrap_or("")
    );
    let _ = writeln!(
        out,
        "protocol      {}",
        s(info, "protocolVersion").unwrap_or("?")
    );
    if let Some(Value::Object(caps)) = info.get("capabilities") {
        let names: Vec<&str> = caps.keys().map(String::as_str).collect();
        let _ = writeln!(out, "capabilities  {}", names.join(", "));
    }
    if let Some(i) = s(info, "instructions") {
        let _ = writeln!(out, "instructions  {}", one_line(i));
    }
    out
}

/// One notification, as one line (`listen`, `subscribe`).
pub fn notification(method: &str, params: &Value) -> String {
    match method {
        "notifications/message" => {
            let level = s(params, "level").unwrap_or("?");
            let logger = s(params, "logger")
                .map(|l| format!(" [{l}]"))
                .unwrap_or_default();
            let data = match params.get("data") {
                Some(Value::String(t)) => t.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            format!("log {level}{logger}: {data}")
        }
        "notifications/resources/updated" => {
            format!("resource updated: {}", s(params, "uri").unwrap_or("?"))
        }
        "notifications/tools/list_changed" => "the tool list changed".into(),
        "notifications/resources/list_changed" => "the resource list changed".into(),
        "notifications/prompts/list_changed" => "the prompt list changed".into(),
        other if params.is_null() => other.to_owned(),
        other => format!("{other} {params}"),
    }
}

/// Indented JSON.
pub fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn listings_and_contents_read_as_text() {
        let t = tools(&json!([{"name": "echo", "description": "Says\n it back",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "description": "what"}},
                            "required": ["text"]}}]));
        assert_eq!(t, "echo  Says it back\n    text (string, required)  what\n");
        assert_eq!(tools(&json!([])), "(no tools)\n");
        let c = call(&json!({"content": [
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "test://x", "text": "body"}}
        ]}));
        assert_eq!(
            c,
            "hi\n[image image/png, about 3 bytes]\n[resource test://x]\nbody\n"
        );
        assert_eq!(
            call(&json!({"content": [], "structuredContent": {"a": 1}})),
            "{\n  \"a\": 1\n}\n"
        );
        assert_eq!(
            notification(
                "notifications/message",
                &json!({"level": "info", "logger": "l", "data": "x"})
            ),
            "log info [l]: x"
        );
        assert_eq!(
            complete(&json!({"completion": {"values": ["a", "b"], "hasMore": true, "total": 5}})),
            "a\nb\n(more: 5 in all)\n"
        );
    }
}
