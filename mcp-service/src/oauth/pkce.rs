//! PKCE (RFC 7636) with the `S256` method: a verifier from caller-supplied random bytes and its
//! challenge. No randomness is drawn here.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// A PKCE code verifier and its `S256` challenge.
#[derive(Clone, PartialEq, Eq)]
pub struct Pkce {
    verifier: String,
    challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce")
            .field("challenge", &self.challenge)
            .finish_non_exhaustive()
    }
}

impl Pkce {
    /// Builds the verifier as the base64url (unpadded) form of 32 random bytes (43 characters of
    /// the RFC 7636 unreserved set, 256 bits of entropy) and its challenge
    /// `BASE64URL(SHA256(verifier))`.
    pub fn from_random(random: &[u8; 32]) -> Pkce {
        let verifier = URL_SAFE_NO_PAD.encode(random);
        let challenge = s256(&verifier);
        Pkce {
            verifier,
            challenge,
        }
    }

    /// The `code_verifier` sent to the token endpoint.
    pub fn verifier(&self) -> &str {
        &self.verifier
    }

    /// The `code_challenge` sent to the authorization endpoint (method `S256`).
    pub fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// `BASE64URL(SHA256(ASCII(verifier)))`, RFC 7636 §4.2.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The base64url (unpadded) form of `bytes`, used for the `state` parameter.
pub(crate) fn b64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        // RFC 7636 Appendix B: verifier and its S256 challenge.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let random = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212,
            37, 77, 105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ];
        let p = Pkce::from_random(&random);
        assert_eq!(p.verifier(), "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
        assert_eq!(p.challenge(), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        assert!(!format!("{p:?}").contains(p.verifier()));
    }
}
