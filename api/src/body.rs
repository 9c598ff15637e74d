//! Reading JSON request bodies: size limit, content type, depth, UTF-8,
//! unknown fields and wrong types all become `invalid_request` naming the
//! field (413 for oversized bodies, 415 for a non-JSON content type).

use crate::error::{ApiError, ApiResult};
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// Reads the whole body, refusing more than [`MAX_BODY_BYTES`].
pub async fn read_body(body: Body) -> ApiResult<bytes::Bytes> {
    axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|e| {
            let too_big = std::error::Error::source(&e)
                .map(|s| s.to_string().contains("length limit"))
                .unwrap_or(false)
                || e.to_string().contains("length limit");
            if too_big {
                ApiError::invalid(format!(
                    "the request body is larger than {} MiB",
                    MAX_BODY_BYTES / (1024 * 1024)
                ))
                .with_status(StatusCode::PAYLOAD_TOO_LARGE)
            } else {
                ApiError::invalid(format!("the request body could not be read: {e}"))
            }
        })
}

/// Checks that the request says its body is JSON.
pub fn require_json(headers: &HeaderMap) -> ApiResult<()> {
    let ct = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let mime = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json")) {
        Ok(())
    } else if ct.is_empty() {
        Err(
            ApiError::invalid("the request needs `Content-Type: application/json`")
                .with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE),
        )
    } else {
        Err(
            ApiError::invalid(format!("`Content-Type` is `{ct}`; send `application/json`"))
                .with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE),
        )
    }
}

/// Parses bytes into a JSON value (depth-limited by serde_json, UTF-8 checked).
pub fn parse_value(bytes: &[u8]) -> ApiResult<serde_json::Value> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid(
            "the request body is empty; send a JSON object",
        ));
    }
    if std::str::from_utf8(bytes).is_err() {
        return Err(ApiError::invalid("the request body is not valid UTF-8"));
    }
    let v: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::invalid(format!("the request body is not valid JSON: {e}")))?;
    if !v.is_object() {
        return Err(ApiError::invalid("the request body must be a JSON object"));
    }
    Ok(v)
}

/// Deserializes a value into `T`, naming the field that broke a rule.
pub fn from_value<T: DeserializeOwned>(v: serde_json::Value) -> ApiResult<T> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            ApiError::invalid(format!("invalid request body: {inner}"))
        } else {
            ApiError::invalid(format!("invalid field `{path}`: {inner}"))
        }
    })
}

/// Content type check, size limit, and parse to `T` in one call.
pub async fn json<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
) -> ApiResult<(T, serde_json::Value)> {
    require_json(headers)?;
    let bytes = read_body(body).await?;
    let v = parse_value(&bytes)?;
    Ok((from_value(v.clone())?, v))
}
