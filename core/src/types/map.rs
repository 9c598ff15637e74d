//! Map: the request, the links found and the answer (and the sitemap mode
//! crawls share).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where crawl discovery takes URLs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum SitemapMode {
    #[default]
    Include,
    Skip,
    Only,
}

/// POST /v1/map body.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MapRequest {
    pub url: String,
    /// Rank URLs by relevance to this text (BM25 over URL words and titles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
    /// 1 to 100000, default 5000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_subdomains: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sitemap: Option<SitemapMode>,
    /// Only URLs whose path matches one of these globs are returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_paths: Option<Vec<String>>,
    /// URLs whose path matches one of these globs are never returned (nor fetched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_paths: Option<Vec<String>>,
}

impl MapRequest {
    /// Most links returned (default 5000).
    pub fn limit(&self) -> i64 {
        self.limit.unwrap_or(5000)
    }
    /// Sitemap mode (default include).
    pub fn sitemap(&self) -> SitemapMode {
        self.sitemap.unwrap_or_default()
    }
}

/// Where a map found a URL.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum LinkSource {
    /// Listed in a sitemap.
    Sitemap,
    /// Linked from a fetched page (or the start page itself).
    Link,
    /// Linked from the start page as rendered by a browser.
    Render,
}

/// One URL a map found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MapLink {
    pub url: String,
    /// The page's `<title>` when it was fetched, else the sitemap's title,
    /// else the text of the first link to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub source: LinkSource,
}

/// 200 answer of POST /v1/map.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MapResponse {
    pub success: bool,
    pub links: Vec<MapLink>,
    /// True when discovery stopped early for lack of credits.
    #[serde(rename = "budgetLimited")]
    pub budget_limited: bool,
    pub credits_used: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}
