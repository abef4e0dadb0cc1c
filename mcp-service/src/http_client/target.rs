//! Where HTTP requests go: an absolute `http://` (or, with the feature `tls`, `https://`)
//! URL split for hyper (host and port to connect to, `Host` authority, origin-form path).

use mcp_proto::Error;
use url::Url;

/// Host, port and TLS: the key of pooled connections.
pub(super) type HostPort = (String, u16, bool);

/// Where requests go: an `http://` or `https://` URL split for hyper.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub(super) url: Url,
    /// `https`: the connection is TLS.
    pub(super) secure: bool,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) authority: String,
    pub(super) path: String,
    /// The addresses a new connection for it may reach (an OAuth fetch on a server's say-so).
    pub(super) check: Option<super::AddressCheck>,
}

impl Target {
    pub(super) fn parse(url: &str) -> Result<Target, Error> {
        let url = Url::parse(url)
            .map_err(|e| Error::invalid_params(format!("invalid URL {url:?}: {e}")))?;
        Target::new(url)
    }

    pub(super) fn new(url: Url) -> Result<Target, Error> {
        let secure = match url.scheme() {
            "http" => false,
            #[cfg(feature = "tls")]
            "https" => true,
            #[cfg(not(feature = "tls"))]
            "https" => {
                return Err(Error::invalid_params(format!(
                    "{url}: https URLs need TLS (the feature `tls`); use http://"
                )));
            }
            other => {
                return Err(Error::invalid_params(format!(
                    "{url}: unsupported URL scheme {other:?}; use http:// or https://"
                )));
            }
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_owned(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => a.to_string(),
            None => return Err(Error::invalid_params(format!("{url}: the URL has no host"))),
        };
        let port = url
            .port_or_known_default()
            .unwrap_or(if secure { 443 } else { 80 });
        let host_str = url.host_str().unwrap_or_default();
        let authority = match url.port() {
            Some(p) => format!("{host_str}:{p}"),
            None => host_str.to_owned(),
        };
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        Ok(Target {
            url,
            secure,
            host,
            port,
            authority,
            path,
            check: None,
        })
    }

    /// The target of an absolute URI the core's policy asked for.
    pub(super) fn from_uri(uri: &http::Uri) -> Result<Target, Error> {
        Target::parse(&uri.to_string())
    }

    pub(super) fn key(&self) -> HostPort {
        (self.host.clone(), self.port, self.secure)
    }

    /// The absolute form of the request target (HTTP/2's `:scheme` and `:authority`).
    pub(super) fn absolute(&self) -> String {
        let scheme = if self.secure { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = Target::parse("http://127.0.0.1:8080/mcp?x=1").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 8080));
        assert_eq!(t.authority, "127.0.0.1:8080");
        assert_eq!(t.path, "/mcp?x=1");
        let t = Target::parse("http://[::1]/sse").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.authority.as_str()),
            ("::1", 80, "[::1]")
        );
        #[cfg(not(feature = "tls"))]
        {
            let e = Target::parse("https://example.com/mcp").unwrap_err();
            assert!(e.message().contains("https URLs need TLS"), "{e}");
        }
        #[cfg(feature = "tls")]
        {
            let t = Target::parse("https://example.com/mcp").unwrap();
            assert_eq!((t.port, t.secure), (443, true));
            assert_eq!(t.absolute(), "https://example.com/mcp");
        }
        assert!(Target::parse("ftp://x/").is_err());
        assert!(Target::parse("/relative").is_err());
    }
}
