//! `GET /v1/blobs/{id}.{ext}?expires=…&sig=…`: a screenshot or hosted brand
//! image behind its signed link, which stops working when it expires.

use crate::error::{ApiError, ApiResult};
use crate::services::blobs;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

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
    let id = file.split_once('.').map(|(id, _)| id).unwrap_or(&file);
    let gone = || {
        ApiError::not_found(
            "this link is not valid or has expired (screenshot links last 24 hours, brand image links 90 days)",
        )
    };
    let (Some(expires), Some(sig)) = (q.expires, q.sig) else {
        return Err(gone());
    };
    if !blobs::signature_matches(&app.config.blob_key, id, expires, &sig) {
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
