#![deny(missing_docs)]
//! MCP in a web page: the sans-IO core (`mcp-proto`) compiled to `wasm32-unknown-unknown` and
//! driven by the browser's own event loop, with a small JavaScript API (wasm-bindgen).
//!
//! - [`McpClient`] is a client session over Streamable HTTP: the core's
//!   [`ClientTransport`] decides every request, `fetch` carries it (SSE replies read as a
//!   stream, aborts with an `AbortController`), `setTimeout` drives the core's timers. Both
//!   eras: the handshake (`initialize`, session id, standalone GET stream, DELETE on close)
//!   and 2026-07-28 (`server/discover`, one POST per request).
//! - [`McpServer`] is a server session in the page, with an `echo` tool; an
//!   [`McpClient`] made by [`McpClient::connect_in_page`] walks it in memory.
//!
//! ```js
//! import init, { McpClient, McpServer } from "./pkg/mcp_example_browser.js";
//! await init();
//! const client = await McpClient.connect("http://127.0.0.1:8080/mcp", "auto");
//! const tools = await client.listTools();          // the result object: {tools: [...]}
//! const result = await client.callTool("echo", JSON.stringify({ text: "hi" }));
//! await client.close();
//! ```
//!
//! Every failure (a refused fetch, a CORS refusal, an error reply, bad arguments) rejects the
//! Promise with an `Error` whose message says what went wrong; nothing here panics on what a
//! server or a page sends.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use bytes::Bytes;
use futures_channel::oneshot;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use js_sys::{Promise, Reflect, Uint8Array};
use mcp_proto::http::client::{
    Action, ClientConfig, ClientTransport, ExchangeId, HttpRequest, Outgoing, ReadAs,
};
use mcp_proto::session::{Config, Discovery, Event, Framing, RequestOptions, Session};
use mcp_proto::{Duration, Error, ErrorKind, Instant, ProtocolVersion, RequestId};
use serde_json::value::RawValue;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{JsFuture, future_to_promise, spawn_local};

/// A panic aborts the module: at least say why on the console first.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&JsValue::from_str(&format!("mcp module panicked: {info}")));
    }));
}

/// A rejected Promise's value: an `Error` with `message`.
fn js_error(message: impl AsRef<str>) -> JsValue {
    js_sys::Error::new(message.as_ref()).into()
}

/// A JavaScript exception as text (an `Error`'s `name: message`, else its string form).
fn describe_js(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        let name = String::from(err.name());
        let message = String::from(err.message());
        return format!("{name}: {message}");
    }
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// Milliseconds of the page's monotonic clock as the core's [`Instant`].
fn now() -> Instant {
    let ms = web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now());
    Instant::ZERO + Duration::from_micros((ms.max(0.0) * 1000.0) as u64)
}

fn parse_discovery(discovery: Option<String>) -> Result<Discovery, JsValue> {
    match discovery.as_deref().unwrap_or("auto") {
        "auto" => Ok(Discovery::Auto),
        "initialize" => Ok(Discovery::Initialize),
        "discover" => Ok(Discovery::Discover),
        other => Err(js_error(format!(
            "unknown discovery {other:?} (auto, initialize, discover)"
        ))),
    }
}

fn client_config(discovery: Discovery, framing: Framing) -> Config {
    Config::new("mcp-browser-client", env!("CARGO_PKG_VERSION"))
        .versions(&ProtocolVersion::ALL)
        .discovery(discovery)
        .framing(framing)
}

fn raw(s: &str) -> Result<Box<RawValue>, String> {
    RawValue::from_string(s.to_owned()).map_err(|e| format!("not JSON: {e}"))
}

/// The method of a JSON-RPC request or notification.
fn method_of(message: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct M {
        method: Option<String>,
    }
    serde_json::from_slice::<M>(message).ok()?.method
}

// ------------------------------------------------------------------ the client

/// What carries the client session's messages.
#[allow(clippy::large_enum_variant)] // one per client, never moved about
enum Carrier {
    /// Streamable HTTP over `fetch`, with the exchanges in flight.
    Http {
        transport: ClientTransport,
        running: HashMap<ExchangeId, web_sys::AbortController>,
        version_set: bool,
        /// `close` was called: the transport closes (DELETE) once the session has.
        closing: bool,
    },
    /// A server session in the page, this client's own.
    Memory(ServerConn),
}

struct Inner {
    session: Session,
    carrier: Carrier,
    ready: Option<oneshot::Sender<Result<ProtocolVersion, String>>>,
    waiting: HashMap<RequestId, oneshot::Sender<Result<String, String>>>,
    closed: Option<String>,
    /// Resolved once the session and its transport are done.
    on_closed: Vec<oneshot::Sender<()>>,
    /// The deadline a `setTimeout` is set for.
    armed: Option<Instant>,
}

/// A `fetch` to start: the exchange, its request and the signal that aborts it.
type Start = (ExchangeId, HttpRequest, web_sys::AbortSignal);

impl Inner {
    /// Moves everything that can move until nothing does; returns the fetches to start.
    fn turn(&mut self) -> Vec<Start> {
        let mut starts = Vec::new();
        let mut buf = Vec::new();
        for _ in 0..10_000 {
            let now = now();
            let mut moved = false;
            while let Some(t) = self.session.poll_transmit(&mut buf) {
                moved = true;
                let message = std::mem::take(&mut buf);
                match &mut self.carrier {
                    Carrier::Http { transport, .. } => {
                        let kind = Outgoing::of(&t);
                        match self.session.stateless_version() {
                            Some(version) => {
                                let method = t
                                    .method
                                    .map(str::to_owned)
                                    .or_else(|| method_of(&message))
                                    .unwrap_or_default();
                                let session = &self.session;
                                transport.send_stateless(
                                    now,
                                    kind,
                                    version.as_str(),
                                    &method,
                                    Bytes::from(message),
                                    |tool| session.param_headers(tool),
                                );
                            }
                            None => transport.send(now, kind, Bytes::from(message)),
                        }
                    }
                    Carrier::Memory(server) => {
                        let replies = server.handle(now, &message);
                        for reply in replies {
                            self.session.handle_message(now, &reply);
                        }
                    }
                }
            }
            if let Carrier::Http {
                transport,
                running,
                version_set,
                closing,
            } = &mut self.carrier
            {
                if *closing && self.session.is_closed() && !transport.is_closed() {
                    *closing = false;
                    transport.close(now);
                    moved = true;
                }
                while let Some(d) = transport.poll_delivery() {
                    moved = true;
                    d.apply(&mut self.session, now);
                }
                if !*version_set && let Some(v) = self.session.version() {
                    transport.set_protocol_version(v.as_str());
                    *version_set = true;
                }
                while let Some(a) = transport.poll_action() {
                    moved = true;
                    match a {
                        Action::Send { exchange, request } => match web_sys::AbortController::new()
                        {
                            Ok(abort) => {
                                starts.push((exchange, *request, abort.signal()));
                                running.insert(exchange, abort);
                            }
                            Err(e) => transport.handle_failed(
                                now,
                                exchange,
                                Error::new(
                                    ErrorKind::TransportError,
                                    format!("no AbortController: {}", describe_js(&e)),
                                ),
                            ),
                        },
                        Action::Abort(exchange) => {
                            if let Some(abort) = running.remove(&exchange) {
                                abort.abort();
                            }
                        }
                        _ => {}
                    }
                }
            }
            while let Some(e) = self.session.poll_event() {
                moved = true;
                self.on_event(e);
            }
            if !moved {
                break;
            }
        }
        if self.done() {
            for tx in self.on_closed.drain(..) {
                let _ = tx.send(());
            }
        }
        starts
    }

    fn on_event(&mut self, e: Event) {
        match e {
            Event::Ready { version, .. } => {
                if let Some(tx) = self.ready.take() {
                    let _ = tx.send(Ok(version));
                }
            }
            Event::Response { id, result } => {
                if let Some(tx) = self.waiting.remove(&id) {
                    let _ = tx.send(
                        result
                            .map(|r| r.get().to_owned())
                            .map_err(|e| e.to_string()),
                    );
                }
            }
            Event::Request(req) => {
                // This client declares no capability (sampling, roots, elicitation).
                let _ = self
                    .session
                    .respond_error(&req.id, Error::method_not_found(&req.method));
            }
            Event::Closed(error) => {
                let why = error.map_or_else(
                    || "the session closed".to_owned(),
                    |e| format!("the session closed: {e}"),
                );
                if let Some(tx) = self.ready.take() {
                    let _ = tx.send(Err(why.clone()));
                }
                for (_, tx) in self.waiting.drain() {
                    let _ = tx.send(Err(why.clone()));
                }
                self.closed = Some(why);
            }
            _ => {}
        }
    }

    /// Whether the session and its transport have finished.
    fn done(&self) -> bool {
        let carried = match &self.carrier {
            Carrier::Http { transport, .. } => transport.is_closed(),
            Carrier::Memory(_) => true,
        };
        self.session.is_closed() && carried
    }

    fn deadline(&self) -> Option<Instant> {
        let t = self.session.poll_timeout();
        let c = match &self.carrier {
            Carrier::Http { transport, .. } => transport.poll_timeout(),
            Carrier::Memory(_) => None,
        };
        match (t, c) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
        if let Carrier::Http { transport, .. } = &mut self.carrier {
            transport.handle_timeout(now);
        }
    }
}

/// Runs a turn of the client, starts the fetches it asked for and sets its timer.
fn pump(rc: &Rc<RefCell<Inner>>) {
    let (starts, deadline, armed) = {
        let mut inner = rc.borrow_mut();
        let starts = inner.turn();
        (starts, inner.deadline(), inner.armed)
    };
    for (exchange, request, signal) in starts {
        spawn_local(run_exchange(Rc::downgrade(rc), exchange, request, signal));
    }
    if let Some(at) = deadline
        && armed.is_none_or(|a| at < a)
    {
        arm(rc, at);
    }
}

/// A `setTimeout` for `at`. A timer that fires after the deadline moved is harmless: the core
/// ignores a timeout before its deadline, and the next turn sets the timer again.
fn arm(rc: &Rc<RefCell<Inner>>, at: Instant) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let wait = at.saturating_duration_since(now()).as_millis();
    let weak = Rc::downgrade(rc);
    let fire = Closure::once_into_js(move || {
        if let Some(rc) = weak.upgrade() {
            {
                let mut inner = rc.borrow_mut();
                inner.armed = None;
                inner.handle_timeout(now());
            }
            pump(&rc);
        }
    });
    let ms = i32::try_from(wait.saturating_add(1)).unwrap_or(i32::MAX);
    if window
        .set_timeout_with_callback_and_timeout_and_arguments_0(fire.unchecked_ref(), ms)
        .is_ok()
    {
        rc.borrow_mut().armed = Some(at);
    }
}

/// What one `fetch` reports, handed to the transport.
enum Report {
    Head(StatusCode, HeaderMap),
    Data(Vec<u8>),
    Body(Vec<u8>),
    End(bool),
    Failed(String),
}

/// Hands a report of `exchange` to the transport and runs a turn; returns how to read the
/// body (for a head) and its limit. `None` when the client is gone or the exchange was
/// aborted meanwhile.
fn report(weak: &Weak<RefCell<Inner>>, exchange: ExchangeId, r: Report) -> Option<(ReadAs, usize)> {
    let rc = weak.upgrade()?;
    let out = {
        let mut inner = rc.borrow_mut();
        let Inner {
            session, carrier, ..
        } = &mut *inner;
        let Carrier::Http {
            transport, running, ..
        } = carrier
        else {
            return None;
        };
        if !running.contains_key(&exchange) {
            return None;
        }
        let now = now();
        match r {
            Report::Head(status, headers) => {
                let how = transport.handle_head(now, exchange, status, &headers);
                Some((how, transport.body_limit(exchange)))
            }
            Report::Data(data) => {
                transport.handle_data(now, exchange, &data);
                Some((ReadAs::Sse, 0))
            }
            Report::Body(body) => {
                running.remove(&exchange);
                transport.handle_body(now, exchange, &body);
                end(session, transport, now, exchange, true);
                None
            }
            Report::End(clean) => {
                running.remove(&exchange);
                end(session, transport, now, exchange, clean);
                None
            }
            Report::Failed(why) => {
                running.remove(&exchange);
                transport.handle_failed(now, exchange, Error::new(ErrorKind::TransportError, why));
                None
            }
        }
    };
    pump(&rc);
    out
}

/// A body ended: what it carried reaches the session first, then the transport learns
/// whether the exchange's request still awaits its response.
fn end(
    session: &mut Session,
    transport: &mut ClientTransport,
    now: Instant,
    exchange: ExchangeId,
    clean: bool,
) {
    while let Some(d) = transport.poll_delivery() {
        d.apply(session, now);
    }
    let s = &*session;
    transport.handle_end(now, exchange, clean, |id| s.is_awaiting(id));
}

/// Carries out one exchange with `fetch`: the head, then the body as the transport says.
async fn run_exchange(
    weak: Weak<RefCell<Inner>>,
    exchange: ExchangeId,
    request: HttpRequest,
    signal: web_sys::AbortSignal,
) {
    let url = request.uri().to_string();
    if let Err(why) = fetch_exchange(&weak, exchange, request, &signal).await
        && !signal.aborted()
    {
        report(
            &weak,
            exchange,
            Report::Failed(format!("fetch {url}: {why}")),
        );
    }
}

async fn fetch_exchange(
    weak: &Weak<RefCell<Inner>>,
    exchange: ExchangeId,
    request: HttpRequest,
    signal: &web_sys::AbortSignal,
) -> Result<(), String> {
    let window = web_sys::window().ok_or("no window")?;
    let (parts, body) = request.into_parts();
    let init = web_sys::RequestInit::new();
    init.set_method(parts.method.as_str());
    init.set_mode(web_sys::RequestMode::Cors);
    init.set_signal(Some(signal));
    let headers = web_sys::Headers::new().map_err(|e| describe_js(&e))?;
    for (name, value) in &parts.headers {
        // (`Host` and the like are the browser's to set.)
        if name == http::header::HOST {
            continue;
        }
        if let Ok(v) = value.to_str() {
            headers
                .append(name.as_str(), v)
                .map_err(|e| format!("header {name}: {}", describe_js(&e)))?;
        }
    }
    init.set_headers(&headers);
    if !body.is_empty() {
        let bytes = Uint8Array::from(&body[..]);
        init.set_body(&bytes);
    }
    let req = web_sys::Request::new_with_str_and_init(&parts.uri.to_string(), &init)
        .map_err(|e| describe_js(&e))?;
    let resp = JsFuture::from(window.fetch_with_request(&req))
        .await
        .map_err(|e| {
            format!(
                "{} (the server is unreachable, or refused this page's origin: CORS)",
                describe_js(&e)
            )
        })?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "fetch gave no Response")?;
    let status = StatusCode::from_u16(resp.status()).map_err(|e| e.to_string())?;
    let mut map = HeaderMap::new();
    if let Ok(Some(entries)) = js_sys::try_iter(&resp.headers()) {
        for entry in entries.flatten() {
            let pair = js_sys::Array::from(&entry);
            let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) else {
                continue;
            };
            if let (Ok(k), Ok(v)) = (HeaderName::try_from(k), HeaderValue::try_from(v)) {
                map.append(k, v);
            }
        }
    }
    let Some((how, limit)) = report(weak, exchange, Report::Head(status, map)) else {
        return Ok(());
    };
    match how {
        ReadAs::Whole => {
            let buffer = JsFuture::from(resp.array_buffer().map_err(|e| describe_js(&e))?)
                .await
                .map_err(|e| format!("reading the reply: {}", describe_js(&e)))?;
            let bytes = Uint8Array::new(&buffer);
            if bytes.length() as usize > limit {
                return Err(format!("the reply is larger than {limit} bytes"));
            }
            report(weak, exchange, Report::Body(bytes.to_vec()));
        }
        ReadAs::Sse => {
            let Some(stream) = resp.body() else {
                report(weak, exchange, Report::End(true));
                return Ok(());
            };
            let reader: web_sys::ReadableStreamDefaultReader = stream
                .get_reader()
                .dyn_into()
                .map_err(|_| "no stream reader")?;
            loop {
                let chunk = match JsFuture::from(reader.read()).await {
                    Ok(c) => c,
                    Err(e) => {
                        if !signal.aborted() {
                            web_sys::console::debug_1(&JsValue::from_str(&format!(
                                "stream broke: {}",
                                describe_js(&e)
                            )));
                            report(weak, exchange, Report::End(false));
                        }
                        return Ok(());
                    }
                };
                let done = Reflect::get(&chunk, &JsValue::from_str("done"))
                    .ok()
                    .and_then(|d| d.as_bool())
                    .unwrap_or(true);
                if done {
                    report(weak, exchange, Report::End(true));
                    return Ok(());
                }
                let Ok(value) = Reflect::get(&chunk, &JsValue::from_str("value")) else {
                    continue;
                };
                let data = Uint8Array::new(&value).to_vec();
                if report(weak, exchange, Report::Data(data)).is_none() {
                    // Aborted or the client is gone: stop reading.
                    let _ = reader.cancel();
                    return Ok(());
                }
            }
        }
        _ => {
            // Discard: nothing more to report.
            if let Some(stream) = resp.body() {
                let _ = stream.cancel();
            }
            if let Some(rc) = weak.upgrade()
                && let Carrier::Http { running, .. } = &mut rc.borrow_mut().carrier
            {
                running.remove(&exchange);
            }
        }
    }
    Ok(())
}

/// An MCP client session in the page.
///
/// Made by [`connect`](McpClient::connect) (Streamable HTTP over `fetch`) or
/// [`connect_in_page`](McpClient::connect_in_page) (an [`McpServer`] in memory); every method
/// returns a Promise, rejected with an `Error` on failure.
#[wasm_bindgen]
pub struct McpClient {
    inner: Rc<RefCell<Inner>>,
    version: ProtocolVersion,
}

#[wasm_bindgen]
impl McpClient {
    /// Connects to the Streamable HTTP endpoint at `url` (absolute) and resolves with the
    /// client once the session is ready. `discovery`: `"auto"` (the default:
    /// `server/discover`, else the handshake), `"initialize"` (the handshake) or
    /// `"discover"` (2026-07-28 only).
    pub fn connect(url: String, discovery: Option<String>) -> Promise {
        future_to_promise(async move {
            let discovery = parse_discovery(discovery)?;
            let uri: http::Uri = url
                .parse()
                .map_err(|e| js_error(format!("not a URL: {url:?}: {e}")))?;
            if uri.scheme().is_none() || uri.authority().is_none() {
                return Err(js_error(format!("not an absolute URL: {url:?}")));
            }
            let transport = ClientTransport::new(ClientConfig::new(uri));
            let carrier = Carrier::Http {
                transport,
                running: HashMap::new(),
                version_set: false,
                closing: false,
            };
            Self::open(client_config(discovery, Framing::Raw), carrier).await
        })
    }

    /// Connects to `server`, a server session in this page, in memory.
    #[wasm_bindgen(js_name = connectInPage)]
    pub fn connect_in_page(server: &McpServer, discovery: Option<String>) -> Promise {
        let conn = ServerConn {
            session: Session::server(server.config.clone()),
            served: server.served.clone(),
        };
        future_to_promise(async move {
            let discovery = parse_discovery(discovery)?;
            let carrier = Carrier::Memory(conn);
            Self::open(client_config(discovery, Framing::Raw), carrier).await
        })
    }

    async fn open(config: Config, carrier: Carrier) -> Result<JsValue, JsValue> {
        let mut session = Session::client(config);
        session
            .start(now())
            .map_err(|e| js_error(format!("cannot start: {e}")))?;
        let (tx, rx) = oneshot::channel();
        let inner = Rc::new(RefCell::new(Inner {
            session,
            carrier,
            ready: Some(tx),
            waiting: HashMap::new(),
            closed: None,
            on_closed: Vec::new(),
            armed: None,
        }));
        pump(&inner);
        let version = rx
            .await
            .map_err(|_| js_error("the session ended before it was ready"))?
            .map_err(|e| js_error(format!("cannot connect: {e}")))?;
        Ok(McpClient { inner, version }.into())
    }

    /// The protocol version in use (e.g. `"2026-07-28"`).
    #[wasm_bindgen(getter, js_name = protocolVersion)]
    pub fn protocol_version(&self) -> String {
        self.version.as_str().to_owned()
    }

    /// The `Mcp-Session-Id` the server gave (handshake era over HTTP), if any.
    #[wasm_bindgen(getter, js_name = sessionId)]
    pub fn session_id(&self) -> Option<String> {
        match &self.inner.borrow().carrier {
            Carrier::Http { transport, .. } => transport.session_id().map(str::to_owned),
            Carrier::Memory(_) => None,
        }
    }

    /// `tools/list`: resolves with the result object (`{tools: [...]}`).
    #[wasm_bindgen(js_name = listTools)]
    pub fn list_tools(&self) -> Promise {
        self.request("tools/list".to_owned(), "{}".to_owned())
    }

    /// `tools/call` of tool `name` with `args_json` (a JSON object, as text): resolves with
    /// the result object (`{content: [...], isError?}`).
    #[wasm_bindgen(js_name = callTool)]
    pub fn call_tool(&self, name: String, args_json: String) -> Promise {
        let args = match serde_json::from_str::<serde_json::Value>(&args_json) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            Ok(_) => return Promise::reject(&js_error("the arguments must be a JSON object")),
            Err(e) => {
                return Promise::reject(&js_error(format!("the arguments are not JSON: {e}")));
            }
        };
        let params = serde_json::json!({"name": name, "arguments": args}).to_string();
        self.request("tools/call".to_owned(), params)
    }

    /// Any request: `method` with `params_json` (a JSON object, as text); resolves with the
    /// result object.
    pub fn request(&self, method: String, params_json: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let rx = {
                let mut i = inner.borrow_mut();
                if let Some(why) = &i.closed {
                    return Err(js_error(format!("{method}: {why}")));
                }
                let params = raw(&params_json).map_err(|e| js_error(format!("{method}: {e}")))?;
                let id = i
                    .session
                    .send_request(now(), &method, Some(params), RequestOptions::default())
                    .map_err(|e| js_error(format!("{method}: {e}")))?;
                let (tx, rx) = oneshot::channel();
                i.waiting.insert(id, tx);
                rx
            };
            pump(&inner);
            let result = rx
                .await
                .map_err(|_| js_error(format!("{method}: the session ended")))?
                .map_err(|e| js_error(format!("{method} failed: {e}")))?;
            js_sys::JSON::parse(&result).map_err(|e| {
                js_error(format!(
                    "{method}: the result is not JSON: {}",
                    describe_js(&e)
                ))
            })
        })
    }

    /// Ends the session (over HTTP in the handshake era: `DELETE`); resolves when done.
    pub fn close(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let rx = {
                let mut i = inner.borrow_mut();
                let now = now();
                i.session.close(now);
                if let Carrier::Http { closing, .. } = &mut i.carrier {
                    *closing = true;
                }
                let (tx, rx) = oneshot::channel();
                i.on_closed.push(tx);
                rx
            };
            pump(&inner);
            let _ = rx.await;
            Ok(JsValue::UNDEFINED)
        })
    }
}

// ------------------------------------------------------------------ the server

/// One client's connection to the server in the page: its server session.
struct ServerConn {
    session: Session,
    served: Rc<Cell<u32>>,
}

impl ServerConn {
    /// Hands one message to the server session, answers its requests, and returns what it
    /// sends back.
    fn handle(&mut self, now: Instant, message: &[u8]) -> Vec<Vec<u8>> {
        self.session.handle_message(now, message);
        while let Some(e) = self.session.poll_event() {
            if let Event::Request(req) = e {
                self.served.set(self.served.get().saturating_add(1));
                let _ = match serve(&req.method, req.params.as_deref()) {
                    Ok(result) => self.session.respond(&req.id, result),
                    Err(e) => self.session.respond_error(&req.id, e),
                };
            }
        }
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while self.session.poll_transmit(&mut buf).is_some() {
            out.push(std::mem::take(&mut buf));
        }
        out
    }
}

/// The application of the in-page server: `tools/list` and the `echo` tool.
fn serve(method: &str, params: Option<&RawValue>) -> Result<Box<RawValue>, Error> {
    match method {
        "tools/list" => raw(
            r#"{"tools":[{"name":"echo","description":"Echoes its text back, from a server in the page","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}"#,
        )
        .map_err(Error::internal),
        "tools/call" => {
            #[derive(serde::Deserialize)]
            struct Call {
                name: String,
                arguments: Option<Args>,
            }
            #[derive(serde::Deserialize)]
            struct Args {
                text: String,
            }
            let call: Call = serde_json::from_str(params.map_or("{}", RawValue::get))
                .map_err(|e| Error::invalid_params(format!("{e}")))?;
            match (call.name.as_str(), call.arguments) {
                ("echo", Some(a)) => {
                    let body = serde_json::json!({"content": [{"type": "text", "text": a.text}]});
                    mcp_proto::jsonrpc::to_raw(&body)
                }
                (name, _) => Err(Error::invalid_params(format!(
                    "no such tool, or no text: {name}"
                ))),
            }
        }
        other => Err(Error::method_not_found(other)),
    }
}

/// An MCP server in the page with one tool, `echo`; walk it with
/// [`McpClient::connect_in_page`] (each client gets a server session of its own).
#[wasm_bindgen]
pub struct McpServer {
    config: Config,
    served: Rc<Cell<u32>>,
}

#[wasm_bindgen]
impl McpServer {
    /// A server of both eras with the `echo` tool.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Result<McpServer, JsValue> {
        let caps = raw(r#"{"tools":{}}"#).map_err(js_error)?;
        let config = Config::new("mcp-browser-server", env!("CARGO_PKG_VERSION"))
            .versions(&ProtocolVersion::ALL)
            .capabilities(caps)
            .framing(Framing::Raw);
        Ok(McpServer {
            config,
            served: Rc::new(Cell::new(0)),
        })
    }

    /// How many requests its application answered.
    #[wasm_bindgen(getter)]
    pub fn served(&self) -> u32 {
        self.served.get()
    }
}
