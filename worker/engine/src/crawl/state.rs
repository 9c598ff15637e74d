//! What a runner remembers between pages: parsed crawl plans, when each
//! host may be visited next and its page slots, crawl rows read recently,
//! and the URL keys already sent to the frontier.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Semaphore;
use url::Url;
use webdata_core::store::CrawlRow;
use webdata_core::types::{CrawlRequest, Format};

use crate::glob::PathFilter;

/// A crawl's parsed request, ready to use.
pub(super) struct Plan {
    pub(super) request: CrawlRequest,
    pub(super) start: Url,
    pub(super) filter: PathFilter,
    pub(super) user_wants_links: bool,
}

/// How long a cached crawl row is used (a cancel stops new pages within this).
const ROW_TTL: Duration = Duration::from_millis(200);
/// Keys remembered per crawl before the memory is cleared and refilled.
const ENQUEUED_MAX: usize = 1_000_000;

/// The runner's memory, shared by its page tasks.
pub(super) struct RunnerState {
    plans: Mutex<HashMap<String, Arc<Plan>>>,
    /// Per host, when its last page fetch started, behind a fair (FIFO)
    /// lock: a page waits for its turn, then for the delay (see
    /// [`HostTurn`]).
    hosts: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<tokio::time::Instant>>>>>,
    host_slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Crawl rows read in the last [`ROW_TTL`], so a page does not cost a
    /// store read before it starts (its commit re-checks the status).
    rows: moka::sync::Cache<String, CrawlRow>,
    /// Per crawl, the URL keys this runner already handed to the frontier:
    /// links to them are not sent to the store again.
    enqueued: Mutex<HashMap<String, HashSet<String>>>,
    /// (crawl, URL) pairs robots.txt kept out that this runner recorded.
    robots_blocked: moka::sync::Cache<(String, String), ()>,
}

impl RunnerState {
    pub(super) fn new() -> Self {
        RunnerState {
            plans: Mutex::new(HashMap::new()),
            hosts: Mutex::new(HashMap::new()),
            host_slots: Mutex::new(HashMap::new()),
            rows: moka::sync::Cache::builder().time_to_live(ROW_TTL).build(),
            enqueued: Mutex::new(HashMap::new()),
            robots_blocked: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(std::time::Duration::from_secs(3600))
                .build(),
        }
    }

    /// True the first time this runner sees robots.txt keep `url` out of
    /// crawl `id` (so it is written to the store once, not per link).
    pub(super) fn first_robots_block(&self, id: &str, url: &str) -> bool {
        let key = (id.to_string(), url.to_string());
        if self.robots_blocked.contains_key(&key) {
            return false;
        }
        self.robots_blocked.insert(key, ());
        true
    }

    /// The crawl's parsed request, parsed once per runner.
    pub(super) fn plan(&self, crawl: &CrawlRow) -> Result<Arc<Plan>, String> {
        if let Some(p) = self
            .plans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&crawl.id)
        {
            return Ok(p.clone());
        }
        let request: CrawlRequest = serde_json::from_str(&crawl.request)
            .map_err(|e| format!("stored crawl request is unreadable: {e}"))?;
        let start = Url::parse(&request.url).map_err(|e| format!("start URL: {e}"))?;
        let filter = PathFilter::new(
            request.include_paths.as_deref().unwrap_or_default(),
            request.exclude_paths.as_deref().unwrap_or_default(),
        )
        .map_err(|e| e.to_string())?;
        let user_wants_links = request
            .scrape_options
            .as_ref()
            .is_some_and(|o| o.formats().contains(&Format::Links));
        let plan = Arc::new(Plan {
            request,
            start,
            filter,
            user_wants_links,
        });
        self.plans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(crawl.id.clone(), plan.clone());
        Ok(plan)
    }

    /// Forgets a finished crawl's plan.
    pub(super) fn drop_plan(&self, id: &str) {
        self.plans
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// Waits for `host`'s turn: the pages of a host with a `Crawl-delay`
    /// queue in order, and each waits until `delay` after the last fetch
    /// that really started. Nothing is booked ahead: a page that gives up
    /// its turn without fetching (a cancel) costs the next one no time.
    pub(super) async fn host_turn(&self, host: &str, delay: Duration) -> HostTurn {
        let gate = self
            .hosts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(host.to_string())
            .or_default()
            .clone();
        let guard = gate.lock_owned().await;
        if let Some(last) = *guard {
            tokio::time::sleep_until(last + delay).await;
        }
        HostTurn { guard }
    }

    /// The semaphore bounding the pages fetched at once from `host`.
    pub(super) fn host_slot(&self, host: &str, per_host: usize) -> Arc<Semaphore> {
        let mut slots = self.host_slots.lock().unwrap_or_else(|p| p.into_inner());
        slots
            .entry(host.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(per_host.max(1))))
            .clone()
    }

    /// The crawl row read in the last [`ROW_TTL`], if any.
    pub(super) fn cached_row(&self, id: &str) -> Option<CrawlRow> {
        self.rows.get(id)
    }

    /// Keeps a crawl row just read from the store (`None`: the crawl is gone).
    pub(super) fn keep_row(&self, id: &str, row: &Option<CrawlRow>) {
        match row {
            Some(r) => self.rows.insert(id.to_string(), r.clone()),
            None => self.rows.invalidate(id),
        }
    }

    /// Whether this runner already handed `key` of crawl `id` to the frontier.
    pub(super) fn is_enqueued(&self, id: &str, key: &str) -> bool {
        self.enqueued
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .is_some_and(|k| k.contains(key))
    }

    /// Remembers keys of crawl `id` that are in the frontier now (cleared
    /// past [`ENQUEUED_MAX`]).
    pub(super) fn mark_enqueued(&self, id: &str, keys: Vec<String>) {
        let mut enqueued = self.enqueued.lock().unwrap_or_else(|p| p.into_inner());
        let known = enqueued.entry(id.to_string()).or_default();
        if known.len() > ENQUEUED_MAX {
            known.clear();
        }
        known.extend(keys);
    }

    /// Drops what this runner remembers about a finished crawl.
    pub(super) fn forget(&self, id: &str) {
        self.rows.invalidate(id);
        self.enqueued
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }
}

/// A page's turn at its host (from [`RunnerState::host_turn`]): the next
/// page waits until it is [`HostTurn::fetching`] (or dropped without
/// fetching, which leaves the host's clock as it was).
pub(super) struct HostTurn {
    guard: tokio::sync::OwnedMutexGuard<Option<tokio::time::Instant>>,
}

impl HostTurn {
    /// The fetch starts now: the next page of the host waits the delay
    /// from here.
    pub(super) fn fetching(mut self) {
        *self.guard = Some(tokio::time::Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> CrawlRow {
        CrawlRow {
            id: id.into(),
            org_id: "o".into(),
            key_id: None,
            status: "running".into(),
            url: "https://a.test/".into(),
            request: "{}".into(),
            max_pages: 10,
            created_at: 0,
            started_at: None,
            finished_at: None,
            total: 0,
            completed: 0,
            failed: 0,
            credits_used: 0,
            doc_seq: 0,
            event_seq: 0,
            error_code: None,
            error_message: None,
            pool: "default".into(),
            admitted: true,
            kind: "crawl".into(),
            seed_urls: None,
            renders: false,
            launcher: "local".into(),
        }
    }

    #[test]
    fn crawl_rows_are_kept_for_row_ttl_and_forgotten_on_demand() {
        let state = RunnerState::new();
        assert_eq!(state.cached_row("c1"), None);
        state.keep_row("c1", &Some(row("c1")));
        state.keep_row("c2", &Some(row("c2")));
        assert_eq!(state.cached_row("c1"), Some(row("c1")));
        state.keep_row("c2", &None);
        assert_eq!(state.cached_row("c2"), None);
        state.forget("c1");
        assert_eq!(state.cached_row("c1"), None);
        state.keep_row("c1", &Some(row("c1")));
        std::thread::sleep(ROW_TTL + Duration::from_millis(50));
        assert_eq!(state.cached_row("c1"), None);
    }

    #[test]
    fn enqueued_keys_are_per_crawl() {
        let state = RunnerState::new();
        state.mark_enqueued("c1", vec!["k".into()]);
        assert!(state.is_enqueued("c1", "k"));
        assert!(!state.is_enqueued("c2", "k"));
        state.forget("c1");
        assert!(!state.is_enqueued("c1", "k"));
    }
}
