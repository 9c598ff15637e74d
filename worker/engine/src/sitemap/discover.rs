//! Discovery: where to look for sitemaps, and breadth-first fetching through
//! indexes within a [`SitemapFetchPolicy`] (the fetch itself is the caller's).

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use url::Url;

use super::parse::parse_sitemap;
use super::{Sitemap, SitemapUrl};
use crate::urlnorm;

/// How many sitemap fetches [`discover`] keeps in flight.
const FETCH_CONCURRENCY: usize = 4;
/// Limits for [`discover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitemapFetchPolicy {
    /// Most sitemap files fetched (each is one billed fetch).
    pub max_files: usize,
    /// How deep indexes are followed: the start files are depth 0, their children depth 1 …
    pub max_depth: usize,
    /// Most page URLs collected.
    pub max_urls: usize,
}

impl Default for SitemapFetchPolicy {
    fn default() -> Self {
        SitemapFetchPolicy {
            max_files: 50,
            max_depth: 3,
            max_urls: 100_000,
        }
    }
}

/// What [`discover`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SitemapDiscovery {
    /// Distinct page URLs (absolute, fragment removed), in discovery order.
    pub urls: Vec<SitemapUrl>,
    /// How many times `fetch` was called (failed fetches included).
    pub files_fetched: usize,
    /// Whether a limit (files, depth, URLs, or a file's own) left something unread.
    pub truncated: bool,
}

/// Fetches sitemaps from `start` and follows indexes breadth-first within
/// `policy`. Files are fetched once each (cycles end), page URLs are
/// de-duplicated by [`urlnorm::dedup_key`], and relative `<loc>`s are
/// resolved against their file. `fetch` returns the body of a successful
/// fetch, `None` otherwise (it also decides which hosts may be fetched);
/// failed and unparsable files are skipped. Parsing runs on tokio's blocking pool.
pub async fn discover<F, Fut>(
    start: Vec<Url>,
    policy: &SitemapFetchPolicy,
    fetch: F,
) -> SitemapDiscovery
where
    F: Fn(Url) -> Fut,
    Fut: Future<Output = Option<Vec<u8>>>,
{
    let mut out = SitemapDiscovery::default();
    let mut seen_files = HashSet::new();
    let mut seen_urls = HashSet::new();
    let mut level: VecDeque<Url> = start
        .into_iter()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .filter(|u| seen_files.insert(urlnorm::dedup_key(u)))
        .collect();
    let mut depth = 0;

    'levels: while !level.is_empty() {
        let room = policy.max_files.saturating_sub(out.files_fetched);
        if level.len() > room {
            out.truncated = true;
            level.truncate(room);
        }
        if level.is_empty() {
            break;
        }
        let calls = AtomicUsize::new(0);
        let mut next = VecDeque::new();
        let mut results = futures::stream::iter(level.drain(..))
            .map(|url| {
                calls.fetch_add(1, Ordering::Relaxed);
                let body = fetch(url.clone());
                async move { (url, body.await) }
            })
            .buffered(FETCH_CONCURRENCY);

        while let Some((file, body)) = results.next().await {
            let Some(body) = body else {
                tracing::debug!(%file, "sitemap fetch failed");
                continue;
            };
            let parsed = tokio::task::spawn_blocking(move || parse_sitemap(&body)).await;
            let sitemap = match parsed {
                Ok(Ok(sitemap)) => sitemap,
                Ok(Err(error)) => {
                    tracing::debug!(%file, %error, "sitemap skipped");
                    continue;
                }
                Err(error) => {
                    tracing::warn!(%file, %error, "sitemap parser failed");
                    continue;
                }
            };
            out.truncated |= sitemap.truncated();
            match sitemap {
                Sitemap::Index { sitemaps, .. } => {
                    for loc in sitemaps {
                        let Some(child) = urlnorm::resolve_link(&file, &loc) else {
                            continue;
                        };
                        if !seen_files.insert(urlnorm::dedup_key(&child)) {
                            continue;
                        }
                        if depth + 1 > policy.max_depth {
                            out.truncated = true;
                        } else {
                            next.push_back(child);
                        }
                    }
                }
                Sitemap::UrlSet { urls, .. } => {
                    for entry in urls {
                        let Some(page) = urlnorm::resolve_link(&file, &entry.loc) else {
                            continue;
                        };
                        if !seen_urls.insert(urlnorm::dedup_key(&page)) {
                            continue;
                        }
                        if out.urls.len() >= policy.max_urls {
                            out.truncated = true;
                            drop(results);
                            out.files_fetched += calls.load(Ordering::Relaxed);
                            break 'levels;
                        }
                        out.urls.push(SitemapUrl {
                            loc: page.into(),
                            ..entry
                        });
                    }
                }
            }
        }
        drop(results);
        out.files_fetched += calls.load(Ordering::Relaxed);
        level = next;
        depth += 1;
    }
    out
}

/// Where to look for sitemaps: the robots.txt `Sitemap:` lines (absolute
/// http(s) URLs only, as robots.txt requires), then `/sitemap.xml` at the
/// site's origin; de-duplicated, in that order.
pub fn default_sitemap_urls(site: &Url, robots_sitemaps: &[String]) -> Vec<Url> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let candidates = robots_sitemaps
        .iter()
        .filter_map(|s| Url::parse(s.trim()).ok())
        .chain(site.join("/sitemap.xml").ok());
    for mut url in candidates {
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            continue;
        }
        url.set_fragment(None);
        if seen.insert(urlnorm::dedup_key(&url)) {
            out.push(url);
        }
    }
    out
}
