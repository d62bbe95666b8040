//! `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` (GitHub's, Gitea's and
//! many senders' convention), compared in constant time; and a delivery's id.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// Whether `header` is the signature of `body` under `secret`. The comparison is
/// constant-time (`hmac`'s `verify_slice`, on `subtle`).
pub fn verify(secret: &[u8], body: &[u8], header: Option<&str>) -> bool {
    let Some(hex) = header.and_then(|h| h.trim().strip_prefix("sha256=")) else {
        return false;
    };
    let Some(expected) = decode_hex(hex) else {
        return false;
    };
    let Ok(mut mac) = HmacSha256::new_from_slice(secret) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&expected).is_ok()
}

/// The header value a sender puts on `body`: `sha256=<hex>`.
#[cfg(test)]
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    // HMAC takes a key of any length: `new_from_slice` cannot fail for it.
    let mut mac = match HmacSha256::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => return String::new(),
    };
    mac.update(body);
    format!("sha256={}", hex(&mac.finalize().into_bytes()))
}

/// The delivery's id: `X-GitHub-Delivery`, else `Idempotency-Key`, else `sha256:<hex of
/// the body's SHA-256>`. `headers` have lowercase names.
pub fn delivery_id(headers: &[(String, String)], body: &[u8]) -> String {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, v)| n == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_owned())
    };
    header("x-github-delivery")
        .or_else(|| header("idempotency-key"))
        .unwrap_or_else(|| format!("sha256:{}", hex(&Sha256::digest(body))))
}

/// The SHA-256 of a delivery's body: what a signed body is remembered by within the
/// replay window (GitHub scheme).
pub fn body_sha256(body: &[u8]) -> [u8; 32] {
    Sha256::digest(body).into()
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_of_githubs_documented_example_verifies() {
        // docs.github.com, "Validating webhook deliveries": secret "It's a Secret to
        // Everybody", payload "Hello, World!".
        let want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert_eq!(sign(b"It's a Secret to Everybody", b"Hello, World!"), want);
        assert!(verify(
            b"It's a Secret to Everybody",
            b"Hello, World!",
            Some(want)
        ));
        assert!(!verify(
            b"It's a Secret to Everybody",
            b"Hello, World?",
            Some(want)
        ));
        assert!(!verify(b"another", b"Hello, World!", Some(want)));
        assert!(!verify(
            b"It's a Secret to Everybody",
            b"Hello, World!",
            None
        ));
        assert!(!verify(b"k", b"", Some("sha1=00")));
        assert!(!verify(b"k", b"", Some("sha256=zz")));
    }

    #[test]
    fn the_delivery_id_prefers_githubs_header_then_the_idempotency_key_then_the_body() {
        let h = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(n, v)| ((*n).into(), (*v).into()))
                .collect()
        };
        assert_eq!(
            delivery_id(
                &h(&[("idempotency-key", "k"), ("x-github-delivery", "g")]),
                b"x"
            ),
            "g"
        );
        assert_eq!(delivery_id(&h(&[("idempotency-key", "k")]), b"x"), "k");
        assert_eq!(
            delivery_id(&[], b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
