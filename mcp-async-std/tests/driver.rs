//! The driver test suite (`mcp-service/tests/driver_suite/driver.rs`) on async-std and on smol:
//! every scenario under both runtimes.
#![cfg(unix)]

use std::future::Future;
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::process::Command;

use async_io::Async;
use mcp_async_std::{
    AsyncStdRuntime, BoxFuture, Client, ClientOptions, Error, Server, SmolRuntime,
};

#[path = "../../mcp-service/tests/driver_suite/driver.rs"]
mod suite;

/// The `Env` of an `async-io` runtime; `$flag` selects the same runtime in the test server.
macro_rules! async_io_env {
    ($rt:ty, $($flag:literal)?) => {
        impl suite::Env for $rt {
            fn test_server(&self) -> Command {
                let flags: &[&str] = &[$($flag)?];
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcp-async-std-test-server"));
                cmd.args(flags);
                cmd
            }

            fn listener(&self, listener: TcpListener) -> TcpListener {
                listener
            }

            fn serve_unix(&self, server: Server, stream: UnixStream) -> BoxFuture<Result<(), Error>> {
                let rt = *self;
                Box::pin(async move {
                    let stream = Async::new(stream).unwrap();
                    mcp_async_std::serve_stream(rt, &server, stream).await
                })
            }

            fn connect_unix(
                &self,
                stream: UnixStream,
                options: ClientOptions,
            ) -> BoxFuture<Result<Client, Error>> {
                let rt = *self;
                Box::pin(async move {
                    let stream = Async::new(stream).unwrap();
                    mcp_async_std::connect_stream(rt, stream, options).await
                })
            }
        }
    };
}

async_io_env!(AsyncStdRuntime,);
async_io_env!(SmolRuntime, "--smol");

fn async_std<F: Future<Output = ()>>(scenario: impl FnOnce(AsyncStdRuntime) -> F) {
    async_std::task::block_on(scenario(AsyncStdRuntime::new()))
}

fn smol<F: Future<Output = ()>>(scenario: impl FnOnce(SmolRuntime) -> F) {
    smol::block_on(scenario(SmolRuntime::new()))
}

driver_suite!(on_async_std, async_std);
driver_suite!(on_smol, smol);
