//! Scrape: its options, the scraped document and the answer.

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
    /// Compare with the organization's previous scrape of the URL
    /// (an addition to v1: `changeTracking` on the Document).
    ChangeTracking,
}

/// How a change-tracked page is compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ChangeMode {
    /// A unified diff of the main-content markdown (the default).
    #[serde(rename = "git-diff")]
    GitDiff,
    /// The fields `schema` (or `prompt`) asks for, read by the extract
    /// model from each version and compared field by field.
    #[serde(rename = "json")]
    Json,
}

/// `changeTrackingOptions` (with the `changeTracking` format).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChangeTrackingOptions {
    /// Comparisons to return when the page changed (default `["git-diff"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<Vec<ChangeMode>>,
    /// Separate history: snapshots are kept per organization, URL and tag,
    /// so two watchers of one page do not overwrite each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// With the `json` mode: a JSON Schema of an object whose fields are
    /// compared (at most 64 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<serde_json::Value>,
    /// With the `json` mode: what to read from the page (at most 4000
    /// characters); `schema` or `prompt` is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
}

/// Whether a page changed since the organization's previous scrape of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChangeStatus {
    New,
    Same,
    Changed,
    Removed,
}

/// Whether the page is reachable through the site's links and sitemaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    Visible,
    Hidden,
}

/// A change-tracked page's comparison with its previous snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeTracking {
    /// When the compared snapshot was taken (RFC 3339), null the first time.
    pub previous_scrape_at: Option<String>,
    pub change_status: ChangeStatus,
    pub visibility: Visibility,
    /// With `git-diff` and status `changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<ChangeDiff>,
    /// With the `json` mode and status `changed`: every top-level field whose
    /// value differs, as `{"field": {"previous": …, "current": …}}` (empty
    /// when the text changed but none of the fields did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A line diff of the main-content markdown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChangeDiff {
    /// Unified diff (`--- previous` / `+++ current`, 3 lines of context).
    pub text: String,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_tracking_options: Option<ChangeTrackingOptions>,
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
    pub const FIELDS: [&'static str; 16] = [
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
        "changeTrackingOptions",
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
    /// Accepted cache age in milliseconds (default two days). Always 0 (a
    /// fresh scrape) when tracking changes: the point is the page as it is
    /// now, and a cached copy would hide a change.
    pub fn max_age_ms(&self) -> i64 {
        if self.tracks_changes() {
            return 0;
        }
        self.max_age.unwrap_or(172_800_000)
    }
    /// The `changeTracking` format was asked for.
    pub fn tracks_changes(&self) -> bool {
        self.formats
            .as_ref()
            .is_some_and(|f| f.contains(&Format::ChangeTracking))
    }
    /// The change-tracking tag ("" when none).
    pub fn change_tag(&self) -> &str {
        self.change_tracking_options
            .as_ref()
            .and_then(|o| o.tag.as_deref())
            .unwrap_or("")
    }
    /// Whether to return a unified diff for a changed page.
    pub fn change_diff_wanted(&self) -> bool {
        self.change_tracking_options
            .as_ref()
            .and_then(|o| o.modes.as_ref())
            .is_none_or(|m| m.contains(&ChangeMode::GitDiff))
    }
    /// Whether the `json` mode (field comparison by the extract model) was
    /// asked for.
    pub fn change_json_wanted(&self) -> bool {
        self.tracks_changes()
            && self
                .change_tracking_options
                .as_ref()
                .and_then(|o| o.modes.as_ref())
                .is_some_and(|m| m.contains(&ChangeMode::Json))
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
    /// With the `changeTracking` format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_tracking: Option<ChangeTracking>,
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
