//! A crawl's stored documents, read back in order.

use crate::store::{Store, StoreResult};
use sqlx::Row;

impl Store {
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
}
