//! The session commands the endpoint tests use, each through [`Endpoint::with_session`]
//! (the endpoint itself only routes), with a gone session and a refused command both `Err`.

use mcp_proto::http::{Endpoint, SessionId};
use mcp_proto::session::RequestOptions;
use mcp_proto::{Error, Instant, RequestId};
use serde_json::value::RawValue;

/// Session commands on an endpoint's session `sid` (each test file uses some of them).
#[allow(dead_code)]
pub trait EndpointExt {
    fn respond(
        &mut self,
        now: Instant,
        sid: SessionId,
        id: &RequestId,
        r: Box<RawValue>,
    ) -> Result<(), Error>;
    fn respond_error(
        &mut self,
        now: Instant,
        sid: SessionId,
        id: &RequestId,
        e: Error,
    ) -> Result<(), Error>;
    fn notify(
        &mut self,
        now: Instant,
        sid: SessionId,
        method: &str,
        p: Option<Box<RawValue>>,
    ) -> Result<(), Error>;
    fn notify_related(
        &mut self,
        now: Instant,
        sid: SessionId,
        method: &str,
        p: Option<Box<RawValue>>,
        related: RequestId,
    ) -> Result<(), Error>;
    fn report_progress(
        &mut self,
        now: Instant,
        sid: SessionId,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), Error>;
    fn send_request(
        &mut self,
        now: Instant,
        sid: SessionId,
        method: &str,
        p: Option<Box<RawValue>>,
        opts: RequestOptions,
    ) -> Result<RequestId, Error>;
    fn cancel(
        &mut self,
        now: Instant,
        sid: SessionId,
        id: &RequestId,
        reason: Option<&str>,
    ) -> Result<(), Error>;
    fn close_session(&mut self, now: Instant, sid: SessionId) -> Result<(), Error>;
}

impl EndpointExt for Endpoint {
    fn respond(
        &mut self,
        now: Instant,
        sid: SessionId,
        id: &RequestId,
        r: Box<RawValue>,
    ) -> Result<(), Error> {
        self.with_session(now, sid, |s| s.respond(id, r))?
    }
    fn respond_error(
        &mut self,
        now: Instant,
        sid: SessionId,
        id: &RequestId,
        e: Error,
    ) -> Result<(), Error> {
        self.with_session(now, sid, |s| s.respond_error(id, e))?
    }
    fn notify(
        &mut self,
        now: Instant,
        sid: SessionId,
        method: &str,
        p: Option<Box<RawValue>>,
    ) -> Result<(), Error> {
        self.with_session(now, sid, |s| s.notify(method, p))?
    }
    fn notify_related(
        &mut self,
        now: Instant,
        sid: SessionId,
        method: &str,
        p: Option<Box<RawValue>>,
        related: RequestId,
    ) -> Result<(), Error> {
        self.with_session(now, sid, |s| s.notify_related(method, p, Some(related)))?
    }
    fn report_progress(
        &mut self,
        now: Instant,
        sid: SessionId,
        id: &RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), Error> {
        self.with_session(now, sid, |s| {
            s.report_progress(id, progress, total, message)
        })?
    }
    fn send_request(
        &mut self,
        now: Instant,
        sid: SessionId,
        method: &str,
        p: Option<Box<RawValue>>,
        opts: RequestOptions,
    ) -> Result<RequestId, Error> {
        self.with_session(now, sid, |s| s.send_request(now, method, p, opts))?
    }
    fn cancel(
        &mut self,
        now: Instant,
        sid: SessionId,
        id: &RequestId,
        reason: Option<&str>,
    ) -> Result<(), Error> {
        self.with_session(now, sid, |s| s.cancel(now, id, reason))?
    }
    fn close_session(&mut self, now: Instant, sid: SessionId) -> Result<(), Error> {
        self.with_session(now, sid, |s| s.close(now))
    }
}
