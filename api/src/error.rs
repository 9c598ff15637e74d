//! The API's one error type. Every failure becomes the spec's Error
//! envelope here, and nowhere else.

use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use webdata_core::store::StoreError;
use webdata_core::validate::Invalid;
use webdata_core::ErrorCode;
use webdata_engine::EngineError;

/// Marks a response whose body is already the Error envelope, so the outer
/// layer leaves it alone.
#[derive(Clone, Copy, Debug)]
pub struct Enveloped;

/// The code and message of an error response, for the request log.
#[derive(Clone, Debug)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    pub message: String,
}

/// A failed request: a spec error code, a message for humans, and extra
/// headers (Retry-After, rate-limit headers).
#[derive(Debug)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub retry_after_ms: Option<i64>,
    pub status: Option<StatusCode>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

/// `retry_after_ms` of an answer to a failed database call.
pub const DATABASE_RETRY_AFTER_MS: i64 = 1000;

/// Result alias for handlers.
pub type ApiResult<T> = Result<T, ApiError>;

/// The engine's failures keep their code, message and retry hint (the
/// `Retry-After` header follows from the hint).
impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        let err = ApiError::new(e.code, e.message);
        match e.retry_after_ms {
            Some(ms) => err.retry_after(ms),
            None => err,
        }
    }
}

impl ApiError {
    /// An error with the code's own status.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            retry_after_ms: None,
            status: None,
            headers: Vec::new(),
        }
    }
    /// `invalid_request` (400).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidRequest, message)
    }
    /// `not_found` (404).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    /// `unauthorized` (401).
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Unauthorized, message)
    }
    /// `internal` (500): safe to retry with the same Idempotency-Key.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
    /// `internal` (500) for a failed database call (disk full, connection
    /// lost, restarting server): transient, so it says when to retry.
    pub fn database() -> Self {
        Self::internal("the database failed; it is safe to retry")
            .retry_after(DATABASE_RETRY_AFTER_MS)
    }
    /// Overrides the HTTP status (for 405, 413, 415 with `invalid_request`).
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = Some(status);
        self
    }
    /// Adds `error.retry_after_ms` and a `Retry-After` header in seconds.
    pub fn retry_after(mut self, ms: i64) -> Self {
        self.retry_after_ms = Some(ms);
        let secs = ((ms + 999) / 1000).max(1);
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            self.headers
                .push((HeaderName::from_static("retry-after"), v));
        }
        self
    }
    /// The HTTP status this error is answered with.
    pub fn status(&self) -> StatusCode {
        self.status.unwrap_or_else(|| {
            StatusCode::from_u16(self.code.http_status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
        })
    }
}

impl From<Invalid> for ApiError {
    fn from(i: Invalid) -> Self {
        ApiError::new(i.code, i.message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound(what) => ApiError::not_found(format!("{what} does not exist")),
            StoreError::Invalid(msg) => ApiError::invalid(msg),
            other => {
                tracing::error!(error = %other, "store error");
                ApiError::database()
            }
        }
    }
}

/// Firecrawl's error body, `{success: false, error, code}`: what its
/// clients read on the Firecrawl listener and under `/firecrawl`.
pub fn firecrawl_body(message: &str, code: &str) -> serde_json::Value {
    serde_json::json!({ "success": false, "error": message, "code": code })
}

/// Builds the envelope body for a code and message.
pub fn envelope(
    code: ErrorCode,
    message: &str,
    retry_after_ms: Option<i64>,
    request_id: &str,
) -> serde_json::Value {
    let mut error = serde_json::json!({ "code": code.as_str(), "message": message });
    if let Some(ms) = retry_after_ms {
        error["retry_after_ms"] = ms.into();
    }
    serde_json::json!({
        "success": false,
        "error": error,
        "credits_used": 0,
        "request_id": request_id,
    })
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = ErrorDetail {
            code: self.code,
            message: self.message.clone(),
        };
        let body = envelope(
            self.code,
            &self.message,
            self.retry_after_ms,
            &crate::context::request_id(),
        );
        let mut resp = (status, axum::Json(body)).into_response();
        for (k, v) in self.headers {
            resp.headers_mut().insert(k, v);
        }
        resp.extensions_mut().insert(Enveloped);
        resp.extensions_mut().insert(detail);
        resp
    }
}
