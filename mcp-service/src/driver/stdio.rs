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
///
/// The connection runs as a task of its own on `rt` (a program typically awaits this in its
/// runtime's `block_on`, outside the runtime's worker threads: handlers spawned from there, and
/// their answers, would each cross threads), and stops when this future is dropped.
///
/// ```no_run
/// # async fn run<D: mcp_service::driver::StdioDriver>(rt: D) -> Result<(), mcp_service::Error> {
/// use mcp_service::schema::Tool;
/// use mcp_service::server::{Server, ToolContext, schema_of};
///
/// #[derive(serde::Deserialize)]
/// struct Echo { text: String }
///
/// let server = Server::builder("echo", "1.0")
///     .tool(
///         Tool::new("echo", schema_of(serde_json::json!({"type": "object"}))),
///         |args: Echo, _cx: ToolContext| async move { Ok(args.text) },
///     )
///     .build();
/// // With mcp-tokio: `mcp_tokio::serve_stdio(mcp_tokio::TokioRuntime::current(), server)`.
/// mcp_service::driver::serve_stdio(rt, server).await
/// # }
/// ```
///
/// # Errors
/// [`ErrorKind::TransportError`](crate::ErrorKind::TransportError) (local) when reading stdin
/// or writing stdout failed; the end of stdin and a closed stdout (the client went away) are
/// the normal end, `Ok(())`.
pub async fn serve_stdio<D: StdioDriver>(rt: D, server: Server) -> Result<(), Error> {
    use futures_util::future::{Either, select};
    let stdio = rt.stdio();
    let (done_tx, done_rx) = futures_channel::oneshot::channel();
    let (stop_tx, stop_rx) = futures_channel::oneshot::channel::<()>();
    let task_rt = rt.clone();
    rt.spawn(Box::pin(async move {
        let serve = server.serve(task_rt, stdio);
        // `stop_rx` resolves once `stop_tx` is dropped: this future went away.
        if let Either::Left((result, _)) = select(Box::pin(serve), stop_rx).await {
            let _ = done_tx.send(result);
        }
    }));
    let result = done_rx.await;
    drop(stop_tx);
    result.unwrap_or(Ok(()))
}
