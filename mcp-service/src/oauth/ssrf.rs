//! Where a server may send the client: the rules for every URL the authorization flow fetches
//! on a server's say-so (its `resource_metadata`, the authorization servers its metadata
//! names, their endpoints).
//!
//! A malicious or compromised MCP server must not turn the client into a proxy into the
//! client's own network (server-side request forgery): the URLs it chooses are fetched with
//! the client's network position. So, unless [`OAuthConfig::allow_private_addresses`] says
//! otherwise:
//!
//! - a URL whose host is a loopback, private, link-local or unspecified address (or
//!   `localhost`) is fetched only when the MCP server's own URL is of that same class: a server
//!   on `127.0.0.1` may have its authorization server on `localhost` (a developer's machine), a
//!   server on `10.0.0.5` one on `10.1.2.3` (a private network), but a public server may not
//!   point at either;
//! - a cloud metadata address (`169.254.169.254`, `fd00:ec2::254`, `100.100.100.200`,
//!   `metadata.google.internal`) is never fetched;
//! - the `resource_metadata` URL of a `WWW-Authenticate` challenge is used only on the MCP
//!   server's own origin (otherwise the well-known URLs of that origin are tried instead).
//!
//! Host names are judged once more where they are resolved: the HTTP client gives each of
//! these fetches an [`AddressCheck`](crate::http_client::AddressCheck) with the same rules,
//! which the connector applies to every address the name resolves to before connecting (a
//! public name that resolves to `10.0.0.1` is refused as `10.0.0.1` would be; the MCP server's
//! own addresses count as its network).
//!
//! [`OAuthConfig::allow_private_addresses`]: super::OAuthConfig::allow_private_addresses

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

/// What kind of network a URL's host is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Zone {
    /// Anything else (a public address, or a name other than those below).
    Public,
    /// `localhost`, `127.0.0.0/8`, `::1`.
    Loopback,
    /// Private, shared, link-local and unique-local addresses.
    Private,
    /// A cloud provider's instance metadata service.
    Metadata,
    /// `0.0.0.0`, `::` (which reach the local machine).
    Unspecified,
}

impl Zone {
    fn describe(self) -> &'static str {
        match self {
            Zone::Public => "a public address",
            Zone::Loopback => "a loopback address",
            Zone::Private => "a private or link-local address",
            Zone::Metadata => "a cloud metadata address",
            Zone::Unspecified => "an unspecified address",
        }
    }
}

/// The zone of `url`'s host.
pub(super) fn zone(url: &Url) -> Zone {
    match url.host() {
        Some(Host::Ipv4(ip)) => zone_of_ip(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => zone_of_ip(IpAddr::V6(ip)),
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if name == "localhost" || name.ends_with(".localhost") {
                Zone::Loopback
            } else if name == "metadata.google.internal" || name == "metadata" {
                Zone::Metadata
            } else {
                Zone::Public
            }
        }
        None => Zone::Public,
    }
}

fn zone_of_ip(ip: IpAddr) -> Zone {
    match ip {
        IpAddr::V4(v4) => zone_of_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => zone_of_v4(v4),
            None => zone_of_v6(v6),
        },
    }
}

fn zone_of_v4(ip: Ipv4Addr) -> Zone {
    let [a, b, ..] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        Zone::Metadata
    } else if ip.is_unspecified() {
        Zone::Unspecified
    } else if ip.is_loopback() {
        Zone::Loopback
    } else if ip.is_private() || ip.is_link_local() || (a == 100 && (64..128).contains(&b)) {
        // 10/8, 172.16/12, 192.168/16, 169.254/16 and the shared 100.64/10.
        Zone::Private
    } else {
        Zone::Public
    }
}

fn zone_of_v6(ip: Ipv6Addr) -> Zone {
    let first = ip.segments()[0];
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        Zone::Metadata
    } else if ip.is_unspecified() {
        Zone::Unspecified
    } else if ip.is_loopback() {
        Zone::Loopback
    } else if (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80 {
        // Unique local fc00::/7, link-local fe80::/10.
        Zone::Private
    } else {
        Zone::Public
    }
}

/// The connect-time form of [`check`] for the MCP server at `server`: each resolved address
/// judged by its zone against the server's (its URL's, or any of its resolved addresses').
pub(crate) fn address_check(server: &Url) -> Option<crate::http_client::AddressCheck> {
    let host = match server.host()? {
        Host::Domain(d) => d.to_owned(),
        Host::Ipv4(a) => a.to_string(),
        Host::Ipv6(a) => a.to_string(),
    };
    let port = server.port_or_known_default().unwrap_or(443);
    let server_zone = zone(server);
    Some(crate::http_client::AddressCheck::new(
        host,
        port,
        move |server_addrs, ip| {
            let to = zone_of_ip(ip);
            match to {
                Zone::Public => Ok(()),
                Zone::Metadata => Err(format!(
                    "{ip} is {}, which the client never connects to on a server's say-so \
                     (OAuthConfig::allow_private_addresses to allow it)",
                    to.describe()
                )),
                _ if to == server_zone || server_addrs.iter().any(|a| zone_of_ip(*a) == to) => {
                    Ok(())
                }
                _ => Err(format!(
                    "{ip} is {} while the MCP server is on {}: a server may not send the \
                     client into its own network (OAuthConfig::allow_private_addresses to \
                     allow it)",
                    to.describe(),
                    server_zone.describe()
                )),
            }
        },
    ))
}

/// Whether the flow may fetch `url` for the MCP server at `server`; `Err` says why not.
pub(super) fn check(server: &Url, url: &Url, allow_private: bool) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err("not an http(s) URL".to_owned());
    }
    if allow_private {
        return Ok(());
    }
    let (to, from) = (zone(url), zone(server));
    match to {
        Zone::Public => Ok(()),
        Zone::Metadata => Err(format!(
            "it names {}, which the client never fetches on a server's say-so \
             (OAuthConfig::allow_private_addresses to allow it)",
            to.describe()
        )),
        _ if to == from => Ok(()),
        _ => Err(format!(
            "it names {} while the MCP server is on {}: a server may not send the client \
             into its own network (OAuthConfig::allow_private_addresses to allow it)",
            to.describe(),
            from.describe()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn resolved_addresses_are_judged_like_literals() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        let public = address_check(&u("https://mcp.example.com/mcp")).unwrap();
        assert_eq!(public.server(), ("mcp.example.com", 443));
        assert!(public.allows(&[], ip("93.184.216.34")).is_ok());
        let e = public
            .allows(&[ip("93.184.216.34")], ip("10.0.0.1"))
            .unwrap_err();
        assert!(e.contains("private") && e.contains("public"), "{e}");
        assert!(public.allows(&[], ip("127.0.0.1")).is_err());
        assert!(public.allows(&[], ip("::ffff:192.168.0.1")).is_err());
        // A server whose name resolves into a private network may send the client there.
        assert!(public.allows(&[ip("10.1.2.3")], ip("10.0.0.1")).is_ok());
        // Metadata never, whatever the server's network.
        let e = public
            .allows(&[ip("169.254.1.1")], ip("169.254.169.254"))
            .unwrap_err();
        assert!(e.contains("metadata"), "{e}");
        let local = address_check(&u("http://127.0.0.1:8080/mcp")).unwrap();
        assert_eq!(local.server(), ("127.0.0.1", 8080));
        assert!(local.allows(&[], ip("::1")).is_ok());
        assert!(local.allows(&[], ip("192.168.1.1")).is_err());
    }

    #[test]
    fn zones() {
        for (url, z) in [
            ("https://example.com/x", Zone::Public),
            ("http://8.8.8.8/", Zone::Public),
            ("http://localhost:3000/", Zone::Loopback),
            ("http://app.localhost/", Zone::Loopback),
            ("http://127.0.0.2/", Zone::Loopback),
            ("http://[::1]/", Zone::Loopback),
            ("http://[::ffff:127.0.0.1]/", Zone::Loopback),
            ("http://10.1.2.3/", Zone::Private),
            ("http://172.20.0.1/", Zone::Private),
            ("http://192.168.1.1/", Zone::Private),
            ("http://100.64.0.1/", Zone::Private),
            ("http://169.254.10.10/", Zone::Private),
            ("http://[fd12::1]/", Zone::Private),
            ("http://[fe80::1]/", Zone::Private),
            ("http://169.254.169.254/latest/meta-data/", Zone::Metadata),
            ("http://[fd00:ec2::254]/", Zone::Metadata),
            ("http://100.100.100.200/", Zone::Metadata),
            ("http://metadata.google.internal/", Zone::Metadata),
            ("http://0.0.0.0:8080/", Zone::Unspecified),
            ("http://[::]/", Zone::Unspecified),
        ] {
            assert_eq!(zone(&u(url)), z, "{url}");
        }
    }

    #[test]
    fn a_server_reaches_only_its_own_zone() {
        let public = u("https://mcp.example.com/mcp");
        let local = u("http://127.0.0.1:3000/mcp");
        let private = u("http://10.0.0.5/mcp");
        // Public URLs from anywhere.
        for server in [&public, &local, &private] {
            assert!(check(server, &u("https://auth.example.com/token"), false).is_ok());
        }
        // A local server's authorization server on the same machine: a developer's setup.
        assert!(check(&local, &u("http://localhost:9000/token"), false).is_ok());
        assert!(check(&private, &u("http://10.9.9.9/token"), false).is_ok());
        // A public server may not send the client into its own network.
        let e = check(&public, &u("http://127.0.0.1:8080/admin"), false).unwrap_err();
        assert!(
            e.contains("loopback address while the MCP server is on a public"),
            "{e}"
        );
        assert!(check(&public, &u("http://192.168.0.1/"), false).is_err());
        assert!(check(&public, &u("http://0.0.0.0/"), false).is_err());
        // Nor may a private one send it to loopback.
        assert!(check(&private, &u("http://localhost/"), false).is_err());
        // The metadata service: never, even from its own zone.
        for server in [&public, &local, &private, &u("http://169.254.169.254/")] {
            let e = check(server, &u("http://169.254.169.254/latest/"), false).unwrap_err();
            assert!(e.contains("cloud metadata"), "{e}");
        }
        // Unless allowed; never a non-HTTP scheme.
        assert!(check(&public, &u("http://169.254.169.254/"), true).is_ok());
        assert!(check(&public, &u("file:///etc/passwd"), true).is_err());
    }
}
