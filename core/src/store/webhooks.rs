//! Webhooks in the store: organization endpoints, signing-secret rotation,
//! and the outbox of deliveries (retried on a schedule, dead letters kept).

use super::{new_id, now_ms, opt_i64, Store, StoreError, StoreResult};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

/// An organization's webhook endpoint (dashboard-registered).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEndpoint {
    pub id: String,
    pub org_id: String,
    pub url: String,
    /// The endpoint's own signing secret.
    pub secret: String,
    pub created_at: i64,
    /// When the endpoint was disabled (it then receives nothing).
    pub disabled_at: Option<i64>,
}

/// A delivery to make.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDelivery {
    pub event_id: String,
    pub endpoint_id: Option<String>,
    pub url: String,
    pub event_type: String,
    pub body: String,
}

/// Where a webhook delivery stands (stored and shown by these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// Waiting for its first or next attempt.
    Pending,
    /// The endpoint answered 2xx.
    Delivered,
    /// The endpoint answered 410: no more attempts.
    Gone,
    /// Every attempt failed: a dead letter (re-drivable).
    Dead,
}

impl DeliveryState {
    /// Every state, in the order a delivery can reach them.
    pub const ALL: [DeliveryState; 4] = [
        DeliveryState::Pending,
        DeliveryState::Delivered,
        DeliveryState::Gone,
        DeliveryState::Dead,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Gone => "gone",
            DeliveryState::Dead => "dead",
        }
    }

    /// The state with this stored name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// A delivery as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub id: String,
    pub event_id: String,
    pub org_id: String,
    pub crawl_id: String,
    /// None: the crawl's own webhook (signed with the organization's secret).
    pub endpoint_id: Option<String>,
    pub url: String,
    pub event_type: String,
    #[serde(skip)]
    pub body: String,
    pub attempts: i64,
    pub next_attempt_at: i64,
    /// Where the delivery stands.
    pub state: DeliveryState,
    pub last_status: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: i64,
}

/// What one attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptOutcome {
    Delivered {
        status: i64,
    },
    Gone,
    Retry {
        status: Option<i64>,
        error: String,
        next_at: i64,
    },
    Dead {
        status: Option<i64>,
        error: String,
    },
}

const DELIVERY_COLUMNS: &str = "id, event_id, org_id, crawl_id, endpoint_id, url, event_type, body, attempts, next_attempt_at, state, last_status, last_error, created_at";

fn delivery_from_row(r: &AnyRow) -> StoreResult<Delivery> {
    Ok(Delivery {
        id: r.try_get("id")?,
        event_id: r.try_get("event_id")?,
        org_id: r.try_get("org_id")?,
        crawl_id: r.try_get("crawl_id")?,
        endpoint_id: r.try_get("endpoint_id")?,
        url: r.try_get("url")?,
        event_type: r.try_get("event_type")?,
        body: r.try_get("body")?,
        attempts: r.try_get("attempts")?,
        next_attempt_at: r.try_get("next_attempt_at")?,
        state: {
            let name: String = r.try_get("state")?;
            DeliveryState::parse(&name).ok_or_else(|| {
                StoreError::Invalid(format!("unknown webhook delivery state `{name}`"))
            })?
        },
        last_status: opt_i64(r, "last_status")?,
        last_error: r.try_get("last_error")?,
        created_at: r.try_get("created_at")?,
    })
}

fn random_secret() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("whsec_{}", hex::encode(bytes))
}

/// Inserts a pending delivery (`crawl_id` empty for usage alerts and test
/// events).
pub(super) async fn insert_delivery(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    org_id: &str,
    crawl_id: &str,
    d: &NewDelivery,
    now: i64,
) -> StoreResult<()> {
    sqlx::query(
        "INSERT INTO webhook_deliveries (id, event_id, org_id, crawl_id, endpoint_id, url, event_type, body, attempts, next_attempt_at, state, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, 'pending', $9)",
    )
    .bind(new_id("dlv"))
    .bind(&d.event_id)
    .bind(org_id)
    .bind(crawl_id)
    .bind(&d.endpoint_id)
    .bind(&d.url)
    .bind(&d.event_type)
    .bind(&d.body)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl Store {
    /// Registers an endpoint with a fresh secret.
    pub async fn create_webhook_endpoint(
        &self,
        org_id: &str,
        url: &str,
    ) -> StoreResult<WebhookEndpoint> {
        self.get_org(org_id).await?;
        let e = WebhookEndpoint {
            id: new_id("whe"),
            org_id: org_id.to_string(),
            url: url.to_string(),
            secret: random_secret(),
            created_at: now_ms(),
            disabled_at: None,
        };
        sqlx::query("INSERT INTO webhook_endpoints (id, org_id, url, secret, created_at) VALUES ($1, $2, $3, $4, $5)")
            .bind(&e.id)
            .bind(&e.org_id)
            .bind(&e.url)
            .bind(&e.secret)
            .bind(e.created_at)
            .execute(self.pool())
            .await?;
        self.audit(org_id, None, "webhook_endpoint.created", url)
            .await?;
        Ok(e)
    }

    /// The organization's endpoints.
    pub async fn webhook_endpoints(&self, org_id: &str) -> StoreResult<Vec<WebhookEndpoint>> {
        let rows = sqlx::query("SELECT id, org_id, url, secret, created_at, disabled_at FROM webhook_endpoints WHERE org_id = $1 ORDER BY created_at, id")
            .bind(org_id)
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(WebhookEndpoint {
                    id: r.try_get("id")?,
                    org_id: r.try_get("org_id")?,
                    url: r.try_get("url")?,
                    secret: r.try_get("secret")?,
                    created_at: r.try_get("created_at")?,
                    disabled_at: opt_i64(r, "disabled_at")?,
                })
            })
            .collect()
    }

    /// Disables (it receives nothing) or enables an endpoint.
    pub async fn set_endpoint_disabled(
        &self,
        org_id: &str,
        id: &str,
        disabled: bool,
    ) -> StoreResult<()> {
        let n = sqlx::query(
            "UPDATE webhook_endpoints SET disabled_at = $1 WHERE org_id = $2 AND id = $3",
        )
        .bind(disabled.then(now_ms))
        .bind(org_id)
        .bind(id)
        .execute(self.pool())
        .await?
        .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound(format!("webhook endpoint {id}")));
        }
        self.audit(
            org_id,
            None,
            if disabled {
                "webhook_endpoint.disabled"
            } else {
                "webhook_endpoint.enabled"
            },
            id,
        )
        .await
    }

    /// Removes an endpoint.
    pub async fn delete_webhook_endpoint(&self, org_id: &str, id: &str) -> StoreResult<()> {
        let n = sqlx::query("DELETE FROM webhook_endpoints WHERE org_id = $1 AND id = $2")
            .bind(org_id)
            .bind(id)
            .execute(self.pool())
            .await?
            .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound(format!("webhook endpoint {id}")));
        }
        self.audit(org_id, None, "webhook_endpoint.deleted", id)
            .await
    }

    /// The secrets an organization's crawl webhooks are signed with: the
    /// current one, and the previous one while its overlap lasts.
    pub async fn signing_secrets(&self, org_id: &str) -> StoreResult<Vec<String>> {
        let row = sqlx::query("SELECT webhook_secret, previous_webhook_secret, previous_secret_until FROM organizations WHERE id = $1")
            .bind(org_id)
            .fetch_optional(self.pool())
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("organization {org_id}")))?;
        let mut out = vec![row.try_get::<String, _>("webhook_secret")?];
        let prev: Option<String> = row.try_get("previous_webhook_secret")?;
        let until = opt_i64(&row, "previous_secret_until")?;
        if let (Some(p), Some(u)) = (prev, until) {
            if u > now_ms() {
                out.push(p);
            }
        }
        Ok(out)
    }

    /// A new signing secret; the old one keeps signing (as a second `v1`)
    /// for `overlap_ms`.
    pub async fn rotate_webhook_secret(
        &self,
        org_id: &str,
        overlap_ms: i64,
    ) -> StoreResult<String> {
        let current = self.webhook_secret(org_id).await?;
        let new = random_secret();
        sqlx::query("UPDATE organizations SET webhook_secret = $1, previous_webhook_secret = $2, previous_secret_until = $3 WHERE id = $4")
            .bind(&new)
            .bind(&current)
            .bind(now_ms() + overlap_ms.max(0))
            .bind(org_id)
            .execute(self.pool())
            .await?;
        self.audit(org_id, None, "webhook_secret.rotated", "")
            .await?;
        Ok(new)
    }

    /// Crawls with events not yet turned into deliveries.
    pub async fn crawls_with_unsent_events(&self, limit: i64) -> StoreResult<Vec<(String, i64)>> {
        let rows = sqlx::query("SELECT id, webhook_seq FROM crawls WHERE event_seq > webhook_seq ORDER BY updated_at LIMIT $1")
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("webhook_seq")?)))
            .collect()
    }

    /// Inserts deliveries for a crawl's events up to `upto_seq`, moving its
    /// outbox cursor from `from_seq` in the same transaction. False when
    /// another dispatcher already did it.
    pub async fn enqueue_deliveries(
        &self,
        org_id: &str,
        crawl_id: &str,
        from_seq: i64,
        upto_seq: i64,
        deliveries: &[NewDelivery],
    ) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let moved =
            sqlx::query("UPDATE crawls SET webhook_seq = $1 WHERE id = $2 AND webhook_seq = $3")
                .bind(upto_seq)
                .bind(crawl_id)
                .bind(from_seq)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if moved == 0 {
            return Ok(false);
        }
        let now = now_ms();
        for d in deliveries {
            insert_delivery(&mut tx, org_id, crawl_id, d, now).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Leases up to `n` due deliveries for `lease_ms`.
    pub async fn lease_deliveries(&self, n: i64, lease_ms: i64) -> StoreResult<Vec<Delivery>> {
        let now = now_ms();
        let skip = match self.backend() {
            super::Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            super::Backend::Sqlite => "",
        };
        let mut tx = self.begin_write().await?;
        let rows = sqlx::query(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= $1 \
             AND (lease_until IS NULL OR lease_until < $1) ORDER BY next_attempt_at, created_at LIMIT $2{skip}"
        ))
        .bind(now)
        .bind(n)
        .fetch_all(&mut *tx)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let d = delivery_from_row(r)?;
            sqlx::query("UPDATE webhook_deliveries SET lease_until = $1 WHERE id = $2")
                .bind(now + lease_ms)
                .bind(&d.id)
                .execute(&mut *tx)
                .await?;
            out.push(d);
        }
        tx.commit().await?;
        Ok(out)
    }

    /// Records an attempt.
    pub async fn record_attempt(&self, id: &str, outcome: &AttemptOutcome) -> StoreResult<()> {
        let now = now_ms();
        let (state, status, error, next, finished): (
            DeliveryState,
            Option<i64>,
            Option<&str>,
            Option<i64>,
            Option<i64>,
        ) = match outcome {
            AttemptOutcome::Delivered { status } => (
                DeliveryState::Delivered,
                Some(*status),
                None,
                None,
                Some(now),
            ),
            AttemptOutcome::Gone => (DeliveryState::Gone, Some(410), None, None, Some(now)),
            AttemptOutcome::Retry {
                status,
                error,
                next_at,
            } => (
                DeliveryState::Pending,
                *status,
                Some(error),
                Some(*next_at),
                None,
            ),
            AttemptOutcome::Dead { status, error } => {
                (DeliveryState::Dead, *status, Some(error), None, Some(now))
            }
        };
        sqlx::query(
            "UPDATE webhook_deliveries SET attempts = attempts + 1, state = $1, last_status = $2, last_error = $3, \
             next_attempt_at = COALESCE($4, next_attempt_at), lease_until = NULL, finished_at = $5 WHERE id = $6",
        )
        .bind(state.as_str())
        .bind(status)
        .bind(error)
        .bind(next)
        .bind(finished)
        .bind(id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Deliveries of an organization in a state (newest first).
    pub async fn deliveries(
        &self,
        org_id: &str,
        state: Option<DeliveryState>,
        limit: i64,
    ) -> StoreResult<Vec<Delivery>> {
        let rows = sqlx::query(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE org_id = $1 AND ($2 = '' OR state = $2) ORDER BY created_at DESC, id DESC LIMIT $3"
        ))
        .bind(org_id)
        .bind(state.map(DeliveryState::as_str).unwrap_or(""))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(delivery_from_row).collect()
    }

    /// Sends a dead (or gone) delivery again: pending, attempts from zero.
    pub async fn redrive_delivery(&self, org_id: &str, id: &str) -> StoreResult<()> {
        let n = sqlx::query(
            "UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, lease_until = NULL, finished_at = NULL \
             WHERE id = $2 AND org_id = $3 AND state IN ('dead', 'gone')",
        )
        .bind(now_ms())
        .bind(id)
        .bind(org_id)
        .execute(self.pool())
        .await?
        .rows_affected();
        if n == 0 {
            return Err(StoreError::NotFound(format!("dead delivery {id}")));
        }
        Ok(())
    }

    /// Secret of one endpoint.
    pub async fn endpoint_secret(&self, id: &str) -> StoreResult<Option<String>> {
        Ok(
            sqlx::query_scalar("SELECT secret FROM webhook_endpoints WHERE id = $1")
                .bind(id)
                .fetch_optional(self.pool())
                .await?,
        )
    }
}

#[cfg(test)]
mod delivery_state_tests {
    use super::DeliveryState;

    #[test]
    fn delivery_states_keep_their_stored_and_wire_names() {
        let names: Vec<&str> = DeliveryState::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, ["pending", "delivered", "gone", "dead"]);
        for s in DeliveryState::ALL {
            assert_eq!(DeliveryState::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).ok(),
                Some(serde_json::json!(s.as_str()))
            );
        }
        assert_eq!(DeliveryState::parse("weird"), None);
    }
}
