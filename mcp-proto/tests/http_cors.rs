//! CORS on the Streamable HTTP endpoint: preflights, the headers of replies to allowed
//! cross-origin requests, and none of them for a refused origin or with CORS off.
#![cfg(feature = "http")]

use http::request::Parts;
use http::{Response, StatusCode};
use mcp_proto::http::{AllowList, Body, Cors, Endpoint, EndpointConfig, LegacySse};
use mcp_proto::session::Config;
use mcp_proto::{Duration, Instant};
use serde_json::json;

const PAGE: &str = "http://localhost:8000";

fn endpoint(config: EndpointConfig) -> Endpoint {
    Endpoint::new(config)
}

/// Only the page's origin may call, with CORS on.
fn cors_config() -> EndpointConfig {
    EndpointConfig::new(Config::new("cors-test", "1.0"))
        .allowed_origins(AllowList::Only(vec![PAGE.into()]))
        .cors(Some(Cors::new()))
}

fn request(method: &str, path: &str, origin: Option<&str>) -> http::request::Builder {
    let mut b = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "127.0.0.1:8080");
    if let Some(o) = origin {
        b = b.header("origin", o);
    }
    b
}

fn preflight(origin: &str, requested: Option<&str>) -> Parts {
    let mut b =
        request("OPTIONS", "/mcp", Some(origin)).header("access-control-request-method", "POST");
    if let Some(r) = requested {
        b = b.header("access-control-request-headers", r);
    }
    b.body(()).unwrap().into_parts().0
}

fn initialize(origin: Option<&str>) -> (Parts, Vec<u8>) {
    let parts = request("POST", "/mcp", origin)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let body = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"page","version":"0"}}});
    (parts, body.to_string().into_bytes())
}

fn header<'a>(r: &'a Response<Body>, name: &str) -> Option<&'a str> {
    r.headers().get(name).map(|v| v.to_str().unwrap())
}

fn cors_headers(r: &Response<Body>) -> Vec<String> {
    r.headers()
        .keys()
        .filter(|k| k.as_str().starts_with("access-control-"))
        .map(|k| k.as_str().to_owned())
        .collect()
}

const RANDOM: Option<u128> = Some(0x0123_4567_89ab_cdef_0011_2233_4455_6677);

#[test]
fn a_preflight_from_an_allowed_origin_is_answered_with_what_it_asked_for() {
    let mut ep = endpoint(cors_config());
    let requested =
        "content-type, mcp-protocol-version, Mcp-Method, mcp-name, mcp-param-region, x-secret";
    let r = ep.handle_request(Instant::ZERO, &preflight(PAGE, Some(requested)), b"", None);
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(r.body(), &Body::Empty);
    assert_eq!(header(&r, "access-control-allow-origin"), Some(PAGE));
    assert_eq!(header(&r, "vary"), Some("Origin"));
    assert_eq!(
        header(&r, "access-control-allow-methods"),
        Some("GET, POST, DELETE")
    );
    // Every requested header but the one MCP does not use, in the request's spelling.
    assert_eq!(
        header(&r, "access-control-allow-headers"),
        Some("content-type, mcp-protocol-version, Mcp-Method, mcp-name, mcp-param-region")
    );
    assert_eq!(header(&r, "access-control-max-age"), Some("7200"));
    assert_eq!(header(&r, "access-control-allow-credentials"), None);
    assert_eq!(ep.stats().sessions, 0, "a preflight opens no session");
}

#[test]
fn a_preflight_naming_no_header_is_told_every_mcp_header() {
    let mut ep =
        endpoint(cors_config().cors(Some(Cors::new().max_age(Some(Duration::from_secs(60))))));
    let r = ep.handle_request(Instant::ZERO, &preflight(PAGE, None), b"", None);
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let allowed = header(&r, "access-control-allow-headers").unwrap();
    for name in [
        "Content-Type",
        "Accept",
        "Authorization",
        "Mcp-Session-Id",
        "Mcp-Protocol-Version",
        "Last-Event-ID",
        "Mcp-Method",
        "Mcp-Name",
    ] {
        assert!(
            allowed.split(", ").any(|h| h == name),
            "{name} in {allowed}"
        );
    }
    assert_eq!(header(&r, "access-control-max-age"), Some("60"));

    let mut ep = endpoint(cors_config().cors(Some(Cors::new().max_age(None))));
    let r = ep.handle_request(Instant::ZERO, &preflight(PAGE, None), b"", None);
    assert_eq!(header(&r, "access-control-max-age"), None);
}

#[test]
fn a_refused_origin_gets_403_and_no_cors_header() {
    let mut ep = endpoint(cors_config());
    for origin in ["http://localhost:8001", "http://127.0.0.1:8000", "null"] {
        let r = ep.handle_request(
            Instant::ZERO,
            &preflight(origin, Some("content-type")),
            b"",
            None,
        );
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{origin}");
        assert!(cors_headers(&r).is_empty(), "{origin}: {:?}", r.headers());
        let (parts, body) = initialize(Some(origin));
        let r = ep.handle_request(Instant::ZERO, &parts, &body, RANDOM);
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{origin}");
        assert!(cors_headers(&r).is_empty(), "{origin}: {:?}", r.headers());
    }
    assert_eq!(ep.stats().sessions, 0);
}

#[test]
fn replies_to_an_allowed_origin_expose_the_session_id() {
    let mut ep = endpoint(cors_config());
    let (parts, body) = initialize(Some(PAGE));
    let r = ep.handle_request(Instant::ZERO, &parts, &body, RANDOM);
    assert_eq!(r.status(), StatusCode::OK);
    assert!(header(&r, "mcp-session-id").is_some());
    assert_eq!(header(&r, "access-control-allow-origin"), Some(PAGE));
    assert_eq!(
        header(&r, "access-control-expose-headers"),
        Some("Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
    );
    assert_eq!(header(&r, "vary"), Some("Origin"));
    assert_eq!(header(&r, "access-control-allow-credentials"), None);
    assert_eq!(
        header(&r, "access-control-allow-methods"),
        None,
        "only preflights"
    );

    // Error replies too: the page's client can read why.
    let bad = request("POST", "/mcp", Some(PAGE))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "text/plain")
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let r = ep.handle_request(Instant::ZERO, &bad, b"{}", None);
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(header(&r, "access-control-allow-origin"), Some(PAGE));
    let r = ep.handle_request(
        Instant::ZERO,
        &request("GET", "/other", Some(PAGE))
            .body(())
            .unwrap()
            .into_parts()
            .0,
        b"",
        None,
    );
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(header(&r, "access-control-allow-origin"), Some(PAGE));
}

#[test]
fn a_request_without_origin_gets_only_vary() {
    let mut ep = endpoint(cors_config());
    let (parts, body) = initialize(None);
    let r = ep.handle_request(Instant::ZERO, &parts, &body, RANDOM);
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "vary"), Some("Origin"));
    assert!(cors_headers(&r).is_empty(), "{:?}", r.headers());
}

#[test]
fn credentials_only_when_configured_and_never_for_any_origin() {
    let with = cors_config().cors(Some(Cors::new().allow_credentials(true)));
    let mut ep = endpoint(with.clone());
    let (parts, body) = initialize(Some(PAGE));
    let r = ep.handle_request(Instant::ZERO, &parts, &body, RANDOM);
    assert_eq!(header(&r, "access-control-allow-credentials"), Some("true"));
    let r = ep.handle_request(Instant::ZERO, &preflight(PAGE, None), b"", None);
    assert_eq!(header(&r, "access-control-allow-credentials"), Some("true"));

    let mut ep = endpoint(with.allowed_origins(AllowList::Any));
    let elsewhere = "https://anything.example";
    let (parts, body) = initialize(Some(elsewhere));
    let r = ep.handle_request(Instant::ZERO, &parts, &body, RANDOM);
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(header(&r, "access-control-allow-origin"), Some(elsewhere));
    assert_eq!(header(&r, "access-control-allow-credentials"), None);
}

#[test]
fn without_cors_options_is_not_allowed_and_replies_carry_no_cors_header() {
    let mut ep = endpoint(EndpointConfig::new(Config::new("plain", "1.0")));
    let r = ep.handle_request(
        Instant::ZERO,
        &preflight(PAGE, Some("content-type")),
        b"",
        None,
    );
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header(&r, "allow"), Some("GET, POST, DELETE"));
    let (parts, body) = initialize(Some(PAGE));
    let r = ep.handle_request(Instant::ZERO, &parts, &body, RANDOM);
    assert_eq!(r.status(), StatusCode::OK);
    assert!(cors_headers(&r).is_empty(), "{:?}", r.headers());
    assert_eq!(header(&r, "vary"), None);
}

#[test]
fn the_preflight_names_the_methods_the_endpoint_serves() {
    let mut ep = endpoint(cors_config().stateless(true));
    let r = ep.handle_request(Instant::ZERO, &preflight(PAGE, None), b"", None);
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(header(&r, "access-control-allow-methods"), Some("POST"));

    let mut ep = endpoint(cors_config().legacy_sse(Some(LegacySse::default())));
    for (path, methods) in [
        ("/sse", "GET"),
        ("/messages", "POST"),
        ("/mcp", "GET, POST, DELETE"),
    ] {
        let parts = request("OPTIONS", path, Some(PAGE))
            .header("access-control-request-method", "GET")
            .body(())
            .unwrap()
            .into_parts()
            .0;
        let r = ep.handle_request(Instant::ZERO, &parts, b"", None);
        assert_eq!(r.status(), StatusCode::NO_CONTENT, "{path}");
        assert_eq!(
            header(&r, "access-control-allow-methods"),
            Some(methods),
            "{path}"
        );
        assert_eq!(
            header(&r, "access-control-allow-origin"),
            Some(PAGE),
            "{path}"
        );
    }
}
