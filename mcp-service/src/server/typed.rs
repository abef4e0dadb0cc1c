//! Typed tool results ([`Json`]) and, with the feature `schemars`, tool schemas derived from
//! the handler's own argument and result types.
//!
//! A tool registered with [`ServerBuilder::typed_tool`](super::ServerBuilder::typed_tool) gets
//! its `inputSchema` from the type its handler takes and its `outputSchema` from the type it
//! returns, so the schema a client sees cannot disagree with what the handler deserialises.
//! Doc comments on the types and their fields become `description`s; a tool without a
//! description of its own takes its argument type's doc comment.
//!
//! Both schemas are JSON Schema 2020-12, the default dialect of MCP (so no `$schema` is
//! written), and both must have `"type": "object"` at the root: tool arguments are always a
//! JSON object, and the 2025-11-25 revision requires an object `outputSchema` and
//! `structuredContent` (a struct is; a `Vec`, a number or an enum whose variants have no
//! common object type is not, and is refused at registration). Properties that accept any
//! value (`serde_json::Value`) are written `{}` rather than `true`, which the 2025-11-25
//! schema does not accept there.

use mcp_proto::Error;
use mcp_proto::schema::{CallToolResult, JsonObject};
#[cfg(feature = "schemars")]
use mcp_proto::schema::{Content, Tool};
use serde::Serialize;
use serde_json::Value;

use super::IntoToolResult;

/// A typed tool result: `T` serialised as the result's `structuredContent`, with its JSON text
/// as a text block for clients that read only `content`.
///
/// With the feature `schemars`, a tool registered with `ServerBuilder::typed_tool` whose
/// handler returns `Json<T>` declares `T`'s schema as its `outputSchema`.
///
/// ```
/// use mcp_service::server::{IntoToolResult, Json};
///
/// #[derive(serde::Serialize)]
/// struct Sum { total: i64 }
///
/// let result = Json(Sum { total: 3 }).into_tool_result()?;
/// assert_eq!(result.structured_content, Some(serde_json::json!({"total": 3})));
/// # Ok::<(), mcp_service::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, Error> {
        let value = serde_json::to_value(&self.0)
            .map_err(|e| Error::internal(format!("the tool's result does not serialise: {e}")))?;
        Ok(CallToolResult::structured(value))
    }
}

/// Checks what registration requires of a tool's `inputSchema`: `"type": "object"` at the
/// root.
pub(super) fn check_input_schema(name: &str, schema: &JsonObject) -> Result<(), Error> {
    if schema.get("type").and_then(Value::as_str) == Some("object") {
        return Ok(());
    }
    let got = if schema.is_empty() {
        "an empty schema (`schema_of` of a value that is not a JSON object gives one)".to_owned()
    } else {
        let text = serde_json::to_string(schema).unwrap_or_default();
        let mut end = text.len().min(120);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("`{}`", &text[..end])
    };
    Err(Error::invalid_params(format!(
        "tool `{name}`: `inputSchema` must have `\"type\": \"object\"` at its root (tool \
         arguments are a JSON object); it is {got}"
    )))
}

/// A result type's `outputSchema`, for tools registered with
/// [`typed_tool`](super::ServerBuilder::typed_tool) (feature `schemars`).
///
/// [`Json<T>`](Json) declares `T`'s schema; the untyped results (`String`, `&'static str`,
/// [`Content`], `Vec<Content>`, [`CallToolResult`], `serde_json::Value`) declare none. A result
/// type of your own implements it with the default (no schema) or returns one:
///
/// ```
/// use mcp_service::schema::CallToolResult;
/// use mcp_service::server::{IntoToolResult, ToolOutput};
///
/// struct Report(String);
/// impl IntoToolResult for Report {
///     fn into_tool_result(self) -> Result<CallToolResult, mcp_service::Error> {
///         Ok(CallToolResult::text(self.0))
///     }
/// }
/// impl ToolOutput for Report {}
/// ```
#[cfg(feature = "schemars")]
pub trait ToolOutput: IntoToolResult {
    /// The schema of the `structuredContent` this type produces, if it declares one.
    fn output_schema() -> Option<schemars::Schema> {
        None
    }
}

#[cfg(feature = "schemars")]
impl<T: Serialize + schemars::JsonSchema> ToolOutput for Json<T> {
    fn output_schema() -> Option<schemars::Schema> {
        Some(
            schemars::generate::SchemaSettings::draft2020_12()
                .for_serialize()
                .into_generator()
                .into_root_schema_for::<T>(),
        )
    }
}

#[cfg(feature = "schemars")]
macro_rules! no_output_schema {
    ($($t:ty),*) => { $(impl ToolOutput for $t {})* };
}
#[cfg(feature = "schemars")]
no_output_schema!(
    CallToolResult,
    String,
    &'static str,
    Content,
    Vec<Content>,
    Value
);

/// The schema of `T` as a tool's arguments (what deserialises into `T`).
#[cfg(feature = "schemars")]
pub(super) fn input_schema_of<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// A schema as MCP carries it: an object with `"type": "object"` at the root, no `$schema`
/// (2020-12 is the default), and `{}` rather than `true` for a property that takes anything.
#[cfg(feature = "schemars")]
fn mcp_schema(
    tool: &str,
    which: &str,
    type_name: &str,
    schema: schemars::Schema,
) -> Result<JsonObject, Error> {
    let mut object = match schema.to_value() {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    };
    object.remove("$schema");
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err(Error::invalid_params(format!(
            "tool `{tool}`: the {which} type `{type_name}` has no `\"type\": \"object\"` schema at \
             its root, which MCP requires of `{}` (use a struct, or register with `tool` and a \
             hand-written schema)",
            if which == "argument" {
                "inputSchema"
            } else {
                "outputSchema"
            }
        )));
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for p in properties.values_mut() {
            match p {
                Value::Bool(true) => *p = Value::Object(JsonObject::new()),
                Value::Bool(false) => *p = serde_json::json!({"not": {}}),
                _ => {}
            }
        }
    }
    Ok(object)
}

/// `tool` with its `inputSchema` from `T` and its `outputSchema` from `R` (and, without a
/// description, `T`'s doc comment as its description).
#[cfg(feature = "schemars")]
pub(super) fn typed<T: schemars::JsonSchema, R: ToolOutput>(mut tool: Tool) -> Result<Tool, Error> {
    if !tool.input_schema.is_empty() || tool.output_schema.is_some() {
        return Err(Error::invalid_params(format!(
            "tool `{}`: a typed tool's schemas come from its argument and result types; leave \
             `input_schema` and `output_schema` empty (or register it with `tool` and \
             hand-written schemas)",
            tool.name
        )));
    }
    let input = mcp_schema(
        &tool.name,
        "argument",
        &T::schema_name(),
        input_schema_of::<T>(),
    )?;
    if tool.description.is_none()
        && let Some(Value::String(d)) = input.get("description")
    {
        tool.description = Some(d.clone());
    }
    tool.input_schema = input;
    tool.output_schema = R::output_schema()
        .map(|s| mcp_schema(&tool.name, "result", std::any::type_name::<R>(), s))
        .transpose()?;
    Ok(tool)
}

/// A tool of `name` whose schemas are still to be derived, with `description` unless empty.
#[cfg(feature = "schemars")]
pub(super) fn named(name: String, description: String) -> Tool {
    let mut tool = Tool::new(name, JsonObject::new());
    if !description.is_empty() {
        tool.description = Some(description);
    }
    tool
}

#[cfg(feature = "schemars")]
impl super::ServerBuilder {
    /// Registers a tool whose schemas come from its handler's types (feature `schemars`): the
    /// `inputSchema` from the argument type `T`, the `outputSchema` from the result type `R`
    /// when it is [`Json<U>`](Json) (and the result's `structuredContent` is then the value
    /// returned). An empty `description` takes `T`'s doc comment. Errors are those of
    /// [`tool`](Self::tool), plus a type whose schema is not an object at its root (reported by
    /// [`try_build`](Self::try_build)).
    ///
    /// ```
    /// use mcp_service::schemars::JsonSchema;
    /// use mcp_service::server::{Json, Server, ToolContext};
    /// use serde::{Deserialize, Serialize};
    ///
    /// /// Adds two numbers.
    /// #[derive(Deserialize, JsonSchema)]
    /// #[schemars(crate = "mcp_service::schemars")]
    /// struct AddArgs {
    ///     /// The first term.
    ///     a: i64,
    ///     /// The second term.
    ///     b: i64,
    /// }
    ///
    /// #[derive(Serialize, JsonSchema)]
    /// #[schemars(crate = "mcp_service::schemars")]
    /// struct Sum { total: i64 }
    ///
    /// let server = Server::builder("calc", "1.0")
    ///     .typed_tool("add", "", |args: AddArgs, _cx: ToolContext| async move {
    ///         Ok(Json(Sum { total: args.a + args.b }))
    ///     })
    ///     .try_build()?;
    /// # let _ = server;
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn typed_tool<T, F, Fut, R>(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: F,
    ) -> Self
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, super::ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<R, Error>> + Send + 'static,
        R: ToolOutput + 'static,
    {
        self.typed_tool_with(named(name.into(), description.into()), handler)
    }

    /// [`typed_tool`](Self::typed_tool) for a [`Tool`] with more than a name and a description
    /// (a title, annotations, icons, `execution`, `_meta`). Its `input_schema` must be left
    /// empty and its `output_schema` `None`: they are derived from the types, and a tool that
    /// has one of its own is refused rather than overwritten.
    ///
    /// ```
    /// use mcp_service::schema::{Tool, ToolAnnotations};
    /// use mcp_service::server::{Server, ToolContext};
    ///
    /// #[derive(serde::Deserialize, mcp_service::schemars::JsonSchema)]
    /// #[schemars(crate = "mcp_service::schemars")]
    /// struct Path { path: String }
    ///
    /// let tool = Tool {
    ///     name: "stat".into(),
    ///     annotations: Some(ToolAnnotations { read_only_hint: Some(true), ..Default::default() }),
    ///     ..Default::default()
    /// };
    /// let server = Server::builder("fs", "1.0")
    ///     .typed_tool_with(tool, |p: Path, _cx: ToolContext| async move { Ok(p.path) })
    ///     .try_build()?;
    /// # let _ = server;
    /// # Ok::<(), mcp_service::Error>(())
    /// ```
    pub fn typed_tool_with<T, F, Fut, R>(mut self, tool: Tool, handler: F) -> Self
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, super::ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<R, Error>> + Send + 'static,
        R: ToolOutput + 'static,
    {
        match typed::<T, R>(tool) {
            Ok(tool) => self.tool(tool, handler),
            Err(e) => {
                self.error.get_or_insert(e);
                self
            }
        }
    }
}

#[cfg(feature = "schemars")]
impl super::Server {
    /// Registers a typed tool at runtime (feature `schemars`): the schemas as in
    /// [`ServerBuilder::typed_tool_with`](super::ServerBuilder::typed_tool_with), the rest as
    /// in [`add_tool`](Self::add_tool).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`](mcp_proto::ErrorKind::InvalidParams) for a schema that is
    /// not an object at its root or a `tool` with schemas of its own,
    /// [`ErrorKind::DuplicateRegistration`](mcp_proto::ErrorKind::DuplicateRegistration) for a
    /// name already taken, and those of [`add_tool`](Self::add_tool).
    pub fn add_typed_tool<T, F, Fut, R>(&self, tool: Tool, handler: F) -> Result<(), Error>
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, super::ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<R, Error>> + Send + 'static,
        R: ToolOutput + 'static,
    {
        self.add_tool(typed::<T, R>(tool)?, handler)
    }
}

#[cfg(all(test, feature = "schemars"))]
mod tests {
    use super::*;
    use schemars::JsonSchema;

    /// Looks a note up.
    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Lookup {
        /// The note's id.
        id: u32,
        /// Anything at all.
        extra: Option<Value>,
        tags: Vec<String>,
    }

    #[derive(Serialize, JsonSchema)]
    struct Found {
        text: String,
    }

    #[test]
    fn schemas_are_objects_with_descriptions() {
        let tool = typed::<Lookup, Json<Found>>(Tool::new("lookup", JsonObject::new())).unwrap();
        let input = Value::Object(tool.input_schema.clone());
        assert_eq!(input["type"], "object");
        assert!(input.get("$schema").is_none());
        assert_eq!(tool.description.as_deref(), Some("Looks a note up."));
        assert_eq!(input["properties"]["id"]["description"], "The note's id.");
        assert_eq!(input["properties"]["id"]["type"], "integer");
        let required: Vec<&str> = input["required"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(required.contains(&"id") && required.contains(&"tags"));
        assert!(!required.contains(&"extra"));
        assert!(
            input["properties"]
                .as_object()
                .unwrap()
                .values()
                .all(Value::is_object)
        );
        let output = Value::Object(tool.output_schema.unwrap());
        assert_eq!(output["type"], "object");
        assert_eq!(output["properties"]["text"]["type"], "string");
        // Untyped results declare no output schema; an explicit description wins.
        let mut t = Tool::new("lookup", JsonObject::new());
        t.description = Some("mine".into());
        let t = typed::<Lookup, String>(t).unwrap();
        assert!(t.output_schema.is_none());
        assert_eq!(t.description.as_deref(), Some("mine"));
    }

    #[test]
    fn non_object_types_and_own_schemas_are_refused() {
        let e = typed::<u32, String>(Tool::new("n", JsonObject::new())).unwrap_err();
        assert_eq!(e.kind(), mcp_proto::ErrorKind::InvalidParams);
        assert!(e.message().contains("inputSchema"), "{}", e.message());
        let e = typed::<Lookup, Json<Vec<u8>>>(Tool::new("v", JsonObject::new())).unwrap_err();
        assert!(e.message().contains("outputSchema"), "{}", e.message());
        let own = Tool::new(
            "o",
            super::super::schema_of(serde_json::json!({"type": "object"})),
        );
        assert!(typed::<Lookup, String>(own).is_err());
    }

    #[test]
    fn input_schema_check() {
        assert!(check_input_schema("t", &JsonObject::new()).is_err());
        let s = super::super::schema_of(serde_json::json!({"type": "array"}));
        assert!(check_input_schema("t", &s).is_err());
        let s = super::super::schema_of(serde_json::json!({"type": "object"}));
        assert!(check_input_schema("t", &s).is_ok());
    }
}
