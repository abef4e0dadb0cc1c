//! TLS on rustls (feature `tls`), once for every runtime: the client's and the server's
//! policy ([`TlsClientConfig`], [`TlsServerConfig`]) and the handshakes ([`connect`],
//! [`accept`]) over any `futures-io` byte stream — a driver's
//! [`TcpStream`](crate::driver::Driver::TcpStream), whatever its runtime.
//!
//! The HTTP client ([`HttpClientOptions::tls`](crate::HttpClientOptions::tls)) speaks TLS to
//! `https://` URLs, the WebSocket client to `wss://` ones; `serve_http_tls` and `serve_ws_tls`
//! (in [`driver`](crate::driver)) serve over TLS. Certificates are verified with webpki
//! against the roots of the configuration (by default Mozilla's, from `webpki-roots`), with
//! the server name checked against the URL's host.
//!
//! # The crypto provider
//!
//! This crate names no rustls crypto provider (so that no C build step comes with it, and an
//! application picks `ring`, `aws-lc-rs` or another): the configurations use the provider
//! given with `with_provider`, else the process's default one. Install one once at startup,
//! e.g. with rustls' `ring` feature in your own `Cargo.toml`
//! (`rustls = { version = "0.23", default-features = false, features = ["ring"] }`):
//!
//! ```ignore
//! let _ = rustls::crypto::ring::default_provider().install_default();
//! ```
//!
//! Without one, building a configuration fails with an error saying so.
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
use rustls::crypto::CryptoProvider;
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

/// `[HTTP/1.1 only, h2 then HTTP/1.1]`.
const ALPNS: [&[&[u8]]; 2] = [&[ALPN_HTTP1], &[ALPN_H2, ALPN_HTTP1]];

fn bad(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidParams, msg.into())
}

/// `explicit`, else the process's default provider.
fn provider(explicit: Option<&Arc<CryptoProvider>>) -> Result<Arc<CryptoProvider>, Error> {
    explicit
        .cloned()
        .or_else(|| CryptoProvider::get_default().cloned())
        .ok_or_else(|| {
            bad(
                "TLS needs a rustls crypto provider: install one at startup (with rustls' \
                 `ring` feature: `rustls::crypto::ring::default_provider().install_default()`) \
                 or give one with `with_provider`",
            )
        })
}

fn alpn(config: &mut Vec<Vec<u8>>, protocols: &[&[u8]]) {
    *config = protocols.iter().map(|p| p.to_vec()).collect();
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

/// Configurations built once, on first use, for both ALPN lists (or the reason they cannot
/// be).
type Built<C> = Arc<OnceLock<Result<[Arc<C>; 2], Error>>>;

/// The TLS policy of a client: which roots are trusted (by default the `webpki-roots`
/// bundle), extra CAs, an optional client certificate (mutual TLS), and the crypto provider
/// (by default the process's, see the [module](self)). Cheap to clone.
///
/// The rustls configuration is built on first use and kept: a configuration that cannot be
/// built (no provider, a key the provider cannot use) fails each connection with the reason.
#[derive(Clone)]
pub struct TlsClientConfig {
    roots: Arc<RootCertStore>,
    identity: Option<Identity>,
    provider: Option<Arc<CryptoProvider>>,
    /// Used as is (its roots and certificate), ALPN set per connection.
    custom: Option<Arc<ClientConfig>>,
    built: Built<ClientConfig>,
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
    /// The `webpki-roots` bundle, no client certificate, the process's provider (the bundle
    /// is parsed once per process).
    fn default() -> Self {
        static ROOTS: OnceLock<Arc<RootCertStore>> = OnceLock::new();
        let roots = ROOTS.get_or_init(|| {
            Arc::new(RootCertStore::from_iter(
                webpki_roots::TLS_SERVER_ROOTS.iter().cloned(),
            ))
        });
        TlsClientConfig::with_roots(roots.clone())
    }
}

impl TlsClientConfig {
    /// Trusts the `webpki-roots` bundle (Mozilla's roots), no client certificate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Trusts no root at all: add the CAs to trust with [`add_ca_pem`](Self::add_ca_pem).
    pub fn without_default_roots() -> Self {
        Self::with_roots(Arc::new(RootCertStore::empty()))
    }

    fn with_roots(roots: Arc<RootCertStore>) -> Self {
        TlsClientConfig {
            roots,
            identity: None,
            provider: None,
            custom: None,
            built: Built::default(),
        }
    }

    /// A configuration of your own (roots, verifier, client certificate, provider, …), used
    /// as is but for its ALPN protocols, which are set per connection.
    pub fn from_rustls(config: Arc<ClientConfig>) -> Self {
        let mut c = Self::without_default_roots();
        c.custom = Some(config);
        c
    }

    /// Uses `provider` instead of the process's default one.
    pub fn with_provider(mut self, provider: Arc<CryptoProvider>) -> Self {
        self.provider = Some(provider);
        self.built = Built::default();
        self
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
        self.built = Built::default();
        Ok(self)
    }

    /// Presents this certificate chain (`pem`: the leaf first) and private key (PKCS#8,
    /// PKCS#1 or SEC1 PEM) to servers that ask for a client certificate.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for PEM without a certificate or key; with a provider
    /// at hand (given, or the process's), also for a key it cannot use or that does not
    /// match the certificate (else that error comes with the first connection).
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
        self.built = Built::default();
        if provider(self.provider.as_ref()).is_ok() {
            self.rustls_config(false)?;
        }
        Ok(self)
    }

    /// The rustls configuration offering `h2` (then HTTP/1.1) by ALPN, or HTTP/1.1 alone.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] when it cannot be built: no crypto provider, or a client
    /// key the provider cannot use.
    pub fn rustls_config(&self, offer_h2: bool) -> Result<Arc<ClientConfig>, Error> {
        let built = self.built.get_or_init(|| self.build());
        match built {
            Ok(configs) => Ok(configs[usize::from(offer_h2)].clone()),
            Err(e) => Err(e.clone()),
        }
    }

    fn build(&self) -> Result<[Arc<ClientConfig>; 2], Error> {
        let one = |protocols: &[&[u8]]| -> Result<Arc<ClientConfig>, Error> {
            let mut config = match &self.custom {
                Some(custom) => (**custom).clone(),
                None => {
                    let builder =
                        ClientConfig::builder_with_provider(provider(self.provider.as_ref())?)
                            .with_safe_default_protocol_versions()
                            .map_err(|e| bad(format!("TLS configuration: {e}")))?
                            .with_root_certificates(self.roots.clone());
                    match &self.identity {
                        Some(id) => builder
                            .with_client_auth_cert(id.chain.clone(), id.key.clone_key())
                            .map_err(|e| bad(format!("client certificate: {e}")))?,
                        None => builder.with_no_client_auth(),
                    }
                }
            };
            alpn(&mut config.alpn_protocols, protocols);
            Ok(Arc::new(config))
        };
        Ok([one(ALPNS[0])?, one(ALPNS[1])?])
    }
}

/// The TLS policy of a server: its certificate chain and key, optionally which CAs sign the
/// client certificates it asks for (mutual TLS), and the crypto provider (by default the
/// process's). HTTP/2 is chosen by ALPN when the client offers it and the server serves it.
/// Cheap to clone.
#[derive(Clone)]
pub struct TlsServerConfig {
    /// `[HTTP/1.1 only, h2 then HTTP/1.1]`.
    built: [Arc<ServerConfig>; 2],
    identity: Option<Identity>,
    provider: Option<Arc<CryptoProvider>>,
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
    /// the private key in `key_pem` (PKCS#8, PKCS#1 or SEC1), asking no client certificate,
    /// with the process's crypto provider.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidParams`] for PEM without a certificate or a key, a key the
    /// provider cannot use, a key that does not match the certificate, or no provider.
    pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Self, Error> {
        Self::from_pem_with(chain_pem, key_pem, None)
    }

    /// [`from_pem`](Self::from_pem) with `provider` instead of the process's.
    ///
    /// # Errors
    /// As [`from_pem`](Self::from_pem).
    pub fn from_pem_with_provider(
        chain_pem: &[u8],
        key_pem: &[u8],
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, Error> {
        Self::from_pem_with(chain_pem, key_pem, Some(provider))
    }

    fn from_pem_with(
        chain_pem: &[u8],
        key_pem: &[u8],
        provider: Option<Arc<CryptoProvider>>,
    ) -> Result<Self, Error> {
        let identity = Identity {
            chain: certs_from_pem(chain_pem, "server certificate")?,
            key: key_from_pem(key_pem, "server key")?,
        };
        let built = build_server(&identity, provider.as_ref(), None)?;
        Ok(TlsServerConfig {
            built,
            identity: Some(identity),
            provider,
            clients: None,
        })
    }

    /// A configuration of your own, used as is but for its ALPN protocols (set per listener).
    pub fn from_rustls(config: Arc<ServerConfig>) -> Self {
        let with = |protocols: &[&[u8]]| {
            let mut c = (*config).clone();
            alpn(&mut c.alpn_protocols, protocols);
            Arc::new(c)
        };
        TlsServerConfig {
            built: [with(ALPNS[0]), with(ALPNS[1])],
            identity: None,
            provider: None,
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
        let Some(identity) = &self.identity else {
            return Err(bad(
                "a rustls configuration of your own has its own client verifier",
            ));
        };
        let mut roots = RootCertStore::empty();
        for cert in certs_from_pem(ca_pem, "client CA certificates")? {
            roots
                .add(cert)
                .map_err(|e| bad(format!("client CA certificate not usable as a root: {e}")))?;
        }
        let clients = (Arc::new(roots), required);
        self.built = build_server(identity, self.provider.as_ref(), Some(&clients))?;
        self.clients = Some(clients);
        Ok(self)
    }

    /// The rustls configuration choosing `h2` by ALPN when the client offers it, or
    /// HTTP/1.1 alone.
    pub fn rustls_config(&self, offer_h2: bool) -> Arc<ServerConfig> {
        self.built[usize::from(offer_h2)].clone()
    }
}

fn build_server(
    id: &Identity,
    explicit: Option<&Arc<CryptoProvider>>,
    clients: Option<&(Arc<RootCertStore>, bool)>,
) -> Result<[Arc<ServerConfig>; 2], Error> {
    let provider = provider(explicit)?;
    let one = |protocols: &[&[u8]]| -> Result<Arc<ServerConfig>, Error> {
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(format!("TLS configuration: {e}")))?;
        let builder = match clients {
            None => builder.with_no_client_auth(),
            Some((roots, required)) => {
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    roots.clone(),
                    provider.clone(),
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
        alpn(&mut config.alpn_protocols, protocols);
        Ok(Arc::new(config))
    };
    Ok([one(ALPNS[0])?, one(ALPNS[1])?])
}

/// Runs a client's TLS handshake over `stream` with the server `host` (a DNS name, checked
/// against the certificate, and sent as SNI; or an IP address, checked against the
/// certificate's IP names), offering `h2` by ALPN when `offer_h2`. Returns the stream and
/// whether the server chose `h2`.
///
/// # Errors
/// An `io::Error` whose message names the cause: a configuration that cannot be built (no
/// crypto provider), an invalid host name, a certificate not
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
    let rustls_config = config.rustls_config(offer_h2).map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("TLS: {}", e.message()))
    })?;
    let connector = futures_rustls::TlsConnector::from(rustls_config);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_provider_configurations_say_so() {
        // No test of this crate's unit tests installs a process-wide provider.
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let (chain, key) = (cert.cert.pem(), cert.signing_key.serialize_pem());
        let e = TlsServerConfig::from_pem(chain.as_bytes(), key.as_bytes()).unwrap_err();
        assert!(e.message().contains("crypto provider"), "{e}");
        let client = TlsClientConfig::new().add_ca_pem(chain.as_bytes()).unwrap();
        let e = client.rustls_config(true).unwrap_err();
        assert!(e.message().contains("crypto provider"), "{e}");
        // Given one, both build; the client offers h2 then HTTP/1.1, or HTTP/1.1 alone.
        let ring = Arc::new(rustls::crypto::ring::default_provider());
        let server =
            TlsServerConfig::from_pem_with_provider(chain.as_bytes(), key.as_bytes(), ring.clone())
                .unwrap();
        assert_eq!(
            server.rustls_config(true).alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        let client = client.with_provider(ring);
        assert_eq!(
            client.rustls_config(false).unwrap().alpn_protocols,
            [b"http/1.1".to_vec()]
        );
        // Bad PEM is refused at once.
        let e = TlsClientConfig::new().add_ca_pem(b"not pem").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidParams);
        assert!(TlsServerConfig::from_pem(chain.as_bytes(), b"").is_err());
    }
}
