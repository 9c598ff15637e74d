//! The engine's one error: what failed, as the spec's error code, and when
//! a retry makes sense. The API turns it into its error envelope in one place.

use crate::fetch::FetchError;
use crate::glob::GlobError;
use crate::guard::GuardError;
use webdata_core::ErrorCode;

/// Why a scrape, map, brand lookup or URL check produced nothing. Costs
/// nothing.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct EngineError {
    /// The spec's error code (its HTTP status follows from it).
    pub code: ErrorCode,
    /// What happened, for the caller.
    pub message: String,
    /// When retrying makes sense (`capacity_exceeded`): after this long.
    pub retry_after_ms: Option<i64>,
}

impl EngineError {
    /// An error with `code` and `message`, no retry hint.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        EngineError {
            code,
            message: message.into(),
            retry_after_ms: None,
        }
    }
}

impl From<FetchError> for EngineError {
    fn from(e: FetchError) -> Self {
        let code = match &e {
            FetchError::Blocked(_) => ErrorCode::BlockedUrl,
            FetchError::Timeout { .. } => ErrorCode::Timeout,
            FetchError::InvalidHeader { .. } => ErrorCode::InvalidRequest,
            _ => ErrorCode::FetchFailed,
        };
        EngineError::new(code, e.to_string())
    }
}

/// A URL the network guard refuses (or cannot parse): `blocked_url`.
impl From<GuardError> for EngineError {
    fn from(e: GuardError) -> Self {
        EngineError::new(ErrorCode::BlockedUrl, e.to_string())
    }
}

/// An `includePaths`/`excludePaths` pattern that does not compile:
/// `invalid_request`, naming the list and index.
impl From<GlobError> for EngineError {
    fn from(e: GlobError) -> Self {
        EngineError::new(ErrorCode::InvalidRequest, e.to_string())
    }
}
