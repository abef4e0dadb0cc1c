//! The OAuth tokens and client registrations of `mcp --oauth`, kept in a JSON file between
//! runs (readable by the user alone), so that a login lasts until its tokens stop working.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, UNIX_EPOCH};

use mcp_service::oauth::{
    Authorization, ClientCredentials, MemoryTokenStore, TokenEndpointAuth, TokenSet, TokenStore,
    TokenType,
};
use serde_json::{Map, Value, json};

/// Where the file is by default: `$XDG_CONFIG_HOME/mcp/oauth.json`, else
/// `~/.config/mcp/oauth.json` (`%APPDATA%\mcp\oauth.json` on Windows).
pub fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            if cfg!(windows) {
                std::env::var_os("APPDATA").map(PathBuf::from)
            } else {
                std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config"))
            }
        })?;
    Some(base.join("mcp").join("oauth.json"))
}

/// A [`TokenStore`] in a JSON file: `{"authorizations": {server: ...}, "clients": {issuer: ...}}`.
/// What this process saved is also kept in memory and read from there first, so another
/// `mcp` writing the file at the same time cannot take it away mid-run.
pub struct FileStore {
    path: PathBuf,
    memory: MemoryTokenStore,
    /// Serialises the read-modify-write of this process.
    lock: Mutex<()>,
}

impl FileStore {
    /// The store at `path` (created at the first save).
    pub fn new(path: PathBuf) -> FileStore {
        FileStore {
            path,
            memory: MemoryTokenStore::new(),
            lock: Mutex::new(()),
        }
    }

    fn read(&self) -> Map<String, Value> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Applies `f` to the section `section` and writes the file (a failure is reported once
    /// on stderr: the login still works for this run).
    fn update(&self, section: &str, f: impl FnOnce(&mut Map<String, Value>)) {
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut all = self.read();
        let entry = all
            .entry(section.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        if let Value::Object(m) = entry {
            f(m);
        }
        if let Err(e) = write_private(&self.path, &Value::Object(all)) {
            eprintln!("mcp: the login is not kept ({}: {e})", self.path.display());
        }
    }

    fn get(&self, section: &str, key: &str) -> Option<Value> {
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.read().get(section)?.get(key).cloned()
    }
}

/// Writes `v` to `path` through a temporary file (mode 0600 on Unix) and a rename.
fn write_private(path: &Path, v: &Value) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let bytes = serde_json::to_vec_pretty(v).map_err(std::io::Error::other)?;
    {
        use std::io::Write;
        let mut f = options.open(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

fn client_to_json(c: &ClientCredentials) -> Value {
    json!({
        "client_id": c.client_id,
        "client_secret": c.client_secret,
        "auth_method": c.auth_method.as_str(),
    })
}

fn client_from_json(v: &Value) -> Option<ClientCredentials> {
    Some(ClientCredentials {
        client_id: v.get("client_id")?.as_str()?.to_owned(),
        client_secret: v
            .get("client_secret")
            .and_then(Value::as_str)
            .map(String::from),
        auth_method: TokenEndpointAuth::from_name(v.get("auth_method")?.as_str()?)?,
    })
}

fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(String::from)
}

fn authorization_to_json(a: &Authorization) -> Value {
    let secs = |t: Option<std::time::SystemTime>| {
        t.and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_secs())
    };
    json!({
        "tokens": {
            "access_token": a.tokens.access_token,
            "token_type": a.tokens.token_type.as_str(),
            "issued_at": secs(a.tokens.issued_at),
            "refresh_token": a.tokens.refresh_token,
            "expires_at": secs(a.tokens.expires_at),
            "scope": a.tokens.scope,
        },
        "client": client_to_json(&a.client),
        "issuer": a.issuer,
        "token_endpoint": a.token_endpoint,
        "resource": a.resource,
        "requested_scope": a.requested_scope,
    })
}

fn authorization_from_json(v: &Value) -> Option<Authorization> {
    let t = v.get("tokens")?;
    Some(Authorization {
        tokens: TokenSet {
            access_token: string(t, "access_token")?,
            token_type: match t.get("token_type").and_then(Value::as_str) {
                Some(name) => TokenType::from_name(name)?,
                None => TokenType::Bearer,
            },
            issued_at: t
                .get("issued_at")
                .and_then(Value::as_u64)
                .map(|s| UNIX_EPOCH + Duration::from_secs(s)),
            refresh_token: string(t, "refresh_token"),
            expires_at: t
                .get("expires_at")
                .and_then(Value::as_u64)
                .map(|s| UNIX_EPOCH + Duration::from_secs(s)),
            scope: string(t, "scope"),
        },
        client: client_from_json(v.get("client")?)?,
        issuer: string(v, "issuer")?,
        token_endpoint: string(v, "token_endpoint")?,
        resource: string(v, "resource")?,
        requested_scope: string(v, "requested_scope"),
    })
}

impl TokenStore for FileStore {
    fn load(&self, server: &str) -> Option<Authorization> {
        self.memory
            .load(server)
            .or_else(|| authorization_from_json(&self.get("authorizations", server)?))
    }

    fn save(&self, server: &str, authorization: Authorization) {
        let json = authorization_to_json(&authorization);
        self.memory.save(server, authorization);
        self.update("authorizations", |m| {
            m.insert(server.to_owned(), json);
        });
    }

    fn remove(&self, server: &str) {
        self.memory.remove(server);
        self.update("authorizations", |m| {
            m.remove(server);
        });
    }

    fn load_client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.memory
            .load_client(issuer)
            .or_else(|| client_from_json(&self.get("clients", issuer)?))
    }

    fn save_client(&self, issuer: &str, client: ClientCredentials) {
        let json = client_to_json(&client);
        self.memory.save_client(issuer, client);
        self.update("clients", |m| {
            m.insert(issuer.to_owned(), json);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_saved_loads_back_and_the_file_is_private() {
        let dir = std::env::temp_dir().join(format!("mcp-store-test-{}", std::process::id()));
        let path = dir.join("sub").join("oauth.json");
        let store = FileStore::new(path.clone());
        let client = ClientCredentials {
            client_id: "c1".into(),
            client_secret: Some("s".into()),
            auth_method: TokenEndpointAuth::ClientSecretPost,
        };
        let a = Authorization {
            tokens: TokenSet {
                access_token: "at".into(),
                token_type: TokenType::Bearer,
                issued_at: Some(UNIX_EPOCH + Duration::from_secs(400)),
                refresh_token: Some("rt".into()),
                expires_at: Some(UNIX_EPOCH + Duration::from_secs(1_000)),
                scope: Some("read".into()),
            },
            client: client.clone(),
            issuer: "http://as".into(),
            token_endpoint: "http://as/token".into(),
            resource: "http://rs/mcp".into(),
            requested_scope: None,
        };
        assert!(store.load("http://rs/mcp").is_none());
        store.save("http://rs/mcp", a.clone());
        store.save_client("http://as", client.clone());
        // A new store (a later run) reads what the first one wrote.
        let again = FileStore::new(path.clone());
        let loaded = again.load("http://rs/mcp").expect("saved");
        assert_eq!(loaded, a);
        assert_eq!(again.load_client("http://as"), Some(client));
        again.remove("http://rs/mcp");
        assert!(again.load("http://rs/mcp").is_none());
        let fresh = || FileStore::new(path.clone());
        assert!(fresh().load("http://rs/mcp").is_none());
        assert!(fresh().load_client("http://as").is_some());
        // What this process saved stays readable whatever another process writes.
        assert_eq!(store.load("http://rs/mcp"), Some(a.clone()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // A damaged file is an empty store, and is replaced at the next save.
        std::fs::write(&path, b"not json").unwrap();
        assert!(fresh().load("http://rs/mcp").is_none());
        fresh().save("http://rs/mcp", a.clone());
        assert_eq!(fresh().load("http://rs/mcp"), Some(a));
        let _ = std::fs::remove_dir_all(dir);
    }
}
