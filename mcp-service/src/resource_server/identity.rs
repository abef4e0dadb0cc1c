//! Who a validated token stands for.

use serde_json::{Map, Value};

/// The identity behind a validated access token: in every handler's context
/// ([`HandlerContext::identity`](crate::server::HandlerContext::identity)) once a
/// [`ResourceServer`](super::ResourceServer) accepted the request's token.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Identity {
    /// The subject (`sub`): the resource owner, typically the user.
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, else `azp`).
    pub client_id: Option<String>,
    /// The issuer (`iss`).
    pub issuer: Option<String>,
    /// The granted scopes (`scope`, space-separated, or `scp`).
    pub scopes: Vec<String>,
    /// The audiences (`aud`).
    pub audience: Vec<String>,
    /// When the token expires (`exp`), seconds since the Unix epoch.
    pub expires_at: Option<u64>,
    /// Every claim of the token (JWT claims, or the introspection response's members).
    pub claims: Map<String, Value>,
}

impl Identity {
    /// An identity of `subject` with no scopes and no other claims (a validator of its own
    /// makes these).
    pub fn new(subject: impl Into<String>) -> Self {
        Identity {
            subject: Some(subject.into()),
            ..Identity::default()
        }
    }

    /// With `scopes` granted.
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// With `client_id`.
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Self {
        self.client_id = Some(client_id.into());
        self
    }

    /// The identity of a token's claims (JWT claims or an RFC 7662 introspection response):
    /// `sub`, `client_id` (else `azp`), `iss`, `scope` (a space-separated string) or `scp`
    /// (an array or a string), `aud` (a string or an array), `exp`; all of them kept in
    /// [`claims`](Self::claims). Members of unexpected types are ignored.
    pub fn from_claims(claims: Map<String, Value>) -> Self {
        let string = |k: &str| claims.get(k).and_then(Value::as_str).map(str::to_owned);
        let list = |v: Option<&Value>, split: bool| -> Vec<String> {
            match v {
                Some(Value::String(s)) if split => s
                    .split(' ')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let scopes = match claims.get("scope") {
            Some(v @ Value::String(_)) => list(Some(v), true),
            _ => list(claims.get("scp"), true),
        };
        Identity {
            subject: string("sub"),
            client_id: string("client_id").or_else(|| string("azp")),
            issuer: string("iss"),
            scopes,
            audience: list(claims.get("aud"), false),
            expires_at: claims.get("exp").and_then(Value::as_u64),
            claims,
        }
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes of `required` the token does not grant.
    pub fn missing_scopes<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required
            .iter()
            .filter(|s| !self.has_scope(s))
            .map(String::as_str)
            .collect()
    }

    /// The key a session is bound to: issuer, subject and client (a refreshed token of the
    /// same user and client keeps the session; another user's or client's does not).
    pub fn session_key(&self) -> String {
        let part = |p: &Option<String>| {
            p.as_deref()
                .unwrap_or("")
                .replace('\\', "\\\\")
                .replace('|', "\\|")
        };
        format!(
            "{}|{}|{}",
            part(&self.issuer),
            part(&self.subject),
            part(&self.client_id)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(v: Value) -> Identity {
        let Value::Object(m) = v else { unreachable!() };
        Identity::from_claims(m)
    }

    #[test]
    fn claims_in_their_usual_shapes() {
        let a =
            of(json!({"sub": "u", "azp": "c", "iss": "i", "scope": "a  b", "aud": "r", "exp": 5}));
        assert_eq!(a.subject.as_deref(), Some("u"));
        assert_eq!(a.client_id.as_deref(), Some("c"));
        assert_eq!(a.scopes, ["a", "b"]);
        assert_eq!(a.audience, ["r"]);
        assert_eq!(a.expires_at, Some(5));
        let b = of(
            json!({"client_id": "c2", "azp": "c", "scp": ["x", 1], "aud": ["r1", "r2"], "exp": "soon"}),
        );
        assert_eq!(b.client_id.as_deref(), Some("c2"));
        assert_eq!(b.scopes, ["x"]);
        assert_eq!(b.audience, ["r1", "r2"]);
        assert_eq!(b.expires_at, None);
        assert_eq!(b.missing_scopes(&["x".into(), "y".into()]), ["y"]);
    }

    #[test]
    fn session_keys_cannot_be_forged_with_separators() {
        let a = Identity::new("a|b").with_client_id("c");
        let b = Identity::new("a").with_client_id("b|c");
        assert_ne!(a.session_key(), b.session_key());
    }
}
