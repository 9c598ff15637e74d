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

mod budget;
mod ctx;
mod found;
pub mod rank;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use tokio::time::Instant;
use url::Url;
use webdata_core::types::{MapLink, MapRequest, SitemapMode};
use webdata_core::ErrorCode;

use crate::glob::PathFilter;
use crate::robots::{Robots, RobotsSource};
use crate::sitemap;
use crate::urlnorm;
use crate::{Engine, EngineError};
use budget::Budget;
use found::{
    Found, PHASE_LINK, PHASE_RENDER, PHASE_SITEMAP, PHASE_START, TITLE_PAGE, TITLE_SITEMAP,
};
use webdata_content::PageLinks;

pub use budget::{credits_for, fetches_for, CREDIT_STEP, MAX_FETCHES, WORST_CASE_CREDITS};
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
mod tests;
