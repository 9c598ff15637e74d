//! Durable crawls: the crawl row and its state machine, the frontier with
//! leases, documents and events numbered per crawl. A page is stored,
//! charged, marked done and its event appended in one transaction, so a
//! crash never loses or double-charges a page.

use super::orgs::period_of;
use super::{new_id, now_ms, opt_i64, Bind, Store, StoreError, StoreResult};
use sqlx::any::AnyRow;
use sqlx::Row;
use std::collections::HashMap;

/// Crawl states, as on the wire.
pub mod status {
    pub const QUEUED: &str = "queued";
    pub const RUNNING: &str = "running";
    pub const COMPLETED: &str = "completed";
    pub const FAILED: &str = "failed";
    pub const CANCELLED: &str = "cancelled";
}

/// A crawl as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlRow {
    pub id: String,
    pub org_id: String,
    pub key_id: Option<String>,
    pub status: String,
    pub url: String,
    /// The CrawlRequest as JSON.
    pub request: String,
    pub max_pages: i64,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub total: i64,
    pub completed: i64,
    pub failed: i64,
    pub credits_used: i64,
    pub doc_seq: i64,
    pub event_seq: i64,
    pub error_code: Option<String>,
    pub error_message: Option<String>,
    /// The WorkerPool whose workers run it (`default` on one machine).
    pub pool: String,
    /// False while a crawl made in cluster mode waits for the operator.
    pub admitted: bool,
    /// Its pages need a browser (render demand for the pool).
    pub renders: bool,
    /// `local` (in-process or `webdata-worker` on one machine) or `kube` (a CrawlJob).
    pub launcher: String,
}

/// Where and how a new crawl runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub pool: String,
    /// Workers may start it at once (false: wait for the operator).
    pub admitted: bool,
    pub renders: bool,
    pub launcher: String,
}

impl Default for Placement {
    fn default() -> Self {
        Placement {
            pool: "default".into(),
            admitted: true,
            renders: false,
            launcher: "local".into(),
        }
    }
}

/// Work waiting in a pool: what the operator scales workers and browsers by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolBacklog {
    /// Admitted crawls not started yet (each needs a worker to seed it).
    pub queued_crawls: i64,
    /// Queued and leased URLs of the pool's running crawls.
    pub urls: i64,
    /// The part of `urls` whose crawls need a browser.
    pub render_urls: i64,
    /// Running crawls.
    pub running_crawls: i64,
}

impl CrawlRow {
    /// True once the crawl can change no more.
    pub fn is_finished(&self) -> bool {
        matches!(
            self.status.as_str(),
            status::COMPLETED | status::FAILED | status::CANCELLED
        )
    }
}

/// A URL to add to a crawl's frontier.
#[derive(Debug, Clone, PartialEq)]
pub struct NewUrl {
    /// The de-duplication key (normalised URL).
    pub key: String,
    pub url: String,
    pub depth: i64,
    /// `start`, `sitemap` or `link`.
    pub source: String,
}

/// A scraped page for [`Store::commit_pages`].
#[derive(Debug, Clone, PartialEq)]
pub struct PageWrite {
    /// The lease the page was scraped under (the commit checks it is held).
    pub lease: Lease,
    /// The Document as JSON.
    pub document_json: String,
    /// Its markdown blocks' hashes (boilerplate statistics).
    pub block_hashes: Vec<String>,
    /// Charge 1 credit.
    pub billable: bool,
    /// Links found on the page, enqueued in the same transaction.
    pub links: Vec<NewUrl>,
}

/// What a runner asks to lease along with a commit
/// ([`Store::commit_pages_and_lease`]).
#[derive(Debug, Clone, Copy)]
pub struct LeaseAsk<'a> {
    pub worker: &'a str,
    /// Only this WorkerPool's crawls (`None`: every admitted crawl).
    pub pool: Option<&'a str>,
    /// At most this many URLs.
    pub n: i64,
    pub lease_ms: i64,
}

/// A URL leased to a worker until `lease_until`.
#[derive(Debug, Clone, PartialEq)]
pub struct Lease {
    pub crawl_id: String,
    pub key: String,
    pub url: String,
    pub depth: i64,
    pub attempts: i64,
    pub worker: String,
}

/// What committing a page did.
#[derive(Debug, Clone, PartialEq)]
pub enum PageCommit {
    /// Stored as document `seq` (charged when billable).
    Stored { seq: i64, charged: i64 },
    /// Not stored: the crawl is no longer running or the lease was lost.
    Dropped,
    /// Not stored: the organization cannot pay; the crawl stopped with this code.
    OutOfCredits { code: &'static str },
}

/// One event of a crawl.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlEvent {
    pub seq: i64,
    /// `started`, `page`, `status`, `completed`, `failed`, `cancelled`.
    pub kind: String,
    /// JSON.
    pub data: String,
    pub created_at: i64,
}

/// Status JSON of a crawl (CrawlStatus without `data`), for events.
pub fn status_json(c: &CrawlRow) -> serde_json::Value {
    let mut v = serde_json::json!({
        "id": c.id,
        "status": c.status,
        "url": c.url,
        "total": c.total,
        "completed": c.completed,
        "failed": c.failed,
        "credits_used": c.credits_used,
    });
    if let (Some(code), Some(message)) = (&c.error_code, &c.error_message) {
        v["error"] = serde_json::json!({ "code": code, "message": message });
    }
    v
}

/// [`status_json`] as a string: the data of lifecycle events.
pub fn status_data(c: &CrawlRow) -> String {
    status_json(c).to_string()
}

/// Pages whose block hashes wait in `crawl_page_blocks` before they are
/// counted into `crawl_blocks` (see `fold_blocks_in_tx`). Measured on the
/// 1,167-page postgresql-doc-15 crawl: an upsert per block at every commit
/// held the crawl to 1,550–1,580 pages/s (the counters' index pages were
/// rewritten on every commit), no block counting at all ran at 3,080–3,220;
/// a fold of 512 pages (11,000–18,000 distinct blocks) took 20–34 ms.
const FOLD_PAGES: i64 = 512;

/// How often one process looks for expired leases while the queue alone
/// fills its lease batches.
const EXPIRED_SCAN_MS: i64 = 250;

/// A page's distinct block hashes as one space-separated string (a hash is
/// hex; any whitespace inside one is dropped so it stays one token).
fn distinct_hashes(hashes: &[String]) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut out = String::new();
    for h in hashes {
        let h: String = h.split_whitespace().collect();
        if !h.is_empty() && seen.insert(h.clone()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&h);
        }
    }
    out
}

const CRAWL_COLUMNS: &str = "id, org_id, key_id, status, url, request, max_pages, created_at, started_at, finished_at, total, completed, failed, credits_used, doc_seq, event_seq, error_code, error_message, pool, admitted, renders, launcher";

fn crawl_from_row(r: &AnyRow) -> StoreResult<CrawlRow> {
    Ok(CrawlRow {
        id: r.try_get("id")?,
        org_id: r.try_get("org_id")?,
        key_id: r.try_get("key_id")?,
        status: r.try_get("status")?,
        url: r.try_get("url")?,
        request: r.try_get("request")?,
        max_pages: r.try_get("max_pages")?,
        created_at: r.try_get("created_at")?,
        started_at: opt_i64(r, "started_at")?,
        finished_at: opt_i64(r, "finished_at")?,
        total: r.try_get("total")?,
        completed: r.try_get("completed")?,
        failed: r.try_get("failed")?,
        credits_used: r.try_get("credits_used")?,
        doc_seq: r.try_get("doc_seq")?,
        event_seq: r.try_get("event_seq")?,
        error_code: r.try_get("error_code")?,
        error_message: r.try_get("error_message")?,
        pool: r.try_get("pool")?,
        admitted: r.try_get::<i64, _>("admitted")? != 0,
        renders: r.try_get::<i64, _>("renders")? != 0,
        launcher: r.try_get("launcher")?,
    })
}

type Tx = sqlx::Transaction<'static, sqlx::Any>;

impl Store {
    /// Creates a queued crawl and its ledger entry.
    pub async fn create_crawl(
        &self,
        id: &str,
        org_id: &str,
        key_id: Option<&str>,
        url: &str,
        request_json: &str,
        max_pages: i64,
    ) -> StoreResult<CrawlRow> {
        self.create_crawl_in(
            id,
            org_id,
            key_id,
            url,
            request_json,
            max_pages,
            &Placement::default(),
        )
        .await
    }

    /// Creates a queued crawl placed in a pool, and its ledger entry.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_crawl_in(
        &self,
        id: &str,
        org_id: &str,
        key_id: Option<&str>,
        url: &str,
        request_json: &str,
        max_pages: i64,
        placement: &Placement,
    ) -> StoreResult<CrawlRow> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO crawls (id, org_id, key_id, status, url, request, max_pages, created_at, updated_at, pool, admitted, renders, launcher) \
             VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7, $7, $8, $9, $10, $11)",
        )
        .bind(id)
        .bind(org_id)
        .bind(key_id)
        .bind(url)
        .bind(request_json)
        .bind(max_pages)
        .bind(now)
        .bind(&placement.pool)
        .bind(placement.admitted as i64)
        .bind(placement.renders as i64)
        .bind(&placement.launcher)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO credit_ledger (id, org_id, key_id, operation, reserved, settled, state, created_at) \
             VALUES ($1, $2, $3, 'crawl', 0, 0, 'settled', $4)",
        )
        .bind(id)
        .bind(org_id)
        .bind(key_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.get_crawl(id)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("crawl {id}")))
    }

    /// One crawl by id.
    pub async fn get_crawl(&self, id: &str) -> StoreResult<Option<CrawlRow>> {
        let row = sqlx::query(&format!("SELECT {CRAWL_COLUMNS} FROM crawls WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(crawl_from_row).transpose()
    }

    /// Crawls in a state (oldest first), for workers resuming after a restart.
    pub async fn crawls_in(&self, state: &str) -> StoreResult<Vec<CrawlRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {CRAWL_COLUMNS} FROM crawls WHERE status = $1 ORDER BY created_at, id"
        ))
        .bind(state)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(crawl_from_row).collect()
    }

    /// Admitted queued crawls, oldest first, of one pool or of all.
    pub async fn seedable_crawls(&self, pool: Option<&str>) -> StoreResult<Vec<CrawlRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {CRAWL_COLUMNS} FROM crawls WHERE status = 'queued' AND admitted = 1 \
             AND ($1 = '' OR pool = $1) ORDER BY created_at, id"
        ))
        .bind(pool.unwrap_or(""))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(crawl_from_row).collect()
    }

    /// Lets workers start a crawl that waited for the operator; false when
    /// it was already admitted or is gone.
    pub async fn admit_crawl(&self, id: &str) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let n = sqlx::query(
            "UPDATE crawls SET admitted = 1, updated_at = $1 WHERE id = $2 AND admitted = 0",
        )
        .bind(now_ms())
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(n > 0)
    }

    /// The work waiting in `pool`.
    pub async fn pool_backlog(&self, pool: &str) -> StoreResult<PoolBacklog> {
        let crawls = sqlx::query(
            "SELECT \
               CAST(COALESCE(SUM(CASE WHEN status = 'queued' AND admitted = 1 THEN 1 ELSE 0 END), 0) AS BIGINT) AS queued, \
               CAST(COALESCE(SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END), 0) AS BIGINT) AS running \
             FROM crawls WHERE pool = $1 AND status IN ('queued', 'running')",
        )
        .bind(pool)
        .fetch_one(self.pool())
        .await?;
        let urls = sqlx::query(
            "SELECT CAST(COUNT(*) AS BIGINT) AS urls, \
               CAST(COALESCE(SUM(CASE WHEN c.renders = 1 THEN 1 ELSE 0 END), 0) AS BIGINT) AS render_urls \
             FROM frontier f JOIN crawls c ON c.id = f.crawl_id \
             WHERE c.pool = $1 AND c.status = 'running' AND f.state IN ('queued', 'leased')",
        )
        .bind(pool)
        .fetch_one(self.pool())
        .await?;
        Ok(PoolBacklog {
            queued_crawls: crawls.try_get("queued")?,
            running_crawls: crawls.try_get("running")?,
            urls: urls.try_get("urls")?,
            render_urls: urls.try_get("render_urls")?,
        })
    }

    async fn lock_crawl(&self, tx: &mut Tx, id: &str) -> StoreResult<Option<CrawlRow>> {
        let row = sqlx::query(&format!(
            "SELECT {CRAWL_COLUMNS} FROM crawls WHERE id = $1{}",
            self.lock_suffix()
        ))
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
        row.as_ref().map(crawl_from_row).transpose()
    }

    async fn append_event(
        tx: &mut Tx,
        crawl: &CrawlRow,
        seq: i64,
        kind: &str,
        data: &str,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO crawl_events (crawl_id, seq, kind, data, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&crawl.id)
        .bind(seq)
        .bind(kind)
        .bind(data)
        .bind(now_ms())
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Appends an event (its data built from the crawl as it is now, after
    /// `apply`) and returns the updated row. `apply` changes nothing in the
    /// store; callers update columns before calling this.
    async fn event_in_tx(
        &self,
        tx: &mut Tx,
        id: &str,
        kind: &str,
        data: impl Fn(&CrawlRow) -> String,
    ) -> StoreResult<CrawlRow> {
        let mut crawl = self
            .lock_crawl(tx, id)
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("crawl {id}")))?;
        crawl.event_seq += 1;
        sqlx::query("UPDATE crawls SET event_seq = $1, updated_at = $2 WHERE id = $3")
            .bind(crawl.event_seq)
            .bind(now_ms())
            .bind(id)
            .execute(&mut **tx)
            .await?;
        Self::append_event(tx, &crawl, crawl.event_seq, kind, &data(&crawl)).await?;
        Ok(crawl)
    }

    /// queued → running, with the `started` event. False when the crawl was
    /// not queued (already started, cancelled or failed).
    pub async fn start_crawl(
        &self,
        id: &str,
        data: impl Fn(&CrawlRow) -> String,
    ) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let now = now_ms();
        let moved = sqlx::query(
            "UPDATE crawls SET status = 'running', started_at = $1, updated_at = $1 WHERE id = $2 AND status = 'queued'",
        )
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if moved == 0 {
            return Ok(false);
        }
        self.event_in_tx(&mut tx, id, "started", data).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Ends a crawl that is not finished yet: `completed`, `failed` or
    /// `cancelled`, with an optional error. Queued URLs are dropped at no
    /// cost. Returns false when it had already ended.
    pub async fn finish_crawl(
        &self,
        id: &str,
        final_status: &str,
        error: Option<(&str, &str)>,
        data: impl Fn(&CrawlRow) -> String,
    ) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let Some(crawl) = self.lock_crawl(&mut tx, id).await? else {
            return Err(StoreError::NotFound(format!("crawl {id}")));
        };
        if crawl.is_finished() {
            return Ok(false);
        }
        let now = now_ms();
        sqlx::query(
            "UPDATE crawls SET status = $1, finished_at = $2, updated_at = $2, \
             error_code = COALESCE($3, error_code), error_message = COALESCE($4, error_message) WHERE id = $5",
        )
        .bind(final_status)
        .bind(now)
        .bind(error.map(|e| e.0))
        .bind(error.map(|e| e.1))
        .bind(id)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "UPDATE frontier SET state = 'dropped', lease_until = NULL WHERE crawl_id = $1 AND state IN ('queued', 'leased')",
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        self.event_in_tx(&mut tx, id, final_status, data).await?;
        tx.commit().await?;
        // No page comes after the end: its block counts are folded once, in
        // a transaction of its own (the crawl is reported finished without
        // waiting for it; a reader adds up rows still unfolded anyway).
        if let Err(e) = self.fold_blocks(id).await {
            tracing::warn!(crawl = id, error = %e, "folding the crawl's block counts failed");
        }
        Ok(true)
    }

    /// Folds a crawl's unfolded block counts (see `fold_blocks_in_tx`).
    async fn fold_blocks(&self, id: &str) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        if self.lock_crawl(&mut tx, id).await?.is_some() {
            Self::fold_blocks_in_tx(&mut tx, id).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Counts the block hashes of the pages in `crawl_page_blocks` into
    /// `crawl_blocks` (one upsert per distinct hash, in multi-row
    /// statements) and deletes those rows. Runs inside the transaction that
    /// holds the crawl's row, so folds of one crawl never overlap.
    async fn fold_blocks_in_tx(tx: &mut Tx, crawl_id: &str) -> StoreResult<()> {
        let rows: Vec<String> =
            sqlx::query_scalar("SELECT hashes FROM crawl_page_blocks WHERE crawl_id = $1")
                .bind(crawl_id)
                .fetch_all(&mut **tx)
                .await?;
        if rows.is_empty() {
            return Ok(());
        }
        // Each row's hashes are distinct; counted over the rows (an upsert
        // may not touch a row twice in one statement on Postgres).
        let mut counts: HashMap<&str, i64> = HashMap::new();
        let mut order: Vec<&str> = Vec::new();
        for h in rows.iter().flat_map(|r| r.split_ascii_whitespace()) {
            let c = counts.entry(h).or_insert(0);
            if *c == 0 {
                order.push(h);
            }
            *c += 1;
        }
        // In key order: each index page is then written once per fold.
        order.sort_unstable();
        for part in super::shaped_chunks(&order, 64) {
            let values = (0..part.len())
                .map(|k| format!("($1, ${}, ${})", 2 + 2 * k, 3 + 2 * k))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "INSERT INTO crawl_blocks (crawl_id, hash, pages) VALUES {values} \
                 ON CONFLICT (crawl_id, hash) DO UPDATE SET pages = crawl_blocks.pages + excluded.pages"
            );
            let mut q = sqlx::query(&sql).bind(crawl_id);
            for h in part {
                q = q.bind(*h).bind(counts[h]);
            }
            q.execute(&mut **tx).await?;
        }
        sqlx::query("DELETE FROM crawl_page_blocks WHERE crawl_id = $1")
            .bind(crawl_id)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// Records an error on a running crawl without ending it (it ends when
    /// its frontier drains), e.g. `spend_cap_reached` before the stop.
    pub async fn set_crawl_error(&self, id: &str, code: &str, message: &str) -> StoreResult<()> {
        sqlx::query(
            "UPDATE crawls SET error_code = $1, error_message = $2, updated_at = $3 WHERE id = $4",
        )
        .bind(code)
        .bind(message)
        .bind(now_ms())
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Adds URLs to the frontier, ignoring ones already there and stopping
    /// at the crawl's page limit. Returns how many were added.
    pub async fn enqueue_urls(&self, crawl_id: &str, urls: &[NewUrl]) -> StoreResult<usize> {
        if urls.is_empty() {
            return Ok(0);
        }
        let mut tx = self.begin_write().await?;
        let Some(mut crawl) = self.lock_crawl(&mut tx, crawl_id).await? else {
            return Err(StoreError::NotFound(format!("crawl {crawl_id}")));
        };
        if crawl.is_finished() {
            return Ok(0);
        }
        let added = Self::enqueue_in_tx(&mut tx, &mut crawl, urls).await?;
        if added > 0 {
            sqlx::query("UPDATE crawls SET total = $1, updated_at = $2 WHERE id = $3")
                .bind(crawl.total)
                .bind(now_ms())
                .bind(crawl_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(added)
    }

    /// Adds the URLs `crawl` does not have yet, up to its page limit, and
    /// counts them in `crawl.total` (the caller writes the row).
    async fn enqueue_in_tx(
        tx: &mut Tx,
        crawl: &mut CrawlRow,
        urls: &[NewUrl],
    ) -> StoreResult<usize> {
        let crawl_id = crawl.id.clone();
        let crawl_id = crawl_id.as_str();
        let mut room = (crawl.max_pages - crawl.total).max(0) as usize;
        let now = now_ms();
        // Batched: the URLs already in the frontier are read with one query
        // per 300 and the new ones inserted with one statement per 300 (a
        // page links to dozens of URLs, most of them already known).
        let mut seen = std::collections::HashSet::new();
        let unique: Vec<&NewUrl> = urls
            .iter()
            .filter(|u| seen.insert(u.key.as_str()))
            .collect();
        let mut fresh: Vec<&NewUrl> = Vec::new();
        // With room for every URL, the insert alone tells which were new
        // (conflicts are not counted): no read first.
        let ample = room >= unique.len();
        if ample {
            fresh = unique.clone();
        }
        for part in super::shaped_chunks(&unique, 64) {
            if room == 0 || ample {
                break;
            }
            let marks = (0..part.len())
                .map(|i| format!("${}", i + 2))
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "SELECT url_key FROM frontier WHERE crawl_id = $1 AND url_key IN ({marks})"
            );
            let mut q = sqlx::query(&sql).bind(crawl_id);
            for u in part {
                q = q.bind(&u.key);
            }
            let known: std::collections::HashSet<String> = q
                .fetch_all(&mut **tx)
                .await?
                .iter()
                .map(|r| r.try_get::<String, _>("url_key"))
                .collect::<Result<_, _>>()?;
            for u in part {
                if room > 0 && !known.contains(&u.key) {
                    fresh.push(u);
                    room -= 1;
                }
            }
        }
        let mut added = 0usize;
        for part in super::shaped_chunks(&fresh, 32) {
            let values = (0..part.len())
                .map(|i| {
                    let b = 3 + i * 4;
                    format!(
                        "($1, ${b}, ${}, ${}, ${}, 'queued', $2)",
                        b + 1,
                        b + 2,
                        b + 3
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!(
                "INSERT INTO frontier (crawl_id, url_key, url, depth, source, state, created_at) \
                 VALUES {values} ON CONFLICT (crawl_id, url_key) DO NOTHING"
            );
            let mut q = sqlx::query(&sql).bind(crawl_id).bind(now);
            for u in part {
                q = q.bind(&u.key).bind(&u.url).bind(u.depth).bind(&u.source);
            }
            added += q.execute(&mut **tx).await?.rows_affected() as usize;
        }
        crawl.total += added as i64;
        Ok(added)
    }

    /// Leases up to `n` ready URLs of running crawls (optionally one crawl)
    /// to `worker` for `lease_ms`. Expired leases are leased again.
    pub async fn lease_urls(
        &self,
        worker: &str,
        crawl: Option<&str>,
        n: i64,
        lease_ms: i64,
    ) -> StoreResult<Vec<Lease>> {
        self.lease_urls_where(worker, crawl, None, n, lease_ms)
            .await
    }

    /// Like [`Store::lease_urls`], for the crawls of one pool (all when `None`).
    pub async fn lease_pool_urls(
        &self,
        worker: &str,
        pool: Option<&str>,
        n: i64,
        lease_ms: i64,
    ) -> StoreResult<Vec<Lease>> {
        self.lease_urls_where(worker, None, pool, n, lease_ms).await
    }

    async fn lease_urls_where(
        &self,
        worker: &str,
        crawl: Option<&str>,
        pool: Option<&str>,
        n: i64,
        lease_ms: i64,
    ) -> StoreResult<Vec<Lease>> {
        let mut tx = self.begin_write().await?;
        let leases = self
            .lease_in_tx(&mut tx, worker, crawl, pool, n, lease_ms)
            .await?;
        tx.commit().await?;
        Ok(leases)
    }

    /// Leases inside `tx` (see [`Store::lease_pool_urls`]).
    async fn lease_in_tx(
        &self,
        tx: &mut Tx,
        worker: &str,
        crawl: Option<&str>,
        pool: Option<&str>,
        n: i64,
        lease_ms: i64,
    ) -> StoreResult<Vec<Lease>> {
        let now = now_ms();
        let crawl_filter = if crawl.is_some() {
            "AND f.crawl_id = $3"
        } else {
            "AND $3 = $3"
        };
        let pool_filter = if pool.is_some() {
            "AND c.pool = $4"
        } else {
            "AND $4 = $4"
        };
        let skip = match self.backend() {
            super::Backend::Postgres => " FOR UPDATE OF f SKIP LOCKED",
            super::Backend::Sqlite => "",
        };
        // Two index-ordered scans instead of one OR (which sorted every ready
        // row on each lease): expired leases first (their workers died), then
        // queued URLs by depth and age via `frontier_queue`, so a lease costs
        // the same with 100 or 100,000 URLs waiting.
        let select = |ready: &str, order: &str| {
            format!(
                "SELECT f.crawl_id, f.url_key, f.url, f.depth, f.attempts FROM frontier f JOIN crawls c ON c.id = f.crawl_id \
                 WHERE {ready} AND c.status = 'running' {crawl_filter} {pool_filter} \
                 ORDER BY {order} LIMIT $2{skip}"
            )
        };
        let mut rows = Vec::new();
        let expired = ("f.state = 'leased' AND f.lease_until < $1", "f.lease_until");
        let queued = (
            "f.state = 'queued' AND f.not_before <= $1",
            "f.depth, f.created_at",
        );
        // Expired leases (their workers died) come first, but they are
        // looked for at most every EXPIRED_SCAN_MS unless the queue cannot
        // fill the batch: a lease is then one statement fewer.
        use std::sync::atomic::Ordering;
        let due = now - self.expired_scan.load(Ordering::Relaxed) >= EXPIRED_SCAN_MS;
        let order = if due {
            [Some(expired), Some(queued), None]
        } else {
            [None, Some(queued), Some(expired)]
        };
        for (ready, order) in order.into_iter().flatten() {
            let room = n - rows.len() as i64;
            if room <= 0 {
                break;
            }
            if ready == expired.0 {
                self.expired_scan.store(now, Ordering::Relaxed);
            }
            rows.extend(
                sqlx::query(&select(ready, order))
                    .bind(now)
                    .bind(room)
                    .bind(crawl.unwrap_or(""))
                    .bind(pool.unwrap_or(""))
                    .fetch_all(&mut **tx)
                    .await?,
            );
        }
        let mut leases = Vec::with_capacity(rows.len());
        for r in rows {
            leases.push(Lease {
                crawl_id: r.try_get("crawl_id")?,
                key: r.try_get("url_key")?,
                url: r.try_get("url")?,
                depth: r.try_get("depth")?,
                attempts: r.try_get("attempts")?,
                worker: worker.to_string(),
            });
        }
        // One UPDATE per crawl in the batch, not one per URL; all in one
        // round trip on SQLite.
        let mut crawls: Vec<&str> = leases.iter().map(|l| l.crawl_id.as_str()).collect();
        crawls.sort_unstable();
        crawls.dedup();
        let until = now + lease_ms;
        let mut w = super::Writes::new(self.backend());
        for crawl_id in crawls {
            let keys: Vec<&str> = leases
                .iter()
                .filter(|l| l.crawl_id == crawl_id)
                .map(|l| l.key.as_str())
                .collect();
            for part in super::shaped_chunks(&keys, 64) {
                let marks = (0..part.len())
                    .map(|i| format!("${}", i + 4))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut binds = vec![Bind::I(until), Bind::S(worker), Bind::S(crawl_id)];
                binds.extend(part.iter().map(|k| Bind::S(k)));
                w.push(
                    format!(
                        "UPDATE frontier SET state = 'leased', lease_until = $1, worker = $2 \
                         WHERE crawl_id = $3 AND url_key IN ({marks})"
                    ),
                    binds,
                );
            }
        }
        w.run(tx).await?;
        Ok(leases)
    }

    /// Stores a scraped page: charges 1 credit when `billable`, stores the
    /// document, marks the URL done, bumps counters and appends the `page`
    /// event — all in one transaction. A page the organization cannot pay
    /// for is not stored and stops the crawl's charging.
    pub async fn commit_page(
        &self,
        lease: &Lease,
        document_json: &str,
        block_hashes: &[String],
        billable: bool,
        event_data: impl Fn(&CrawlRow, i64) -> String,
    ) -> StoreResult<PageCommit> {
        let page = PageWrite {
            lease: lease.clone(),
            document_json: document_json.to_string(),
            block_hashes: block_hashes.to_vec(),
            billable,
            links: Vec::new(),
        };
        let mut out = self
            .commit_pages(std::slice::from_ref(&page), |c, _, seq| event_data(c, seq))
            .await?;
        Ok(out.pop().unwrap_or(PageCommit::Dropped))
    }

    /// Commits several scraped pages in one transaction (group commit: the
    /// write cost of a transaction is shared). Per page, in order: its links
    /// are enqueued, it is charged when billable, its document, block hashes
    /// and `page` event are stored and its URL marked done — exactly what
    /// [`Store::commit_page`] does for one. Returns one result per page.
    /// `event_data(crawl, page, seq)` builds a page event's data.
    pub async fn commit_pages(
        &self,
        pages: &[PageWrite],
        event_data: impl Fn(&CrawlRow, &PageWrite, i64) -> String,
    ) -> StoreResult<Vec<PageCommit>> {
        Ok(self
            .commit_pages_and_lease(pages, event_data, None)
            .await?
            .0)
    }

    /// [`Store::commit_pages`], then, in the same transaction, leases as
    /// [`Store::lease_pool_urls`] would with `ask`: a runner gets its next
    /// URLs (the links just stored among them) without a lease transaction
    /// of its own queueing behind the next commit.
    pub async fn commit_pages_and_lease(
        &self,
        pages: &[PageWrite],
        event_data: impl Fn(&CrawlRow, &PageWrite, i64) -> String,
        ask: Option<LeaseAsk<'_>>,
    ) -> StoreResult<(Vec<PageCommit>, Vec<Lease>)> {
        let mut results = vec![PageCommit::Dropped; pages.len()];
        if pages.is_empty() {
            return Ok((results, Vec::new()));
        }
        let mut tx = self.begin_write().await?;
        // Crawl rows locked in id order (no lock-order deadlock on Postgres).
        let mut ids: Vec<&str> = pages.iter().map(|p| p.lease.crawl_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let now = now_ms();
        let period = period_of(now);
        for id in ids {
            let Some(mut crawl) = self.lock_crawl(&mut tx, id).await? else {
                continue;
            };
            if crawl.status != status::RUNNING {
                continue;
            }
            // This crawl's pages, in order. Every statement below covers all
            // of them (multi-row), so a batch costs a handful of statements.
            let mine: Vec<usize> = (0..pages.len())
                .filter(|&i| pages[i].lease.crawl_id == id)
                .collect();
            // 1. Which leases are still held (by the worker that scraped them).
            let mut held = std::collections::HashSet::new();
            for part in super::shaped_chunks(&mine, 64) {
                let marks = (0..part.len())
                    .map(|k| format!("${}", k + 2))
                    .collect::<Vec<_>>()
                    .join(", ");
                let sql = format!(
                    "SELECT url_key, worker FROM frontier WHERE crawl_id = $1 AND state = 'leased' \
                     AND url_key IN ({marks})"
                );
                let mut q = sqlx::query(&sql).bind(id);
                for &i in part {
                    q = q.bind(&pages[i].lease.key);
                }
                for r in q.fetch_all(&mut *tx).await? {
                    let key: String = r.try_get("url_key")?;
                    let worker: Option<String> = r.try_get("worker")?;
                    held.insert((key, worker.unwrap_or_default()));
                }
            }
            let live: Vec<usize> = mine
                .into_iter()
                .filter(|&i| {
                    held.contains(&(pages[i].lease.key.clone(), pages[i].lease.worker.clone()))
                })
                .collect();
            if live.is_empty() {
                continue;
            }
            // 2. Links of every live page, in page order (the limit counts them so).
            let links: Vec<NewUrl> = live
                .iter()
                .flat_map(|&i| pages[i].links.iter().cloned())
                .collect();
            if !links.is_empty() {
                Self::enqueue_in_tx(&mut tx, &mut crawl, &links).await?;
            }
            // 3. Charges: all billable pages at once when the organization
            //    (and the key's budget) can pay for all; else page by page.
            let billable: Vec<usize> = live
                .iter()
                .copied()
                .filter(|&i| pages[i].billable)
                .collect();
            let mut paid: std::collections::HashSet<usize> = std::collections::HashSet::new();
            if !billable.is_empty() {
                let k = billable.len() as i64;
                if self
                    .charge_in_tx(&mut tx, &crawl, &period, k)
                    .await?
                    .is_none()
                {
                    paid.extend(billable.iter().copied());
                } else {
                    for &i in &billable {
                        match self.charge_in_tx(&mut tx, &crawl, &period, 1).await? {
                            None => {
                                paid.insert(i);
                            }
                            Some(code) => results[i] = PageCommit::OutOfCredits { code },
                        }
                    }
                }
            }
            let stored: Vec<usize> = live
                .into_iter()
                .filter(|i| !pages[*i].billable || paid.contains(i))
                .collect();
            // 4. Documents, events, frontier rows and block counts.
            let mut docs = Vec::with_capacity(stored.len());
            for &i in &stored {
                let charge = i64::from(pages[i].billable);
                crawl.doc_seq += 1;
                crawl.completed += 1;
                crawl.credits_used += charge;
                crawl.event_seq += 1;
                let data = event_data(&crawl, &pages[i], crawl.doc_seq);
                docs.push((i, crawl.doc_seq, crawl.event_seq, data));
                results[i] = PageCommit::Stored {
                    seq: crawl.doc_seq,
                    charged: charge,
                };
            }
            // The writes below go in one round trip on SQLite (see Writes).
            let mut w = super::Writes::new(self.backend());
            for part in super::shaped_chunks(&docs, 32) {
                // Columns: crawl_id, seq, url, document, created_at.
                let values = (0..part.len())
                    .map(|k| format!("($1, ${}, ${}, ${}, $2)", 3 + 3 * k, 4 + 3 * k, 5 + 3 * k))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut binds = vec![Bind::S(id), Bind::I(now)];
                for (i, seq, _, _) in part {
                    binds.push(Bind::I(*seq));
                    binds.push(Bind::S(&pages[*i].lease.url));
                    binds.push(Bind::S(&pages[*i].document_json));
                }
                w.push(
                    format!("INSERT INTO crawl_documents (crawl_id, seq, url, document, created_at) VALUES {values}"),
                    binds,
                );
                let values = (0..part.len())
                    .map(|k| format!("($1, ${}, 'page', ${}, $2)", 3 + 2 * k, 4 + 2 * k))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut binds = vec![Bind::S(id), Bind::I(now)];
                for (_, _, event_seq, data) in part {
                    binds.push(Bind::I(*event_seq));
                    binds.push(Bind::S(data));
                }
                w.push(
                    format!("INSERT INTO crawl_events (crawl_id, seq, kind, data, created_at) VALUES {values}"),
                    binds,
                );
            }
            for part in super::shaped_chunks(&stored, 64) {
                let marks = (0..part.len())
                    .map(|k| format!("${}", k + 2))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut binds = vec![Bind::S(id)];
                binds.extend(part.iter().map(|&i| Bind::S(&pages[i].lease.key)));
                w.push(
                    format!("UPDATE frontier SET state = 'done', lease_until = NULL WHERE crawl_id = $1 AND url_key IN ({marks})"),
                    binds,
                );
            }
            // Block hashes: one row per page, counted into crawl_blocks every
            // FOLD_PAGES pages (see fold_blocks_in_tx).
            let rows: Vec<(i64, String)> = docs
                .iter()
                .map(|(i, seq, _, _)| (*seq, distinct_hashes(&pages[*i].block_hashes)))
                .collect();
            for part in super::shaped_chunks(&rows, 32) {
                let values = (0..part.len())
                    .map(|k| format!("($1, ${}, ${})", 2 + 2 * k, 3 + 2 * k))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut binds = vec![Bind::S(id)];
                for (seq, hashes) in part {
                    binds.push(Bind::I(*seq));
                    binds.push(Bind::S(hashes));
                }
                w.push(
                    format!(
                        "INSERT INTO crawl_page_blocks (crawl_id, seq, hashes) VALUES {values}"
                    ),
                    binds,
                );
            }
            // 5. The ledger entry and the crawl's counters, once.
            let settled = stored.iter().filter(|&&i| pages[i].billable).count() as i64;
            if settled > 0 {
                w.push(
                    "UPDATE credit_ledger SET settled = COALESCE(settled, 0) + $1, reserved = reserved + $1, settled_at = $2 WHERE id = $3".into(),
                    vec![Bind::I(settled), Bind::I(now), Bind::S(id)],
                );
            }
            w.push(
                "UPDATE crawls SET total = $1, doc_seq = $2, completed = $3, credits_used = $4, event_seq = $5, updated_at = $6 WHERE id = $7".into(),
                vec![
                    Bind::I(crawl.total),
                    Bind::I(crawl.doc_seq),
                    Bind::I(crawl.completed),
                    Bind::I(crawl.credits_used),
                    Bind::I(crawl.event_seq),
                    Bind::I(now),
                    Bind::S(id),
                ],
            );
            w.run(&mut tx).await?;
            if !rows.is_empty()
                && (crawl.doc_seq - rows.len() as i64) / FOLD_PAGES != crawl.doc_seq / FOLD_PAGES
            {
                Self::fold_blocks_in_tx(&mut tx, id).await?;
            }
        }
        let leases = match ask {
            Some(a) if a.n > 0 => {
                self.lease_in_tx(&mut tx, a.worker, None, a.pool, a.n, a.lease_ms)
                    .await?
            }
            _ => Vec::new(),
        };
        tx.commit().await?;
        Ok((results, leases))
    }

    /// Charges `k` credits for pages of `crawl` inside a transaction: the
    /// key's budget, then the organization's credits and spend cap. Returns
    /// the error code when they cannot pay (and changes nothing).
    async fn charge_in_tx(
        &self,
        tx: &mut Tx,
        crawl: &CrawlRow,
        period: &str,
        k: i64,
    ) -> StoreResult<Option<&'static str>> {
        if let Some(key) = &crawl.key_id {
            let ok = sqlx::query(
                "UPDATE api_keys SET spent = spent + $1 WHERE id = $2 AND (budget IS NULL OR spent + $1 <= budget)",
            )
            .bind(k)
            .bind(key)
            .execute(&mut **tx)
            .await?
            .rows_affected();
            if ok == 0 {
                return Ok(Some("insufficient_credits"));
            }
        }
        let paid = sqlx::query(
            "UPDATE organizations SET credits = credits - $3, \
               period_spent = (CASE WHEN period = $1 THEN period_spent ELSE 0 END) + $3, period = $1 \
             WHERE id = $2 AND credits >= $3 \
               AND (spend_cap IS NULL OR (CASE WHEN period = $1 THEN period_spent ELSE 0 END) + $3 <= spend_cap)",
        )
        .bind(period)
        .bind(&crawl.org_id)
        .bind(k)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        if paid > 0 {
            return Ok(None);
        }
        // Undo the key's share (no savepoint needed).
        if let Some(key) = &crawl.key_id {
            sqlx::query("UPDATE api_keys SET spent = spent - $1 WHERE id = $2")
                .bind(k)
                .bind(key)
                .execute(&mut **tx)
                .await?;
        }
        let row = sqlx::query("SELECT credits FROM organizations WHERE id = $1")
            .bind(&crawl.org_id)
            .fetch_one(&mut **tx)
            .await?;
        let credits: i64 = row.try_get("credits")?;
        Ok(Some(if credits >= k {
            "spend_cap_reached"
        } else {
            "insufficient_credits"
        }))
    }

    /// A URL that failed: queued again after `retry_after_ms` when
    /// `retryable` and under `max_attempts`, else counted as failed.
    pub async fn fail_url(
        &self,
        lease: &Lease,
        error: &str,
        retryable: bool,
        retry_after_ms: i64,
        max_attempts: i64,
    ) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let now = now_ms();
        let attempts = lease.attempts + 1;
        let retry = retryable && attempts < max_attempts;
        let changed = sqlx::query(
            "UPDATE frontier SET state = $1, attempts = $2, not_before = $3, lease_until = NULL, error = $4 \
             WHERE crawl_id = $5 AND url_key = $6 AND state = 'leased' AND worker = $7",
        )
        .bind(if retry { "queued" } else { "failed" })
        .bind(attempts)
        .bind(now + retry_after_ms)
        .bind(error)
        .bind(&lease.crawl_id)
        .bind(&lease.key)
        .bind(&lease.worker)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 1 && !retry {
            sqlx::query("UPDATE crawls SET failed = failed + 1, updated_at = $1 WHERE id = $2")
                .bind(now)
                .bind(&lease.crawl_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(retry)
    }

    /// Gives a lease back untouched (worker shutting down).
    pub async fn release_lease(&self, lease: &Lease) -> StoreResult<()> {
        sqlx::query(
            "UPDATE frontier SET state = 'queued', lease_until = NULL, worker = NULL WHERE crawl_id = $1 AND url_key = $2 AND state = 'leased' AND worker = $3",
        )
        .bind(&lease.crawl_id)
        .bind(&lease.key)
        .bind(&lease.worker)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Puts a crawl's start URL in its frontier leased to `worker` while the
    /// worker seeds the crawl (robots.txt, sitemaps): the crawl then never
    /// looks drained to another runner mid-seeding, and if the seeding worker
    /// dies the lease expires and the start URL is crawled by someone else.
    /// Returns the lease (`None` when the crawl has ended or has the URL).
    pub async fn hold_for_seeding(
        &self,
        crawl_id: &str,
        url: &NewUrl,
        worker: &str,
        lease_ms: i64,
    ) -> StoreResult<Option<Lease>> {
        let mut tx = self.begin_write().await?;
        let Some(crawl) = self.lock_crawl(&mut tx, crawl_id).await? else {
            return Ok(None);
        };
        if crawl.is_finished() || crawl.total >= crawl.max_pages {
            return Ok(None);
        }
        let now = now_ms();
        let added = sqlx::query(
            "INSERT INTO frontier (crawl_id, url_key, url, depth, source, state, lease_until, worker, created_at) \
             VALUES ($1, $2, $3, $4, $5, 'leased', $6, $7, $8) ON CONFLICT (crawl_id, url_key) DO NOTHING",
        )
        .bind(crawl_id)
        .bind(&url.key)
        .bind(&url.url)
        .bind(url.depth)
        .bind(&url.source)
        .bind(now + lease_ms)
        .bind(worker)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if added == 0 {
            return Ok(None);
        }
        sqlx::query("UPDATE crawls SET total = total + 1, updated_at = $1 WHERE id = $2")
            .bind(now)
            .bind(crawl_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(Lease {
            crawl_id: crawl_id.to_string(),
            key: url.key.clone(),
            url: url.url.clone(),
            depth: url.depth,
            attempts: 0,
            worker: worker.to_string(),
        }))
    }

    /// Ends a seeding hold: the start URL is queued for crawling (`keep`) or
    /// removed from the frontier and the count (`sitemap: only`).
    pub async fn end_seeding(&self, hold: &Lease, keep: bool) -> StoreResult<()> {
        if keep {
            return self.release_lease(hold).await;
        }
        let mut tx = self.begin_write().await?;
        let removed = sqlx::query(
            "DELETE FROM frontier WHERE crawl_id = $1 AND url_key = $2 AND state = 'leased' AND worker = $3",
        )
        .bind(&hold.crawl_id)
        .bind(&hold.key)
        .bind(&hold.worker)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if removed > 0 {
            sqlx::query("UPDATE crawls SET total = total - 1, updated_at = $1 WHERE id = $2")
                .bind(now_ms())
                .bind(&hold.crawl_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// URLs of a crawl still queued or leased.
    pub async fn frontier_pending(&self, crawl_id: &str) -> StoreResult<i64> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM frontier WHERE crawl_id = $1 AND state IN ('queued', 'leased')",
        )
        .bind(crawl_id)
        .fetch_one(self.pool())
        .await?)
    }

    /// Documents after `after_seq`, oldest first: `(seq, url, json)`.
    pub async fn crawl_documents(
        &self,
        crawl_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> StoreResult<Vec<(i64, String, String)>> {
        let rows = sqlx::query(
            "SELECT seq, url, document FROM crawl_documents WHERE crawl_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(crawl_id)
        .bind(after_seq)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("seq")?, r.try_get("url")?, r.try_get("document")?)))
            .collect()
    }

    /// Events after `after_seq`, oldest first.
    pub async fn crawl_events(
        &self,
        crawl_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> StoreResult<Vec<CrawlEvent>> {
        let rows = sqlx::query(
            "SELECT seq, kind, data, created_at FROM crawl_events WHERE crawl_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(crawl_id)
        .bind(after_seq)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(CrawlEvent {
                    seq: r.try_get("seq")?,
                    kind: r.try_get("kind")?,
                    data: r.try_get("data")?,
                    created_at: r.try_get("created_at")?,
                })
            })
            .collect()
    }

    /// Hashes of blocks seen on at least `min_pages` pages of a crawl: the
    /// counts in `crawl_blocks` plus the pages not yet folded into them, read
    /// in one statement (one snapshot, so a fold in between is not seen
    /// twice or missed). A block whose count is below `min_pages` minus the
    /// unfolded pages cannot reach `min_pages`, so only the others are read.
    pub async fn frequent_blocks(
        &self,
        crawl_id: &str,
        min_pages: i64,
    ) -> StoreResult<Vec<String>> {
        let rows = sqlx::query(
            "SELECT CAST(0 AS BIGINT) AS tail, hash AS v, pages FROM crawl_blocks \
             WHERE crawl_id = $1 AND pages >= $2 - (SELECT COUNT(*) FROM crawl_page_blocks WHERE crawl_id = $1) \
             UNION ALL \
             SELECT CAST(1 AS BIGINT), hashes, CAST(0 AS BIGINT) FROM crawl_page_blocks WHERE crawl_id = $1",
        )
        .bind(crawl_id)
        .bind(min_pages)
        .fetch_all(self.pool())
        .await?;
        let mut counts: HashMap<String, i64> = HashMap::new();
        for r in &rows {
            let tail: i64 = r.try_get("tail")?;
            let v: String = r.try_get("v")?;
            if tail == 0 {
                let pages: i64 = r.try_get("pages")?;
                *counts.entry(v).or_insert(0) += pages;
            } else {
                for h in v.split_ascii_whitespace() {
                    *counts.entry(h.to_string()).or_insert(0) += 1;
                }
            }
        }
        let mut out: Vec<String> = counts
            .into_iter()
            .filter(|(_, n)| *n >= min_pages)
            .map(|(h, _)| h)
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// A fresh crawl id.
    pub fn new_crawl_id() -> String {
        new_id("crawl")
    }
}
