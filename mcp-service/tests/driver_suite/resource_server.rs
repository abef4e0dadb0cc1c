//! The resource-server suite: an MCP server protected by `ServerBuilder::resource_server`,
//! served by the driver's `serve_http` (and `serve_ws`) on loopback, with a real authorization
//! server beside it (a hyper server serving a JWKS of keys generated at test time, and an RFC
//! 7662 introspection endpoint), its tokens signed with `jsonwebtoken`. Written once, generic
//! over the driver: each driver's `tests/resource_server.rs` includes it and instantiates
//! every scenario with [`resource_server_suite!`].

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use futures_util::StreamExt;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_proto::http::EndpointConfig;
use mcp_service::driver::{self, Driver, TcpConnector};
use mcp_service::oauth::Challenge;
use mcp_service::resource_server::{
    ClientAuth, ConnectorFetch, IntrospectionValidator, JwtValidator, ResourceServer, TokenError,
    TokenValidator,
};
use mcp_service::schema::{Resource, Tool};
use mcp_service::server::{ResourceContext, ToolContext, schema_of};
use mcp_service::{ClientOptions, ErrorKind, HttpClientOptions, Server};
use serde_json::{Value, json};

/// What a driver's test file supplies besides the runtime itself.
pub trait Env: Driver {
    /// `listener` as the driver's listener type.
    fn listener(&self, listener: TcpListener) -> Self::TcpListener;
}

/// Instantiates every scenario of this suite as `#[test]`s in a module `$module`, each run by
/// `$run(scenario)` (`$run` a function at the crate's root that builds the runtime and blocks
/// on the scenario).
#[macro_export]
macro_rules! resource_server_suite {
    ($module:ident, $run:ident) => {
        $crate::resource_server_suite!(@tests $module, $run;
            a_valid_jwt_reaches_the_handlers_with_its_identity,
            requests_without_a_valid_token_get_the_challenge,
            expired_early_foreign_and_forged_tokens_are_refused,
            the_metadata_document_is_served_at_both_paths,
            a_tool_scope_missing_is_a_step_up_403,
            the_stateless_era_is_checked_per_request_too,
            a_session_takes_only_its_own_identity,
            keys_rotate_and_unknown_kids_refetch_at_a_bounded_rate,
            introspection_with_client_auth_and_a_cache,
            the_websocket_upgrade_needs_a_token,
        );
    };
    (@tests $module:ident, $run:ident; $($name:ident),* $(,)?) => {
        mod $module {
            $(
                #[test]
                fn $name() {
                    super::$run(super::suite::$name)
                }
            )*
        }
    };
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An ES256 signing key generated now, and its public JWK under `kid`.
struct Key {
    kid: String,
    encoding: EncodingKey,
    jwk: Value,
}

impl Key {
    fn generate(kid: &str) -> Key {
        // PKCS#8 of a P-256 private key without its public part: a fixed prefix and the scalar.
        const PREFIX: &str =
            "3041020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420";
        let mut der: Vec<u8> = (0..PREFIX.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&PREFIX[i..i + 2], 16).unwrap())
            .collect();
        let mut scalar = [0u8; 32];
        getrandom::fill(&mut scalar).unwrap();
        scalar[0] &= 0x7f; // below the group order
        scalar[31] |= 1; // not zero
        der.extend_from_slice(&scalar);
        let encoding = EncodingKey::from_ec_der(&der);
        let mut jwk = serde_json::to_value(
            jsonwebtoken::jwk::Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap(),
        )
        .unwrap();
        jwk["kid"] = json!(kid);
        jwk["use"] = json!("sig");
        Key {
            kid: kid.to_owned(),
            encoding,
            jwk,
        }
    }

    fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

const ISSUER: &str = "https://auth.test";

/// The claims of a good token for `resource`, as `subject`, with `scope`.
fn claims(resource: &str, subject: &str, scope: &str) -> Value {
    let now = unix_now();
    json!({
        "iss": ISSUER, "sub": subject, "aud": resource, "client_id": "test-client",
        "scope": scope, "iat": now, "nbf": now - 5, "exp": now + 600,
    })
}

/// The authorization server's state: its JWKS, its introspection table and what it saw.
#[derive(Default)]
struct AuthState {
    jwks: Vec<Value>,
    jwks_fetches: usize,
    introspections: usize,
    active: HashMap<String, Value>,
    last_authorization: Option<String>,
    last_form: Option<String>,
}

/// A loopback authorization server: `GET /jwks.json`, `POST /introspect`.
struct AuthServer {
    base: String,
    state: Arc<Mutex<AuthState>>,
}

impl AuthServer {
    fn start<E: Env>(rt: &E) -> AuthServer {
        let std = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", std.local_addr().unwrap());
        let listener = rt.listener(std);
        let state = Arc::new(Mutex::new(AuthState::default()));
        let mut incoming = rt.incoming(listener).unwrap();
        let conn_rt = rt.clone();
        let shared = state.clone();
        rt.spawn(Box::pin(async move {
            while let Some(Ok((stream, _))) = incoming.next().await {
                let state = shared.clone();
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let state = state.clone();
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = body.collect().await.unwrap().to_bytes();
                        let mut s = state.lock().unwrap();
                        let (status, reply) = match (parts.method.clone(), parts.uri.path()) {
                            (Method::GET, "/jwks.json") => {
                                s.jwks_fetches += 1;
                                (StatusCode::OK, json!({"keys": s.jwks.clone()}))
                            }
                            (Method::POST, "/introspect") => {
                                s.introspections += 1;
                                s.last_authorization = parts
                                    .headers
                                    .get("authorization")
                                    .map(|v| v.to_str().unwrap().to_owned());
                                let form = String::from_utf8(body.to_vec()).unwrap();
                                s.last_form = Some(form.clone());
                                let token = url::form_urlencoded::parse(form.as_bytes())
                                    .find(|(k, _)| k == "token")
                                    .map(|(_, v)| v.into_owned())
                                    .unwrap_or_default();
                                let authorized = s.last_authorization.as_deref()
                                    == Some("Basic cnMtY2xpZW50OnMzY3IzdCUyMQ==");
                                match s.active.get(&token) {
                                    _ if !authorized => (
                                        StatusCode::UNAUTHORIZED,
                                        json!({"error": "invalid_client"}),
                                    ),
                                    Some(claims) => (StatusCode::OK, claims.clone()),
                                    None => (StatusCode::OK, json!({"active": false})),
                                }
                            }
                            _ => (StatusCode::NOT_FOUND, json!({})),
                        };
                        drop(s);
                        let mut r = http::Response::new(Full::new(Bytes::from(reply.to_string())));
                        *r.status_mut() = status;
                        r.headers_mut()
                            .insert("content-type", "application/json".parse().unwrap());
                        Ok::<_, std::convert::Infallible>(r)
                    }
                });
                conn_rt.spawn(Box::pin(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(E::hyper_io(stream), svc)
                        .await;
                }));
            }
        }));
        AuthServer { base, state }
    }

    fn publish(&self, keys: &[&Key]) {
        self.state.lock().unwrap().jwks = keys.iter().map(|k| k.jwk.clone()).collect();
    }

    fn jwks_fetches(&self) -> usize {
        self.state.lock().unwrap().jwks_fetches
    }
}

/// The protected server: `whoami` (open to any valid token), `write_note` (needs
/// `notes:write`), the resource `notes://secret` (needs `notes:read`).
fn server(rs: ResourceServer) -> Server {
    Server::builder("protected", "1.0")
        .resource_server(rs)
        .tool(
            Tool::new("whoami", schema_of(json!({"type": "object"}))),
            |_: Value, cx: ToolContext| async move {
                let id = cx.identity().cloned();
                let path = cx.http_request().map(|h| h.uri.path().to_owned());
                Ok(json!({
                    "subject": id.as_ref().and_then(|i| i.subject.clone()),
                    "client": id.as_ref().and_then(|i| i.client_id.clone()),
                    "scopes": id.as_ref().map(|i| i.scopes.clone()),
                    "issuer": id.as_ref().and_then(|i| i.issuer.clone()),
                    "claim_iat": id.as_ref().and_then(|i| i.claims.get("iat").cloned()),
                    "path": path,
                })
                .to_string())
            },
        )
        .tool(
            Tool::new("write_note", schema_of(json!({"type": "object"}))),
            |_: Value, _cx: ToolContext| async move { Ok("written") },
        )
        .tool_scopes("write_note", ["notes:write"])
        .resource(
            Resource::new("notes://secret", "secret"),
            |_uri: String, _cx: ResourceContext| async move { Ok("the secret") },
        )
        .resource_scopes("notes://secret", ["notes:read"])
        .build()
}

/// A protected server on loopback, its JWT validator pointed at `auth`.
struct Protected {
    url: String,
    port: u16,
    metadata_url: String,
}

fn jwt_validator<E: Env>(rt: &E, auth: &AuthServer, resource: &str) -> JwtValidator {
    JwtValidator::new(
        format!("{}/jwks.json", auth.base),
        ConnectorFetch::new(rt.clone(), TcpConnector(rt.clone())),
    )
    .issuer(ISSUER)
    .audience(resource)
}

/// Serves the protected server on a fresh loopback port, its validator made by `validator`
/// for the server's URL (the tokens' audience).
fn serve<E: Env, V: TokenValidator>(rt: &E, validator: impl FnOnce(&str) -> V) -> Protected {
    let std = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = std.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let rs = ResourceServer::new(&url, validator(&url))
        .unwrap()
        .authorization_server(ISSUER)
        .required_scopes(["mcp"])
        .scopes_supported(["notes:read", "notes:write"]);
    let metadata_url = rs.metadata_url().to_owned();
    let server = server(rs);
    let config = EndpointConfig::new(server.config().clone());
    let listener = rt.listener(std);
    let serving = rt.clone();
    rt.spawn(Box::pin(async move {
        let _ = driver::serve_http(serving, server, listener, config).await;
    }));
    Protected {
        url,
        port,
        metadata_url,
    }
}

/// One exchange on a fresh connection: status, headers, body text.
async fn send<E: Env>(
    rt: &E,
    port: u16,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (StatusCode, HeaderMap, String) {
    let stream = rt.connect_tcp("127.0.0.1", port).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(E::hyper_io(stream))
        .await
        .unwrap();
    rt.spawn(Box::pin(async move {
        let _ = conn.await;
    }));
    let mut b = Request::builder()
        .method(method)
        .uri(path)
        .header("host", format!("127.0.0.1:{port}"));
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let resp = sender
        .send_request(b.body(Full::new(Bytes::from(body.to_owned()))).unwrap())
        .await
        .unwrap();
    let (head, body) = resp.into_parts();
    let text = String::from_utf8(body.collect().await.unwrap().to_bytes().to_vec()).unwrap();
    (head.status, head.headers, text)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

fn post_headers(bearer: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
    ];
    if let Some(t) = bearer {
        h.push(("authorization", format!("Bearer {t}")));
    }
    h
}

/// POSTs `body` to `/mcp` with `bearer` and `extra` headers.
async fn post<E: Env>(
    rt: &E,
    p: &Protected,
    bearer: Option<&str>,
    extra: &[(&str, &str)],
    body: &str,
) -> (StatusCode, HeaderMap, String) {
    let owned = post_headers(bearer);
    let mut headers: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
    headers.extend_from_slice(extra);
    send(rt, p.port, Method::POST, "/mcp", &headers, body).await
}

/// The reply's `Bearer` challenge.
fn challenge(status: StatusCode, headers: &HeaderMap) -> Challenge {
    assert!(
        headers.get("www-authenticate").is_some(),
        "a {status} without WWW-Authenticate"
    );
    Challenge::from_response(status, headers)
}

/// A client through the driver's `connect_http` with `token`.
async fn client<E: Env>(
    rt: &E,
    p: &Protected,
    token: &str,
) -> Result<mcp_service::Client, mcp_service::Error> {
    driver::connect_http(
        rt.clone(),
        &p.url,
        ClientOptions::new("suite", "1"),
        HttpClientOptions::new().bearer(token),
    )
    .await
}

pub async fn a_valid_jwt_reaches_the_handlers_with_its_identity<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let key = Key::generate("k1");
    auth.publish(&[&key]);
    let p = serve(&rt, |url| jwt_validator(&rt, &auth, url));
    let token = key.sign(&claims(&p.url, "alice", "mcp notes:read"));
    let c = client(&rt, &p, &token)
        .await
        .expect("connects with the token");
    let out = c.call_tool("whoami", json!({})).await.unwrap();
    let text = out.content[0].as_text().unwrap().to_owned();
    let who: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(who["subject"], "alice");
    assert_eq!(who["client"], "test-client");
    assert_eq!(who["issuer"], ISSUER);
    assert_eq!(who["scopes"], json!(["mcp", "notes:read"]));
    assert!(who["claim_iat"].is_u64(), "every claim is there: {who}");
    assert_eq!(who["path"], "/mcp", "the HTTP request head too");
    let read = c.read_resource("notes://secret").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents).unwrap()[0]["text"],
        "the secret"
    );
    c.shutdown().await;
}

pub async fn requests_without_a_valid_token_get_the_challenge<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let key = Key::generate("k1");
    auth.publish(&[&key]);
    let p = serve(&rt, |url| jwt_validator(&rt, &auth, url));
    // No token: 401, the challenge names the metadata and the server's scope, no error.
    let (status, headers, body) = post(&rt, &p, None, &[], INIT).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let c = challenge(status, &headers);
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some(p.metadata_url.as_str())
    );
    assert_eq!(c.scope.as_deref(), Some("mcp"));
    assert_eq!(c.error, None);
    // A token that is not a JWT, and a malformed header: 401 invalid_token.
    for bad in ["Bearer not-a-jwt", "Bearer a b"] {
        let (status, headers, _) = send(
            &rt,
            p.port,
            Method::POST,
            "/mcp",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("authorization", bad),
            ],
            INIT,
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{bad}");
        let c = challenge(status, &headers);
        assert_eq!(c.error.as_deref(), Some("invalid_token"), "{bad}");
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some(p.metadata_url.as_str())
        );
    }
    // GET and DELETE are protected as well.
    for m in [Method::GET, Method::DELETE] {
        let (status, headers, _) = send(
            &rt,
            p.port,
            m.clone(),
            "/mcp",
            &[("accept", "text/event-stream")],
            "",
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{m}");
        assert!(challenge(status, &headers).resource_metadata.is_some());
    }
    // A valid token without the server's own scope: 403 insufficient_scope.
    let token = key.sign(&claims(&p.url, "alice", "notes:read"));
    let (status, headers, _) = post(&rt, &p, Some(&token), &[], INIT).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let c = challenge(status, &headers);
    assert!(c.insufficient_scope);
    assert_eq!(c.scope.as_deref(), Some("mcp"));
    // Our own client is refused with Unauthorized.
    let e = client(&rt, &p, "not-a-jwt").await.expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Unauthorized, "{e}");
}

pub async fn expired_early_foreign_and_forged_tokens_are_refused<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let key = Key::generate("k1");
    auth.publish(&[&key]);
    let p = serve(&rt, |url| jwt_validator(&rt, &auth, url));
    let good = claims(&p.url, "alice", "mcp");
    let now = unix_now();
    let with = |k: &str, v: Value| {
        let mut c = good.clone();
        c[k] = v;
        c
    };
    let without = |k: &str| {
        let mut c = good.clone();
        c.as_object_mut().unwrap().remove(k);
        c
    };
    // The same kid, another key: a forged signature.
    let forger = Key::generate("k1");
    let cases = [
        (
            "expired",
            key.sign(&with("exp", json!(now - 120))),
            "expired",
        ),
        (
            "not yet valid",
            key.sign(&with("nbf", json!(now + 600))),
            "not valid yet",
        ),
        (
            "another audience",
            key.sign(&with("aud", json!("http://other.example/mcp"))),
            "this resource",
        ),
        ("no audience", key.sign(&without("aud")), "aud"),
        (
            "another issuer",
            key.sign(&with("iss", json!("https://evil.test"))),
            "issuer",
        ),
        ("no expiry", key.sign(&without("exp")), "exp"),
        ("forged", forger.sign(&good), "signature"),
    ];
    for (what, token, says) in cases {
        let (status, headers, body) = post(&rt, &p, Some(&token), &[], INIT).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {body}");
        let c = challenge(status, &headers);
        assert_eq!(c.error.as_deref(), Some("invalid_token"), "{what}");
        let description = c.error_description.unwrap_or_default();
        assert!(description.contains(says), "{what}: {description}");
    }
    // And the good one passes.
    let (status, _, body) = post(&rt, &p, Some(&key.sign(&good)), &[], INIT).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

pub async fn the_metadata_document_is_served_at_both_paths<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let p = serve(&rt, |url| jwt_validator(&rt, &auth, url));
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let (status, headers, body) = send(&rt, p.port, Method::GET, path, &[], "").await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(headers["access-control-allow-origin"], "*");
        let doc: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(doc["resource"], p.url.as_str());
        assert_eq!(doc["authorization_servers"], json!([ISSUER]));
        assert_eq!(
            doc["scopes_supported"],
            json!(["mcp", "notes:read", "notes:write"])
        );
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
    assert!(
        p.metadata_url
            .ends_with("/.well-known/oauth-protected-resource/mcp")
    );
    // Our OAuth client's discovery reads it as RFC 9728 says.
    let (status, _, body) = send(
        &rt,
        p.port,
        Method::POST,
        "/.well-known/oauth-protected-resource",
        &[],
        "",
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
}

pub async fn a_tool_scope_missing_is_a_step_up_403<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let key = Key::generate("k1");
    auth.publish(&[&key]);
    let p = serve(&rt, |url| jwt_validator(&rt, &auth, url));
    let reader = key.sign(&claims(&p.url, "alice", "mcp notes:read"));
    let c = client(&rt, &p, &reader).await.unwrap();
    // Through our client: the call is refused (the 403 becomes Unauthorized).
    let e = c
        .call_tool("write_note", json!({}))
        .await
        .expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Unauthorized, "{e}");
    // The tool open to every token still works on the same session.
    c.call_tool("whoami", json!({})).await.unwrap();
    c.shutdown().await;
    // On the wire: a session of the reader's, then the call.
    let (status, headers, _) = post(&rt, &p, Some(&reader), &[], INIT).await;
    assert_eq!(status, StatusCode::OK);
    let sid = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        post(&rt, &p, Some(&reader), &session, initialized).await.0,
        StatusCode::ACCEPTED
    );
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_note","arguments":{}}}"#;
    let (status, headers, body) = post(&rt, &p, Some(&reader), &session, call).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let ch = challenge(status, &headers);
    assert!(ch.insufficient_scope);
    assert_eq!(ch.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(ch.scope.as_deref(), Some("mcp notes:write"));
    assert_eq!(
        ch.resource_metadata.as_deref(),
        Some(p.metadata_url.as_str())
    );
    // The body is the request's JSON-RPC error beside the challenge.
    let rpc: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(rpc["id"], 2);
    assert_eq!(rpc["error"]["code"], -32001);
    assert_eq!(rpc["error"]["data"]["error"], "insufficient_scope");
    // A resource the token lacks the scope of.
    let writer = key.sign(&claims(&p.url, "alice", "mcp notes:write"));
    let read =
        r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"notes://secret"}}"#;
    let (status, headers, _) = post(&rt, &p, Some(&writer), &session, read).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        challenge(status, &headers).scope.as_deref(),
        Some("mcp notes:read")
    );
    // With the scope (a stepped-up token of the same user and client keeps the session).
    let (status, _, body) = post(&rt, &p, Some(&writer), &session, call).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("written"), "{body}");
    // A batch (2025-03-26) is refused whole when one of its calls lacks a scope.
    let init_0326 = INIT.replace("2025-11-25", "2025-03-26");
    let (status, headers, _) = post(&rt, &p, Some(&reader), &[], &init_0326).await;
    assert_eq!(status, StatusCode::OK);
    let sid = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-03-26"),
    ];
    assert_eq!(
        post(&rt, &p, Some(&reader), &session, initialized).await.0,
        StatusCode::ACCEPTED
    );
    let batch = r#"[{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"whoami","arguments":{}}},
        {"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"write_note","arguments":{}}}]"#;
    let (status, headers, _) = post(&rt, &p, Some(&reader), &session, batch).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        challenge(status, &headers).scope.as_deref(),
        Some("mcp notes:write")
    );
    let (status, _, body) = post(&rt, &p, Some(&writer), &session, batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("written") && body.contains("alice"), "{body}");
}

pub async fn the_stateless_era_is_checked_per_request_too<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let key = Key::generate("k1");
    auth.publish(&[&key]);
    let p = serve(&rt, |url| jwt_validator(&rt, &auth, url));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let call = |tool: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": meta}})
        .to_string()
    };
    let reader = key.sign(&claims(&p.url, "bob", "mcp"));
    let headers = |tool: &'static str| -> Vec<(&'static str, &'static str)> {
        vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", tool),
        ]
    };
    let (status, h, body) = post(
        &rt,
        &p,
        Some(&reader),
        &headers("write_note"),
        &call("write_note"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        challenge(status, &h).scope.as_deref(),
        Some("mcp notes:write")
    );
    let (status, _, body) = post(&rt, &p, Some(&reader), &headers("whoami"), &call("whoami")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("bob"), "{body}");
    let (status, h, _) = post(&rt, &p, None, &headers("whoami"), &call("whoami")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(challenge(status, &h).resource_metadata.is_some());
}

pub async fn a_session_takes_only_its_own_identity<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let key = Key::generate("k1");
    auth.publish(&[&key]);
    let p = serve(&rt, |url| jwt_validator(&rt, &auth, url));
    let alice = key.sign(&claims(&p.url, "alice", "mcp"));
    let bob = key.sign(&claims(&p.url, "bob", "mcp"));
    let (status, headers, _) = post(&rt, &p, Some(&alice), &[], INIT).await;
    assert_eq!(status, StatusCode::OK);
    let sid = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let session = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    // Bob's valid token on Alice's session: no such session for him.
    let (status, _, body) = post(&rt, &p, Some(&bob), &session, initialized).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, _, _) = post(&rt, &p, Some(&bob), &session, list).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Another client of Alice's is another principal too.
    let mut other = claims(&p.url, "alice", "mcp");
    other["client_id"] = json!("another-client");
    let (status, _, _) = post(&rt, &p, Some(&key.sign(&other)), &session, list).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Alice (with a fresh token) goes on.
    assert_eq!(
        post(&rt, &p, Some(&alice), &session, initialized).await.0,
        StatusCode::ACCEPTED
    );
    let (status, _, body) = post(
        &rt,
        &p,
        Some(&key.sign(&claims(&p.url, "alice", "mcp"))),
        &session,
        list,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("whoami"), "{body}");
}

pub async fn keys_rotate_and_unknown_kids_refetch_at_a_bounded_rate<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let old = Key::generate("old");
    let new = Key::generate("new");
    auth.publish(&[&old]);
    let resource = "http://127.0.0.1:1/mcp";
    let fetch = || ConnectorFetch::new(rt.clone(), TcpConnector(rt.clone()));
    let rotating = JwtValidator::new(format!("{}/jwks.json", auth.base), fetch())
        .issuer(ISSUER)
        .audience(resource)
        .refresh_interval(Duration::ZERO)
        .verified_cache(Duration::ZERO, 0);
    let good = |k: &Key| k.sign(&claims(resource, "alice", "mcp"));
    let id = rotating.validate(good(&old)).await.unwrap();
    assert_eq!(id.subject.as_deref(), Some("alice"));
    assert_eq!(auth.jwks_fetches(), 1);
    // Cached: no fetch for the next token.
    rotating.validate(good(&old)).await.unwrap();
    assert_eq!(auth.jwks_fetches(), 1);
    // The authorization server rotates: a token of the new key refetches the set.
    auth.publish(&[&new]);
    rotating.validate(good(&new)).await.unwrap();
    assert_eq!(auth.jwks_fetches(), 2);
    // The old key is gone from the set: its tokens are refused now.
    let e = rotating.validate(good(&old)).await.unwrap_err();
    assert!(matches!(e, TokenError::Invalid(_)), "{e:?}");

    // With the verified-token cache (the default), a token verified once is remembered: it
    // still passes for a while after its key left the set; another token of that key does not.
    auth.publish(&[&old]);
    let remembering = JwtValidator::new(format!("{}/jwks.json", auth.base), fetch())
        .issuer(ISSUER)
        .audience(resource)
        .refresh_interval(Duration::ZERO);
    let seen = good(&old);
    remembering.validate(seen.clone()).await.unwrap();
    auth.publish(&[&new]);
    remembering.validate(good(&new)).await.unwrap();
    let fetched = auth.jwks_fetches();
    remembering.validate(seen).await.expect("remembered");
    assert_eq!(
        auth.jwks_fetches(),
        fetched,
        "a remembered token needs no key"
    );
    let other = old.sign(&claims(resource, "bob", "mcp"));
    assert!(remembering.validate(other).await.is_err());

    // With the default refresh interval, made-up kids cost one fetch, not one each.
    let bounded = JwtValidator::new(format!("{}/jwks.json", auth.base), fetch())
        .issuer(ISSUER)
        .audience(resource);
    bounded.validate(good(&new)).await.unwrap();
    let before = auth.jwks_fetches();
    for i in 0..5 {
        let stranger = Key::generate(&format!("made-up-{i}"));
        let e = bounded.validate(good(&stranger)).await.unwrap_err();
        assert!(
            matches!(e, TokenError::Invalid(ref d) if d.contains("made-up")),
            "{e:?}"
        );
    }
    assert_eq!(
        auth.jwks_fetches(),
        before,
        "no refetch within the refresh interval of the last fetch"
    );
    // An unreachable JWKS is not the token's fault.
    let nowhere = JwtValidator::new("http://127.0.0.1:1/jwks.json", fetch())
        .issuer(ISSUER)
        .audience(resource);
    let e = nowhere.validate(good(&new)).await.unwrap_err();
    assert!(matches!(e, TokenError::Unavailable(_)), "{e:?}");
}

pub async fn introspection_with_client_auth_and_a_cache<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let introspect = format!("{}/introspect", auth.base);
    let secret_auth = ClientAuth::Basic {
        client_id: "rs-client".into(),
        client_secret: "s3cr3t!".into(),
    };
    let p = serve(&rt, |url| {
        IntrospectionValidator::new(
            introspect.clone(),
            ConnectorFetch::new(rt.clone(), TcpConnector(rt.clone())),
            secret_auth.clone(),
        )
        .issuer(ISSUER)
        .audience(url)
    });
    let now = unix_now();
    {
        let mut s = auth.state.lock().unwrap();
        s.active.insert(
            "opaque-good".into(),
            json!({"active": true, "sub": "carol", "client_id": "c", "scope": "mcp notes:write",
                "aud": [p.url.clone()], "iss": ISSUER, "exp": now + 600}),
        );
        s.active.insert(
            "opaque-elsewhere".into(),
            json!({"active": true, "sub": "carol", "scope": "mcp", "aud": "http://other/mcp", "iss": ISSUER, "exp": now + 600}),
        );
        s.active.insert(
            "opaque-expired".into(),
            json!({"active": true, "sub": "carol", "scope": "mcp", "aud": p.url.clone(), "iss": ISSUER, "exp": now - 600}),
        );
    }
    let c = client(&rt, &p, "opaque-good")
        .await
        .expect("an active token");
    let out = c.call_tool("write_note", json!({})).await.unwrap();
    assert_eq!(out.content[0].as_text(), Some("written"));
    let who = c.call_tool("whoami", json!({})).await.unwrap();
    assert!(who.content[0].as_text().unwrap().contains("carol"));
    c.shutdown().await;
    {
        let s = auth.state.lock().unwrap();
        // client_secret_basic: the form-encoded id and secret ("s3cr3t!" → "s3cr3t%21").
        assert_eq!(
            s.last_authorization.as_deref(),
            Some("Basic cnMtY2xpZW50OnMzY3IzdCUyMQ==")
        );
        let form = s.last_form.clone().unwrap();
        assert!(
            form.contains("token=opaque-good") && form.contains("token_type_hint=access_token"),
            "{form}"
        );
        // Several requests of the session, one introspection: the answer is cached.
        assert_eq!(s.introspections, 1, "cached");
    }
    for (token, says) in [
        ("opaque-unknown", "not active"),
        ("opaque-elsewhere", "this resource"),
        ("opaque-expired", "expired"),
    ] {
        let (status, headers, _) = post(&rt, &p, Some(token), &[], INIT).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{token}");
        let ch = challenge(status, &headers);
        assert_eq!(ch.error.as_deref(), Some("invalid_token"));
        assert!(
            ch.error_description.unwrap_or_default().contains(says),
            "{token}"
        );
    }
    // A resource server with the wrong secret: the endpoint refuses it, and the request is
    // answered 503 (the token is not to blame).
    let wrong = serve(&rt, |url| {
        IntrospectionValidator::new(
            introspect.clone(),
            ConnectorFetch::new(rt.clone(), TcpConnector(rt.clone())),
            ClientAuth::Basic {
                client_id: "rs-client".into(),
                client_secret: "guess".into(),
            },
        )
        .audience(url)
    });
    let (status, headers, _) = post(&rt, &wrong, Some("opaque-good"), &[], INIT).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(headers.get("retry-after").is_some());
}

pub async fn the_websocket_upgrade_needs_a_token<E: Env>(rt: E) {
    let auth = AuthServer::start(&rt);
    let key = Key::generate("k1");
    auth.publish(&[&key]);
    let std = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = std.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/ws");
    let rs = ResourceServer::new(&url, jwt_validator(&rt, &auth, &url))
        .unwrap()
        .required_scopes(["mcp"]);
    let server = server(rs);
    let listener = rt.listener(std);
    let serving = rt.clone();
    rt.spawn(Box::pin(async move {
        let _ = driver::serve_ws(serving, server, listener).await;
    }));
    let upgrade = |bearer: Option<String>| {
        let mut h = vec![
            ("connection", "Upgrade".to_owned()),
            ("upgrade", "websocket".to_owned()),
            ("sec-websocket-version", "13".to_owned()),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==".to_owned()),
            ("sec-websocket-protocol", "mcp".to_owned()),
        ];
        if let Some(t) = bearer {
            h.push(("authorization", format!("Bearer {t}")));
        }
        h
    };
    let h = upgrade(None);
    let refs: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, headers, _) = send(&rt, port, Method::GET, "/ws", &refs, "").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        challenge(status, &headers)
            .resource_metadata
            .unwrap()
            .ends_with("/.well-known/oauth-protected-resource/ws")
    );
    let h = upgrade(Some(key.sign(&claims(&url, "alice", "mcp"))));
    let refs: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let stream = rt.connect_tcp("127.0.0.1", port).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(E::hyper_io(stream))
        .await
        .unwrap();
    rt.spawn(Box::pin(async move {
        let _ = conn.with_upgrades().await;
    }));
    let mut b = Request::builder()
        .uri("/ws")
        .header("host", format!("127.0.0.1:{port}"));
    for (k, v) in refs {
        b = b.header(k, v);
    }
    let resp = sender
        .send_request(b.body(Full::new(Bytes::new())).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SWITCHING_PROTOCOLS);
    // A client over the upgraded connection: the handlers see the upgrade's identity, and the
    // tool scopes hold per call (the token lacks `notes:write`).
    let ws_url = format!("ws://127.0.0.1:{port}/ws");
    let mut target = mcp_service::ws::client_request(&ws_url).unwrap();
    let bearer = format!("Bearer {}", key.sign(&claims(&url, "dave", "mcp")));
    target
        .request
        .headers_mut()
        .insert("authorization", bearer.parse().unwrap());
    let tcp = rt.connect_tcp("127.0.0.1", port).await.unwrap();
    let c = mcp_service::ws::connect_over(
        rt.clone(),
        tcp,
        &ws_url,
        target,
        ClientOptions::new("suite", "1"),
    )
    .await
    .expect("connects with the token");
    let out = c.call_tool("whoami", json!({})).await.unwrap();
    let who: Value = serde_json::from_str(out.content[0].as_text().unwrap()).unwrap();
    assert_eq!(who["subject"], "dave");
    assert_eq!(who["path"], "/ws");
    let e = c
        .call_tool("write_note", json!({}))
        .await
        .expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Unauthorized, "{e}");
    assert!(e.message().contains("notes:write"), "{e}");
    c.shutdown().await;
    let (status, _, body) = send(
        &rt,
        port,
        Method::GET,
        "/.well-known/oauth-protected-resource/ws",
        &[],
        "",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains(&url), "{body}");
}
