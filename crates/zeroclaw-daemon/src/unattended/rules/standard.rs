//! Standard Webhooks (standardwebhooks.com): `webhook-id`, `webhook-timestamp` and
//! `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the
//! bytes of a `whsec_<base64>` secret. Unlike GitHub's scheme the id and the time are
//! signed, so a captured delivery cannot be sent again under a new id, nor after the
//! timestamp tolerance.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// How far a delivery's timestamp may be from the daemon's clock, either way: the spec's
/// recommended 5 minutes.
pub const TOLERANCE_SECS: i64 = 5 * 60;
/// The spec's key sizes: at least 24 bytes (192 bits), at most 64.
const KEY_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

/// The HMAC key of a `whsec_<base64>` secret (the prefix may be left off, as the spec's
/// libraries allow). The error says what is wrong without repeating the secret.
pub fn decode_secret(secret: &str) -> Result<Vec<u8>, String> {
    let text = secret.trim();
    let text = text.strip_prefix("whsec_").unwrap_or(text);
    let key = BASE64.decode(text).map_err(|_| {
        "it is not a Standard Webhooks secret: `whsec_` followed by base64 (as the sender shows it)"
            .to_owned()
    })?;
    if !KEY_BYTES.contains(&key.len()) {
        return Err(format!(
            "its key is {} bytes; a Standard Webhooks key is 24 to 64 bytes",
            key.len()
        ));
    }
    Ok(key)
}

/// Why a delivery is refused (each a 401).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// This header is missing or empty.
    Missing(&'static str),
    /// `webhook-timestamp` is not integer Unix seconds.
    Timestamp,
    /// No `v1` entry of `webhook-signature` matches.
    Wrong,
    /// Signed, but this many seconds from now (negative: in the past), beyond
    /// [`TOLERANCE_SECS`].
    Stale(i64),
}

impl Refusal {
    /// For the log: `missing`, `timestamp`, `wrong` or `stale`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Missing(_) => "missing",
            Self::Timestamp => "timestamp",
            Self::Wrong => "wrong",
            Self::Stale(_) => "stale",
        }
    }

    /// For the sender: what went wrong and what a correct delivery has.
    pub fn message(&self) -> String {
        match self {
            Self::Missing(header) => format!(
                "the {header} header is missing: this hook takes Standard Webhooks deliveries (webhook-id, webhook-timestamp, webhook-signature)"
            ),
            Self::Timestamp => {
                "webhook-timestamp is not a Unix time in whole seconds".to_owned()
            }
            Self::Wrong => "the webhook-signature header is wrong: it needs a v1,<base64 HMAC-SHA256 of \"{webhook-id}.{webhook-timestamp}.{body}\"> entry keyed with the hook's secret".to_owned(),
            Self::Stale(off) => format!(
                "webhook-timestamp is {} s {} the daemon's clock, more than the {TOLERANCE_SECS} s allowed: a replayed or delayed delivery; send it again with a fresh timestamp",
                off.unsigned_abs(),
                if *off < 0 { "behind" } else { "ahead of" }
            ),
        }
    }
}

/// Checks a delivery's three headers against `body` at `now` (Unix seconds); `Ok` is its
/// `webhook-id`. Any `v1` entry of the space-separated `webhook-signature` may match (a
/// sender rotating its key signs with both); each comparison is constant-time.
pub fn verify<'a>(
    key: &[u8],
    id: Option<&'a str>,
    timestamp: Option<&str>,
    signatures: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<&'a str, Refusal> {
    let present = |v: Option<&'a str>, name| {
        v.map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or(Refusal::Missing(name))
    };
    let id = present(id, "webhook-id")?;
    let timestamp = timestamp
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or(Refusal::Missing("webhook-timestamp"))?;
    let signatures = signatures
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or(Refusal::Missing("webhook-signature"))?;
    let at: i64 = match timestamp.bytes().all(|b| b.is_ascii_digit()) {
        true => timestamp.parse().map_err(|_| Refusal::Timestamp)?,
        false => return Err(Refusal::Timestamp),
    };
    let Ok(mut mac) = HmacSha256::new_from_slice(key) else {
        return Err(Refusal::Wrong);
    };
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    let matches = signatures
        .split(' ')
        .filter_map(|entry| entry.split_once(','))
        .filter(|(version, _)| *version == "v1")
        .filter_map(|(_, sig)| BASE64.decode(sig).ok())
        .any(|sig| mac.clone().verify_slice(&sig).is_ok());
    if !matches {
        return Err(Refusal::Wrong);
    }
    let off = at.saturating_sub(now);
    if off.abs() > TOLERANCE_SECS {
        return Err(Refusal::Stale(off));
    }
    Ok(id)
}

/// The `webhook-signature` entry a sender puts on a delivery.
#[cfg(test)]
pub fn sign(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let Ok(mut mac) = HmacSha256::new_from_slice(key) else {
        return String::new();
    };
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    // The specification's published test vector (its reference libraries' tests).
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const AT: i64 = 1_614_265_330;
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    fn check(signatures: &str, id: &str, at: &str, body: &[u8], now: i64) -> Result<(), Refusal> {
        let key = decode_secret(SECRET).unwrap();
        verify(&key, Some(id), Some(at), Some(signatures), body, now).map(drop)
    }

    #[test]
    fn the_specifications_test_vector_signs_and_verifies() {
        let key = decode_secret(SECRET).unwrap();
        assert_eq!(key.len(), 24);
        assert_eq!(sign(&key, ID, AT, BODY), SIGNATURE);
        assert_eq!(
            verify(
                &key,
                Some(ID),
                Some("1614265330"),
                Some(SIGNATURE),
                BODY,
                AT
            ),
            Ok(ID)
        );
        // The prefix may be left off.
        assert_eq!(
            decode_secret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap(),
            key
        );
    }

    #[test]
    fn any_v1_entry_may_match_and_nothing_else_does() {
        let now = AT;
        let at = "1614265330";
        let other = "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=";
        assert_eq!(
            check(&format!("{other} {SIGNATURE}"), ID, at, BODY, now),
            Ok(())
        );
        assert_eq!(
            check(&format!("v1a,xyz {SIGNATURE}"), ID, at, BODY, now),
            Ok(())
        );
        assert_eq!(check(other, ID, at, BODY, now), Err(Refusal::Wrong));
        // The same signature under another version, or not base64: no match.
        let v2 = SIGNATURE.replacen("v1,", "v2,", 1);
        assert_eq!(check(&v2, ID, at, BODY, now), Err(Refusal::Wrong));
        assert_eq!(check("v1,***", ID, at, BODY, now), Err(Refusal::Wrong));
        // The id, the timestamp and the body are all signed.
        assert_eq!(
            check(SIGNATURE, "msg_other", at, BODY, now),
            Err(Refusal::Wrong)
        );
        assert_eq!(
            check(SIGNATURE, ID, "1614265331", BODY, now),
            Err(Refusal::Wrong)
        );
        assert_eq!(check(SIGNATURE, ID, at, b"{}", now), Err(Refusal::Wrong));
    }

    #[test]
    fn a_timestamp_beyond_five_minutes_either_way_is_refused_after_the_signature_holds() {
        let at = "1614265330";
        assert_eq!(check(SIGNATURE, ID, at, BODY, AT + 300), Ok(()));
        assert_eq!(check(SIGNATURE, ID, at, BODY, AT - 300), Ok(()));
        let late = check(SIGNATURE, ID, at, BODY, AT + 301).unwrap_err();
        assert_eq!(late, Refusal::Stale(-301));
        assert!(
            late.message().contains("301 s behind"),
            "{}",
            late.message()
        );
        let early = check(SIGNATURE, ID, at, BODY, AT - 3600).unwrap_err();
        assert!(
            early.message().contains("3600 s ahead of"),
            "{}",
            early.message()
        );
        assert_eq!(
            check(SIGNATURE, ID, "16142e5", BODY, AT),
            Err(Refusal::Timestamp)
        );
        assert_eq!(
            check(SIGNATURE, ID, "-1", BODY, AT),
            Err(Refusal::Timestamp)
        );
        assert_eq!(
            check(SIGNATURE, ID, "99999999999999999999", BODY, AT),
            Err(Refusal::Timestamp)
        );
    }

    #[test]
    fn a_missing_header_is_named() {
        let key = decode_secret(SECRET).unwrap();
        let at = Some("1614265330");
        for (id, ts, sig, name) in [
            (None, at, Some(SIGNATURE), "webhook-id"),
            (Some(" "), at, Some(SIGNATURE), "webhook-id"),
            (Some(ID), None, Some(SIGNATURE), "webhook-timestamp"),
            (Some(ID), at, None, "webhook-signature"),
        ] {
            assert_eq!(
                verify(&key, id, ts, sig, BODY, AT),
                Err(Refusal::Missing(name))
            );
        }
    }

    #[test]
    fn a_secret_must_be_base64_of_24_to_64_bytes() {
        assert!(
            decode_secret("whsec_not base64!")
                .unwrap_err()
                .contains("whsec_")
        );
        let short = format!("whsec_{}", BASE64.encode([7u8; 16]));
        assert!(decode_secret(&short).unwrap_err().contains("16 bytes"));
        let long = format!("whsec_{}", BASE64.encode([7u8; 65]));
        assert!(decode_secret(&long).unwrap_err().contains("65 bytes"));
        assert_eq!(
            decode_secret(&format!("whsec_{}", BASE64.encode([7u8; 64]))).unwrap(),
            vec![7u8; 64]
        );
    }
}
