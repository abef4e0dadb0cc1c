//! The driver test suite (`mcp-service/tests/driver_suite/driver.rs`) on tokio: every scenario
//! on a current-thread and on a multi-threaded runtime.
#![cfg(unix)]

use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::process::Command;

use mcp_tokio::{BoxFuture, Client, ClientOptions, Error, Server, TokioRuntime};

#[path = "support/rt.rs"]
mod rt;
use rt::{current_thread, multi_thread};

#[path = "../../mcp-service/tests/driver_suite/driver.rs"]
mod suite;

impl suite::Env for TokioRuntime {
    fn test_server(&self) -> Command {
        Command::new(env!("CARGO_BIN_EXE_mcp-tokio-test-server"))
    }

    fn listener(&self, listener: TcpListener) -> tokio::net::TcpListener {
        rt::tokio_listener(self, listener)
    }

    fn serve_unix(&self, server: Server, stream: UnixStream) -> BoxFuture<Result<(), Error>> {
        let rt = self.clone();
        Box::pin(async move {
            stream.set_nonblocking(true).unwrap();
            let stream = tokio::net::UnixStream::from_std(stream).unwrap();
            mcp_tokio::serve_stream(rt, &server, stream).await
        })
    }

    fn connect_unix(
        &self,
        stream: UnixStream,
        options: ClientOptions,
    ) -> BoxFuture<Result<Client, Error>> {
        let rt = self.clone();
        Box::pin(async move {
            stream.set_nonblocking(true).unwrap();
            let stream = tokio::net::UnixStream::from_std(stream).unwrap();
            mcp_tokio::connect_stream(rt, stream, options).await
        })
    }
}

driver_suite!(on_current_thread, current_thread);
driver_suite!(on_multi_thread, multi_thread);
