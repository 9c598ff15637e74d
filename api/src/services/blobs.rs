//! Blob links (screenshots, hosted brand images): signing and checking the
//! link that is the credential (HMAC-SHA256 of `<id>.<expires>` with a key
//! kept in the store, the same on every replica).

use crate::state::AppState;
use axum::http::{header, HeaderMap};
use hmac::{Hmac, Mac};
use sha2::Sha256;

fn sign(key: &str, id: &str, expires: i64) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(key.as_bytes()) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    mac.update(format!("{id}.{expires}").as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Whether `sig` is the link's signature (compared in constant time).
pub fn signature_matches(key: &str, id: &str, expires: i64, sig: &str) -> bool {
    use subtle::ConstantTimeEq;
    let expected = sign(key, id, expires);
    !expected.is_empty() && bool::from(expected.as_bytes().ct_eq(sig.as_bytes()))
}

/// The signed link for a PNG blob that expires at `expires_ms`.
pub fn signed_url(app: &AppState, headers: &HeaderMap, id: &str, expires_ms: i64) -> String {
    signed_url_ext(app, headers, id, "png", expires_ms)
}

/// The signed link for a blob with file extension `ext`.
pub fn signed_url_ext(
    app: &AppState,
    headers: &HeaderMap,
    id: &str,
    ext: &str,
    expires_ms: i64,
) -> String {
    let base = match &app.config.public_url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None => {
            let host = headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("localhost");
            format!("http://{host}")
        }
    };
    let expires = expires_ms / 1000;
    format!(
        "{base}/v1/blobs/{id}.{ext}?expires={expires}&sig={}",
        sign(&app.config.blob_key, id, expires)
    )
}
