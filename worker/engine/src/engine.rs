//! The engine's front door: one [`Engine`] (fetcher, robots.txt cache,
//! browser pool) with the steps the API and the workers call: check a URL,
//! scrape, map, read a brand, and the crawl loop's pieces.

use crate::error::EngineError;
use crate::fetch::{Fetcher, DEFAULT_USER_AGENT};
use crate::glob::PathFilter;
use crate::guard::{NetworkGuard, Resolve, SystemResolver};
use crate::robots::RobotsCache;
use std::sync::Arc;

/// The shared engine; cheap to clone.
#[derive(Clone)]
pub struct Engine {
    pub(crate) fetcher: Fetcher,
    pub(crate) robots: Arc<RobotsCache>,
    pub(crate) browser: Option<crate::render::BrowserPool>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine whose every request passes `guard`, resolving names with
    /// the system resolver.
    pub fn new(guard: NetworkGuard) -> Result<Self, EngineError> {
        Self::with_resolver(guard, Arc::new(SystemResolver))
    }

    /// An engine with an injected resolver (tests).
    pub fn with_resolver(
        guard: NetworkGuard,
        resolver: Arc<dyn Resolve>,
    ) -> Result<Self, EngineError> {
        let fetcher =
            Fetcher::new(guard, resolver, DEFAULT_USER_AGENT).map_err(EngineError::from)?;
        Ok(Engine {
            fetcher,
            robots: Arc::new(RobotsCache::default()),
            browser: None,
        })
    }

    /// The same engine rendering with `pool` (the render tier).
    pub fn with_browser(mut self, pool: Option<crate::render::BrowserPool>) -> Self {
        self.browser = pool;
        self
    }

    /// The browser pool, when one is configured.
    pub fn browser(&self) -> Option<&crate::render::BrowserPool> {
        self.browser.as_ref()
    }

    /// robots.txt rules for the URL's origin (cached per host).
    pub async fn robots_for(&self, url: &url::Url) -> Arc<crate::robots::Robots> {
        self.robots.get(&self.fetcher, url).await.robots
    }

    /// robots.txt rules for the URL's origin, and whether this call fetched
    /// them (map bills that fetch; a cached copy is free).
    pub async fn robots_lookup(&self, url: &url::Url) -> crate::robots::RobotsLookup {
        self.robots.get(&self.fetcher, url).await
    }

    /// The fetcher (shared with crawl, map and brand).
    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// The network guard every request passes (the webhook dispatcher
    /// sends through it too).
    pub fn guard(&self) -> &NetworkGuard {
        self.fetcher.guard()
    }

    /// The URL as the network guard accepts it (`blocked_url` otherwise):
    /// the check every entry point makes before any work or charge.
    pub fn check_url(&self, url: &str) -> Result<url::Url, EngineError> {
        Ok(self.fetcher.guard().check_url(url.trim())?)
    }

    /// Maps a site within `max_fetches` fetches (see [`crate::map::map`]).
    pub async fn map(
        &self,
        req: &webdata_core::types::MapRequest,
        max_fetches: usize,
    ) -> Result<crate::map::MapOutcome, EngineError> {
        crate::map::map(self, req, max_fetches).await
    }

    /// Reads a host's brand from its home page, rendering it when it needs
    /// JavaScript and a browser is configured (see [`crate::brand::lookup`]).
    pub async fn brand(
        &self,
        target: &crate::brand::Target,
        timeout: std::time::Duration,
    ) -> Result<crate::brand::Found, EngineError> {
        crate::brand::lookup(&self.fetcher, self.browser.as_ref(), target, timeout).await
    }

    /// Reads the brand from a home page already fetched (the `brand` format
    /// of a scrape), fetching only the assets it declares.
    pub async fn brand_from_page(
        &self,
        domain: &str,
        html: &str,
        page_url: &url::Url,
        deadline: tokio::time::Instant,
    ) -> crate::brand::Found {
        crate::brand::from_page(&self.fetcher, domain, html, page_url, deadline, None).await
    }

    /// Compiles `includePaths`/`excludePaths` (`invalid_request` naming the
    /// bad pattern), as crawl and map will.
    pub fn check_path_filters(include: &[String], exclude: &[String]) -> Result<(), EngineError> {
        PathFilter::new(include, exclude)?;
        Ok(())
    }
}
