//! The crawl loop: seed queued crawls (robots.txt sitemaps, `/sitemap.xml`,
//! the start URL), lease URLs from the store, scrape them with the shared
//! engine, enqueue the links they discover, commit each page in one
//! transaction, and finish crawls whose frontier has drained.
//!
//! All state lives in the store, so any number of runners (in the API
//! process, or `webdata-worker` pods) can share the work, and a runner that
//! dies loses nothing: its leases expire and are leased again.

use crate::glob::PathFilter;
use crate::robots::Robots;
use crate::sitemap::{self, SitemapFetchPolicy};
use crate::urlnorm;
use crate::{Engine, EngineError};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{watch, Notify, Semaphore};
use url::Url;
use webdata_core::store::crawl::status;
use webdata_core::store::{CrawlRow, CrawlStatus, Lease, LeaseAsk, NewUrl, PageCommit, PageWrite};
use webdata_core::types::{CrawlRequest, Format, ScrapeRequest, SitemapMode};
use webdata_core::{ErrorCode, Store};

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

/// A crawl's parsed request, ready to use.
struct Plan {
    request: CrawlRequest,
    start: Url,
    filter: PathFilter,
    user_wants_links: bool,
}

pub use webdata_core::store::crawl::status_json;

/// The boilerplate block hashes of a crawl as of now (empty when the crawl
/// asked for `removeBoilerplate: false`).
pub async fn boilerplate_for(store: &Store, crawl: &CrawlRow) -> std::collections::HashSet<String> {
    let remove = serde_json::from_str::<CrawlRequest>(&crawl.request)
        .map(|r| r.remove_boilerplate())
        .unwrap_or(true);
    if !remove {
        return Default::default();
    }
    store
        .frequent_blocks(
            &crawl.id,
            webdata_content::boilerplate::threshold(crawl.completed),
        )
        .await
        .map(|v| v.into_iter().collect())
        .unwrap_or_default()
}

/// Stored document number `seq` of a crawl, with `boilerplate` blocks
/// removed: `(url, document)`. What getCrawl, SSE and webhooks read.
pub async fn page_document(
    store: &Store,
    crawl_id: &str,
    seq: i64,
    boilerplate: &std::collections::HashSet<String>,
) -> Option<(String, serde_json::Value)> {
    let (_, url, json) = store
        .crawl_documents(crawl_id, seq - 1, 1)
        .await
        .ok()?
        .into_iter()
        .next()?;
    let mut doc: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
    webdata_content::boilerplate::strip_document(&mut doc, boilerplate);
    Some((url, doc))
}

/// Runs crawls from the store until told to stop.
pub struct CrawlRunner {
    store: Store,
    engine: Engine,
    cfg: RunnerConfig,
    plans: Mutex<HashMap<String, Arc<Plan>>>,
    wake: Arc<Notify>,
    hosts: Mutex<HashMap<String, tokio::time::Instant>>,
    host_slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    /// Crawl rows read in the last [`ROW_TTL`], so a page does not cost a
    /// store read before it starts (its commit re-checks the status).
    rows: Mutex<HashMap<String, (std::time::Instant, CrawlRow)>>,
    /// Per crawl, the URL keys this runner already handed to the frontier:
    /// links to them are not sent to the store again.
    enqueued: Mutex<HashMap<String, std::collections::HashSet<String>>>,
    /// Scraped pages on their way to the committer task.
    commits: tokio::sync::mpsc::UnboundedSender<PendingCommit>,
    /// Pages waiting for their commit (scraped, slot given back): at most
    /// [`COMMIT_SLOTS_PER_SLOT`] times the concurrency.
    commit_slots: Semaphore,
    /// The committer's end, taken by [`CrawlRunner::run`].
    commit_queue: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<PendingCommit>>>,
}

/// How the committer refills the loop's leases.
struct Refill {
    slots: Arc<Semaphore>,
    /// Leases the loop holds but has not started.
    ready: Arc<std::sync::atomic::AtomicUsize>,
    /// Leased beyond the free slots.
    ahead: usize,
    leases: tokio::sync::mpsc::UnboundedSender<Vec<Lease>>,
    stop: watch::Receiver<bool>,
}

/// A page waiting for the committer, with where to send its result.
type PendingCommit = (
    PageWrite,
    tokio::sync::oneshot::Sender<Result<PageCommit, String>>,
);
/// Most pages committed in one transaction.
const COMMIT_BATCH: usize = 64;
/// Pages that may wait for the committer, per concurrency slot.
const COMMIT_SLOTS_PER_SLOT: usize = 2;

/// How long a cached crawl row is used (a cancel stops new pages within this).
const ROW_TTL: Duration = Duration::from_millis(200);
/// Keys remembered per crawl before the memory is cleared and refilled.
const ENQUEUED_MAX: usize = 1_000_000;

impl CrawlRunner {
    /// A runner over `store` scraping with `engine`.
    pub fn new(store: Store, engine: Engine, cfg: RunnerConfig) -> Arc<Self> {
        let (commits, commit_queue) = tokio::sync::mpsc::unbounded_channel();
        let commit_slots = Semaphore::new(cfg.concurrency.max(1) * COMMIT_SLOTS_PER_SLOT);
        Arc::new(CrawlRunner {
            store,
            engine,
            cfg,
            plans: Mutex::new(HashMap::new()),
            wake: Arc::new(Notify::new()),
            hosts: Mutex::new(HashMap::new()),
            host_slots: Mutex::new(HashMap::new()),
            rows: Mutex::new(HashMap::new()),
            enqueued: Mutex::new(HashMap::new()),
            commits,
            commit_slots,
            commit_queue: Mutex::new(Some(commit_queue)),
        })
    }

    /// Wakes the loop at once (a crawl was created or cancelled).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    fn plan(&self, crawl: &CrawlRow) -> Result<Arc<Plan>, String> {
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

    /// The loop: seed, lease, scrape, finish; returns after `stop` turns true
    /// and the pages in flight are done.
    ///
    /// While pages are in flight their URLs come from the committer: each
    /// commit also leases the next URLs in its transaction (the links it
    /// just stored among them) and hands them here. The loop leases on its
    /// own when idle and on the housekeeping tick when it is short: a lease
    /// transaction of its own queues behind the committer's on SQLite's one
    /// writer, and slots that waited for it left most of them free.
    pub async fn run(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let slots = Arc::new(Semaphore::new(self.cfg.concurrency.max(1)));
        let mut tasks = tokio::task::JoinSet::new();
        // Leases taken but not started yet (the committer reads the count).
        let mut ready: std::collections::VecDeque<Lease> = std::collections::VecDeque::new();
        let ready_len = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (leases_tx, mut leases_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<Lease>>();
        // The crawl-level checks (seeding, finishing) run at most every
        // HOUSEKEEPING while pages are in flight: each is a store round trip.
        const HOUSEKEEPING: Duration = Duration::from_millis(50);
        let batch = (self.cfg.concurrency / 4).max(1);
        let committer = self
            .commit_queue
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map(|queue| {
                tokio::spawn(self.clone().committer(
                    queue,
                    Refill {
                        slots: slots.clone(),
                        ready: ready_len.clone(),
                        ahead: batch,
                        leases: leases_tx.clone(),
                        stop: stop.clone(),
                    },
                ))
            });
        let mut last_housekeeping: Option<tokio::time::Instant> = None;
        loop {
            if *stop.borrow() {
                break;
            }
            // Finished pages are reaped first, so the crawl-level checks
            // (finishing a drained crawl) run as soon as the last page is in.
            while tasks.try_join_next().is_some() {}
            while let Ok(leases) = leases_rx.try_recv() {
                ready.extend(leases);
            }
            self.start_ready(&mut ready, &slots, &mut tasks);
            let busy = !tasks.is_empty();
            let housekeeping =
                !busy || last_housekeeping.is_none_or(|t| t.elapsed() >= HOUSEKEEPING);
            if housekeeping {
                last_housekeeping = Some(tokio::time::Instant::now());
                if let Err(e) = self.seed_queued().await {
                    tracing::warn!(error = %e, "seeding crawls failed");
                }
            }
            let mut leased = 0;
            if housekeeping && ready.len() < batch && slots.available_permits() > 0 {
                let want = slots.available_permits() + batch - ready.len();
                match self
                    .store
                    .lease_pool_urls(
                        &self.cfg.worker_id,
                        self.cfg.pool.as_deref(),
                        want as i64,
                        self.cfg.lease_ms,
                    )
                    .await
                {
                    Ok(leases) => {
                        leased = leases.len();
                        ready.extend(leases);
                    }
                    Err(e) => tracing::warn!(error = %e, "leasing failed"),
                }
                self.start_ready(&mut ready, &slots, &mut tasks);
            }
            ready_len.store(ready.len(), std::sync::atomic::Ordering::Relaxed);
            while tasks.try_join_next().is_some() {}
            if housekeeping {
                if let Err(e) = self.finish_drained().await {
                    tracing::warn!(error = %e, "finishing crawls failed");
                }
            }
            if leased > 0 && slots.available_permits() > 0 {
                continue;
            }
            tokio::select! {
                p = slots.clone().acquire_owned(), if !ready.is_empty() => drop(p),
                leases = leases_rx.recv() => ready.extend(leases.unwrap_or_default()),
                _ = tasks.join_next(), if !tasks.is_empty() => {}
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(self.cfg.idle_poll) => {}
                _ = stop.changed() => {}
            }
        }
        while tasks.join_next().await.is_some() {}
        // Every page task has had its commit answered; nothing is pending.
        if let Some(c) = committer {
            c.abort();
        }
        // Leases taken but not started go back to the queue at once (not
        // after their lease expires).
        while let Ok(leases) = leases_rx.try_recv() {
            ready.extend(leases);
        }
        for lease in ready {
            if let Err(e) = self.store.release_lease(&lease).await {
                tracing::warn!(error = %e, url = %lease.url, "releasing a lease failed; it will expire");
            }
        }
    }

    /// Starts leased pages while a slot is free.
    fn start_ready(
        self: &Arc<Self>,
        ready: &mut std::collections::VecDeque<Lease>,
        slots: &Arc<Semaphore>,
        tasks: &mut tokio::task::JoinSet<()>,
    ) {
        while !ready.is_empty() {
            let Ok(permit) = slots.clone().try_acquire_owned() else {
                break;
            };
            let Some(lease) = ready.pop_front() else {
                break;
            };
            let me = self.clone();
            tasks.spawn(async move {
                me.process(lease, permit).await;
            });
        }
    }

    /// Group commit: takes every page waiting (up to [`COMMIT_BATCH`]) and
    /// commits them in one transaction, so under load the cost of a write
    /// transaction is shared by many pages and idle pages are not delayed.
    /// The same transaction leases what the runner's free slots (and one
    /// batch ahead) can take, and hands it to the loop.
    async fn committer(
        self: Arc<Self>,
        mut queue: tokio::sync::mpsc::UnboundedReceiver<PendingCommit>,
        refill: Refill,
    ) {
        while let Some(first) = queue.recv().await {
            let mut batch = vec![first];
            while batch.len() < COMMIT_BATCH {
                match queue.try_recv() {
                    Ok(p) => batch.push(p),
                    Err(_) => break,
                }
            }
            let (pages, replies): (Vec<PageWrite>, Vec<_>) = batch.into_iter().unzip();
            let want = if *refill.stop.borrow() {
                0
            } else {
                (refill.slots.available_permits() + refill.ahead)
                    .saturating_sub(refill.ready.load(std::sync::atomic::Ordering::Relaxed))
            };
            let ask = LeaseAsk {
                worker: &self.cfg.worker_id,
                pool: self.cfg.pool.as_deref(),
                n: want as i64,
                lease_ms: self.cfg.lease_ms,
            };
            let result = self.store.commit_pages_and_lease(&pages, Some(ask)).await;
            match result {
                Ok((results, leases)) => {
                    if !leases.is_empty() {
                        refill
                            .ready
                            .fetch_add(leases.len(), std::sync::atomic::Ordering::Relaxed);
                        if let Err(unsent) = refill.leases.send(leases) {
                            // The loop has stopped: give them back.
                            for lease in unsent.0 {
                                let _ = self.store.release_lease(&lease).await;
                            }
                        }
                    }
                    for (reply, r) in replies.into_iter().zip(results) {
                        let _ = reply.send(Ok(r));
                    }
                }
                Err(e) => {
                    let msg = e.to_string();
                    for reply in replies {
                        let _ = reply.send(Err(msg.clone()));
                    }
                }
            }
        }
    }

    /// Commits a page through the committer task.
    async fn commit(&self, page: PageWrite) -> Result<PageCommit, webdata_core::StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.commits.send((page, tx)).is_err() {
            return Err(webdata_core::StoreError::Invalid(
                "the crawl committer stopped".into(),
            ));
        }
        rx.await
            .map_err(|_| webdata_core::StoreError::Invalid("the crawl committer stopped".into()))?
            .map_err(webdata_core::StoreError::Invalid)
    }

    async fn robots(&self, url: &Url) -> Arc<Robots> {
        self.engine.robots_for(url).await
    }

    async fn seed_queued(&self) -> Result<(), webdata_core::StoreError> {
        for crawl in self.store.seedable_crawls(self.cfg.pool.as_deref()).await? {
            if !self.store.start_crawl(&crawl.id).await? {
                continue;
            }
            let plan = match self.plan(&crawl) {
                Ok(p) => p,
                Err(msg) => {
                    self.store
                        .finish_crawl(&crawl.id, CrawlStatus::Failed, Some(("internal", &msg)))
                        .await?;
                    continue;
                }
            };
            // The start URL goes in first, leased to us, so the crawl does not
            // look drained to another runner while robots.txt and sitemaps
            // are read (that runner would finish it empty).
            let start = new_url(&plan.start, 0, "start");
            let hold = self
                .store
                .hold_for_seeding(&crawl.id, &start, &self.cfg.worker_id, self.cfg.lease_ms)
                .await?;
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
                        if self.wanted(&plan, &u, ignore_robots).await {
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

    /// Same site, path filter, robots.
    async fn wanted(&self, plan: &Plan, u: &Url, ignore_robots: bool) -> bool {
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
        ignore_robots || self.robots(u).await.is_allowed_url(u)
    }

    async fn polite(&self, url: &Url, ignore_robots: bool) {
        if ignore_robots {
            return;
        }
        let Some(delay) = self.robots(url).await.crawl_delay() else {
            return;
        };
        let delay = delay.min(Duration::from_secs(30));
        let host = url.host_str().unwrap_or("").to_string();
        let wait_until = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            let now = tokio::time::Instant::now();
            let next = hosts.get(&host).copied().unwrap_or(now).max(now);
            hosts.insert(host, next + delay);
            next
        };
        tokio::time::sleep_until(wait_until).await;
    }

    async fn process(&self, lease: Lease, slot: tokio::sync::OwnedSemaphorePermit) {
        if let Err(e) = self.process_inner(&lease, slot).await {
            tracing::warn!(error = %e, url = %lease.url, "crawl page failed in the store; the lease will expire and retry");
        }
    }

    /// The crawl row, from the store at most every [`ROW_TTL`].
    async fn crawl_row(&self, id: &str) -> Result<Option<CrawlRow>, webdata_core::StoreError> {
        if let Some((at, row)) = self.rows.lock().unwrap_or_else(|p| p.into_inner()).get(id) {
            if at.elapsed() < ROW_TTL {
                return Ok(Some(row.clone()));
            }
        }
        let row = self.store.get_crawl(id).await?;
        let mut rows = self.rows.lock().unwrap_or_else(|p| p.into_inner());
        match &row {
            Some(r) => {
                rows.insert(id.to_string(), (std::time::Instant::now(), r.clone()));
            }
            None => {
                rows.remove(id);
            }
        }
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
            self.forget(&crawl.id);
            return Ok(());
        }
        let plan = match self.plan(&crawl) {
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
                .fail_url(lease, "unparsable URL", false, 0, 1)
                .await?;
            return Ok(());
        };
        let host_slot = {
            let mut slots = self.host_slots.lock().unwrap_or_else(|p| p.into_inner());
            slots
                .entry(page_url.host_str().unwrap_or("").to_string())
                .or_insert_with(|| Arc::new(Semaphore::new(self.cfg.per_host.max(1))))
                .clone()
        };
        let host_permit = host_slot.acquire_owned().await.ok();
        self.polite(&page_url, ignore_robots).await;
        let mut options = plan.request.scrape_options.clone().unwrap_or_default();
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
                if depth_ok && plan.request.sitemap() != SitemapMode::Only {
                    let base = doc
                        .final_url
                        .as_deref()
                        .and_then(|u| Url::parse(u).ok())
                        .unwrap_or_else(|| page_url.clone());
                    let mut found = Vec::new();
                    let mut this_page = std::collections::HashSet::new();
                    for l in links.iter().filter_map(|l| urlnorm::resolve_link(&base, l)) {
                        let candidate = new_url(&l, next_depth, "link");
                        let known = self
                            .enqueued
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .get(&crawl.id)
                            .is_some_and(|k| k.contains(&candidate.key));
                        if !known
                            && !this_page.contains(&candidate.key)
                            && self.wanted(&plan, &l, ignore_robots).await
                        {
                            this_page.insert(candidate.key.clone());
                            found.push(candidate);
                        }
                    }
                    new_links = found;
                }
                let json = serde_json::to_string(&doc).unwrap_or_else(|_| "{}".into());
                let blocks = webdata_content::boilerplate::page_hashes(
                    doc.markdown.as_deref().unwrap_or(""),
                );
                let keys: Vec<String> = new_links.iter().map(|l| l.key.clone()).collect();
                let _commit_slot = self.commit_slots.acquire().await.ok();
                drop(slot);
                let commit = self
                    .commit(PageWrite {
                        lease: lease.clone(),
                        document_json: json,
                        block_hashes: blocks,
                        billable: scraped.billable,
                        links: new_links,
                    })
                    .await?;
                // Every key sent is in the frontier now, or can never be
                // (the crawl reached its limit, which only grows stricter)
                // or the page was not stored (then another runner retries it).
                if matches!(commit, PageCommit::Stored { .. }) {
                    let mut enqueued = self.enqueued.lock().unwrap_or_else(|p| p.into_inner());
                    let known = enqueued.entry(crawl.id.clone()).or_default();
                    if known.len() > ENQUEUED_MAX {
                        known.clear();
                    }
                    known.extend(keys);
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
                self.store.fail_url(lease, &f.message, false, 0, 1).await?;
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
                    .fail_url(lease, &f.message, true, backoff, self.cfg.max_attempts)
                    .await?;
            }
            _ => {
                self.store.fail_url(lease, &f.message, false, 0, 1).await?;
            }
        }
        Ok(())
    }

    /// Drops what this runner remembers about a finished crawl.
    fn forget(&self, id: &str) {
        self.rows
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
        self.enqueued
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    async fn finish_drained(&self) -> Result<(), webdata_core::StoreError> {
        for crawl in self.store.crawls_in(status::RUNNING).await? {
            if self.store.frontier_pending(&crawl.id).await? == 0 {
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
                self.plans
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&crawl.id);
                self.forget(&crawl.id);
            }
        }
        Ok(())
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
