//! The webhook signature of the spec (`Service-Signature: t=<unix>,v1=<hex>`):
//! `verify_signature` never panics on any header; a header made by
//! `signature_header` verifies with each of its secrets within the
//! tolerance, is `Expired` outside it, and does not verify another body.
//! Input lines: a header, a body, `t now tolerance`, then up to 3 secrets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webdata_core::signature::{signature_header, verify_signature, SignatureError};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let header = lines.next().unwrap_or_default();
    let body = lines.next().unwrap_or_default().as_bytes();
    let mut numbers = lines.next().unwrap_or_default().split_whitespace();
    let t: i64 = numbers
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_700_000_000);
    let now: i64 = numbers.next().and_then(|n| n.parse().ok()).unwrap_or(t);
    let tolerance: u64 = numbers.next().and_then(|n| n.parse().ok()).unwrap_or(300);
    let secrets: Vec<String> = lines.take(3).map(str::to_owned).collect();

    // Arbitrary headers: an answer, never a panic.
    for s in secrets.iter().map(String::as_str).chain(["", "whsec_test"]) {
        let _ = verify_signature(header, body, s, now, tolerance);
    }

    let made = signature_header(t, body, &secrets);
    let fresh = now.abs_diff(t) <= tolerance;
    for s in &secrets {
        let got = verify_signature(&made, body, s, now, tolerance);
        assert_eq!(
            got,
            if fresh {
                Ok(())
            } else {
                Err(SignatureError::Expired)
            },
            "{made} with {s:?}"
        );
        // At its own time a signature always verifies, and only for its body.
        assert_eq!(verify_signature(&made, body, s, t, 0), Ok(()));
        let mut other = body.to_vec();
        other.push(b'x');
        assert_eq!(
            verify_signature(&made, &other, s, t, 0),
            Err(SignatureError::Mismatch)
        );
    }
    if secrets.is_empty() {
        assert_eq!(
            verify_signature(&made, body, "x", t, 0),
            Err(SignatureError::NoSignature)
        );
    }
});
