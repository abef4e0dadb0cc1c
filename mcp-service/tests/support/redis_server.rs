//! A real `redis-server` for a test: the one `MCP_TEST_REDIS_URL` names, or a child process
//! on a free loopback port (killed when the guard drops, and killed and restarted on the same
//! port when a test asks), plus a minimal blocking RESP client for what a test must see or do
//! beside the stores (`PUBSUB NUMSUB`, `CLIENT KILL`, raw `PUBLISH`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A Redis server for one test.
pub struct RedisServer {
    /// Its URL.
    pub url: String,
    /// Its port on 127.0.0.1, when this test started it.
    pub port: Option<u16>,
    child: Option<Child>,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A free loopback port (nothing listens on it once this returns).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn spawn(port: u16) -> std::io::Result<Child> {
    Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
}

fn await_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "redis-server did not listen on port {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl RedisServer {
    /// Whether this test owns the process (and so can kill and restart it).
    pub fn owned(&self) -> bool {
        self.port.is_some()
    }

    /// Kills the server (`SIGKILL`): its clients see their connections drop.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Kills the server if it runs, and starts a new one on the same port (empty: nothing is
    /// saved).
    pub fn restart(&mut self) {
        self.kill();
        let port = self.port.expect("only a server this test started restarts");
        // The old process released the port when it died; retry briefly should a socket of
        // it linger.
        let mut tries = 0;
        loop {
            let mut child = spawn(port).expect("redis-server restarts");
            std::thread::sleep(Duration::from_millis(50));
            match child.try_wait() {
                Ok(None) => {
                    self.child = Some(child);
                    break;
                }
                _ => {
                    tries += 1;
                    assert!(tries < 100, "redis-server did not restart on port {port}");
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        await_listening(port);
    }

    /// A blocking RESP client to it.
    pub fn raw(&self) -> Raw {
        let addr = self
            .url
            .trim_start_matches("redis://")
            .trim_end_matches('/')
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let stream = TcpStream::connect(&addr).expect("connect the raw client");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a read timeout");
        Raw {
            reader: BufReader::new(stream.try_clone().expect("clone the socket")),
            writer: stream,
        }
    }
}

/// Starts (or names) a Redis server; `None`: skip the test.
pub fn redis_server() -> Option<RedisServer> {
    if let Ok(url) = std::env::var("MCP_TEST_REDIS_URL") {
        return Some(RedisServer {
            url,
            port: None,
            child: None,
        });
    }
    let required = std::env::var("MCP_REQUIRE_REDIS").is_ok_and(|v| v == "1");
    let port = free_port();
    let child = match spawn(port) {
        Ok(c) => c,
        Err(e) if !required => {
            eprintln!("redis-server not started ({e}): the Redis half of this test is skipped");
            return None;
        }
        Err(e) => panic!("MCP_REQUIRE_REDIS=1 but redis-server could not start: {e}"),
    };
    let server = RedisServer {
        url: format!("redis://127.0.0.1:{port}/"),
        port: Some(port),
        child: Some(child),
    };
    await_listening(port);
    Some(server)
}

/// A reply of the RESP2 protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`.
    Status(String),
    /// `-ERR …`.
    Error(String),
    /// `:n`.
    Int(i64),
    /// `$n` (or nil).
    Bulk(Option<Vec<u8>>),
    /// `*n` (or nil).
    Array(Vec<Reply>),
}

/// A minimal blocking RESP client.
pub struct Raw {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Raw {
    /// Sends one command and reads its reply.
    pub fn cmd(&mut self, args: &[&[u8]]) -> Reply {
        self.send(args);
        self.read()
    }

    /// Sends one command without reading its reply.
    pub fn send(&mut self, args: &[&[u8]]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out).expect("write to redis");
    }

    /// Reads one reply.
    pub fn read(&mut self) -> Reply {
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("read from redis");
        let line = line.trim_end_matches("\r\n");
        let (kind, rest) = line.split_at(1);
        match kind {
            "+" => Reply::Status(rest.to_owned()),
            "-" => Reply::Error(rest.to_owned()),
            ":" => Reply::Int(rest.parse().expect("an integer reply")),
            "$" => {
                let n: i64 = rest.parse().expect("a bulk length");
                if n < 0 {
                    return Reply::Bulk(None);
                }
                let mut buf = vec![0u8; n as usize + 2];
                self.reader.read_exact(&mut buf).expect("a bulk reply");
                buf.truncate(n as usize);
                Reply::Bulk(Some(buf))
            }
            "*" => {
                let n: i64 = rest.parse().expect("an array length");
                if n < 0 {
                    return Reply::Array(Vec::new());
                }
                (0..n).map(|_| self.read()).collect::<Vec<_>>().into()
            }
            other => panic!("unexpected RESP reply {other}{rest}"),
        }
    }

    /// The integer reply of a command.
    pub fn int(&mut self, args: &[&[u8]]) -> i64 {
        match self.cmd(args) {
            Reply::Int(n) => n,
            other => panic!("{args:?}: expected an integer, got {other:?}"),
        }
    }

    /// How many clients subscribe to `channel`.
    pub fn numsub(&mut self, channel: &str) -> i64 {
        match self.cmd(&[b"PUBSUB", b"NUMSUB", channel.as_bytes()]) {
            Reply::Array(v) => match v.get(1) {
                Some(Reply::Int(n)) => *n,
                other => panic!("PUBSUB NUMSUB: {other:?}"),
            },
            other => panic!("PUBSUB NUMSUB: {other:?}"),
        }
    }
}

impl From<Vec<Reply>> for Reply {
    fn from(v: Vec<Reply>) -> Self {
        Reply::Array(v)
    }
}
