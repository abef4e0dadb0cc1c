//! An MCP server over stdio driven by the sans-IO core alone: no async runtime, no executor,
//! no thread. Blocking reads and writes and one plain loop; the session's
//! [`poll_timeout`](Session::poll_timeout) bounds how long a read may wait. It serves the
//! `echo` tool (with progress when the caller asks for it), a `countdown` tool whose steps run
//! on the loop's timer and stop when the call is cancelled, one resource and one prompt, to
//! clients of both eras (the `initialize` handshake and 2026-07-28).
//!
//! This is the reference for a driver on a new host. Its whole contract with the core is:
//!
//! 1. feed what arrives to [`Session::handle_bytes`], and tell the session when the input
//!    ended ([`Session::handle_closed`]);
//! 2. hand [`Session::poll_event`]'s events to the application, which answers through the
//!    session ([`Session::respond`], [`Session::report_progress`], …);
//! 3. write out what [`Session::poll_transmit`] gives;
//! 4. call [`Session::handle_timeout`] when [`Session::poll_timeout`]'s deadline passes;
//!
//! and to stop when [`Session::is_closed`] says so.
//!
//! ```text
//! cargo run -p mcp-example-no-runtime
//! ```
//!
//! On Unix the read waits with `poll(2)` on stdin up to the session's deadline, under WASI
//! with `poll_oneoff` (it builds for `wasm32-wasip1` as it is: `node wasi-run.mjs
//! no-runtime-server.wasm` runs it under Node's WASI). Elsewhere it is a plain blocking read,
//! and deadlines are checked when input arrives.

use std::io::{self, Read, Write};

use mcp_proto::session::{Config, Event, InboundRequest, Session};
use mcp_proto::{Duration, Error, Instant, ProtocolVersion, RequestId};
use serde_json::value::RawValue;
use serde_json::{Value, json};

fn main() {
    if let Err(e) = serve(io::stdin().lock(), io::stdout().lock()) {
        eprintln!("no-runtime-server: {e}");
        std::process::exit(1);
    }
}

/// The server's configuration: both eras, the three capabilities it has.
fn config() -> Config {
    let mut config =
        Config::new("no-runtime-server", env!("CARGO_PKG_VERSION")).versions(&ProtocolVersion::ALL);
    config.capabilities = raw(r#"{"tools":{},"resources":{},"prompts":{}}"#);
    config
}

/// Serves one session on `input`/`output` until it closes.
fn serve(mut input: impl Read + Waitable, mut output: impl Write) -> io::Result<()> {
    let start = std::time::Instant::now();
    let now = || Instant::ZERO + Duration::from_micros(start.elapsed().as_micros() as u64);
    let mut session = Session::server(config());
    let mut jobs = Jobs::default();
    let mut read_buf = vec![0u8; 64 * 1024];
    let mut out = Vec::new();
    loop {
        // The application's turn: every event the session has, then the work that is due.
        while let Some(event) = session.poll_event() {
            match event {
                Event::Request(req) => answer(&mut session, &mut jobs, req, now()),
                Event::Cancelled { id, .. } => jobs.cancel(&id),
                _ => {}
            }
        }
        jobs.run_due(&mut session, now());
        // The transport's turn: everything the session has to say, in one write.
        out.clear();
        while session.poll_transmit(&mut out).is_some() {}
        if !out.is_empty() {
            output.write_all(&out)?;
            output.flush()?;
            continue; // writing may have produced events (e.g. a close completing)
        }
        if session.is_closed() {
            return Ok(());
        }
        // Wait for input, no longer than the session's next deadline or the next job's step.
        let deadline = match (session.poll_timeout(), jobs.next_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let wait = deadline.map(|d| {
            std::time::Duration::from_micros(d.saturating_duration_since(now()).as_micros())
        });
        if !input.wait_readable(wait)? {
            session.handle_timeout(now());
            continue; // the jobs' steps run at the top
        }
        match input.read(&mut read_buf) {
            Ok(0) => session.handle_closed(now(), None),
            Ok(n) => session.handle_bytes(now(), &read_buf[..n]),
            // Interrupted, or the host's stdin is non-blocking (Node's WASI): wait again.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) => {}
            Err(e) => session.handle_closed(
                now(),
                Some(Error::new(
                    mcp_proto::ErrorKind::TransportError,
                    e.to_string(),
                )),
            ),
        }
        if deadline.is_some_and(|d| d <= now()) {
            session.handle_timeout(now());
        }
    }
}

/// Calls of the `countdown` tool in progress: each reports a step at its interval and answers
/// after its last; a cancelled one just stops.
#[derive(Default)]
struct Jobs(Vec<Job>);

struct Job {
    id: RequestId,
    done: u32,
    steps: u32,
    every: Duration,
    next: Instant,
}

impl Jobs {
    fn next_due(&self) -> Option<Instant> {
        self.0.iter().map(|j| j.next).min()
    }

    fn cancel(&mut self, id: &RequestId) {
        self.0.retain(|j| j.id != *id);
    }

    /// Runs every step that is due: progress, and the answer after the last one.
    fn run_due(&mut self, session: &mut Session, now: Instant) {
        self.0.retain_mut(|j| {
            while j.next <= now && j.done < j.steps {
                j.done += 1;
                j.next = j.next + j.every;
                let _ = session.report_progress(&j.id, j.done.into(), Some(j.steps.into()), None);
            }
            if j.done < j.steps {
                return true;
            }
            let text = format!("counted {} steps", j.steps);
            let result = json!({"content": [{"type": "text", "text": text}]});
            if let Ok(result) = mcp_proto::jsonrpc::to_raw(&result) {
                let _ = session.respond(&j.id, result);
            }
            false
        });
    }
}

/// The application: one answer per request (now, or later for a `countdown`).
fn answer(session: &mut Session, jobs: &mut Jobs, req: InboundRequest, now: Instant) {
    let params: Value = req
        .params
        .as_deref()
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null);
    let result = match &*req.method {
        "tools/list" => Ok(json!({"tools": [{
            "name": "echo",
            "description": "Echoes its text",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            }
        }, {
            "name": "countdown",
            "description": "Counts `steps` steps, one every `interval_ms`, reporting progress",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "steps": {"type": "integer", "minimum": 1, "maximum": 10000},
                    "interval_ms": {"type": "integer", "minimum": 0, "maximum": 60000}
                },
                "required": ["steps"]
            }
        }, {
            "name": "jobs",
            "description": "How many countdowns are running",
            "inputSchema": {"type": "object"}
        }]})),
        "tools/call" if params["name"] == "countdown" => {
            let steps = params["arguments"]["steps"].as_u64().unwrap_or(0);
            let every = params["arguments"]["interval_ms"].as_u64().unwrap_or(100);
            if !(1..=10_000).contains(&steps) || every > 60_000 {
                Err(Error::invalid_params(
                    "steps must be 1..=10000, interval_ms 0..=60000",
                ))
            } else {
                let every = Duration::from_millis(every);
                jobs.0.push(Job {
                    id: req.id.clone(),
                    done: 0,
                    steps: steps as u32,
                    every,
                    next: now + every,
                });
                return; // answered when it is done
            }
        }
        "tools/call" if params["name"] == "jobs" => {
            let running = jobs.0.len().to_string();
            Ok(json!({"content": [{"type": "text", "text": running}]}))
        }
        "tools/call" => call_tool(session, &req, &params),
        "resources/list" => Ok(json!({"resources": [{
            "uri": RESOURCE, "name": "hello", "mimeType": "text/plain"
        }]})),
        "resources/templates/list" => Ok(json!({"resourceTemplates": []})),
        "resources/read" => match params["uri"].as_str() {
            Some(RESOURCE) => Ok(json!({"contents": [{
                "uri": RESOURCE, "mimeType": "text/plain", "text": RESOURCE_TEXT
            }]})),
            // The request's own era (2026-07-28 names it on every request), else the session's.
            uri => Err(Error::resource_not_found(
                uri.unwrap_or(""),
                req.era
                    .as_ref()
                    .map(|e| e.version)
                    .or(session.version())
                    .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE),
            )),
        },
        "prompts/list" => Ok(json!({"prompts": [{
            "name": "greet",
            "description": "A greeting for someone",
            "arguments": [{"name": "name", "required": true}]
        }]})),
        "prompts/get" => match (
            params["name"].as_str(),
            params["arguments"]["name"].as_str(),
        ) {
            (Some("greet"), Some(name)) => Ok(json!({"messages": [{
                "role": "user",
                "content": {"type": "text", "text": format!("Say hello to {name}.")}
            }]})),
            (Some("greet"), None) => Err(Error::invalid_params("missing argument `name`")),
            (other, _) => Err(Error::invalid_params(format!(
                "no such prompt: {}",
                other.unwrap_or("")
            ))),
        },
        other => Err(Error::method_not_found(other)),
    };
    // The session refuses an answer to a request it no longer holds (cancelled, closed):
    // nothing to do then.
    let _ = match result.and_then(|v| mcp_proto::jsonrpc::to_raw(&v)) {
        Ok(result) => session.respond(&req.id, result),
        Err(e) => session.respond_error(&req.id, e),
    };
}

/// `tools/call echo`: progress first when the caller asked for it, then the text back.
fn call_tool(session: &mut Session, req: &InboundRequest, params: &Value) -> Result<Value, Error> {
    if params["name"] != "echo" {
        let name = params["name"].as_str().unwrap_or("");
        return Err(Error::invalid_params(format!("no such tool: {name}")));
    }
    let Some(text) = params["arguments"]["text"].as_str() else {
        return Ok(json!({
            "content": [{"type": "text", "text": "`text` must be a string"}],
            "isError": true
        }));
    };
    if req.progress_token.is_some() {
        let _ = session.report_progress(&req.id, 1.0, Some(1.0), Some("echoed"));
    }
    Ok(json!({"content": [{"type": "text", "text": text}]}))
}

const RESOURCE: &str = "memo://hello";
const RESOURCE_TEXT: &str = "Hello from a server with no runtime.";

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap_or_else(|_| mcp_proto::jsonrpc::empty_object())
}

/// An input that can wait until it is readable, for at most a while.
trait Waitable {
    /// Waits until a read would not block, or `wait` passed (`Ok(false)`); `None` waits for
    /// input however long it takes.
    fn wait_readable(&mut self, wait: Option<std::time::Duration>) -> io::Result<bool>;
}

#[cfg(unix)]
impl Waitable for io::StdinLock<'_> {
    fn wait_readable(&mut self, wait: Option<std::time::Duration>) -> io::Result<bool> {
        let timeout_ms = match wait {
            None => -1,
            // Rounded up, so a deadline is never polled for before it passed.
            Some(d) => i32::try_from(d.as_micros().div_ceil(1000)).unwrap_or(i32::MAX),
        };
        let mut fd = libc::pollfd {
            fd: libc::STDIN_FILENO,
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // SAFETY: one valid pollfd, and its count.
            let n = unsafe { libc::poll(&mut fd, 1, timeout_ms) };
            match n {
                0 => return Ok(false),
                n if n > 0 => return Ok(true), // readable, at its end, or failed: read says
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                }
            }
        }
    }
}

/// WASI: `poll_oneoff` on stdin and a relative clock.
#[cfg(target_os = "wasi")]
impl Waitable for io::StdinLock<'_> {
    fn wait_readable(&mut self, wait: Option<std::time::Duration>) -> io::Result<bool> {
        let read = wasi::Subscription {
            userdata: 0,
            u: wasi::SubscriptionU {
                tag: wasi::EVENTTYPE_FD_READ.raw(),
                u: wasi::SubscriptionUU {
                    fd_read: wasi::SubscriptionFdReadwrite { file_descriptor: 0 },
                },
            },
        };
        let mut subs = vec![read];
        if let Some(d) = wait {
            subs.push(wasi::Subscription {
                userdata: 1,
                u: wasi::SubscriptionU {
                    tag: wasi::EVENTTYPE_CLOCK.raw(),
                    u: wasi::SubscriptionUU {
                        clock: wasi::SubscriptionClock {
                            id: wasi::CLOCKID_MONOTONIC,
                            timeout: u64::try_from(d.as_nanos()).unwrap_or(u64::MAX),
                            precision: 0,
                            flags: 0,
                        },
                    },
                },
            });
        }
        // SAFETY: an all-zero `Event` is a valid value of the plain-data struct.
        let mut events: [wasi::Event; 2] = unsafe { std::mem::zeroed() };
        // SAFETY: `subs` holds `subs.len()` subscriptions and `events` room for as many.
        let n = unsafe { wasi::poll_oneoff(subs.as_ptr(), events.as_mut_ptr(), subs.len()) }
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(events.iter().take(n).any(|e| e.userdata == 0))
    }
}

#[cfg(not(any(unix, target_os = "wasi")))]
impl Waitable for io::StdinLock<'_> {
    fn wait_readable(&mut self, _wait: Option<std::time::Duration>) -> io::Result<bool> {
        Ok(true) // a plain blocking read
    }
}
