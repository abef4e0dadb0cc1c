//! The typed server (work in progress: entry points first).

use std::sync::Arc;

use mcp_proto::Error;
use mcp_proto::session::{Config, Session};

use crate::connection::{ByteStream, connection};
use crate::runtime::Runtime;
use crate::service::{IncomingRequest, NoService, RequestContext, Service};

/// An MCP server: tools, resources, prompts and their handlers. Cheap to clone; serves any
/// number of connections.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    config: Config,
}

impl Server {
    /// Starts building a server named `name` at `version`.
    pub fn builder(name: &str, version: &str) -> ServerBuilder {
        ServerBuilder { config: Config::new(name, version) }
    }

    /// Serves one connection over `transport` until it closes (stdin EOF: every in-flight
    /// request is answered and flushed first).
    pub async fn serve<R: Runtime>(&self, rt: R, transport: ByteStream) -> Result<(), Error> {
        let session = Session::server(self.inner.config.clone());
        let (_peer, conn, _ready) = connection(rt, session, transport, Arc::new(NoService), Default::default());
        conn.await
    }
}

impl ServerBuilder {
    /// Finishes the server.
    pub fn build(self) -> Server {
        Server { inner: Arc::new(Inner { config: self.config }) }
    }
}

#[allow(dead_code)]
fn _assert(_: &dyn Service, _: IncomingRequest, _: RequestContext) {}
