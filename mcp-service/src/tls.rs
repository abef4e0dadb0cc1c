//! TLS on rustls (feature `tls`), once for every runtime: the client's and the server's
//! policy ([`TlsClientConfig`], [`TlsServerConfig`]) and the handshakes ([`connect`],
//! [`accept`]) over any `futures-io` byte stream — a driver's
//! [`TcpStream`](crate::driver::Driver::TcpStream), whatever its runtime.
//!
//! The HTTP client ([`HttpClientOptions::tls`](crate::HttpClientOptions::tls)) speaks TLS to
//! `https://` URLs, the WebSocket client to `wss://` ones; `serve_http_tls` and `serve_ws_tls`
//! (in [`driver`](crate::driver)) serve over TLS. Certificates are verified with webpki
//! against the roots of the configuration (by default Mozilla's, from `webpki-roots`), with
//! the server name checked against the URL's host. Cryptography is rustls' `ring` provider.
//!
//! ```
//! use mcp_service::tls::TlsClientConfig;
//!
//! // The built-in roots plus a private CA, and no client certificate.
//! # let ca_pem = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap().cert.pem();
//! let tls = TlsClientConfig::new().add_ca_pem(ca_pem.as_bytes())?;
//! # let _ = tls;
//! # Ok::<(), mcp_service::Error>(())
//! ```
//!
//! A failed handshake is an `io::Error` whose message names the cause: `certificate not
//! valid for name "…"`, `certificate expired`, `certificate signed by an unknown authority`,
//! the peer's alert (a server refusing the client's certificate), or a peer that does not
//! speak TLS.

use std::fmt;
use std::io;
use std::sync::{Arc, OnceLock};

use futures_io::{AsyncRead, AsyncWrite};
use mcp_proto::{Error, ErrorKind};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

pub use rustls;

/// A client's TLS stream over `S`.
pub type ClientTlsStream<S> = futures_rustls::client::TlsStream<S>;
/// A server's TLS stream over `S`.
pub type ServerTlsStream<S> = futures_rustls::server::TlsStream<S>;

/// The ALPN name of HTTP/2.
pub const ALPN_H2: &[u8] = b"h2";
/// The ALPN name of HTTP/1.1.
pub const ALPN_HTTP1: &[u8] = b"http/1.1";

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn bad(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidParams, msg.into())
}

fn certs_from_pem(pem: &[u8], what: &str) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(format!("{what}: invalid PEM: {e}")))?;
    if certs.is_empty() {
        return Err(bad(format!("{what}: no CERTIFICATE in the PEM")));
    }
    Ok(certs)
}

fn key_from_pem(pem: &[u8], what: &str) -> Result<PrivateKeyDer<'static>, Error> {
    PrivateKeyDer::from_pem_slice(pem)
        .map_err(|e| bad(format!("{what}: no usable private key in the PEM: {e}")))
}

/// A certificate chain and its private key.
struct Identity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Identity {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
        }
    }
}

/// The TLS policy of a client: which roots are trusted (by default the `webpki-roots`
/// bundle), extra CAs, an optional client certificate (mutual TLS), and whether HTTP/2 is
/// offered by ALPN (with the feature `http2`). Cheap to clone.
///
/// Each builder method checks its input at once and rebuilds the rustls configuration, so a
/// configuration that exists is one connections can use.
#[derive(Clone)]
pub struct TlsClientConfig {
    roots: Arc<RootCertStore>,
    identity: Option<Identity>,
    /// Used as is (its roots and certificate), ALPN set per connection.
    custom: Option<Arc<ClientConfig>>,
    /// `[HTTP/1.1 only, h2 then HTTP/1.1]`.
    built: [Arc<ClientConfig>; 2],
}

impl fmt::Debug for TlsClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClientConfig")
            .field("roots", &self.roots.len())
            .field("client_certificate", &self.identity.is_some())
            .field("custom", &self.custom.is_some())
            .finish()
    }
}

impl Default for TlsClientConfig {
    /// The `webpki-roots` bundle, no client certificate (built once per process).
    fn default() -> Self {
        static DEFAULT: OnceLock<TlsClientConfig> = OnceLock::new();
        DEFAULT
            .get_or_init(|| {
                let roots =
                    RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                TlsClientConfig::with_roots(roots)
            })
            .clone()
    }
}

impl TlsClientConfig {
    /// Trusts the `webpki-roots` bundle (Mozilla's roots), no client certificate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Trusts no root at all: add the CAs to trust with [`add_ca_pem`](Self::add_ca_pem).
    pub fn without_default_roots() -> Self {
        Self::with_roots(RootCertStore::empty())
    }

    fn with_roots(roots: RootCertStore) -> Self {
        let roots = Arc::new(roots);
        let built = [
            build_client(&roots, &[ALPN_HTTP1]),
            build_client(&roots, &[ALPN_H2, ALPN_HTTP1]),
        ];
        TlsClientConfig {
            roots,
            identity: None,
            custom: None,
            built,
        }
    }

    /// A configuration of your own (roots, verifier, client certificate, …), used as is but
    /// for its ALPN protocols, which are set per connection.
    pub fn from_rustls(config: Arc<ClientConfig>) -> Self {
        let with = |alpn: &[&[u8]]| {
            let mut c = (*config).clone();
            c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
            Arc::new(c)
        };
        TlsClientConfig {
            roots: Arc::new(RootCertStore::empty()),
            identity: None,
            built: [with(&[ALPN_HTTP1]), with(&[ALPN_H2, ALPN_HTTP1])],
            custom: Some(config),
        }
    }

    /// Also trusts every certificate in `pem` (one or more `CERTIFICATE` blocks) as a root.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for PEM without a certificate, or a certificate webpki
    /// cannot use as a trust anchor; and for a configuration made by
    /// [`from_rustls`](Self::from_rustls), whose roots are its own.
    pub fn add_ca_pem(self, pem: &[u8]) -> Result<Self, Error> {
        let certs = certs_from_pem(pem, "CA certificates")?;
        self.add_ca_der(certs)
    }

    /// Also trusts these DER certificates as roots.
    ///
    /// # Errors
    /// As [`add_ca_pem`](Self::add_ca_pem).
    pub fn add_ca_der(
        mut self,
        certs: impl IntoIterator<Item = CertificateDer<'static>>,
    ) -> Result<Self, Error> {
        if self.custom.is_some() {
            return Err(bad("a rustls configuration of your own has its own roots"));
        }
        let mut roots = (*self.roots).clone();
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| bad(format!("CA certificate not usable as a root: {e}")))?;
        }
        self.roots = Arc::new(roots);
        self.rebuild()
    }

    /// Presents this certificate chain (`pem`: the leaf first) and private key (PKCS#8,
    /// PKCS#1 or SEC1 PEM) to servers that ask for a client certificate.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for PEM without a certificate or key, a key rustls cannot
    /// use, or a key that does not match the certificate.
    pub fn client_certificate_pem(
        mut self,
        chain_pem: &[u8],
        key_pem: &[u8],
    ) -> Result<Self, Error> {
        if self.custom.is_some() {
            return Err(bad(
                "a rustls configuration of your own has its own client certificate",
            ));
        }
        self.identity = Some(Identity {
            chain: certs_from_pem(chain_pem, "client certificate")?,
            key: key_from_pem(key_pem, "client key")?,
        });
        self.rebuild()
    }

    fn rebuild(mut self) -> Result<Self, Error> {
        let id = self.identity.as_ref();
        self.built = [
            build_client_with(&self.roots, id, &[ALPN_HTTP1])?,
            build_client_with(&self.roots, id, &[ALPN_H2, ALPN_HTTP1])?,
        ];
        Ok(self)
    }

    /// The rustls configuration offering `h2` (then HTTP/1.1) by ALPN, or HTTP/1.1 alone.
    pub fn rustls_config(&self, offer_h2: bool) -> Arc<ClientConfig> {
        self.built[usize::from(offer_h2)].clone()
    }
}

// Building fails only for a provider lacking every default protocol version; ring has
// TLS 1.2 and 1.3.
const RING_VERSIONS: &str = "the ring provider supports TLS 1.2 and 1.3";

/// The ring provider's client configuration builder, rustls' safe default versions.
fn client_builder() -> rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier> {
    ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect(RING_VERSIONS)
}

/// The ring provider's server configuration builder, rustls' safe default versions.
fn server_builder() -> rustls::ConfigBuilder<ServerConfig, rustls::WantsVerifier> {
    ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect(RING_VERSIONS)
}

fn build_client(roots: &Arc<RootCertStore>, alpn: &[&[u8]]) -> Arc<ClientConfig> {
    let mut config = client_builder()
        .with_root_certificates(roots.clone())
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

fn build_client_with(
    roots: &Arc<RootCertStore>,
    identity: Option<&Identity>,
    alpn: &[&[u8]],
) -> Result<Arc<ClientConfig>, Error> {
    let Some(id) = identity else {
        return Ok(build_client(roots, alpn));
    };
    let mut config = client_builder()
        .with_root_certificates(roots.clone())
        .with_client_auth_cert(id.chain.clone(), id.key.clone_key())
        .map_err(|e| bad(format!("client certificate: {e}")))?;
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}
/// The TLS policy of a server: its certificate chain and key, and optionally which CAs sign
/// the client certificates it asks for (mutual TLS). HTTP/2 is chosen by ALPN when the
/// client offers it and the server serves it. Cheap to clone.
#[derive(Clone)]
pub struct TlsServerConfig {
    /// `[HTTP/1.1 only, h2 then HTTP/1.1]`.
    built: [Arc<ServerConfig>; 2],
    identity: Option<Identity>,
    clients: Option<(Arc<RootCertStore>, bool)>,
}

impl fmt::Debug for TlsServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsServerConfig")
            .field(
                "client_auth",
                &self.clients.as_ref().map(|(_, required)| *required),
            )
            .finish_non_exhaustive()
    }
}

impl TlsServerConfig {
    /// Serves the certificate chain in `chain_pem` (the leaf first, then intermediates) with
    /// the private key in `key_pem` (PKCS#8, PKCS#1 or SEC1), asking no client certificate.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for PEM without a certificate or a key, a key rustls cannot
    /// use, or a key that does not match the certificate.
    pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Self, Error> {
        let identity = Identity {
            chain: certs_from_pem(chain_pem, "server certificate")?,
            key: key_from_pem(key_pem, "server key")?,
        };
        let placeholder = Arc::new(
            server_builder()
                .with_no_client_auth()
                .with_single_cert(identity.chain.clone(), identity.key.clone_key())
                .map_err(|e| bad(format!("server certificate: {e}")))?,
        );
        TlsServerConfig {
            built: [placeholder.clone(), placeholder],
            identity: Some(identity),
            clients: None,
        }
        .rebuild()
    }

    /// A configuration of your own, used as is but for its ALPN protocols (set per listener).
    pub fn from_rustls(config: Arc<ServerConfig>) -> Self {
        let with = |alpn: &[&[u8]]| {
            let mut c = (*config).clone();
            c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
            Arc::new(c)
        };
        TlsServerConfig {
            built: [with(&[ALPN_HTTP1]), with(&[ALPN_H2, ALPN_HTTP1])],
            identity: None,
            clients: None,
        }
    }

    /// Asks clients for a certificate signed by one of the CAs in `ca_pem`: with `required`,
    /// a client without one is refused in the handshake; without, it may connect
    /// anonymously (a certificate it does present must still verify).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for PEM without a certificate, a certificate webpki cannot
    /// use as a trust anchor, or a configuration made by [`from_rustls`](Self::from_rustls).
    pub fn client_auth_pem(mut self, ca_pem: &[u8], required: bool) -> Result<Self, Error> {
        if self.identity.is_none() {
            return Err(bad(
                "a rustls configuration of your own has its own client verifier",
            ));
        }
        let mut roots = RootCertStore::empty();
        for cert in certs_from_pem(ca_pem, "client CA certificates")? {
            roots
                .add(cert)
                .map_err(|e| bad(format!("client CA certificate not usable as a root: {e}")))?;
        }
        self.clients = Some((Arc::new(roots), required));
        self.rebuild()
    }

    fn rebuild(mut self) -> Result<Self, Error> {
        let Some(id) = &self.identity else {
            return Ok(self);
        };
        let build = |alpn: &[&[u8]]| -> Result<Arc<ServerConfig>, Error> {
            let builder = server_builder();
            let builder = match &self.clients {
                None => builder.with_no_client_auth(),
                Some((roots, required)) => {
                    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                        roots.clone(),
                        provider(),
                    );
                    let verifier = if *required {
                        verifier
                    } else {
                        verifier.allow_unauthenticated()
                    };
                    let verifier = verifier
                        .build()
                        .map_err(|e| bad(format!("client verifier: {e}")))?;
                    builder.with_client_cert_verifier(verifier)
                }
            };
            let mut config = builder
                .with_single_cert(id.chain.clone(), id.key.clone_key())
                .map_err(|e| bad(format!("server certificate: {e}")))?;
            config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
            Ok(Arc::new(config))
        };
        self.built = [build(&[ALPN_HTTP1])?, build(&[ALPN_H2, ALPN_HTTP1])?];
        Ok(self)
    }

    /// The rustls configuration choosing `h2` by ALPN when the client offers it, or
    /// HTTP/1.1 alone.
    pub fn rustls_config(&self, offer_h2: bool) -> Arc<ServerConfig> {
        self.built[usize::from(offer_h2)].clone()
    }
}

/// Runs a client's TLS handshake over `stream` with the server `host` (a DNS name, checked
/// against the certificate, and sent as SNI; or an IP address, checked against the
/// certificate's IP names), offering `h2` by ALPN when `offer_h2`. Returns the stream and
/// whether the server chose `h2`.
///
/// # Errors
/// An `io::Error` whose message names the cause: an invalid host name, a certificate not
/// valid for the name, expired, or signed by an unknown authority, an alert from the server
/// (one refusing the client's certificate), or a peer that does not speak TLS.
pub async fn connect<S>(
    config: &TlsClientConfig,
    host: &str,
    stream: S,
    offer_h2: bool,
) -> io::Result<(ClientTlsStream<S>, bool)>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let name = ServerName::try_from(host.to_owned()).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("TLS: {host:?} is not a valid server name: {e}"),
        )
    })?;
    let connector = futures_rustls::TlsConnector::from(config.rustls_config(offer_h2));
    let tls = connector
        .connect(name, stream)
        .await
        .map_err(|e| describe(e, &format!("TLS handshake with {host}")))?;
    let h2 = tls.get_ref().1.alpn_protocol() == Some(ALPN_H2);
    Ok((tls, h2))
}

/// Runs a server's TLS handshake over `stream`, choosing `h2` by ALPN when `offer_h2` and
/// the client offers it. Returns the stream and whether `h2` was chosen.
///
/// # Errors
/// An `io::Error` whose message names the cause (a client that does not speak TLS, a client
/// certificate refused, no protocol in common).
pub async fn accept<S>(
    config: &TlsServerConfig,
    stream: S,
    offer_h2: bool,
) -> io::Result<(ServerTlsStream<S>, bool)>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let acceptor = futures_rustls::TlsAcceptor::from(config.rustls_config(offer_h2));
    let tls = acceptor
        .accept(stream)
        .await
        .map_err(|e| describe(e, "TLS handshake with a client"))?;
    let h2 = tls.get_ref().1.alpn_protocol() == Some(ALPN_H2);
    Ok((tls, h2))
}

/// A TLS error's cause in words (a refused certificate, a peer's alert, a peer not speaking
/// TLS).
pub(crate) fn describe_rustls(e: &rustls::Error) -> String {
    match e {
        rustls::Error::InvalidCertificate(c) => describe_certificate(c),
        rustls::Error::AlertReceived(alert) => format!(
            "the peer refused the TLS connection (alert {alert:?}{})",
            match alert {
                rustls::AlertDescription::CertificateRequired =>
                    ": the server requires a client certificate",
                rustls::AlertDescription::UnknownCA | rustls::AlertDescription::BadCertificate =>
                    ": the server does not accept the client certificate",
                _ => "",
            }
        ),
        rustls::Error::InvalidMessage(_) => format!("the peer does not speak TLS ({e})"),
        other => other.to_string(),
    }
}

/// What the alert named in an error's text means for a client, if it is one it can act on.
#[cfg(feature = "http-client")]
pub(crate) fn alert_meaning(text: &str) -> Option<&'static str> {
    if text.contains("CertificateRequired") {
        Some("the server requires a client certificate")
    } else if text.contains("UnknownCA") || text.contains("BadCertificate") {
        Some("the server does not accept the client certificate")
    } else if text.contains("CertificateExpired") {
        Some("the server finds the client certificate expired")
    } else {
        None
    }
}

/// `e` (from a handshake) with a message naming the cause, for `what`.
fn describe(e: io::Error, what: &str) -> io::Error {
    let kind = e.kind();
    let cause = match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(tls) => describe_rustls(tls),
        None if kind == io::ErrorKind::UnexpectedEof => {
            "the peer closed the connection during the handshake (does it speak TLS?)".to_owned()
        }
        None => e.to_string(),
    };
    io::Error::new(kind, format!("{what} failed: {cause}"))
}

fn describe_certificate(c: &rustls::CertificateError) -> String {
    use rustls::CertificateError as C;
    match c {
        C::UnknownIssuer => "certificate signed by an unknown authority (UnknownIssuer): \
                             trust its CA (a `--ca` file, `TlsClientConfig::add_ca_pem`)"
            .to_owned(),
        C::Expired | C::ExpiredContext { .. } => c.to_string(),
        C::NotValidForName | C::NotValidForNameContext { .. } => c.to_string(),
        other => format!("invalid peer certificate: {other}"),
    }
}
