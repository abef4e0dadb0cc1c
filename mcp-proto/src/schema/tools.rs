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

impl Tool {
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
