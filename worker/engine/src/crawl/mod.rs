//! The crawl loop: seed queued crawls (robots.txt sitemaps, `/sitemap.xml`,
//! the start URL), lease URLs from the store, scrape them with the shared
//! engine, enqueue the links they discover, commit each page in one
//! transaction, and finish crawls whose frontier has drained.
//!
//! All state lives in the store, so any number of runners (in the API
//! process, or `webdata-worker` pods) can share the work, and a runner that
//! dies loses nothing: its leases expire and are leased again.

mod commit;
mod lifecycle;
mod page;
mod read;
mod run;
mod scope;
mod state;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use url::Url;
use webdata_core::store::NewUrl;
use webdata_core::Store;

use crate::urlnorm;
use crate::Engine;
use commit::CommitQueue;
use state::RunnerState;

pub use read::{boilerplate_among, boilerplate_for, page_document, status_json};

/// Tuning of a runner.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// This runner's name in leases.
    pub worker_id: String,
    /// Pages scraped at once.
    pub concurrency: usize,
    /// How long a lease lasts before another runner may take the URL.
    pub lease_ms: i64,
    /// How long to sleep when there is nothing to do.
    pub idle_poll: Duration,
    /// Attempts per URL for transient failures.
    pub max_attempts: i64,
    /// Pages fetched at once from one host (politeness).
    pub per_host: usize,
    /// Only crawls of this WorkerPool (`None`: every admitted crawl).
    pub pool: Option<String>,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        RunnerConfig {
            worker_id: format!("worker-{}", std::process::id()),
            concurrency: 16,
            lease_ms: 120_000,
            idle_poll: Duration::from_millis(200),
            max_attempts: 3,
            per_host: 8,
            pool: None,
        }
    }
}

/// Runs crawls from the store until told to stop.
pub struct CrawlRunner {
    store: Store,
    engine: Engine,
    cfg: RunnerConfig,
    wake: Arc<Notify>,
    /// What the runner remembers between pages (plans, hosts, crawl rows,
    /// URL keys already enqueued).
    state: RunnerState,
    /// Scraped pages on their way to the committer task.
    commits: CommitQueue,
}

impl CrawlRunner {
    /// A runner over `store` scraping with `engine`.
    pub fn new(store: Store, engine: Engine, cfg: RunnerConfig) -> Arc<Self> {
        let commits = CommitQueue::new(cfg.concurrency);
        Arc::new(CrawlRunner {
            store,
            engine,
            cfg,
            state: RunnerState::new(),
            wake: Arc::new(Notify::new()),
            commits,
        })
    }

    /// Wakes the loop at once (a crawl was created or cancelled).
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}

fn new_url(u: &Url, depth: i64, source: &str) -> NewUrl {
    let n = urlnorm::normalize(u);
    NewUrl {
        key: urlnorm::dedup_key(&n),
        url: n.to_string(),
        depth,
        source: source.to_string(),
    }
}
