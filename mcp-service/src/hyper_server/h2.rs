//! HTTP/2 beside HTTP/1.1 on one listener (feature `http2`): prior-knowledge h2c told from
//! HTTP/1.1 by the connection's first bytes, and HTTP/2 chosen by ALPN over TLS.

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_util::future::{Either, select};

use super::{ConnService, CountingIo, HttpServerOptions, HyperService};
use crate::driver::WriteStall;
use crate::hyper_io::{RuntimeExecutor, RuntimeTimer};
use crate::runtime::Runtime;

/// What an HTTP/2 client sends first (RFC 9113, 3.4).
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Reads the connection's first bytes (within the header timeout) and serves it as HTTP/2
/// when they are the preface, else as HTTP/1.1; the bytes read are replayed either way.
pub(super) async fn serve_detected<R, I>(
    rt: R,
    service: HyperService,
    mut io: I,
    addr: std::net::SocketAddr,
    options: &HttpServerOptions,
) -> Result<(), hyper::Error>
where
    R: Runtime,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let first = match peek(&rt, &mut io, options.header_read_timeout).await {
        Ok(first) => first,
        Err(e) => {
            tracing::debug!(target: "mcp", %addr, error = %e, "HTTP connection closed before its first request");
            return Ok(());
        }
    };
    let h2 = first == PREFACE;
    let io = Rewind {
        first,
        at: 0,
        inner: io,
    };
    if h2 {
        serve_h2(rt, service, io, addr, options).await
    } else {
        super::serve_http1(rt, service, io, addr, options).await
    }
}

/// Serves one HTTP/2 connection: streams on tasks of `rt`, hyper's keep-alive pings and
/// timers on `rt`, the write timeout as on HTTP/1.1.
pub(super) async fn serve_h2<R, I>(
    rt: R,
    service: HyperService,
    io: I,
    addr: std::net::SocketAddr,
    options: &HttpServerOptions,
) -> Result<(), hyper::Error>
where
    R: Runtime,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = ConnService {
        inner: service,
        addr,
    };
    let stall = options.write_timeout.map(|timeout| {
        WriteStall::new(
            &rt,
            timeout,
            "the HTTP/2 client read nothing of the replies for the write timeout",
        )
    });
    let io = CountingIo {
        inner: io,
        read: Arc::new(AtomicU64::new(0)),
        stall,
    };
    let mut builder = hyper::server::conn::http2::Builder::new(RuntimeExecutor(rt.clone()));
    builder.timer(RuntimeTimer::new(rt));
    builder.serve_connection(io, service).await
}

/// Reads until the bytes read differ from the preface, or are all of it, or the peer closes
/// (the header timeout bounds the wait; `TimedOut` past it).
async fn peek<R, I>(rt: &R, io: &mut I, timeout: Option<Duration>) -> io::Result<Vec<u8>>
where
    R: Runtime,
    I: hyper::rt::Read + Unpin,
{
    let mut first = Vec::with_capacity(PREFACE.len());
    let read = futures_util::future::poll_fn(|cx| {
        loop {
            if first.len() == PREFACE.len() || !PREFACE.starts_with(&first) {
                return Poll::Ready(Ok::<_, io::Error>(()));
            }
            let mut chunk = [MaybeUninit::<u8>::uninit(); PREFACE.len()];
            let want = PREFACE.len() - first.len();
            let mut buf = hyper::rt::ReadBuf::uninit(&mut chunk[..want]);
            ready!(Pin::new(&mut *io).poll_read(cx, buf.unfilled()))?;
            let got = buf.filled();
            if got.is_empty() {
                return Poll::Ready(Ok(()));
            }
            first.extend_from_slice(got);
        }
    });
    match timeout {
        None => read.await?,
        Some(t) => match select(read, crate::driver::sleep_for(rt, t)).await {
            Either::Left((r, _)) => r?,
            Either::Right(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "no request within the header timeout",
                ));
            }
        },
    }
    Ok(first)
}

/// A connection whose first bytes were read already: they are read again first.
struct Rewind<I> {
    first: Vec<u8>,
    at: usize,
    inner: I,
}

impl<I: hyper::rt::Read + Unpin> hyper::rt::Read for Rewind<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if let Some(rest) = this.first.get(this.at..).filter(|r| !r.is_empty()) {
            let n = rest.len().min(buf.remaining());
            buf.put_slice(&rest[..n]);
            this.at += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<I: hyper::rt::Write + Unpin> hyper::rt::Write for Rewind<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
}
