//! The crawl row: its columns and placement, read plainly or locked inside a
//! write transaction.

use super::state::CrawlStatus;
use crate::store::{opt_i64, Store, StoreResult};
use sqlx::any::AnyRow;
use sqlx::Row;

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
    /// `crawl`, or `batch` (a batch scrape: its URLs are given).
    pub kind: String,
    /// A batch's URLs as a JSON array (what the workers seed it with).
    pub seed_urls: Option<String>,
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

/// The kind of a batch scrape.
pub const KIND_BATCH: &str = "batch";
/// The kind of a crawl.
pub const KIND_CRAWL: &str = "crawl";

impl CrawlRow {
    /// A batch scrape (its URLs are given; nothing is discovered).
    pub fn is_batch(&self) -> bool {
        self.kind == KIND_BATCH
    }

    /// True once the crawl can change no more.
    pub fn is_finished(&self) -> bool {
        self.state().is_some_and(CrawlStatus::is_finished)
    }

    /// Its status as a [`CrawlStatus`] (`None`: a name this build does not
    /// know).
    pub fn state(&self) -> Option<CrawlStatus> {
        self.status.parse().ok()
    }
}

const CRAWL_COLUMNS: &str = "id, org_id, key_id, status, url, request, max_pages, created_at, started_at, finished_at, total, completed, failed, credits_used, doc_seq, event_seq, error_code, error_message, pool, admitted, renders, launcher, kind, seed_urls";

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
        kind: r.try_get("kind")?,
        seed_urls: r.try_get("seed_urls")?,
    })
}

/// A write transaction of the store.
pub(super) type Tx = sqlx::Transaction<'static, sqlx::Any>;

impl Store {
    /// One crawl by id.
    pub async fn get_crawl(&self, id: &str) -> StoreResult<Option<CrawlRow>> {
        let row = sqlx::query(&format!("SELECT {CRAWL_COLUMNS} FROM crawls WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(crawl_from_row).transpose()
    }

    /// An organization's crawls, newest first, created before `before` (unix ms).
    pub async fn crawls_of(
        &self,
        org_id: &str,
        before: i64,
        limit: i64,
    ) -> StoreResult<Vec<CrawlRow>> {
        let rows = sqlx::query(&format!(
            "SELECT {CRAWL_COLUMNS} FROM crawls WHERE org_id = $1 AND created_at < $2 ORDER BY created_at DESC, id DESC LIMIT $3"
        ))
        .bind(org_id)
        .bind(before)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(crawl_from_row).collect()
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

    pub(super) async fn lock_crawl(&self, tx: &mut Tx, id: &str) -> StoreResult<Option<CrawlRow>> {
        let row = sqlx::query(&format!(
            "SELECT {CRAWL_COLUMNS} FROM crawls WHERE id = $1{}",
            self.lock_suffix()
        ))
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
        row.as_ref().map(crawl_from_row).transpose()
    }
}
