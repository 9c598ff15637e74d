//! One leased page: scrape it (per-host slot, crawl delay), pick the links
//! to enqueue, hand it to the committer, and record failures.

use url::Url;
use webdata_core::store::crawl::status;
use webdata_core::store::{CrawlRow, CrawlStatus, Lease, NewUrl, PageCommit, PageWrite};
use webdata_core::types::{Format, ScrapeRequest, SitemapMode};
use webdata_core::ErrorCode;

use super::{new_url, CrawlRunner};
use crate::urlnorm;
use crate::EngineError;

impl CrawlRunner {
    pub(super) async fn process(&self, lease: Lease, slot: tokio::sync::OwnedSemaphorePermit) {
        let Err(e) = self.process_inner(&lease, slot).await else {
            return;
        };
        if !e.is_transient() {
            tracing::warn!(error = %e, url = %lease.url, "crawl page failed in the store; the lease will expire and retry");
            return;
        }
        // The database went away for a moment (a restart, a failover): give
        // the URL back as soon as it answers again, instead of leaving it to
        // the lease's expiry (2 minutes by default) while the crawl waits.
        // Nothing of the page was stored, so fetching it again is safe.
        tracing::warn!(error = %e, url = %lease.url, "crawl page failed in the store; giving its lease back");
        for attempt in 1..=6u32 {
            tokio::time::sleep(std::time::Duration::from_millis(250 << attempt)).await;
            if self.store.release_lease(&lease).await.is_ok() {
                return;
            }
        }
    }

    /// The crawl row, from the store at most every `ROW_TTL` (see `state.rs`).
    async fn crawl_row(&self, id: &str) -> Result<Option<CrawlRow>, webdata_core::StoreError> {
        if let Some(row) = self.state.cached_row(id) {
            return Ok(Some(row));
        }
        let row = self.store.get_crawl(id).await?;
        self.state.keep_row(id, &row);
        Ok(row)
    }

    /// Scrapes one leased page holding `slot` (one of the runner's
    /// concurrency slots) and commits it. The slot is given back once the
    /// page is scraped: the commit is waited for holding a commit slot
    /// instead, so fetching goes on while the committer writes (the writes
    /// then come in larger, cheaper batches).
    async fn process_inner(
        &self,
        lease: &Lease,
        slot: tokio::sync::OwnedSemaphorePermit,
    ) -> Result<(), webdata_core::StoreError> {
        let Some(crawl) = self.crawl_row(&lease.crawl_id).await? else {
            return Ok(());
        };
        if crawl.status != status::RUNNING {
            self.state.forget(&crawl.id);
            return Ok(());
        }
        let plan = match self.state.plan(&crawl) {
            Ok(p) => p,
            Err(msg) => {
                self.store
                    .finish_crawl(&crawl.id, CrawlStatus::Failed, Some(("internal", &msg)))
                    .await?;
                return Ok(());
            }
        };
        let ignore_robots = plan.request.ignore_robots.unwrap_or(false);
        let Ok(page_url) = Url::parse(&lease.url) else {
            self.store
                .fail_url(lease, "invalid_request", "unparsable URL", false, 0, 1)
                .await?;
            return Ok(());
        };
        let host_slot = self
            .state
            .host_slot(page_url.host_str().unwrap_or(""), self.cfg.per_host);
        let host_permit = host_slot.acquire_owned().await.ok();
        let turn = self.polite(&page_url, ignore_robots).await;
        // No request starts after a cancel: the crawl row above may be up
        // to ROW_TTL old, and the politeness wait longer still, so the
        // lease itself is checked in the store right before the fetch. A
        // page that stops here gives its host turn back unused.
        if !self.store.lease_held(lease).await? {
            return Ok(());
        }
        if let Some(turn) = turn {
            turn.fetching();
        }
        let mut options = plan.request.scrape_options.clone().unwrap_or_default();
        let markdown_asked = crate::changes::ensure_markdown(&mut options);
        let mut formats = options.formats();
        if !formats.contains(&Format::Links) {
            formats.push(Format::Links);
        }
        options.formats = Some(formats);
        options.ignore_robots = Some(ignore_robots);
        let req = ScrapeRequest {
            url: lease.url.clone(),
            options,
        };
        let scraped = self.engine.scrape(&req).await;
        drop(host_permit);
        match scraped {
            Ok(scraped) => {
                let mut doc = scraped.document;
                // A remembered page (change tracking) is re-checked, not
                // crawled: it is `hidden`, and its links are not followed.
                let remembered = req.options.tracks_changes()
                    && self
                        .store
                        .frontier_source(&lease.crawl_id, &lease.key)
                        .await?
                        .as_deref()
                        == Some("memory");
                let links = if plan.user_wants_links {
                    doc.links.clone().unwrap_or_default()
                } else {
                    doc.links.take().unwrap_or_default()
                };
                // Links are enqueued in the page's own commit, so the frontier
                // never looks drained while this URL is still leased.
                let mut new_links: Vec<NewUrl> = Vec::new();
                let next_depth = lease.depth + 1;
                let depth_ok = plan.request.max_depth.is_none_or(|d| next_depth <= d);
                if depth_ok && !remembered && plan.request.sitemap() != SitemapMode::Only {
                    let base = doc
                        .final_url
                        .as_deref()
                        .and_then(|u| Url::parse(u).ok())
                        .unwrap_or_else(|| page_url.clone());
                    let mut found = Vec::new();
                    let mut this_page = std::collections::HashSet::new();
                    for l in links.iter().filter_map(|l| urlnorm::resolve_link(&base, l)) {
                        let candidate = new_url(&l, next_depth, "link");
                        let known = self.state.is_enqueued(&crawl.id, &candidate.key);
                        if !known
                            && !this_page.contains(&candidate.key)
                            && self.wanted(&crawl.id, &plan, &l, ignore_robots).await
                        {
                            this_page.insert(candidate.key.clone());
                            found.push(candidate);
                        }
                    }
                    new_links = found;
                }
                // The snapshot goes in with the page's commit (and only if
                // the page is stored), never ahead of it.
                let mut snapshot = None;
                if req.options.tracks_changes() {
                    snapshot = crate::changes::Tracking {
                        store: &self.store,
                        org_id: &crawl.org_id,
                        options: &req.options,
                        found: if remembered {
                            crate::changes::Found::Hidden
                        } else {
                            crate::changes::Found::Visible
                        },
                        crawl_id: Some(&crawl.id),
                        markdown_asked,
                        billable: scraped.billable,
                        defer_write: true,
                    }
                    .run_plain(&mut doc)
                    .await?
                    .write;
                }
                let json = serde_json::to_string(&doc).unwrap_or_else(|_| "{}".into());
                let blocks = webdata_content::boilerplate::page_hashes(
                    doc.markdown.as_deref().unwrap_or(""),
                );
                let keys: Vec<String> = new_links.iter().map(|l| l.key.clone()).collect();
                let _commit_slot = self.commits.slots.acquire().await.ok();
                drop(slot);
                let write = PageWrite {
                    lease: lease.clone(),
                    document_json: json,
                    block_hashes: blocks,
                    billable: scraped.billable,
                    links: new_links,
                    snapshot,
                };
                // A database that restarts or drops its connections fails the
                // commit for a second or two: retry it (after 0.5, 1, 2, 4
                // and 8 s) instead of leaving the page to its lease's expiry.
                // Safe to repeat: a commit that did land has marked the URL
                // done, so a repeat stores and charges nothing.
                let mut attempt = 0u32;
                let commit = loop {
                    match self.commit(write.clone()).await {
                        Ok(c) => break c,
                        Err(
                            e @ (webdata_core::StoreError::Invalid(_)
                            | webdata_core::StoreError::Unavailable(_)),
                        ) if attempt < 5 && e.to_string() != "the crawl committer stopped" => {
                            attempt += 1;
                            tracing::warn!(error = %e, url = %lease.url, attempt, "committing a crawl page failed; retrying");
                            tokio::time::sleep(std::time::Duration::from_millis(250 << attempt))
                                .await;
                        }
                        Err(e) => return Err(e),
                    }
                };
                // Every key sent is in the frontier now, or can never be
                // (the crawl reached its limit, which only grows stricter)
                // or the page was not stored (then another runner retries it).
                if matches!(commit, PageCommit::Stored { .. }) {
                    self.state.mark_enqueued(&crawl.id, keys);
                }
                if let PageCommit::OutOfCredits { code } = commit {
                    let message = if code == "spend_cap_reached" {
                        "the organization's monthly spend cap was reached; pages crawled before the stop are kept"
                    } else {
                        "the organization ran out of credits; pages crawled before the stop are kept"
                    };
                    self.store
                        .finish_crawl(&crawl.id, CrawlStatus::Completed, Some((code, message)))
                        .await?;
                }
            }
            Err(f) => self.failed(&crawl, lease, f).await?,
        }
        Ok(())
    }

    async fn failed(
        &self,
        crawl: &CrawlRow,
        lease: &Lease,
        f: EngineError,
    ) -> Result<(), webdata_core::StoreError> {
        match f.code {
            ErrorCode::BlockedBySite => {
                self.store
                    .fail_url(lease, f.code.as_str(), &f.message, false, 0, 1)
                    .await?;
                self.store
                    .finish_crawl(
                        &crawl.id,
                        CrawlStatus::Completed,
                        Some((
                            "blocked_by_site",
                            &format!("the site blocked the crawl: {}", f.message),
                        )),
                    )
                    .await?;
            }
            ErrorCode::Timeout | ErrorCode::FetchFailed | ErrorCode::CapacityExceeded => {
                let backoff = 1000 * (1 << lease.attempts.clamp(0, 5));
                self.store
                    .fail_url(
                        lease,
                        f.code.as_str(),
                        &f.message,
                        true,
                        backoff,
                        self.cfg.max_attempts,
                    )
                    .await?;
            }
            _ => {
                self.store
                    .fail_url(lease, f.code.as_str(), &f.message, false, 0, 1)
                    .await?;
            }
        }
        Ok(())
    }
}
