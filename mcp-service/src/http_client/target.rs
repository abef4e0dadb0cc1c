//! Where HTTP requests go: an absolute `http://` URL split for hyper (host and port to
//! connect to, `Host` authority, origin-form path).

use mcp_proto::Error;
use url::Url;

/// Host and port: the key of pooled connections.
pub(super) type HostPort = (String, u16);

/// Where requests go: an `http://` URL split for hyper.
#[derive(Clone, Debug)]
pub(super) struct Target {
    pub(super) url: Url,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) authority: String,
    pub(super) path: String,
}

impl Target {
    pub(super) fn parse(url: &str) -> Result<Target, Error> {
        let url = Url::parse(url)
            .map_err(|e| Error::invalid_params(format!("invalid URL {url:?}: {e}")))?;
        Target::new(url)
    }

    pub(super) fn new(url: Url) -> Result<Target, Error> {
        match url.scheme() {
            "http" => {}
            "https" => {
                return Err(Error::invalid_params(format!(
                    "{url}: https URLs are not supported (this client has no TLS); use http://"
                )));
            }
            other => {
                return Err(Error::invalid_params(format!(
                    "{url}: unsupported URL scheme {other:?}; use http://"
                )));
            }
        }
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_owned(),
            Some(url::Host::Ipv4(a)) => a.to_string(),
            Some(url::Host::Ipv6(a)) => a.to_string(),
            None => return Err(Error::invalid_params(format!("{url}: the URL has no host"))),
        };
        let port = url.port_or_known_default().unwrap_or(80);
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
            host,
            port,
            authority,
            path,
        })
    }

    /// The target of an absolute URI the core's policy asked for.
    pub(super) fn from_uri(uri: &http::Uri) -> Result<Target, Error> {
        Target::parse(&uri.to_string())
    }

    pub(super) fn key(&self) -> HostPort {
        (self.host.clone(), self.port)
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
        let e = Target::parse("https://example.com/mcp").unwrap_err();
        assert!(e.message().contains("https URLs are not supported"), "{e}");
        assert!(Target::parse("ftp://x/").is_err());
        assert!(Target::parse("/relative").is_err());
    }
}
