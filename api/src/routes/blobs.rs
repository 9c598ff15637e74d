//! Blob links (screenshots, hosted brand images):
//! `GET /v1/blobs/{id}.{ext}?expires=…&sig=…`. The link is
//! the credential (HMAC-SHA256 of `<id>.<expires>` with a key kept in the
//! store, the same on every replica) and stops working when it expires.

use crate::app::AppState;
use crate::error::{ApiError, ApiResult};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

fn sign(key: &str, id: &str, expires: i64) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(key.as_bytes()) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    mac.update(format!("{id}.{expires}").as_bytes());
    hex::encode(mac.finalize().into_bytes())
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

/// Query of a blob link.
#[derive(Debug, Deserialize)]
pub struct BlobQuery {
    expires: Option<i64>,
    sig: Option<String>,
}

/// `GET /v1/blobs/{file}`.
pub async fn get(
    State(app): State<AppState>,
    Path(file): Path<String>,
    Query(q): Query<BlobQuery>,
) -> ApiResult<Response> {
    use subtle::ConstantTimeEq;
    let id = file.split_once('.').map(|(id, _)| id).unwrap_or(&file);
    let gone = || {
        ApiError::not_found(
            "this link is not valid or has expired (screenshot links last 24 hours, brand image links 90 days)",
        )
    };
    let (Some(expires), Some(sig)) = (q.expires, q.sig) else {
        return Err(gone());
    };
    let expected = sign(&app.config.blob_key, id, expires);
    if expected.is_empty() || !bool::from(expected.as_bytes().ct_eq(sig.as_bytes())) {
        return Err(gone());
    }
    if expires * 1000 <= webdata_core::store::now_ms() {
        return Err(gone());
    }
    let blob = app.store.get_blob(id).await?.ok_or_else(gone)?;
    Ok((
        [
            (header::CONTENT_TYPE, blob.content_type),
            (header::CACHE_CONTROL, "private, max-age=3600".to_string()),
        ],
        blob.data,
    )
        .into_response())
}
