//! `mcp` — a command-line MCP client: lists and calls a server's tools, reads its resources,
//! gets its prompts, completes arguments, sets its log level and follows its notifications,
//! over stdio (a server command after `--`), Streamable HTTP, legacy HTTP+SSE or WebSocket.
//!
//! ```text
//! mcp tools -- npx -y @modelcontextprotocol/server-everything
//! mcp call echo text=hello -- ./my-server
//! mcp call add a=1 b=2 --url http://127.0.0.1:8080/mcp
//! mcp read test://static/resource/1 --url http://127.0.0.1:8080/mcp --json
//! ```
//!
//! Output is readable text by default and the results as JSON with `--json`. A failure is one
//! line on stderr (`mcp: ...`) and a non-zero exit: 1 when the server or the connection
//! failed, 2 for a wrong command line.

mod args;
mod conn;
mod oauth;
mod output;
mod store;

use std::future::IntoFuture;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use futures_util::StreamExt;
use mcp_service::client::ServerNotification;
use mcp_service::schema::{CompleteRequestParams, LoggingLevel, Reference};
use mcp_service::{ClientOptions, HttpClientOptions};
use serde_json::{Value, json};

use conn::{Conn, Failure, Settings, Target};

const EXAMPLES: &str = "\
Examples:
  mcp tools -- ./my-server --flag           a server on stdio: its command after `--`
  mcp call echo text=hello -- ./my-server   key=value arguments, typed by the tool's schema
  mcp call add '{\"a\": 1, \"b\": 2}' --url http://127.0.0.1:8080/mcp
  mcp read file:///notes.txt --url http://127.0.0.1:8080/mcp --bearer \"$TOKEN\"
  mcp prompt greet name=Ada --json -- ./my-server
  mcp listen --log-level debug --url http://127.0.0.1:8080/mcp   (until Ctrl-C)

Exit status: 0 on success, 1 when the server, the tool or the connection failed, 2 for a wrong
command line. Errors are one line on stderr.";

/// A command-line MCP client.
///
/// Lists and calls a server's tools, reads its resources, gets its prompts, completes
/// arguments and follows its notifications. The server is a command to run (after `--`,
/// spoken to on its stdin/stdout) or an address (`--url`, `--sse-url`, `--ws-url`).
#[derive(Parser, Debug)]
#[command(
    name = "mcp",
    version,
    override_usage = "mcp <COMMAND> [ARGS]... [OPTIONS] (-- SERVER_COMMAND [SERVER_ARGS]... | --url URL)",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: Global,
}

#[derive(Args, Debug)]
#[command(next_help_heading = "Server and output options")]
struct Global {
    /// A Streamable HTTP endpoint (falls back to legacy HTTP+SSE when the server is of that kind).
    #[arg(long, global = true, value_name = "URL", conflicts_with_all = ["sse_url", "ws_url"])]
    url: Option<String>,
    /// A legacy HTTP+SSE endpoint (protocol 2024-11-05).
    #[arg(long, global = true, value_name = "URL", conflicts_with = "ws_url")]
    sse_url: Option<String>,
    /// A WebSocket endpoint (one message per text frame; outside the MCP specification).
    #[arg(long, global = true, value_name = "URL")]
    ws_url: Option<String>,
    /// Prints the results as JSON (as the server sent them) instead of text.
    #[arg(long, global = true)]
    json: bool,
    /// Seconds each request (and connecting) may take; 0 waits for ever.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 60.0)]
    timeout: f64,
    /// An HTTP header sent with every request, as `Name: value` (repeatable).
    #[arg(
        short = 'H',
        long = "header",
        global = true,
        value_name = "NAME: VALUE"
    )]
    headers: Vec<String>,
    /// Sends `Authorization: Bearer TOKEN` with every HTTP request.
    #[arg(
        long,
        global = true,
        value_name = "TOKEN",
        env = "MCP_BEARER_TOKEN",
        hide_env_values = true
    )]
    bearer: Option<String>,
    /// Logs in with OAuth 2.1 when the HTTP server asks for it: the authorization address is
    /// printed (and opened in a browser), and the browser comes back to a listener on
    /// 127.0.0.1. The login is kept (see --oauth-store) for the next runs.
    #[arg(long, global = true)]
    oauth: bool,
    /// With --oauth: a client id registered with the authorization server (without one the
    /// client registers itself).
    #[arg(long, global = true, value_name = "ID", requires = "oauth")]
    oauth_client_id: Option<String>,
    /// With --oauth-client-id: the client's secret (a confidential client).
    #[arg(
        long,
        global = true,
        value_name = "SECRET",
        env = "MCP_OAUTH_CLIENT_SECRET",
        hide_env_values = true
    )]
    oauth_client_secret: Option<String>,
    /// With --oauth: approve without a browser (for authorization servers that redirect at
    /// once: test and machine-to-machine setups).
    #[arg(long, global = true, requires = "oauth")]
    oauth_headless: bool,
    /// With --oauth: do not try to open a browser (the address is printed all the same).
    #[arg(long, global = true, requires = "oauth")]
    no_browser: bool,
    /// With --oauth: the file that keeps the login between runs (default
    /// `$XDG_CONFIG_HOME/mcp/oauth.json` or `~/.config/mcp/oauth.json`; readable by you alone).
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        env = "MCP_OAUTH_STORE",
        hide_env_values = true
    )]
    oauth_store: Option<std::path::PathBuf>,
    /// With --oauth: keep the login for this run only (whatever --oauth-store says).
    #[arg(long, global = true, requires = "oauth")]
    oauth_no_store: bool,
    /// Lets the server command's stderr through (by default it is kept, and its last lines
    /// are shown when the server fails).
    #[arg(long, global = true)]
    server_stderr: bool,
    /// Also trusts the CA certificates in this PEM file for `https://` and `wss://` servers
    /// (beside the built-in Mozilla roots; repeatable).
    #[arg(long = "ca", global = true, value_name = "PEM_FILE")]
    ca: Vec<std::path::PathBuf>,
    /// Presents this client certificate chain (PEM) to TLS servers asking for one (mutual
    /// TLS); needs --client-key.
    #[arg(long, global = true, value_name = "PEM_FILE", requires = "client_key")]
    client_cert: Option<std::path::PathBuf>,
    /// The private key (PEM) of --client-cert.
    #[arg(long, global = true, value_name = "PEM_FILE", requires = "client_cert")]
    client_key: Option<std::path::PathBuf>,
    /// Speaks HTTP/2 without negotiation to an `http://` server (h2c with prior knowledge);
    /// over `https://` HTTP/2 is negotiated by itself.
    #[arg(long, global = true)]
    http2_prior_knowledge: bool,
}

/// The TLS policy of the options: the built-in roots, the `--ca` files, the client
/// certificate.
fn tls_config(g: &Global) -> Result<mcp_tokio::TlsClientConfig, String> {
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
    };
    let mut tls = mcp_tokio::TlsClientConfig::new();
    for ca in &g.ca {
        tls = tls
            .add_ca_pem(&read(ca)?)
            .map_err(|e| format!("--ca {}: {}", ca.display(), e.message()))?;
    }
    if let (Some(cert), Some(key)) = (&g.client_cert, &g.client_key) {
        tls = tls
            .client_certificate_pem(&read(cert)?, &read(key)?)
            .map_err(|e| format!("--client-cert/--client-key: {}", e.message()))?;
    }
    Ok(tls)
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Shows the server: name, version, protocol version, capabilities, instructions.
    #[command(after_help = "Example:\n  mcp info -- ./my-server")]
    Info,
    /// Lists the tools, with their arguments.
    #[command(
        after_help = "Examples:\n  mcp tools -- ./my-server\n  mcp tools --json --url http://127.0.0.1:8080/mcp"
    )]
    Tools,
    /// Calls a tool.
    ///
    /// Arguments are `key=value` (the value typed by the tool's input schema: numbers,
    /// booleans, arrays and objects where the schema says so, else a string), `key:=JSON`
    /// (the value as JSON), or one JSON object. A tool that answers with an error prints it
    /// on stderr and exits 1.
    #[command(
        after_help = "Examples:\n  mcp call echo text=hello -- ./my-server\n  mcp call build target=all --log-level info -- ./my-server   (its log messages on stderr)\n  mcp call add a=1 b=2.5 -- ./my-server\n  mcp call search query=rust limit:=10 tags:='[\"a\",\"b\"]' -- ./my-server\n  mcp call add '{\"a\": 1, \"b\": 2}' -- ./my-server"
    )]
    Call {
        /// The tool's name.
        name: String,
        /// `key=value`, `key:=JSON`, or one JSON object.
        #[arg(value_name = "ARGUMENT")]
        arguments: Vec<String>,
        /// Asks for the server's log messages from this level up and prints them on stderr
        /// while the tool runs.
        #[arg(long, value_name = "LEVEL", value_parser = LEVELS)]
        log_level: Option<String>,
    },
    /// Lists the resources.
    #[command(after_help = "Example:\n  mcp resources -- ./my-server")]
    Resources,
    /// Lists the resource templates.
    #[command(after_help = "Example:\n  mcp templates -- ./my-server")]
    Templates,
    /// Reads a resource.
    #[command(
        after_help = "Examples:\n  mcp read file:///notes.txt -- ./my-server\n  mcp read test://static/resource/2 --json -- ./my-server   (a blob as base64)"
    )]
    Read {
        /// The resource's URI.
        uri: String,
    },
    /// Lists the prompts, with their arguments.
    #[command(after_help = "Example:\n  mcp prompts -- ./my-server")]
    Prompts,
    /// Gets a prompt.
    ///
    /// Arguments are `key=value` (prompt arguments are strings) or one JSON object.
    #[command(after_help = "Example:\n  mcp prompt greet name=Ada -- ./my-server")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// `key=value`, or one JSON object.
        #[arg(value_name = "ARGUMENT")]
        arguments: Vec<String>,
    },
    /// Completes an argument of a prompt or of a resource template.
    #[command(
        after_help = "Examples:\n  mcp complete prompt greet name Ad -- ./my-server\n  mcp complete resource 'file:///{path}' path no -- ./my-server\n  mcp complete prompt trip city P --context country=France -- ./my-server"
    )]
    Complete {
        /// What is completed: `prompt` or `resource` (a resource template).
        #[arg(value_parser = ["prompt", "resource"])]
        kind: String,
        /// The prompt's name, or the resource template's URI template.
        reference: String,
        /// The argument completed.
        argument: String,
        /// What the user has typed of it so far.
        #[arg(default_value = "")]
        value: String,
        /// An argument already given, as `key=value` (repeatable).
        #[arg(long = "context", value_name = "KEY=VALUE")]
        context: Vec<String>,
    },
    /// Checks that the server answers.
    #[command(after_help = "Example:\n  mcp ping -- ./my-server")]
    Ping,
    /// Sets the level of the server's log messages.
    ///
    /// The level lasts as long as the connection: to read the messages, use
    /// `mcp listen --log-level LEVEL`.
    #[command(
        name = "log-level",
        after_help = "Example:\n  mcp log-level debug --url http://127.0.0.1:8080/mcp"
    )]
    LogLevel {
        /// debug, info, notice, warning, error, critical, alert or emergency.
        #[arg(value_parser = LEVELS)]
        level: String,
    },
    /// Subscribes to resources and prints each update (and every other notification) until
    /// interrupted (Ctrl-C).
    #[command(
        after_help = "Example:\n  mcp subscribe file:///notes.txt --url http://127.0.0.1:8080/mcp"
    )]
    Subscribe {
        /// The resources' URIs.
        #[arg(required = true)]
        uris: Vec<String>,
        /// Also asks for the server's log messages from this level up.
        #[arg(long, value_name = "LEVEL", value_parser = LEVELS)]
        log_level: Option<String>,
    },
    /// Prints the server's notifications (list changes, log messages, resource updates) until
    /// interrupted (Ctrl-C); with --json, one JSON object a line.
    #[command(
        after_help = "Example:\n  mcp listen --log-level info --url http://127.0.0.1:8080/mcp"
    )]
    Listen {
        /// Also asks for the server's log messages from this level up.
        #[arg(long, value_name = "LEVEL", value_parser = LEVELS)]
        log_level: Option<String>,
    },
}

const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn level(name: &str) -> Result<LoggingLevel, Failure> {
    serde_json::from_value(Value::String(name.to_owned()))
        .map_err(|_| Failure::msg(format!("unknown log level {name:?}")))
}

fn main() -> ExitCode {
    // The crypto provider of `https://` and `wss://`.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let raw: Vec<String> = std::env::args().collect();
    // The server command is everything after the first `--`.
    let (ours, server) = match raw.iter().position(|a| a == "--") {
        Some(split) => (raw[..split].to_vec(), Some(raw[split + 1..].to_vec())),
        None => (raw, None),
    };
    let cli = Cli::parse_from(ours);
    let g = &cli.global;
    let target = match (server, &g.url, &g.sse_url, &g.ws_url) {
        (Some(server), None, None, None) if !server.is_empty() => Target::Command(server),
        (None, Some(url), None, None) => Target::Url(url.clone()),
        (None, None, Some(url), None) => Target::SseUrl(url.clone()),
        (None, None, None, Some(url)) => Target::WsUrl(url.clone()),
        (Some(_), None, None, None) => usage("no server command after `--`"),
        (None, None, None, None) => usage(
            "no server given: put its command after `--` (mcp tools -- ./server), or give --url, --sse-url or --ws-url",
        ),
        _ => usage("give one server: a command after `--`, or --url, --sse-url or --ws-url"),
    };
    if !matches!(target, Target::Url(_) | Target::SseUrl(_))
        && (!g.headers.is_empty() || g.bearer.is_some() || g.oauth)
    {
        usage("--header, --bearer and --oauth are for HTTP servers (--url, --sse-url)");
    }
    if !(g.timeout.is_finite() && g.timeout >= 0.0) {
        usage("--timeout needs a number of seconds (0 for none)");
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp: no async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let json_mode = cli.global.json;
    match rt.block_on(run(cli, target)) {
        Ok(code) => code,
        Err(f) => {
            let mut err = std::io::stderr().lock();
            match f.code {
                Some(code) => {
                    let _ = writeln!(err, "mcp: {} (error {code})", f.message);
                }
                None => {
                    let _ = writeln!(err, "mcp: {}", f.message);
                }
            }
            for line in &f.detail {
                let _ = writeln!(err, "  {line}");
            }
            if json_mode {
                let mut e = json!({"message": f.message});
                if let Some(code) = f.code {
                    e["code"] = json!(code);
                }
                if !f.detail.is_empty() {
                    e["detail"] = json!(f.detail);
                }
                print_out(&format!("{}\n", json!({ "error": e })));
            }
            ExitCode::FAILURE
        }
    }
}

/// A wrong command line: the message, a pointer to `--help`, exit 2.
fn usage(msg: &str) -> ! {
    eprintln!("mcp: {msg}\n(mcp --help shows the commands and examples)");
    std::process::exit(2);
}

/// Writes to stdout; a closed stdout (`mcp tools | head`) ends quietly.
fn print_out(text: &str) {
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

/// Prints `value` as JSON or as `human` text.
fn show(json_mode: bool, value: &Value, human: fn(&Value) -> String) {
    if json_mode {
        print_out(&format!("{}\n", output::pretty(value)));
    } else {
        print_out(&human(value));
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

async fn run(cli: Cli, target: Target) -> Result<ExitCode, Failure> {
    let g = cli.global;
    let timeout = (g.timeout > 0.0).then(|| Duration::from_secs_f64(g.timeout));
    let options = ClientOptions::new("mcp", env!("CARGO_PKG_VERSION"))
        .request_timeout(timeout.map(Into::into));
    let tls = tls_config(&g).map_err(Failure::msg)?;
    let mut http = HttpClientOptions::new()
        .tls(tls.clone())
        .http2_prior_knowledge(g.http2_prior_knowledge);
    for h in &g.headers {
        let Some((name, value)) = h.split_once(':') else {
            usage(&format!("--header {h:?} is not `Name: value`"));
        };
        let name = http::HeaderName::try_from(name.trim())
            .unwrap_or_else(|_| usage(&format!("--header {h:?}: not a header name")));
        let value = http::HeaderValue::try_from(value.trim())
            .unwrap_or_else(|_| usage(&format!("--header {h:?}: not a header value")));
        http = http.header(name, value);
    }
    if let Some(token) = &g.bearer {
        http = http.bearer(token);
    }
    if g.oauth {
        http = oauth::configure(
            http,
            oauth::Login {
                client_id: g.oauth_client_id.clone(),
                client_secret: g.oauth_client_secret.clone(),
                headless: g.oauth_headless,
                open_browser: !g.no_browser,
                store: if g.oauth_no_store {
                    None
                } else {
                    g.oauth_store.clone().or_else(store::default_path)
                },
            },
        )
        .await
        .map_err(Failure::msg)?;
    }
    let settings = Settings {
        options,
        http,
        tls,
        server_stderr: g.server_stderr,
        timeout,
    };
    let mut conn = Conn::open(target, settings).await?;
    let result = command(&conn, cli.command, g.json).await;
    let result = match result {
        Ok(code) => Ok(code),
        Err(f) => Err(conn.explain(f).await),
    };
    conn.close().await;
    result
}

async fn command(conn: &Conn, command: Command, json_mode: bool) -> Result<ExitCode, Failure> {
    let c = &conn.client;
    match command {
        Command::Info => {
            let mut info = json!({
                "protocolVersion": c.protocol_version().as_str(),
                "serverInfo": serde_json::from_str::<Value>(c.server_info().info.get()).unwrap_or(Value::Null),
                "capabilities": serde_json::from_str::<Value>(c.server_info().capabilities.get()).unwrap_or(Value::Null),
            });
            if let Some(i) = c.instructions() {
                info["instructions"] = json!(i);
            }
            show(json_mode, &info, output::info);
        }
        Command::Tools => show(json_mode, &to_json(&c.list_tools().await?), output::tools),
        Command::Call {
            name,
            arguments,
            log_level,
        } => {
            let schema = if args::needs_schema(&arguments) {
                let tools = c.list_tools().await?;
                match tools.iter().find(|t| t.name == name) {
                    Some(t) => Some(to_json(t).get("inputSchema").cloned().unwrap_or_default()),
                    None => {
                        return Err(Failure::msg(format!(
                            "the server has no tool {name:?} (mcp tools lists them)"
                        )));
                    }
                }
            } else {
                None
            };
            let arguments =
                args::tool_arguments(&arguments, schema.as_ref()).map_err(Failure::msg)?;
            let mut logs = match log_level {
                Some(l) => {
                    let logs = c.log_messages();
                    c.set_logging_level(level(&l)?).await?;
                    Some(logs)
                }
                None => None,
            };
            // Progress goes to stderr, on one line, when that is a terminal.
            let mut call = c.call_tool(&name, arguments);
            let live = std::io::IsTerminal::is_terminal(&std::io::stderr());
            if live {
                call = call.progress(|p| {
                    let total = p.total.map(|t| format!("/{t}")).unwrap_or_default();
                    let message = p.message.map(|m| format!("  {m}")).unwrap_or_default();
                    eprint!("\r\x1b[2Kprogress {}{total}{message}", p.progress);
                });
            }
            let call = call.into_future();
            tokio::pin!(call);
            let result = loop {
                let next_log = async {
                    match &mut logs {
                        Some(l) => l.next().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    r = &mut call => break r,
                    Some(m) = next_log => print_log(&m, live),
                }
            };
            // The messages sent before the result are queued by now.
            if let Some(l) = &mut logs {
                while let Some(Some(m)) = futures_util::FutureExt::now_or_never(l.next()) {
                    print_log(&m, live);
                }
            }
            if live {
                eprint!("\r\x1b[2K");
            }
            let result = to_json(&result?);
            let failed = result.get("isError").and_then(Value::as_bool) == Some(true);
            if json_mode {
                show(true, &result, output::call);
            } else if failed {
                let text = output::call(&result);
                return Err(Failure::msg(format!(
                    "the tool {name} failed: {}",
                    text.trim_end().replace('\n', " / ")
                )));
            } else {
                show(false, &result, output::call);
            }
            if failed {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::Resources => show(
            json_mode,
            &to_json(&c.list_resources().await?),
            output::resources,
        ),
        Command::Templates => show(
            json_mode,
            &to_json(&c.list_resource_templates().await?),
            output::templates,
        ),
        Command::Read { uri } => show(
            json_mode,
            &to_json(&c.read_resource(&uri).await?),
            output::read,
        ),
        Command::Prompts => show(
            json_mode,
            &to_json(&c.list_prompts().await?),
            output::prompts,
        ),
        Command::Prompt { name, arguments } => {
            let arguments = args::prompt_arguments(&arguments).map_err(Failure::msg)?;
            show(
                json_mode,
                &to_json(&c.get_prompt(&name, arguments).await?),
                output::prompt,
            );
        }
        Command::Complete {
            kind,
            reference,
            argument,
            value,
            context,
        } => {
            let reference = if kind == "prompt" {
                Reference::prompt(reference)
            } else {
                Reference::resource(reference)
            };
            let mut params = CompleteRequestParams::new(reference, argument, value);
            if !context.is_empty() {
                let arguments = args::prompt_arguments(&context).map_err(Failure::msg)?;
                params.context = serde_json::from_value(json!({ "arguments": arguments }))
                    .map_err(|e| Failure::msg(format!("--context: {e}")))?;
            }
            show(
                json_mode,
                &to_json(&c.complete(params).await?),
                output::complete,
            );
        }
        Command::Ping => {
            let started = std::time::Instant::now();
            c.ping().await?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            if json_mode {
                print_out(&format!("{}\n", json!({"ok": true, "ms": ms})));
            } else {
                print_out(&format!("ok ({ms:.1} ms)\n"));
            }
        }
        Command::LogLevel { level: name } => {
            c.set_logging_level(level(&name)?).await?;
            if json_mode {
                print_out(&format!("{}\n", json!({"ok": true, "level": name})));
            } else {
                print_out(&format!("log level set to {name}\n"));
            }
        }
        Command::Subscribe { uris, log_level } => {
            let notes = c.notifications();
            if let Some(l) = log_level {
                c.set_logging_level(level(&l)?).await?;
            }
            let mut updates = Vec::new();
            for uri in &uris {
                updates.push(c.subscribe(uri).await?);
            }
            if !json_mode {
                eprintln!("mcp: subscribed to {}; Ctrl-C ends", uris.join(", "));
            }
            // Updates come through `notes` (every notification); the per-URI streams are kept
            // open so that the subscriptions stay.
            return follow(notes, json_mode, updates).await;
        }
        Command::Listen { log_level } => {
            let notes = c.notifications();
            if let Some(l) = log_level {
                c.set_logging_level(level(&l)?).await?;
            }
            if !json_mode {
                eprintln!("mcp: listening; Ctrl-C ends");
            }
            return follow::<()>(notes, json_mode, Vec::new()).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A log message on stderr (over the progress line, if any).
fn print_log(m: &mcp_service::schema::LoggingMessageNotificationParams, live: bool) {
    let line = output::notification("notifications/message", &to_json(m));
    if live {
        eprint!("\r\x1b[2K");
    }
    eprintln!("{line}");
}

/// Prints each notification until Ctrl-C (exit 0) or the connection ends (exit 1).
/// `_subscriptions` are kept open while it runs.
async fn follow<K>(
    mut notes: mcp_service::Notifications<ServerNotification>,
    json_mode: bool,
    _subscriptions: Vec<K>,
) -> Result<ExitCode, Failure> {
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            _ = &mut interrupted => return Ok(ExitCode::SUCCESS),
            n = notes.next() => match n {
                Some(n) => {
                    let (method, params) = notification(n);
                    if json_mode {
                        print_out(&format!("{}\n", json!({"method": method, "params": params})));
                    } else {
                        print_out(&format!("{}\n", output::notification(&method, &params)));
                    }
                }
                None => return Err(Failure::msg("the connection closed")),
            },
        }
    }
}

/// A notification's method and params.
fn notification(n: ServerNotification) -> (String, Value) {
    match n {
        ServerNotification::ToolsListChanged => {
            ("notifications/tools/list_changed".into(), Value::Null)
        }
        ServerNotification::ResourcesListChanged => {
            ("notifications/resources/list_changed".into(), Value::Null)
        }
        ServerNotification::PromptsListChanged => {
            ("notifications/prompts/list_changed".into(), Value::Null)
        }
        ServerNotification::ResourceUpdated(p) => {
            ("notifications/resources/updated".into(), to_json(&p))
        }
        ServerNotification::Log(p) => ("notifications/message".into(), to_json(&p)),
        ServerNotification::Other { method, params } => (
            method,
            params
                .and_then(|p| serde_json::from_str(p.get()).ok())
                .unwrap_or(Value::Null),
        ),
        #[allow(unreachable_patterns)]
        _ => ("(unknown)".into(), Value::Null),
    }
}
