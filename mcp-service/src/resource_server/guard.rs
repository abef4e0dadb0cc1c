//! The resource server in front of the HTTP engine: the metadata document, the token check
//! before a request reaches its session, and the scopes of the calls in a POST.

use std::borrow::Cow;
use std::sync::Arc;

use http::request::Parts;
use http::{HeaderValue, Method, StatusCode, header};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::{ResourceServer, TokenError, bearer_token};
use crate::Server;

/// A reply refusing a request (boxed: it is the rare path).
pub(crate) type Refusal = Box<http::Response<Vec<u8>>>;

/// A [`ResourceServer`] guarding one server's HTTP endpoint.
#[derive(Clone, Debug)]
pub(crate) struct Guard {
    rs: Arc<ResourceServer>,
    server: Server,
}

/// One JSON-RPC message of a POST, as far as scopes care.
#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

impl Guard {
    /// The guard of `server`'s HTTP endpoints, when it has a resource server.
    pub(crate) fn of(server: &Server) -> Option<Arc<Self>> {
        let rs = server.resource_server()?.clone();
        Some(Arc::new(Guard {
            rs,
            server: server.clone(),
        }))
    }

    /// The metadata document, for a request to one of its paths (public: no token needed,
    /// any origin may read it).
    pub(crate) fn metadata(&self, parts: &Parts) -> Option<http::Response<Vec<u8>>> {
        let path = parts.uri.path();
        if !self.rs.metadata_paths().iter().any(|p| p == path) {
            return None;
        }
        let mut r = match parts.method {
            Method::GET | Method::HEAD => {
                let body = serde_json::to_vec(self.rs.metadata()).unwrap_or_default();
                let mut r = http::Response::new(if parts.method == Method::HEAD {
                    Vec::new()
                } else {
                    body
                });
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                r.headers_mut().insert(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("public, max-age=3600"),
                );
                r
            }
            Method::OPTIONS => {
                let mut r = http::Response::new(Vec::new());
                *r.status_mut() = StatusCode::NO_CONTENT;
                r.headers_mut().insert(
                    header::ACCESS_CONTROL_ALLOW_METHODS,
                    HeaderValue::from_static("GET, HEAD, OPTIONS"),
                );
                r
            }
            _ => {
                let mut r = http::Response::new(Vec::new());
                *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
                r
            }
        };
        let h = r.headers_mut();
        h.insert(
            header::ALLOW,
            HeaderValue::from_static("GET, HEAD, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        Some(r)
    }

    /// Checks the request's token (not for a CORS preflight, which carries none): on
    /// success the [`Identity`](super::Identity) and its
    /// [`SessionOwner`](mcp_proto::http::SessionOwner) go into the request's extensions.
    pub(crate) async fn authenticate(&self, parts: &mut Parts) -> Result<(), Refusal> {
        if parts.method == Method::OPTIONS {
            return Ok(());
        }
        let token = match bearer_token(&parts.headers) {
            Ok(Some(t)) => t.to_owned(),
            Ok(None) => return Err(Box::new(self.rs.unauthorized(None))),
            Err(why) => return Err(Box::new(self.rs.unauthorized(Some(why)))),
        };
        let identity = match self.rs.validate(token).await {
            Ok(id) => id,
            Err(TokenError::Invalid(why)) => {
                tracing::debug!(target: "mcp", reason = %why, "bearer token refused");
                return Err(Box::new(self.rs.unauthorized(Some(&why))));
            }
            Err(TokenError::Unavailable(why)) => {
                let mut r = http::Response::new(
                    serde_json::json!({"error": "temporarily_unavailable", "error_description": why})
                        .to_string()
                        .into_bytes(),
                );
                *r.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                return Err(Box::new(r));
            }
        };
        if !identity.missing_scopes(self.rs.scopes()).is_empty() {
            return Err(Box::new(self.rs.insufficient_scope(&[])));
        }
        parts
            .extensions
            .insert(mcp_proto::http::SessionOwner(identity.session_key()));
        parts.extensions.insert(identity);
        Ok(())
    }

    /// A refusal of a POST holding one request: its body becomes that request's JSON-RPC
    /// error (-32001, the OAuth error as its `data`), so that a client reading the reply as
    /// the answer to its request (the 2026-07-28 era answers errors with their status and the
    /// request's id) sees the refusal; the status and `WWW-Authenticate` challenge stay. Any
    /// other body (a batch, notifications, nonsense) keeps the OAuth error body.
    pub(crate) fn with_rpc_error(
        &self,
        mut reply: http::Response<Vec<u8>>,
        body: &[u8],
    ) -> http::Response<Vec<u8>> {
        #[derive(Deserialize)]
        struct Request<'a> {
            #[serde(borrow, default)]
            id: Option<&'a RawValue>,
            #[serde(borrow, default)]
            method: Option<Cow<'a, str>>,
        }
        if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return reply;
        }
        let Ok(Request {
            id: Some(id),
            method: Some(_),
        }) = serde_json::from_slice::<Request<'_>>(body)
        else {
            return reply;
        };
        let Ok(id) = serde_json::from_str::<serde_json::Value>(id.get()) else {
            return reply;
        };
        if !(id.is_string() || id.is_number()) {
            return reply;
        }
        let oauth: serde_json::Value = serde_json::from_slice(reply.body()).unwrap_or_default();
        let message = oauth
            .get("error_description")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("unauthorized")
            .to_owned();
        let rpc = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32001, "message": message, "data": oauth},
        });
        *reply.body_mut() = rpc.to_string().into_bytes();
        reply
    }

    /// Checks the scopes of the calls a POST carries (a batch is refused whole when any of
    /// its calls lacks one): the step-up 403 names every scope the POST needs. A body that
    /// does not parse is left to the endpoint (which answers it 400).
    pub(crate) fn authorize_body(&self, parts: &Parts, body: &[u8]) -> Result<(), Refusal> {
        if parts.method != Method::POST || !self.server.has_scoped_items() {
            return Ok(());
        }
        let batch = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        let probes = if batch {
            serde_json::from_slice::<Vec<Probe<'_>>>(body).ok()
        } else {
            serde_json::from_slice::<Probe<'_>>(body)
                .ok()
                .map(|p| vec![p])
        };
        let Some(probes) = probes else {
            return Ok(());
        };
        let identity = parts.extensions.get::<super::Identity>();
        let mut needed: Vec<String> = Vec::new();
        let mut refused = false;
        for p in &probes {
            let Some(method) = p.method.as_deref() else {
                continue;
            };
            let scopes = self.server.required_scopes(method, p.params);
            if scopes.is_empty() {
                continue;
            }
            if identity.is_none_or(|id| !id.missing_scopes(&scopes).is_empty()) {
                refused = true;
            }
            for s in scopes {
                if !needed.contains(&s) {
                    needed.push(s);
                }
            }
        }
        if refused {
            tracing::debug!(target: "mcp", ?needed, "request refused: insufficient scope");
            return Err(Box::new(self.rs.insufficient_scope(&needed)));
        }
        Ok(())
    }
}
