//! OAuth login for HTTP servers: the authorization URL is shown (and opened in a browser when
//! one can be), and the browser's redirect comes back to a listener on the loopback interface.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_service::http_client::HttpClientOptions;
use mcp_service::oauth::{Entropy, OAuthClient, OAuthConfig};
use mcp_service::{Error, ErrorKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How long the login waits for the browser's redirect.
const LOGIN_WAIT: Duration = Duration::from_secs(300);
/// Largest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;

/// How to log in.
pub struct Login {
    /// A client id registered with the authorization server (else the client registers
    /// itself dynamically).
    pub client_id: Option<String>,
    /// Its secret, for a confidential client.
    pub client_secret: Option<String>,
    /// Approve without a browser (the authorization server redirects at once: test and
    /// machine-to-machine setups).
    pub headless: bool,
    /// Whether to try to open a browser.
    pub open_browser: bool,
    /// The file that keeps the tokens between runs (none: kept in memory for this run).
    pub store: Option<std::path::PathBuf>,
}

/// `http` with OAuth configured for `login`; binds the loopback listener of the redirect.
pub async fn configure(http: HttpClientOptions, login: Login) -> Result<HttpClientOptions, String> {
    let listener = TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot listen on the loopback interface for the login: {e}"))?;
    let port = listener
        .local_addr()
        .map_err(|e| format!("the login listener has no address: {e}"))?
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let mut config = OAuthConfig::new("mcp command line", &redirect);
    if let Some(id) = login.client_id {
        config = config.pre_registered(id, login.client_secret);
    }
    let client = match login.store {
        Some(path) => OAuthClient::with_store(config, Arc::new(crate::store::FileStore::new(path))),
        None => OAuthClient::new(config),
    };
    let http = http.oauth(client, entropy);
    if login.headless {
        return Ok(http);
    }
    let listener = Arc::new(listener);
    let open_browser = login.open_browser;
    // A refusal stands for the rest of the run: the transport may ask again (its fallback to
    // legacy SSE, another request), and the user is not asked twice.
    let refused: Arc<Mutex<Option<String>>> = Arc::default();
    Ok(http.authorization_handler(move |url: String| {
        let listener = listener.clone();
        let refused = refused.clone();
        async move {
            if let Some(why) = refused.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                return Err(Error::new(
                    ErrorKind::Unauthorized,
                    format!("the authorization was refused ({why})"),
                ));
            }
            eprintln!("mcp: to authorize, open this address in a browser:\n  {url}");
            if open_browser {
                open(&url);
            }
            match tokio::time::timeout(LOGIN_WAIT, callback(&listener, port)).await {
                Ok(Ok(redirect)) => {
                    if let Some(why) = refusal(&redirect) {
                        *refused.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
                    }
                    Ok(redirect)
                }
                Ok(Err(e)) => Err(e),
                Err(_) => Err(Error::new(
                    ErrorKind::Unauthorized,
                    format!(
                        "the login did not come back within {} s",
                        LOGIN_WAIT.as_secs()
                    ),
                )),
            }
        }
    }))
}

/// The `error` (and `error_description`) of a redirect that refused the authorization.
fn refusal(redirect: &str) -> Option<String> {
    let query = redirect.split_once('?')?.1;
    let mut error = None;
    let mut description = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("error", v)) => error = Some(v.to_owned()),
            Some(("error_description", v)) => description = Some(v.replace('+', " ")),
            _ => {}
        }
    }
    let error = error?;
    Some(match description {
        Some(d) => format!("{error}: {d}"),
        None => error,
    })
}

/// PKCE and `state` randomness from the operating system.
fn entropy() -> Result<Entropy, Error> {
    let mut bytes = [0u8; 48];
    getrandom::fill(&mut bytes).map_err(|e| {
        Error::new(
            ErrorKind::Internal,
            format!("no random bytes for the authorization: {e}"),
        )
    })?;
    Ok(Entropy::from_bytes(bytes))
}

/// Tries to open `url` in the user's browser (quietly: the address is printed anyway).
fn open(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// Waits for the browser's request to `/callback`; the full redirect URL. Other requests
/// (a favicon) are answered 404 and the wait goes on.
pub async fn callback(listener: &TcpListener, port: u16) -> Result<String, Error> {
    loop {
        let (mut sock, _) = listener.accept().await.map_err(|e| {
            Error::new(
                ErrorKind::Unauthorized,
                format!("the login listener failed: {e}"),
            )
        })?;
        let mut head = Vec::new();
        let mut buf = [0u8; 2048];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let text = String::from_utf8_lossy(&head);
        let target = text
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .filter(|t| t.starts_with("/callback"));
        let (status, body) = match target {
            Some(_) => ("200 OK", "Authorization received: you can close this page."),
            None => ("404 Not Found", "Not found."),
        };
        let reply = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = sock.write_all(reply.as_bytes()).await;
        let _ = sock.shutdown().await;
        if let Some(target) = target {
            return Ok(format!("http://127.0.0.1:{port}{target}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_read_from_the_redirect() {
        assert_eq!(
            refusal("http://127.0.0.1:1/callback?error=access_denied&state=s").as_deref(),
            Some("access_denied")
        );
        assert_eq!(
            refusal("http://x/callback?state=s&error=denied&error_description=no+way").as_deref(),
            Some("denied: no way")
        );
        assert_eq!(refusal("http://x/callback?code=1&state=s"), None);
    }

    #[tokio::test]
    async fn the_redirect_is_read_from_the_browser_request() {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let browser = tokio::spawn(async move {
            let mut answers = Vec::new();
            for path in ["/favicon.ico", "/callback?code=abc&state=xyz"] {
                let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                s.write_all(format!("GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                    .await
                    .unwrap();
                let mut answer = String::new();
                s.read_to_string(&mut answer).await.unwrap();
                answers.push(answer);
            }
            answers
        });
        let got = callback(&listener, port).await.unwrap();
        assert_eq!(
            got,
            format!("http://127.0.0.1:{port}/callback?code=abc&state=xyz")
        );
        let answers = browser.await.unwrap();
        assert!(answers[0].starts_with("HTTP/1.1 404"), "{}", answers[0]);
        assert!(answers[1].starts_with("HTTP/1.1 200"), "{}", answers[1]);
    }
}
