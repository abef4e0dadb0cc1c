//! The process's own stdin and stdout: [`serve_stdio`] on any [`StdioDriver`].

use crate::runtime::Runtime;
use crate::{ByteStream, Error, Server};

/// A runtime that can read and write the process's own stdin and stdout.
///
/// On Unix a driver takes pipes and sockets through [`fd::PollFd::stdio`](super::fd::PollFd)
/// onto its reactor (leaving the inherited file descriptions as found) and anything else
/// through a blocking thread pool; elsewhere, the thread pool.
pub trait StdioDriver: Runtime {
    /// The process's stdin (read half) and stdout (write half).
    fn stdio(&self) -> ByteStream;
}

/// The process's stdin and stdout as a [`ByteStream`], through `rt`.
pub fn stdio_stream<D: StdioDriver>(rt: &D) -> ByteStream {
    rt.stdio()
}

/// Serves `server` on the process's own stdin and stdout until stdin reaches EOF; requests
/// still in flight at EOF are answered and flushed before it returns.
pub async fn serve_stdio<D: StdioDriver>(rt: D, server: Server) -> Result<(), Error> {
    let stdio = rt.stdio();
    server.serve(rt, stdio).await
}
