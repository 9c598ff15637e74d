//! Crawl events: appended with the crawl's event counter, read back in order.

use super::row::{CrawlRow, Tx};
use super::wire::status_data;
use crate::store::{now_ms, Store, StoreError, StoreResult};
use sqlx::Row;

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

impl Store {
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

    /// Appends a lifecycle event, its data the crawl's [`status_data`] as it
    /// is now, and returns the updated row. Changes nothing else in the
    /// store; callers update columns before calling this.
    pub(super) async fn event_in_tx(
        &self,
        tx: &mut Tx,
        id: &str,
        kind: &str,
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
        Self::append_event(tx, &crawl, crawl.event_seq, kind, &status_data(&crawl)).await?;
        Ok(crawl)
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
}
