//! Which URLs a crawl wants (same site, path filter, robots.txt) and how
//! politely a host is visited (its `Crawl-delay`).

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::state::{HostTurn, Plan};
use super::CrawlRunner;
use crate::robots::Robots;
use crate::urlnorm;

impl CrawlRunner {
    pub(super) async fn robots(&self, url: &Url) -> Arc<Robots> {
        self.engine.robots_for(url).await
    }

    /// Same site, path filter, robots. A URL robots.txt keeps out is
    /// recorded once for the crawl's errors.
    pub(super) async fn wanted(
        &self,
        crawl_id: &str,
        plan: &Plan,
        u: &Url,
        ignore_robots: bool,
    ) -> bool {
        if !urlnorm::same_site(
            &plan.start,
            u,
            plan.request.allow_subdomains.unwrap_or(false),
        ) {
            return false;
        }
        if !plan.filter.allows(u) {
            return false;
        }
        if ignore_robots || self.robots(u).await.is_allowed_url(u) {
            return true;
        }
        if self.state.first_robots_block(crawl_id, u.as_str()) {
            if let Err(e) = self.store.note_robots_blocked(crawl_id, u.as_str()).await {
                tracing::warn!(error = %e, "could not record a URL robots.txt keeps out");
            }
        }
        false
    }

    /// Waits for the page's turn at its host when robots.txt sets a
    /// `Crawl-delay` (capped at 30 s); `None` when there is none to keep.
    pub(super) async fn polite(&self, url: &Url, ignore_robots: bool) -> Option<HostTurn> {
        if ignore_robots {
            return None;
        }
        let delay = self.robots(url).await.crawl_delay()?;
        let delay = delay.min(Duration::from_secs(30));
        Some(
            self.state
                .host_turn(url.host_str().unwrap_or(""), delay)
                .await,
        )
    }
}
