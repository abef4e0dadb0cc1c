//! Validates the typed wire types of `mcp_proto::schema` against the official JSON Schema of
//! every MCP version (fixtures under `tests/fixtures/schema/<version>/schema.json`, copied
//! verbatim from the specification repository), and parses the upstream 2026-07-28 examples
//! (`tests/fixtures/examples/2026-07-28/<TypeName>/*.json`) with the matching types.
//!
//! For each version, samples of every request params, result, notification params,
//! capability and content type that exists in that version are built with our types,
//! serialised, validated against the version's definition (requests and notifications
//! wrapped in their JSON-RPC envelope, since older schemas have no `*Params` definitions), and
//! deserialised back (from text and from a `Value`) to check the round trip.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use jsonschema::{Validator, ValidatorMap};
use mcp_proto::ProtocolVersion;
use mcp_proto::ProtocolVersion::{
    V2024_11_05 as V1, V2025_03_26 as V2, V2025_06_18 as V3, V2025_11_25 as V4, V2026_07_28 as V5,
};
use mcp_proto::RequestId;
use mcp_proto::schema::tasks::extension;
use mcp_proto::schema::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

// ---------------------------------------------------------------------------------------------
// Schema loading and validation
// ---------------------------------------------------------------------------------------------

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// All definitions of one version's schema, compiled once.
struct VersionSchema {
    map: ValidatorMap,
    defs_prefix: &'static str,
    defs: Map<String, Value>,
}

impl VersionSchema {
    fn load(v: ProtocolVersion, strict: bool) -> VersionSchema {
        let path = fixtures().join(format!("schema/{}/schema.json", v.as_str()));
        let text = std::fs::read_to_string(&path).expect("schema fixture");
        let mut schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        if strict {
            close_objects(&mut schema);
        }
        let (defs_prefix, defs) = if let Some(d) = schema.get("$defs") {
            ("#/$defs/", d.as_object().expect("$defs object").clone())
        } else {
            (
                "#/definitions/",
                schema["definitions"]
                    .as_object()
                    .expect("definitions object")
                    .clone(),
            )
        };
        let map = jsonschema::options()
            .should_validate_formats(true)
            .build_map(&schema)
            .expect("schema compiles");
        VersionSchema {
            map,
            defs_prefix,
            defs,
        }
    }

    fn has(&self, def: &str) -> bool {
        self.defs.contains_key(def)
    }

    fn validator(&self, def: &str) -> &Validator {
        let ptr = format!("{}{}", self.defs_prefix, def);
        self.map
            .get(&ptr)
            .unwrap_or_else(|| panic!("no definition {ptr}"))
    }

    /// The validation errors of `instance` against `def` (empty when valid).
    fn errors(&self, def: &str, instance: &Value) -> Vec<String> {
        self.validator(def)
            .iter_errors(instance)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect()
    }
}

/// Sets `additionalProperties: false` on every object schema that declares `properties` but
/// no `additionalProperties` (TypeScript interfaces without an index signature).
fn close_objects(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.contains_key("properties") && !m.contains_key("additionalProperties") {
                m.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (_, x) in m.iter_mut() {
                close_objects(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(close_objects),
        _ => {}
    }
}

fn schemas() -> &'static HashMap<ProtocolVersion, VersionSchema> {
    use std::sync::OnceLock;
    static S: OnceLock<HashMap<ProtocolVersion, VersionSchema>> = OnceLock::new();
    S.get_or_init(|| {
        ProtocolVersion::ALL
            .into_iter()
            .map(|v| (v, VersionSchema::load(v, false)))
            .collect()
    })
}

/// The same schemas with closed objects (see [`close_objects`]): a sample that passes them
/// carries no member the version does not define.
fn strict_schemas() -> &'static HashMap<ProtocolVersion, VersionSchema> {
    use std::sync::OnceLock;
    static S: OnceLock<HashMap<ProtocolVersion, VersionSchema>> = OnceLock::new();
    S.get_or_init(|| {
        ProtocolVersion::ALL
            .into_iter()
            .map(|v| (v, VersionSchema::load(v, true)))
            .collect()
    })
}

/// Whether the strict pass applies to `def`: definitions built with `allOf` (error responses,
/// `Result & Task`) cannot be closed branch by branch.
fn strict_applies(def: &str) -> bool {
    !def.ends_with("Error")
        && !matches!(
            def,
            "TaskStatusNotification" | "GetTaskResult" | "CancelTaskResult"
        )
}

/// Adapts an instance to the strict schemas: before 2025-11-25 the request and notification
/// definitions extend `Request` / `Notification` (no `jsonrpc` / `id`), and their generated
/// `params` omit the `_meta` that every request and notification may carry.
fn strict_instance(v: ProtocolVersion, instance: &Value) -> Value {
    let mut inst = instance.clone();
    if v < V4
        && let Some(o) = inst.as_object_mut()
        && o.contains_key("method")
        && o.contains_key("jsonrpc")
    {
        o.remove("jsonrpc");
        o.remove("id");
        if let Some(p) = o.get_mut("params").and_then(Value::as_object_mut) {
            p.remove("_meta");
        }
    }
    inst
}

// ---------------------------------------------------------------------------------------------
// JSON helpers
// ---------------------------------------------------------------------------------------------

/// Structural equality where numbers compare by value (`50` == `50.0`).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// Serialises `sample`, parses it back from text and from a `Value`, and checks that both
/// re-serialise to the same JSON.
fn roundtrip<T: Serialize + DeserializeOwned>(sample: &T) -> Result<Value, String> {
    let value = serde_json::to_value(sample).map_err(|e| format!("serialise: {e}"))?;
    let text = serde_json::to_string(sample).map_err(|e| format!("serialise: {e}"))?;
    let from_text: T = serde_json::from_str(&text).map_err(|e| format!("parse text: {e}"))?;
    let from_value: T =
        serde_json::from_value(value.clone()).map_err(|e| format!("parse value: {e}"))?;
    for (how, back) in [("text", &from_text), ("value", &from_value)] {
        let again = serde_json::to_value(back).map_err(|e| format!("re-serialise: {e}"))?;
        if !json_eq(&value, &again) {
            return Err(format!(
                "round trip via {how} differs:\n  first:  {value}\n  second: {again}"
            ));
        }
    }
    Ok(value)
}

// ---------------------------------------------------------------------------------------------
// The check collector
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
struct V(ProtocolVersion);

impl V {
    fn ge(self, o: ProtocolVersion) -> bool {
        self.0 >= o
    }
    fn modern(self) -> bool {
        self.0.is_stateless()
    }
    fn legacy(self) -> bool {
        !self.modern()
    }
    /// `resultType` for this version.
    fn rt(self) -> Option<ResultType> {
        self.modern().then_some(ResultType::Complete)
    }
    fn ttl(self) -> Option<u64> {
        self.modern().then_some(60_000)
    }
    fn scope(self) -> Option<CacheScope> {
        self.modern().then_some(CacheScope::Public)
    }
    fn title(self, t: &str) -> Option<String> {
        self.ge(V3).then(|| t.to_string())
    }
    fn icons(self) -> Option<Vec<Icon>> {
        self.ge(V4).then(|| {
            vec![
                Icon {
                    src: "https://example.com/icon.png".into(),
                    mime_type: Some("image/png".into()),
                    sizes: Some(vec!["48x48".into()]),
                    theme: Some(IconTheme::Light),
                },
                Icon::new("data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="),
            ]
        })
    }
    /// `_meta` on entities (2025-06-18+).
    fn emeta(self) -> Option<Meta> {
        self.ge(V3)
            .then(|| obj(json!({"com.example/origin": "unit-test", "n": 1})))
    }
    fn ann(self) -> Option<Annotations> {
        Some(Annotations {
            audience: Some(vec![Role::User, Role::Assistant]),
            priority: Some(0.5),
            last_modified: self.ge(V3).then(|| "2025-01-12T15:00:58Z".into()),
        })
    }
    fn client_caps(self) -> ClientCapabilities {
        ClientCapabilities {
            elicitation: self.ge(V3).then(ElicitationCapability::default),
            ..ClientCapabilities::default()
        }
    }
    fn client_info(self) -> Implementation {
        Implementation {
            title: self.title("Example Client"),
            ..Implementation::new("example-client", "1.2.3")
        }
    }
    fn server_info(self) -> Implementation {
        Implementation {
            title: self.title("Example Server"),
            icons: self.icons(),
            description: self.ge(V4).then(|| "Serves examples".into()),
            website_url: self.ge(V4).then(|| "https://example.com".into()),
            ..Implementation::new("example-server", "0.9.0")
        }
    }
    /// Request `_meta`: the required per-request keys in 2026-07-28, a progress token before.
    fn req_meta(self) -> Option<Meta> {
        if self.modern() {
            Some(
                RequestMeta::new(self.0.as_str(), self.client_caps())
                    .with_client_info(self.client_info())
                    .with_progress_token("tok-1")
                    .to_meta()
                    .expect("meta"),
            )
        } else {
            Some(progress_meta(&RequestId::from("tok-1")))
        }
    }
    /// Request `_meta` that a request of this version must have (none before 2026-07-28).
    fn req_meta_min(self) -> Option<Meta> {
        self.modern().then(|| {
            RequestMeta::new(self.0.as_str(), ClientCapabilities::default())
                .to_meta()
                .expect("meta")
        })
    }
    fn res_meta(self) -> Option<Meta> {
        if self.modern() {
            let mut m = Meta::new();
            m.insert(
                SERVER_INFO_KEY.into(),
                serde_json::to_value(self.server_info()).expect("info"),
            );
            Some(m)
        } else {
            Some(obj(json!({"com.example/trace": "abc"})))
        }
    }
    fn notif_meta(self) -> Option<Meta> {
        if self.modern() {
            Some(subscription_meta(&RequestId::from("listen-1")))
        } else {
            Some(obj(json!({"com.example/seq": 7})))
        }
    }
}

struct Check {
    version: ProtocolVersion,
    def: String,
    label: String,
    instance: Value,
}

#[derive(Default)]
struct Suite {
    checks: Vec<Check>,
    failures: Vec<String>,
    next_id: i64,
}

impl Suite {
    fn push(&mut self, v: V, def: &str, label: String, instance: Value) {
        self.checks.push(Check {
            version: v.0,
            def: def.into(),
            label,
            instance,
        });
    }

    /// Round-trips `sample` and validates it against `def`.
    fn def<T: Serialize + DeserializeOwned>(&mut self, v: V, def: &str, sample: &T) {
        let label = format!("{} {def}", v.0);
        match roundtrip(sample) {
            Ok(value) => self.push(v, def, label, value),
            Err(e) => self.failures.push(format!("{label}: {e}")),
        }
    }

    /// Round-trips request `params` and validates the request envelope against `def`.
    fn req<T: Serialize + DeserializeOwned>(&mut self, v: V, def: &str, method: &str, params: &T) {
        let label = format!("{} {def} ({method})", v.0);
        self.next_id += 1;
        match roundtrip(params) {
            Ok(p) => {
                let id = if self.next_id % 2 == 0 {
                    json!(self.next_id)
                } else {
                    json!(format!("req-{}", self.next_id))
                };
                let env = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": p});
                self.push(v, def, label, env);
            }
            Err(e) => self.failures.push(format!("{label}: {e}")),
        }
    }

    /// Round-trips notification `params` and validates the envelope against `def`.
    fn notif<T: Serialize + DeserializeOwned>(
        &mut self,
        v: V,
        def: &str,
        method: &str,
        params: Option<&T>,
    ) {
        let label = format!("{} {def} ({method})", v.0);
        let mut env = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            match roundtrip(p) {
                Ok(p) => {
                    env["params"] = p;
                }
                Err(e) => {
                    self.failures.push(format!("{label}: {e}"));
                    return;
                }
            }
        }
        self.push(v, def, label, env);
    }

    /// Round-trips `result` and validates it against `def`, and (when the version has it)
    /// the `<def>Response` envelope.
    fn result<T: Serialize + DeserializeOwned>(&mut self, v: V, def: &str, result: &T) {
        let label = format!("{} {def}", v.0);
        match roundtrip(result) {
            Ok(r) => {
                let resp_def = format!("{def}Response");
                if schemas()[&v.0].has(&resp_def) {
                    let env = json!({"jsonrpc": "2.0", "id": 1, "result": r.clone()});
                    self.push(v, &resp_def, format!("{label}Response"), env);
                }
                self.push(v, def, label, r);
            }
            Err(e) => self.failures.push(format!("{label}: {e}")),
        }
    }

    /// Round-trips an error `data` and validates the error response against `def`.
    fn error_data<T: Serialize + DeserializeOwned>(
        &mut self,
        v: V,
        def: &str,
        code: i64,
        data: &T,
    ) {
        let label = format!("{} {def}", v.0);
        match roundtrip(data) {
            Ok(d) => {
                let env = json!({"jsonrpc": "2.0", "id": 5, "error": {"code": code, "message": "m", "data": d}});
                self.push(v, def, label, env);
            }
            Err(e) => self.failures.push(format!("{label}: {e}")),
        }
    }

    /// A server-to-client request: a JSON-RPC request before 2026-07-28, an input request
    /// (`{method, params}`) in 2026-07-28.
    fn server_req(&mut self, v: V, def: &str, input: InputRequest) {
        if v.modern() {
            self.def(v, def, &input);
        } else {
            let method = input.method().to_string();
            match input {
                InputRequest::Elicit(p) => self.req(v, def, &method, &p),
                InputRequest::CreateMessage(p) => self.req(v, def, &method, &p),
                InputRequest::ListRoots(p) => self.req(v, def, &method, &p.unwrap_or_default()),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    fn run(self) -> (usize, BTreeMap<ProtocolVersion, usize>) {
        let mut failures = self.failures;
        let mut per_version = BTreeMap::new();
        for c in &self.checks {
            *per_version.entry(c.version).or_insert(0) += 1;
            let mut errs = schemas()[&c.version].errors(&c.def, &c.instance);
            if errs.is_empty() && strict_applies(&c.def) {
                let inst = strict_instance(c.version, &c.instance);
                errs = strict_schemas()[&c.version]
                    .errors(&c.def, &inst)
                    .into_iter()
                    .map(|e| format!("(strict) {e}"))
                    .collect();
            }
            if !errs.is_empty() {
                failures.push(format!(
                    "{}: INVALID against {}:\n    {}\n  instance: {}",
                    c.label,
                    c.def,
                    errs.join("\n    "),
                    c.instance
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} checks failed:\n{}",
            failures.len(),
            self.checks.len(),
            failures.join("\n")
        );
        (self.checks.len(), per_version)
    }
}

// ---------------------------------------------------------------------------------------------
// Samples by area
// ---------------------------------------------------------------------------------------------

fn lifecycle(s: &mut Suite, v: V) {
    s.def(v, "Implementation", &v.client_info());
    s.def(v, "Implementation", &v.server_info());

    let client_caps = ClientCapabilities {
        experimental: Some(obj(json!({"com.example/feature": {"on": true}}))),
        roots: Some(RootsCapability {
            list_changed: v.legacy().then_some(true),
        }),
        sampling: Some(if v.ge(V4) {
            SamplingCapability {
                context: Some(Map::new()),
                tools: Some(Map::new()),
            }
        } else {
            SamplingCapability::default()
        }),
        elicitation: v.ge(V3).then(|| {
            if v.ge(V4) {
                ElicitationCapability {
                    form: Some(Map::new()),
                    url: Some(Map::new()),
                }
            } else {
                ElicitationCapability::default()
            }
        }),
        tasks: (v.0 == V4).then(|| ClientTasksCapability {
            list: Some(Map::new()),
            cancel: Some(Map::new()),
            requests: Some(ClientTaskRequests {
                sampling: Some(SamplingTaskRequests {
                    create_message: Some(Map::new()),
                }),
                elicitation: Some(ElicitationTaskRequests {
                    create: Some(Map::new()),
                }),
            }),
        }),
        extensions: v.modern().then(|| {
            obj(json!({
                "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]},
                extension::EXTENSION_ID: {}
            }))
        }),
    };
    s.def(v, "ClientCapabilities", &client_caps);
    s.def(v, "ClientCapabilities", &ClientCapabilities::default());

    let server_caps = ServerCapabilities {
        experimental: Some(obj(json!({"com.example/beta": {}}))),
        logging: Some(Map::new()),
        completions: v.ge(V2).then(Map::new),
        prompts: Some(PromptsCapability {
            list_changed: Some(true),
        }),
        resources: Some(ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(true),
        }),
        tools: Some(ToolsCapability {
            list_changed: Some(false),
        }),
        tasks: (v.0 == V4).then(|| ServerTasksCapability {
            list: Some(Map::new()),
            cancel: Some(Map::new()),
            requests: Some(ServerTaskRequests {
                tools: Some(ToolsTaskRequests {
                    call: Some(Map::new()),
                }),
            }),
        }),
        extensions: v
            .modern()
            .then(|| obj(json!({extension::EXTENSION_ID: {}}))),
    };
    s.def(v, "ServerCapabilities", &server_caps);
    s.def(v, "ServerCapabilities", &ServerCapabilities::default());

    if v.legacy() {
        let init = InitializeRequestParams {
            meta: v.req_meta(),
            ..InitializeRequestParams::new(v.0, client_caps.clone(), v.client_info())
        };
        s.req(v, "InitializeRequest", methods::INITIALIZE, &init);
        let init_res = InitializeResult {
            instructions: Some("Use the weather tool for forecasts.".into()),
            meta: v.res_meta(),
            ..InitializeResult::new(v.0, server_caps.clone(), v.server_info())
        };
        s.result(v, "InitializeResult", &init_res);
        s.notif(
            v,
            "InitializedNotification",
            methods::NOTIFICATION_INITIALIZED,
            None::<&NotificationParams>,
        );
        s.notif(
            v,
            "InitializedNotification",
            methods::NOTIFICATION_INITIALIZED,
            Some(&NotificationParams::with_meta(
                v.notif_meta().unwrap_or_default(),
            )),
        );
        s.req(v, "PingRequest", methods::PING, &RequestParams::default());
        s.req(
            v,
            "PingRequest",
            methods::PING,
            &RequestParams { meta: v.req_meta() },
        );
    } else {
        let params = RequestParams { meta: v.req_meta() };
        s.req(v, "DiscoverRequest", methods::SERVER_DISCOVER, &params);
        let discover = DiscoverResult {
            instructions: Some("Prefer get_weather for forecasts.".into()),
            meta: v.res_meta(),
            ..DiscoverResult::new([V5, V4], server_caps.clone(), 3_600_000, CacheScope::Public)
        };
        s.result(v, "DiscoverResult", &discover);
        s.error_data(
            v,
            "UnsupportedProtocolVersionError",
            -32022,
            &UnsupportedProtocolVersionData {
                supported: vec!["2026-07-28".into(), "2025-11-25".into()],
                requested: "1900-01-01".into(),
            },
        );
        s.error_data(
            v,
            "MissingRequiredClientCapabilityError",
            -32021,
            &MissingRequiredClientCapabilityData {
                required_capabilities: ClientCapabilities {
                    elicitation: Some(ElicitationCapability::default()),
                    ..ClientCapabilities::default()
                },
            },
        );
    }

    s.result(
        v,
        "EmptyResult",
        &EmptyResult {
            result_type: v.rt(),
            meta: v.res_meta(),
        },
    );
    if v.legacy() {
        s.result(v, "EmptyResult", &EmptyResult::default());
    }

    s.notif(
        v,
        "CancelledNotification",
        methods::NOTIFICATION_CANCELLED,
        Some(&CancelledNotificationParams::new(7).with_reason("user asked")),
    );
    s.notif(
        v,
        "CancelledNotification",
        methods::NOTIFICATION_CANCELLED,
        Some(&CancelledNotificationParams {
            meta: v.notif_meta(),
            ..CancelledNotificationParams::new("req-9")
        }),
    );
    if v.0 == V4 {
        // 2025-11-25 made requestId optional.
        s.notif(
            v,
            "CancelledNotification",
            methods::NOTIFICATION_CANCELLED,
            Some(&CancelledNotificationParams::default()),
        );
    }

    let mut progress = ProgressNotificationParams::new(RequestId::from("tok-1"), 50.0, Some(100.0));
    if v.ge(V2) {
        progress = progress.with_message("Reticulating splines...");
    }
    s.notif(
        v,
        "ProgressNotification",
        methods::NOTIFICATION_PROGRESS,
        Some(&progress),
    );
    s.notif(
        v,
        "ProgressNotification",
        methods::NOTIFICATION_PROGRESS,
        Some(&ProgressNotificationParams::new(
            RequestId::Number(3),
            0.25,
            None,
        )),
    );
}

fn content_samples(v: V) -> Vec<(&'static str, Content)> {
    let mut out = vec![
        (
            "TextContent",
            Content::Text(TextContent {
                text: "hello".into(),
                annotations: v.ann(),
                meta: v.emeta(),
            }),
        ),
        ("TextContent", Content::text("plain")),
        (
            "ImageContent",
            Content::Image(ImageContent {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
                annotations: v.ann(),
                meta: v.emeta(),
            }),
        ),
        (
            "EmbeddedResource",
            Content::Resource(EmbeddedResource {
                resource: ResourceContents::Text(TextResourceContents {
                    uri: "file:///project/src/main.rs".into(),
                    mime_type: Some("text/x-rust".into()),
                    text: "fn main() {}".into(),
                    meta: v.emeta(),
                }),
                annotations: v.ann(),
                meta: v.emeta(),
            }),
        ),
        (
            "EmbeddedResource",
            Content::embedded(ResourceContents::blob("file:///logo.png", "AAEC")),
        ),
    ];
    if v.ge(V2) {
        out.push((
            "AudioContent",
            Content::Audio(AudioContent {
                data: "UklGRiQAAABXQVZF".into(),
                mime_type: "audio/wav".into(),
                annotations: v.ann(),
                meta: v.emeta(),
            }),
        ));
    }
    if v.ge(V3) {
        out.push(("ResourceLink", Content::resource_link(resource(v))));
        out.push((
            "ResourceLink",
            Content::resource_link(Resource::new("https://example.com/a", "a")),
        ));
    }
    out
}

fn resource(v: V) -> Resource {
    Resource {
        uri: "file:///project/README.md".into(),
        name: "README.md".into(),
        title: v.title("Project Documentation"),
        description: Some("The readme".into()),
        mime_type: Some("text/markdown".into()),
        annotations: v.ann(),
        size: Some(1024),
        icons: v.icons(),
        meta: v.emeta(),
    }
}

fn content(s: &mut Suite, v: V) {
    for (def, c) in content_samples(v) {
        s.def(v, def, &c);
        if v.ge(V3) {
            s.def(v, "ContentBlock", &c);
        }
    }
    if v.ge(V2) {
        s.def(v, "Annotations", &v.ann().unwrap_or_default());
        s.def(v, "Annotations", &Annotations::default());
    }
    s.def(
        v,
        "TextResourceContents",
        &ResourceContents::text("file:///a.txt", "text"),
    );
    s.def(
        v,
        "BlobResourceContents",
        &ResourceContents::Blob(BlobResourceContents {
            uri: "file:///a.bin".into(),
            mime_type: Some("application/octet-stream".into()),
            blob: "AAEC".into(),
            meta: v.emeta(),
        }),
    );
    if v.ge(V4) {
        let tool_use = SamplingContent::ToolUse(tool_use());
        let tool_result = SamplingContent::ToolResult(tool_result(v));
        s.def(v, "ToolUseContent", &tool_use);
        s.def(v, "ToolResultContent", &tool_result);
        s.def(v, "SamplingMessageContentBlock", &tool_use);
        s.def(v, "SamplingMessageContentBlock", &tool_result);
        s.def(
            v,
            "SamplingMessageContentBlock",
            &SamplingContent::text("hi"),
        );
        s.def(v, "Icon", &v.icons().unwrap_or_default()[0]);
    }
}

fn tool_use() -> ToolUseContent {
    ToolUseContent {
        id: "call_abc123".into(),
        name: "get_weather".into(),
        input: obj(json!({"city": "Paris"})),
        meta: Some(obj(json!({"com.example/cache": "k1"}))),
    }
}

fn tool_result(v: V) -> ToolResultContent {
    ToolResultContent {
        tool_use_id: "call_abc123".into(),
        content: vec![Content::text("18°C, partly cloudy")],
        structured_content: Some(if v.modern() {
            json!([18, "partly cloudy"])
        } else {
            json!({"temperature": 18, "conditions": "partly cloudy"})
        }),
        is_error: Some(false),
        meta: None,
    }
}

fn weather_tool(v: V) -> Tool {
    let input = obj(json!({
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name"}},
        "required": ["location"]
    }));
    Tool {
        title: v.title("Weather"),
        description: Some("Get the weather".into()),
        output_schema: v.ge(V3).then(|| {
            obj(json!({
                "type": "object",
                "properties": {"temperature": {"type": "number"}},
                "required": ["temperature"]
            }))
        }),
        annotations: v.ge(V2).then(|| ToolAnnotations {
            title: Some("Weather lookup".into()),
            read_only_hint: Some(true),
            destructive_hint: Some(false),
            idempotent_hint: Some(true),
            open_world_hint: Some(true),
        }),
        execution: (v.0 == V4).then_some(ToolExecution {
            task_support: Some(TaskSupport::Optional),
        }),
        icons: v.icons(),
        meta: v.emeta(),
        ..Tool::new("get_weather", input)
    }
}

fn input_requests(v: V) -> InputRequests {
    let mut m = InputRequests::new();
    m.insert(
        "github_login".into(),
        InputRequest::Elicit(ElicitRequestParams::form(
            "Your GitHub username?",
            ElicitationSchema::new().required_field(
                "name",
                StringSchema {
                    title: Some("Username".into()),
                    ..StringSchema::default()
                },
            ),
        )),
    );
    m.insert(
        "capital".into(),
        InputRequest::CreateMessage(CreateMessageRequestParams::new(
            vec![SamplingMessage::user("What is the capital of France?")],
            100,
        )),
    );
    m.insert("roots".into(), InputRequest::ListRoots(None));
    m.insert(
        "api_key".into(),
        InputRequest::Elicit(ElicitRequestParams::url(
            "Set your API key",
            "https://mcp.example.com/ui/set_api_key",
            (!v.modern()).then(|| "elic-1".into()),
        )),
    );
    m
}

fn input_responses() -> InputResponses {
    let mut m = InputResponses::new();
    let mut content = BTreeMap::new();
    content.insert("name".to_string(), ElicitValue::from("octocat"));
    m.insert("github_login".into(), ElicitResult::accept(content).into());
    m.insert(
        "capital".into(),
        CreateMessageResult::text("claude-3-sonnet", "Paris.").into(),
    );
    m.insert(
        "roots".into(),
        ListRootsResult {
            roots: vec![Root::new("file:///home/user/project").with_name("Project")],
            meta: None,
        }
        .into(),
    );
    m.insert("api_key".into(), ElicitResult::cancel().into());
    m
}

fn tools(s: &mut Suite, v: V) {
    let tool = weather_tool(v);
    s.def(v, "Tool", &tool);
    s.def(
        v,
        "Tool",
        &Tool::without_params("now").with_description("The time"),
    );
    if v.ge(V2) {
        s.def(
            v,
            "ToolAnnotations",
            &tool.annotations.clone().unwrap_or_default(),
        );
    }
    if v.0 == V4 {
        s.def(
            v,
            "ToolExecution",
            &tool.execution.clone().unwrap_or_default(),
        );
    }
    s.req(
        v,
        "ListToolsRequest",
        methods::TOOLS_LIST,
        &PaginatedRequestParams {
            cursor: Some("page-2".into()),
            meta: v.req_meta(),
        },
    );
    if v.legacy() {
        s.req(
            v,
            "ListToolsRequest",
            methods::TOOLS_LIST,
            &PaginatedRequestParams::default(),
        );
    }
    s.result(
        v,
        "ListToolsResult",
        &ListToolsResult {
            tools: vec![tool.clone(), Tool::without_params("now")],
            next_cursor: Some("page-3".into()),
            ttl_ms: v.ttl(),
            cache_scope: v.scope(),
            result_type: v.rt(),
            meta: v.res_meta(),
        },
    );

    let call = CallToolRequestParams {
        meta: v.req_meta(),
        ..CallToolRequestParams::new("get_weather", obj(json!({"location": "New York"})))
    };
    s.req(v, "CallToolRequest", methods::TOOLS_CALL, &call);
    s.req(
        v,
        "CallToolRequest",
        methods::TOOLS_CALL,
        &CallToolRequestParams {
            name: "now".into(),
            meta: v.req_meta_min(),
            ..CallToolRequestParams::default()
        },
    );
    if v.0 == V4 {
        s.req(
            v,
            "CallToolRequest",
            methods::TOOLS_CALL,
            &CallToolRequestParams {
                task: Some(TaskMetadata { ttl: Some(60_000) }),
                ..call.clone()
            },
        );
    }
    if v.modern() {
        s.req(
            v,
            "CallToolRequest",
            methods::TOOLS_CALL,
            &CallToolRequestParams {
                input_responses: Some(input_responses()),
                request_state: Some("eyJzdGVwIjoyfQ".into()),
                ..call.clone()
            },
        );
        s.def(v, "InputResponses", &input_responses());
        s.def(v, "InputRequests", &input_requests(v));
        let irr = InputRequiredResult {
            meta: v.res_meta(),
            ..InputRequiredResult::new(input_requests(v)).with_state("opaque-state")
        };
        s.result(v, "InputRequiredResult", &irr);
        s.result(
            v,
            "InputRequiredResult",
            &InputRequiredResult::default().with_state("shed-load"),
        );
        // The union result of tools/call.
        s.def(
            v,
            "CallToolResultResponse",
            &json!({"jsonrpc": "2.0", "id": 3, "result": serde_json::to_value(
                RequestOutcome::<CallToolResult>::InputRequired(irr)).unwrap()}),
        );
        for (k, r) in input_requests(v) {
            let def = match &r {
                InputRequest::Elicit(_) => "ElicitRequest",
                InputRequest::CreateMessage(_) => "CreateMessageRequest",
                _ => "ListRootsRequest",
            };
            s.def(v, def, &r);
            assert!(!k.is_empty());
        }
    }

    let mut results = vec![
        CallToolResult::text("It is sunny").complete(),
        CallToolResult::error("Invalid departure date: must be in the future."),
        CallToolResult::with_content(content_samples(v).into_iter().map(|(_, c)| c).collect()),
    ];
    if v.ge(V3) {
        results.push(CallToolResult::structured(json!({"temperature": 22.5})));
    }
    if v.modern() {
        results.push(CallToolResult::structured(json!([1, 2, 3])));
        results.push(CallToolResult::structured(json!("just a string")));
    }
    for mut r in results {
        r.result_type = v.rt();
        r.meta = v.res_meta();
        s.result(v, "CallToolResult", &r);
    }
    s.notif(
        v,
        "ToolListChangedNotification",
        methods::NOTIFICATION_TOOLS_LIST_CHANGED,
        Some(&NotificationParams {
            meta: v.notif_meta(),
        }),
    );
    s.notif(
        v,
        "ToolListChangedNotification",
        methods::NOTIFICATION_TOOLS_LIST_CHANGED,
        None::<&NotificationParams>,
    );
}

fn resources(s: &mut Suite, v: V) {
    let res = resource(v);
    s.def(v, "Resource", &res);
    s.def(v, "Resource", &Resource::new("file:///x", "x"));
    let template = ResourceTemplate {
        title: v.title("Project files"),
        description: Some("Files in the project".into()),
        mime_type: Some("application/octet-stream".into()),
        annotations: v.ann(),
        icons: v.icons(),
        meta: v.emeta(),
        ..ResourceTemplate::new("file:///{path}", "project-files")
    };
    s.def(v, "ResourceTemplate", &template);

    let page = PaginatedRequestParams {
        cursor: Some("eyJwYWdlIjogMn0=".into()),
        meta: v.req_meta(),
    };
    s.req(v, "ListResourcesRequest", methods::RESOURCES_LIST, &page);
    s.result(
        v,
        "ListResourcesResult",
        &ListResourcesResult {
            resources: vec![res.clone(), Resource::new("file:///x", "x")],
            next_cursor: Some("c3".into()),
            ttl_ms: v.ttl(),
            cache_scope: v.modern().then_some(CacheScope::Private),
            result_type: v.rt(),
            meta: v.res_meta(),
        },
    );
    s.req(
        v,
        "ListResourceTemplatesRequest",
        methods::RESOURCES_TEMPLATES_LIST,
        &page,
    );
    s.result(
        v,
        "ListResourceTemplatesResult",
        &ListResourceTemplatesResult {
            resource_templates: vec![template],
            next_cursor: None,
            ttl_ms: v.ttl(),
            cache_scope: v.scope(),
            result_type: v.rt(),
            meta: v.res_meta(),
        },
    );
    let read = ReadResourceRequestParams {
        meta: v.req_meta(),
        ..ReadResourceRequestParams::new("file:///project/src/main.rs")
    };
    s.req(v, "ReadResourceRequest", methods::RESOURCES_READ, &read);
    if v.modern() {
        s.req(
            v,
            "ReadResourceRequest",
            methods::RESOURCES_READ,
            &ReadResourceRequestParams {
                input_responses: Some(input_responses()),
                request_state: Some("s".into()),
                ..read
            },
        );
    }
    s.result(
        v,
        "ReadResourceResult",
        &ReadResourceResult {
            contents: vec![
                ResourceContents::Text(TextResourceContents {
                    uri: "file:///project/src/main.rs".into(),
                    mime_type: Some("text/x-rust".into()),
                    text: "fn main() {}".into(),
                    meta: v.emeta(),
                }),
                ResourceContents::blob("file:///project/logo.png", "iVBORw0KGgo="),
            ],
            ttl_ms: v.ttl(),
            cache_scope: v.scope(),
            result_type: v.rt(),
            meta: v.res_meta(),
        },
    );

    if v.legacy() {
        let sub = SubscribeRequestParams {
            meta: v.req_meta(),
            ..SubscribeRequestParams::new("file:///project/config.json")
        };
        s.req(v, "SubscribeRequest", methods::RESOURCES_SUBSCRIBE, &sub);
        s.req(
            v,
            "UnsubscribeRequest",
            methods::RESOURCES_UNSUBSCRIBE,
            &sub,
        );
    } else {
        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(false),
            resources_list_changed: Some(true),
            resource_subscriptions: Some(vec!["file:///project/config.json".into()]),
            task_ids: None,
        };
        s.def(v, "SubscriptionFilter", &filter);
        s.req(
            v,
            "SubscriptionsListenRequest",
            methods::SUBSCRIPTIONS_LISTEN,
            &SubscriptionsListenRequestParams {
                notifications: filter.clone(),
                meta: v.req_meta(),
            },
        );
        s.notif(
            v,
            "SubscriptionsAcknowledgedNotification",
            methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
            Some(&SubscriptionsAcknowledgedNotificationParams {
                notifications: SubscriptionFilter {
                    prompts_list_changed: None,
                    ..filter
                },
                meta: v.notif_meta(),
            }),
        );
        s.result(
            v,
            "SubscriptionsListenResult",
            &SubscriptionsListenResult {
                result_type: v.rt(),
                meta: Some(subscription_meta(&RequestId::from("listen-1"))),
            },
        );
    }
    s.notif(
        v,
        "ResourceUpdatedNotification",
        methods::NOTIFICATION_RESOURCES_UPDATED,
        Some(&ResourceUpdatedNotificationParams {
            meta: v.notif_meta(),
            ..ResourceUpdatedNotificationParams::new("file:///project/config.json")
        }),
    );
    s.notif(
        v,
        "ResourceListChangedNotification",
        methods::NOTIFICATION_RESOURCES_LIST_CHANGED,
        Some(&NotificationParams {
            meta: v.notif_meta(),
        }),
    );
}

fn prompts(s: &mut Suite, v: V) {
    let arg = PromptArgument {
        title: v.title("Code"),
        description: Some("The code to review".into()),
        required: Some(true),
        ..PromptArgument::new("code")
    };
    s.def(v, "PromptArgument", &arg);
    let prompt = Prompt {
        title: v.title("Request Code Review"),
        description: Some("Asks for a review".into()),
        arguments: Some(vec![arg, PromptArgument::new("style")]),
        icons: v.icons(),
        meta: v.emeta(),
        ..Prompt::new("code_review")
    };
    s.def(v, "Prompt", &prompt);
    s.req(
        v,
        "ListPromptsRequest",
        methods::PROMPTS_LIST,
        &PaginatedRequestParams {
            cursor: None,
            meta: v.req_meta(),
        },
    );
    s.result(
        v,
        "ListPromptsResult",
        &ListPromptsResult {
            prompts: vec![prompt, Prompt::new("simple")],
            next_cursor: Some("next".into()),
            ttl_ms: v.ttl(),
            cache_scope: v.scope(),
            result_type: v.rt(),
            meta: v.res_meta(),
        },
    );
    let get = GetPromptRequestParams {
        meta: v.req_meta(),
        ..GetPromptRequestParams::new("code_review").with_argument("code", "def hello(): pass")
    };
    s.req(v, "GetPromptRequest", methods::PROMPTS_GET, &get);
    if v.modern() {
        s.req(
            v,
            "GetPromptRequest",
            methods::PROMPTS_GET,
            &GetPromptRequestParams {
                input_responses: Some(input_responses()),
                request_state: Some("state".into()),
                ..get
            },
        );
    }
    let mut messages: Vec<PromptMessage> = content_samples(v)
        .into_iter()
        .map(|(_, c)| PromptMessage {
            role: Role::User,
            content: c,
        })
        .collect();
    messages.push(PromptMessage::assistant("Sure, here is my review."));
    for m in &messages {
        s.def(v, "PromptMessage", m);
    }
    s.result(
        v,
        "GetPromptResult",
        &GetPromptResult {
            description: Some("Code review prompt".into()),
            messages,
            result_type: v.rt(),
            meta: v.res_meta(),
        },
    );
    s.notif(
        v,
        "PromptListChangedNotification",
        methods::NOTIFICATION_PROMPTS_LIST_CHANGED,
        Some(&NotificationParams {
            meta: v.notif_meta(),
        }),
    );
}

fn completion(s: &mut Suite, v: V) {
    let prompt_ref = Reference::Prompt(PromptReference {
        name: "code_review".into(),
        title: v.title("Code review"),
    });
    let res_ref = Reference::resource("file:///{path}");
    s.def(v, "PromptReference", &prompt_ref);
    let res_def = if v.ge(V3) {
        "ResourceTemplateReference"
    } else {
        "ResourceReference"
    };
    s.def(v, res_def, &res_ref);
    let mut with_context = CompleteRequestParams {
        meta: v.req_meta(),
        ..CompleteRequestParams::new(prompt_ref, "framework", "fla")
    };
    if v.ge(V3) {
        let mut args = BTreeMap::new();
        args.insert("language".to_string(), "python".to_string());
        with_context.context = Some(CompletionContext {
            arguments: Some(args),
        });
    }
    s.req(
        v,
        "CompleteRequest",
        methods::COMPLETION_COMPLETE,
        &with_context,
    );
    s.req(
        v,
        "CompleteRequest",
        methods::COMPLETION_COMPLETE,
        &CompleteRequestParams {
            meta: v.req_meta_min(),
            ..CompleteRequestParams::new(res_ref, "path", "src/")
        },
    );
    let mut r = CompleteResult::new(vec!["flask".into(), "fastapi".into()]);
    r.result_type = v.rt();
    r.meta = v.res_meta();
    s.result(v, "CompleteResult", &r);
    let mut many = CompleteResult::new((0..150).map(|i| format!("v{i}")).collect());
    many.result_type = v.rt();
    assert_eq!(many.completion.values.len(), 100);
    assert_eq!(many.completion.has_more, Some(true));
    s.result(v, "CompleteResult", &many);
}

fn logging(s: &mut Suite, v: V) {
    for level in LoggingLevel::ALL {
        s.def(v, "LoggingLevel", &level);
        if v.legacy() {
            s.req(
                v,
                "SetLevelRequest",
                methods::LOGGING_SET_LEVEL,
                &SetLevelRequestParams::new(level),
            );
        }
    }
    s.notif(
        v,
        "LoggingMessageNotification",
        methods::NOTIFICATION_MESSAGE,
        Some(
            &LoggingMessageNotificationParams::new(
                LoggingLevel::Error,
                json!({"error": "Connection failed", "details": {"host": "localhost", "port": 5432}}),
            )
            .with_logger("database"),
        ),
    );
    s.notif(
        v,
        "LoggingMessageNotification",
        methods::NOTIFICATION_MESSAGE,
        Some(&LoggingMessageNotificationParams {
            meta: v.notif_meta(),
            ..LoggingMessageNotificationParams::new(LoggingLevel::Debug, "plain text")
        }),
    );
    if v.modern() {
        // The per-request log level replaces logging/setLevel.
        let meta = RequestMeta::new(v.0.as_str(), ClientCapabilities::default())
            .with_log_level(LoggingLevel::Warning)
            .to_meta()
            .unwrap();
        s.req(
            v,
            "ListToolsRequest",
            methods::TOOLS_LIST,
            &PaginatedRequestParams {
                cursor: None,
                meta: Some(meta),
            },
        );
    }
}

fn sampling(s: &mut Suite, v: V) {
    let hints = ModelPreferences {
        hints: Some(vec![
            ModelHint {
                name: Some("claude-3-sonnet".into()),
            },
            ModelHint::default(),
        ]),
        cost_priority: Some(0.3),
        speed_priority: Some(0.8),
        intelligence_priority: Some(0.5),
    };
    s.def(v, "ModelPreferences", &hints);
    s.def(
        v,
        "ModelHint",
        &ModelHint {
            name: Some("sonnet".into()),
        },
    );
    let mut messages = vec![
        SamplingMessage::user("What's the weather in Paris?"),
        SamplingMessage {
            role: Role::User,
            content: SamplingContent::Image(ImageContent {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
                annotations: None,
                meta: None,
            })
            .into(),
            meta: None,
        },
    ];
    if v.ge(V2) {
        messages.push(SamplingMessage {
            role: Role::User,
            content: SamplingContent::Audio(AudioContent {
                data: "UklGRg==".into(),
                mime_type: "audio/wav".into(),
                annotations: None,
                meta: None,
            })
            .into(),
            meta: None,
        });
    }
    if v.ge(V4) {
        messages.push(SamplingMessage {
            role: Role::Assistant,
            content: vec![SamplingContent::ToolUse(tool_use())].into(),
            meta: Some(obj(json!({"com.example/turn": 2}))),
        });
        messages.push(SamplingMessage {
            role: Role::User,
            content: vec![
                SamplingContent::ToolResult(tool_result(v)),
                SamplingContent::text("Thanks"),
            ]
            .into(),
            meta: None,
        });
    }
    for m in &messages {
        s.def(v, "SamplingMessage", m);
    }
    let mut params = CreateMessageRequestParams {
        model_preferences: Some(hints),
        system_prompt: Some("You are a helpful assistant.".into()),
        include_context: Some(if v.ge(V4) {
            IncludeContext::None
        } else {
            IncludeContext::ThisServer
        }),
        temperature: Some(0.7),
        stop_sequences: Some(vec!["\n\n".into()]),
        metadata: Some(obj(json!({"provider": "x"}))),
        meta: if v.modern() { None } else { v.req_meta() },
        ..CreateMessageRequestParams::new(messages, 1000)
    };
    if v.ge(V4) {
        params.tools = Some(vec![weather_tool(v)]);
        params.tool_choice = Some(ToolChoice {
            mode: Some(ToolChoiceMode::Auto),
        });
        s.def(
            v,
            "ToolChoice",
            &ToolChoice {
                mode: Some(ToolChoiceMode::Required),
            },
        );
    }
    if v.0 == V4 {
        params.task = Some(TaskMetadata { ttl: None });
    }
    s.server_req(
        v,
        "CreateMessageRequest",
        InputRequest::CreateMessage(params),
    );
    s.server_req(
        v,
        "CreateMessageRequest",
        InputRequest::CreateMessage(CreateMessageRequestParams::new(
            vec![SamplingMessage::user("hi")],
            10,
        )),
    );

    let mut results = vec![CreateMessageResult::text(
        "claude-3-sonnet-20240307",
        "Paris.",
    )];
    results.push(CreateMessageResult {
        stop_reason: Some(StopReason::Other("provider_specific".into())),
        meta: v.legacy().then(|| obj(json!({"com.example/usage": 12}))),
        ..CreateMessageResult::text("m", "x")
    });
    if v.ge(V4) {
        results.push(CreateMessageResult {
            role: Role::Assistant,
            content: vec![
                SamplingContent::ToolUse(tool_use()),
                SamplingContent::ToolUse(ToolUseContent {
                    id: "call_2".into(),
                    ..tool_use()
                }),
            ]
            .into(),
            model: "claude".into(),
            stop_reason: Some(StopReason::ToolUse),
            meta: None,
        });
    }
    for r in &results {
        s.result(v, "CreateMessageResult", r);
    }
}

fn roots(s: &mut Suite, v: V) {
    let root = Root {
        meta: v.emeta(),
        ..Root::new("file:///home/user/projects/myproject").with_name("My Project")
    };
    s.def(v, "Root", &root);
    s.server_req(v, "ListRootsRequest", InputRequest::ListRoots(None));
    if v.legacy() {
        s.server_req(
            v,
            "ListRootsRequest",
            InputRequest::ListRoots(Some(RequestParams { meta: v.req_meta() })),
        );
    } else {
        s.def(
            v,
            "ListRootsRequest",
            &InputRequest::ListRoots(Some(RequestParams {
                meta: Some(obj(json!({"com.example/x": 1}))),
            })),
        );
    }
    s.result(
        v,
        "ListRootsResult",
        &ListRootsResult {
            roots: vec![root, Root::new("file:///tmp")],
            meta: v.legacy().then(|| obj(json!({"com.example/x": 1}))),
        },
    );
    s.result(v, "ListRootsResult", &ListRootsResult::default());
    if v.legacy() {
        s.notif(
            v,
            "RootsListChangedNotification",
            methods::NOTIFICATION_ROOTS_LIST_CHANGED,
            Some(&NotificationParams::default()),
        );
    }
}

fn field_schemas(v: V) -> Vec<(&'static str, PrimitiveSchemaDefinition)> {
    let new = v.ge(V4);
    let mut out: Vec<(&'static str, PrimitiveSchemaDefinition)> = vec![
        (
            "StringSchema",
            StringSchema {
                title: Some("Email".into()),
                description: Some("Your email".into()),
                min_length: Some(3),
                max_length: Some(50),
                format: Some(StringFormat::Email),
                default: new.then(|| "user@example.com".into()),
                ..StringSchema::default()
            }
            .into(),
        ),
        (
            "StringSchema",
            StringSchema {
                format: Some(StringFormat::DateTime),
                ..StringSchema::default()
            }
            .into(),
        ),
        (
            "NumberSchema",
            NumberSchema {
                r#type: NumberType::Integer,
                title: Some("Age".into()),
                minimum: Some(18.into()),
                maximum: Some(130.into()),
                default: new.then_some(30.into()),
                ..NumberSchema::default()
            }
            .into(),
        ),
        (
            "NumberSchema",
            NumberSchema {
                minimum: serde_json::Number::from_f64(0.5),
                ..NumberSchema::default()
            }
            .into(),
        ),
        (
            "BooleanSchema",
            BooleanSchema {
                title: Some("Subscribe".into()),
                default: Some(false),
                ..BooleanSchema::default()
            }
            .into(),
        ),
    ];
    let legacy_enum = LegacyTitledEnumSchema {
        title: Some("Color".into()),
        values: vec!["#f00".into(), "#0f0".into()],
        enum_names: Some(vec!["Red".into(), "Green".into()]),
        default: new.then(|| "#f00".into()),
        ..LegacyTitledEnumSchema::default()
    };
    if new {
        out.push(("LegacyTitledEnumSchema", legacy_enum.into()));
        let opts = vec![
            EnumOption::new("#f00", "Red"),
            EnumOption::new("#0f0", "Green"),
        ];
        out.push((
            "UntitledSingleSelectEnumSchema",
            UntitledSingleSelectEnumSchema {
                title: Some("Color".into()),
                values: vec!["Red".into(), "Green".into()],
                default: Some("Red".into()),
                ..UntitledSingleSelectEnumSchema::default()
            }
            .into(),
        ));
        out.push((
            "TitledSingleSelectEnumSchema",
            TitledSingleSelectEnumSchema {
                description: Some("Pick one".into()),
                one_of: opts.clone(),
                default: Some("#0f0".into()),
                ..TitledSingleSelectEnumSchema::default()
            }
            .into(),
        ));
        out.push((
            "UntitledMultiSelectEnumSchema",
            UntitledMultiSelectEnumSchema {
                min_items: Some(1),
                max_items: Some(2),
                items: UntitledEnumItems {
                    values: vec!["Red".into(), "Green".into(), "Blue".into()],
                    ..UntitledEnumItems::default()
                },
                default: Some(vec!["Red".into()]),
                ..UntitledMultiSelectEnumSchema::default()
            }
            .into(),
        ));
        out.push((
            "TitledMultiSelectEnumSchema",
            TitledMultiSelectEnumSchema {
                title: Some("Colors".into()),
                items: TitledEnumItems { any_of: opts },
                ..TitledMultiSelectEnumSchema::default()
            }
            .into(),
        ));
    } else {
        out.push(("EnumSchema", legacy_enum.into()));
        out.push((
            "EnumSchema",
            UntitledSingleSelectEnumSchema {
                values: vec!["a".into(), "b".into()],
                ..UntitledSingleSelectEnumSchema::default()
            }
            .into(),
        ));
    }
    out
}

fn elicitation(s: &mut Suite, v: V) {
    if !v.ge(V3) {
        return;
    }
    let mut form = ElicitationSchema::new();
    for (i, (def, f)) in field_schemas(v).into_iter().enumerate() {
        s.def(v, def, &f);
        s.def(v, "PrimitiveSchemaDefinition", &f);
        form = if i % 2 == 0 {
            form.required_field(format!("f{i}"), f)
        } else {
            form.field(format!("f{i}"), f)
        };
    }
    if v.ge(V4) {
        form.schema = Some("https://json-schema.org/draft/2020-12/schema".into());
    }
    let form_params = ElicitRequestFormParams {
        mode: v.ge(V4).then_some(FormMode),
        message: "Please fill in the form".into(),
        requested_schema: form.clone(),
        task: (v.0 == V4).then_some(TaskMetadata { ttl: Some(1000) }),
        meta: if v.legacy() { v.req_meta() } else { None },
    };
    let form_params = ElicitRequestParams::Form(form_params);
    if v.ge(V4) {
        s.def(v, "ElicitRequestFormParams", &form_params);
        s.def(v, "ElicitRequestParams", &form_params);
    }
    s.server_req(v, "ElicitRequest", InputRequest::Elicit(form_params));
    s.server_req(
        v,
        "ElicitRequest",
        InputRequest::Elicit(ElicitRequestParams::form(
            "Your name?",
            ElicitationSchema::new().required_field("name", StringSchema::default()),
        )),
    );
    if v.ge(V4) {
        let url = ElicitRequestParams::url(
            "Please provide your API key to continue.",
            "https://mcp.example.com/ui/set_api_key",
            v.legacy().then(|| "elicit-42".into()),
        );
        s.def(v, "ElicitRequestURLParams", &url);
        s.server_req(v, "ElicitRequest", InputRequest::Elicit(url.clone()));
        if v.legacy() {
            let ElicitRequestParams::Url(u) = url else {
                unreachable!()
            };
            s.error_data(
                v,
                "URLElicitationRequiredError",
                -32042,
                &UrlElicitationRequiredData {
                    elicitations: vec![u],
                },
            );
            s.notif(
                v,
                "ElicitationCompleteNotification",
                methods::NOTIFICATION_ELICITATION_COMPLETE,
                Some(&ElicitationCompleteNotificationParams {
                    elicitation_id: "elicit-42".into(),
                    meta: None,
                }),
            );
        }
    }
    let mut content = BTreeMap::new();
    content.insert("name".to_string(), ElicitValue::from("Monalisa Octocat"));
    content.insert("age".to_string(), ElicitValue::from(30));
    content.insert("subscribe".to_string(), ElicitValue::from(true));
    if v.ge(V4) {
        content.insert(
            "colors".to_string(),
            ElicitValue::from(vec!["Red".to_string(), "Green".to_string()]),
        );
    }
    let mut accept = ElicitResult::accept(content);
    if v.legacy() {
        accept.meta = Some(obj(json!({"com.example/x": true})));
    }
    s.result(v, "ElicitResult", &accept);
    s.result(v, "ElicitResult", &ElicitResult::decline());
    s.result(v, "ElicitResult", &ElicitResult::cancel());
    if v.ge(V4) {
        s.result(
            v,
            "ElicitResult",
            &ElicitResult {
                action: ElicitAction::Accept,
                content: None,
                meta: None,
            },
        );
    }
}

fn tasks(s: &mut Suite, v: V) {
    if v.0 != V4 {
        return;
    }
    let mut task = Task::new("786512e2", TaskStatus::Working, "2025-11-25T10:30:00Z");
    task.status_message = Some("The operation is now in progress.".into());
    task.ttl = Some(60_000);
    task.poll_interval = Some(5000);
    s.def(v, "Task", &task);
    let unlimited = Task {
        ttl: None,
        ..Task::new("t2", TaskStatus::InputRequired, "2025-11-25T10:30:00Z")
    };
    s.def(v, "Task", &unlimited);
    s.def(v, "TaskMetadata", &TaskMetadata { ttl: Some(60_000) });
    s.def(v, "TaskMetadata", &TaskMetadata::default());
    let related = RelatedTaskMetadata {
        task_id: "786512e2".into(),
    };
    s.def(v, "RelatedTaskMetadata", &related);
    for st in [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ] {
        s.def(v, "TaskStatus", &st);
    }
    s.result(
        v,
        "CreateTaskResult",
        &CreateTaskResult {
            task: task.clone(),
            meta: v.res_meta(),
        },
    );
    let id = TaskIdParams::new("786512e2");
    s.req(v, "GetTaskRequest", methods::TASKS_GET, &id);
    s.result(
        v,
        "GetTaskResult",
        &Task {
            meta: v.res_meta(),
            ..task.clone()
        },
    );
    s.req(v, "GetTaskPayloadRequest", methods::TASKS_RESULT, &id);
    let mut payload = obj(serde_json::to_value(CallToolResult::text("done")).unwrap());
    payload.insert(
        "_meta".into(),
        json!({RELATED_TASK_KEY: serde_json::to_value(&related).unwrap()}),
    );
    s.result(v, "GetTaskPayloadResult", &payload);
    s.req(
        v,
        "ListTasksRequest",
        methods::TASKS_LIST,
        &PaginatedRequestParams::after("c1"),
    );
    s.result(
        v,
        "ListTasksResult",
        &ListTasksResult {
            tasks: vec![task.clone(), unlimited],
            next_cursor: Some("c2".into()),
            meta: None,
        },
    );
    s.req(v, "CancelTaskRequest", methods::TASKS_CANCEL, &id);
    s.result(
        v,
        "CancelTaskResult",
        &Task {
            status: TaskStatus::Cancelled,
            ..task.clone()
        },
    );
    s.notif(
        v,
        "TaskStatusNotification",
        methods::NOTIFICATION_TASKS_STATUS,
        Some(&Task {
            status: TaskStatus::Completed,
            meta: Some(obj(json!({RELATED_TASK_KEY: {"taskId": "786512e2"}}))),
            ..task
        }),
    );
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn samples_validate_against_every_version() {
    let mut s = Suite::default();
    for v in ProtocolVersion::ALL {
        let v = V(v);
        lifecycle(&mut s, v);
        content(&mut s, v);
        tools(&mut s, v);
        resources(&mut s, v);
        prompts(&mut s, v);
        completion(&mut s, v);
        logging(&mut s, v);
        sampling(&mut s, v);
        roots(&mut s, v);
        elicitation(&mut s, v);
        tasks(&mut s, v);
    }
    let (n, per_version) = s.run();
    println!("schema checks: {n} ({per_version:?})");
    assert!(n >= 300, "only {n} checks");
    for (v, k) in per_version {
        assert!(k >= 60, "{v}: only {k} checks");
    }
}

/// The validator is live: samples that break the schema are rejected.
#[test]
fn validator_rejects_invalid_samples() {
    let sch = schemas();
    let reject = |v: ProtocolVersion, def: &str, inst: Value| {
        let errs = sch[&v].errors(def, &inst);
        assert!(!errs.is_empty(), "{v} {def} accepted invalid {inst}");
    };
    let accept = |v: ProtocolVersion, def: &str, inst: Value| {
        let errs = sch[&v].errors(def, &inst);
        assert!(errs.is_empty(), "{v} {def} rejected {inst}: {errs:?}");
    };

    // A result missing a required field.
    let mut r = serde_json::to_value(CallToolResult::text("x")).unwrap();
    r.as_object_mut().unwrap().remove("content");
    for v in ProtocolVersion::ALL {
        reject(v, "CallToolResult", r.clone());
    }

    // A legacy-shaped result (no resultType) is fine before 2026-07-28, not in it.
    let legacy = serde_json::to_value(CallToolResult::text("x")).unwrap();
    accept(V4, "CallToolResult", legacy.clone());
    reject(V5, "CallToolResult", legacy.clone());
    accept(
        V5,
        "CallToolResult",
        serde_json::to_value(CallToolResult::text("x").complete()).unwrap(),
    );

    // Cache hints are required in 2026-07-28.
    let list = ListToolsResult {
        result_type: Some(ResultType::Complete),
        ..ListToolsResult::default()
    };
    reject(V5, "ListToolsResult", serde_json::to_value(&list).unwrap());
    accept(V4, "ListToolsResult", serde_json::to_value(&list).unwrap());
    let list = ListToolsResult {
        ttl_ms: Some(0),
        cache_scope: Some(CacheScope::Private),
        ..list
    };
    accept(V5, "ListToolsResult", serde_json::to_value(&list).unwrap());

    // 2026-07-28 requests need the per-request _meta.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": serde_json::to_value(CallToolRequestParams::new("t", Map::new())).unwrap()});
    accept(V4, "CallToolRequest", call.clone());
    reject(V5, "CallToolRequest", call);

    // Audio content did not exist in 2024-11-05.
    let audio =
        json!({"content": [serde_json::to_value(Content::audio("AA==", "audio/wav")).unwrap()]});
    reject(V1, "CallToolResult", audio.clone());
    accept(V2, "CallToolResult", audio);

    // The strict pass catches members a version does not define.
    let strict = strict_schemas();
    let titled = serde_json::to_value(Tool {
        title: Some("T".into()),
        ..Tool::without_params("t")
    })
    .unwrap();
    assert!(!strict[&V1].errors("Tool", &titled).is_empty());
    assert!(strict[&V3].errors("Tool", &titled).is_empty());
    assert!(sch[&V1].errors("Tool", &titled).is_empty());
    let form = json!({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"mode": "form",
        "message": "m", "requestedSchema": {"type": "object", "properties": {}}}});
    assert!(
        !strict[&V3]
            .errors("ElicitRequest", &strict_instance(V3, &form))
            .is_empty()
    );
    assert!(
        strict[&V4]
            .errors("ElicitRequest", &strict_instance(V4, &form))
            .is_empty()
    );

    // Errors deep inside referenced definitions are found too.
    reject(V1, "CallToolResult", json!({"content": [{"type": "text"}]}));
    reject(
        V5,
        "ListToolsResult",
        json!({"resultType": "complete", "ttlMs": 1, "cacheScope": "public",
            "tools": [{"name": "t"}]}),
    );
    reject(
        V5,
        "ListToolsResult",
        json!({"resultType": "complete", "ttlMs": -1,
        "cacheScope": "public", "tools": []}),
    );
    // Formats are checked.
    reject(V3, "Resource", json!({"uri": "not a uri", "name": "x"}));
    reject(V5, "Resource", json!({"uri": "not a uri", "name": "x"}));
    // Wrong enum value and wrong type.
    reject(V3, "LoggingLevel", json!("verbose"));
    reject(
        V3,
        "ProgressNotification",
        json!({"method": "notifications/progress",
        "params": {"progressToken": "t", "progress": "half"}}),
    );
    // structuredContent must be an object before 2026-07-28.
    let arr = serde_json::to_value(CallToolResult::structured(json!([1]))).unwrap();
    reject(V4, "CallToolResult", arr.clone());
    let mut arr5 = arr;
    arr5["resultType"] = json!("complete");
    accept(V5, "CallToolResult", arr5);
    // Spec quirk: the generated schemas type form values as integers, so a float is rejected.
    reject(
        V5,
        "ElicitResult",
        json!({"action": "accept", "content": {"x": 1.5}}),
    );
    // A URL elicitation without elicitationId is invalid in 2025-11-25 only.
    let url =
        serde_json::to_value(ElicitRequestParams::url("m", "https://example.com", None)).unwrap();
    reject(V4, "ElicitRequestURLParams", url.clone());
    accept(V5, "ElicitRequestURLParams", url);
}

/// Our deserialisers reject what the types cannot represent.
#[test]
fn typed_parsing_rejects_malformed_input() {
    assert!(serde_json::from_value::<Content>(json!({"type": "video", "data": "x"})).is_err());
    assert!(serde_json::from_value::<Content>(json!({"type": "text"})).is_err());
    assert!(
        serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"}))
            .is_err()
    );
    assert!(serde_json::from_value::<ElicitRequestParams>(json!({"message": "m"})).is_err());
    assert!(
        serde_json::from_value::<ElicitRequestParams>(
            json!({"mode": "popup", "message": "m", "url": "https://x"})
        )
        .is_err()
    );
    assert!(
        serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "object"})).is_err()
    );
    assert!(
        serde_json::from_value::<InputRequest>(json!({"method": "elicitation/create"})).is_err()
    );
    assert!(serde_json::from_value::<LoggingLevel>(json!("verbose")).is_err());
    assert!(serde_json::from_value::<Reference>(json!({"type": "ref/tool", "name": "x"})).is_err());
    assert!(serde_json::from_value::<TaskStatus>(json!("paused")).is_err());
    // Open enums keep unknown values.
    assert_eq!(
        serde_json::from_value::<ResultType>(json!("later")).unwrap(),
        ResultType::Other("later".into())
    );
    assert_eq!(
        serde_json::from_value::<StopReason>(json!("length")).unwrap(),
        StopReason::Other("length".into())
    );
}

#[test]
fn elicitation_fields_keep_their_order() {
    let text = r#"{"message":"m","requestedSchema":{"type":"object","properties":{
        "zeta":{"type":"string"},"alpha":{"type":"boolean"},"mid":{"type":"integer"}}}}"#;
    let p: ElicitRequestParams = serde_json::from_str(text).unwrap();
    let ElicitRequestParams::Form(f) = &p else {
        panic!("not a form")
    };
    let names: Vec<_> = f
        .requested_schema
        .properties
        .iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    assert!(matches!(
        f.requested_schema.properties.get("mid"),
        Some(PrimitiveSchemaDefinition::Number(NumberSchema {
            r#type: NumberType::Integer,
            ..
        }))
    ));
    // Also inside an input request. With `method` first the params are parsed directly;
    // `params` first is buffered in a `Value`, which keeps the order here because the tests
    // enable serde_json's `preserve_order`.
    for text in [
        format!(r#"{{"method":"elicitation/create","params":{text}}}"#),
        format!(r#"{{"params":{text},"method":"elicitation/create"}}"#),
    ] {
        let r: InputRequest = serde_json::from_str(&text).unwrap();
        assert_eq!(r, InputRequest::Elicit(p.clone()));
    }
    let out = serde_json::to_string(&p).unwrap();
    let z = out.find("zeta").unwrap();
    let a = out.find("alpha").unwrap();
    assert!(z < a, "{out}");
}

#[test]
fn request_meta_and_outcomes() {
    let caps = ClientCapabilities {
        extensions: Some(obj(json!({extension::EXTENSION_ID: {}}))),
        ..ClientCapabilities::default()
    };
    assert!(caps.has_extension(extension::EXTENSION_ID));
    let meta = RequestMeta::new("2026-07-28", caps)
        .with_client_info(Implementation::new("c", "1"))
        .with_progress_token(5)
        .with_log_level(LoggingLevel::Info);
    let mut m = meta.to_meta().unwrap();
    assert_eq!(m[PROTOCOL_VERSION_KEY], "2026-07-28");
    assert_eq!(m[LOG_LEVEL_KEY], "info");
    assert_eq!(progress_token(Some(&m)), Some(RequestId::Number(5)));
    m.insert("com.example/x".into(), json!(1));
    let back = RequestMeta::from_meta(&m).unwrap();
    assert_eq!(back.other.get("com.example/x"), Some(&json!(1)));
    assert_eq!(back.client_info, meta.client_info);
    assert_eq!(back.version(), Some(V5));
    assert_eq!(
        subscription_id(Some(&subscription_meta(&RequestId::from("l-1")))),
        Some(RequestId::from("l-1"))
    );

    // RequestOutcome dispatches on resultType (absent = complete), from text and from Value.
    let cases = [
        (json!({"content": []}), "complete"),
        (
            json!({"resultType": "complete", "content": [], "isError": true}),
            "complete",
        ),
        (
            json!({"resultType": "input_required", "requestState": "s"}),
            "input",
        ),
        (
            json!({"resultType": "task", "taskId": "t", "status": "working",
                "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
                "ttlMs": null, "pollIntervalMs": 5000}),
            "task",
        ),
    ];
    for (json, want) in cases {
        let a: RequestOutcome<CallToolResult> = serde_json::from_value(json.clone()).unwrap();
        let b = RequestOutcome::<CallToolResult>::from_json_str(&json.to_string()).unwrap();
        assert_eq!(a, b);
        let got = match &a {
            RequestOutcome::Complete(_) => "complete",
            RequestOutcome::InputRequired(_) => "input",
            RequestOutcome::Task(_) => "task",
            _ => "other",
        };
        assert_eq!(got, want, "{json}");
        assert!(json_eq(&serde_json::to_value(&a).unwrap(), &json));
    }
    // A task's ttl is written as null when unlimited.
    let t = Task::new("t", TaskStatus::Working, "2025-11-25T10:30:00Z");
    assert_eq!(serde_json::to_value(&t).unwrap()["ttl"], Value::Null);
    assert!(TaskStatus::Cancelled.is_terminal());
    assert!(!TaskStatus::InputRequired.is_terminal());
    // Logging levels are ordered by severity.
    assert!(LoggingLevel::Debug < LoggingLevel::Emergency);
    assert_eq!(LoggingLevel::parse("warning"), Some(LoggingLevel::Warning));
    // Every method name is unique.
    let mut all: Vec<&str> = methods::ALL_REQUESTS.to_vec();
    all.extend_from_slice(methods::ALL_NOTIFICATIONS);
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n);
}

/// The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) has no schema.json; check
/// the round trip of the shapes given in the SEP.
#[test]
fn tasks_extension_shapes_roundtrip() {
    let created = json!({
        "resultType": "task",
        "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
        "status": "working",
        "statusMessage": "The operation is now in progress.",
        "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:40:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 5000
    });
    let t: extension::CreateTaskResult = serde_json::from_value(created.clone()).unwrap();
    assert_eq!(t.result_type, Some(ResultType::Task));
    assert!(json_eq(&roundtrip(&t).unwrap(), &created));

    let input = json!({
        "resultType": "complete",
        "taskId": "t", "status": "input_required",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:50:00Z",
        "ttlMs": null,
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
            "message": "Proceed?", "requestedSchema": {"type": "object", "properties": {
                "ok": {"type": "boolean"}}}}}}
    });
    let t: extension::GetTaskResult = serde_json::from_value(input.clone()).unwrap();
    assert!(matches!(
        t.input_requests.as_ref().unwrap()["confirm"],
        InputRequest::Elicit(ElicitRequestParams::Form(_))
    ));
    assert!(json_eq(&roundtrip(&t).unwrap(), &input));

    let done = json!({
        "taskId": "t", "status": "completed",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:50:00Z",
        "ttlMs": 60000, "pollIntervalMs": 5000,
        "result": {"content": [{"type": "text", "text": "Operation completed successfully."}],
            "isError": false}
    });
    let t: extension::TaskStatusNotificationParams = serde_json::from_value(done.clone()).unwrap();
    let result: CallToolResult =
        serde_json::from_value(Value::Object(t.result.clone().unwrap())).unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some("Operation completed successfully.")
    );
    assert!(json_eq(&roundtrip(&t).unwrap(), &done));

    let failed = json!({
        "taskId": "t", "status": "failed",
        "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:50:00Z",
        "ttlMs": 60000,
        "error": {"code": -32603, "message": "boom"}
    });
    let t: extension::Task = serde_json::from_value(failed.clone()).unwrap();
    assert!(json_eq(&roundtrip(&t).unwrap(), &failed));

    let mut responses = InputResponses::new();
    responses.insert(
        "confirm".into(),
        ElicitResult::accept([("ok".to_string(), ElicitValue::from(true))].into()).into(),
    );
    let update = extension::UpdateTaskRequestParams {
        task_id: "t".into(),
        input_responses: responses,
        meta: None,
    };
    let v = roundtrip(&update).unwrap();
    assert_eq!(v["inputResponses"]["confirm"]["action"], "accept");

    let filter = SubscriptionFilter {
        task_ids: Some(vec!["t".into()]),
        ..SubscriptionFilter::default()
    };
    assert_eq!(roundtrip(&filter).unwrap(), json!({"taskIds": ["t"]}));
}

// ---------------------------------------------------------------------------------------------
// Upstream examples (2026-07-28)
// ---------------------------------------------------------------------------------------------

/// Parses an example value with `T`, from its text, and returns the re-serialised value.
fn reparse<T: Serialize + DeserializeOwned>(v: &Value) -> Result<Value, String> {
    let t: T = serde_json::from_str(&v.to_string()).map_err(|e| format!("parse: {e}"))?;
    serde_json::to_value(&t).map_err(|e| format!("serialise: {e}"))
}

/// How an example of a given schema type is parsed.
#[derive(Clone, Copy)]
enum Handler {
    /// The whole example is `T`.
    Whole(fn(&Value) -> Result<Value, String>),
    /// The member at this JSON pointer is `T`; the rest is the JSON-RPC envelope.
    At(&'static str, fn(&Value) -> Result<Value, String>),
    /// Only these members are `T`; the others (e.g. a stray `id`) are left as they are.
    Only(&'static [&'static str], fn(&Value) -> Result<Value, String>),
    /// No Rust type (JSON-RPC envelope / error objects live elsewhere): validated only.
    ValidateOnly,
}

fn handler(type_name: &str) -> Option<Handler> {
    use Handler::*;
    Some(match type_name {
        "AudioContent" | "TextContent" | "ImageContent" | "EmbeddedResource" | "ResourceLink" => {
            Whole(reparse::<Content>)
        }
        "BlobResourceContents" | "TextResourceContents" => Whole(reparse::<ResourceContents>),
        "BooleanSchema"
        | "NumberSchema"
        | "StringSchema"
        | "TitledMultiSelectEnumSchema"
        | "TitledSingleSelectEnumSchema"
        | "UntitledMultiSelectEnumSchema"
        | "UntitledSingleSelectEnumSchema" => Whole(reparse::<PrimitiveSchemaDefinition>),
        "CallToolRequest" => At("/params", reparse::<CallToolRequestParams>),
        "CallToolRequestParams" => Whole(reparse::<CallToolRequestParams>),
        "CallToolResult" => Whole(reparse::<CallToolResult>),
        "CallToolResultResponse" => At("/result", reparse::<RequestOutcome<CallToolResult>>),
        "CancelledNotification" => At("/params", reparse::<CancelledNotificationParams>),
        "CancelledNotificationParams" => Whole(reparse::<CancelledNotificationParams>),
        "ClientCapabilities" => Whole(reparse::<ClientCapabilities>),
        "ServerCapabilities" => Whole(reparse::<ServerCapabilities>),
        "CompleteRequest" => At("/params", reparse::<CompleteRequestParams>),
        "CompleteRequestParams" => Whole(reparse::<CompleteRequestParams>),
        "CompleteResult" => Whole(reparse::<CompleteResult>),
        "CompleteResultResponse" => At("/result", reparse::<CompleteResult>),
        "CreateMessageRequest" | "ElicitRequest" | "ListRootsRequest" => {
            Only(&["method", "params"], reparse::<InputRequest>)
        }
        "CreateMessageRequestParams" => Whole(reparse::<CreateMessageRequestParams>),
        "CreateMessageResult" => Whole(reparse::<CreateMessageResult>),
        "DiscoverRequest" => At("/params", reparse::<RequestParams>),
        "DiscoverResult" => Whole(reparse::<DiscoverResult>),
        "DiscoverResultResponse" => At("/result", reparse::<DiscoverResult>),
        "ElicitRequestFormParams" | "ElicitRequestURLParams" => {
            Whole(reparse::<ElicitRequestParams>)
        }
        "ElicitResult" => Whole(reparse::<ElicitResult>),
        "GetPromptRequest" => At("/params", reparse::<GetPromptRequestParams>),
        "GetPromptRequestParams" => Whole(reparse::<GetPromptRequestParams>),
        "GetPromptResult" => Whole(reparse::<GetPromptResult>),
        "GetPromptResultResponse" => At("/result", reparse::<RequestOutcome<GetPromptResult>>),
        "InputRequests" => Whole(reparse::<InputRequests>),
        "InputResponses" => Whole(reparse::<InputResponses>),
        "InputRequiredResult" => Whole(reparse::<InputRequiredResult>),
        "ListPromptsRequest"
        | "ListResourceTemplatesRequest"
        | "ListResourcesRequest"
        | "ListToolsRequest" => At("/params", reparse::<PaginatedRequestParams>),
        "PaginatedRequestParams" => Whole(reparse::<PaginatedRequestParams>),
        "ListPromptsResult" => Whole(reparse::<ListPromptsResult>),
        "ListPromptsResultResponse" => At("/result", reparse::<ListPromptsResult>),
        "ListResourceTemplatesResult" => Whole(reparse::<ListResourceTemplatesResult>),
        "ListResourceTemplatesResultResponse" => {
            At("/result", reparse::<ListResourceTemplatesResult>)
        }
        "ListResourcesResult" => Whole(reparse::<ListResourcesResult>),
        "ListResourcesResultResponse" => At("/result", reparse::<ListResourcesResult>),
        "ListToolsResult" => Whole(reparse::<ListToolsResult>),
        "ListToolsResultResponse" => At("/result", reparse::<ListToolsResult>),
        "ListRootsResult" => Whole(reparse::<ListRootsResult>),
        "LoggingMessageNotification" => At("/params", reparse::<LoggingMessageNotificationParams>),
        "LoggingMessageNotificationParams" => Whole(reparse::<LoggingMessageNotificationParams>),
        "ModelPreferences" => Whole(reparse::<ModelPreferences>),
        "ProgressNotification" => At("/params", reparse::<ProgressNotificationParams>),
        "ProgressNotificationParams" => Whole(reparse::<ProgressNotificationParams>),
        "PromptListChangedNotification"
        | "ResourceListChangedNotification"
        | "ToolListChangedNotification" => At("/params", reparse::<NotificationParams>),
        "ReadResourceRequest" => At("/params", reparse::<ReadResourceRequestParams>),
        "ReadResourceResult" => Whole(reparse::<ReadResourceResult>),
        "ReadResourceResultResponse" => {
            At("/result", reparse::<RequestOutcome<ReadResourceResult>>)
        }
        "Resource" => Whole(reparse::<Resource>),
        "ResourceUpdatedNotification" => {
            At("/params", reparse::<ResourceUpdatedNotificationParams>)
        }
        "ResourceUpdatedNotificationParams" => Whole(reparse::<ResourceUpdatedNotificationParams>),
        "Root" => Whole(reparse::<Root>),
        "SamplingMessage" => Whole(reparse::<SamplingMessage>),
        "SubscriptionsAcknowledgedNotification" => At(
            "/params",
            reparse::<SubscriptionsAcknowledgedNotificationParams>,
        ),
        "SubscriptionsListenRequest" => At("/params", reparse::<SubscriptionsListenRequestParams>),
        "SubscriptionsListenResult" => Whole(reparse::<SubscriptionsListenResult>),
        "SubscriptionsListenResultResponse" => At("/result", reparse::<SubscriptionsListenResult>),
        "Tool" => Whole(reparse::<Tool>),
        "ToolResultContent" | "ToolUseContent" => Whole(reparse::<SamplingContent>),
        "UnsupportedProtocolVersionError" => {
            At("/error/data", reparse::<UnsupportedProtocolVersionData>)
        }
        "MissingRequiredClientCapabilityError" => At(
            "/error/data",
            reparse::<MissingRequiredClientCapabilityData>,
        ),
        "HeaderMismatchError"
        | "InternalError"
        | "InvalidParamsError"
        | "MethodNotFoundError"
        | "ParseError" => ValidateOnly,
        _ => return None,
    })
}

#[test]
fn upstream_examples_parse_and_revalidate() {
    let dir = fixtures().join("examples/2026-07-28");
    let schema = &schemas()[&V5];
    let mut types: Vec<_> = std::fs::read_dir(&dir)
        .expect("examples fixture")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    types.sort();
    let (mut typed, mut validated_only, mut failures) = (0, 0, Vec::new());
    for tdir in types {
        let type_name = tdir.file_name().unwrap().to_str().unwrap().to_string();
        let Some(h) = handler(&type_name) else {
            failures.push(format!("{type_name}: no handler"));
            continue;
        };
        let mut files: Vec<_> = std::fs::read_dir(&tdir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let label = format!("{type_name}/{}", f.file_name().unwrap().to_string_lossy());
            let original: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap())
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            // The example as published validates.
            let errs = schema.errors(&type_name, &original);
            if !errs.is_empty() {
                failures.push(format!("{label}: upstream example invalid: {errs:?}"));
            }
            let rebuilt = match h {
                Handler::ValidateOnly => {
                    validated_only += 1;
                    continue;
                }
                Handler::Whole(f) => f(&original),
                Handler::Only(keys, f) => {
                    let mut whole = obj(original.clone());
                    let part: Map<String, Value> = keys
                        .iter()
                        .filter_map(|k| whole.remove(*k).map(|v| (k.to_string(), v)))
                        .collect();
                    f(&Value::Object(part)).map(|ours| {
                        whole.extend(obj(ours));
                        Value::Object(whole)
                    })
                }
                Handler::At(ptr, f) => match original.pointer(ptr) {
                    None => Err(format!("no {ptr}")),
                    Some(inner) => f(inner).map(|ours| {
                        let mut whole = original.clone();
                        *whole.pointer_mut(ptr).unwrap() = ours;
                        whole
                    }),
                },
            };
            typed += 1;
            let rebuilt = match rebuilt {
                Ok(r) => r,
                Err(e) => {
                    failures.push(format!("{label}: {e}"));
                    continue;
                }
            };
            let errs = schema.errors(&type_name, &rebuilt);
            if !errs.is_empty() {
                failures.push(format!(
                    "{label}: re-serialised example invalid: {errs:?}\n  {rebuilt}"
                ));
            }
            if !json_eq(&original, &rebuilt) {
                failures.push(format!(
                    "{label}: round trip changed the example:\n  upstream: {original}\n  ours:     {rebuilt}"
                ));
            }
        }
    }
    println!("examples: {typed} parsed with our types, {validated_only} validated only");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(typed >= 110, "only {typed} examples parsed");
}
