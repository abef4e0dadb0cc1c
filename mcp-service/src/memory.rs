//! An in-memory byte pipe: two [`ByteStream`]s connected back to back, for an in-process
//! client and server on any runtime.
//!
//! Each direction is a bounded buffer behind a lock held only to copy bytes in or out: a
//! writer that fills it waits until the reader takes some (backpressure), a reader of an empty
//! one waits for bytes or for the writer to close (end of stream), and writing to a pipe whose
//! reader is gone fails with `BrokenPipe`. No system call and no reactor are involved, unlike a
//! socket pair.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures_io::{AsyncRead, AsyncWrite};

use crate::connection::ByteStream;

/// Two byte streams connected back to back, each direction buffering up to `capacity` bytes
/// (at least 1).
pub fn duplex(capacity: usize) -> (ByteStream, ByteStream) {
    let capacity = capacity.max(1);
    let (a_reader, b_writer) = simplex(capacity);
    let (b_reader, a_writer) = simplex(capacity);
    (
        ByteStream::new(a_reader, a_writer),
        ByteStream::new(b_reader, b_writer),
    )
}

struct Buffer {
    /// Unread bytes are `bytes[start..]`; the space before `start` is reclaimed when the
    /// buffer empties, or by moving the unread bytes down when a write needs the room.
    bytes: Vec<u8>,
    start: usize,
    capacity: usize,
    reader: Option<Waker>,
    writer: Option<Waker>,
    writer_closed: bool,
    reader_closed: bool,
}

type Shared = Arc<Mutex<Buffer>>;

fn lock(shared: &Shared) -> MutexGuard<'_, Buffer> {
    // Every critical section only moves bytes and flags: a poisoned buffer is still coherent.
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn simplex(capacity: usize) -> (PipeReader, PipeWriter) {
    let shared = Arc::new(Mutex::new(Buffer {
        bytes: Vec::new(),
        start: 0,
        capacity,
        reader: None,
        writer: None,
        writer_closed: false,
        reader_closed: false,
    }));
    (
        PipeReader {
            shared: shared.clone(),
        },
        PipeWriter { shared },
    )
}

fn register(slot: &mut Option<Waker>, cx: &Context<'_>) {
    match slot {
        Some(w) if w.will_wake(cx.waker()) => {}
        _ => *slot = Some(cx.waker().clone()),
    }
}

struct PipeReader {
    shared: Shared,
}

struct PipeWriter {
    shared: Shared,
}

impl AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut b = lock(&self.shared);
        let unread = b.bytes.get(b.start..).unwrap_or_default();
        if unread.is_empty() {
            if b.writer_closed || buf.is_empty() {
                return Poll::Ready(Ok(0));
            }
            register(&mut b.reader, cx);
            return Poll::Pending;
        }
        let n = unread.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), unread.get(..n)) {
            dst.copy_from_slice(src);
        }
        b.start += n;
        if b.start == b.bytes.len() {
            b.bytes.clear();
            b.start = 0;
        }
        let writer = b.writer.take();
        drop(b);
        if let Some(w) = writer {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        let mut b = lock(&self.shared);
        b.reader_closed = true;
        b.bytes = Vec::new();
        b.start = 0;
        let writer = b.writer.take();
        drop(b);
        if let Some(w) = writer {
            w.wake();
        }
    }
}

impl AsyncWrite for PipeWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut b = lock(&self.shared);
        if b.reader_closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if b.writer_closed {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "write after close",
            )));
        }
        let unread = b.bytes.len() - b.start;
        let room = b.capacity.saturating_sub(unread);
        if room == 0 {
            register(&mut b.writer, cx);
            return Poll::Pending;
        }
        let n = room.min(buf.len());
        if b.start > 0 && b.bytes.len() + n > b.capacity {
            // Reclaim the space already read rather than grow past the capacity.
            let start = b.start;
            b.bytes.copy_within(start.., 0);
            b.bytes.truncate(unread);
            b.start = 0;
        }
        b.bytes.extend_from_slice(buf.get(..n).unwrap_or_default());
        let reader = b.reader.take();
        drop(b);
        if let Some(w) = reader {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shut();
        Poll::Ready(Ok(()))
    }
}

impl PipeWriter {
    fn shut(&self) {
        let mut b = lock(&self.shared);
        b.writer_closed = true;
        let reader = b.reader.take();
        drop(b);
        if let Some(w) = reader {
            w.wake();
        }
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        self.shut();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::io::{AsyncReadExt, AsyncWriteExt};

    fn halves(capacity: usize) -> (PipeReader, PipeWriter) {
        simplex(capacity)
    }

    #[test]
    fn bytes_arrive_in_order_through_a_small_buffer() {
        let (mut r, mut w) = halves(7);
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let sent = data.clone();
        let writer = async move {
            w.write_all(&sent).await.unwrap();
            w.close().await.unwrap();
        };
        let reader = async move {
            let mut got = Vec::new();
            r.read_to_end(&mut got).await.unwrap();
            got
        };
        let (_, got) = futures_executor::block_on(futures_util::future::join(writer, reader));
        assert_eq!(got, data);
    }

    #[test]
    fn end_of_stream_broken_pipe_and_write_after_close() {
        futures_executor::block_on(async {
            let (mut r, mut w) = halves(16);
            w.write_all(b"abc").await.unwrap();
            drop(w);
            let mut got = Vec::new();
            r.read_to_end(&mut got).await.unwrap();
            assert_eq!(got, b"abc");
            assert_eq!(r.read(&mut [0u8; 4]).await.unwrap(), 0);

            let (r, mut w) = halves(16);
            drop(r);
            let e = w.write(b"x").await.unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);

            let (_r, mut w) = halves(16);
            w.close().await.unwrap();
            assert!(w.write(b"x").await.is_err());
        });
    }

    #[test]
    fn a_full_pipe_waits_for_the_reader() {
        futures_executor::block_on(async {
            let (mut r, mut w) = halves(4);
            assert_eq!(w.write(b"123456").await.unwrap(), 4);
            // Full: the next write waits until the reader makes room.
            let waker = futures_util::task::noop_waker();
            let mut cx = Context::from_waker(&waker);
            assert!(Pin::new(&mut w).poll_write(&mut cx, b"5").is_pending());
            let mut two = [0u8; 2];
            assert_eq!(r.read(&mut two).await.unwrap(), 2);
            assert_eq!(&two, b"12");
            assert_eq!(w.write(b"56").await.unwrap(), 2);
            let mut rest = [0u8; 8];
            assert_eq!(r.read(&mut rest).await.unwrap(), 4);
            assert_eq!(&rest[..4], b"3456");
        });
    }

    /// Seeded random capacities, write sizes and read sizes, polled by hand in a random order:
    /// every byte arrives once, in order, and a full pipe or an empty one only ever waits.
    #[test]
    fn random_interleavings_keep_every_byte_in_order() {
        let waker = futures_util::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        for seed in 1..200u64 {
            let mut x = seed;
            let mut next = |m: usize| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % m as u64) as usize
            };
            let (mut r, mut w) = halves(1 + next(40));
            let data: Vec<u8> = (0..1 + next(3000))
                .map(|i| (i * 7 + seed as usize) as u8)
                .collect();
            let (mut sent, mut got) = (0, Vec::new());
            let mut closed = false;
            loop {
                if next(2) == 0 && !closed {
                    if sent == data.len() {
                        assert!(Pin::new(&mut w).poll_close(&mut cx).is_ready());
                        closed = true;
                    } else {
                        let end = (sent + 1 + next(50)).min(data.len());
                        if let Poll::Ready(n) =
                            Pin::new(&mut w).poll_write(&mut cx, &data[sent..end])
                        {
                            let n = n.unwrap();
                            assert!(n > 0);
                            sent += n;
                        }
                    }
                } else {
                    let mut buf = vec![0u8; 1 + next(60)];
                    match Pin::new(&mut r).poll_read(&mut cx, &mut buf) {
                        Poll::Ready(Ok(0)) => break,
                        Poll::Ready(Ok(n)) => got.extend_from_slice(&buf[..n]),
                        Poll::Ready(Err(e)) => panic!("{e}"),
                        Poll::Pending => assert_eq!(got.len(), sent, "read waits only when empty"),
                    }
                }
            }
            assert!(closed);
            assert_eq!(got, data, "seed {seed}");
        }
    }

    #[test]
    fn duplex_carries_both_ways() {
        futures_executor::block_on(async {
            let (a, b) = duplex(64);
            let (mut a_r, mut a_w) = (a.reader, a.writer);
            let (mut b_r, mut b_w) = (b.reader, b.writer);
            a_w.write_all(b"ping").await.unwrap();
            let mut buf = [0u8; 4];
            b_r.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"ping");
            b_w.write_all(b"pong").await.unwrap();
            a_r.read_exact(&mut buf).await.unwrap();
            assert_eq!(&buf, b"pong");
        });
    }
}
