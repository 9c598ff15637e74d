//! Leasing ready frontier URLs to workers, expired leases first.

use super::frontier::Lease;
use super::row::Tx;
use crate::store::{now_ms, Bind, Store, StoreResult};
use sqlx::Row;

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

/// How often one process looks for expired leases while the queue alone
/// fills its lease batches.
const EXPIRED_SCAN_MS: i64 = 250;

impl Store {
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
    pub(super) async fn lease_in_tx(
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
            crate::store::Backend::Postgres => " FOR UPDATE OF f SKIP LOCKED",
            crate::store::Backend::Sqlite => "",
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
        let mut w = crate::store::Writes::new(self.backend());
        for crawl_id in crawls {
            let keys: Vec<&str> = leases
                .iter()
                .filter(|l| l.crawl_id == crawl_id)
                .map(|l| l.key.as_str())
                .collect();
            for part in crate::store::shaped_chunks(&keys, 64) {
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
}
