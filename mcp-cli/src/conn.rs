//! The connection to the server: a child process over its stdin/stdout, Streamable HTTP (with
//! the fallback to legacy HTTP+SSE), legacy HTTP+SSE, or WebSocket; and what a failure says.

use std::collections::VecDeque;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::AsyncBufReadExt;
use mcp_service::driver::{Process, ProcessDriver, StderrMode};
use mcp_service::http_client::{HttpClientOptions, HttpTransport, TransportFinished};
use mcp_service::{ByteStream, Client, ClientOptions};
use mcp_tokio::{TcpConnector, TokioChild, TokioRuntime};

/// The child's stderr lines a failure shows.
const STDERR_TAIL: usize = 10;
/// A kept stderr line is cut to this many bytes.
const STDERR_LINE_MAX: usize = 500;
/// How long closing waits for the child to exit after its stdin closed, and for the HTTP
/// session's DELETE.
const CLOSE_WAIT: Duration = Duration::from_secs(3);
/// How long a failure waits for the child to exit, to tell an exited server from one that
/// speaks something else.
const EXIT_WAIT: Duration = Duration::from_millis(1500);

/// Where the server is.
pub enum Target {
    /// A command to spawn (the server on its stdin/stdout).
    Command(Vec<String>),
    /// Streamable HTTP with the spec's fallback to legacy HTTP+SSE.
    Url(String),
    /// Legacy HTTP+SSE (2024-11-05).
    SseUrl(String),
    /// WebSocket (outside the MCP specification).
    WsUrl(String),
}

/// A failure: the line the user reads, and more lines after it (a server's stderr).
#[derive(Debug)]
pub struct Failure {
    /// The one-line message.
    pub message: String,
    /// Lines that explain it (shown indented after it).
    pub detail: Vec<String>,
    /// The JSON-RPC error code, when the server answered with an error.
    pub code: Option<i64>,
}

impl Failure {
    /// A failure with only a message.
    pub fn msg(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            detail: Vec::new(),
            code: None,
        }
    }
}

impl From<mcp_service::Error> for Failure {
    fn from(e: mcp_service::Error) -> Failure {
        Failure {
            message: e.message().to_owned(),
            detail: Vec::new(),
            // A local kind (closed, timed out) is this side's, not an answer of the server.
            code: (!e.kind().is_local()).then(|| e.code()),
        }
    }
}

/// The last lines of a child's stderr.
#[derive(Clone, Default)]
struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, mut line: String) {
        if line.len() > STDERR_LINE_MAX {
            let mut cut = STDERR_LINE_MAX;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        let mut q = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() == STDERR_TAIL {
            q.pop_front();
        }
        q.push_back(line);
    }

    fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// A child server process and what it wrote to stderr.
struct Child {
    process: TokioChild,
    program: String,
    tail: Option<Tail>,
    /// The stderr reader's end (EOF), to read the last lines before showing them.
    stderr_done: Option<tokio::sync::oneshot::Receiver<()>>,
    status: Option<ExitStatus>,
}

impl Child {
    /// Waits (bounded) for the child to exit; its status, if it did.
    async fn exited(&mut self, within: Duration) -> Option<ExitStatus> {
        if self.status.is_none()
            && let Ok(Ok(status)) = tokio::time::timeout(within, self.process.wait()).await
        {
            self.status = Some(status);
        }
        if self.status.is_some()
            && let Some(done) = self.stderr_done.take()
        {
            let _ = tokio::time::timeout(Duration::from_millis(500), done).await;
        }
        self.status
    }

    fn stderr_lines(&self) -> Vec<String> {
        self.tail.as_ref().map(Tail::lines).unwrap_or_default()
    }

    /// Explains `failure` by the child's fate: exited (with its status and its last stderr
    /// lines), or running but not speaking MCP.
    async fn explain(&mut self, failure: Failure, during_connect: bool) -> Failure {
        let program = self.program.clone();
        match self.exited(EXIT_WAIT).await {
            Some(status) => {
                let how = describe_status(status);
                let message = if during_connect {
                    format!(
                        "the server process `{program}` {how} before it answered: \
                         it is not an MCP server, or it failed to start"
                    )
                } else {
                    format!("the server process `{program}` {how} ({})", failure.message)
                };
                let mut detail = Vec::new();
                let lines = self.stderr_lines();
                if !lines.is_empty() {
                    detail.push("its last lines on stderr:".to_owned());
                    detail.extend(lines.into_iter().map(|l| format!("  {l}")));
                }
                Failure {
                    message,
                    detail,
                    code: None,
                }
            }
            None if during_connect => {
                let _ = self.process.start_kill();
                Failure {
                    message: format!(
                        "`{program}` does not answer as an MCP server ({})",
                        failure.message
                    ),
                    detail: self.stderr_lines(),
                    code: None,
                }
            }
            None => failure,
        }
    }
}

fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    format!("exited ({status})")
}

/// The connection.
pub struct Conn {
    pub client: Client,
    child: Option<Child>,
    finished: Option<TransportFinished>,
}

/// How to connect.
pub struct Settings {
    /// The MCP client options (name, version, request timeout).
    pub options: ClientOptions,
    /// The HTTP options (headers, bearer token, OAuth).
    pub http: HttpClientOptions,
    /// The TLS policy of `wss://` (the HTTP one is in `http`).
    pub tls: mcp_tokio::TlsClientConfig,
    /// Whether the child's stderr goes to this process's stderr (else it is kept for errors).
    pub server_stderr: bool,
    /// Bound of connecting (the handshake or the discovery).
    pub timeout: Option<Duration>,
}

async fn bounded<T>(
    timeout: Option<Duration>,
    what: &str,
    fut: impl Future<Output = Result<T, mcp_service::Error>>,
) -> Result<T, Failure> {
    match timeout {
        None => fut.await.map_err(Failure::from),
        Some(d) => match tokio::time::timeout(d, fut).await {
            Ok(r) => r.map_err(Failure::from),
            Err(_) => Err(Failure::msg(format!(
                "{what} did not answer within {} s (--timeout)",
                d.as_secs_f64()
            ))),
        },
    }
}

/// `failure` naming `url` (unless its message does).
fn at(url: &str, failure: Failure) -> Failure {
    if failure.message.contains(url) {
        return failure;
    }
    Failure {
        message: format!("{url}: {}", failure.message),
        ..failure
    }
}

impl Conn {
    /// Connects to `target`.
    pub async fn open(target: Target, settings: Settings) -> Result<Conn, Failure> {
        let rt = TokioRuntime::current();
        let Settings {
            mut options,
            http,
            tls,
            server_stderr,
            timeout,
        } = settings;
        let (url, kind) = match target {
            Target::Command(argv) => {
                return Conn::spawn(rt, argv, options, server_stderr, timeout).await;
            }
            Target::Url(url) => (url, HttpTransport::Auto),
            Target::SseUrl(url) => {
                // Legacy HTTP+SSE is the handshake era's.
                options = options.discovery(mcp_proto::session::Discovery::Initialize);
                (url, HttpTransport::LegacySse)
            }
            Target::WsUrl(url) => {
                let client = bounded(
                    timeout,
                    &url,
                    mcp_tokio::connect_ws_tls(rt, &url, options, &tls),
                )
                .await
                .map_err(|f| at(&url, f))?;
                return Ok(Conn {
                    client,
                    child: None,
                    finished: None,
                });
            }
        };
        let (stream, finished) = mcp_service::http_client::http_transport(
            rt.clone(),
            TcpConnector(rt.clone()),
            &url,
            kind,
            http,
        )
        .map_err(|e| at(&url, Failure::from(e)))?;
        let client = bounded(timeout, &url, Client::connect(rt, stream, options))
            .await
            .map_err(|f| at(&url, f))?;
        Ok(Conn {
            client,
            child: None,
            finished: Some(finished),
        })
    }

    async fn spawn(
        rt: TokioRuntime,
        argv: Vec<String>,
        options: ClientOptions,
        server_stderr: bool,
        timeout: Option<Duration>,
    ) -> Result<Conn, Failure> {
        let program = argv.join(" ");
        let mut cmd = std::process::Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        let mode = if server_stderr {
            StderrMode::Inherit
        } else {
            StderrMode::Capture
        };
        let stdio = rt
            .spawn_process(cmd, mode)
            .map_err(|e| Failure::msg(format!("cannot start the server `{}`: {e}", argv[0])))?;
        let (tail, stderr_done) = match stdio.stderr {
            Some(pipe) => {
                let tail = Tail::default();
                let (tx, rx) = tokio::sync::oneshot::channel();
                let keep = tail.clone();
                tokio::spawn(async move {
                    let mut lines = futures_util::io::BufReader::new(pipe).lines();
                    use futures_util::StreamExt;
                    while let Some(Ok(line)) = lines.next().await {
                        keep.push(line);
                    }
                    let _ = tx.send(());
                });
                (Some(tail), Some(rx))
            }
            None => (None, None),
        };
        let mut child = Child {
            process: stdio.process,
            program,
            tail,
            stderr_done,
            status: None,
        };
        let stream = ByteStream::new(stdio.stdout, stdio.stdin);
        match bounded(timeout, "the server", Client::connect(rt, stream, options)).await {
            Ok(client) => Ok(Conn {
                client,
                child: Some(child),
                finished: None,
            }),
            Err(f) => Err(child.explain(f, true).await),
        }
    }

    /// Explains a failure of a request: for a child that exited, its status and stderr.
    pub async fn explain(&mut self, failure: Failure) -> Failure {
        match &mut self.child {
            Some(child) if self.client.is_closed() => child.explain(failure, false).await,
            _ => failure,
        }
    }

    /// Closes the connection: the child's stdin is closed and the child waited for (then
    /// killed); an HTTP session is ended (DELETE) and waited for.
    pub async fn close(mut self) {
        self.client.close();
        if let Some(child) = &mut self.child
            && child.exited(CLOSE_WAIT).await.is_none()
        {
            let _ = child.process.start_kill();
            let _ = child.exited(CLOSE_WAIT).await;
        }
        if let Some(finished) = self.finished.take() {
            drop(self.client);
            let _ = tokio::time::timeout(CLOSE_WAIT, finished).await;
        }
    }
}
