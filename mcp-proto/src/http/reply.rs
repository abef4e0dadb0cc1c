//! What an [`Endpoint`](super::Endpoint) answers: the body of a reply, and the handle of a
//! streamed body the driver pulls.

use alloc::vec::Vec;
use core::fmt;

/// The handle of a reply body that is produced over time: an SSE stream, or a JSON body that
/// waits for the application's responses. Pull it with
/// [`Endpoint::poll_stream`](super::Endpoint::poll_stream).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub(crate) u64);

impl StreamId {
    /// The handle's number (unique for the endpoint's life).
    pub const fn as_u64(self) -> u64 {
        self.0
    }
}

impl fmt::Debug for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StreamId({})", self.0)
    }
}

/// The body of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Body {
    /// No body (202, 204, 405 …).
    Empty,
    /// The complete body: JSON, a JSON-RPC error, or an SSE stream that is already complete.
    Full(Vec<u8>),
    /// A body to pull with [`Endpoint::poll_stream`](super::Endpoint::poll_stream) until it
    /// reports [`StreamPoll::Closed`]. With `Content-Type: text/event-stream` it yields
    /// pre-encoded SSE bytes; with `application/json` it yields the JSON body once it is ready.
    Stream(StreamId),
}

impl Body {
    /// The stream handle, for [`Body::Stream`].
    pub fn stream(&self) -> Option<StreamId> {
        match self {
            Body::Stream(id) => Some(*id),
            _ => None,
        }
    }

    /// The bytes, for [`Body::Full`] (empty for [`Body::Empty`], `None` for a stream).
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Body::Empty => Some(&[]),
            Body::Full(b) => Some(b),
            Body::Stream(_) => None,
        }
    }
}

/// What [`Endpoint::poll_stream`](super::Endpoint::poll_stream) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamPoll {
    /// This many bytes were appended to the buffer; write them out.
    Data(usize),
    /// Nothing yet; the stream shows up in
    /// [`Endpoint::poll_stream_ready`](super::Endpoint::poll_stream_ready) when there is.
    Pending,
    /// The body is complete (or the session ended): finish the response. The handle is gone.
    Closed,
}
