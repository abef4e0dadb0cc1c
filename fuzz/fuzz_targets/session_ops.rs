//! A client and a server `Session` driven by an arbitrary list of operations: application
//! commands on either side, time, delivery (whole, split, dropped), injected bytes and
//! hand-made messages addressed at the ids in play, and every way of closing. The harness
//! operations map onto `mcp_proto::testing::Op`, and the core's checked pair checks the
//! session invariants after every operation (see `mcp_proto::testing::Pair`).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_fuzz::harness::{CLIENT, METHODS, Params, Pick, SERVER, config, pair};
use mcp_proto::Duration;
use mcp_proto::RequestId;
use mcp_proto::session::RequestOptions;
use mcp_proto::testing::{Op as PairOp, Pair};

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

fn leaf_json(h: &Pair, side: usize, leaf: &Leaf) -> String {
    let p = |params: &Params| {
        params
            .json()
            .map(|p| format!(",\"params\":{p}"))
            .unwrap_or_default()
    };
    match leaf {
        Leaf::Response { pick, result } => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{}}}",
            id_json(&h.pick_outbound(side, &pick.plain())),
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
                id_json(&h.pick_outbound(side, &pick.plain()))
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
                id_json(&h.pick_outbound(side, &pick.plain()))
            )
        }
        Leaf::Cancel { pick, reason } => format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{}{}}}}}",
            id_json(&h.pick_inbound(side, &pick.plain())),
            if *reason {
                ",\"reason\":\"because\""
            } else {
                ""
            }
        ),
        Leaf::Request { id, method, params } => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":{}{}}}",
            id_json(&h.pick_inbound(side, &id.plain())),
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
            id_json(&h.pick_outbound(side, &pick.plain())),
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

fn method(i: u8) -> String {
    METHODS[usize::from(i) % METHODS.len()].to_owned()
}

/// The plain operation for `op`, given the pair's state (templates are rendered into bytes).
fn plain(h: &Pair, op: &Op) -> PairOp {
    match op {
        Op::Initialize(side) => PairOp::Initialize(side.idx()),
        Op::Request {
            side,
            method: m,
            params,
            timeout_ms,
            reset,
            max_total_ms,
            progress,
            related,
        } => PairOp::Request {
            side: side.idx(),
            method: method(*m),
            params: params.json(),
            opts: RequestOptions {
                timeout: timeout_ms.map(|t| Duration::from_micros(u64::from(t))),
                reset_timeout_on_progress: *reset,
                max_total_timeout: max_total_ms.map(|t| Duration::from_micros(u64::from(t) * 7)),
                progress: *progress,
                related_to: None,
            },
            related: related.as_ref().map(Pick::plain),
        },
        Op::CustomRequest { side, method } => PairOp::Request {
            side: side.idx(),
            method: method.clone(),
            params: None,
            opts: RequestOptions::default(),
            related: None,
        },
        Op::Notify {
            side,
            method: m,
            params,
            related,
        } => PairOp::Notify {
            side: side.idx(),
            method: method(*m),
            params: params.json(),
            related: related.as_ref().map(Pick::plain),
        },
        Op::Respond {
            side,
            pick,
            payload,
        } => PairOp::Respond {
            side: side.idx(),
            pick: pick.plain(),
            payload: payload.as_ref().and_then(Params::json),
        },
        Op::RespondNotObject { side, pick } => PairOp::RespondNotObject {
            side: side.idx(),
            pick: pick.plain(),
        },
        Op::RespondError {
            side,
            pick,
            code,
            message,
            data,
        } => PairOp::RespondError {
            side: side.idx(),
            pick: pick.plain(),
            code: i64::from(*code),
            message: message.clone(),
            data: data.then(|| r#"{"detail":[1,"two"]}"#.to_owned()),
        },
        Op::Progress {
            side,
            pick,
            progress,
            total,
            message,
        } => PairOp::Progress {
            side: side.idx(),
            pick: pick.plain(),
            progress: *progress,
            total: *total,
            message: message.clone(),
        },
        Op::Cancel { side, pick, reason } => PairOp::Cancel {
            side: side.idx(),
            pick: pick.plain(),
            reason: reason.clone(),
        },
        Op::Advance { micros, huge } => PairOp::Advance(Duration::from_micros(if *huge {
            u64::from(*micros) << 24
        } else {
            u64::from(*micros)
        })),
        Op::Deliver { from, count, split } => PairOp::Deliver {
            from: from.idx(),
            count: usize::from(*count % 8) + 1,
            split: split.map(usize::from),
        },
        Op::DeliverAll => PairOp::DeliverAll,
        Op::Drop { from, count } => PairOp::Drop {
            from: from.idx(),
            count: usize::from(count % 4) + 1,
        },
        Op::Inject {
            side,
            bytes,
            as_message,
        } => PairOp::Inject {
            side: side.idx(),
            bytes: bytes.clone(),
            as_message: *as_message,
        },
        Op::Template { side, t } => {
            let side = side.idx();
            let mut text = match t {
                Template::One(leaf) => leaf_json(h, side, leaf),
                Template::Batch(leaves) => format!(
                    "[{}]",
                    leaves
                        .iter()
                        .take(16)
                        .map(|l| leaf_json(h, side, l))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            };
            text.push('\n');
            PairOp::Inject {
                side,
                bytes: text.into_bytes(),
                as_message: false,
            }
        }
        Op::Close(side) => PairOp::Close(side.idx()),
        Op::InputClosed(side) => PairOp::InputClosed(side.idx()),
        Op::Closed { side, error } => PairOp::Closed {
            side: side.idx(),
            error: *error,
        },
    }
}

fuzz_target!(|input: Input| {
    let mut h = pair(
        make_config(true, &input.client),
        make_config(false, &input.server),
    );
    h.drain();
    for op in input.ops.iter().take(256) {
        let op = plain(&h, op);
        h.apply(&op);
        h.drain();
    }
});
