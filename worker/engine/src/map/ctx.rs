//! Discovery's steps: robots.txt per origin, which URLs are returned and
//! which fetched, politeness, page fetches, sitemaps, links taken from a
//! page, and the rendered-links fallback.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use tokio::time::Instant;
use url::Url;
use webdata_core::ErrorCode;

use super::budget::MAX_FETCHES;
use super::found::{Found, PHASE_RENDER, TITLE_LINK_TEXT};
use super::{Ctx, Page, FETCH_TIMEOUT, MAX_COLLECTED, PAGE_MAX_BYTES, RENDER_TIMEOUT};
use crate::fetch::FetchRequest;
use crate::robots::Robots;
use crate::scrape::is_html;
use crate::sitemap::{self, SitemapFetchPolicy};
use crate::urlnorm;
use crate::EngineError;
use webdata_content::{self as content, PageLinks};

fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Same scheme, host and port.
fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

impl Ctx<'_> {
    /// The robots.txt of `url`'s origin, reading it (one fetch, when not
    /// cached by the engine) if the budget allows.
    pub(super) async fn robots_for(&self, url: &Url) -> Option<Arc<Robots>> {
        if let Some(r) = self.known_robots_of(url) {
            return Some(r);
        }
        let key = origin_key(url);
        if !self.budget.take() {
            return None;
        }
        let lookup = self.engine.robots_lookup(url).await;
        if !lookup.fetched {
            self.budget.give_back();
        }
        self.robots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, lookup.robots.clone());
        Some(lookup.robots)
    }

    pub(super) fn known_robots_of(&self, url: &Url) -> Option<Arc<Robots>> {
        if same_origin(url, &self.start) {
            if let Some(r) = self.start_robots.get() {
                return Some(r.clone());
            }
        }
        self.known_robots(&origin_key(url))
    }

    pub(super) fn known_robots(&self, key: &str) -> Option<Arc<Robots>> {
        self.robots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    /// Whether `url` may be returned.
    pub(super) fn accept(&self, url: &Url) -> bool {
        let on_site = (url.host_str() == self.start.host_str() && url.port() == self.start.port())
            || urlnorm::same_site(&self.start, url, self.subdomains);
        on_site
            && self.returned.allows(url)
            && self
                .known_robots_of(url)
                .is_none_or(|r| r.is_allowed_url(url))
    }

    /// Whether `url` may be fetched for its links.
    pub(super) async fn may_fetch(&self, url: &Url) -> bool {
        if !urlnorm::same_site(&self.start, url, self.subdomains)
            || !self.fetchable.allows(url)
            || !looks_like_page(url)
        {
            return false;
        }
        match self.robots_for(url).await {
            Some(r) => r.is_allowed_url(url),
            None => false,
        }
    }

    pub(super) fn fetch_request(&self, url: &Url) -> FetchRequest {
        let mut req = FetchRequest::new(url.as_str(), FETCH_TIMEOUT);
        req.deadline = req.deadline.min(self.deadline);
        req
    }

    /// Waits for the robots.txt `Crawl-delay` of the start host, if any.
    pub(super) async fn polite(&self) {
        let wait = {
            let mut next = self.next_fetch.lock().unwrap_or_else(|p| p.into_inner());
            match next.as_mut() {
                None => return,
                Some((at, delay)) => {
                    let now = Instant::now();
                    let start = (*at).max(now);
                    *at = start + *delay;
                    start
                }
            }
        };
        tokio::time::sleep_until(wait).await;
    }

    /// Fetches one page (its budget already taken) and reads its links.
    pub(super) async fn fetch_page(&self, url: Url) -> Result<Page, EngineError> {
        self.polite().await;
        let resp = self
            .engine
            .fetcher()
            .fetch(&FetchRequest {
                max_bytes: PAGE_MAX_BYTES,
                ..self.fetch_request(&url)
            })
            .await
            .map_err(EngineError::from)?;
        if resp.status >= 400 {
            return Err(EngineError::new(
                ErrorCode::FetchFailed,
                format!("{url} answered HTTP {}", resp.status),
            ));
        }
        let links = match (is_html(&resp), resp.text) {
            (true, Some(text)) => {
                let base = resp.final_url.clone();
                tokio::task::spawn_blocking(move || content::page_links(&text, &base))
                    .await
                    .unwrap_or_default()
            }
            _ => PageLinks::default(),
        };
        Ok(Page { url, links })
    }

    /// The sitemap URLs of the site, each file one fetch.
    pub(super) async fn sitemaps(&self, robots: &Robots) -> sitemap::SitemapDiscovery {
        let starts = sitemap::default_sitemap_urls(&self.start, robots.sitemaps());
        let policy = SitemapFetchPolicy {
            max_files: MAX_FETCHES,
            max_depth: 3,
            max_urls: MAX_COLLECTED,
        };
        sitemap::discover(starts, &policy, |u: Url| async move {
            if Instant::now() >= self.deadline || !self.budget.take() {
                return None;
            }
            match self.engine.fetcher().fetch(&self.fetch_request(&u)).await {
                Ok(r) if r.status < 400 => Some(r.body),
                _ => None,
            }
        })
        .await
    }

    /// Records a page's links: accepted ones as found, same-site ones queued
    /// for fetching (not those of the rendered page, which end discovery).
    pub(super) fn take_links(
        &self,
        found: &mut Found,
        queue: &mut VecDeque<Url>,
        queued: &mut HashSet<String>,
        page: &PageLinks,
        phase: u8,
    ) {
        if page.nofollow && phase != PHASE_RENDER {
            return;
        }
        for (u, text) in &page.links {
            if !urlnorm::same_site(&self.start, u, self.subdomains) {
                continue;
            }
            let u = urlnorm::normalize(u);
            if self.accept(&u) {
                found.add(&u, phase, text.clone(), TITLE_LINK_TEXT);
            }
            if phase != PHASE_RENDER && queued.insert(urlnorm::dedup_key_of_normalized(&u)) {
                queue.push_back(u);
            }
        }
    }

    /// The start page's links as a browser renders it (one fetch).
    pub(super) async fn rendered_links(&self) -> Option<PageLinks> {
        let pool = self.engine.browser()?;
        if !self.budget.take() {
            return None;
        }
        let req = crate::render::RenderRequest::new(self.start.clone(), RENDER_TIMEOUT);
        match pool.render(&req).await {
            Ok(r) => {
                let base = r.final_url.clone();
                Some(
                    tokio::task::spawn_blocking(move || content::page_links(&r.html, &base))
                        .await
                        .unwrap_or_default(),
                )
            }
            Err(crate::render::RenderError::Capacity { .. })
            | Err(crate::render::RenderError::NotAvailable(_)) => {
                // No browser session was used: nothing was fetched.
                self.budget.give_back();
                None
            }
            Err(e) => {
                tracing::debug!(error = %e, url = %self.start, "map render fallback failed");
                None
            }
        }
    }
}

/// False for URLs whose extension says they are not pages (images, media,
/// archives, styles, scripts, feeds, office files): they are returned but
/// never fetched for links.
pub(super) fn looks_like_page(url: &Url) -> bool {
    const NOT_PAGES: &[&str] = &[
        "7z", "avi", "avif", "bmp", "css", "csv", "dmg", "doc", "docx", "eot", "epub", "exe",
        "gif", "gz", "ico", "iso", "jpeg", "jpg", "js", "json", "m4a", "mjs", "mkv", "mov", "mp3",
        "mp4", "mpeg", "odt", "ogg", "otf", "pdf", "png", "ppt", "pptx", "rar", "rss", "svg",
        "tar", "tgz", "tif", "tiff", "ttf", "wav", "webm", "webp", "woff", "woff2", "xls", "xlsx",
        "xml", "zip",
    ];
    let last = url.path().rsplit('/').next().unwrap_or("");
    match last.rsplit_once('.') {
        Some((_, ext)) => !NOT_PAGES.iter().any(|n| n.eq_ignore_ascii_case(ext)),
        None => true,
    }
}
