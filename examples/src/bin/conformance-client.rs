//! `conformance-client <server-url>`: the client side of the official MCP conformance suite
//! (`conformance client --suite core --command conformance-client`). The suite starts one
//! server per scenario and runs this program with its URL and the scenario's name in
//! `MCP_CONFORMANCE_SCENARIO` (and, for some, `MCP_CONFORMANCE_CONTEXT`: JSON with e.g.
//! pre-registered OAuth credentials).
//!
//! Everything goes through the library: the typed `Client` over the Streamable HTTP transport
//! (`mcp_service::http_client`, tokio driver) with OAuth 2.1 configured
//! (`HttpClientOptions::oauth`, headless approval) and the elicitation defaults helper.
//!
//! Per scenario: `initialize` connects, lists tools and closes; `tools_call` calls
//! `add_numbers`; `elicitation-sep1034-client-defaults` calls the tool and accepts the form with
//! every default applied; `sse-retry` calls the tool while the transport resumes the broken
//! stream; `auth/*` connects with OAuth (DPoP on, with a fresh key; the grant the scenario's
//! context calls for: `client_credentials` with the secret or the private key
//! (`auth/client-credentials-*`), the identity provider's ID token for enterprise-managed
//! authorization, the workload JWT (from a file) for `auth/wif-jwt-bearer`, else the
//! authorization code), lists tools and calls the first one;
//! `sep-2640-client-*` (skills extension) acts as a skills host: lists the skills (and, but for
//! `sep-2640-client-no-prefetch`, loads the first one, verified, and reads the files its
//! instructions name, each verified, refusing content that fails). Anything else
//! gets a generic walk (tools, resources, prompts as advertised). Exit 0 on success, non-zero
//! with a message on stderr on failure.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use mcp_service::elicitation::accept_with_defaults;
use mcp_service::http_client::{HttpClientOptions, HttpTransport, TransportFinished};
use mcp_service::oauth::{
    AssertionSource, DpopKey, EnterpriseIdp, Entropy, Grant, OAuthClient, OAuthConfig,
    SigningAlgorithm, SigningKey,
};
use mcp_service::schema::CallToolResult;
use mcp_service::{Client, ClientOptions, Error, ErrorKind};
use mcp_tokio::{TcpConnector, TokioRuntime};
use serde_json::{Value, json};

/// The Client ID Metadata Document URL the suite's authorization servers accept.
const CONFORMANCE_CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Where the (headless) authorization redirects back to.
const REDIRECT_URI: &str = "http://localhost:3000/callback";
/// How long closing waits for the session's DELETE.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

fn main() -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("conformance-client: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(url), None) = (args.next(), args.next()) else {
        return Err(
            "usage: MCP_CONFORMANCE_SCENARIO=<scenario> conformance-client <server-url>".into(),
        );
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(raw) => serde_json::from_str::<Value>(&raw)
            .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
        Err(_) => Value::Null,
    };
    eprintln!("conformance-client: scenario {scenario:?} at {url}");

    match scenario.as_str() {
        "initialize" => {
            let session = Session::connect(&url, options("conformance-client"), http()).await?;
            // A server without the `tools` capability is not asked for tools.
            if capabilities(&session.client)?.get("tools").is_some() {
                session
                    .client
                    .list_tools()
                    .await
                    .map_err(step("tools/list"))?;
            }
            session.close().await;
        }
        "tools_call" => {
            let session = Session::connect(&url, options("conformance-client"), http()).await?;
            session
                .client
                .list_tools()
                .await
                .map_err(step("tools/list"))?;
            let result = session
                .client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await
                .map_err(step("tools/call add_numbers"))?;
            check_tool_result("add_numbers", &result)?;
            session.close().await;
        }
        "elicitation-sep1034-client-defaults" | "elicitation-defaults" => {
            let opts = options("conformance-client").elicitation(|params, _cx| async move {
                // The user submits the form untouched: every default applies.
                Ok(accept_with_defaults(&params, BTreeMap::new()))
            });
            let session = Session::connect(&url, opts, http()).await?;
            let tool = first_tool(&session.client, Some("test_client_elicitation_defaults"))
                .await?
                .ok_or("the server offers no tool")?;
            let result = session
                .client
                .call_tool(&tool, json!({}))
                .await
                .map_err(step("tools/call"))?;
            check_tool_result(&tool, &result)?;
            session.close().await;
        }
        "sse-retry" => {
            let session = Session::connect(&url, options("conformance-client"), http()).await?;
            let tool = first_tool(&session.client, None)
                .await?
                .ok_or("the server offers no tool")?;
            let result = session
                .client
                .call_tool(&tool, json!({}))
                .await
                .map_err(step("tools/call"))?;
            check_tool_result(&tool, &result)?;
            session.close().await;
        }
        "json-schema-2020-12-preservation" => {
            // The focal tool's inputSchema goes back verbatim to the echo tool.
            let session = Session::connect(&url, options("conformance-client"), http()).await?;
            let tools = session
                .client
                .list_tools()
                .await
                .map_err(step("tools/list"))?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("the server offers no json_schema_2020_12_tool")?;
            let schema = Value::Object(focal.input_schema.clone());
            let result = session
                .client
                .call_tool("json_schema_echo", json!({ "schema": schema }))
                .await
                .map_err(step("tools/call json_schema_echo"))?;
            check_tool_result("json_schema_echo", &result)?;
            session.close().await;
        }
        s if s.starts_with("sep-2640-client-") => {
            let session = Session::connect(&url, options("conformance-client"), http()).await?;
            skills_host(&session.client, s != "sep-2640-client-no-prefetch").await?;
            session.close().await;
        }
        s if s.starts_with("auth/") => {
            let (oauth, _assertion_file) = auth_client(s, &context)?;
            let http = http().oauth(oauth, entropy);
            let session = Session::connect(&url, options("conformance-auth-client"), http).await?;
            if let Some(tool) = first_tool(&session.client, None).await? {
                let result = session
                    .client
                    .call_tool(&tool, json!({}))
                    .await
                    .map_err(step("tools/call"))?;
                check_tool_result(&tool, &result)?;
            }
            session.close().await;
        }
        _ => {
            let oauth = oauth_client(&context)?;
            let http = http().oauth(oauth, entropy);
            let opts = answering(options("conformance-client"));
            let session = Session::connect(&url, opts, http).await?;
            match context.get("toolCalls").and_then(Value::as_array) {
                // The scenario names the calls to make (with their arguments).
                Some(calls) => scripted_calls(&session.client, calls).await?,
                None => generic_walk(&session.client).await?,
            }
            session.close().await;
        }
    }
    eprintln!("conformance-client: done");
    Ok(())
}

/// A connected client and the end of its transport.
struct Session {
    client: Client,
    finished: TransportFinished,
}

impl Session {
    async fn connect(
        url: &str,
        options: ClientOptions,
        http: HttpClientOptions,
    ) -> Result<Session, String> {
        let rt = TokioRuntime::current();
        let (stream, finished) = mcp_service::http_client::http_transport(
            rt.clone(),
            TcpConnector(rt.clone()),
            url,
            HttpTransport::Streamable,
            http,
        )
        .map_err(|e| format!("{url}: {e}"))?;
        let client = Client::connect(rt, stream, options)
            .await
            .map_err(|e| format!("connecting to {url}: {e}"))?;
        eprintln!(
            "conformance-client: connected ({})",
            client.protocol_version().as_str()
        );
        Ok(Session { client, finished })
    }

    /// Closes the client and waits (bounded) for the session's DELETE.
    async fn close(self) {
        self.client.close();
        drop(self.client);
        let _ = tokio::time::timeout(CLOSE_WAIT, self.finished).await;
    }
}

/// Maps a failed step's error to the message this program ends with.
fn step(what: &'static str) -> impl Fn(Error) -> String {
    move |e| format!("{what}: {e}")
}

/// Both eras: `server/discover` first, the handshake when the server is of the handshake era.
fn options(name: &str) -> ClientOptions {
    ClientOptions::new(name, env!("CARGO_PKG_VERSION"))
        .versions(&mcp_proto::ProtocolVersion::ALL)
        .discovery(mcp_proto::session::Discovery::Auto)
}

/// `options` that answer the server's input (elicitation with the form's defaults, a fixed
/// sampling answer, one root): as server requests in the handshake era, as `input_required`
/// rounds in the stateless era.
fn answering(options: ClientOptions) -> ClientOptions {
    options
        .elicitation(
            |params, _cx| async move { Ok(accept_with_defaults(&params, BTreeMap::new())) },
        )
        .sampling(|_params, _cx| async move {
            Ok(mcp_service::schema::CreateMessageResult::text(
                "conformance-model",
                "a sampled answer",
            ))
        })
        .roots(vec![mcp_service::schema::Root::new("file:///conformance")])
}

fn http() -> HttpClientOptions {
    HttpClientOptions::new()
}

/// PKCE and `state` randomness from the operating system.
fn entropy() -> Result<Entropy, Error> {
    let mut bytes = [0u8; 48];
    getrandom::fill(&mut bytes).map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!("no random bytes for the authorization: {e}"),
        )
    })?;
    Ok(Entropy::from_bytes(bytes))
}

/// The OAuth client: named, redirecting to [`REDIRECT_URI`], offering the suite's Client ID
/// Metadata Document URL, and pre-registered when the context carries credentials.
fn oauth_client(context: &Value) -> Result<OAuthClient, String> {
    oauth_client_with(context, None)
}

/// [`oauth_client`] with DPoP when `dpop` is given.
fn oauth_client_with(context: &Value, dpop: Option<DpopKey>) -> Result<OAuthClient, String> {
    let mut config = base_config();
    if let Some(key) = dpop {
        config = config.dpop(key);
    }
    if let Some(id) = context.get("client_id").and_then(Value::as_str) {
        let secret = context
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_owned);
        config = config.pre_registered(id, secret);
    } else if !context.is_null() && !context.is_object() {
        return Err(format!(
            "MCP_CONFORMANCE_CONTEXT is not an object: {context}"
        ));
    }
    Ok(OAuthClient::new(config))
}

/// A string of the scenario's context.
fn context_str<'a>(context: &'a Value, key: &str) -> Result<&'a str, String> {
    context
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT has no {key}"))
}

/// A file holding `contents`, readable by this user alone, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(name: &str, contents: &str) -> Result<TempFile, String> {
        use std::io::Write;
        let path = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut f = options
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        f.write_all(contents.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TempFile(path))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The OAuth client of an `auth/*` scenario: the grant its context calls for, DPoP on (a
/// server that issues Bearer tokens gets them used as such), and the file the workload
/// identity token was written to, if any (kept until the run ends).
fn auth_client(scenario: &str, context: &Value) -> Result<(OAuthClient, Option<TempFile>), String> {
    let dpop = DpopKey::generate().map_err(|e| e.to_string())?;
    let mut file = None;
    let config = if context.get("private_key_pem").is_some() {
        // auth/client-credentials-jwt: private_key_jwt with the scenario's key.
        let alg = context
            .get("signing_algorithm")
            .and_then(Value::as_str)
            .unwrap_or("ES256");
        let alg = SigningAlgorithm::from_name(alg)
            .ok_or_else(|| format!("unsupported signing_algorithm {alg}"))?;
        let key = SigningKey::from_pem(context_str(context, "private_key_pem")?.as_bytes(), alg)
            .map_err(|e| e.to_string())?;
        base_config()
            .grant(Grant::ClientCredentials)
            .private_key_jwt(context_str(context, "client_id")?, key)
    } else if context.get("idp_id_token").is_some() {
        // Enterprise-managed authorization: the IdP's ID token becomes an ID-JAG.
        let idp = EnterpriseIdp::new(
            context_str(context, "idp_token_endpoint")?,
            context_str(context, "idp_client_id")?,
            AssertionSource::value(context_str(context, "idp_id_token")?),
        );
        base_config()
            .grant(Grant::EnterpriseManaged(idp))
            .pre_registered(
                context_str(context, "client_id")?,
                Some(context_str(context, "client_secret")?.to_owned()),
            )
    } else if context.get("valid_jwt").is_some() {
        // Workload identity federation: the platform's JWT, read from a token file.
        let token = TempFile::new("conformance-wif-token", context_str(context, "valid_jwt")?)?;
        let source = AssertionSource::file(&token.0);
        file = Some(token);
        base_config()
            .grant(Grant::JwtBearer(source))
            .pre_registered(context_str(context, "client_id")?, None)
    } else if scenario.starts_with("auth/client-credentials") {
        base_config()
            .grant(Grant::ClientCredentials)
            .pre_registered(
                context_str(context, "client_id")?,
                Some(context_str(context, "client_secret")?.to_owned()),
            )
    } else {
        return Ok((oauth_client_with(context, Some(dpop))?, None));
    };
    Ok((OAuthClient::new(config.dpop(dpop)), file))
}

fn base_config() -> OAuthConfig {
    OAuthConfig::new("mcp-rs conformance-client", REDIRECT_URI)
        .client_metadata_url(CONFORMANCE_CIMD_URL)
}

/// Lists the tools; returns `preferred` if offered, else the first tool's name.
async fn first_tool(client: &Client, preferred: Option<&str>) -> Result<Option<String>, String> {
    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    eprintln!(
        "conformance-client: tools {:?}",
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>()
    );
    if let Some(name) = preferred
        && let Some(t) = tools.iter().find(|t| t.name == name)
    {
        return Ok(Some(t.name.clone()));
    }
    Ok(tools.first().map(|t| t.name.clone()))
}

fn check_tool_result(name: &str, result: &CallToolResult) -> Result<(), String> {
    let text = serde_json::to_string(&result.content).unwrap_or_default();
    eprintln!("conformance-client: {name} -> {text}");
    if result.is_error == Some(true) {
        return Err(format!("tool {name} failed: {text}"));
    }
    Ok(())
}

/// The server's capabilities from the handshake.
fn capabilities(client: &Client) -> Result<Value, String> {
    serde_json::from_str(client.server_info().capabilities.get())
        .map_err(|e| format!("server capabilities: {e}"))
}

/// The calls a scenario's context names (`toolCalls: [{name, arguments}]`), each to a tool
/// the server lists (the client leaves out tools it must not call).
async fn scripted_calls(client: &Client, calls: &[Value]) -> Result<(), String> {
    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    for call in calls {
        let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
        if !tools.iter().any(|t| t.name == name) {
            eprintln!("conformance-client: {name} is not offered; not called");
            continue;
        }
        let args = call.get("arguments").cloned().unwrap_or(json!({}));
        let result = client
            .call_tool(name, args)
            .await
            .map_err(|e| format!("tools/call {name}: {e}"))?;
        eprintln!(
            "conformance-client: {name} -> is_error {:?}",
            result.is_error
        );
    }
    Ok(())
}

/// A skills host (SEP-2640): the listing builds the registry (no file is read); with `load`,
/// the first skill is loaded as a model would ask for it (its SKILL.md checked against the
/// entry) and the supporting files its instructions mention are read, each checked. Content
/// that fails verification is refused (and is not an error of this program).
async fn skills_host(client: &Client, load: bool) -> Result<(), String> {
    use mcp_service::skills::verification_error;
    let skills = client
        .list_skills()
        .await
        .map_err(|e| format!("skills/list: {e}"))?;
    for s in &skills {
        eprintln!(
            "conformance-client: skill {} ({}): {}",
            s.name().unwrap_or("?"),
            s.uri,
            s.description().unwrap_or("")
        );
    }
    let Some(entry) = skills.first().filter(|_| load) else {
        return Ok(());
    };
    let skill = match client.load_skill(entry).await {
        Ok(skill) => skill,
        Err(e) if verification_error(&e).is_some() => {
            eprintln!("conformance-client: skill refused: {e}");
            return Ok(());
        }
        Err(e) => return Err(format!("loading {}: {e}", entry.uri)),
    };
    let root = skill.entry().root().unwrap_or_default().to_owned();
    let mentioned: Vec<String> = skill
        .entry()
        .resources
        .listed()
        .iter()
        .filter(|r| r.uri != skill.uri())
        .filter_map(|r| {
            r.uri
                .strip_prefix(&root)?
                .strip_prefix('/')
                .map(str::to_owned)
        })
        .filter(|path| skill.body().contains(path.as_str()))
        .collect();
    for path in mentioned {
        match client.read_skill_file(&skill, &path).await {
            Ok(file) => eprintln!(
                "conformance-client: read {} ({} bytes, verified {})",
                file.uri,
                file.bytes.len(),
                file.verified
            ),
            Err(e) if verification_error(&e).is_some() => {
                eprintln!("conformance-client: file refused: {e}");
            }
            Err(e) => return Err(format!("reading {path}: {e}")),
        }
    }
    Ok(())
}

/// Arguments for a tool's required properties, a plain value of each one's type.
fn sample_arguments(schema: &serde_json::Map<String, Value>) -> Value {
    let mut args = serde_json::Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let kind = props
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("conformance"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

/// What an unknown scenario gets: every tool the server advertises (with plain arguments for
/// the required ones), a resource, the prompts.
async fn generic_walk(client: &Client) -> Result<(), String> {
    let caps = capabilities(client)?;
    if caps.get("tools").is_some() {
        let tools = client
            .list_tools()
            .await
            .map_err(|e| format!("tools/list: {e}"))?;
        for tool in &tools {
            let result = client
                .call_tool(&tool.name, sample_arguments(&tool.input_schema))
                .await
                .map_err(|e| format!("tools/call {}: {e}", tool.name))?;
            eprintln!(
                "conformance-client: {} -> is_error {:?}",
                tool.name, result.is_error
            );
        }
    }
    if caps.get("resources").is_some() {
        let resources = client
            .list_resources()
            .await
            .map_err(|e| format!("resources/list: {e}"))?;
        if let Some(r) = resources.first() {
            client
                .read_resource(&r.uri)
                .await
                .map_err(|e| format!("resources/read {}: {e}", r.uri))?;
        }
    }
    if caps.get("prompts").is_some() {
        client
            .list_prompts()
            .await
            .map_err(|e| format!("prompts/list: {e}"))?;
    }
    if !client.protocol_version().is_stateless() {
        client.ping().await.map_err(|e| format!("ping: {e}"))?;
    }
    Ok(())
}
