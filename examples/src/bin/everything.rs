//! `everything` — a server exposing every feature: the official conformance suite's fixtures,
//! plus `echo`, a slow cancellable tool with progress (`slow`) and a streaming tool (`stream`).
//!
//! ```text
//! everything [--runtime tokio|async-std|smol] [--transport stdio|http|sse|ws] [--port P] [--host H]
//!            [--stateless] [--json-response] [--eras handshake|both|stateless]
//! ```
//!
//! `--eras` says which protocol eras are served: both (the default, as for any server), the
//! handshake era only (2024-11-05 … 2025-11-25), or only the stateless 2026-07-28 era (a
//! request naming its version in `_meta`, `server/discover`; over HTTP, one POST per request
//! with no session).
//! Over HTTP, `--stateless` serves without sessions (`EndpointConfig::stateless`) and
//! `--json-response` answers POSTs with one JSON body instead of an SSE stream.
//! `--transport sse` serves the legacy HTTP+SSE transport (2024-11-05) at `/sse` (messages
//! POSTed to `/messages`) and Streamable HTTP at `/mcp`, on the same port.

fn usage(msg: &str) -> ! {
    eprintln!(
        "everything: {msg}
usage: everything [--runtime tokio|async-std|smol] [--transport stdio|http|sse|ws] [--port P] [--host H] [--stateless] [--json-response] [--eras handshake|both|stateless]"
    );
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runtime = "tokio".to_owned();
    let mut transport = "stdio".to_owned();
    let mut host = "127.0.0.1".to_owned();
    let mut port: Option<u16> = None;
    let mut stateless = false;
    let mut json_response = false;
    let mut eras = "both".to_owned();
    let mut i = 0;
    while i < args.len() {
        let value = || {
            args.get(i + 1)
                .cloned()
                .unwrap_or_else(|| usage(&format!("{} needs a value", args[i])))
        };
        match args[i].as_str() {
            "--stateless" => {
                stateless = true;
                i += 1;
                continue;
            }
            "--json-response" => {
                json_response = true;
                i += 1;
                continue;
            }
            "--runtime" => runtime = value(),
            "--transport" => transport = value(),
            "--host" => host = value(),
            "--eras" => eras = value(),
            "--port" => {
                port = Some(
                    value()
                        .parse()
                        .unwrap_or_else(|_| usage("--port needs a number")),
                )
            }
            "-h" | "--help" => usage("help"),
            other => usage(&format!("unknown argument {other:?}")),
        }
        i += 2;
    }
    use mcp_tokio::proto::ProtocolVersion;
    let versions: &[ProtocolVersion] = match eras.as_str() {
        "handshake" => &ProtocolVersion::HANDSHAKE,
        "both" => &ProtocolVersion::ALL,
        "stateless" => &[ProtocolVersion::V2026_07_28],
        other => usage(&format!(
            "unknown --eras {other:?} (handshake, both, stateless)"
        )),
    };
    let server = mcp_examples::everything::server_with(|b| b.versions(versions));
    match transport.as_str() {
        "stdio" => {
            if stateless || json_response {
                usage("--stateless and --json-response apply to --transport http");
            }
        }
        "http" | "sse" => {
            let port =
                port.unwrap_or_else(|| usage(&format!("--transport {transport} needs --port")));
            let options = HttpOptions {
                host,
                port,
                stateless,
                json_response,
                legacy_sse: transport == "sse",
            };
            let result = serve_http(server, &runtime, &options);
            if let Err(e) = result {
                eprintln!("everything: {e}");
                std::process::exit(1);
            }
            std::process::exit(0);
        }
        "ws" => {
            let port = port.unwrap_or_else(|| usage("--transport ws needs --port"));
            if let Err(e) = serve_ws(server, &runtime, &host, port) {
                eprintln!("everything: {e}");
                std::process::exit(1);
            }
            std::process::exit(0);
        }
        other => usage(&format!(
            "transport {other:?} is not available yet (stdio, http, sse)"
        )),
    }
    let result = match runtime.as_str() {
        "tokio" => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                rt.block_on(async {
                    mcp_tokio::serve_stdio(mcp_tokio::TokioRuntime::current(), server).await
                })
                .map_err(|e| e.to_string())
            }),
        "async-std" => async_std::task::block_on(mcp_async_std::serve_stdio(
            mcp_async_std::AsyncStdRuntime::new(),
            server,
        ))
        .map_err(|e| e.to_string()),
        "smol" => {
            let rt = mcp_async_std::SmolRuntime::new();
            async_io::block_on(mcp_async_std::serve_stdio(rt, server)).map_err(|e| e.to_string())
        }
        other => usage(&format!("unknown runtime {other:?}")),
    };
    if let Err(e) = result {
        eprintln!("everything: {e}");
        std::process::exit(1);
    }
    // Handlers may have left timers or blocking readers behind: leave promptly.
    std::process::exit(0);
}

/// Where and how to serve over HTTP.
struct HttpOptions {
    host: String,
    port: u16,
    stateless: bool,
    json_response: bool,
    /// Also serve the legacy HTTP+SSE transport at `/sse` (`--transport sse`).
    legacy_sse: bool,
}

/// Serves `server` over Streamable HTTP at `http://HOST:PORT/mcp` on `runtime` (and over
/// legacy HTTP+SSE at `/sse` when asked).
fn serve_http(
    server: mcp_service::Server,
    runtime: &str,
    options: &HttpOptions,
) -> Result<(), String> {
    let (host, port) = (options.host.as_str(), options.port);
    let cannot_listen = |e: std::io::Error| format!("cannot listen on {host}:{port}: {e}");
    let config = |addr: std::net::SocketAddr| {
        let mut config =
            mcp_proto::http::EndpointConfig::new(server.config().clone()).bound_to(addr.ip());
        if options.stateless {
            config = config.stateless(true);
        }
        if options.json_response {
            config = config.response_mode(mcp_proto::http::ResponseMode::Json);
        }
        if options.legacy_sse {
            let legacy = mcp_proto::http::LegacySse::default();
            eprintln!(
                "everything: serving http://{addr}{} (legacy SSE, messages to {}) and http://{addr}/mcp on {runtime}",
                legacy.sse_path, legacy.messages_path
            );
            config = config.legacy_sse(Some(legacy));
        } else {
            eprintln!("everything: serving http://{addr}/mcp on {runtime}");
        }
        config
    };
    match runtime {
        "tokio" => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                let listener = tokio::net::TcpListener::bind((host, port))
                    .await
                    .map_err(cannot_listen)?;
                let addr = listener.local_addr().map_err(|e| e.to_string())?;
                let config = config(addr);
                mcp_tokio::serve_http(
                    mcp_tokio::TokioRuntime::current(),
                    server.clone(),
                    listener,
                    config,
                )
                .await
                .map_err(|e| e.to_string())
            })
        }
        "async-std" | "smol" => {
            let listener = std::net::TcpListener::bind((host, port)).map_err(cannot_listen)?;
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            let config = config(addr);
            let result = if runtime == "smol" {
                let rt = mcp_async_std::SmolRuntime::new();
                async_io::block_on(mcp_async_std::serve_http(
                    rt,
                    server.clone(),
                    listener,
                    config,
                ))
            } else {
                let rt = mcp_async_std::AsyncStdRuntime::new();
                async_std::task::block_on(mcp_async_std::serve_http(
                    rt,
                    server.clone(),
                    listener,
                    config,
                ))
            };
            result.map_err(|e| e.to_string())
        }
        other => usage(&format!("unknown runtime {other:?}")),
    }
}

/// Serves `server` over WebSocket at `ws://HOST:PORT/ws` on `runtime` (a transport outside the
/// MCP specification: one JSON-RPC message per text frame, subprotocol `mcp`).
fn serve_ws(
    server: mcp_service::Server,
    runtime: &str,
    host: &str,
    port: u16,
) -> Result<(), String> {
    let listener = std::net::TcpListener::bind((host, port))
        .map_err(|e| format!("cannot listen on {host}:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("everything: serving ws://{addr}/ws");
    match runtime {
        "tokio" => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                listener.set_nonblocking(true).map_err(|e| e.to_string())?;
                let listener =
                    tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
                mcp_tokio::serve_ws(mcp_tokio::TokioRuntime::current(), server, listener)
                    .await
                    .map_err(|e| e.to_string())
            })
        }
        "async-std" => async_std::task::block_on(mcp_async_std::serve_ws(
            mcp_async_std::AsyncStdRuntime::new(),
            server,
            listener,
        ))
        .map_err(|e| e.to_string()),
        "smol" => {
            let rt = mcp_async_std::SmolRuntime::new();
            async_io::block_on(mcp_async_std::serve_ws(rt, server, listener))
                .map_err(|e| e.to_string())
        }
        other => usage(&format!("unknown runtime {other:?}")),
    }
}
