//! Tools: definitions, `tools/list`, `tools/call` and the 2026-07-28 multi round-trip
//! request (MRTR) pieces: [`InputRequiredResult`], [`InputRequests`], [`InputResponses`],
//! `requestState`, and [`RequestOutcome`] to tell a final result from an `input_required`
//! one (or a task handle of the tasks extension).

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use serde::de::{DeserializeOwned, Error as _, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::content::Content;
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::meta::{CacheScope, Cursor, Icon, JsonObject, Meta, RequestParams, ResultType};
use super::roots::ListRootsResult;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};
use super::tasks::TaskMetadata;

/// Hints about a tool's behaviour (2025-03-26+). Untrusted unless the server is trusted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// May destroy data (default true; meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// Interacts with an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// Whether a tool supports task-augmented execution (2025-11-25).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TaskSupport {
    /// No tasks (the default when absent).
    #[default]
    Forbidden,
    /// Tasks allowed.
    Optional,
    /// Tasks required.
    Required,
}

/// Execution properties of a tool (2025-11-25).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecution {
    /// Task support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_support: Option<TaskSupport>,
}

/// A tool the client can call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does (a hint for the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; `type` must be `"object"`.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent` (2025-06-18+; any schema in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Execution properties (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ToolExecution>,
    /// Icons (2025-11-25+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One `x-mcp-header` annotation of a tool's input schema (2026-07-28, SEP-2243): the
/// argument `property` is mirrored into the HTTP header `Mcp-Param-{header}` on the Streamable
/// HTTP transport.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    /// The header's name after `Mcp-Param-`.
    pub header: String,
    /// The top-level argument it mirrors.
    pub property: String,
}

/// The `x-mcp-header` annotations of an input schema, in property order: on top-level
/// `properties` only, each a non-empty HTTP token (RFC 9110 `tchar`s), unique without regard
/// to case, on a `string`, `integer` or `boolean` property (or one without a `type`). An
/// invalid annotation makes the whole tool invalid: a client drops such a tool.
///
/// ```
/// use mcp_proto::schema::tools::param_headers;
/// let schema = serde_json::json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"},
///     "n": {"type": "number"}
/// }});
/// let found = param_headers(schema.as_object().unwrap()).unwrap();
/// assert_eq!((found[0].header.as_str(), found[0].property.as_str()), ("Region", "region"));
/// let bad = serde_json::json!({"type": "object", "properties": {
///     "data": {"type": "object", "x-mcp-header": "Data"}
/// }});
/// assert!(param_headers(bad.as_object().unwrap()).is_err());
/// ```
///
/// # Errors
/// Why the annotations are invalid.
pub fn param_headers(input_schema: &JsonObject) -> Result<Vec<ParamHeader>, String> {
    let mut out: Vec<ParamHeader> = Vec::new();
    let Some(Value::Object(props)) = input_schema.get("properties") else {
        return Ok(out);
    };
    for (property, schema) in props {
        let Some(annotation) = schema.get("x-mcp-header") else {
            continue;
        };
        let Some(header) = annotation.as_str() else {
            return Err(alloc::format!(
                "`x-mcp-header` of `{property}` is not a string"
            ));
        };
        let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if header.is_empty() || !header.chars().all(tchar) {
            return Err(alloc::format!(
                "`x-mcp-header` {header:?} of `{property}` is not an HTTP token"
            ));
        }
        match schema.get("type") {
            None => {}
            Some(Value::String(t)) if matches!(t.as_str(), "string" | "integer" | "boolean") => {}
            Some(other) => {
                return Err(alloc::format!(
                    "`x-mcp-header` on `{property}` of type {other}: only string, integer and \
                     boolean properties are mirrored"
                ));
            }
        }
        if out.iter().any(|p| p.header.eq_ignore_ascii_case(header)) {
            return Err(alloc::format!("`x-mcp-header` {header:?} appears twice"));
        }
        out.push(ParamHeader {
            header: String::from(header),
            property: property.clone(),
        });
    }
    Ok(out)
}

impl Tool {
    /// This tool's `x-mcp-header` annotations ([`param_headers`]).
    ///
    /// # Errors
    /// Why they are invalid (a client then drops the tool).
    pub fn param_headers(&self) -> Result<Vec<ParamHeader>, String> {
        param_headers(&self.input_schema)
    }

    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Tool {
            name: name.into(),
            input_schema,
            ..Tool::default()
        }
    }

    /// A tool taking no arguments (`inputSchema` = `{"type":"object"}`).
    pub fn without_params(name: impl Into<String>) -> Self {
        Tool::new(name, object_schema())
    }

    /// Adds a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// The JSON Schema `{"type":"object"}`.
pub fn object_schema() -> JsonObject {
    let mut m = JsonObject::new();
    m.insert("type".into(), Value::from("object"));
    m
}

/// Result of `tools/list`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// This page of tools.
    pub tools: Vec<Tool>,
    /// Cursor of the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Cache lifetime in milliseconds (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache scope (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// `"complete"` (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Params of `tools/call`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The tool's name.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Asks for task-augmented execution (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Answers to the server's input requests (2026-07-28 retry after `input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The opaque state from the `input_required` result, echoed verbatim (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Shorter name for [`CallToolRequestParams`].
pub type CallToolParams = CallToolRequestParams;

impl CallToolRequestParams {
    /// Calls `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: JsonObject) -> Self {
        CallToolRequestParams {
            name: name.into(),
            arguments: Some(arguments),
            ..CallToolRequestParams::default()
        }
    }
}

/// Result of `tools/call`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured result.
    pub content: Vec<Content>,
    /// Structured result, conforming to the tool's `outputSchema` (2025-06-18+; an object
    /// before 2026-07-28, any JSON value since).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed (tool errors go here, not in a JSON-RPC error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `"complete"` (required in 2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CallToolResult {
    /// A successful result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(text)],
            ..CallToolResult::default()
        }
    }

    /// A failed result (`isError: true`) of one text block.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(message)],
            is_error: Some(true),
            ..CallToolResult::default()
        }
    }

    /// A successful structured result, with its JSON text as a text block for older clients.
    pub fn structured(value: Value) -> Self {
        let text = serde_json::to_string(&value).unwrap_or_default();
        CallToolResult {
            content: vec![Content::text(text)],
            structured_content: Some(value),
            ..CallToolResult::default()
        }
    }

    /// A successful result of the given blocks.
    pub fn with_content(content: Vec<Content>) -> Self {
        CallToolResult {
            content,
            ..CallToolResult::default()
        }
    }

    /// Sets `resultType: "complete"` (for 2026-07-28 peers).
    pub fn complete(mut self) -> Self {
        self.result_type = Some(ResultType::Complete);
        self
    }

    /// Whether the result reports a tool error.
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }
}

/// A server-to-client request embedded in an [`InputRequiredResult`] (2026-07-28): the
/// `{method, params}` of `elicitation/create`, `sampling/createMessage` or `roots/list`,
/// without `jsonrpc` or `id`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create`.
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list` (params are optional).
    ListRoots(Option<RequestParams>),
    /// Any other method, kept as is.
    Other {
        /// The method name.
        method: String,
        /// The params, if any.
        params: Option<Value>,
    },
}

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &str {
        match self {
            InputRequest::Elicit(_) => super::methods::ELICITATION_CREATE,
            InputRequest::CreateMessage(_) => super::methods::SAMPLING_CREATE_MESSAGE,
            InputRequest::ListRoots(_) => super::methods::ROOTS_LIST,
            InputRequest::Other { method, .. } => method,
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let has_params = match self {
            InputRequest::ListRoots(p) => p.is_some(),
            InputRequest::Other { params, .. } => params.is_some(),
            _ => true,
        };
        let mut st = s.serialize_struct("InputRequest", 1 + usize::from(has_params))?;
        st.serialize_field("method", self.method())?;
        match self {
            InputRequest::Elicit(p) => st.serialize_field("params", p)?,
            InputRequest::CreateMessage(p) => st.serialize_field("params", p)?,
            InputRequest::ListRoots(Some(p)) => st.serialize_field("params", p)?,
            InputRequest::Other {
                params: Some(p), ..
            } => st.serialize_field("params", p)?,
            InputRequest::ListRoots(None) | InputRequest::Other { params: None, .. } => {}
        }
        st.end()
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(InputRequestVisitor)
    }
}

/// Reads `{method, params}`. When `method` comes first (as every encoder here writes it),
/// `params` is parsed straight into its type; otherwise it is buffered as a [`Value`].
struct InputRequestVisitor;

fn input_request_from<E: serde::de::Error>(
    method: String,
    params: Option<Value>,
) -> Result<InputRequest, E> {
    let need = |p: Option<Value>| p.ok_or_else(|| E::missing_field("params"));
    Ok(match method.as_str() {
        super::methods::ELICITATION_CREATE => {
            InputRequest::Elicit(serde_json::from_value(need(params)?).map_err(E::custom)?)
        }
        super::methods::SAMPLING_CREATE_MESSAGE => {
            InputRequest::CreateMessage(serde_json::from_value(need(params)?).map_err(E::custom)?)
        }
        super::methods::ROOTS_LIST => InputRequest::ListRoots(match params {
            Some(p) => Some(serde_json::from_value(p).map_err(E::custom)?),
            None => None,
        }),
        _ => InputRequest::Other { method, params },
    })
}

impl<'de> Visitor<'de> for InputRequestVisitor {
    type Value = InputRequest;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an input request object {method, params}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<InputRequest, A::Error> {
        let mut method: Option<String> = None;
        let mut buffered: Option<Value> = None;
        let mut parsed: Option<InputRequest> = None;
        while let Some(key) = a.next_key::<String>()? {
            match key.as_str() {
                "method" => {
                    if method.is_some() {
                        return Err(A::Error::duplicate_field("method"));
                    }
                    method = Some(a.next_value()?);
                }
                "params" => {
                    if buffered.is_some() || parsed.is_some() {
                        return Err(A::Error::duplicate_field("params"));
                    }
                    match method.as_deref() {
                        Some(super::methods::ELICITATION_CREATE) => {
                            parsed = Some(InputRequest::Elicit(a.next_value()?));
                        }
                        Some(super::methods::SAMPLING_CREATE_MESSAGE) => {
                            parsed = Some(InputRequest::CreateMessage(a.next_value()?));
                        }
                        Some(super::methods::ROOTS_LIST) => {
                            parsed = Some(InputRequest::ListRoots(Some(a.next_value()?)));
                        }
                        _ => buffered = Some(a.next_value()?),
                    }
                }
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        let method = method.ok_or_else(|| A::Error::missing_field("method"))?;
        match parsed {
            Some(p) => Ok(p),
            None => input_request_from(method, buffered),
        }
    }
}

/// A client's answer to one [`InputRequest`], told apart by its required fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum InputResponse {
    /// Answer to `sampling/createMessage`.
    CreateMessage(Box<CreateMessageResult>),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// Anything else, kept as is.
    Other(Value),
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(Box::new(r))
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

impl From<ElicitRequestParams> for InputRequest {
    fn from(p: ElicitRequestParams) -> Self {
        InputRequest::Elicit(p)
    }
}

impl From<CreateMessageRequestParams> for InputRequest {
    fn from(p: CreateMessageRequestParams) -> Self {
        InputRequest::CreateMessage(p)
    }
}

/// Server-to-client requests the client must fulfil, by server-chosen key.
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answers, under the same keys as the [`InputRequests`].
pub type InputResponses = BTreeMap<String, InputResponse>;

/// `resultType: "input_required"` (2026-07-28, for `tools/call`, `prompts/get`,
/// `resources/read`): the client must fulfil `inputRequests` and retry the original request
/// (with a new id) carrying `inputResponses` and the `requestState` echoed verbatim. At least
/// one of the two fields is present.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// `"input_required"`.
    pub result_type: ResultType,
    /// Requests to fulfil before retrying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state to echo on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Default for InputRequiredResult {
    fn default() -> Self {
        InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: None,
            request_state: None,
            meta: None,
        }
    }
}

impl InputRequiredResult {
    /// Asks for `requests`.
    pub fn new(requests: InputRequests) -> Self {
        InputRequiredResult {
            input_requests: Some(requests),
            ..InputRequiredResult::default()
        }
    }

    /// Adds the opaque state to echo.
    pub fn with_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// The result of a request that may answer `input_required` (2026-07-28) or, with the tasks
/// extension, a task handle. Deserialises by `resultType`; a missing or `"complete"` (or
/// unknown) `resultType` yields [`RequestOutcome::Complete`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RequestOutcome<T> {
    /// The final result.
    Complete(T),
    /// More input is needed.
    InputRequired(InputRequiredResult),
    /// A task was created (tasks extension, `resultType: "task"`).
    Task(Box<super::tasks::extension::Task>),
}

impl<T> RequestOutcome<T> {
    /// The final result, if this is one.
    pub fn complete(self) -> Option<T> {
        match self {
            RequestOutcome::Complete(t) => Some(t),
            _ => None,
        }
    }
}

impl<T: DeserializeOwned> RequestOutcome<T> {
    /// Parses a result from JSON text in two passes (a peek at `resultType`, then the right
    /// type), so that nothing is buffered and nested objects keep their key order.
    ///
    /// # Errors
    /// The `serde_json::Error` of text that is not JSON, or not a result of the kind its
    /// `resultType` names (an `input_required` result, a task, or else `T`).
    pub fn from_json_str(s: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Peek {
            #[serde(rename = "resultType", default)]
            result_type: Option<ResultType>,
        }
        let peek: Peek = serde_json::from_str(s)?;
        match peek.result_type {
            Some(ResultType::InputRequired) => {
                serde_json::from_str(s).map(RequestOutcome::InputRequired)
            }
            Some(ResultType::Task) => serde_json::from_str(s).map(RequestOutcome::Task),
            _ => serde_json::from_str(s).map(RequestOutcome::Complete),
        }
    }
}

impl<T: Serialize> Serialize for RequestOutcome<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestOutcome::Complete(t) => t.serialize(s),
            RequestOutcome::InputRequired(r) => r.serialize(s),
            RequestOutcome::Task(t) => t.serialize(s),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for RequestOutcome<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let kind = v
            .get("resultType")
            .and_then(Value::as_str)
            .map(ResultType::parse);
        let out = match kind {
            Some(ResultType::InputRequired) => {
                serde_json::from_value(v).map(RequestOutcome::InputRequired)
            }
            Some(ResultType::Task) => serde_json::from_value(v).map(RequestOutcome::Task),
            _ => serde_json::from_value(v).map(RequestOutcome::Complete),
        };
        out.map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::elicitation::{ElicitationSchema, StringSchema};
    use crate::schema::meta::Role;
    use crate::schema::roots::Root;
    use crate::schema::sampling::SamplingMessage;
    use crate::schema::tasks::TaskStatus;
    use alloc::string::ToString;
    use serde_json::json;

    fn obj(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    fn elicit() -> ElicitRequestParams {
        ElicitRequestParams::form(
            "Confirm?",
            ElicitationSchema::new().required_field("ok", StringSchema::default()),
        )
    }

    #[test]
    fn tool_constructors() {
        assert_eq!(Value::Object(object_schema()), json!({"type": "object"}));
        let t = Tool::without_params("ping").with_description("Pings");
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"name": "ping", "description": "Pings", "inputSchema": {"type": "object"}})
        );
        let schema = obj(json!({"type": "object", "properties": {"q": {"type": "string"}}}));
        let t = Tool::new("search", schema.clone());
        assert_eq!(t.input_schema, schema);
        assert_eq!(t.description, None);
    }

    #[test]
    fn tool_full_round_trip() {
        let wire = json!({
            "name": "delete_file",
            "title": "Delete file",
            "description": "Deletes a file",
            "inputSchema": {"type": "object", "required": ["path"]},
            "outputSchema": {"type": "object"},
            "annotations": {
                "title": "Delete",
                "readOnlyHint": false,
                "destructiveHint": true,
                "idempotentHint": true,
                "openWorldHint": false
            },
            "execution": {"taskSupport": "optional"},
            "icons": [{"src": "https://x/trash.svg", "theme": "light"}],
            "_meta": {"k": 1}
        });
        let t: Tool = serde_json::from_value(wire.clone()).unwrap();
        let a = t.annotations.as_ref().unwrap();
        assert_eq!(a.destructive_hint, Some(true));
        assert_eq!(a.open_world_hint, Some(false));
        assert_eq!(
            t.execution.as_ref().unwrap().task_support,
            Some(TaskSupport::Optional)
        );
        assert_eq!(serde_json::to_value(&t).unwrap(), wire);

        assert!(serde_json::from_value::<Tool>(json!({"name": "x"})).is_err());
        assert!(serde_json::from_value::<Tool>(json!({"name": "x", "inputSchema": true})).is_err());
    }

    #[test]
    fn task_support_names() {
        assert_eq!(TaskSupport::default(), TaskSupport::Forbidden);
        for (t, s) in [
            (TaskSupport::Forbidden, "forbidden"),
            (TaskSupport::Optional, "optional"),
            (TaskSupport::Required, "required"),
        ] {
            assert_eq!(serde_json::to_value(t).unwrap(), json!(s));
            assert_eq!(serde_json::from_value::<TaskSupport>(json!(s)).unwrap(), t);
        }
        assert!(serde_json::from_value::<TaskSupport>(json!("always")).is_err());
    }

    #[test]
    fn list_tools_result() {
        let r = ListToolsResult {
            tools: vec![Tool::without_params("a")],
            next_cursor: Some("n".into()),
            ttl_ms: Some(10),
            cache_scope: Some(CacheScope::Public),
            result_type: Some(ResultType::Complete),
            meta: None,
        };
        let wire = json!({
            "tools": [{"name": "a", "inputSchema": {"type": "object"}}],
            "nextCursor": "n",
            "ttlMs": 10,
            "cacheScope": "public",
            "resultType": "complete"
        });
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert_eq!(serde_json::from_value::<ListToolsResult>(wire).unwrap(), r);
        assert_eq!(
            serde_json::to_value(ListToolsResult::default()).unwrap(),
            json!({"tools": []})
        );
    }

    #[test]
    fn call_tool_params() {
        let p = CallToolRequestParams::new("add", obj(json!({"a": 1, "b": 2})));
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"name": "add", "arguments": {"a": 1, "b": 2}})
        );
        assert_eq!(
            serde_json::to_value(CallToolParams::default()).unwrap(),
            json!({"name": ""})
        );

        let wire = json!({
            "name": "deploy",
            "arguments": {},
            "task": {"ttl": 60000},
            "inputResponses": {
                "confirm": {"action": "accept", "content": {"ok": "yes"}},
                "roots": {"roots": [{"uri": "file:///w"}]}
            },
            "requestState": "state-1",
            "_meta": {"progressToken": "p"}
        });
        let p: CallToolRequestParams = serde_json::from_value(wire.clone()).unwrap();
        let responses = p.input_responses.as_ref().unwrap();
        assert!(matches!(responses["confirm"], InputResponse::Elicit(_)));
        assert!(matches!(responses["roots"], InputResponse::ListRoots(_)));
        assert_eq!(p.task, Some(TaskMetadata { ttl: Some(60000) }));
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);

        assert!(serde_json::from_value::<CallToolRequestParams>(json!({})).is_err());
        assert!(
            serde_json::from_value::<CallToolRequestParams>(json!({"name": "x", "arguments": [1]}))
                .is_err()
        );
    }

    #[test]
    fn call_tool_result_text_and_error() {
        let r = CallToolResult::text("4");
        assert!(!r.is_error());
        assert_eq!(r.is_error, None);
        assert_eq!(r.content[0].as_text(), Some("4"));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"content": [{"type": "text", "text": "4"}]})
        );

        let e = CallToolResult::error("boom");
        assert!(e.is_error());
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true})
        );

        let explicit_false = CallToolResult {
            is_error: Some(false),
            ..CallToolResult::default()
        };
        assert!(!explicit_false.is_error());
    }

    #[test]
    fn call_tool_result_structured_and_complete() {
        let v = json!({"temperature": 22.5, "conditions": "cloudy"});
        let r = CallToolResult::structured(v.clone());
        assert_eq!(r.structured_content.as_ref(), Some(&v));
        let text = r.content[0].as_text().unwrap();
        assert_eq!(serde_json::from_str::<Value>(text).unwrap(), v);
        assert!(!r.is_error());

        // 2026-07-28 allows any JSON value.
        let r = CallToolResult::structured(json!([1, 2])).complete();
        assert_eq!(r.result_type, Some(ResultType::Complete));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "content": [{"type": "text", "text": "[1,2]"}],
                "structuredContent": [1, 2],
                "resultType": "complete"
            })
        );

        let r = CallToolResult::with_content(vec![Content::image("AA==", "image/png")]);
        assert_eq!(r.content.len(), 1);
        assert_eq!(r.structured_content, None);
        assert_eq!(r.result_type, None);
    }

    #[test]
    fn call_tool_result_round_trip_and_rejection() {
        let wire = json!({
            "content": [],
            "structuredContent": {"x": 1},
            "isError": false,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        });
        let r: CallToolResult = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert!(serde_json::from_value::<CallToolResult>(json!({})).is_err());
        assert!(
            serde_json::from_value::<CallToolResult>(json!({"content": [], "isError": "no"}))
                .is_err()
        );
    }

    #[test]
    fn input_request_methods_and_serialisation() {
        let e = InputRequest::from(elicit());
        assert_eq!(e.method(), "elicitation/create");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({
                "method": "elicitation/create",
                "params": {
                    "message": "Confirm?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"ok": {"type": "string"}},
                        "required": ["ok"]
                    }
                }
            })
        );

        let s = InputRequest::from(CreateMessageRequestParams::new(
            vec![SamplingMessage::user("hi")],
            10,
        ));
        assert_eq!(s.method(), "sampling/createMessage");
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            json!({
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                    "maxTokens": 10
                }
            })
        );

        let r = InputRequest::ListRoots(None);
        assert_eq!(r.method(), "roots/list");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"method": "roots/list"})
        );
        let r = InputRequest::ListRoots(Some(RequestParams::default()));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"method": "roots/list", "params": {}})
        );

        let o = InputRequest::Other {
            method: "x/y".into(),
            params: None,
        };
        assert_eq!(o.method(), "x/y");
        assert_eq!(serde_json::to_value(&o).unwrap(), json!({"method": "x/y"}));
        let o = InputRequest::Other {
            method: "x/y".into(),
            params: Some(json!([1])),
        };
        assert_eq!(
            serde_json::to_value(&o).unwrap(),
            json!({"method": "x/y", "params": [1]})
        );
    }

    #[test]
    fn input_request_deserialises_by_method() {
        for req in [
            InputRequest::from(elicit()),
            InputRequest::from(CreateMessageRequestParams::new(Vec::new(), 1)),
            InputRequest::ListRoots(None),
            InputRequest::ListRoots(Some(RequestParams::default())),
            InputRequest::Other {
                method: "vendor/thing".into(),
                params: Some(json!({"a": 1})),
            },
            InputRequest::Other {
                method: "vendor/thing".into(),
                params: None,
            },
        ] {
            let text = serde_json::to_string(&req).unwrap();
            assert_eq!(
                serde_json::from_str::<InputRequest>(&text).unwrap(),
                req,
                "{text}"
            );
            let v = serde_json::to_value(&req).unwrap();
            assert_eq!(serde_json::from_value::<InputRequest>(v).unwrap(), req);
        }
    }

    #[test]
    fn input_request_params_before_method() {
        let r: InputRequest = serde_json::from_str(
            r#"{"params":{"message":"m","requestedSchema":{"type":"object","properties":{}}},"method":"elicitation/create"}"#,
        )
        .unwrap();
        assert_eq!(
            r,
            InputRequest::Elicit(ElicitRequestParams::form("m", ElicitationSchema::new()))
        );
        let r: InputRequest =
            serde_json::from_str(r#"{"params":{"_meta":{"k":1}},"method":"roots/list"}"#).unwrap();
        assert!(matches!(r, InputRequest::ListRoots(Some(p)) if p.meta.is_some()));
        let r: InputRequest = serde_json::from_str(
            r#"{"params":{"messages":[],"maxTokens":3},"method":"sampling/createMessage"}"#,
        )
        .unwrap();
        assert!(matches!(r, InputRequest::CreateMessage(p) if p.max_tokens == 3));
    }

    #[test]
    fn input_request_ignores_extra_members() {
        let r: InputRequest =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":1,"method":"roots/list"}"#).unwrap();
        assert_eq!(r, InputRequest::ListRoots(None));
    }

    #[test]
    fn input_request_keeps_form_field_order() {
        let r: InputRequest = serde_json::from_str(
            r#"{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}}}}}"#,
        )
        .unwrap();
        let InputRequest::Elicit(ElicitRequestParams::Form(f)) = &r else {
            panic!("not a form elicitation: {r:?}");
        };
        let names: Vec<&str> = f
            .requested_schema
            .properties
            .iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["z", "a"]);
    }

    #[test]
    fn malformed_input_requests_are_rejected() {
        for bad in [
            r#"{}"#,
            r#"{"params":{}}"#,
            r#"{"method":"elicitation/create"}"#,
            r#"{"method":"sampling/createMessage"}"#,
            r#"{"method":"elicitation/create","params":{"message":"m"}}"#,
            r#"{"params":{"message":"m"},"method":"elicitation/create"}"#,
            r#"{"method":"sampling/createMessage","params":{"messages":[]}}"#,
            r#"{"method":"roots/list","params":null}"#,
            r#"{"method":"roots/list","params":{"_meta":1}}"#,
            r#"{"method":"roots/list","method":"roots/list"}"#,
            r#"{"method":"x","params":{},"params":{}}"#,
            r#"{"method":"roots/list","params":{},"params":{}}"#,
            r#"{"method":5}"#,
            r#"["roots/list"]"#,
            r#""roots/list""#,
        ] {
            assert!(serde_json::from_str::<InputRequest>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn input_response_is_told_apart_by_fields() {
        let sampled: InputResponse = serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "4"},
            "model": "m"
        }))
        .unwrap();
        assert!(matches!(&sampled, InputResponse::CreateMessage(r) if r.role == Role::Assistant));

        let roots: InputResponse =
            serde_json::from_value(json!({"roots": [{"uri": "file:///a"}]})).unwrap();
        assert_eq!(
            roots,
            InputResponse::ListRoots(ListRootsResult {
                roots: vec![Root::new("file:///a")],
                meta: None,
            })
        );

        let elicited: InputResponse =
            serde_json::from_value(json!({"action": "accept", "content": {"n": 1}})).unwrap();
        assert!(matches!(&elicited, InputResponse::Elicit(r) if r.content.is_some()));

        let other: InputResponse = serde_json::from_value(json!({"action": "submit"})).unwrap();
        assert_eq!(other, InputResponse::Other(json!({"action": "submit"})));
    }

    #[test]
    fn input_response_from_impls_serialise_flat() {
        let r = InputResponse::from(CreateMessageResult::text("m", "hi"));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({
                "role": "assistant",
                "content": {"type": "text", "text": "hi"},
                "model": "m",
                "stopReason": "endTurn"
            })
        );
        let r = InputResponse::from(ListRootsResult::default());
        assert_eq!(serde_json::to_value(&r).unwrap(), json!({"roots": []}));
        let r = InputResponse::from(ElicitResult::decline());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"action": "decline"})
        );
    }

    #[test]
    fn input_required_result() {
        let d = InputRequiredResult::default();
        assert_eq!(d.result_type, ResultType::InputRequired);
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({"resultType": "input_required"})
        );

        let mut reqs = InputRequests::new();
        reqs.insert("roots".into(), InputRequest::ListRoots(None));
        let r = InputRequiredResult::new(reqs).with_state("opaque");
        let wire = json!({
            "resultType": "input_required",
            "inputRequests": {"roots": {"method": "roots/list"}},
            "requestState": "opaque"
        });
        assert_eq!(serde_json::to_value(&r).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<InputRequiredResult>(wire).unwrap(),
            r
        );
        assert!(
            serde_json::from_value::<InputRequiredResult>(json!({"requestState": "s"})).is_err()
        );
    }

    fn task_json(result_type: &str) -> Value {
        json!({
            "resultType": result_type,
            "taskId": "t1",
            "status": "working",
            "createdAt": "2026-07-28T00:00:00Z",
            "lastUpdatedAt": "2026-07-28T00:00:00Z",
            "ttlMs": null
        })
    }

    /// Parses with both the `Deserialize` impl and `from_json_str`, checking they agree.
    fn outcome(v: &Value) -> RequestOutcome<CallToolResult> {
        let a: RequestOutcome<CallToolResult> = serde_json::from_value(v.clone()).unwrap();
        let b = RequestOutcome::<CallToolResult>::from_json_str(&v.to_string()).unwrap();
        assert_eq!(a, b);
        a
    }

    #[test]
    fn request_outcome_classifies_by_result_type() {
        let legacy = outcome(&json!({"content": [{"type": "text", "text": "ok"}]}));
        assert_eq!(legacy, RequestOutcome::Complete(CallToolResult::text("ok")));

        let modern = outcome(&json!({"content": [], "resultType": "complete"}));
        assert!(
            matches!(&modern, RequestOutcome::Complete(r) if r.result_type == Some(ResultType::Complete))
        );
        assert!(modern.complete().is_some());

        let input = outcome(&json!({
            "resultType": "input_required",
            "inputRequests": {"e": {"method": "elicitation/create", "params": {"mode": "url", "message": "m", "url": "https://x"}}},
            "requestState": "s"
        }));
        let RequestOutcome::InputRequired(ir) = &input else {
            panic!("not input_required: {input:?}");
        };
        assert_eq!(ir.request_state.as_deref(), Some("s"));
        assert_eq!(
            ir.input_requests.as_ref().unwrap()["e"].method(),
            "elicitation/create"
        );
        assert_eq!(input.complete(), None);

        let task = outcome(&task_json("task"));
        let RequestOutcome::Task(t) = &task else {
            panic!("not a task: {task:?}");
        };
        assert_eq!(t.task_id, "t1");
        assert_eq!(t.status, TaskStatus::Working);
    }

    #[test]
    fn request_outcome_unknown_result_type_is_complete() {
        let o = outcome(&json!({"content": [], "resultType": "streaming"}));
        assert!(
            matches!(&o, RequestOutcome::Complete(r) if r.result_type == Some(ResultType::Other("streaming".into())))
        );
    }

    #[test]
    fn request_outcome_serialises_transparently() {
        for wire in [
            json!({"content": [{"type": "text", "text": "ok"}], "resultType": "complete"}),
            json!({"resultType": "input_required", "requestState": "s"}),
            task_json("task"),
        ] {
            let o: RequestOutcome<CallToolResult> = serde_json::from_value(wire.clone()).unwrap();
            assert_eq!(serde_json::to_value(&o).unwrap(), wire);
        }
    }

    #[test]
    fn request_outcome_rejects_mismatched_bodies() {
        for bad in [
            json!({"resultType": "complete"}),
            json!({}),
            json!({"resultType": "task", "content": []}),
            json!({"resultType": "input_required", "inputRequests": {"k": {"params": {}}}}),
            json!({"content": [], "resultType": 1}),
            json!([]),
        ] {
            assert!(
                serde_json::from_value::<RequestOutcome<CallToolResult>>(bad.clone()).is_err(),
                "{bad}"
            );
            assert!(
                RequestOutcome::<CallToolResult>::from_json_str(&bad.to_string()).is_err(),
                "{bad}"
            );
        }
        assert!(RequestOutcome::<CallToolResult>::from_json_str("{").is_err());
    }
}
