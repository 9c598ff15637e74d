//! The error envelope every 4xx/5xx answer carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `error` object of the error envelope.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<i64>,
}

/// Body of every 4xx/5xx response.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ErrorResponse {
    pub success: bool,
    pub error: ErrorBody,
    pub credits_used: i64,
    pub request_id: String,
}
