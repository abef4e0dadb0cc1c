//! What goes out: the outgoing queue (batches of answers included) and the writing of each
//! message, framed, by [`Session::poll_transmit`].

use alloc::borrow::{Cow, ToOwned};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;
use serde_json::value::RawValue;

use super::Session;
use super::config::Framing;
use crate::error::Error;
use crate::id::{ProgressToken, RequestId};
use crate::jsonrpc;
/// What [`Session::poll_transmit`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The kind of message.
    pub kind: MessageKind,
    /// The inbound request this message belongs to (its response, its progress, or a request
    /// made on its behalf), for transports that route by request (HTTP streams).
    pub related: Option<RequestId>,
    /// The request's own id (a request), or the request it cancels
    /// (`notifications/cancelled`).
    pub id: Option<RequestId>,
    /// The method of a request or notification when the session knows it statically: every
    /// method the session sends on its own (`initialize`, `notifications/initialized`,
    /// `notifications/cancelled`, `notifications/progress`) and every method of the spec;
    /// `None` for responses and for other methods.
    pub method: Option<&'static str>,
    /// Bytes appended to the buffer.
    pub len: usize,
}

/// Kind of an outgoing message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageKind {
    /// A request.
    Request,
    /// A notification.
    Notification,
    /// A response or error response.
    Response,
    /// A batch of responses.
    Batch,
}

#[derive(Debug, Default)]
pub(super) struct Batch {
    pub(super) remaining: usize,
    pub(super) sealed: bool,
    pub(super) items: Vec<Outgoing>,
}

#[derive(Debug)]
pub(super) enum Outgoing {
    Request {
        id: i64,
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    },
    Notification {
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
        related: Option<RequestId>,
    },
    Response {
        id: RequestId,
        result: Box<RawValue>,
    },
    Error {
        id: Option<RequestId>,
        code: i64,
        message: Cow<'static, str>,
        data: Option<Box<RawValue>>,
    },
    Cancelled {
        id: RequestId,
        reason: Option<Cow<'static, str>>,
    },
    Progress {
        token: ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        meta: Option<Box<RawValue>>,
        related: RequestId,
    },
    Batch(Vec<Outgoing>),
}

impl Session {
    // ----------------------------------------------------------------- outputs

    /// Appends the next outgoing message, framed, to `buf`.
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> Option<Transmit> {
        let o = self.out.pop_front();
        let Some(o) = o else {
            self.maybe_finish_close();
            return None;
        };
        let start = buf.len();
        if !self.listeners.is_empty() {
            self.listener_transmitted(&o);
        }
        let (id, method) = identify(&o);
        let (kind, related) = write_outgoing(buf, o);
        if self.config.framing == Framing::Ndjson {
            // Raw JSON handed in by the application (params, results, info) may be
            // pretty-printed. In valid JSON a raw CR or LF can only be whitespace between
            // tokens, so turning it into a space keeps the message identical and on one line.
            if let Some(written) = buf.get_mut(start..) {
                let mut at = 0;
                while let Some(i) =
                    memchr::memchr2(b'\n', b'\r', written.get(at..).unwrap_or_default())
                {
                    if let Some(b) = written.get_mut(at + i) {
                        *b = b' ';
                    }
                    at += i + 1;
                }
            }
            buf.push(b'\n');
        }
        Some(Transmit {
            kind,
            related,
            id,
            method,
            len: buf.len() - start,
        })
    }

    /// Whether there is something to transmit.
    pub fn has_transmit(&self) -> bool {
        !self.out.is_empty()
    }

    // ------------------------------------------------------ the outgoing queue

    pub(super) fn answer(&mut self, batch: Option<u64>, o: Outgoing) {
        if let Some(b) = batch
            && let Some(entry) = self.batches.get_mut(&b)
        {
            entry.items.push(o);
            self.flush_batch_if_done(b);
            return;
        }
        self.out.push_back(o);
    }

    /// Answers a request that was handed to the application (counts down its batch).
    pub(super) fn answer_inbound(&mut self, batch: Option<u64>, o: Outgoing) {
        if let Some(b) = batch
            && let Some(entry) = self.batches.get_mut(&b)
        {
            entry.remaining = entry.remaining.saturating_sub(1);
        }
        self.answer(batch, o);
    }

    pub(super) fn batch_request_done(&mut self, batch: Option<u64>) {
        if let Some(b) = batch {
            if let Some(entry) = self.batches.get_mut(&b) {
                entry.remaining = entry.remaining.saturating_sub(1);
            }
            self.flush_batch_if_done(b);
        }
    }

    pub(super) fn flush_batch_if_done(&mut self, b: u64) {
        let done = self
            .batches
            .get(&b)
            .is_some_and(|e| e.sealed && e.remaining == 0);
        if done
            && let Some(entry) = self.batches.remove(&b)
            && !entry.items.is_empty()
        {
            self.out.push_back(Outgoing::Batch(entry.items));
        }
    }

    pub(super) fn queue_error(&mut self, batch: Option<u64>, id: Option<RequestId>, e: &Error) {
        let o = Outgoing::Error {
            id,
            code: e.code(),
            message: Cow::Owned(String::from(e.message())),
            data: e.data().map(ToOwned::to_owned),
        };
        self.answer(batch, o);
    }
}

/// Writes `f` as a JSON number (`f` is finite).
fn write_f64(out: &mut Vec<u8>, f: f64) {
    struct W<'a>(&'a mut Vec<u8>);
    impl core::fmt::Write for W<'_> {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0.extend_from_slice(s.as_bytes());
            Ok(())
        }
    }
    let _ = write!(W(out), "{f}");
}

/// A message's own (or cancelled) request id and its method when static.
fn identify(o: &Outgoing) -> (Option<RequestId>, Option<&'static str>) {
    let fixed = |m: &Cow<'static, str>| match m {
        Cow::Borrowed(m) => Some(*m),
        Cow::Owned(_) => None,
    };
    match o {
        Outgoing::Request { id, method, .. } => (Some(RequestId::Number(*id)), fixed(method)),
        Outgoing::Notification { method, .. } => (None, fixed(method)),
        Outgoing::Cancelled { id, .. } => (Some(id.clone()), Some("notifications/cancelled")),
        Outgoing::Progress { .. } => (None, Some("notifications/progress")),
        Outgoing::Response { .. } | Outgoing::Error { .. } | Outgoing::Batch(_) => (None, None),
    }
}

fn write_outgoing(buf: &mut Vec<u8>, o: Outgoing) -> (MessageKind, Option<RequestId>) {
    match o {
        Outgoing::Request {
            id,
            method,
            params,
            related,
        } => {
            jsonrpc::write_request(buf, &RequestId::Number(id), &method, params.as_deref());
            (MessageKind::Request, related)
        }
        Outgoing::Notification {
            method,
            params,
            related,
        } => {
            jsonrpc::write_notification(buf, &method, params.as_deref());
            (MessageKind::Notification, related)
        }
        Outgoing::Response { id, result } => {
            jsonrpc::write_response(buf, &id, &result);
            (MessageKind::Response, Some(id))
        }
        Outgoing::Error {
            id,
            code,
            message,
            data,
        } => {
            jsonrpc::write_error(buf, id.as_ref(), code, &message, data.as_deref());
            (MessageKind::Response, id)
        }
        Outgoing::Cancelled { id, reason } => {
            buf.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":");
            id.write_json(buf);
            if let Some(r) = reason {
                buf.extend_from_slice(b",\"reason\":");
                jsonrpc::write_json_str(buf, &r);
            }
            buf.extend_from_slice(b"}}");
            (MessageKind::Notification, None)
        }
        Outgoing::Progress {
            token,
            progress,
            total,
            message,
            meta,
            related,
        } => {
            buf.extend_from_slice(
                b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{",
            );
            if let Some(m) = meta {
                buf.extend_from_slice(b"\"_meta\":");
                buf.extend_from_slice(m.get().as_bytes());
                buf.push(b',');
            }
            buf.extend_from_slice(b"\"progressToken\":");
            token.write_json(buf);
            buf.extend_from_slice(b",\"progress\":");
            write_f64(buf, progress);
            if let Some(t) = total {
                buf.extend_from_slice(b",\"total\":");
                write_f64(buf, t);
            }
            if let Some(m) = message {
                buf.extend_from_slice(b",\"message\":");
                jsonrpc::write_json_str(buf, &m);
            }
            buf.extend_from_slice(b"}}");
            (MessageKind::Notification, Some(related))
        }
        Outgoing::Batch(items) => {
            buf.push(b'[');
            for (i, item) in items.into_iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                let _ = write_outgoing(buf, item);
            }
            buf.push(b']');
            (MessageKind::Batch, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_formatting_is_json() {
        for f in [
            0.0,
            1.0,
            0.5,
            -3.25,
            1e21,
            123456789.0,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            let mut out = Vec::new();
            write_f64(&mut out, f);
            let back: f64 = serde_json::from_slice(&out).unwrap();
            assert_eq!(back, f);
        }
    }
}
