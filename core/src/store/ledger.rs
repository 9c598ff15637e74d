//! The credits ledger: reserve the worst case before work, settle the actual
//! cost after. Every balance change is one conditional UPDATE, so concurrent
//! requests from any number of API replicas can never overdraw.

use super::orgs::period_of;
use super::{new_id, now_ms, Store, StoreResult};

/// Why a reservation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReserveError {
    /// The organization's balance is below the amount.
    InsufficientCredits { available: i64, needed: i64 },
    /// The organization's monthly spend cap would be passed.
    SpendCapReached { cap: i64, spent: i64 },
    /// A playground key has spent its own budget.
    KeyBudgetSpent { budget: i64, spent: i64 },
    /// The database failed.
    Store(String),
}

/// Credits held for one request until it settles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    pub id: String,
    pub org_id: String,
    pub key_id: Option<String>,
    pub amount: i64,
}

impl Store {
    /// Reserves `amount` credits for `operation`, checking the balance, the
    /// monthly spend cap and the key's own budget in one transaction.
    pub async fn reserve_credits(
        &self,
        id: &str,
        org_id: &str,
        key_id: Option<&str>,
        operation: &str,
        amount: i64,
    ) -> Result<Reservation, ReserveError> {
        let store_err = |e: sqlx::Error| ReserveError::Store(e.to_string());
        let amount = amount.max(0);
        let now = now_ms();
        let period = period_of(now);
        let mut tx = self
            .begin_write()
            .await
            .map_err(|e| ReserveError::Store(e.to_string()))?;
        let updated = sqlx::query(
            "UPDATE organizations SET \
               credits = credits - $1, \
               period_spent = (CASE WHEN period = $2 THEN period_spent ELSE 0 END) + $1, \
               period = $2 \
             WHERE id = $3 AND credits >= $1 \
               AND (spend_cap IS NULL OR (CASE WHEN period = $2 THEN period_spent ELSE 0 END) + $1 <= spend_cap)",
        )
        .bind(amount)
        .bind(&period)
        .bind(org_id)
        .execute(&mut *tx)
        .await
        .map_err(store_err)?
        .rows_affected();
        if updated == 0 {
            drop(tx);
            let org = self
                .get_org(org_id)
                .await
                .map_err(|e| ReserveError::Store(e.to_string()))?;
            let spent = if org.period == period {
                org.period_spent
            } else {
                0
            };
            return Err(match org.spend_cap {
                Some(cap) if org.credits >= amount && spent + amount > cap => {
                    ReserveError::SpendCapReached { cap, spent }
                }
                _ => ReserveError::InsufficientCredits {
                    available: org.credits,
                    needed: amount,
                },
            });
        }
        if let Some(key_id) = key_id {
            let ok = sqlx::query(
                "UPDATE api_keys SET spent = spent + $1 WHERE id = $2 AND (budget IS NULL OR spent + $1 <= budget)",
            )
            .bind(amount)
            .bind(key_id)
            .execute(&mut *tx)
            .await
            .map_err(store_err)?
            .rows_affected();
            if ok == 0 {
                drop(tx);
                let key = self
                    .get_key(key_id)
                    .await
                    .map_err(|e| ReserveError::Store(e.to_string()))?;
                return Err(ReserveError::KeyBudgetSpent {
                    budget: key.budget.unwrap_or(0),
                    spent: key.spent,
                });
            }
        }
        sqlx::query(
            "INSERT INTO credit_ledger (id, org_id, key_id, operation, reserved, settled, state, created_at) \
             VALUES ($1, $2, $3, $4, $5, NULL, 'reserved', $6)",
        )
        .bind(id)
        .bind(org_id)
        .bind(key_id)
        .bind(operation)
        .bind(amount)
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(store_err)?;
        tx.commit().await.map_err(store_err)?;
        Ok(Reservation {
            id: id.to_string(),
            org_id: org_id.to_string(),
            key_id: key_id.map(str::to_string),
            amount,
        })
    }

    /// Settles a reservation at `actual` (clamped to 0..=reserved) and
    /// returns the difference to the balance, the spend counter and the key.
    /// Settling twice changes nothing the second time. Returns the amount
    /// charged.
    pub async fn settle_credits(&self, res: &Reservation, actual: i64) -> StoreResult<i64> {
        self.settle_credits_answering(res, actual, None, None).await
    }

    /// Settles like [`Store::settle_credits`] and, in the same transaction,
    /// stores the idempotent answer of `answer`'s key (`org_id`, `key`): a
    /// process killed between a charge and its stored answer would make the
    /// retry run, and charge, again. Both commit or neither does; so does
    /// `snapshot`, the change-tracking snapshot the scrape takes (written
    /// only when this settles the reservation: one settled already by the
    /// janitor keeps the previous baseline, and the change is reported
    /// again next time).
    pub async fn settle_credits_answering(
        &self,
        res: &Reservation,
        actual: i64,
        answer: Option<(&str, &str, &super::StoredResponse)>,
        snapshot: Option<&super::SnapshotWrite>,
    ) -> StoreResult<i64> {
        let actual = actual.clamp(0, res.amount);
        let refund = res.amount - actual;
        let mut tx = self.begin_write().await?;
        if let Some((org_id, key, response)) = answer {
            super::idempotency::complete_in(&mut tx, org_id, key, response).await?;
        }
        let changed = sqlx::query(
            "UPDATE credit_ledger SET settled = $1, state = $2, settled_at = $3 WHERE id = $4 AND state = 'reserved'",
        )
        .bind(actual)
        .bind(if actual == 0 { "released" } else { "settled" })
        .bind(now_ms())
        .bind(&res.id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if changed == 0 {
            return Ok(self.ledger_charge(&res.id).await?.unwrap_or(0));
        }
        if let Some(w) = snapshot {
            super::changes::write_snapshot_in(&mut tx, w).await?;
        }
        if refund > 0 {
            sqlx::query(
                "UPDATE organizations SET credits = credits + $1, \
                 period_spent = CASE WHEN period_spent >= $1 THEN period_spent - $1 ELSE 0 END WHERE id = $2",
            )
            .bind(refund)
            .bind(&res.org_id)
            .execute(&mut *tx)
            .await?;
            if let Some(key_id) = &res.key_id {
                sqlx::query(
                    "UPDATE api_keys SET spent = CASE WHEN spent >= $1 THEN spent - $1 ELSE 0 END WHERE id = $2",
                )
                .bind(refund)
                .bind(key_id)
                .execute(&mut *tx)
                .await?;
            }
        }
        tx.commit().await?;
        Ok(actual)
    }

    /// What a ledger entry finally charged (None while reserved or unknown).
    pub async fn ledger_charge(&self, id: &str) -> StoreResult<Option<i64>> {
        let v: Option<Option<i64>> =
            sqlx::query_scalar("SELECT settled FROM credit_ledger WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        Ok(v.flatten())
    }

    /// Ledger entries of an organization, newest first (for the admin API).
    pub async fn ledger_entries(
        &self,
        org_id: &str,
        limit: i64,
    ) -> StoreResult<Vec<serde_json::Value>> {
        use sqlx::Row;
        let rows = sqlx::query(
            "SELECT id, key_id, operation, reserved, settled, state, created_at FROM credit_ledger WHERE org_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
        )
        .bind(org_id)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(serde_json::json!({
                    "id": r.try_get::<String, _>("id")?,
                    "keyId": r.try_get::<Option<String>, _>("key_id")?,
                    "operation": r.try_get::<String, _>("operation")?,
                    "reserved": r.try_get::<i64, _>("reserved")?,
                    "settled": r.try_get::<Option<i64>, _>("settled")?,
                    "state": r.try_get::<String, _>("state")?,
                    "createdAt": r.try_get::<i64, _>("created_at")?,
                }))
            })
            .collect()
    }

    /// Releases reservations older than `older_than_ms` that never settled
    /// (a crashed replica): they are settled at 0.
    pub async fn release_stale_reservations(&self, older_than_ms: i64) -> StoreResult<u64> {
        use sqlx::Row;
        let cutoff = now_ms() - older_than_ms;
        let rows = sqlx::query(
            "SELECT id, org_id, key_id, reserved FROM credit_ledger WHERE state = 'reserved' AND created_at < $1",
        )
        .bind(cutoff)
        .fetch_all(self.pool())
        .await?;
        let mut n = 0;
        for r in rows {
            let res = Reservation {
                id: r.try_get("id")?,
                org_id: r.try_get("org_id")?,
                key_id: r.try_get("key_id")?,
                amount: r.try_get("reserved")?,
            };
            self.settle_credits(&res, 0).await?;
            n += 1;
        }
        Ok(n)
    }

    /// A fresh ledger id.
    pub fn new_ledger_id() -> String {
        new_id("led")
    }
}
