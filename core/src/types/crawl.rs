//! Crawl: the request, its webhook and the job answer.

use super::map::SitemapMode;
use super::scrape::ScrapeOptions;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The `webhook` object of a crawl request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookSpec {
    pub url: String,
    /// Short names: `started`, `page`, `completed`, `failed`, `cancelled` (default all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<String>>,
    /// Echoed in every delivery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// POST /v1/crawl body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrawlRequest {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_paths: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_paths: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_subdomains: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sitemap: Option<SitemapMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove_boilerplate: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_robots: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_options: Option<ScrapeOptions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookSpec>,
    /// Continue a crawl that ended (cancelled, failed or completed) from the
    /// same `url`: the pages it scraped or gave up on are not fetched again,
    /// the URLs it left unscraped are queued first, and `limit` counts this
    /// crawl's pages only. An addition to the spec (`webdata crawl --resume`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_from: Option<String>,
}

impl CrawlRequest {
    /// Whether every page of the crawl needs a browser (render demand).
    pub fn renders_every_page(&self) -> bool {
        self.scrape_options
            .as_ref()
            .is_some_and(|o| o.renders_every_page())
    }

    /// Page limit (default 100).
    pub fn limit(&self) -> i64 {
        self.limit.unwrap_or(100)
    }
    /// Sitemap mode (default include).
    pub fn sitemap(&self) -> SitemapMode {
        self.sitemap.unwrap_or_default()
    }
    /// Strip repeated blocks (default true).
    pub fn remove_boilerplate(&self) -> bool {
        self.remove_boilerplate.unwrap_or(true)
    }
}

/// 202 answer of POST /v1/crawl and 200 of DELETE.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrawlJob {
    pub id: String,
    pub status: String,
    pub url: String,
    pub created_at: String,
}
