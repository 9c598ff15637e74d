//! Change tracking's snapshots: the last main-content markdown of each page
//! an organization scraped with the `changeTracking` format, per tag.

use super::{now_ms, Store, StoreResult};
use sqlx::Row;

/// A page's last snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSnapshot {
    pub url: String,
    pub markdown: String,
    /// Unix ms.
    pub scraped_at: i64,
    /// The crawl (or batch) that took it, if any.
    pub crawl_id: Option<String>,
    /// The fields the `json` mode read from the page (a JSON document).
    pub fields: Option<String>,
}

/// A snapshot to store.
#[derive(Debug, Clone, Copy)]
pub struct NewSnapshot<'a> {
    pub org_id: &'a str,
    pub tag: &'a str,
    pub url_key: &'a str,
    pub url: &'a str,
    pub site: &'a str,
    pub markdown: &'a str,
    pub scraped_at: i64,
    pub crawl_id: Option<&'a str>,
    pub fields: Option<&'a str>,
}

/// What a tracked scrape changes in the snapshots, owned so that it can be
/// written later in the transaction that charges the scrape (and stores
/// the answer its retries replay): a failed charge then leaves the
/// baseline as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotWrite {
    /// Store this snapshot (newer than the one stored, or none is stored).
    Put {
        org_id: String,
        tag: String,
        url_key: String,
        url: String,
        site: String,
        markdown: String,
        scraped_at: i64,
        crawl_id: Option<String>,
        fields: Option<String>,
    },
    /// Forget the snapshot (the page is gone).
    Delete {
        org_id: String,
        tag: String,
        url_key: String,
    },
}

impl SnapshotWrite {
    /// The owned form of `s`.
    pub fn put(s: &NewSnapshot<'_>) -> Self {
        SnapshotWrite::Put {
            org_id: s.org_id.into(),
            tag: s.tag.into(),
            url_key: s.url_key.into(),
            url: s.url.into(),
            site: s.site.into(),
            markdown: s.markdown.into(),
            scraped_at: s.scraped_at,
            crawl_id: s.crawl_id.map(str::to_string),
            fields: s.fields.map(str::to_string),
        }
    }
}

const PUT_SNAPSHOT: &str = "INSERT INTO change_snapshots (org_id, tag, url_key, url, site, markdown, scraped_at, crawl_id, fields) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
     ON CONFLICT (org_id, tag, url_key) DO UPDATE SET url = excluded.url, site = excluded.site, \
     markdown = excluded.markdown, scraped_at = excluded.scraped_at, crawl_id = excluded.crawl_id, \
     fields = excluded.fields \
     WHERE change_snapshots.scraped_at <= excluded.scraped_at";

const DELETE_SNAPSHOT: &str =
    "DELETE FROM change_snapshots WHERE org_id = $1 AND tag = $2 AND url_key = $3";

/// Writes `w` inside `tx`.
pub(crate) async fn write_snapshot_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    w: &SnapshotWrite,
) -> StoreResult<()> {
    match w {
        SnapshotWrite::Put {
            org_id,
            tag,
            url_key,
            url,
            site,
            markdown,
            scraped_at,
            crawl_id,
            fields,
        } => {
            sqlx::query(PUT_SNAPSHOT)
                .bind(org_id)
                .bind(tag)
                .bind(url_key)
                .bind(url)
                .bind(site)
                .bind(markdown)
                .bind(*scraped_at)
                .bind(crawl_id)
                .bind(fields)
                .execute(&mut **tx)
                .await?;
        }
        SnapshotWrite::Delete {
            org_id,
            tag,
            url_key,
        } => {
            sqlx::query(DELETE_SNAPSHOT)
                .bind(org_id)
                .bind(tag)
                .bind(url_key)
                .execute(&mut **tx)
                .await?;
        }
    }
    Ok(())
}

impl Store {
    /// Writes `w` in a transaction of its own.
    pub async fn write_change_snapshot(&self, w: &SnapshotWrite) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        write_snapshot_in(&mut tx, w).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The snapshot of `url_key` under `tag`, if the organization has one.
    pub async fn change_snapshot(
        &self,
        org_id: &str,
        tag: &str,
        url_key: &str,
    ) -> StoreResult<Option<ChangeSnapshot>> {
        let row = sqlx::query(
            "SELECT url, markdown, scraped_at, crawl_id, fields FROM change_snapshots \
             WHERE org_id = $1 AND tag = $2 AND url_key = $3",
        )
        .bind(org_id)
        .bind(tag)
        .bind(url_key)
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| {
            Ok(ChangeSnapshot {
                url: r.try_get("url")?,
                markdown: r.try_get("markdown")?,
                scraped_at: r.try_get("scraped_at")?,
                crawl_id: r.try_get("crawl_id")?,
                fields: r.try_get("fields")?,
            })
        })
        .transpose()
    }

    /// Stores `s` as the page's snapshot. An older scrape never replaces a
    /// newer one (two requests for one page finishing out of order).
    pub async fn put_change_snapshot(&self, s: &NewSnapshot<'_>) -> StoreResult<()> {
        sqlx::query(PUT_SNAPSHOT)
            .bind(s.org_id)
            .bind(s.tag)
            .bind(s.url_key)
            .bind(s.url)
            .bind(s.site)
            .bind(s.markdown)
            .bind(s.scraped_at)
            .bind(s.crawl_id)
            .bind(s.fields)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The URLs with a snapshot under `tag` on `site`, oldest snapshot
    /// first, at most `limit`.
    pub async fn change_snapshot_urls(
        &self,
        org_id: &str,
        tag: &str,
        site: &str,
        limit: i64,
    ) -> StoreResult<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT url FROM change_snapshots WHERE org_id = $1 AND tag = $2 AND site = $3 \
             ORDER BY scraped_at, url_key LIMIT $4",
        )
        .bind(org_id)
        .bind(tag)
        .bind(site)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }

    /// Forgets the snapshot of `url_key` under `tag`.
    pub async fn delete_change_snapshot(
        &self,
        org_id: &str,
        tag: &str,
        url_key: &str,
    ) -> StoreResult<()> {
        sqlx::query(DELETE_SNAPSHOT)
            .bind(org_id)
            .bind(tag)
            .bind(url_key)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// A crawl's documents counted by `changeTracking.changeStatus`.
    pub async fn crawl_change_summary(
        &self,
        crawl_id: &str,
    ) -> StoreResult<crate::types::RunSummary> {
        let mut s = crate::types::RunSummary::default();
        let mut after = 0;
        loop {
            let docs = self.crawl_documents(crawl_id, after, 500).await?;
            let Some(last) = docs.last().map(|d| d.0) else {
                break;
            };
            for (_, _, json) in &docs {
                s.pages += 1;
                let status = serde_json::from_str::<serde_json::Value>(json)
                    .ok()
                    .and_then(|d| {
                        d["changeTracking"]["changeStatus"]
                            .as_str()
                            .map(str::to_string)
                    });
                match status.as_deref() {
                    Some("new") => s.new += 1,
                    Some("same") => s.same += 1,
                    Some("changed") => s.changed += 1,
                    Some("removed") => s.removed += 1,
                    _ => {}
                }
            }
            after = last;
        }
        Ok(s)
    }

    /// Forgets snapshots older than `keep_ms` (the retention setting).
    pub async fn sweep_change_snapshots(&self, keep_ms: i64) -> StoreResult<u64> {
        Ok(
            sqlx::query("DELETE FROM change_snapshots WHERE scraped_at < $1")
                .bind(now_ms() - keep_ms)
                .execute(self.pool())
                .await?
                .rows_affected(),
        )
    }
}
