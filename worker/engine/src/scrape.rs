//! The scrape engine: guard → robots → fetch → content pipeline → quality.
//! The scrape endpoint, crawl workers, map and brand all call this.

use crate::fetch::{FetchRequest, FetchResponse};
use crate::robots::RobotsSource;
use crate::{Engine, EngineError};
use std::time::Duration;
use tokio::time::Instant;
use webdata_content::pdf::PdfError;
use webdata_content::{self as content, ContentOptions, Extracted};
use webdata_core::types::{Document, Format, Metadata, QualityIssue, ScrapeRequest, Tier};
use webdata_core::ErrorCode;

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

pub(crate) fn is_html(resp: &FetchResponse) -> bool {
    match resp.content_type.as_deref() {
        Some("text/html") | Some("application/xhtml+xml") => true,
        None => resp
            .text
            .as_deref()
            .map(|t| {
                let head = t.trim_start().get(..256).unwrap_or(t.trim_start());
                let head = head.to_ascii_lowercase();
                head.starts_with("<!doctype html") || head.starts_with("<html")
            })
            .unwrap_or(false),
        _ => false,
    }
}

fn is_pdf(resp: &FetchResponse) -> bool {
    resp.content_type.as_deref() == Some("application/pdf")
        || (resp
            .content_type
            .as_deref()
            .is_none_or(|m| m == "application/octet-stream")
            && resp.body.starts_with(b"%PDF-"))
}

fn is_textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime == "application/json"
        || mime.ends_with("+json")
        || mime == "application/xml"
        || mime.ends_with("+xml")
}

/// `Accept-Language` from `location.languages` (first is preferred).
pub fn accept_language(languages: &[String]) -> Option<String> {
    let langs: Vec<&str> = languages
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        .take(10)
        .collect();
    if langs.is_empty() {
        return None;
    }
    Some(
        langs
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    l.to_string()
                } else {
                    format!("{l};q={:.1}", (10 - i.min(9)) as f32 / 10.0)
                }
            })
            .collect::<Vec<_>>()
            .join(","),
    )
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

    /// Renders the page in the browser and runs it through the same content
    /// pipeline, quality checks and billing as a fetched page.
    async fn render(
        &self,
        req: &ScrapeRequest,
        formats: &[Format],
        url: &url::Url,
        deadline: Instant,
        escalations: Vec<String>,
        why: &str,
    ) -> Result<Scraped, EngineError> {
        use crate::render::{RenderError, RenderRequest};
        let Some(pool) = &self.browser else {
            return Err(EngineError::new(
                ErrorCode::NotConfigured,
                "no browser is configured on this deployment",
            ));
        };
        let opts = &req.options;
        let rr = RenderRequest {
            url: url.clone(),
            headers: opts
                .headers
                .as_ref()
                .map(|h| h.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            languages: opts
                .location
                .as_ref()
                .and_then(|l| l.languages.clone())
                .unwrap_or_default(),
            actions: opts.actions.clone().unwrap_or_default(),
            wait_for: opts
                .wait_for
                .map(|ms| Duration::from_millis(ms.max(0) as u64)),
            deadline,
            screenshot: if formats.contains(&Format::ScreenshotFull) {
                Some(crate::render::ScreenshotKind::FullPage)
            } else if formats.contains(&Format::Screenshot) {
                Some(crate::render::ScreenshotKind::Viewport)
            } else {
                None
            },
            script: None,
        };
        let rendered = pool.render(&rr).await.map_err(|e| match e {
            RenderError::NotAvailable(m) => EngineError::new(ErrorCode::NotConfigured, m),
            RenderError::Capacity { retry_after_ms } => EngineError {
                code: ErrorCode::CapacityExceeded,
                message: format!("all browser sessions are busy; retry after {retry_after_ms} ms (the site did not block you)"),
                retry_after_ms: Some(retry_after_ms as i64),
            },
            RenderError::Timeout => EngineError::new(ErrorCode::Timeout, format!("timed out rendering {url}")),
            RenderError::Blocked(m) => EngineError::new(ErrorCode::BlockedUrl, m),
            RenderError::ActionFailed { index, message } => {
                EngineError::new(ErrorCode::FetchFailed, format!("`actions[{index}]` failed: {message}"))
            }
            RenderError::Browser(m) => EngineError::new(ErrorCode::FetchFailed, format!("the browser failed: {m}")),
        })?;
        let png = rendered.screenshot_png;
        let html = rendered.html;
        let resp = FetchResponse {
            final_url: rendered.final_url,
            status: rendered.status.unwrap_or(200),
            headers: Default::default(),
            content_type: Some("text/html".into()),
            body: html.clone().into_bytes(),
            text: Some(html),
            encoding: Some("UTF-8"),
            truncated: false,
            elapsed: rendered.elapsed,
        };
        let mut scraped = self.build(req, formats, resp).await?;
        scraped.document.tier = Some("render".into());
        scraped.screenshot = png;
        if let Some(q) = scraped.document.quality.as_mut() {
            q.escalations = escalations;
            // The rendered page's own verdict stands: a shell that stays
            // empty in the browser keeps `js_required`.
            if q.issues.contains(&QualityIssue::JsRequired)
                || q.issues.contains(&QualityIssue::ThinContent)
            {
                q.reason = Some(format!("{why}; the rendered page still has little content"));
            } else if scraped.billable {
                q.reason = Some(why.to_string());
            }
        }
        Ok(scraped)
    }

    async fn build(
        &self,
        req: &ScrapeRequest,
        formats: &[Format],
        resp: FetchResponse,
    ) -> Result<Scraped, EngineError> {
        let opts = &req.options;
        let want = |f: Format| formats.contains(&f);
        let mime = resp.content_type.clone().unwrap_or_default();
        let html = is_html(&resp);
        let mut issues = Vec::new();
        let extracted: Extracted = if html {
            let text = resp.text.as_deref().unwrap_or("");
            let copts = ContentOptions {
                only_main_content: opts.only_main_content(),
                include_tags: opts.include_tags.clone().unwrap_or_default(),
                exclude_tags: opts.exclude_tags.clone().unwrap_or_default(),
                want_markdown: want(Format::Markdown) || want(Format::Chunks),
                want_html: want(Format::Html),
                want_text: want(Format::Text),
                want_links: want(Format::Links),
                want_json_ld: want(Format::Metadata),
                chunk_size: want(Format::Chunks).then(|| opts.chunk_size() as usize),
            };
            content::extract(text, &resp.final_url, &copts)
                .map_err(|e| EngineError::new(ErrorCode::InvalidRequest, e.to_string()))?
        } else if is_textual(&mime) {
            issues.push(QualityIssue::NonHtml);
            content::text_document(resp.text.as_deref().unwrap_or(""), &mime)
        } else if is_pdf(&resp) {
            issues.push(QualityIssue::NonHtml);
            let body = resp.body.clone();
            let text =
                tokio::task::spawn_blocking(move || webdata_content::pdf::pdf_to_text(&body))
                    .await
                    .unwrap_or_else(|e| Err(PdfError::Unreadable(e.to_string())))
                    .map_err(|e| {
                        EngineError::new(
                            ErrorCode::UnsupportedContent,
                            format!("{}: {e}", resp.final_url),
                        )
                    })?;
            let mut doc = content::text_document(&text, "text/plain");
            doc.metadata.title = text.lines().next().map(|l| l.chars().take(200).collect());
            doc
        } else {
            return Err(EngineError::new(
                ErrorCode::UnsupportedContent,
                format!(
                    "{} is `{mime}`, which webdata cannot turn into text",
                    resp.final_url
                ),
            ));
        };
        if resp.truncated {
            issues.push(QualityIssue::Truncated);
        }
        let mut quality = content::assess(&extracted.quality_signals, resp.status);
        for i in issues {
            if !quality.issues.contains(&i) {
                quality.issues.push(i);
            }
        }
        if quality.issues.contains(&QualityIssue::BotWall) {
            return Err(EngineError::new(
                ErrorCode::BlockedBySite,
                format!(
                    "{} answered with a bot challenge instead of the page",
                    resp.final_url
                ),
            ));
        }
        let walled = quality
            .issues
            .iter()
            .any(|i| matches!(i, QualityIssue::LoginWall | QualityIssue::CookieWall));
        let billable = resp.status < 400 && !walled;
        if resp.status >= 400 {
            quality.reason = Some(format!(
                "the site answered HTTP {}; not charged",
                resp.status
            ));
        } else if walled {
            quality.reason = Some("the page is behind a wall; not charged".to_string());
        } else if quality.reason.is_none() {
            quality.reason =
                Some("fetched without a browser; the page did not need one".to_string());
        }
        let mut metadata: Metadata = extracted.metadata;
        metadata.status_code = Some(resp.status as i64);
        metadata.content_type = resp.content_type.clone();
        if !want(Format::Metadata) {
            metadata.json_ld = None;
        }
        let brand_page = (want(Format::Brand) && html).then(|| BrandPage {
            html: resp.text.clone().unwrap_or_default(),
            url: resp.final_url.clone(),
        });
        let final_url = resp.final_url.to_string();
        let document = Document {
            url: req.url.clone(),
            final_url: Some(final_url),
            markdown: if want(Format::Markdown) {
                extracted.markdown
            } else {
                None
            },
            html: if want(Format::Html) {
                extracted.html
            } else {
                None
            },
            raw_html: if want(Format::RawHtml) {
                resp.text.clone()
            } else {
                None
            },
            text: if want(Format::Text) {
                extracted.text
            } else {
                None
            },
            links: if want(Format::Links) {
                extracted.links
            } else {
                None
            },
            chunks: if want(Format::Chunks) {
                extracted.chunks
            } else {
                None
            },
            metadata: Some(metadata),
            tier: Some("fetch".to_string()),
            cached: Some(false),
            quality: Some(quality),
            ..Default::default()
        };
        Ok(Scraped {
            document,
            billable,
            screenshot: None,
            brand_page,
        })
    }
}

fn is_markdown(resp: &FetchResponse) -> bool {
    matches!(
        resp.content_type.as_deref(),
        Some("text/markdown") | Some("text/x-markdown")
    )
}

/// Least words a site's own markdown needs to be used.
pub const SITE_MARKDOWN_MIN_WORDS: usize = 50;

/// The quality check for a site's own markdown: enough words, not HTML in
/// disguise, not an error page, and some structure (a heading or several
/// paragraphs).
pub fn site_markdown_passes(status: u16, md: &str) -> bool {
    let trimmed = md.trim_start();
    let words = md.split_whitespace().count();
    let looks_html = trimmed.starts_with('<')
        && trimmed
            .get(..64)
            .unwrap_or(trimmed)
            .to_ascii_lowercase()
            .contains("html");
    let structured =
        md.lines().any(|l| l.trim_start().starts_with('#')) || md.matches("\n\n").count() >= 2;
    status < 400 && words >= SITE_MARKDOWN_MIN_WORDS && !looks_html && structured
}

fn site_markdown_document(
    req: &ScrapeRequest,
    formats: &[Format],
    resp: &FetchResponse,
) -> Option<Scraped> {
    let md = resp.text.as_deref()?;
    if !site_markdown_passes(resp.status, md) {
        return None;
    }
    let want = |f: Format| formats.contains(&f);
    let title = md
        .lines()
        .find_map(|l| l.trim().strip_prefix("# ").map(|t| t.trim().to_string()));
    let metadata = Metadata {
        title,
        status_code: Some(resp.status as i64),
        content_type: resp.content_type.clone(),
        ..Default::default()
    };
    let text = want(Format::Text).then(|| md.to_string());
    let chunks = want(Format::Chunks)
        .then(|| content::chunk_markdown(md, req.options.chunk_size() as usize, None));
    let document = Document {
        url: req.url.clone(),
        final_url: Some(resp.final_url.to_string()),
        markdown: want(Format::Markdown).then(|| md.to_string()),
        text,
        chunks,
        metadata: Some(metadata),
        tier: Some("fetch".into()),
        cached: Some(false),
        quality: Some(webdata_core::types::Quality {
            score: 0.9,
            issues: if resp.truncated {
                vec![QualityIssue::Truncated]
            } else {
                vec![]
            },
            escalations: vec![],
            reason: Some("the site served its own markdown, which passed the quality check".into()),
        }),
        ..Default::default()
    };
    Some(Scraped {
        document,
        billable: true,
        screenshot: None,
        brand_page: None,
    })
}

/// The scrape-cache key: the URL plus every option that changes the
/// output (`timeout` and `maxAge` do not; `ignoreRobots` does, so a page
/// fetched past robots.txt is never served to a caller who respects it).
pub fn cache_key(req: &ScrapeRequest) -> String {
    use sha2::{Digest, Sha256};
    let mut o = req.options.clone();
    o.timeout = None;
    o.max_age = None;
    o.formats = Some(o.formats());
    o.only_main_content = Some(o.only_main_content());
    o.chunk_size = Some(o.chunk_size());
    o.tier = Some(o.tier());
    o.ignore_robots = Some(o.ignore_robots.unwrap_or(false));
    o.site_markdown = Some(o.site_markdown.unwrap_or(false));
    let url = url::Url::parse(req.url.trim())
        .map(|mut u| {
            u.set_fragment(None);
            u.to_string()
        })
        .unwrap_or_else(|_| req.url.trim().to_string());
    let mut h = Sha256::new();
    h.update(url.as_bytes());
    h.update(b"\n");
    h.update(serde_json::to_string(&o).unwrap_or_default().as_bytes());
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::{accept_language, cache_key};
    use webdata_core::types::ScrapeRequest;

    fn req(v: serde_json::Value) -> ScrapeRequest {
        serde_json::from_value(v).unwrap_or_else(|_| ScrapeRequest {
            url: String::new(),
            options: Default::default(),
        })
    }

    #[test]
    fn site_markdown_quality_check() {
        let good = format!("# Title\n\n{}", "word ".repeat(60));
        assert!(super::site_markdown_passes(200, &good));
        assert!(!super::site_markdown_passes(404, &good), "error pages fail");
        assert!(
            !super::site_markdown_passes(200, "# Title\n\nfew words"),
            "too thin"
        );
        let html = format!("<!doctype html><html>{}</html>", "word ".repeat(60));
        assert!(!super::site_markdown_passes(200, &html), "HTML in disguise");
        assert!(
            !super::site_markdown_passes(200, &"word ".repeat(80)),
            "no structure"
        );
    }

    #[test]
    fn cache_key_ignores_timeout_and_fragment_but_not_formats() {
        let a = cache_key(&req(
            serde_json::json!({"url": "https://a.test/x#top", "timeout": 5000}),
        ));
        let b = cache_key(&req(
            serde_json::json!({"url": "https://a.test/x", "maxAge": 0}),
        ));
        assert_eq!(a, b);
        let defaults = cache_key(&req(
            serde_json::json!({"url": "https://a.test/x", "formats": ["markdown", "metadata"]}),
        ));
        assert_eq!(a, defaults, "explicit defaults equal implicit ones");
        let c = cache_key(&req(
            serde_json::json!({"url": "https://a.test/x", "formats": ["html"]}),
        ));
        assert_ne!(a, c);
        let d = cache_key(&req(
            serde_json::json!({"url": "https://a.test/x", "ignoreRobots": true}),
        ));
        assert_ne!(a, d);
    }

    #[test]
    fn accept_language_weights_follow_order() {
        assert_eq!(
            accept_language(&["de-DE".into(), "de".into(), "en".into()]).as_deref(),
            Some("de-DE,de;q=0.9,en;q=0.8")
        );
        assert_eq!(accept_language(&["bad value".into()]), None);
        assert_eq!(accept_language(&[]), None);
    }
}
