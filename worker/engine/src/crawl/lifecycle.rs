//! A crawl's beginning and end: seeding queued crawls (start URL, robots.txt
//! sitemaps, `/sitemap.xml`) and finishing crawls whose frontier drained.

use std::time::Duration;

use url::Url;
use webdata_core::store::crawl::status;
use webdata_core::store::CrawlStatus;
use webdata_core::types::SitemapMode;

use super::{new_url, CrawlRunner};
use crate::sitemap::{self, SitemapFetchPolicy};

impl CrawlRunner {
    pub(super) async fn seed_queued(&self) -> Result<(), webdata_core::StoreError> {
        for crawl in self.store.seedable_crawls(self.cfg.pool.as_deref()).await? {
            // A resumed crawl's frontier is the one its predecessor left,
            // carried over before it starts (so it never looks drained).
            let resumes = serde_json::from_str::<webdata_core::types::CrawlRequest>(&crawl.request)
                .ok()
                .and_then(|r| r.resume_from);
            if let Some(prev) = &resumes {
                self.store.carry_frontier(&crawl.id, prev).await?;
            }
            if resumes.is_some() {
                self.store.start_crawl(&crawl.id).await?;
                continue;
            }
            let plan = match self.state.plan(&crawl) {
                Ok(p) => p,
                Err(msg) => {
                    self.store
                        .finish_crawl(&crawl.id, CrawlStatus::Failed, Some(("internal", &msg)))
                        .await?;
                    continue;
                }
            };
            // The start URL (a batch's first URL) goes in leased to us in the
            // transaction that starts the crawl, so the crawl never looks
            // drained to another runner while robots.txt and sitemaps are
            // read (that runner would finish it empty).
            let start = new_url(
                &plan.start,
                0,
                if crawl.is_batch() { "batch" } else { "start" },
            );
            let hold = match self
                .store
                .start_crawl_holding(
                    &crawl.id,
                    Some((&start, &self.cfg.worker_id, self.cfg.lease_ms)),
                )
                .await?
            {
                Some(hold) => hold,
                None => continue,
            };
            if crawl.is_batch() {
                self.seed_batch(&crawl, &plan, start, hold).await?;
                continue;
            }
            let mut urls = Vec::new();
            let ignore_robots = plan.request.ignore_robots.unwrap_or(false);
            let robots = self.robots(&plan.start).await;
            let max_depth = plan.request.max_depth;
            if plan.request.sitemap() != SitemapMode::Skip && max_depth != Some(0) {
                let starts = sitemap::default_sitemap_urls(&plan.start, robots.sitemaps());
                let fetcher = self.engine.fetcher().clone();
                let policy = SitemapFetchPolicy {
                    max_urls: (plan.request.limit() as usize).saturating_mul(4).max(1000),
                    ..Default::default()
                };
                let found = sitemap::discover(starts, &policy, |u: Url| {
                    let f = fetcher.clone();
                    async move {
                        let req =
                            crate::fetch::FetchRequest::new(u.as_str(), Duration::from_secs(20));
                        match f.fetch(&req).await {
                            Ok(r) if r.status < 400 => Some(r.body),
                            _ => None,
                        }
                    }
                })
                .await;
                for su in found.urls {
                    if let Ok(u) = Url::parse(&su.loc) {
                        if self.wanted(&crawl.id, &plan, &u, ignore_robots).await {
                            urls.push(new_url(&u, 1, "sitemap"));
                        }
                    }
                }
            }
            let keep_start = plan.request.sitemap() != SitemapMode::Only
                || urls.iter().any(|u| u.key == start.key);
            if keep_start && hold.is_none() {
                urls.insert(0, start);
            }
            self.store.enqueue_urls(&crawl.id, &urls).await?;
            if let Some(hold) = hold {
                self.store.end_seeding(&hold, keep_start).await?;
            }
        }
        Ok(())
    }

    /// A batch scrape's frontier: its given URLs at depth 0, less those
    /// robots.txt disallows (recorded for its errors) unless it ignores robots.
    async fn seed_batch(
        &self,
        crawl: &webdata_core::store::CrawlRow,
        plan: &super::state::Plan,
        first: webdata_core::store::NewUrl,
        hold: Option<webdata_core::store::Lease>,
    ) -> Result<(), webdata_core::StoreError> {
        let given: Vec<String> = crawl
            .seed_urls
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default();
        let ignore_robots = plan.request.ignore_robots.unwrap_or(false);
        // The first URL is held (since the crawl started) while robots.txt
        // files are read, so the batch never looks drained mid-seeding.
        let mut urls = Vec::with_capacity(given.len());
        let mut keep_first = false;
        for raw in &given {
            let Ok(u) = Url::parse(raw) else { continue };
            if !ignore_robots && !self.robots(&u).await.is_allowed_url(&u) {
                self.store
                    .note_robots_blocked(&crawl.id, u.as_str())
                    .await?;
                continue;
            }
            let n = new_url(&u, 0, "batch");
            if n.key == first.key {
                keep_first = true;
                if hold.is_some() {
                    continue;
                }
            }
            urls.push(n);
        }
        self.store.enqueue_urls(&crawl.id, &urls).await?;
        if let Some(hold) = hold {
            self.store.end_seeding(&hold, keep_first).await?;
        }
        Ok(())
    }

    pub(super) async fn finish_drained(&self) -> Result<(), webdata_core::StoreError> {
        for crawl in self.store.crawls_in(status::RUNNING).await? {
            if self.store.frontier_pending(&crawl.id).await? == 0 {
                if self.recheck_remembered(&crawl).await? > 0 {
                    continue;
                }
                let (final_status, error) = if crawl.completed == 0 && crawl.failed > 0 {
                    (
                        CrawlStatus::Failed,
                        Some(("fetch_failed", "no page of the crawl could be scraped")),
                    )
                } else {
                    (CrawlStatus::Completed, None)
                };
                self.store
                    .finish_crawl(&crawl.id, final_status, error)
                    .await?;
                self.state.drop_plan(&crawl.id);
                self.state.forget(&crawl.id);
            }
        }
        Ok(())
    }

    /// Change tracking: the pages the organization's earlier scrapes of this
    /// site stored under the crawl's tag but this crawl did not reach are
    /// fetched once, at the end, as `memory` URLs (within the crawl's scope
    /// and limit): one that still answers is `hidden` (no longer linked),
    /// one that is gone (404, 410) is `removed`. Returns how many were
    /// added; none once every remembered page is in the frontier.
    async fn recheck_remembered(
        &self,
        crawl: &webdata_core::store::CrawlRow,
    ) -> Result<usize, webdata_core::StoreError> {
        /// Remembered pages looked at per crawl.
        const REMEMBERED_MAX: i64 = 100_000;
        if crawl.kind == webdata_core::store::crawl::KIND_BATCH {
            return Ok(0);
        }
        let Ok(plan) = self.state.plan(crawl) else {
            return Ok(0);
        };
        let Some(options) = plan
            .request
            .scrape_options
            .as_ref()
            .filter(|o| o.tracks_changes())
        else {
            return Ok(0);
        };
        let site = crate::changes::site_of(&plan.start);
        let urls = self
            .store
            .change_snapshot_urls(&crawl.org_id, options.change_tag(), &site, REMEMBERED_MAX)
            .await?;
        let ignore_robots = options.ignore_robots.unwrap_or(false);
        let mut remembered = Vec::new();
        for u in urls {
            let Ok(u) = Url::parse(&u) else { continue };
            let n = new_url(&u, 1, "memory");
            if self.state.is_enqueued(&crawl.id, &n.key) {
                continue;
            }
            if self.wanted(&crawl.id, &plan, &u, ignore_robots).await {
                remembered.push(n);
            }
        }
        let keys: Vec<String> = remembered.iter().map(|n| n.key.clone()).collect();
        let added = self.store.enqueue_urls(&crawl.id, &remembered).await?;
        self.state.mark_enqueued(&crawl.id, keys);
        Ok(added)
    }
}
