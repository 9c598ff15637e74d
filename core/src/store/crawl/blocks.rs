//! Boilerplate statistics: per-page block hashes, folded into per-crawl
//! counts, and the blocks frequent enough to strip.

use super::row::Tx;
use crate::store::{Store, StoreResult};
use sqlx::Row;
use std::collections::HashMap;

/// Pages whose block hashes wait in `crawl_page_blocks` before they are
/// counted into `crawl_blocks` (see `fold_blocks_in_tx`). Measured on the
/// 1,167-page postgresql-doc-15 crawl: an upsert per block at every commit
/// held the crawl to 1,550–1,580 pages/s (the counters' index pages were
/// rewritten on every commit), no block counting at all ran at 3,080–3,220;
/// a fold of 512 pages (11,000–18,000 distinct blocks) took 20–34 ms.
pub(super) const FOLD_PAGES: i64 = 512;

/// A page's distinct block hashes as one space-separated string (a hash is
/// hex; any whitespace inside one is dropped so it stays one token).
pub(super) fn distinct_hashes(hashes: &[String]) -> String {
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

impl Store {
    /// Folds a crawl's unfolded block counts (see `fold_blocks_in_tx`).
    pub(super) async fn fold_blocks(&self, id: &str) -> StoreResult<()> {
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
    pub(super) async fn fold_blocks_in_tx(tx: &mut Tx, crawl_id: &str) -> StoreResult<()> {
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
        for part in crate::store::shaped_chunks(&order, 64) {
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

    /// [`Store::frequent_blocks`] restricted to the hashes `among`: which of
    /// them are on at least `min_pages` pages, sorted. A reader stripping a
    /// few documents asks only about their own blocks, so it looks up those
    /// counts (by key) instead of reading every block of the crawl that
    /// might be frequent; a live crawl's status call, polled several times a
    /// second, read tens of thousands of rows each time. Same snapshot rule
    /// as `frequent_blocks`: one statement.
    pub async fn frequent_blocks_among(
        &self,
        crawl_id: &str,
        min_pages: i64,
        among: &[String],
    ) -> StoreResult<Vec<String>> {
        if among.is_empty() {
            return Ok(Vec::new());
        }
        let listed = match self.backend() {
            crate::store::Backend::Sqlite => "SELECT value FROM json_each($2)",
            crate::store::Backend::Postgres => {
                "SELECT jsonb_array_elements_text(CAST($2 AS jsonb))"
            }
        };
        let sql = format!(
            "SELECT CAST(0 AS BIGINT) AS tail, hash AS v, pages FROM crawl_blocks \
             WHERE crawl_id = $1 AND hash IN ({listed}) \
             UNION ALL \
             SELECT CAST(1 AS BIGINT), hashes, CAST(0 AS BIGINT) FROM crawl_page_blocks WHERE crawl_id = $1"
        );
        let rows = sqlx::query(&sql)
            .bind(crawl_id)
            .bind(serde_json::to_string(among).unwrap_or_else(|_| "[]".into()))
            .fetch_all(self.pool())
            .await?;
        let mut counts: HashMap<&str, i64> = among.iter().map(|h| (h.as_str(), 0)).collect();
        add_counts(&rows, |h, n| {
            if let Some(c) = counts.get_mut(h) {
                *c += n;
            }
        })?;
        Ok(at_least(counts, min_pages))
    }

    /// Hashes of blocks seen on at least `min_pages` pages of a crawl: the
    /// counts in `crawl_blocks` plus the pages not yet folded into them, read
    /// in one statement (one snapshot, so a fold in between is not seen
    /// twice or missed). A block whose count is below `min_pages` minus the
    /// unfolded pages cannot reach `min_pages` (that bound is counted once,
    /// in `bound`), so only the others are read:
    /// through the count index, which holds the blocks seen on two pages or
    /// more (migration 0018). Blocks seen once are read only when that bound
    /// is 1 or less; their branch's `LIMIT` is 0 otherwise, which both
    /// databases decide before reading a row (a condition in its `WHERE`
    /// made SQLite scan every block of the crawl to test it).
    pub async fn frequent_blocks(
        &self,
        crawl_id: &str,
        min_pages: i64,
    ) -> StoreResult<Vec<String>> {
        let rows = sqlx::query(
            "WITH bound AS (SELECT $2 - COUNT(*) AS n FROM crawl_page_blocks WHERE crawl_id = $1) \
             SELECT CAST(0 AS BIGINT) AS tail, hash AS v, pages FROM crawl_blocks \
             WHERE crawl_id = $1 AND pages >= 2 AND pages >= (SELECT n FROM bound) \
             UNION ALL \
             SELECT * FROM (SELECT CAST(0 AS BIGINT), hash, pages FROM crawl_blocks \
               WHERE crawl_id = $1 AND pages < 2 \
               LIMIT CASE WHEN (SELECT n FROM bound) <= 1 THEN 9223372036854775807 ELSE 0 END) AS seen_once \
             UNION ALL \
             SELECT CAST(1 AS BIGINT), hashes, CAST(0 AS BIGINT) FROM crawl_page_blocks WHERE crawl_id = $1",
        )
        .bind(crawl_id)
        .bind(min_pages)
        .fetch_all(self.pool())
        .await?;
        let mut counts: HashMap<String, i64> = HashMap::new();
        add_counts(&rows, |h, n| *counts.entry(h.to_string()).or_insert(0) += n)?;
        Ok(at_least(counts, min_pages))
    }
}

/// Feeds `add` the counts in rows of the block readers' shape (`tail`, `v`,
/// `pages`): a folded block's count, or 1 for each hash of an unfolded page.
fn add_counts(rows: &[sqlx::any::AnyRow], mut add: impl FnMut(&str, i64)) -> StoreResult<()> {
    for r in rows {
        let tail: i64 = r.try_get("tail")?;
        let v: String = r.try_get("v")?;
        if tail == 0 {
            add(&v, r.try_get("pages")?);
        } else {
            for h in v.split_ascii_whitespace() {
                add(h, 1);
            }
        }
    }
    Ok(())
}

/// The hashes counted on at least `min_pages` pages, sorted.
fn at_least<K: AsRef<str>>(counts: HashMap<K, i64>, min_pages: i64) -> Vec<String> {
    let mut out: Vec<String> = counts
        .into_iter()
        .filter(|(_, n)| *n >= min_pages)
        .map(|(h, _)| h.as_ref().to_string())
        .collect();
    out.sort_unstable();
    out
}
