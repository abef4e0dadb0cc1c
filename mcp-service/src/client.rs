//! The typed client (work in progress: entry points first).

use std::sync::Arc;

use mcp_proto::session::{Config, Session};
use mcp_proto::{Error, ErrorKind};

use crate::connection::{ByteStream, connection};
use crate::peer::{Peer, PeerInfo};
use crate::runtime::Runtime;
use crate::service::NoService;

/// Options of a client connection.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    config: Config,
}

impl ClientOptions {
    /// A client named `name` at `version`.
    pub fn new(name: &str, version: &str) -> Self {
        ClientOptions { config: Config::new(name, version) }
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions::new("mcp-rs-client", env!("CARGO_PKG_VERSION"))
    }
}

/// A connected MCP client. Cheap to clone; the connection closes when the last clone drops.
#[derive(Clone, Debug)]
pub struct Client {
    peer: Peer,
    server: PeerInfo,
}

impl Client {
    /// Connects over `transport`: the connection task is spawned on `rt`, the handshake runs,
    /// and the client is returned once the server answered.
    pub async fn connect<R: Runtime>(rt: R, transport: ByteStream, options: ClientOptions) -> Result<Client, Error> {
        let session = Session::client(options.config);
        let (peer, conn, ready) = connection(rt.clone(), session, transport, Arc::new(NoService), Default::default());
        rt.spawn(Box::pin(async move {
            if let Err(e) = conn.await {
                tracing::debug!(target: "mcp", error = %e, "client connection ended with an error");
            }
        }));
        let server = ready
            .await
            .map_err(|_| Error::new(ErrorKind::TransportClosed, "the connection closed during the handshake"))??;
        Ok(Client { peer, server })
    }

    /// The server's info from the handshake.
    pub fn server_info(&self) -> &PeerInfo {
        &self.server
    }

    /// The underlying peer handle (raw requests and notifications).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Closes the connection gracefully.
    pub fn close(&self) {
        self.peer.close();
    }
}
