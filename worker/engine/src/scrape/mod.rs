//! The scrape engine: guard → robots → fetch → content pipeline → quality.
//! The scrape endpoint, crawl workers, map and brand all call this.

mod build;
mod kind;
mod options;
mod render;
mod site_markdown;

use crate::fetch::FetchRequest;
use crate::robots::RobotsSource;
use crate::{Engine, EngineError};
use std::time::Duration;
use tokio::time::Instant;
use webdata_core::types::{Document, Format, QualityIssue, ScrapeRequest, Tier};
use webdata_core::ErrorCode;

use kind::is_markdown;
use site_markdown::site_markdown_document;

pub(crate) use kind::is_html;
pub use options::{accept_language, cache_key};
pub use site_markdown::{site_markdown_passes, SITE_MARKDOWN_MIN_WORDS};
/// A scraped page and whether it is billed (a page below 400 with no wall).
#[derive(Debug, Clone)]
pub struct Scraped {
    pub document: Document,
    pub billable: bool,
    /// PNG bytes when a screenshot format was asked for (the API stores
    /// them and puts a signed URL in `document.screenshot`).
    pub screenshot: Option<Vec<u8>>,
    /// The page's HTML when the `brand` format was asked for: the API
    /// reads the brand from it instead of fetching the page again.
    pub brand_page: Option<BrandPage>,
}

/// A fetched (or rendered) HTML page kept for brand extraction.
#[derive(Debug, Clone)]
pub struct BrandPage {
    pub html: String,
    pub url: url::Url,
}

impl Engine {
    /// Scrapes one page as the request asks.
    pub async fn scrape(&self, req: &ScrapeRequest) -> Result<Scraped, EngineError> {
        let opts = &req.options;
        let timeout = Duration::from_millis(opts.timeout_ms().max(1) as u64);
        let deadline = Instant::now() + timeout;
        let url = self
            .fetcher
            .guard()
            .check_url(req.url.trim())
            .map_err(|e| EngineError::new(ErrorCode::BlockedUrl, e.to_string()))?;
        let needs_browser_input = opts.needs_browser();
        let render_first =
            opts.tier() == Tier::Render || (opts.tier() == Tier::Auto && needs_browser_input);
        if render_first && self.browser.is_none() {
            return Err(EngineError::new(
                ErrorCode::NotConfigured,
                if opts.tier() == Tier::Render {
                    "the render tier needs a browser, and none is configured on this deployment (set WEBDATA_WEBDRIVER_URL or install chromium and chromium-driver)"
                } else {
                    "actions, waitFor and screenshots need a browser, and none is configured on this deployment"
                },
            ));
        }
        if !opts.ignore_robots.unwrap_or(false) {
            let lookup = tokio::time::timeout_at(deadline, self.robots.get(&self.fetcher, &url))
                .await
                .map_err(|_| {
                    EngineError::new(
                        ErrorCode::Timeout,
                        format!(
                            "timed out reading robots.txt of {}",
                            url.host_str().unwrap_or("")
                        ),
                    )
                })?;
            if lookup.robots.source() == RobotsSource::Unreachable {
                return Err(EngineError::new(
                    ErrorCode::FetchFailed,
                    format!(
                        "robots.txt of {} could not be read (server error or unreachable), so the site is treated as closed; retry later or set `ignoreRobots: true`",
                        url.host_str().unwrap_or("")
                    ),
                ));
            }
            if !lookup.robots.is_allowed_url(&url) {
                return Err(EngineError::new(
                    ErrorCode::Forbidden,
                    format!(
                        "robots.txt of {} does not allow {} for the `webdata` user agent; set `ignoreRobots: true` to skip the check",
                        url.host_str().unwrap_or(""),
                        url.path()
                    ),
                ));
            }
        }
        let formats = opts.formats();
        let mut fetch = FetchRequest::new(url.as_str(), timeout);
        fetch.deadline = deadline;
        fetch.headers = opts
            .headers
            .as_ref()
            .map(|h| h.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        fetch.accept_language = opts
            .location
            .as_ref()
            .and_then(|l| l.languages.as_deref())
            .and_then(accept_language);
        let site_markdown = opts.site_markdown.unwrap_or(false)
            && !formats
                .iter()
                .any(|f| matches!(f, Format::Html | Format::RawHtml | Format::Links));
        if site_markdown {
            let mut md_fetch = fetch.clone();
            md_fetch.accept = Some("text/markdown, text/x-markdown;q=0.95, text/html;q=0.5".into());
            let resp = tokio::time::timeout_at(deadline, self.fetcher.fetch(&md_fetch))
                .await
                .map_err(|_| {
                    EngineError::new(ErrorCode::Timeout, format!("timed out fetching {url}"))
                })?
                .map_err(EngineError::from)?;
            if is_markdown(&resp) {
                if let Some(doc) = site_markdown_document(req, &formats, &resp) {
                    return Ok(doc);
                }
                // The site's markdown failed the quality check: extract HTML as usual.
            } else {
                return self.build(req, &formats, resp).await;
            }
        }
        if render_first {
            let why = if opts.tier() == Tier::Render {
                "tier render was requested"
            } else {
                "the request has actions or waitFor, which need a browser"
            };
            return self
                .render(req, &formats, &url, deadline, vec![], why)
                .await;
        }
        let resp = tokio::time::timeout_at(deadline, self.fetcher.fetch(&fetch))
            .await
            .map_err(|_| EngineError::new(ErrorCode::Timeout, format!("timed out fetching {url}")))?
            .map_err(EngineError::from)?;
        let fetched = self.build(req, &formats, resp).await?;
        let js = fetched
            .document
            .quality
            .as_ref()
            .is_some_and(|q| q.issues.contains(&QualityIssue::JsRequired));
        if opts.tier() == Tier::Auto && js {
            if self.browser.is_some() {
                let escalations = vec!["render".to_string()];
                let why = "the fetched page needs JavaScript (a script shell, or thin text under heavy scripts); rendered it in a browser";
                return self
                    .render(req, &formats, &url, deadline, escalations, why)
                    .await;
            }
            let mut fetched = fetched;
            if let Some(q) = fetched.document.quality.as_mut() {
                q.reason = Some("the page needs JavaScript, but no browser is configured on this deployment; returned the fetched HTML".into());
            }
            return Ok(fetched);
        }
        Ok(fetched)
    }
}

#[cfg(test)]
mod tests;
