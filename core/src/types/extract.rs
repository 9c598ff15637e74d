//! Extract: the request, the sources read and the answer.

use super::scrape::ScrapeOptions;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// POST /v1/extract body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtractRequest {
    /// 1 to 25 http(s) URLs to read.
    pub urls: Vec<String>,
    /// JSON Schema the answer must match (remote `$ref`s are not fetched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<serde_json::Value>,
    /// What to extract, at most 4000 characters. `prompt` or `schema` is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_options: Option<ScrapeOptions>,
}

/// Whether one URL of an extract was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExtractSource {
    pub url: String,
    pub ok: bool,
    /// Why the page was not read (`code: message` of a failed scrape, or the error page's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// True when the page's markdown was cut to fit the model's input budget.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trimmed: bool,
}

/// 200 answer of POST /v1/extract.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ExtractResponse {
    pub success: bool,
    /// JSON matching the requested schema.
    pub data: serde_json::Value,
    pub sources: Vec<ExtractSource>,
    pub credits_used: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}
