//! Signed JWTs of the client (feature `oauth-jwt`, with `jsonwebtoken`): the `private_key_jwt`
//! client assertion (RFC 7523 §2.2) and DPoP proofs (RFC 9449 §4). Builders only: the caller
//! passes the time and the random `jti` bytes.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use url::Url;

use super::error::OAuthError;
use super::pkce::{b64url, s256};

/// How long a client assertion is valid (RFC 7523 §3: short-lived).
const ASSERTION_LIFETIME_SECS: u64 = 300;

/// The JWS algorithm of a [`SigningKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (an RSA key).
    RS256,
    /// ECDSA on P-256 with SHA-256 (a P-256 key).
    ES256,
}

impl SigningAlgorithm {
    /// The JWS `alg` name.
    pub fn as_str(self) -> &'static str {
        match self {
            SigningAlgorithm::RS256 => "RS256",
            SigningAlgorithm::ES256 => "ES256",
        }
    }

    /// The algorithm of a JWS `alg` name, `None` for others.
    pub fn from_name(name: &str) -> Option<SigningAlgorithm> {
        match name {
            "RS256" => Some(SigningAlgorithm::RS256),
            "ES256" => Some(SigningAlgorithm::ES256),
            _ => None,
        }
    }

    fn jws(self) -> Algorithm {
        match self {
            SigningAlgorithm::RS256 => Algorithm::RS256,
            SigningAlgorithm::ES256 => Algorithm::ES256,
        }
    }
}

/// The private key of a `private_key_jwt` client (RS256 or ES256), whose public key the
/// authorization server knows (registered, or from the client's `jwks_uri`).
#[derive(Clone)]
pub struct SigningKey {
    key: EncodingKey,
    alg: SigningAlgorithm,
    kid: Option<String>,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`) for both algorithms, or PKCS#1
    /// (`BEGIN RSA PRIVATE KEY`) for RS256 and SEC1 (`BEGIN EC PRIVATE KEY`) for ES256.
    ///
    /// ```
    /// use mcp_service::oauth::{SigningAlgorithm, SigningKey};
    /// let pem = "-----BEGIN PRIVATE KEY-----
    /// MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgIFHGvRNxizHWqvT+
    /// Y6U2rT8GZMF496uMrC4zoLwJHgGhRANCAARA2hzl7KFFa3p5oYv6qZkhuqrfZObd
    /// AQ1aKi7rJ2qARiXmNWu4jMRkLZ+9QzFfJhN5H/FUTkP7z88iKINxd+lH
    /// -----END PRIVATE KEY-----";
    /// let key = SigningKey::from_pem(pem.as_bytes(), SigningAlgorithm::ES256)?.key_id("key-1");
    /// # let _ = key; Ok::<(), mcp_service::oauth::OAuthError>(())
    /// ```
    ///
    /// # Errors
    /// [`OAuthError::Key`] when the PEM holds no private key of that algorithm.
    pub fn from_pem(pem: &[u8], alg: SigningAlgorithm) -> Result<SigningKey, OAuthError> {
        let key = match alg {
            SigningAlgorithm::RS256 => EncodingKey::from_rsa_pem(pem),
            SigningAlgorithm::ES256 => EncodingKey::from_ec_pem(pem),
        }
        .map_err(|e| OAuthError::Key {
            what: "client signing key",
            reason: format!("not an {} private key in PEM: {e}", alg.as_str()),
        })?;
        // A key that parses as PEM but not as a key of the algorithm fails here, not at the
        // first signature.
        Jwk::from_encoding_key(&key, alg.jws()).map_err(|e| OAuthError::Key {
            what: "client signing key",
            reason: format!("not a usable {} key: {e}", alg.as_str()),
        })?;
        Ok(SigningKey {
            key,
            alg,
            kid: None,
        })
    }

    /// The `kid` header naming the key among those the authorization server knows.
    pub fn key_id(mut self, kid: impl Into<String>) -> SigningKey {
        self.kid = Some(kid.into());
        self
    }

    /// The algorithm.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.alg
    }

    /// The `client_assertion` of `private_key_jwt` (RFC 7523 §3): `iss` and `sub` the client
    /// id, `aud` the authorization server's issuer identifier, issued at `now`, valid for five
    /// minutes, `jti` from `jti` (random bytes).
    ///
    /// # Errors
    /// [`OAuthError::Key`] when signing fails.
    pub fn client_assertion(
        &self,
        client_id: &str,
        audience: &str,
        now: SystemTime,
        jti: &[u8],
    ) -> Result<String, OAuthError> {
        let iat = unix(now);
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": iat,
            "exp": iat + ASSERTION_LIFETIME_SECS,
            "jti": b64url(jti),
        });
        let mut header = Header::new(self.alg.jws());
        header.typ = Some("JWT".to_owned());
        header.kid = self.kid.clone();
        jsonwebtoken::encode(&header, &claims, &self.key).map_err(|e| OAuthError::Key {
            what: "client assertion",
            reason: e.to_string(),
        })
    }
}

/// A DPoP key (RFC 9449, ES256): the key the client proves possession of, to which DPoP-bound
/// tokens are bound, and the nonces servers gave it (per origin, RFC 9449 §8 and §9). Cheap to
/// clone; clones share the nonces.
///
/// Tokens bound to a key are useless with another: a client that keeps tokens across runs (a
/// [`FileTokenStore`](super::FileTokenStore)) keeps its key too ([`from_pem`](Self::from_pem)).
#[derive(Clone)]
pub struct DpopKey {
    inner: Arc<DpopInner>,
}

struct DpopInner {
    key: EncodingKey,
    jwk: Jwk,
    thumbprint: String,
    nonces: Mutex<HashMap<String, String>>,
}

/// Most servers whose nonces are kept.
const MAX_NONCES: usize = 64;

impl fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DpopKey")
            .field("thumbprint", &self.inner.thumbprint)
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new P-256 key from the operating system's random number generator.
    ///
    /// # Errors
    /// [`OAuthError::Key`] when the system has no random bytes.
    pub fn generate() -> Result<DpopKey, OAuthError> {
        // A random 32-byte string is a valid scalar but with probability about 2^-32.
        for _ in 0..8 {
            let mut secret = [0u8; 32];
            getrandom::fill(&mut secret).map_err(|e| OAuthError::Key {
                what: "DPoP key",
                reason: format!("no random bytes: {e}"),
            })?;
            if let Ok(key) = DpopKey::from_secret_bytes(&secret) {
                return Ok(key);
            }
        }
        Err(OAuthError::Key {
            what: "DPoP key",
            reason: "no valid key from the random bytes".to_owned(),
        })
    }

    /// The P-256 key whose private scalar is `secret` (big-endian).
    ///
    /// # Errors
    /// [`OAuthError::Key`] when `secret` is not a valid P-256 scalar (zero, or not below the
    /// group order).
    pub fn from_secret_bytes(secret: &[u8; 32]) -> Result<DpopKey, OAuthError> {
        // PKCS#8 PrivateKeyInfo { version 0, id-ecPublicKey / prime256v1, ECPrivateKey
        // { version 1, privateKey } } (RFC 5208, RFC 5915): a fixed prefix, then the scalar.
        const PREFIX: [u8; 36] = [
            0x30, 0x41, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d,
            0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x04, 0x27,
            0x30, 0x25, 0x02, 0x01, 0x01, 0x04, 0x20, 0x00,
        ];
        let mut der = PREFIX[..35].to_vec();
        der.extend_from_slice(secret);
        DpopKey::from_key(EncodingKey::from_ec_der(&der))
    }

    /// An ES256 key from PEM (PKCS#8 `BEGIN PRIVATE KEY` or SEC1 `BEGIN EC PRIVATE KEY`).
    ///
    /// # Errors
    /// [`OAuthError::Key`] when the PEM holds no P-256 private key.
    pub fn from_pem(pem: &[u8]) -> Result<DpopKey, OAuthError> {
        let key = EncodingKey::from_ec_pem(pem).map_err(|e| OAuthError::Key {
            what: "DPoP key",
            reason: format!("not an EC private key in PEM: {e}"),
        })?;
        DpopKey::from_key(key)
    }

    fn from_key(key: EncodingKey) -> Result<DpopKey, OAuthError> {
        let fail = |e: jsonwebtoken::errors::Error| OAuthError::Key {
            what: "DPoP key",
            reason: format!("not a usable P-256 key: {e}"),
        };
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).map_err(fail)?;
        // The proof's `jwk` carries the public key alone (RFC 9449 §4.2).
        jwk.common = Default::default();
        let thumbprint = jwk.thumbprint(ThumbprintHash::SHA256).map_err(fail)?;
        // A scalar out of range surfaces when signing: try once now.
        jsonwebtoken::encode(&Header::new(Algorithm::ES256), &json!({}), &key).map_err(fail)?;
        Ok(DpopKey {
            inner: Arc::new(DpopInner {
                key,
                jwk,
                thumbprint,
                nonces: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The JWK SHA-256 thumbprint of the public key (RFC 7638): the `jkt` bound tokens name in
    /// their `cnf` claim.
    pub fn thumbprint(&self) -> &str {
        &self.inner.thumbprint
    }

    /// The public key as a JWK (`kty`, `crv`, `x`, `y`).
    pub fn public_jwk(&self) -> Value {
        serde_json::to_value(&self.inner.jwk).unwrap_or(Value::Null)
    }

    /// A DPoP proof (RFC 9449 §4.2) for a `method` request to `url`, made at `now`, with `jti`
    /// from `jti` (random bytes, fresh for every proof), the `ath` of `access_token` when the
    /// request presents one (a resource request), and the nonce kept for the URL's server.
    ///
    /// # Errors
    /// [`OAuthError::InvalidUrl`] for a URL that does not parse; [`OAuthError::Key`] when
    /// signing fails.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        now: SystemTime,
        jti: &[u8],
    ) -> Result<String, OAuthError> {
        let mut htu = Url::parse(url).map_err(|e| OAuthError::InvalidUrl {
            what: "DPoP target",
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        htu.set_query(None);
        htu.set_fragment(None);
        let mut claims = json!({
            "jti": b64url(jti),
            "htm": method,
            "htu": htu.as_str(),
            "iat": unix(now),
        });
        if let Some(obj) = claims.as_object_mut() {
            if let Some(token) = access_token {
                obj.insert("ath".to_owned(), s256(token).into());
            }
            if let Some(nonce) = self.nonce(url) {
                obj.insert("nonce".to_owned(), nonce.into());
            }
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".to_owned());
        header.jwk = Some(self.inner.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.inner.key).map_err(|e| OAuthError::Key {
            what: "DPoP proof",
            reason: e.to_string(),
        })
    }

    /// The nonce kept for the server of `url`.
    pub fn nonce(&self, url: &str) -> Option<String> {
        let origin = origin(url)?;
        self.nonces().get(&origin).cloned()
    }

    /// Keeps `nonce` (a `DPoP-Nonce` header) for the server of `url`; the next proofs for it
    /// carry it.
    pub fn set_nonce(&self, url: &str, nonce: &str) {
        let Some(origin) = origin(url) else {
            return;
        };
        let mut nonces = self.nonces();
        if nonces.len() >= MAX_NONCES && !nonces.contains_key(&origin) {
            nonces.clear();
        }
        nonces.insert(origin, nonce.to_owned());
    }

    fn nonces(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.inner
            .nonces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

fn origin(url: &str) -> Option<String> {
    Url::parse(url)
        .ok()
        .map(|u| u.origin().ascii_serialization())
}

fn unix(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use jsonwebtoken::{DecodingKey, Validation};
    use std::time::Duration;

    /// A P-256 key (PKCS#8) made for these tests.
    pub(crate) const EC_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgIFHGvRNxizHWqvT+
Y6U2rT8GZMF496uMrC4zoLwJHgGhRANCAARA2hzl7KFFa3p5oYv6qZkhuqrfZObd
AQ1aKi7rJ2qARiXmNWu4jMRkLZ+9QzFfJhN5H/FUTkP7z88iKINxd+lH
-----END PRIVATE KEY-----";

    /// A 2048-bit RSA key (PKCS#8) made for these tests, and its public key.
    const RSA_PEM: &str = "-----BEGIN PRIVATE KEY-----
MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQDXSIpPCZD7TxfK
d5n2JBeCskdWyDMMyLgS4A9ktmGKRv6T650aCdE/0nUkewNr1Yo6gknKYHQYVaIQ
qepGSRH/N+/M9qzNOMNpuFd1WEvPt9R/lh+5lsxWpdoD769Ri3hzQcvGBLPNnNEQ
Yh8XcdANMvPROx8HtAl8ouURxHQmM3I4t6qykLJkNql/6gWrOC857pkZPBvJHdRk
15qC4xbot8HDXbfzkjaixV1Vamo7iAqqoKLRWSEQLdCbLd7ahNue3IcoE32gYV/n
oS4FMwP+z/leffBUKEjtqZGqpdKJieAjDPTaIg525n2UdCAZTeX+Djpm1Ejsx8+B
mPZhaP39AgMBAAECggEAAKY/CewEijqipZ6mzd7AqSXPT+XBycAjKoVeDwfPeDch
vIvq/LA3Yd9sqPkTQYjr2KnpHop4mmpQ/Wuv1fucbFGXJLVcCY01H5GtPjOu3cEr
Biy8fWarH+piI5/F3KVKXdIgyW8/EbBGgY21n45Hfl/OMj5+49FeCCEDqeba0RhA
jdYzGKPA4TE+Zxe7rRIvbHV6nTYtKQNbvnVDb+MMb/mh3Z7NtF06B4T7UR/kgyzD
MgRkvayvBVZv5gk8WYUfTIl1QnxRL6Sw+jCrujgrKoKIoY5uFveQTED+E7aXaFOE
eCWjyudQ638j6fEJnkVvlplNg91AItznL9Npqo3sHwKBgQD8Zr6Wmr8Al2b9YWYI
VZkv6CyIIS9Kue7pVmJLJ9fwJjevSvu26kDYhSTh0GfQ3FqCxL7Urmf8yeUBM6zc
0ER5Tpq/xUu9cQFkBHr9Lgv7NnL49Mp/Z14/DuaqN9EQ8Mzr/sjpop+oAldHZ0Wu
kyNeB7t/123JnwJdnVqu/4izZwKBgQDaWlEHYRh6cwLBNyZ87wgPanz3tHJjUm11
hdv7Ffmww9CwX+dx7ynfMfy+8IlKANsHZ6zHF2mitf5clph3BopuMFz8836SC5QG
bY7bjrOBWoCjAUSzBJMdaBq2CwRnFaHffCrGK5cSij9in0hHWvMSVrsrOYHbHKZ0
DBssjD8o+wKBgQDi7NUpvpM/SuATqv/7Okpx4gI3me5U9vov27Sf8YCZryKdfYL2
H4KRqJNSWvcbtyHBNHaF7RAdHL/B5t3h4XXOwrcq941zEyi27bhN7JplD70qy5tM
FHmNpC4KmAhlfLog639jXwzAFuq1jcn+fNdtcPJIrD1O6qFL3W9sqt4SvQKBgQC5
CDACANWtbii3cvS6ihRae/LKNa95WzBGltiDPWwJzuXZkGugsPramJGFfG/atj7l
V4WicMSjjXWvIC6zLmfAWFt0PyLSv90AVXbpt1OGGhtIBpsg2I+SK9X2zf89G6fA
qofUxruOiniMKk4lqXyx3a1eQ6028GBdlqSwa2haYQKBgQCP0lScEXEb54ykOXr/
zEJxOk8H2CfCRUCf4VtrszhExNs3pDe5mNmLvOG5GUZ3sIZL9tvNONMVN3UxsuE0
2TeqEH8xwKOTOwQ/Z5k5pdjGWa3Ew4Lfa2vtCCMCX/pWZCjslLHifYlrv07uPefG
gWHrglxisEF8VxAY0K7V3cQBUA==
-----END PRIVATE KEY-----";
    const RSA_PUBLIC_PEM: &str = "-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA10iKTwmQ+08XyneZ9iQX
grJHVsgzDMi4EuAPZLZhikb+k+udGgnRP9J1JHsDa9WKOoJJymB0GFWiEKnqRkkR
/zfvzPaszTjDabhXdVhLz7fUf5YfuZbMVqXaA++vUYt4c0HLxgSzzZzREGIfF3HQ
DTLz0TsfB7QJfKLlEcR0JjNyOLeqspCyZDapf+oFqzgvOe6ZGTwbyR3UZNeaguMW
6LfBw12385I2osVdVWpqO4gKqqCi0VkhEC3Qmy3e2oTbntyHKBN9oGFf56EuBTMD
/s/5Xn3wVChI7amRqqXSiYngIwz02iIOduZ9lHQgGU3l/g46ZtRI7MfPgZj2YWj9
/QIDAQAB
-----END PUBLIC KEY-----";

    fn now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    #[test]
    fn rs256_client_assertion_verifies() {
        let key = SigningKey::from_pem(RSA_PEM.as_bytes(), SigningAlgorithm::RS256).unwrap();
        assert_eq!(key.algorithm(), SigningAlgorithm::RS256);
        let jwt = key
            .client_assertion("c", "https://as.example/", now(), &[5; 16])
            .unwrap();
        assert_eq!(part(&jwt, 0)["alg"], "RS256");
        let mut v = Validation::new(Algorithm::RS256);
        v.set_audience(&["https://as.example/"]);
        v.validate_exp = false;
        let public = DecodingKey::from_rsa_pem(RSA_PUBLIC_PEM.as_bytes()).unwrap();
        let got = jsonwebtoken::decode::<Value>(&jwt, &public, &v).unwrap();
        assert_eq!(got.claims["sub"], "c");
        // An RSA key is not an ES256 key.
        assert!(SigningKey::from_pem(RSA_PEM.as_bytes(), SigningAlgorithm::ES256).is_err());
    }

    fn part(jwt: &str, i: usize) -> Value {
        let seg = jwt.split('.').nth(i).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(seg).unwrap()).unwrap()
    }

    fn decoding_key(jwk: &Value) -> DecodingKey {
        let jwk: Jwk = serde_json::from_value(jwk.clone()).unwrap();
        DecodingKey::from_jwk(&jwk).unwrap()
    }

    #[test]
    fn es256_client_assertion_verifies_with_its_claims() {
        let key = SigningKey::from_pem(EC_PEM.as_bytes(), SigningAlgorithm::ES256)
            .unwrap()
            .key_id("k1");
        let jwt = key
            .client_assertion("client-1", "https://as.example", now(), &[1; 16])
            .unwrap();
        let header = part(&jwt, 0);
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["kid"], "k1");
        let claims = part(&jwt, 1);
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://as.example");
        assert_eq!(claims["iat"], 1_700_000_000u64);
        assert_eq!(claims["exp"], 1_700_000_300u64);
        assert_eq!(claims["jti"], b64url(&[1; 16]));
        // The signature verifies with the public key.
        let public = DpopKey::from_pem(EC_PEM.as_bytes()).unwrap().public_jwk();
        let mut v = Validation::new(Algorithm::ES256);
        v.set_audience(&["https://as.example"]);
        v.validate_exp = false;
        jsonwebtoken::decode::<Value>(&jwt, &decoding_key(&public), &v).unwrap();
    }

    #[test]
    fn bad_keys_are_clear_errors() {
        for (pem, alg) in [
            ("not a pem", SigningAlgorithm::ES256),
            (EC_PEM, SigningAlgorithm::RS256),
        ] {
            match SigningKey::from_pem(pem.as_bytes(), alg) {
                Err(OAuthError::Key { what, reason }) => {
                    assert_eq!(what, "client signing key");
                    assert!(reason.contains(alg.as_str()), "{reason}");
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            DpopKey::from_secret_bytes(&[0; 32]),
            Err(OAuthError::Key { .. })
        ));
        assert!(matches!(
            DpopKey::from_secret_bytes(&[0xff; 32]),
            Err(OAuthError::Key { .. })
        ));
        assert_eq!(
            SigningAlgorithm::from_name("ES256"),
            Some(SigningAlgorithm::ES256)
        );
        assert_eq!(SigningAlgorithm::from_name("HS256"), None);
    }

    #[test]
    fn dpop_proof_claims_nonce_and_signature() {
        let key = DpopKey::from_secret_bytes(&[9; 32]).unwrap();
        let same = DpopKey::from_secret_bytes(&[9; 32]).unwrap();
        assert_eq!(key.thumbprint(), same.thumbprint());
        assert_ne!(key.thumbprint(), DpopKey::generate().unwrap().thumbprint());
        let proof = key
            .proof(
                "POST",
                "https://rs.example/mcp?x=1#f",
                Some("tok"),
                now(),
                &[2; 16],
            )
            .unwrap();
        let header = part(&proof, 0);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"]["kty"], "EC");
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert!(header["jwk"].get("d").is_none(), "no private part");
        let claims = part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://rs.example/mcp");
        assert_eq!(claims["iat"], 1_700_000_000u64);
        assert_eq!(claims["ath"], s256("tok"));
        assert!(claims.get("nonce").is_none());
        let mut v = Validation::new(Algorithm::ES256);
        v.required_spec_claims.clear();
        v.validate_exp = false;
        jsonwebtoken::decode::<Value>(&proof, &decoding_key(&header["jwk"]), &v).unwrap();
        // The thumbprint is of the header's key (RFC 7638).
        let jwk: Jwk = serde_json::from_value(header["jwk"].clone()).unwrap();
        assert_eq!(
            jwk.thumbprint(ThumbprintHash::SHA256).unwrap(),
            key.thumbprint()
        );

        // Nonces are per origin; a token request proof has no ath.
        same.set_nonce("https://as.example/token", "n-1");
        let p = same
            .proof("POST", "https://as.example/token", None, now(), &[3; 16])
            .unwrap();
        assert_eq!(part(&p, 1)["nonce"], "n-1");
        assert!(part(&p, 1).get("ath").is_none());
        let other = same
            .proof("GET", "https://rs.example/mcp", None, now(), &[3; 16])
            .unwrap();
        assert!(part(&other, 1).get("nonce").is_none());
        assert_eq!(
            same.nonce("https://as.example/other").as_deref(),
            Some("n-1")
        );
        assert_eq!(key.nonce("https://as.example/other"), None);
        assert!(matches!(
            key.proof("GET", "not a url", None, now(), &[0; 16]),
            Err(OAuthError::InvalidUrl { .. })
        ));
    }
}
