//! The byte stream the client engine sees: a read half fed with NDJSON lines by the
//! transport's tasks, and a write half that hands each complete line to the dispatcher (and
//! waits, on close, until the transport has ended the session).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_channel::mpsc::{UnboundedReceiver, UnboundedSender};
use futures_channel::oneshot;
use futures_core::Stream;
use futures_io::{AsyncRead, AsyncWrite};

use crate::memory::ReadChunk;

/// One item for the read half: a line, or the error that ends the stream.
pub(super) type Inbound = Result<Vec<u8>, io::Error>;

/// The engine's read half: lines the transport received.
pub(super) struct InboundReader {
    pub(super) rx: UnboundedReceiver<Inbound>,
    pub(super) current: ReadChunk,
}

impl AsyncRead for InboundReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        loop {
            if let Some(n) = this.current.read_into(buf) {
                return Poll::Ready(Ok(n));
            }
            match Pin::new(&mut this.rx).poll_next(cx) {
                Poll::Ready(Some(Ok(line))) => this.current.set(line),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(None) => return Poll::Ready(Ok(0)),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

pub(super) enum Outgoing {
    Message(Bytes),
    Close(oneshot::Sender<()>),
}

/// The engine's write half: complete lines go to the dispatcher.
pub(super) struct OutboundWriter {
    pub(super) buf: Vec<u8>,
    pub(super) tx: UnboundedSender<Outgoing>,
    pub(super) closing: Option<oneshot::Receiver<()>>,
}

impl AsyncWrite for OutboundWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        this.buf.extend_from_slice(data);
        while let Some(end) = this.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = this.buf.drain(..=end).collect();
            let trimmed = line.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            if this
                .tx
                .unbounded_send(Outgoing::Message(Bytes::copy_from_slice(trimmed)))
                .is_err()
            {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the HTTP transport has ended",
                )));
            }
        }
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.closing.is_none() {
            let (tx, rx) = oneshot::channel();
            if this.tx.unbounded_send(Outgoing::Close(tx)).is_err() {
                return Poll::Ready(Ok(()));
            }
            this.closing = Some(rx);
        }
        match this.closing.as_mut().map(|rx| Pin::new(rx).poll(cx)) {
            Some(Poll::Pending) => Poll::Pending,
            _ => Poll::Ready(Ok(())),
        }
    }
}
