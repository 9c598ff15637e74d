//! Rate and concurrency limits, kept in the store so every API replica
//! shares them. Rates use fixed one-minute windows; concurrency uses
//! expiring in-flight rows so a crashed replica cannot hold slots forever.

use super::{new_id, now_ms, Backend, Store, StoreResult};

/// Length of a rate window.
pub const WINDOW_MS: i64 = 60_000;

/// The outcome of counting one request against a per-minute limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateDecision {
    pub allowed: bool,
    /// Requests allowed per window.
    pub limit: i64,
    /// Requests left in this window after this one.
    pub remaining: i64,
    /// Seconds until the window refills (at least 1).
    pub reset_secs: i64,
}

/// In-flight slots held by one request; release them when it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcurrencySlot {
    pub ids: Vec<String>,
}

impl Store {
    /// Counts one request for `subject` in the current minute.
    pub async fn hit_rate(&self, subject: &str, limit: i64) -> StoreResult<RateDecision> {
        let now = now_ms();
        let window = now - now.rem_euclid(WINDOW_MS);
        let hits: i64 = sqlx::query_scalar(
            "INSERT INTO rate_windows (subject, window_start, hits) VALUES ($1, $2, 1) \
             ON CONFLICT (subject, window_start) DO UPDATE SET hits = rate_windows.hits + 1 \
             RETURNING hits",
        )
        .bind(subject)
        .bind(window)
        .fetch_one(self.pool())
        .await?;
        let reset_ms = window + WINDOW_MS - now;
        Ok(RateDecision {
            allowed: hits <= limit,
            limit,
            remaining: (limit - hits).max(0),
            reset_secs: ((reset_ms + 999) / 1000).max(1),
        })
    }

    /// Takes one in-flight slot for each `(subject, limit)`, all or none.
    /// Returns `Ok(None)` naming nothing when any subject is at its limit;
    /// the slots expire after `ttl_ms` if never released.
    pub async fn acquire_slots(
        &self,
        subjects: &[(String, i64)],
        ttl_ms: i64,
    ) -> StoreResult<Option<ConcurrencySlot>> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        for (subject, limit) in subjects {
            if self.backend() == Backend::Postgres {
                sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext($1))) AS held")
                    .bind(subject)
                    .execute(&mut *tx)
                    .await?;
            }
            let used: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM inflight WHERE subject = $1 AND expires_at > $2",
            )
            .bind(subject)
            .bind(now)
            .fetch_one(&mut *tx)
            .await?;
            if used >= *limit {
                return Ok(None);
            }
        }
        let mut ids = Vec::with_capacity(subjects.len());
        for (subject, _) in subjects {
            let id = new_id("slot");
            sqlx::query("INSERT INTO inflight (id, subject, expires_at) VALUES ($1, $2, $3)")
                .bind(&id)
                .bind(subject)
                .bind(now + ttl_ms)
                .execute(&mut *tx)
                .await?;
            ids.push(id);
        }
        tx.commit().await?;
        Ok(Some(ConcurrencySlot { ids }))
    }

    /// Gives slots back.
    pub async fn release_slots(&self, slot: &ConcurrencySlot) -> StoreResult<()> {
        for id in &slot.ids {
            sqlx::query("DELETE FROM inflight WHERE id = $1")
                .bind(id)
                .execute(self.pool())
                .await?;
        }
        Ok(())
    }

    /// Deletes expired slots, old rate windows and idempotency records
    /// past their replay window. Run periodically.
    pub async fn sweep_limits(&self, idempotency_ttl_ms: i64) -> StoreResult<()> {
        let now = now_ms();
        sqlx::query("DELETE FROM inflight WHERE expires_at <= $1")
            .bind(now)
            .execute(self.pool())
            .await?;
        sqlx::query("DELETE FROM rate_windows WHERE window_start < $1")
            .bind(now - 2 * WINDOW_MS)
            .execute(self.pool())
            .await?;
        sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
            .bind(now - idempotency_ttl_ms)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
