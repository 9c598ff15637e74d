//! A broken rule, and the range rule every request check uses.

/// A rule a request broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// What the API answers with: `invalid_request` or `not_configured`.
    pub code: crate::ErrorCode,
    pub message: String,
}

impl Invalid {
    pub(super) fn req(message: impl Into<String>) -> Self {
        Invalid {
            code: crate::ErrorCode::InvalidRequest,
            message: message.into(),
        }
    }
}

pub(super) fn range(field: &str, v: Option<i64>, min: i64, max: i64) -> Result<(), Invalid> {
    match v {
        Some(x) if x < min || x > max => Err(Invalid::req(format!(
            "`{field}` must be between {min} and {max} (got {x})"
        ))),
        _ => Ok(()),
    }
}
