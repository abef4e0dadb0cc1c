//! The bearer token of a request and the `WWW-Authenticate` challenge of a refusal (RFC 6750
//! §2.1 and §3, RFC 9728 §5.1): header grammar only, no IO.

use http::{HeaderMap, HeaderValue, StatusCode, header};

/// The bearer token of a request's `Authorization` header (RFC 6750 §2.1; the scheme is
/// case-insensitive): `Ok(None)` when there is no `Authorization` header or it has another
/// scheme (the request then lacks a token), `Err` with the reason when the header is
/// malformed (a `Bearer` without a token, characters outside `token68`, two `Authorization`
/// headers). Tokens in the query string or the body are never read (the MCP specification
/// forbids them).
///
/// ```
/// use mcp_service::resource_server::bearer_token;
///
/// let mut headers = http::HeaderMap::new();
/// assert_eq!(bearer_token(&headers), Ok(None));
/// headers.insert("authorization", "Bearer abc.def-ghi".parse().unwrap());
/// assert_eq!(bearer_token(&headers), Ok(Some("abc.def-ghi")));
/// headers.insert("authorization", "Bearer a b".parse().unwrap());
/// assert!(bearer_token(&headers).is_err());
/// ```
///
/// # Errors
/// A static description of what is malformed (the `error_description` of the 401).
pub fn bearer_token(headers: &HeaderMap) -> Result<Option<&str>, &'static str> {
    let mut all = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err("more than one Authorization header");
    }
    let value = value
        .to_str()
        .map_err(|_| "the Authorization header is not visible ASCII")?
        .trim();
    let (scheme, rest) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    let token = rest.trim_start_matches(' ');
    if token.is_empty() {
        return Err("the Bearer credentials are empty");
    }
    let body = token.trim_end_matches('=');
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
    {
        return Err("the Bearer token is malformed (not token68)");
    }
    Ok(Some(token))
}

/// A `Bearer` challenge with `params` as quoted-string parameters (RFC 9110 §11.6.1):
/// `"` and `\` escaped, characters a header cannot carry replaced by `?`.
///
/// ```
/// use mcp_service::resource_server::bearer_challenge;
///
/// assert_eq!(
///     bearer_challenge(&[("error", "insufficient_scope"), ("scope", "notes:write")]),
///     r#"Bearer error="insufficient_scope", scope="notes:write""#,
/// );
/// ```
pub fn bearer_challenge(params: &[(&str, &str)]) -> String {
    let mut out = String::from("Bearer");
    for (i, (name, value)) in params.iter().enumerate() {
        out.push_str(if i == 0 { " " } else { ", " });
        out.push_str(name);
        out.push_str("=\"");
        for c in value.chars() {
            match c {
                '"' | '\\' => {
                    out.push('\\');
                    out.push(c);
                }
                ' '..='~' => out.push(c),
                '\t' => out.push(' '),
                _ => out.push('?'),
            }
        }
        out.push('"');
    }
    out
}

/// A refusal with its challenge and a small JSON body (as the official SDKs send).
pub(super) fn reply(
    status: StatusCode,
    params: &[(&str, &str)],
    body: &serde_json::Value,
) -> http::Response<Vec<u8>> {
    let mut r = http::Response::new(body.to_string().into_bytes());
    *r.status_mut() = status;
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&bearer_challenge(params)) {
        h.insert(header::WWW_AUTHENTICATE, v);
    }
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::AUTHORIZATION, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn bearer_tokens_are_read_from_the_header_only() {
        assert_eq!(bearer_token(&with(&["bearer tok=="])), Ok(Some("tok==")));
        assert_eq!(
            bearer_token(&with(&["BEARER   a/b+c~"])),
            Ok(Some("a/b+c~"))
        );
        assert_eq!(bearer_token(&with(&["Basic dXNlcjpw"])), Ok(None));
        assert!(bearer_token(&with(&["Bearer"])).is_err());
        assert!(bearer_token(&with(&["Bearer ="])).is_err());
        assert!(bearer_token(&with(&["Bearer a\"b"])).is_err());
        assert!(bearer_token(&with(&["Bearer a", "Bearer b"])).is_err());
    }

    #[test]
    fn challenges_quote_and_escape() {
        assert_eq!(
            bearer_challenge(&[("error_description", "say \"hi\" \\ é\u{7}")]),
            r#"Bearer error_description="say \"hi\" \\ ??""#
        );
        assert_eq!(bearer_challenge(&[]), "Bearer");
    }
}
