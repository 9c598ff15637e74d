//! Group commit of scraped pages: links, charges, documents, events, block
//! hashes and frontier marks in one transaction, then the next leases.

use super::blocks::{distinct_hashes, FOLD_PAGES};
use super::frontier::{Lease, NewUrl};
use super::lease::LeaseAsk;
use super::row::{CrawlRow, Tx};
use super::state::CrawlStatus;
use super::wire::page_data;
use crate::store::changes::write_snapshot_in;
use crate::store::orgs::period_of;
use crate::store::SnapshotWrite;
use crate::store::{now_ms, Bind, Store, StoreResult};
use sqlx::Row;

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
    /// Its change-tracking snapshot, written in the same transaction and
    /// only when the page is stored: a page dropped (its crawl cancelled,
    /// its lease lost) or not paid for leaves the baseline as it was, so
    /// the change it saw is reported by the page that is stored.
    pub snapshot: Option<SnapshotWrite>,
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

impl Store {
    /// Stores a scraped page: charges 1 credit when `billable`, stores the
    /// document, marks the URL done, bumps counters and appends the `page`
    /// event (data `{"id","seq","url"}`) — all in one transaction. A page the organization cannot pay
    /// for is not stored and stops the crawl's charging.
    pub async fn commit_page(
        &self,
        lease: &Lease,
        document_json: &str,
        block_hashes: &[String],
        billable: bool,
    ) -> StoreResult<PageCommit> {
        let page = PageWrite {
            lease: lease.clone(),
            document_json: document_json.to_string(),
            block_hashes: block_hashes.to_vec(),
            billable,
            links: Vec::new(),
            snapshot: None,
        };
        let mut out = self.commit_pages(std::slice::from_ref(&page)).await?;
        Ok(out.pop().unwrap_or(PageCommit::Dropped))
    }

    /// Commits several scraped pages in one transaction (group commit: the
    /// write cost of a transaction is shared). Per page, in order: its links
    /// are enqueued, it is charged when billable, its document, block hashes
    /// and `page` event are stored and its URL marked done — exactly what
    /// [`Store::commit_page`] does for one. Returns one result per page.
    pub async fn commit_pages(&self, pages: &[PageWrite]) -> StoreResult<Vec<PageCommit>> {
        Ok(self.commit_pages_and_lease(pages, None).await?.0)
    }

    /// [`Store::commit_pages`], then, in the same transaction, leases as
    /// [`Store::lease_pool_urls`] would with `ask`: a runner gets its next
    /// URLs (the links just stored among them) without a lease transaction
    /// of its own queueing behind the next commit.
    pub async fn commit_pages_and_lease(
        &self,
        pages: &[PageWrite],
        ask: Option<LeaseAsk<'_>>,
    ) -> StoreResult<(Vec<PageCommit>, Vec<Lease>)> {
        let mut results = vec![PageCommit::Dropped; pages.len()];
        if pages.is_empty() {
            return Ok((results, Vec::new()));
        }
        // Packed before the transaction: the write lock is not held for it.
        let packed: Vec<Vec<u8>> = pages
            .iter()
            .map(|p| super::documents::pack(&p.document_json))
            .collect();
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
            if crawl.state() != Some(CrawlStatus::Running) {
                continue;
            }
            // This crawl's pages, in order. Every statement below covers all
            // of them (multi-row), so a batch costs a handful of statements.
            let mine: Vec<usize> = (0..pages.len())
                .filter(|&i| pages[i].lease.crawl_id == id)
                .collect();
            // 1. Which leases are still held (by the worker that scraped them).
            let mut held = std::collections::HashSet::new();
            for part in crate::store::shaped_chunks(&mine, 64) {
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
                let data = page_data(&crawl.id, crawl.doc_seq, &pages[i].lease.url);
                docs.push((i, crawl.doc_seq, crawl.event_seq, data));
                results[i] = PageCommit::Stored {
                    seq: crawl.doc_seq,
                    charged: charge,
                };
            }
            // The writes below go in one round trip on SQLite (see Writes).
            let mut w = crate::store::Writes::new(self.backend());
            for part in crate::store::shaped_chunks(&docs, 32) {
                // Columns: crawl_id, seq, url, document (empty: packed
                // instead), document_lz4, created_at.
                let values = (0..part.len())
                    .map(|k| {
                        format!(
                            "($1, ${}, ${}, '', ${}, $2)",
                            3 + 3 * k,
                            4 + 3 * k,
                            5 + 3 * k
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut binds = vec![Bind::S(id), Bind::I(now)];
                for (i, seq, _, _) in part {
                    binds.push(Bind::I(*seq));
                    binds.push(Bind::S(&pages[*i].lease.url));
                    binds.push(Bind::B(&packed[*i]));
                }
                w.push(
                    format!("INSERT INTO crawl_documents (crawl_id, seq, url, document, document_lz4, created_at) VALUES {values}"),
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
            for part in crate::store::shaped_chunks(&stored, 64) {
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
            for part in crate::store::shaped_chunks(&rows, 32) {
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
            for (i, _, _, _) in &docs {
                if let Some(snapshot) = &pages[*i].snapshot {
                    write_snapshot_in(&mut tx, snapshot).await?;
                }
            }
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
    /// organization's credits and spend cap, then the key's budget — the
    /// order every charge and refund takes (organization row, then key row),
    /// so two of them never wait on each other's row (a deadlock on
    /// PostgreSQL). Returns the error code when they cannot pay (and changes
    /// nothing).
    async fn charge_in_tx(
        &self,
        tx: &mut Tx,
        crawl: &CrawlRow,
        period: &str,
        k: i64,
    ) -> StoreResult<Option<&'static str>> {
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
            let Some(key) = &crawl.key_id else {
                return Ok(None);
            };
            let ok = sqlx::query(
                "UPDATE api_keys SET spent = spent + $1 WHERE id = $2 AND (budget IS NULL OR spent + $1 <= budget)",
            )
            .bind(k)
            .bind(key)
            .execute(&mut **tx)
            .await?
            .rows_affected();
            if ok > 0 {
                return Ok(None);
            }
            // The key's budget is spent: give the organization its share
            // back (it was charged in this period just above).
            sqlx::query(
                "UPDATE organizations SET credits = credits + $1, period_spent = period_spent - $1 WHERE id = $2",
            )
            .bind(k)
            .bind(&crawl.org_id)
            .execute(&mut **tx)
            .await?;
            return Ok(Some("insufficient_credits"));
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
}
