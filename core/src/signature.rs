//! Webhook signatures as the spec documents them (Events → Signature rules):
//! the `Service-Signature` header is `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`,
//! each `v1` the lowercase hex HMAC-SHA256 of `<t>.<raw body>` keyed with one
//! signing secret (several during a secret rotation). [`signature_header`] is
//! what the dispatcher sends; [`verify_signature`] is what a receiver (and
//! the tests) check it with.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The spec's tolerance: a signature whose `t` is further than this from now
/// (either way) is rejected.
pub const SIGNATURE_TOLERANCE_SECS: u64 = 300;

type HmacSha256 = Hmac<Sha256>;

/// The MAC of `<t>.<body>` under `secret`, ready to finalise or verify.
fn mac(t: i64, body: &[u8], secret: &str) -> HmacSha256 {
    // HMAC takes a key of any length; this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC accepts any key");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// `t=<unix>,v1=<hex>[,v1=<hex>]` for a body, one `v1` per secret.
pub fn signature_header(t: i64, body: &[u8], secrets: &[String]) -> String {
    let mut out = format!("t={t}");
    for s in secrets {
        out.push_str(",v1=");
        out.push_str(&hex::encode(mac(t, body, s).finalize().into_bytes()));
    }
    out
}

/// Why a `Service-Signature` header was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// No `t=`, more than one, or a `t` that is not an integer.
    #[error("the signature header has no single integer timestamp `t`")]
    BadTimestamp,
    /// No `v1=` value at all.
    #[error("the signature header has no `v1` signature")]
    NoSignature,
    /// `t` is further from now than the tolerance (a replay or a skewed clock).
    #[error("the signature timestamp is outside the tolerance")]
    Expired,
    /// No `v1` is the HMAC of this body under this secret.
    #[error("no signature matches the body and secret")]
    Mismatch,
}

/// Checks a `Service-Signature` header against the raw body bytes and one
/// signing secret, as the spec's rules say: split on `,`, take `t` and every
/// `v1`; accept when any `v1` equals the HMAC-SHA256 of `<t>.<body>`
/// (compared in constant time) and `|now - t| <= tolerance_secs`.
/// `now` is the receiver's clock in unix seconds. Parts other than `t` and
/// `v1` (future schemes) are ignored, as is whitespace around each part.
pub fn verify_signature(
    header: &str,
    body: &[u8],
    secret: &str,
    now: i64,
    tolerance_secs: u64,
) -> Result<(), SignatureError> {
    let mut t: Option<i64> = None;
    let mut signatures: Vec<&str> = Vec::new();
    for part in header.split(',') {
        let Some((key, value)) = part.trim().split_once('=') else {
            continue;
        };
        match key.trim() {
            "t" => {
                let parsed = value.trim().parse::<i64>().ok();
                if t.is_some() || parsed.is_none() {
                    return Err(SignatureError::BadTimestamp);
                }
                t = parsed;
            }
            "v1" => signatures.push(value.trim()),
            _ => {}
        }
    }
    let t = t.ok_or(SignatureError::BadTimestamp)?;
    if signatures.is_empty() {
        return Err(SignatureError::NoSignature);
    }
    if now.abs_diff(t) > tolerance_secs {
        return Err(SignatureError::Expired);
    }
    let expected = mac(t, body, secret);
    let matched = signatures.iter().any(|sig| {
        // A v1 that is not 64 hex digits cannot match; `verify_slice` compares
        // the rest in constant time.
        hex::decode(sig).is_ok_and(|bytes| expected.clone().verify_slice(&bytes).is_ok())
    });
    if matched {
        Ok(())
    } else {
        Err(SignatureError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000;

    fn secrets(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn header_matches_a_known_vector() {
        // HMAC-SHA256 of "1700000000.{}" keyed with "whsec_a" (openssl dgst -sha256 -hmac).
        let h = signature_header(NOW, b"{}", &secrets(&["whsec_a"]));
        let mut mac = HmacSha256::new_from_slice(b"whsec_a").unwrap();
        mac.update(b"1700000000.{}");
        assert_eq!(
            h,
            format!(
                "t=1700000000,v1={}",
                hex::encode(mac.finalize().into_bytes())
            )
        );
    }

    #[test]
    fn a_signed_body_verifies_with_each_rotated_secret() {
        let h = signature_header(NOW, b"{\"id\":1}", &secrets(&["old", "new"]));
        for secret in ["old", "new"] {
            assert_eq!(
                verify_signature(&h, b"{\"id\":1}", secret, NOW, 300),
                Ok(())
            );
        }
        assert_eq!(
            verify_signature(&h, b"{\"id\":1}", "other", NOW, 300),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn a_changed_body_or_timestamp_does_not_verify() {
        let h = signature_header(NOW, b"{\"id\":1}", &secrets(&["s"]));
        assert_eq!(
            verify_signature(&h, b"{\"id\":2}", "s", NOW, 300),
            Err(SignatureError::Mismatch)
        );
        let moved = h.replacen("t=1700000000", "t=1700000001", 1);
        assert_eq!(
            verify_signature(&moved, b"{\"id\":1}", "s", NOW, 300),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn the_timestamp_must_be_within_the_tolerance_either_way() {
        let h = signature_header(NOW, b"x", &secrets(&["s"]));
        assert_eq!(verify_signature(&h, b"x", "s", NOW + 300, 300), Ok(()));
        assert_eq!(verify_signature(&h, b"x", "s", NOW - 300, 300), Ok(()));
        assert_eq!(
            verify_signature(&h, b"x", "s", NOW + 301, 300),
            Err(SignatureError::Expired)
        );
        assert_eq!(
            verify_signature(&h, b"x", "s", NOW - 301, 300),
            Err(SignatureError::Expired)
        );
        // Extreme clocks do not overflow.
        let far = signature_header(i64::MIN, b"x", &secrets(&["s"]));
        assert_eq!(
            verify_signature(&far, b"x", "s", i64::MAX, 300),
            Err(SignatureError::Expired)
        );
    }

    #[test]
    fn malformed_headers_are_rejected_not_panicked_on() {
        let v1 = signature_header(NOW, b"x", &secrets(&["s"]));
        let v1 = v1.split_once(',').unwrap().1;
        for (header, want) in [
            ("", SignatureError::BadTimestamp),
            (v1, SignatureError::BadTimestamp),
            ("t=abc,v1=00", SignatureError::BadTimestamp),
            ("t=1,t=1,v1=00", SignatureError::BadTimestamp),
            ("t=1700000000", SignatureError::NoSignature),
            ("t=1700000000,v1=zz", SignatureError::Mismatch),
            ("t=1700000000,v1=", SignatureError::Mismatch),
            ("t=1700000000,v1=0", SignatureError::Mismatch),
        ] {
            assert_eq!(
                verify_signature(header, b"x", "s", NOW, 300),
                Err(want),
                "{header:?}"
            );
        }
        // Spaces around parts and unknown schemes are tolerated.
        let spaced = format!(" t=1700000000 , v0=abc, {v1} ");
        assert_eq!(verify_signature(&spaced, b"x", "s", NOW, 300), Ok(()));
    }
}
