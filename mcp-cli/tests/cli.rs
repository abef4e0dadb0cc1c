//! The `mcp` binary against the `everything` server, over stdio and Streamable HTTP: its
//! output (text and `--json`), the typing of `key=value` arguments, the error lines and exit
//! codes, `--help`, and the streaming commands.
//!
//! This test binary has no libtest harness: started with `MCP_CLI_TEST_SERVE=stdio` it is the
//! `everything` server on its stdin/stdout (what `mcp ... -- <this binary>` spawns); otherwise
//! it serves `everything` over HTTP in process and runs each case, ending with
//! `N passed, N failed`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

const MCP: &str = env!("CARGO_BIN_EXE_mcp");
const SERVE: &str = "MCP_CLI_TEST_SERVE";
/// A guard against a hang (never a speed assertion).
const LINE_WAIT: Duration = Duration::from_secs(30);

fn main() {
    if std::env::var(SERVE).as_deref() == Ok("stdio") {
        serve_stdio();
        return;
    }
    let url = serve_http();
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let cases: Vec<(&str, Case)> = vec![
        ("help", help),
        ("usage_errors_exit_2", usage_errors_exit_2),
        ("tools_text_and_json", tools_text_and_json),
        ("call_text_and_json", call_text_and_json),
        (
            "key_value_arguments_are_typed_by_the_schema",
            key_value_typing,
        ),
        (
            "tool_errors_and_server_errors",
            tool_errors_and_server_errors,
        ),
        ("call_prints_log_messages_on_stderr", call_logs),
        ("resources_templates_read", resources_templates_read),
        ("prompts_prompt_complete", prompts_prompt_complete),
        ("info_ping_log_level", info_ping_log_level),
        ("http_with_headers_and_bearer", http_with_headers),
        ("a_command_that_is_no_server", not_a_server),
        ("unreachable_and_slow_servers", unreachable_and_slow),
        ("subscribe_streams_until_interrupted", subscribe_streams),
        ("listen_json_lines", listen_json_lines),
        ("https_and_wss_with_a_ca", https_and_wss),
    ];
    if std::env::args().any(|a| a == "--list") {
        for (name, _) in &cases {
            println!("{name}: test");
        }
        return;
    }
    let ctx = Ctx { url };
    let (mut passed, mut failed) = (0, 0);
    for (name, case) in cases {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&ctx)));
        match r {
            Ok(()) => {
                println!("test {name} ... ok");
                passed += 1;
            }
            Err(_) => {
                println!("test {name} ... FAILED");
                failed += 1;
            }
        }
    }
    println!("\n{passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}

fn serve_stdio() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let r = rt.block_on(async {
        mcp_tokio::serve_stdio(
            mcp_tokio::TokioRuntime::current(),
            mcp_examples::everything::server(),
        )
        .await
    });
    std::process::exit(i32::from(r.is_err()));
}

/// Serves `everything` over Streamable HTTP on a loopback port, on a thread of its own; the
/// endpoint's URL.
fn serve_http() -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
                .await
                .expect("bind");
            let addr = listener.local_addr().expect("addr");
            let server = mcp_examples::everything::server();
            let config =
                mcp_proto::http::EndpointConfig::new(server.config().clone()).bound_to(addr.ip());
            tx.send(format!("http://{addr}/mcp")).expect("send");
            let _ =
                mcp_tokio::serve_http(mcp_tokio::TokioRuntime::current(), server, listener, config)
                    .await;
        });
    });
    rx.recv().expect("the HTTP server started")
}

struct Ctx {
    url: String,
}

/// One test case.
type Case = fn(&Ctx);

/// `mcp ARGS` with the given environment.
fn command(args: &[&str]) -> Command {
    let mut c = Command::new(MCP);
    c.args(args)
        .env(SERVE, "stdio")
        .env_remove("MCP_BEARER_TOKEN")
        .stdin(Stdio::null());
    c
}

fn run(args: &[&str]) -> Output {
    command(args).output().expect("mcp runs")
}

/// `mcp ARGS -- <the stdio server>`.
fn stdio(args: &[&str]) -> Output {
    let exe = std::env::current_exe().expect("current exe");
    let exe = exe.to_str().expect("a UTF-8 path");
    let mut all = args.to_vec();
    all.extend(["--", exe]);
    run(&all)
}

fn http(ctx: &Ctx, args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend(["--url", &ctx.url]);
    run(&all)
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Succeeded, with nothing on stderr; its stdout.
fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status,
        out(o),
        err(o)
    );
    assert_eq!(err(o), "", "stderr of a success");
    out(o)
}

/// Failed with exit `code` and one `mcp: ...` line on stderr (plus indented detail lines);
/// that first line.
fn failed(o: &Output, code: i32) -> String {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        out(o),
        err(o)
    );
    let e = err(o);
    let mut lines = e.lines();
    let first = lines.next().unwrap_or_default().to_owned();
    assert!(first.starts_with("mcp: "), "{e}");
    assert!(
        lines.all(|l| l.starts_with("  ") || l.starts_with("(mcp --help")),
        "one error line, then indented detail: {e}"
    );
    first
}

fn json(o: &Output) -> Value {
    serde_json::from_str(&ok(o)).unwrap_or_else(|e| panic!("not JSON ({e}): {}", out(o)))
}

fn help(_: &Ctx) {
    let top = ok(&run(&["--help"]));
    assert!(top.contains("Usage: mcp <COMMAND>"), "{top}");
    assert!(top.contains("Examples:"), "{top}");
    for c in [
        "info",
        "tools",
        "call",
        "resources",
        "templates",
        "read",
        "prompts",
        "prompt",
        "complete",
        "ping",
        "log-level",
        "subscribe",
        "listen",
    ] {
        assert!(top.contains(&format!("\n  {c} ")), "{c} in {top}");
    }
    for c in [
        "call",
        "read",
        "prompt",
        "complete",
        "subscribe",
        "listen",
        "tools",
    ] {
        let h = ok(&run(&[c, "--help"]));
        assert!(h.contains(&format!("Usage: mcp {c}")), "{h}");
        assert!(h.contains("Example"), "{c}: {h}");
        assert!(h.contains("--url"), "{c}: {h}");
    }
    assert!(ok(&run(&["call", "--help"])).contains("key=value"));
    assert!(ok(&run(&["help", "call"])).contains("Usage: mcp call"));
    assert!(ok(&run(&["--version"])).starts_with("mcp "));
}

fn usage_errors_exit_2(_: &Ctx) {
    assert_eq!(run(&[]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
    let e = failed(&run(&["tools"]), 2);
    assert!(e.contains("no server given"), "{e}");
    let e = failed(&stdio(&["tools", "--bearer", "t"]), 2);
    assert!(e.contains("for HTTP servers"), "{e}");
    let e = failed(
        &run(&["tools", "--url", "http://127.0.0.1:1/mcp", "-H", "nocolon"]),
        2,
    );
    assert!(e.contains("Name: value"), "{e}");
    assert_eq!(
        run(&["tools", "--url", "http://a/", "--ws-url", "ws://a/"])
            .status
            .code(),
        Some(2)
    );
}

fn tools_text_and_json(ctx: &Ctx) {
    let text = ok(&stdio(&["tools"]));
    assert!(
        text.contains("\necho  Returns its text argument\n    text (string, required)\n"),
        "{text}"
    );
    assert!(text.contains("    steps (integer)"), "{text}");
    let v = json(&stdio(&["tools", "--json"]));
    let tools = v.as_array().expect("an array of tools");
    let echo = tools.iter().find(|t| t["name"] == "echo").expect("echo");
    assert_eq!(echo["inputSchema"]["required"][0], "text");
    // The same over HTTP.
    let v = json(&http(ctx, &["tools", "--json"]));
    assert_eq!(v.as_array().map(Vec::len), Some(tools.len()));
}

fn call_text_and_json(_: &Ctx) {
    assert_eq!(
        ok(&stdio(&["call", "echo", "text=hello world"])),
        "hello world\n"
    );
    let v = json(&stdio(&["call", "echo", "text=hi", "--json"]));
    assert_eq!(v["content"][0]["text"], "hi");
    let mixed = ok(&stdio(&["call", "test_multiple_content_types"]));
    assert!(
        mixed.starts_with("Multiple content types test:\n[image image/png, about "),
        "{mixed}"
    );
    assert!(
        mixed.contains("[resource test://mixed-content-resource application/json]\n{"),
        "{mixed}"
    );
}

fn key_value_typing(_: &Ctx) {
    // `slow` takes integers: typed from `steps=2`, its handler accepts them.
    assert_eq!(
        ok(&stdio(&["call", "slow", "steps=2", "delay_ms=1"])),
        "slow: done after 2 steps\n"
    );
    // `:=` and a JSON object send JSON as is.
    assert_eq!(
        ok(&stdio(&["call", "slow", "steps:=3", "delay_ms:=0"])),
        "slow: done after 3 steps\n"
    );
    assert_eq!(
        ok(&stdio(&["call", "slow", r#"{"steps": 1, "delay_ms": 0}"#])),
        "slow: done after 1 steps\n"
    );
    // A string where the schema wants an integer: refused before the call.
    let o = stdio(&["call", "slow", "steps=two"]);
    let e = failed(&o, 1);
    assert!(
        e.contains(r#"argument steps: "two" is not an integer"#),
        "{e}"
    );
    assert_eq!(out(&o), "");
    // A string property stays a string even when it looks like a number.
    assert_eq!(ok(&stdio(&["call", "echo", "text=42"])), "42\n");
    let e = failed(&stdio(&["call", "echo", "text"]), 1);
    assert!(e.contains("not key=value"), "{e}");
    let e = failed(&stdio(&["call", "echo", "{bad json"]), 1);
    assert!(e.contains("not valid JSON"), "{e}");
}

fn call_logs(ctx: &Ctx) {
    let logged = "log info: Tool execution started\nlog info: Tool processing data\nlog info: Tool execution completed\n";
    for o in [
        stdio(&["call", "test_tool_with_logging", "--log-level", "info"]),
        http(
            ctx,
            &["call", "test_tool_with_logging", "--log-level", "debug"],
        ),
    ] {
        assert!(o.status.success(), "{}", err(&o));
        assert_eq!(out(&o), "Tool with logging executed successfully\n");
        assert_eq!(err(&o), logged);
    }
    // Above the messages' level, or without --log-level: nothing on stderr.
    ok(&stdio(&[
        "call",
        "test_tool_with_logging",
        "--log-level",
        "error",
    ]));
    ok(&stdio(&["call", "test_tool_with_logging"]));
}

fn tool_errors_and_server_errors(_: &Ctx) {
    let e = failed(&stdio(&["call", "test_error_handling"]), 1);
    assert_eq!(
        e,
        "mcp: the tool test_error_handling failed: This tool intentionally returns an error for testing"
    );
    // With --json the result is printed as it came, and the exit is still 1.
    let o = stdio(&["call", "test_error_handling", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&out(&o)).expect("JSON");
    assert_eq!(v["isError"], true);
    // A JSON-RPC error: the server's message and code.
    let e = failed(&stdio(&["call", "no_such_tool"]), 1);
    assert!(
        e.contains("no_such_tool") && e.contains("(error -32602)"),
        "{e}"
    );
    let o = stdio(&["call", "no_such_tool", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_str(&out(&o)).expect("a JSON error on stdout");
    assert_eq!(v["error"]["code"], -32602);
    // Typed arguments need the tool: its absence is said before any call.
    let e = failed(&stdio(&["call", "no_such_tool", "a=1"]), 1);
    assert!(
        e.contains(r#"the server has no tool "no_such_tool""#),
        "{e}"
    );
}

fn resources_templates_read(_: &Ctx) {
    let r = ok(&stdio(&["resources"]));
    assert!(
        r.contains("test://static-text  Static Text Resource  (text/plain)  A static text resource for testing\n"),
        "{r}"
    );
    let t = ok(&stdio(&["templates"]));
    assert!(t.contains("test://template/{id}/data"), "{t}");
    assert_eq!(
        ok(&stdio(&["read", "test://static-text"])),
        "This is the content of the static text resource."
    );
    let bin = ok(&stdio(&["read", "test://static-binary"]));
    assert!(bin.contains("binary, about"), "{bin}");
    let v = json(&stdio(&["read", "test://static-binary", "--json"]));
    assert!(v["contents"][0]["blob"].is_string(), "{v}");
    let e = failed(&stdio(&["read", "test://nothing-here"]), 1);
    assert!(e.contains("test://nothing-here"), "{e}");
}

fn prompts_prompt_complete(_: &Ctx) {
    let p = ok(&stdio(&["prompts"]));
    assert!(
        p.contains("test_prompt_with_arguments  A prompt with required arguments\n    arg1 (required)  First test argument\n"),
        "{p}"
    );
    let got = ok(&stdio(&[
        "prompt",
        "test_prompt_with_arguments",
        "arg1=a",
        "arg2=b",
    ]));
    assert!(got.starts_with("user: "), "{got}");
    assert!(got.contains('a') && got.contains('b'), "{got}");
    let v = json(&stdio(&["prompt", "test_simple_prompt", "--json"]));
    assert!(v["messages"].is_array(), "{v}");
    assert_eq!(
        ok(&stdio(&[
            "complete",
            "prompt",
            "test_prompt_with_arguments",
            "arg1",
            "pa"
        ])),
        "paris\npark\nparty\n"
    );
    assert_eq!(
        ok(&stdio(&[
            "complete",
            "resource",
            "test://template/{id}/data",
            "id",
            "4"
        ])),
        "42\n"
    );
    let v = json(&stdio(&[
        "complete",
        "prompt",
        "test_prompt_with_arguments",
        "arg2",
        "w",
        "--json",
    ]));
    assert_eq!(v["completion"]["values"][0], "world");
}

fn info_ping_log_level(ctx: &Ctx) {
    let i = ok(&stdio(&["info"]));
    assert!(i.starts_with("mcp-everything "), "{i}");
    assert!(i.contains("capabilities  ") && i.contains("tools"), "{i}");
    let v = json(&http(ctx, &["info", "--json"]));
    assert_eq!(v["serverInfo"]["name"], "mcp-everything");
    assert!(v["protocolVersion"].is_string());
    assert!(ok(&stdio(&["ping"])).starts_with("ok ("));
    assert_eq!(json(&stdio(&["ping", "--json"]))["ok"], true);
    assert_eq!(
        ok(&stdio(&["log-level", "debug"])),
        "log level set to debug\n"
    );
    assert_eq!(
        run(&["log-level", "loud", "--url", &ctx.url]).status.code(),
        Some(2)
    );
}

fn http_with_headers(ctx: &Ctx) {
    assert_eq!(
        ok(&http(
            ctx,
            &[
                "call",
                "echo",
                "text=over http",
                "-H",
                "X-Trace: 1",
                "--bearer",
                "t0k"
            ]
        )),
        "over http\n"
    );
    let v = json(&http(
        ctx,
        &[
            "call",
            "slow",
            "steps=1",
            "delay_ms=0",
            "--json",
            "--timeout",
            "30",
        ],
    ));
    assert_eq!(v["content"][0]["text"], "slow: done after 1 steps");
    // The token from the environment.
    let o = command(&["ping", "--url", &ctx.url])
        .env("MCP_BEARER_TOKEN", "from-env")
        .output()
        .expect("mcp runs");
    assert!(ok(&o).starts_with("ok ("));
    let e = failed(
        &run(&["tools", "--url", &ctx.url.replace("/mcp", "/elsewhere")]),
        1,
    );
    assert!(e.contains("404"), "{e}");
}

fn not_a_server(_: &Ctx) {
    // `ls` prints its listing and exits 0: not an MCP server.
    let e = failed(&run(&["tools", "--", "ls", "/"]), 1);
    assert!(
        e.contains("the server process `ls /` exited with status 0 before it answered")
            && e.contains("not an MCP server"),
        "{e}"
    );
    let o = run(&[
        "tools",
        "--",
        "sh",
        "-c",
        "echo first >&2; echo 'no config file' >&2; exit 3",
    ]);
    let e = failed(&o, 1);
    assert!(e.contains("exited with status 3"), "{e}");
    let all = err(&o);
    assert!(
        all.contains("its last lines on stderr:\n    first\n    no config file\n"),
        "{all}"
    );
    // With --server-stderr the server's stderr goes straight through.
    let o = run(&[
        "tools",
        "--server-stderr",
        "--",
        "sh",
        "-c",
        "echo straight >&2; exit 4",
    ]);
    assert!(err(&o).starts_with("straight\nmcp: "), "{}", err(&o));
    let e = failed(&run(&["tools", "--", "/no/such/program"]), 1);
    assert!(
        e.contains("cannot start the server `/no/such/program`"),
        "{e}"
    );
}

fn unreachable_and_slow(_: &Ctx) {
    let e = failed(&run(&["tools", "--url", "http://127.0.0.1:1/mcp"]), 1);
    assert!(
        e.contains("http://127.0.0.1:1/mcp") && e.contains("refused"),
        "{e}"
    );
    // A process that never answers: the timeout ends the wait and says so.
    let e = failed(&run(&["tools", "--timeout", "0.5", "--", "sleep", "30"]), 1);
    assert!(
        e.contains("`sleep 30` does not answer as an MCP server")
            && e.contains("did not answer within 0.5 s"),
        "{e}"
    );
    let e = failed(&run(&["tools", "--url", "ftp://x/"]), 1);
    assert!(e.contains("ftp://x/"), "{e}");
}

/// Reads the child's lines on a thread.
fn lines(r: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn interrupt(child: &std::process::Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

fn subscribe_streams(ctx: &Ctx) {
    let mut child = command(&["subscribe", "test://watched-resource", "--url", &ctx.url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp runs");
    let stdout = lines(child.stdout.take().expect("stdout"));
    let stderr = lines(child.stderr.take().expect("stderr"));
    let banner = stderr
        .recv_timeout(LINE_WAIT)
        .expect("the subscription is made");
    assert_eq!(
        banner,
        "mcp: subscribed to test://watched-resource; Ctrl-C ends"
    );
    for _ in 0..2 {
        let touched = ok(&http(ctx, &["call", "touch_watched"]));
        assert!(touched.contains("notified"), "{touched}");
        let line = stdout.recv_timeout(LINE_WAIT).expect("an update");
        assert_eq!(line, "resource updated: test://watched-resource");
    }
    interrupt(&child);
    let status = child.wait().expect("mcp exits");
    assert_eq!(
        status.code(),
        Some(0),
        "Ctrl-C ends the stream with success"
    );
}

fn listen_json_lines(ctx: &Ctx) {
    let mut child = command(&["listen", "--json", "--url", &ctx.url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp runs");
    let stdout = lines(child.stdout.take().expect("stdout"));
    // The listen stream opens in the background: change the list until a change arrives.
    let mut got = None;
    for _ in 0..20 {
        ok(&http(ctx, &["call", "test_trigger_tool_change"]));
        if let Ok(line) = stdout.recv_timeout(Duration::from_millis(500)) {
            got = Some(line);
            break;
        }
    }
    let line = got.expect("a list change");
    let v: Value = serde_json::from_str(&line).expect("one JSON object a line");
    assert_eq!(v["method"], "notifications/tools/list_changed");
    interrupt(&child);
    assert_eq!(child.wait().expect("mcp exits").code(), Some(0));
}

/// `--ca` trusts a private CA for `https://` and `wss://`; without it the connection fails,
/// saying why; `--http2-prior-knowledge` speaks h2c to a plain server.
fn https_and_wss(ctx: &Ctx) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let tls =
        mcp_tokio::TlsServerConfig::from_pem(cert.pem().as_bytes(), key.serialize_pem().as_bytes())
            .unwrap();
    let dir = std::env::temp_dir().join(format!("mcp-cli-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, &ca_pem).unwrap();
    let ca_file = ca_file.to_str().unwrap().to_owned();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let http = tokio::net::TcpListener::bind(("127.0.0.1", 0))
                .await
                .unwrap();
            let ws = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
            ws.set_nonblocking(true).unwrap();
            let ws = tokio::net::TcpListener::from_std(ws).unwrap();
            let ports = (
                http.local_addr().unwrap().port(),
                ws.local_addr().unwrap().port(),
            );
            let server = mcp_examples::everything::server();
            let config = mcp_proto::http::EndpointConfig::new(server.config().clone())
                .bound_to(std::net::Ipv4Addr::LOCALHOST.into());
            let rt = mcp_tokio::TokioRuntime::current();
            let options = mcp_tokio::HttpServerOptions::default();
            let ws_config =
                mcp_tokio::WsConfig::new().bound_to(std::net::Ipv4Addr::LOCALHOST.into());
            tx.send(ports).unwrap();
            let https = mcp_tokio::serve_http_tls(
                rt.clone(),
                server.clone(),
                http,
                config,
                options,
                tls.clone(),
            );
            let wss = mcp_tokio::serve_ws_tls(rt, server, ws, ws_config, tls);
            let _ = tokio::join!(https, wss);
        });
    });
    let (http_port, ws_port) = rx.recv_timeout(LINE_WAIT).expect("the TLS servers started");
    let url = format!("https://localhost:{http_port}/mcp");
    let tools = ok(&run(&["tools", "--url", &url, "--ca", &ca_file]));
    assert!(tools.contains("echo"), "{tools}");
    let e = failed(&run(&["tools", "--url", &url]), 1);
    assert!(e.contains("unknown authority"), "{e}");
    let ws_url = format!("wss://localhost:{ws_port}/ws");
    let tools = ok(&run(&["tools", "--ws-url", &ws_url, "--ca", &ca_file]));
    assert!(tools.contains("echo"), "{tools}");
    let e = failed(
        &run(&["tools", "--url", &url, "--ca", "/nonexistent/ca.pem"]),
        1,
    );
    assert!(e.contains("cannot read"), "{e}");
    // h2c to the plain server of the other cases.
    let tools = ok(&run(&[
        "tools",
        "--url",
        &ctx.url,
        "--http2-prior-knowledge",
    ]));
    assert!(tools.contains("echo"), "{tools}");
    let _ = std::fs::remove_dir_all(&dir);
}
