//! Telemetry: `tracing` spans and events, `metrics` counters (feature `metrics`), and an event
//! stream applications can subscribe to. Nothing is computed when nobody listens.
//!
//! Spans: `mcp.request` per request with `method`, `direction`, `id`, and on completion
//! `outcome` and `duration_ms`. Events: connection opened/closed, notifications sent/received.
//! Metrics: `mcp_request_total{direction,method,status}`,
//! `mcp_notification_total{direction,method}`, `mcp_request_duration_ms{direction,method}`.

use std::borrow::Cow;
use std::sync::Arc;

use crate::notifications::Notifications;
use mcp_proto::{Duration, Error, ErrorKind, RequestId};

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Received from the peer.
    Inbound,
    /// Sent to the peer.
    Outbound,
}

impl Direction {
    /// `"inbound"` or `"outbound"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Inbound => "inbound",
            Direction::Outbound => "outbound",
        }
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// A result.
    Ok,
    /// An error response of this kind.
    Error(ErrorKind),
    /// Cancelled (by either side).
    Cancelled,
    /// Timed out.
    TimedOut,
    /// The connection closed first.
    Closed,
}

impl Outcome {
    /// A short label (`ok`, `error`, `cancelled`, `timeout`, `closed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Error(_) => "error",
            Outcome::Cancelled => "cancelled",
            Outcome::TimedOut => "timeout",
            Outcome::Closed => "closed",
        }
    }

    pub(crate) fn of<T>(r: &Result<T, Error>) -> Outcome {
        match r {
            Ok(_) => Outcome::Ok,
            Err(e) => match e.kind() {
                ErrorKind::RequestCancelled => Outcome::Cancelled,
                ErrorKind::Timeout => Outcome::TimedOut,
                ErrorKind::TransportClosed => Outcome::Closed,
                k => Outcome::Error(k),
            },
        }
    }
}

/// Something that happened on a connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TelemetryEvent {
    /// A connection opened.
    ConnectionOpened {
        /// Connection number.
        connection: u64,
    },
    /// A connection closed.
    ConnectionClosed {
        /// Connection number.
        connection: u64,
        /// Why, if not gracefully.
        error: Option<Error>,
    },
    /// A request arrived from the peer.
    RequestReceived {
        /// Connection number.
        connection: u64,
        /// Request id.
        id: RequestId,
        /// Method.
        method: String,
    },
    /// A request (either direction) completed.
    RequestCompleted {
        /// Connection number.
        connection: u64,
        /// Direction.
        direction: Direction,
        /// Request id.
        id: RequestId,
        /// Method.
        method: String,
        /// Outcome.
        outcome: Outcome,
        /// How long it took.
        duration: Duration,
    },
    /// A notification went out or came in.
    Notification {
        /// Connection number.
        connection: u64,
        /// Direction.
        direction: Direction,
        /// Method.
        method: String,
    },
}

/// A telemetry observer.
pub type Observer = Arc<dyn Fn(&TelemetryEvent) + Send + Sync>;

/// The observers of a server or client.
#[derive(Clone, Default)]
pub struct Telemetry {
    observers: Vec<Observer>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("observers", &self.observers.len())
            .finish()
    }
}

impl Telemetry {
    /// Adds an observer callback.
    pub fn observe(&mut self, f: impl Fn(&TelemetryEvent) + Send + Sync + 'static) {
        self.observers.push(Arc::new(f));
    }

    /// Adds an observer that forwards every event into a stream: bounded, the oldest dropped
    /// and counted when it is not read (see [`Notifications`]).
    pub fn subscribe(&mut self) -> Notifications<TelemetryEvent> {
        let (tx, rx) = crate::notifications::channel(crate::notifications::DEFAULT_CAPACITY);
        self.observe(move |e| {
            tx.send(e.clone());
        });
        rx
    }

    /// Whether anyone listens (besides `tracing` and `metrics`, which are always fed).
    pub fn is_observed(&self) -> bool {
        !self.observers.is_empty()
    }

    pub(crate) fn emit(&self, event: impl FnOnce() -> TelemetryEvent) {
        if self.observers.is_empty() {
            return;
        }
        let e = event();
        for o in &self.observers {
            o(&e);
        }
    }

    // `&Cow`: a metrics label clones it, which is free for a static name.
    #[allow(clippy::ptr_arg)]
    pub(crate) fn request_completed(
        &self,
        connection: u64,
        direction: Direction,
        id: &RequestId,
        method: &Cow<'static, str>,
        outcome: Outcome,
        duration: Duration,
    ) {
        tracing::debug!(
            target: "mcp",
            connection,
            direction = direction.as_str(),
            %id,
            method = method.as_ref(),
            outcome = outcome.as_str(),
            duration_ms = duration.as_micros() as f64 / 1000.0,
            "request completed"
        );
        #[cfg(feature = "metrics")]
        {
            // A known method is a static name: no allocation for its label.
            metrics::counter!("mcp_request_total", "direction" => direction.as_str(), "method" => method.clone(), "status" => outcome.as_str()).increment(1);
            metrics::histogram!("mcp_request_duration_ms", "direction" => direction.as_str(), "method" => method.clone())
                .record(duration.as_micros() as f64 / 1000.0);
        }
        self.emit(|| TelemetryEvent::RequestCompleted {
            connection,
            direction,
            id: id.clone(),
            method: method.to_string(),
            outcome,
            duration,
        });
    }

    #[allow(clippy::ptr_arg)]
    pub(crate) fn notification(
        &self,
        connection: u64,
        direction: Direction,
        method: &Cow<'static, str>,
    ) {
        tracing::trace!(target: "mcp", connection, direction = direction.as_str(), method = method.as_ref(), "notification");
        #[cfg(feature = "metrics")]
        metrics::counter!("mcp_notification_total", "direction" => direction.as_str(), "method" => method.clone())
            .increment(1);
        self.emit(|| TelemetryEvent::Notification {
            connection,
            direction,
            method: method.to_string(),
        });
    }
}
