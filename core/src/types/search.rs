//! Search: the request, its results and the answer.

use super::scrape::{Document, ScrapeOptions};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How recent search results must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TimeRange {
    Day,
    Week,
    Month,
    Year,
}

impl TimeRange {
    /// The wire name (`day`, `week`, `month`, `year`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Year => "year",
        }
    }
}

/// POST /v1/search body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchRequest {
    /// The search query, at most 500 characters.
    pub query: String,
    /// 1 to 50, default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// ISO 3166-1 alpha-2 country code (e.g. `de`); see docs/decisions.md for how a provider uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// Language code (e.g. `en`, `pt-BR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_range: Option<TimeRange>,
    /// When set, each result is scraped and billed as a scrape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_options: Option<ScrapeOptions>,
}

impl SearchRequest {
    /// Most results returned (default 10).
    pub fn limit(&self) -> i64 {
        self.limit.unwrap_or(10)
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct SearchResult {
    pub url: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// 1-based rank in this answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<i64>,
    /// ISO 8601 when the provider's date could be read, otherwise the provider's own text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// Site or publisher name when reported, else the result's host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The scraped page (with `scrapeOptions`; absent when its scrape failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<Document>,
}

/// 200 answer of POST /v1/search.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SearchResponse {
    pub success: bool,
    pub results: Vec<SearchResult>,
    pub credits_used: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}
