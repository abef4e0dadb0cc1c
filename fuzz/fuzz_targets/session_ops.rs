//! A client and a server `Session` driven by an arbitrary list of operations: application
//! commands on either side, time, delivery (whole, split, dropped), injected bytes and
//! hand-made messages addressed at the ids in play, and every way of closing. The harness
//! checks the session invariants after every operation (see `mcp_fuzz::harness`).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_fuzz::harness::{CLIENT, Harness, METHODS, Params, Pick, SERVER, config};
use mcp_proto::session::RequestOptions;
use mcp_proto::{Duration, RequestId};

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Side {
    Client,
    Server,
}

impl Side {
    fn idx(self) -> usize {
        match self {
            Side::Client => CLIENT,
            Side::Server => SERVER,
        }
    }
}

#[derive(Arbitrary, Debug)]
struct SideConfig {
    raw_framing: bool,
    versions: u8,
    max_message: Option<u16>,
    limits: u8,
    timeout_ms: Option<u32>,
    custom: bool,
    caps: u8,
}

/// A message addressed at `side` as if the peer sent it.
#[derive(Arbitrary, Debug)]
enum Leaf {
    /// A result for one of `side`'s outbound requests.
    Response {
        pick: Pick,
        result: Params,
    },
    Error {
        pick: Pick,
        code: i32,
        null_id: bool,
    },
    /// Progress on one of `side`'s outbound requests.
    Progress {
        pick: Pick,
        progress: f64,
        total: Option<f64>,
        literal: Option<u8>,
    },
    /// The peer cancels one of its requests that `side` holds.
    Cancel {
        pick: Pick,
        reason: bool,
    },
    Request {
        id: Pick,
        method: u8,
        params: Params,
    },
    Notification {
        method: u8,
        params: Params,
    },
    Initialize {
        id: i64,
        version: u8,
    },
    InitializeResult {
        pick: Pick,
        version: u8,
    },
}

#[derive(Arbitrary, Debug)]
enum Template {
    One(Leaf),
    Batch(Vec<Leaf>),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Initialize(Side),
    Request {
        side: Side,
        method: u8,
        params: Params,
        timeout_ms: Option<u32>,
        reset: bool,
        max_total_ms: Option<u32>,
        progress: bool,
        related: Option<Pick>,
    },
    CustomRequest {
        side: Side,
        method: String,
    },
    Notify {
        side: Side,
        method: u8,
        params: Params,
        related: Option<Pick>,
    },
    Respond {
        side: Side,
        pick: Pick,
        payload: Option<Params>,
    },
    RespondNotObject {
        side: Side,
        pick: Pick,
    },
    RespondError {
        side: Side,
        pick: Pick,
        code: i32,
        message: String,
        data: bool,
    },
    Progress {
        side: Side,
        pick: Pick,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    Cancel {
        side: Side,
        pick: Pick,
        reason: Option<String>,
    },
    Advance {
        micros: u32,
        huge: bool,
    },
    Deliver {
        from: Side,
        count: u8,
        split: Option<u16>,
    },
    DeliverAll,
    Drop {
        from: Side,
        count: u8,
    },
    Inject {
        side: Side,
        bytes: Vec<u8>,
        as_message: bool,
    },
    Template {
        side: Side,
        t: Template,
    },
    Close(Side),
    InputClosed(Side),
    Closed {
        side: Side,
        error: bool,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    client: SideConfig,
    server: SideConfig,
    ops: Vec<Op>,
}

fn make_config(client: bool, c: &SideConfig) -> mcp_proto::session::Config {
    config(
        client,
        c.raw_framing,
        c.versions,
        c.max_message,
        c.limits,
        c.timeout_ms,
        c.custom,
        c.caps,
    )
}

fn id_json(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap()
}

fn leaf_json(h: &Harness, side: usize, leaf: &Leaf) -> String {
    let p = |params: &Params| {
        params
            .json()
            .map(|p| format!(",\"params\":{p}"))
            .unwrap_or_default()
    };
    match leaf {
        Leaf::Response { pick, result } => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}}",
            id_json(&h.pick_outbound(side, pick)),
            result.json().unwrap_or_else(|| "{}".into())
        ),
        Leaf::Error {
            pick,
            code,
            null_id,
        } => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":{code},\"message\":\"injected\"}}}}",
            if *null_id {
                "null".into()
            } else {
                id_json(&h.pick_outbound(side, pick))
            }
        ),
        Leaf::Progress {
            pick,
            progress,
            total,
            literal,
        } => {
            let value = match literal {
                Some(l) => ["1e999", "-0", "\"3\"", "null", "1.5", "-1e308", "0.1"]
                    [usize::from(*l) % 7]
                    .to_string(),
                None if progress.is_finite() => format!("{progress:?}"),
                None => "0".into(),
            };
            let total = match total {
                Some(t) if t.is_finite() => format!(",\"total\":{t:?}"),
                _ => String::new(),
            };
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":{},\"progress\":{value}{total}}}}}",
                id_json(&h.pick_outbound(side, pick))
            )
        }
        Leaf::Cancel { pick, reason } => format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{}{}}}}}",
            id_json(&h.pick_inbound(side, pick)),
            if *reason {
                ",\"reason\":\"because\""
            } else {
                ""
            }
        ),
        Leaf::Request { id, method, params } => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":{}{}}}",
            id_json(&h.pick_inbound(side, id)),
            serde_json::to_string(METHODS[usize::from(*method) % METHODS.len()]).unwrap(),
            p(params)
        ),
        Leaf::Notification { method, params } => format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":{}{}}}",
            serde_json::to_string(METHODS[usize::from(*method) % METHODS.len()]).unwrap(),
            p(params)
        ),
        Leaf::Initialize { id, version } => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"{}\",\"capabilities\":{{\"roots\":{{}}}},\"clientInfo\":{{\"name\":\"x\",\"version\":\"1\"}}}}}}",
            [
                "2024-11-05",
                "2025-03-26",
                "2025-06-18",
                "2025-11-25",
                "2026-07-28",
                "1999-01-01"
            ][usize::from(*version) % 6]
        ),
        Leaf::InitializeResult { pick, version } => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"protocolVersion\":\"{}\",\"capabilities\":{{\"tools\":{{}}}},\"serverInfo\":{{\"name\":\"x\",\"version\":\"1\"}}}}}}",
            id_json(&h.pick_outbound(side, pick)),
            [
                "2024-11-05",
                "2025-03-26",
                "2025-06-18",
                "2025-11-25",
                "2026-07-28",
                "1999-01-01"
            ][usize::from(*version) % 6]
        ),
    }
}

fuzz_target!(|input: Input| {
    let mut h = Harness::new(
        make_config(true, &input.client),
        make_config(false, &input.server),
    );
    h.drain();
    for op in input.ops.iter().take(256) {
        match op {
            Op::Initialize(side) => h.initialize(side.idx()),
            Op::Request {
                side,
                method,
                params,
                timeout_ms,
                reset,
                max_total_ms,
                progress,
                related,
            } => {
                let side = side.idx();
                let opts = RequestOptions {
                    timeout: timeout_ms.map(|t| Duration::from_micros(u64::from(t))),
                    reset_timeout_on_progress: *reset,
                    max_total_timeout: max_total_ms
                        .map(|t| Duration::from_micros(u64::from(t) * 7)),
                    progress: *progress,
                    related_to: related.as_ref().map(|p| h.pick_inbound(side, p)),
                };
                let method = METHODS[usize::from(*method) % METHODS.len()];
                h.send_request(side, method, params.raw(), opts);
            }
            Op::CustomRequest { side, method } => {
                h.send_request(side.idx(), method, None, RequestOptions::default());
            }
            Op::Notify {
                side,
                method,
                params,
                related,
            } => {
                let side = side.idx();
                let related = related.as_ref().map(|p| h.pick_inbound(side, p));
                h.notify(
                    side,
                    METHODS[usize::from(*method) % METHODS.len()],
                    params.raw(),
                    related,
                );
            }
            Op::Respond {
                side,
                pick,
                payload,
            } => {
                let side = side.idx();
                let id = h.pick_inbound(side, pick);
                h.respond(side, &id, payload.as_ref().and_then(Params::json));
            }
            Op::RespondNotObject { side, pick } => {
                let side = side.idx();
                let id = h.pick_inbound(side, pick);
                h.respond_not_object(side, &id);
            }
            Op::RespondError {
                side,
                pick,
                code,
                message,
                data,
            } => {
                let side = side.idx();
                let id = h.pick_inbound(side, pick);
                let data = data.then(|| mcp_fuzz::harness::raw(r#"{"detail":[1,"two"]}"#));
                h.respond_error(side, &id, i64::from(*code), message, data);
            }
            Op::Progress {
                side,
                pick,
                progress,
                total,
                message,
            } => {
                let side = side.idx();
                let id = h.pick_inbound(side, pick);
                h.report_progress(side, &id, *progress, *total, message.as_deref());
            }
            Op::Cancel { side, pick, reason } => {
                let side = side.idx();
                let id = h.pick_outbound(side, pick);
                h.cancel(side, &id, reason.as_deref());
            }
            Op::Advance { micros, huge } => {
                let d = if *huge {
                    u64::from(*micros) << 24
                } else {
                    u64::from(*micros)
                };
                h.advance(Duration::from_micros(d));
            }
            Op::Deliver { from, count, split } => {
                h.deliver(
                    from.idx(),
                    usize::from(*count % 8) + 1,
                    split.map(usize::from),
                );
            }
            Op::DeliverAll => h.deliver_all(),
            Op::Drop { from, count } => {
                for _ in 0..=(count % 4) {
                    h.wire[from.idx()].pop_front();
                }
            }
            Op::Inject {
                side,
                bytes,
                as_message,
            } => {
                if *as_message {
                    h.feed_message(side.idx(), bytes);
                } else {
                    h.feed_bytes(side.idx(), bytes);
                }
            }
            Op::Template { side, t } => {
                let side = side.idx();
                let mut text = match t {
                    Template::One(leaf) => leaf_json(&h, side, leaf),
                    Template::Batch(leaves) => format!(
                        "[{}]",
                        leaves
                            .iter()
                            .take(16)
                            .map(|l| leaf_json(&h, side, l))
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                };
                text.push('\n');
                h.feed_bytes(side, text.as_bytes());
            }
            Op::Close(side) => h.close(side.idx()),
            Op::InputClosed(side) => h.input_closed(side.idx()),
            Op::Closed { side, error } => h.closed(side.idx(), *error),
        }
        h.drain();
    }
});
