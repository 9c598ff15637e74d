//! Wire types exactly as the spec names them. The OpenAPI document and the
//! handlers both derive from these, so a field is renamed in one place only.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Output formats a scrape can return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Format {
    Markdown,
    Html,
    RawHtml,
    Text,
    Links,
    Screenshot,
    ScreenshotFull,
    Chunks,
    Metadata,
    Brand,
}

/// Browser tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    #[default]
    Auto,
    Fetch,
    Render,
    Premium,
}

/// One browser action of a scrape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Action {
    #[serde(rename = "type")]
    pub kind: ActionType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The kind of a browser action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ActionType {
    Wait,
    Click,
    Scroll,
    Type,
    Press,
}

/// Where the scrape should appear to come from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Location {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub languages: Option<Vec<String>>,
}

/// Options shared by scrape, crawl, search and extract. Absent fields take the
/// spec's defaults through the accessor methods.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScrapeOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub formats: Option<Vec<Format>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_main_content: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site_markdown: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_tags: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_premium: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<Action>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_age: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_robots: Option<bool>,
}

impl ScrapeOptions {
    /// Actions, `waitFor` or a screenshot: only a browser can serve these.
    pub fn needs_browser(&self) -> bool {
        self.actions.as_ref().is_some_and(|a| !a.is_empty())
            || self.wait_for.is_some()
            || self
                .formats()
                .iter()
                .any(|f| matches!(f, Format::Screenshot | Format::ScreenshotFull))
    }

    /// Every page is rendered: tier `render`, or input only a browser serves.
    pub fn renders_every_page(&self) -> bool {
        self.tier() == Tier::Render || self.needs_browser()
    }

    /// The wire names of every field, for unknown-field checks.
    pub const FIELDS: [&'static str; 15] = [
        "formats",
        "onlyMainContent",
        "siteMarkdown",
        "includeTags",
        "excludeTags",
        "tier",
        "allowPremium",
        "actions",
        "waitFor",
        "timeout",
        "maxAge",
        "headers",
        "location",
        "chunkSize",
        "ignoreRobots",
    ];

    /// Requested formats, `[markdown, metadata]` by default.
    pub fn formats(&self) -> Vec<Format> {
        self.formats
            .clone()
            .unwrap_or_else(|| vec![Format::Markdown, Format::Metadata])
    }
    /// Keep only the main content (default true).
    pub fn only_main_content(&self) -> bool {
        self.only_main_content.unwrap_or(true)
    }
    /// Whole-scrape timeout in milliseconds (default 30000).
    pub fn timeout_ms(&self) -> i64 {
        self.timeout.unwrap_or(30_000)
    }
    /// Accepted cache age in milliseconds (default two days).
    pub fn max_age_ms(&self) -> i64 {
        self.max_age.unwrap_or(172_800_000)
    }
    /// Target chunk size in tokens (default 1500).
    pub fn chunk_size(&self) -> i64 {
        self.chunk_size.unwrap_or(1500)
    }
    /// The tier asked for (default auto).
    pub fn tier(&self) -> Tier {
        self.tier.unwrap_or_default()
    }
}

/// POST /v1/scrape body: every ScrapeOptions field plus `url`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScrapeRequest {
    /// Absolute http(s) URL of the page.
    pub url: String,
    #[serde(flatten)]
    pub options: ScrapeOptions,
}

/// A token-counted piece of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Chunk {
    pub index: i64,
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heading_path: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<i64>,
}

/// Page metadata. Basic fields are always returned; `jsonLd` only with the
/// `metadata` format.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub og_image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<i64>,
    /// Parsed JSON-LD blocks (with the `metadata` format only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_ld: Option<Vec<serde_json::Value>>,
}

/// Quality issues the pipeline can detect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum QualityIssue {
    ThinContent,
    JsRequired,
    BotWall,
    CookieWall,
    LoginWall,
    #[serde(rename = "soft_404")]
    Soft404,
    Truncated,
    NonHtml,
}

#[cfg(test)]
mod tests {
    use super::QualityIssue;

    #[test]
    fn quality_issues_use_the_spec_names() {
        let all = [
            (QualityIssue::ThinContent, "thin_content"),
            (QualityIssue::JsRequired, "js_required"),
            (QualityIssue::BotWall, "bot_wall"),
            (QualityIssue::CookieWall, "cookie_wall"),
            (QualityIssue::LoginWall, "login_wall"),
            (QualityIssue::Soft404, "soft_404"),
            (QualityIssue::Truncated, "truncated"),
            (QualityIssue::NonHtml, "non_html"),
        ];
        for (issue, name) in all {
            assert_eq!(
                serde_json::to_value(issue).ok(),
                Some(serde_json::Value::from(name))
            );
        }
    }
}

/// Explains thin content and what the pipeline did.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Quality {
    pub score: f64,
    #[serde(default)]
    pub issues: Vec<QualityIssue>,
    #[serde(default)]
    pub escalations: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A scraped page.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_html: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<Vec<Chunk>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<Quality>,
}

/// 200 answer of POST /v1/scrape.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ScrapeResponse {
    pub success: bool,
    pub data: Document,
    pub credits_used: i64,
    pub request_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<i64>,
}

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
