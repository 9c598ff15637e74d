//! POST /v1/batch/scrape: a list of URLs scraped with one set of options,
//! run as a crawl whose URLs are given (no discovery).

use super::crawl::{CrawlRequest, WebhookSpec};
use super::map::SitemapMode;
use super::scrape::ScrapeOptions;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most URLs one batch may hold.
pub const BATCH_URLS_MAX: usize = 10_000;

/// POST /v1/batch/scrape body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BatchScrapeRequest {
    /// 1 to 10000 URLs (duplicates are scraped once).
    pub urls: Vec<String>,
    /// Options of every page, as in a scrape request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_options: Option<ScrapeOptions>,
    /// Signed `batch_scrape.*` events, as a crawl's webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookSpec>,
    /// List invalid or refused URLs in `invalidURLs` and scrape the rest,
    /// instead of refusing the request (default false).
    #[serde(
        default,
        rename = "ignoreInvalidURLs",
        skip_serializing_if = "Option::is_none"
    )]
    pub ignore_invalid_urls: Option<bool>,
    /// Fetch pages robots.txt disallows (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_robots: Option<bool>,
}

impl BatchScrapeRequest {
    /// The crawl that runs the batch over `urls` (already checked): no
    /// discovery (depth 0, no sitemaps), one page per URL.
    pub fn as_crawl(&self, urls: &[String]) -> CrawlRequest {
        CrawlRequest {
            url: urls.first().cloned().unwrap_or_default(),
            limit: Some(urls.len().max(1) as i64),
            max_depth: Some(0),
            include_paths: None,
            exclude_paths: None,
            allow_subdomains: None,
            sitemap: Some(SitemapMode::Skip),
            remove_boilerplate: Some(false),
            ignore_robots: self.ignore_robots,
            scrape_options: self.scrape_options.clone(),
            webhook: self.webhook.clone(),
            resume_from: None,
        }
    }
}
