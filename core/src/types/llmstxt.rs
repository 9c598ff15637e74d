//! POST /v1/llmstxt: an llms.txt (<https://llmstxt.org>) of a site, made
//! from a crawl of it; the job, its status and the two files.

use super::crawl::CrawlRequest;
use super::map::SitemapMode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most pages one llms.txt job crawls.
pub const LLMSTXT_LIMIT_MAX: i64 = 5000;
/// Pages crawled when `limit` is not given.
pub const LLMSTXT_LIMIT_DEFAULT: i64 = 100;
/// What every llms.txt job id starts with (before `_`).
pub const LLMSTXT_ID_PREFIX: &str = "llmstxt";

/// POST /v1/llmstxt body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmsTxtRequest {
    /// The site's start page (its title and description head the file).
    pub url: String,
    /// Pages to crawl: 1 to 5000, default 100 (1 credit per page scraped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// As a crawl's: only URL paths matching one of these globs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_paths: Option<Vec<String>>,
    /// As a crawl's: no URL path matching one of these globs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_paths: Option<Vec<String>>,
    /// As a crawl's: links followed at most this deep (0 to 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_depth: Option<i64>,
    /// As a crawl's: `include` (default), `skip` or `only`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sitemap: Option<SitemapMode>,
}

impl LlmsTxtRequest {
    /// The crawl that gathers the pages: main-content markdown and
    /// metadata (the default formats), boilerplate removed.
    pub fn as_crawl(&self) -> CrawlRequest {
        CrawlRequest {
            url: self.url.trim().to_string(),
            limit: Some(self.limit.unwrap_or(LLMSTXT_LIMIT_DEFAULT)),
            max_depth: self.max_depth,
            include_paths: self.include_paths.clone(),
            exclude_paths: self.exclude_paths.clone(),
            allow_subdomains: None,
            sitemap: self.sitemap,
            remove_boilerplate: None,
            ignore_robots: None,
            scrape_options: None,
            webhook: None,
            resume_from: None,
        }
    }
}

/// The two files of a completed job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LlmsTxtData {
    /// llms.txt: `# title`, `> summary`, then `## section`s of
    /// `- [title](url): description` lines.
    pub llms_txt: String,
    /// llms-full.txt: every page's main-content markdown under `# title`
    /// and `Source: url`, in llms.txt's order.
    pub llms_full_txt: String,
}

/// The failure a job ended with (or the reason it stopped early).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LlmsTxtError {
    pub code: String,
    pub message: String,
}

/// 202 of POST /v1/llmstxt, and 200 of GET and DELETE /v1/llmstxt/{id}.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LlmsTxtStatus {
    pub success: bool,
    /// `llmstxt_…`; also the id of the crawl it runs.
    pub id: String,
    /// `queued`, `scraping`, `completed`, `failed` or `cancelled`.
    pub status: String,
    pub url: String,
    #[serde(rename = "createdAt")]
    pub created_at: String,
    /// Pages scraped.
    pub completed: i64,
    /// URLs found so far.
    pub total: i64,
    /// Pages that failed for good.
    pub failed: i64,
    /// Credits the job has cost (1 per page scraped).
    pub credits_used: i64,
    /// Why it failed or stopped early (e.g. `insufficient_credits`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<LlmsTxtError>,
    /// The files, once `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<LlmsTxtData>,
    pub request_id: String,
}

/// The job status of a crawl status (`running` is `scraping`).
pub fn llmstxt_status(crawl_status: &str) -> &str {
    match crawl_status {
        "running" => "scraping",
        s => s,
    }
}
