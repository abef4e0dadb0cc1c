//! The `WWW-Authenticate` challenge of a 401 or 403 reply (RFC 9110 §11.6.1, RFC 6750 §3,
//! RFC 9728 §5.1): which parameters of the `Bearer` challenge drive authorization.
//!
//! Owns the header grammar only; never fetches anything.

use http::{HeaderMap, StatusCode, header};

/// What an MCP server's 401 / 403 reply says about the authorization it wants.
///
/// Built from the reply with [`Challenge::from_response`] (or [`Challenge::parse`] for one header
/// value). [`Challenge::default`] is "no challenge at all": authorization then relies on
/// well-known discovery alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The reply carried `error="insufficient_scope"` (or was a 403): a step-up request.
    pub insufficient_scope: bool,
    /// The `error` parameter, e.g. `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
    /// The `error_description` parameter.
    pub error_description: Option<String>,
    /// The `scope` parameter: the scopes the request needs (space-separated).
    pub scope: Option<String>,
    /// The `resource_metadata` parameter (RFC 9728 §5.1): where the Protected Resource Metadata is.
    pub resource_metadata: Option<String>,
}

impl Challenge {
    /// Reads the `Bearer` challenge from a reply's status and headers. Every `WWW-Authenticate`
    /// header is searched; a header that does not parse is skipped (discovery then falls back to
    /// the well-known locations), never an error. A 403 whose challenge has no `error` is taken
    /// as `insufficient_scope` only if it says so; a bare 403 is not a step-up.
    pub fn from_response(status: StatusCode, headers: &HeaderMap) -> Challenge {
        let mut found = headers
            .get_all(header::WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(Challenge::parse)
            .unwrap_or_default();
        if status == StatusCode::FORBIDDEN && found.error.is_none() && found.scope.is_some() {
            // A 403 naming the scopes it needs is a step-up challenge even without `error`.
            found.insufficient_scope = true;
        }
        found
    }

    /// Parses one `WWW-Authenticate` header value and returns its `Bearer` challenge (else its
    /// `DPoP` challenge, RFC 9449 §7.1), or `None` when the value is malformed or has neither.
    /// Parameter names are case-insensitive; values may be tokens or quoted strings with `\`
    /// escapes.
    pub fn parse(value: &str) -> Option<Challenge> {
        let challenges = parse_challenges(value)?;
        let position = |name: &str| {
            challenges
                .iter()
                .position(|(scheme, _)| scheme.eq_ignore_ascii_case(name))
        };
        let at = position("bearer").or_else(|| position("dpop"))?;
        let (_, params) = challenges.into_iter().nth(at)?;
        let mut c = Challenge::default();
        for (name, value) in params {
            match name.to_ascii_lowercase().as_str() {
                "error" => c.error = Some(value),
                "error_description" => c.error_description = Some(value),
                "scope" => c.scope = Some(value),
                "resource_metadata" => c.resource_metadata = Some(value),
                _ => {}
            }
        }
        c.insufficient_scope = c.error.as_deref() == Some("insufficient_scope");
        Some(c)
    }
}

type Params = Vec<(String, String)>;

/// `#challenge` of RFC 9110 §11.6.1: `scheme [ 1*SP ( token68 / #auth-param ) ]`, comma-separated.
/// Returns `None` on any syntax error.
fn parse_challenges(input: &str) -> Option<Vec<(String, Params)>> {
    let mut p = Parser {
        s: input.as_bytes(),
        i: 0,
    };
    let mut out: Vec<(String, Params)> = Vec::new();
    p.skip_ows_commas();
    while !p.done() {
        let scheme = p.token()?;
        let mut params = Params::new();
        if p.skip_ows() > 0 && !p.done() && p.peek() != Some(b',') {
            // The first item after the scheme: an auth-param or a token68.
            let save = p.i;
            match p.param() {
                Some(param) => params.push(param),
                None => {
                    p.i = save;
                    p.token68()?;
                }
            }
        }
        // Further auth-params of this challenge, until the next challenge's scheme.
        loop {
            p.skip_ows();
            if p.done() {
                break;
            }
            if p.peek() != Some(b',') {
                return None;
            }
            p.skip_ows_commas();
            if p.done() {
                break;
            }
            let save = p.i;
            match p.param() {
                Some(param) => params.push(param),
                None => {
                    p.i = save;
                    break;
                }
            }
        }
        out.push((scheme, params));
    }
    Some(out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip_ows(&mut self) -> usize {
        let start = self.i;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
        self.i - start
    }

    fn skip_ows_commas(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.i += 1;
        }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> Option<String> {
        let start = self.i;
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        std::str::from_utf8(self.s.get(start..self.i)?)
            .ok()
            .map(str::to_owned)
    }

    fn token(&mut self) -> Option<String> {
        self.take_while(is_tchar)
    }

    /// `auth-param = token BWS "=" BWS ( token / quoted-string )`.
    fn param(&mut self) -> Option<(String, String)> {
        let name = self.token()?;
        self.skip_ows();
        if self.peek() != Some(b'=') {
            return None;
        }
        self.i += 1;
        self.skip_ows();
        let value = if self.peek() == Some(b'"') {
            self.quoted()?
        } else {
            self.token()?
        };
        Some((name, value))
    }

    /// `token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
    fn token68(&mut self) -> Option<()> {
        self.take_while(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))?;
        while self.peek() == Some(b'=') {
            self.i += 1;
        }
        Some(())
    }

    fn quoted(&mut self) -> Option<String> {
        // Opening quote.
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return String::from_utf8(out).ok();
                }
                b'\\' => {
                    self.i += 1;
                    out.push(self.peek()?);
                    self.i += 1;
                }
                b => {
                    out.push(b);
                    self.i += 1;
                }
            }
        }
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_with_all_params() {
        let c = Challenge::parse(
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp", error_description="need \"more\"""#,
        )
        .unwrap();
        assert!(c.insufficient_scope);
        assert_eq!(c.scope.as_deref(), Some("mcp:basic mcp:write"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("http://x/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.error_description.as_deref(), Some(r#"need "more""#));
    }

    #[test]
    fn scheme_and_names_are_case_insensitive_and_tokens_allowed() {
        let c = Challenge::parse("bearer Error=invalid_token, SCOPE=read").unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope.as_deref(), Some("read"));
        assert!(!c.insufficient_scope);
    }

    #[test]
    fn bare_bearer_and_other_schemes() {
        assert_eq!(Challenge::parse("Bearer"), Some(Challenge::default()));
        assert_eq!(Challenge::parse("Basic realm=\"x\""), None);
        let c = Challenge::parse(r#"Basic realm="a, b", Bearer scope="s""#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("s"));
        let c = Challenge::parse(r#"Negotiate abc==, Bearer resource_metadata="u""#).unwrap();
        assert_eq!(c.resource_metadata.as_deref(), Some("u"));
    }

    #[test]
    fn dpop_challenges() {
        let c = Challenge::parse(r#"DPoP error="use_dpop_nonce", resource_metadata="u""#).unwrap();
        assert_eq!(c.error.as_deref(), Some("use_dpop_nonce"));
        assert_eq!(c.resource_metadata.as_deref(), Some("u"));
        // With both, the Bearer challenge speaks.
        let c = Challenge::parse(r#"DPoP algs="ES256", Bearer scope="s""#).unwrap();
        assert_eq!(c.scope.as_deref(), Some("s"));
    }

    #[test]
    fn malformed_values_are_none() {
        assert_eq!(Challenge::parse(r#"Bearer scope="unterminated"#), None);
        assert_eq!(Challenge::parse("Bearer scope=\"\\"), None);
        assert_eq!(Challenge::parse(r#"Bearer scope="a" "b""#), None);
        assert_eq!(Challenge::parse("Bearer a=b c=d"), None);
        // `scope=` with no value is a token68, not a parameter.
        assert_eq!(
            Challenge::parse("Bearer scope="),
            Some(Challenge::default())
        );
        assert_eq!(Challenge::parse("\"Bearer\""), None);
        assert_eq!(Challenge::parse(""), None);
    }

    #[test]
    fn from_response_searches_every_header_and_marks_403_step_up() {
        let mut h = HeaderMap::new();
        h.append(
            header::WWW_AUTHENTICATE,
            "Basic realm=\"r\"".parse().unwrap(),
        );
        h.append(
            header::WWW_AUTHENTICATE,
            "Bearer scope=\"a b\"".parse().unwrap(),
        );
        let c = Challenge::from_response(StatusCode::FORBIDDEN, &h);
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert!(c.insufficient_scope);
        let c = Challenge::from_response(StatusCode::UNAUTHORIZED, &h);
        assert!(!c.insufficient_scope);
        let c = Challenge::from_response(StatusCode::UNAUTHORIZED, &HeaderMap::new());
        assert_eq!(c, Challenge::default());
    }
}
