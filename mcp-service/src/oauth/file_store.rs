//! A [`TokenStore`] in a JSON file, so that authorizations outlive the process.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::store::{
    Authorization, ClientCredentials, TokenEndpointAuth, TokenSet, TokenStore, TokenType,
};

/// The format version written to the file.
const VERSION: u32 = 1;

/// A [`TokenStore`] kept in a JSON file: the authorizations per MCP server and the client
/// registrations per authorization server, with their secrets (access and refresh tokens,
/// client secrets; never private keys).
///
/// The file is created readable and writable by its owner alone (mode `0600` on Unix), and
/// every change replaces it whole: written to a temporary file beside it, flushed to disk,
/// then renamed over it, so a crash leaves the old contents or the new, never half of either.
/// The contents are read when the store is opened and kept in memory; writes by other
/// processes after that are not seen (and are overwritten by this store's next change).
///
/// ```no_run
/// use std::sync::Arc;
/// use mcp_service::oauth::{FileTokenStore, OAuthClient, OAuthConfig};
/// # fn run() -> std::io::Result<()> {
/// let store = FileTokenStore::open("/home/me/.config/my-app/oauth.json")?;
/// let oauth = OAuthClient::with_store(
///     OAuthConfig::new("my-app", "http://localhost:3000/callback"),
///     Arc::new(store),
/// );
/// # let _ = oauth; Ok(()) }
/// ```
pub struct FileTokenStore {
    path: PathBuf,
    contents: Mutex<Contents>,
}

impl std::fmt::Debug for FileTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTokenStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Contents {
    version: u32,
    #[serde(default)]
    authorizations: BTreeMap<String, StoredAuthorization>,
    #[serde(default)]
    clients: BTreeMap<String, StoredClient>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredClient {
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    auth_method: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredAuthorization {
    access_token: String,
    token_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issued_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    client: StoredClient,
    issuer: String,
    token_endpoint: String,
    resource: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    requested_scope: Option<String>,
}

impl FileTokenStore {
    /// The store in the file at `path`: its contents if it exists, else empty (the file and
    /// its directory are created at the first change).
    ///
    /// # Errors
    /// The `io::Error` of a file that cannot be read, or one of kind
    /// [`io::ErrorKind::InvalidData`] naming the file for contents that are not a token
    /// store (corrupt JSON, unknown fields, another version, an unknown token type or
    /// authentication method). Such a file is left as it is.
    pub fn open(path: impl Into<PathBuf>) -> io::Result<FileTokenStore> {
        let path = path.into();
        let contents = match std::fs::read(&path) {
            Ok(bytes) => parse(&path, &bytes)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Contents {
                version: VERSION,
                ..Contents::default()
            },
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("token store {}: {e}", path.display()),
                ));
            }
        };
        Ok(FileTokenStore {
            path,
            contents: Mutex::new(contents),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Applies `f` and writes the file; a failed write is logged (the change stays in
    /// memory for this process).
    fn change(&self, f: impl FnOnce(&mut Contents)) {
        let mut contents = self.contents.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut contents);
        if let Err(e) = write_private(&self.path, &contents) {
            tracing::warn!(target: "mcp::oauth", path = %self.path.display(), error = %e, "the token store could not be written");
        }
    }

    fn read<R>(&self, f: impl FnOnce(&Contents) -> R) -> R {
        f(&self.contents.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

fn invalid(path: &Path, reason: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{} is not a valid token store: {reason}", path.display()),
    )
}

fn parse(path: &Path, bytes: &[u8]) -> io::Result<Contents> {
    let contents: Contents = serde_json::from_slice(bytes).map_err(|e| invalid(path, e))?;
    if contents.version != VERSION {
        return Err(invalid(
            path,
            format!("version {} (this store reads {VERSION})", contents.version),
        ));
    }
    for (server, a) in &contents.authorizations {
        if TokenType::from_name(&a.token_type).is_none() {
            return Err(invalid(
                path,
                format!("{server}: unknown token_type {:?}", a.token_type),
            ));
        }
    }
    for (issuer, c) in contents
        .clients
        .iter()
        .chain(contents.authorizations.iter().map(|(k, a)| (k, &a.client)))
    {
        if TokenEndpointAuth::from_name(&c.auth_method).is_none() {
            return Err(invalid(
                path,
                format!("{issuer}: unknown auth_method {:?}", c.auth_method),
            ));
        }
    }
    Ok(contents)
}

/// Writes `contents` to `path` through a temporary file created with mode `0600` (Unix),
/// flushed, then renamed over `path`.
fn write_private(path: &Path, contents: &Contents) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = serde_json::to_vec_pretty(contents).map_err(io::Error::other)?;
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    let tmp = path.with_file_name(name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = (|| {
        let mut f = options.open(&tmp)?;
        // A temporary file left over with other permissions keeps them when reopened.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn secs(t: Option<SystemTime>) -> Option<u64> {
    t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
}

fn time(s: Option<u64>) -> Option<SystemTime> {
    s.and_then(|s| SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(s)))
}

impl StoredClient {
    fn from(c: &ClientCredentials) -> StoredClient {
        StoredClient {
            client_id: c.client_id.clone(),
            client_secret: c.client_secret.clone(),
            auth_method: c.auth_method.as_str().to_owned(),
        }
    }

    fn to(&self) -> Option<ClientCredentials> {
        Some(ClientCredentials {
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            auth_method: TokenEndpointAuth::from_name(&self.auth_method)?,
        })
    }
}

impl StoredAuthorization {
    fn from(a: &Authorization) -> StoredAuthorization {
        StoredAuthorization {
            access_token: a.tokens.access_token.clone(),
            token_type: a.tokens.token_type.as_str().to_owned(),
            refresh_token: a.tokens.refresh_token.clone(),
            issued_at: secs(a.tokens.issued_at),
            expires_at: secs(a.tokens.expires_at),
            scope: a.tokens.scope.clone(),
            client: StoredClient::from(&a.client),
            issuer: a.issuer.clone(),
            token_endpoint: a.token_endpoint.clone(),
            resource: a.resource.clone(),
            requested_scope: a.requested_scope.clone(),
        }
    }

    fn to(&self) -> Option<Authorization> {
        Some(Authorization {
            tokens: TokenSet {
                access_token: self.access_token.clone(),
                token_type: TokenType::from_name(&self.token_type)?,
                issued_at: time(self.issued_at),
                refresh_token: self.refresh_token.clone(),
                expires_at: time(self.expires_at),
                scope: self.scope.clone(),
            },
            client: self.client.to()?,
            issuer: self.issuer.clone(),
            token_endpoint: self.token_endpoint.clone(),
            resource: self.resource.clone(),
            requested_scope: self.requested_scope.clone(),
        })
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, server: &str) -> Option<Authorization> {
        self.read(|c| c.authorizations.get(server)?.to())
    }

    fn save(&self, server: &str, authorization: Authorization) {
        self.change(|c| {
            c.authorizations
                .insert(server.to_owned(), StoredAuthorization::from(&authorization));
        });
    }

    fn remove(&self, server: &str) {
        self.change(|c| {
            c.authorizations.remove(server);
        });
    }

    fn load_client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.read(|c| c.clients.get(issuer)?.to())
    }

    fn save_client(&self, issuer: &str, client: ClientCredentials) {
        self.change(|c| {
            c.clients
                .insert(issuer.to_owned(), StoredClient::from(&client));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("mcp-file-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn authorization() -> Authorization {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        Authorization {
            tokens: TokenSet {
                access_token: "at".into(),
                token_type: TokenType::DPoP,
                issued_at: Some(t),
                refresh_token: Some("rt".into()),
                expires_at: Some(t + Duration::from_secs(3600)),
                scope: Some("a b".into()),
            },
            client: ClientCredentials {
                client_id: "id".into(),
                client_secret: Some("secret".into()),
                auth_method: TokenEndpointAuth::ClientSecretBasic,
            },
            issuer: "https://as".into(),
            token_endpoint: "https://as/token".into(),
            resource: "https://rs/mcp".into(),
            requested_scope: Some("a".into()),
        }
    }

    #[test]
    fn keeps_everything_across_opens_in_a_private_file() {
        let d = dir("roundtrip");
        let path = d.join("nested").join("oauth.json");
        let store = FileTokenStore::open(&path).unwrap();
        assert_eq!(store.load("https://rs/mcp"), None);
        assert!(!path.exists(), "nothing written before a change");
        store.save("https://rs/mcp", authorization());
        let client = ClientCredentials {
            client_id: "dyn".into(),
            client_secret: None,
            auth_method: TokenEndpointAuth::None,
        };
        store.save_client("https://as", client.clone());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["oauth.json"]);
        let again = FileTokenStore::open(&path).unwrap();
        assert_eq!(again.load("https://rs/mcp"), Some(authorization()));
        assert_eq!(again.load_client("https://as"), Some(client));
        again.remove("https://rs/mcp");
        assert_eq!(
            FileTokenStore::open(&path).unwrap().load("https://rs/mcp"),
            None
        );
        assert_eq!(again.path(), path);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_corrupt_file_is_a_clear_error_and_left_alone() {
        let d = dir("corrupt");
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("oauth.json");
        for (bad, says) in [
            ("{not json", "is not a valid token store"),
            (r#"{"version": 2}"#, "version 2"),
            (r#"{"version": 1, "extra": true}"#, "unknown field"),
            (
                r#"{"version": 1, "clients": {"https://as": {"client_id": "x", "auth_method": "magic"}}}"#,
                "unknown auth_method",
            ),
        ] {
            std::fs::write(&path, bad).unwrap();
            let e = FileTokenStore::open(&path).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{bad}");
            let msg = e.to_string();
            assert!(msg.contains("oauth.json") && msg.contains(says), "{msg}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
