//! hyper's runtime traits on top of this crate's runtime-neutral pieces: [`FuturesIo`] makes any
//! `futures-io` byte stream a hyper connection, [`RuntimeExecutor`] spawns hyper's background
//! tasks on a [`Runtime`], and [`RuntimeTimer`] gives hyper its timeouts from a [`Runtime`].
//!
//! Drivers whose runtime has its own hyper adapters (tokio through `hyper-util`) may use those;
//! the `futures-io` family (async-std, smol) uses these.

use std::future::Future;
use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant as StdInstant};

use futures_io::{AsyncRead, AsyncWrite};
use hyper::rt::{Executor, ReadBufCursor, Sleep, Timer};

use crate::runtime::{BoxFuture, Runtime};

/// A connection as hyper sees it, boxed: what [`Driver::hyper_io`](crate::driver::Driver::hyper_io)
/// returns.
pub type BoxedIo = Box<dyn HyperIo>;

/// hyper's IO traits, together (implemented for every type that has both).
pub trait HyperIo: hyper::rt::Read + hyper::rt::Write + Send + Unpin + 'static {}

impl<T: hyper::rt::Read + hyper::rt::Write + Send + Unpin + 'static> HyperIo for T {}

/// A `futures-io` stream seen through hyper's IO traits.
#[derive(Debug)]
pub struct FuturesIo<T> {
    inner: T,
}

impl<T> FuturesIo<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        FuturesIo { inner }
    }

    /// The wrapped stream.
    pub fn into_inner(self) -> T {
        self.inner
    }

    /// The wrapped stream, borrowed.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }
}

/// The most one read takes.
const READ_CHUNK: usize = 16 * 1024;

impl<T: AsyncRead + Unpin> hyper::rt::Read for FuturesIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: the slice is only written (zeroed) before being viewed as initialised bytes,
        // and `advance` is called with at most the number of bytes the reader filled.
        let n = unsafe {
            let dst: &mut [MaybeUninit<u8>] = buf.as_mut();
            // A `futures-io` reader needs initialised bytes: zero no more than one read takes
            // (hyper's buffer can be far larger than what arrives, and zeroing all of it on
            // every read costs more than the read).
            let len = dst.len().min(READ_CHUNK);
            let dst = &mut dst[..len];
            for b in dst.iter_mut() {
                b.write(0);
            }
            let dst = &mut *(dst as *mut [MaybeUninit<u8>] as *mut [u8]);
            match Pin::new(&mut self.inner).poll_read(cx, dst) {
                Poll::Ready(Ok(n)) => n.min(dst.len()),
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        };
        // SAFETY: `n` bytes were filled by the reader (see above).
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> hyper::rt::Write for FuturesIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// Spawns hyper's background futures (HTTP/2 streams, client connections) on a [`Runtime`].
#[derive(Clone, Debug)]
pub struct RuntimeExecutor<R>(pub R);

impl<R, F> Executor<F> for RuntimeExecutor<R>
where
    R: Runtime,
    F: Future + Send + 'static,
{
    fn execute(&self, fut: F) {
        self.0.spawn(Box::pin(async move {
            fut.await;
        }));
    }
}

/// hyper's timer (header-read timeouts, keep-alive) from a [`Runtime`].
#[derive(Clone, Debug)]
pub struct RuntimeTimer<R> {
    rt: R,
}

impl<R: Runtime> RuntimeTimer<R> {
    /// A timer sleeping on `rt`.
    pub fn new(rt: R) -> Self {
        RuntimeTimer { rt }
    }
}

/// hyper wants `Sync` sleeps; the future is only ever reached through `&mut` (`get_mut`
/// takes no lock), so the mutex only serves to make the type `Sync`.
struct RtSleep(std::sync::Mutex<BoxFuture<()>>);

impl Future for RtSleep {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.0.get_mut() {
            Ok(f) => f.as_mut().poll(cx),
            Err(poisoned) => poisoned.into_inner().as_mut().poll(cx),
        }
    }
}

impl Sleep for RtSleep {}

impl<R: Runtime> Timer for RuntimeTimer<R> {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        let at = self.rt.now() + mcp_proto::Duration::from_micros(micros(duration));
        Box::pin(RtSleep(std::sync::Mutex::new(self.rt.sleep_until(at))))
    }

    fn sleep_until(&self, deadline: StdInstant) -> Pin<Box<dyn Sleep>> {
        let left = deadline.saturating_duration_since(StdInstant::now());
        self.sleep(left)
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
