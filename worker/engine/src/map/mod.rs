//! Map: discover a site's URLs fast, billed by the fetches made.
//!
//! Discovery runs robots.txt, then the sitemaps (robots.txt `Sitemap:` lines
//! and `/sitemap.xml`, indexes followed, gzip and text sitemaps read) at the
//! same time as the start page, then pages fetched breadth-first for their
//! links, and, when all that found fewer than ten URLs and a browser is
//! configured, the links of the start page as a browser renders it.
//!
//! Every robots.txt actually fetched (a cached copy is free), sitemap file,
//! page fetched for links and the render counts as one fetch against a
//! budget the caller sets from the credits it could reserve (3 credits per
//! 10 fetches, at most 140 fetches). Discovery stops when the budget is used,
//! when `limit` URLs are found, or after [`MAP_DEADLINE`].
//!
//! Returned URLs are normalised ([`urlnorm::normalize`]) and de-duplicated
//! ([`urlnorm::dedup_key`]); they are on the start URL's site (subdomains
//! with `includeSubdomains`), pass `includePaths`/`excludePaths`, and are
//! allowed by the robots.txt of their host when that file was read.

pub mod rank;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use tokio::time::Instant;
use url::Url;
use webdata_core::types::{LinkSource, MapLink, MapRequest, SitemapMode};
use webdata_core::ErrorCode;

use crate::fetch::FetchRequest;
use crate::glob::PathFilter;
use crate::robots::{Robots, RobotsSource};
use crate::scrape::is_html;
use crate::sitemap::{self, SitemapFetchPolicy};
use crate::urlnorm;
use crate::{Engine, EngineError};
use webdata_content::{self as content, PageLinks};

/// Most fetches one map makes (42 credits' worth).
pub const MAX_FETCHES: usize = 140;
/// What a map reserves up front: the cost of [`MAX_FETCHES`].
pub const WORST_CASE_CREDITS: i64 = 42;
/// Credits per started block of ten fetches.
pub const CREDIT_STEP: i64 = 3;
/// How long discovery may run before it returns what it found.
pub const MAP_DEADLINE: Duration = Duration::from_secs(45);
/// Fewer URLs than this (or than `limit`) after fetching triggers the render fallback.
pub const RENDER_BELOW: usize = 10;
/// Pages fetched for links at the same time.
const FETCH_CONCURRENCY: usize = 8;
/// One page or sitemap fetch.
const FETCH_TIMEOUT: Duration = Duration::from_secs(15);
/// The rendered-links fallback.
const RENDER_TIMEOUT: Duration = Duration::from_secs(20);
/// Body cap of a page fetched for links.
const PAGE_MAX_BYTES: usize = 5 * 1024 * 1024;
/// Most URLs collected before ranking and `limit` (the largest `limit`).
const MAX_COLLECTED: usize = 100_000;
/// The longest pause honoured between fetches for a robots.txt `Crawl-delay`.
const MAX_CRAWL_DELAY: Duration = Duration::from_secs(5);

/// Credits for `fetches`: 3 per 10 started, at least 3.
pub fn credits_for(fetches: usize) -> i64 {
    fetches.max(1).div_ceil(10) as i64 * CREDIT_STEP
}

/// Fetches `credits` pay for (at most [`MAX_FETCHES`]).
pub fn fetches_for(credits: i64) -> usize {
    ((credits.max(0) / CREDIT_STEP) as usize * 10).min(MAX_FETCHES)
}

/// What a map found.
#[derive(Debug, Clone)]
pub struct MapOutcome {
    /// The URLs, ranked when `search` was given, at most `limit`.
    pub links: Vec<MapLink>,
    /// Fetches made (what is billed).
    pub fetches: usize,
    /// Discovery wanted another fetch but the budget the credits allowed was used.
    pub budget_limited: bool,
    /// The rendered-links fallback ran.
    pub rendered: bool,
    /// URLs found before `limit` was applied.
    pub found: usize,
}

/// The fetch budget; `take` before every fetch.
struct Budget {
    used: AtomicUsize,
    max: usize,
    refused: AtomicBool,
}

impl Budget {
    fn take(&self) -> bool {
        let mut cur = self.used.load(Ordering::Acquire);
        loop {
            if cur >= self.max {
                self.refused.store(true, Ordering::Release);
                return false;
            }
            match self
                .used
                .compare_exchange_weak(cur, cur + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    fn give_back(&self) {
        self.used.fetch_sub(1, Ordering::AcqRel);
    }

    fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }
}

/// Discovery phases, in the order results are listed when not ranked.
const PHASE_START: u8 = 0;
const PHASE_SITEMAP: u8 = 1;
const PHASE_LINK: u8 = 2;
const PHASE_RENDER: u8 = 3;

/// How good a title is: a page's own `<title>` beats a sitemap title, which
/// beats the text of a link to the page.
const TITLE_PAGE: u8 = 3;
const TITLE_SITEMAP: u8 = 2;
const TITLE_LINK_TEXT: u8 = 1;

struct Entry {
    url: Url,
    title: Option<String>,
    title_rank: u8,
    source: LinkSource,
    phase: u8,
    seq: usize,
}

/// Accepted URLs by dedup key.
#[derive(Default)]
struct Found {
    entries: Vec<Entry>,
    index: HashMap<String, usize, rustc_hash::FxBuildHasher>,
    seq: usize,
}

impl Found {
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// Adds `url` (already normalised) or improves its entry.
    fn add(&mut self, url: &Url, phase: u8, title: Option<String>, title_rank: u8) {
        let source = match phase {
            PHASE_SITEMAP => LinkSource::Sitemap,
            PHASE_RENDER => LinkSource::Render,
            _ => LinkSource::Link,
        };
        let title = title.filter(|t| !t.trim().is_empty());
        self.seq += 1;
        let key = urlnorm::dedup_key_of_normalized(url);
        if let Some(&i) = self.index.get(&key) {
            let e = &mut self.entries[i];
            if phase < e.phase {
                e.phase = phase;
                e.seq = self.seq;
                e.source = source;
            }
            if title.is_some() && title_rank > e.title_rank {
                e.title = title;
                e.title_rank = title_rank;
            }
            return;
        }
        if self.entries.len() >= MAX_COLLECTED {
            return;
        }
        self.index.insert(key, self.entries.len());
        self.entries.push(Entry {
            url: url.clone(),
            title_rank: if title.is_some() { title_rank } else { 0 },
            title,
            source,
            phase,
            seq: self.seq,
        });
    }
}

/// A page fetched for links.
struct Page {
    /// The URL asked for.
    url: Url,
    links: PageLinks,
}

struct Ctx<'a> {
    engine: &'a Engine,
    start: Url,
    subdomains: bool,
    /// includePaths and excludePaths: what is returned.
    returned: PathFilter,
    /// excludePaths only: what may be fetched.
    fetchable: PathFilter,
    budget: Budget,
    /// robots.txt rules read so far, by origin.
    robots: Mutex<HashMap<String, Arc<Robots>>>,
    deadline: Instant,
    /// The start origin's robots.txt, once read (the common case, without a lock).
    start_robots: std::sync::OnceLock<Arc<Robots>>,
    /// Earliest start of the next page fetch (robots.txt `Crawl-delay`).
    next_fetch: Mutex<Option<(Instant, Duration)>>,
}

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
    async fn robots_for(&self, url: &Url) -> Option<Arc<Robots>> {
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

    fn known_robots_of(&self, url: &Url) -> Option<Arc<Robots>> {
        if same_origin(url, &self.start) {
            if let Some(r) = self.start_robots.get() {
                return Some(r.clone());
            }
        }
        self.known_robots(&origin_key(url))
    }

    fn known_robots(&self, key: &str) -> Option<Arc<Robots>> {
        self.robots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    /// Whether `url` may be returned.
    fn accept(&self, url: &Url) -> bool {
        let on_site = (url.host_str() == self.start.host_str() && url.port() == self.start.port())
            || urlnorm::same_site(&self.start, url, self.subdomains);
        on_site
            && self.returned.allows(url)
            && self
                .known_robots_of(url)
                .is_none_or(|r| r.is_allowed_url(url))
    }

    /// Whether `url` may be fetched for its links.
    async fn may_fetch(&self, url: &Url) -> bool {
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

    fn fetch_request(&self, url: &Url) -> FetchRequest {
        let mut req = FetchRequest::new(url.as_str(), FETCH_TIMEOUT);
        req.deadline = req.deadline.min(self.deadline);
        req
    }

    /// Waits for the robots.txt `Crawl-delay` of the start host, if any.
    async fn polite(&self) {
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
    async fn fetch_page(&self, url: Url) -> Result<Page, EngineError> {
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
    async fn sitemaps(&self, robots: &Robots) -> sitemap::SitemapDiscovery {
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
    fn take_links(
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
    async fn rendered_links(&self) -> Option<PageLinks> {
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
fn looks_like_page(url: &Url) -> bool {
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

/// Runs one map within `max_fetches` fetches. Fails (and should cost
/// nothing) when the start URL is refused by the network guard, when the
/// site's robots.txt cannot be read, or when the start page cannot be
/// loaded (error, timeout, HTTP 4xx/5xx, or disallowed by robots.txt); with
/// `sitemap: "only"` the start page is not fetched.
pub async fn map(
    engine: &Engine,
    req: &MapRequest,
    max_fetches: usize,
) -> Result<MapOutcome, EngineError> {
    let start = engine
        .fetcher()
        .guard()
        .check_url(req.url.trim())
        .map_err(|e| EngineError::new(ErrorCode::BlockedUrl, e.to_string()))?;
    let start = urlnorm::normalize(&start);
    let include = req.include_paths.as_deref().unwrap_or_default();
    let exclude = req.exclude_paths.as_deref().unwrap_or_default();
    let invalid =
        |e: crate::glob::GlobError| EngineError::new(ErrorCode::InvalidRequest, e.to_string());
    let ctx = Ctx {
        engine,
        subdomains: req.include_subdomains.unwrap_or(false),
        returned: PathFilter::new(include, exclude).map_err(invalid)?,
        fetchable: PathFilter::new(&[], exclude).map_err(invalid)?,
        budget: Budget {
            used: AtomicUsize::new(0),
            max: max_fetches.clamp(1, MAX_FETCHES),
            refused: AtomicBool::new(false),
        },
        robots: Mutex::new(HashMap::new()),
        start_robots: std::sync::OnceLock::new(),
        deadline: Instant::now() + MAP_DEADLINE,
        next_fetch: Mutex::new(None),
        start: start.clone(),
    };
    let limit = req.limit().clamp(1, MAX_COLLECTED as i64) as usize;
    let mode = req.sitemap();
    let host = start.host_str().unwrap_or("").to_string();

    let robots = ctx
        .robots_for(&start)
        .await
        .unwrap_or_else(|| Arc::new(Robots::allow_all()));
    let _ = ctx.start_robots.set(robots.clone());
    if robots.source() == RobotsSource::Unreachable {
        return Err(EngineError::new(
            ErrorCode::FetchFailed,
            format!("robots.txt of {host} could not be read (server error or unreachable), so the site is treated as closed; retry later"),
        ));
    }
    let mut concurrency = FETCH_CONCURRENCY;
    if let Some(delay) = robots.crawl_delay() {
        concurrency = 1;
        *ctx.next_fetch.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((Instant::now(), delay.min(MAX_CRAWL_DELAY)));
    }

    // The start page's fetch is taken from the budget first, so sitemaps
    // running at the same time cannot use it up.
    let start_wanted = mode != SitemapMode::Only;
    if start_wanted {
        if !robots.is_allowed_url(&start) {
            return Err(EngineError::new(
                ErrorCode::Forbidden,
                format!(
                    "robots.txt of {host} does not allow {} for the `webdata` user agent, so the start page cannot be read; `sitemap: \"only\"` lists the sitemap without it",
                    start.path()
                ),
            ));
        }
        ctx.budget.take();
    }
    let sitemap_job = async {
        if mode == SitemapMode::Skip {
            sitemap::SitemapDiscovery::default()
        } else {
            ctx.sitemaps(&robots).await
        }
    };
    let start_job = async {
        if start_wanted {
            ctx.fetch_page(start.clone()).await.map(Some)
        } else {
            Ok(None)
        }
    };
    let (sitemap_found, start_page) = tokio::join!(sitemap_job, start_job);
    let start_page = start_page.map_err(|mut f| {
        f.message = format!("the start page could not be loaded: {}", f.message);
        f
    })?;

    let mut found = Found::default();
    let mut queue: VecDeque<Url> = VecDeque::new();
    let mut queued: HashSet<String> = HashSet::new();
    queued.insert(urlnorm::dedup_key_of_normalized(&start));
    if let Some(page) = &start_page {
        if ctx.accept(&start) {
            found.add(&start, PHASE_START, page.links.title.clone(), TITLE_PAGE);
        }
        ctx.take_links(&mut found, &mut queue, &mut queued, &page.links, PHASE_LINK);
    }
    let first_sitemap_entry = found.entries.len();
    for su in &sitemap_found.urls {
        let Ok(u) = Url::parse(&su.loc) else { continue };
        let u = urlnorm::normalize(&u);
        if ctx.accept(&u) {
            found.add(&u, PHASE_SITEMAP, su.title.clone(), TITLE_SITEMAP);
        }
    }
    // Sitemap pages are read for links too, but only when more URLs are wanted.
    if start_wanted && found.len() < limit {
        for e in &found.entries[first_sitemap_entry..] {
            if queued.insert(urlnorm::dedup_key_of_normalized(&e.url)) {
                queue.push_back(e.url.clone());
            }
        }
    }

    // Breadth-first: pages in the order their links were found.
    if start_wanted {
        let mut inflight = FuturesUnordered::new();
        let mut stopped = false;
        loop {
            while !stopped && inflight.len() < concurrency {
                if found.len() >= limit || Instant::now() >= ctx.deadline {
                    stopped = true;
                    break;
                }
                let Some(u) = queue.pop_front() else { break };
                if !ctx.may_fetch(&u).await {
                    continue;
                }
                if !ctx.budget.take() {
                    stopped = true;
                    break;
                }
                inflight.push(ctx.fetch_page(u));
            }
            let Some(result) = inflight.next().await else {
                break;
            };
            match result {
                Ok(page) => {
                    if ctx.accept(&page.url) {
                        found.add(&page.url, PHASE_LINK, page.links.title.clone(), TITLE_PAGE);
                    }
                    ctx.take_links(&mut found, &mut queue, &mut queued, &page.links, PHASE_LINK);
                }
                Err(f) => tracing::debug!(error = %f.message, "map page fetch failed"),
            }
        }
    }

    // Too little found: the start page's links as a browser sees them.
    let mut rendered = false;
    if start_wanted && found.len() < limit.min(RENDER_BELOW) && Instant::now() < ctx.deadline {
        if let Some(links) = ctx.rendered_links().await {
            rendered = true;
            ctx.take_links(&mut found, &mut queue, &mut queued, &links, PHASE_RENDER);
        }
    }

    let mut entries = found.entries;
    entries.sort_by_key(|e| (e.phase, e.seq));
    let total = entries.len();
    let mut links: Vec<MapLink> = entries
        .into_iter()
        .map(|e| MapLink {
            url: e.url.into(),
            title: e.title,
            source: e.source,
        })
        .collect();
    if let Some(q) = req.search.as_deref().filter(|q| !q.trim().is_empty()) {
        links = rank::rank(links, q);
    }
    links.truncate(limit);
    Ok(MapOutcome {
        links,
        fetches: ctx.budget.used(),
        budget_limited: ctx.budget.refused.load(Ordering::Acquire) && ctx.budget.max < MAX_FETCHES,
        rendered,
        found: total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credit_table() {
        assert_eq!(credits_for(0), 3);
        assert_eq!(credits_for(1), 3);
        assert_eq!(credits_for(10), 3);
        assert_eq!(credits_for(11), 6);
        assert_eq!(credits_for(139), 42);
        assert_eq!(credits_for(140), 42);
        assert_eq!(fetches_for(42), 140);
        assert_eq!(fetches_for(45), 140);
        assert_eq!(fetches_for(41), 130);
        assert_eq!(fetches_for(5), 10);
        assert_eq!(fetches_for(3), 10);
        assert_eq!(fetches_for(2), 0);
        // Never more credits than the budget that was reserved.
        for credits in (3..=42).step_by(3) {
            assert_eq!(credits_for(fetches_for(credits)), credits);
        }
    }

    #[test]
    fn budget_refuses_past_max_and_remembers() {
        let b = Budget {
            used: AtomicUsize::new(0),
            max: 2,
            refused: AtomicBool::new(false),
        };
        assert!(b.take() && b.take());
        assert!(!b.refused.load(Ordering::Acquire));
        assert!(!b.take());
        assert!(b.refused.load(Ordering::Acquire));
        b.give_back();
        assert_eq!(b.used(), 1);
    }

    #[test]
    fn found_keeps_the_earliest_phase_and_the_best_title() {
        let mut f = Found::default();
        let u = Url::parse("https://a.test/x/").unwrap();
        f.add(&u, PHASE_LINK, Some("link text".into()), TITLE_LINK_TEXT);
        f.add(
            &Url::parse("https://a.test/x").unwrap(),
            PHASE_SITEMAP,
            None,
            TITLE_SITEMAP,
        );
        assert_eq!(f.len(), 1);
        assert_eq!(f.entries[0].source, LinkSource::Sitemap);
        assert_eq!(f.entries[0].title.as_deref(), Some("link text"));
        f.add(&u, PHASE_LINK, Some("Page title".into()), TITLE_PAGE);
        assert_eq!(f.entries[0].title.as_deref(), Some("Page title"));
        f.add(&u, PHASE_LINK, Some("other text".into()), TITLE_LINK_TEXT);
        assert_eq!(f.entries[0].title.as_deref(), Some("Page title"));
    }

    #[test]
    fn key_of_normalized_matches_dedup_key() {
        for u in [
            "https://a.test/",
            "https://a.test/x/",
            "https://a.test/x/?q=1",
            "https://a.test/x/y?q=1&r=/",
            "https://a.test/%7euser/",
            "https://a.test:8080/a/b/",
        ] {
            // Normalising a normalised URL changes nothing, so the map's one
            // normalisation per URL gives the same key as the crawl's.
            let raw = Url::parse(u).unwrap();
            let n = urlnorm::normalize(&raw);
            assert_eq!(
                urlnorm::dedup_key_of_normalized(&n),
                urlnorm::dedup_key(&raw),
                "{u}"
            );
        }
        let key = |u: &str| {
            urlnorm::dedup_key_of_normalized(&urlnorm::normalize(&Url::parse(u).unwrap()))
        };
        assert_eq!(key("https://a.test/x/?q=1"), "https://a.test/x?q=1");
        assert_eq!(key("https://a.test/"), "https://a.test/");
        assert_eq!(key("https://a.test:8080/a/b/"), "https://a.test:8080/a/b");
    }

    #[test]
    fn pages_are_told_from_files_by_extension() {
        for page in [
            "https://a.test/",
            "https://a.test/docs",
            "https://a.test/a.html",
            "https://a.test/v1.2/x",
        ] {
            assert!(looks_like_page(&Url::parse(page).unwrap()), "{page}");
        }
        for file in [
            "https://a.test/a.PDF",
            "https://a.test/i/logo.png",
            "https://a.test/feed.xml",
        ] {
            assert!(!looks_like_page(&Url::parse(file).unwrap()), "{file}");
        }
    }
}
