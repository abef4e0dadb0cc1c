//! `bench-jwt` — what checking a JWT access token costs the resource server per request, its
//! JWKS cached (`JwtValidator` after its first fetch): ES256 (a P-256 key made now) and RS256
//! (a 2048-bit key from `openssl genpkey`, skipped when `openssl` is not installed).
//!
//! ```text
//! cargo run --release -p mcp-examples --bin bench-jwt [-- ITERATIONS]
//! ```
//!
//! The JWKS is served from memory (an `HttpFetch` of this file's): only the validation is
//! measured — header decoding, key lookup, signature, claims (`exp`, `nbf`, `iss`, `aud`) and
//! the `Identity` built from them — with the verified-token cache off, then on (a client sends
//! the same token with every request). A timing loop, reported, not asserted.

use std::sync::Arc;
use std::time::Instant;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use mcp_service::resource_server::{HttpFetch, JwtValidator, TokenValidator};
use mcp_service::{BoxFuture, Error};
use serde_json::{Value, json};

/// Serves one JWKS from memory.
struct Jwks(Arc<Vec<u8>>);

impl HttpFetch for Jwks {
    fn fetch(
        &self,
        _: http::Request<Vec<u8>>,
    ) -> BoxFuture<Result<http::Response<Vec<u8>>, Error>> {
        let body = self.0.to_vec();
        Box::pin(async move { Ok(http::Response::new(body)) })
    }
}

fn es256() -> EncodingKey {
    // PKCS#8 of a P-256 private key without its public part: a fixed prefix and the scalar.
    const PREFIX: [u8; 35] = [
        0x30, 0x41, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02,
        0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x27, 0x30, 0x25,
        0x02, 0x01, 0x01, 0x04, 0x20,
    ];
    let mut scalar = [0u8; 32];
    getrandom::fill(&mut scalar).expect("randomness");
    scalar[0] &= 0x7f;
    scalar[31] |= 1;
    let mut der = PREFIX.to_vec();
    der.extend_from_slice(&scalar);
    EncodingKey::from_ec_der(&der)
}

fn rs256() -> Option<EncodingKey> {
    let out = std::process::Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "RSA",
            "-pkeyopt",
            "rsa_keygen_bits:2048",
        ])
        .output()
        .ok()?;
    EncodingKey::from_rsa_pem(&out.stdout).ok()
}

fn measure(name: &str, alg: Algorithm, key: &EncodingKey, iterations: u32, remembered: bool) {
    const RESOURCE: &str = "https://mcp.example.com/mcp";
    const ISSUER: &str = "https://auth.example.com";
    let mut jwk = serde_json::to_value(
        jsonwebtoken::jwk::Jwk::from_encoding_key(key, alg).expect("a public key"),
    )
    .expect("a JWK");
    jwk["kid"] = json!("bench");
    let jwks = serde_json::to_vec(&json!({"keys": [jwk]})).expect("JSON");
    let validator = JwtValidator::new("https://auth.example.com/jwks.json", Jwks(Arc::new(jwks)))
        .issuer(ISSUER)
        .audience(RESOURCE);
    let validator = if remembered {
        validator
    } else {
        validator.verified_cache(std::time::Duration::ZERO, 0)
    };
    let name = if remembered {
        format!("{name}, the same token again (verified-token cache)")
    } else {
        format!("{name}, signature and claims checked each time")
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims: Value = json!({
        "iss": ISSUER, "sub": "alice", "aud": RESOURCE, "client_id": "bench",
        "scope": "mcp notes:read notes:write", "iat": now, "nbf": now, "exp": now + 3600,
    });
    let mut header = Header::new(alg);
    header.kid = Some("bench".into());
    let token = jsonwebtoken::encode(&header, &claims, key).expect("a signed token");
    futures_lite::future::block_on(async {
        // The first validation fetches the JWKS; then it is cached.
        validator
            .validate(token.clone())
            .await
            .expect("a valid token");
        for _ in 0..iterations / 10 {
            validator
                .validate(token.clone())
                .await
                .expect("a valid token");
        }
        let start = Instant::now();
        for _ in 0..iterations {
            validator
                .validate(token.clone())
                .await
                .expect("a valid token");
        }
        let per = start.elapsed() / iterations;
        println!(
            "{name}: {:.1} µs per validation ({} per second on one core), token {} bytes, {iterations} iterations",
            per.as_nanos() as f64 / 1000.0,
            1_000_000_000u128 / per.as_nanos().max(1),
            token.len()
        );
    });
}

fn main() {
    let iterations: u32 = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("ITERATIONS is a number"))
        .unwrap_or(2000);
    let es = es256();
    let rs = rs256();
    for remembered in [false, true] {
        measure(
            "ES256 (P-256)",
            Algorithm::ES256,
            &es,
            iterations,
            remembered,
        );
        match &rs {
            Some(key) => measure(
                "RS256 (2048-bit)",
                Algorithm::RS256,
                key,
                iterations,
                remembered,
            ),
            None => println!("RS256: skipped (no `openssl` to make a key)"),
        }
    }
}
