//! Idempotency keys for POST /v1/scrape and /v1/crawl: the first request
//! with a key runs; repeats within 24 hours replay its stored answer.

use super::{now_ms, Store, StoreResult};
use sqlx::Row;

/// How long a key replays its first answer.
pub const REPLAY_WINDOW_MS: i64 = 24 * 60 * 60 * 1000;
/// A `running` record older than this belongs to a request that died with
/// its replica; a new request with the key may take it over.
pub const ABANDONED_AFTER_MS: i64 = 5 * 60 * 1000;

/// A stored answer to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub body: String,
}

/// What to do with a request that carries an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyBegin {
    /// First use: run the request, then `complete` or `abandon` the key.
    Proceed,
    /// The same request already finished: answer with this.
    Replay(StoredResponse),
    /// The first request with this key is still running.
    InProgress,
    /// The key was used with a different request.
    Mismatch,
}

impl Store {
    /// Claims `key` for a request whose canonical hash is `request_hash`.
    pub async fn idempotency_begin(
        &self,
        org_id: &str,
        key: &str,
        request_hash: &str,
    ) -> StoreResult<IdempotencyBegin> {
        self.idempotency_begin_within(org_id, key, request_hash, ABANDONED_AFTER_MS)
            .await
    }

    /// Like [`Store::idempotency_begin`], with a `running` record older than
    /// `abandoned_after_ms` taken as abandoned: a replica that bounds every
    /// request by a timeout passes that timeout (plus a margin), so a retry
    /// after a crash runs again once no live request can still hold the key.
    pub async fn idempotency_begin_within(
        &self,
        org_id: &str,
        key: &str,
        request_hash: &str,
        abandoned_after_ms: i64,
    ) -> StoreResult<IdempotencyBegin> {
        let now = now_ms();
        // Expired or abandoned records make way for the new request.
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE org_id = $1 AND idem_key = $2 \
             AND (created_at < $3 OR (state = 'running' AND created_at < $4))",
        )
        .bind(org_id)
        .bind(key)
        .bind(now - REPLAY_WINDOW_MS)
        .bind(now - abandoned_after_ms)
        .execute(self.pool())
        .await?;
        let inserted = sqlx::query(
            "INSERT INTO idempotency_keys (org_id, idem_key, request_hash, state, created_at) \
             VALUES ($1, $2, $3, 'running', $4) ON CONFLICT (org_id, idem_key) DO NOTHING",
        )
        .bind(org_id)
        .bind(key)
        .bind(request_hash)
        .bind(now)
        .execute(self.pool())
        .await?
        .rows_affected();
        if inserted == 1 {
            return Ok(IdempotencyBegin::Proceed);
        }
        let row = sqlx::query(
            "SELECT request_hash, state, status, body FROM idempotency_keys WHERE org_id = $1 AND idem_key = $2",
        )
        .bind(org_id)
        .bind(key)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            // Deleted between our insert and read: the other request failed.
            return Box::pin(self.idempotency_begin_within(
                org_id,
                key,
                request_hash,
                abandoned_after_ms,
            ))
            .await;
        };
        let hash: String = row.try_get("request_hash")?;
        let state: String = row.try_get("state")?;
        if hash != request_hash {
            return Ok(IdempotencyBegin::Mismatch);
        }
        if state != "done" {
            return Ok(IdempotencyBegin::InProgress);
        }
        let status: Option<i64> = row.try_get("status")?;
        let body: Option<String> = row.try_get("body")?;
        Ok(IdempotencyBegin::Replay(StoredResponse {
            status: status.unwrap_or(200) as u16,
            body: body.unwrap_or_default(),
        }))
    }

    /// Stores the answer that later repeats replay.
    pub async fn idempotency_complete(
        &self,
        org_id: &str,
        key: &str,
        response: &StoredResponse,
    ) -> StoreResult<()> {
        let mut tx = self.begin_write().await?;
        complete_in(&mut tx, org_id, key, response).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Forgets a key whose request failed, so a retry runs again.
    pub async fn idempotency_abandon(&self, org_id: &str, key: &str) -> StoreResult<()> {
        sqlx::query("DELETE FROM idempotency_keys WHERE org_id = $1 AND idem_key = $2 AND state = 'running'")
            .bind(org_id)
            .bind(key)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

/// Marks `key` done with `response`, inside the caller's write transaction.
pub(crate) async fn complete_in(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    org_id: &str,
    key: &str,
    response: &StoredResponse,
) -> StoreResult<()> {
    sqlx::query(
        "UPDATE idempotency_keys SET state = 'done', status = $1, body = $2 WHERE org_id = $3 AND idem_key = $4",
    )
    .bind(response.status as i64)
    .bind(&response.body)
    .bind(org_id)
    .bind(key)
    .execute(&mut **tx)
    .await?;
    Ok(())
}
