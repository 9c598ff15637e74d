//! What an organization used: a log of its `/v1` requests (status and
//! error code), requests and credits per day, failures by error code, the
//! credit ledger filtered, and usage alerts (`usage.credits_low`,
//! `usage.spend_cap_reached`) queued once per crossing to its endpoints.

use super::orgs::{period_of, rfc3339};
use super::webhooks::{insert_delivery, NewDelivery};
use super::{new_id, now_ms, opt_i64, Store, StoreResult};
use serde::Serialize;
use sqlx::Row;

/// One day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;
/// How long the request log is kept.
pub const REQUEST_LOG_RETENTION_MS: i64 = 90 * DAY_MS;

/// One answered `/v1` request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    pub org_id: String,
    pub key_id: Option<String>,
    pub method: String,
    /// The route template (`/v1/crawl/{id}`).
    pub route: String,
    pub status: i64,
    /// The Error envelope's code, for failures.
    pub error_code: Option<String>,
    pub message: Option<String>,
    pub at: i64,
}

/// Requests and credits of one UTC day.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayUsage {
    /// Start of the day, unix ms.
    pub day: i64,
    pub requests: i64,
    pub credits: i64,
}

/// Failures with one error code.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureCount {
    pub code: String,
    pub count: i64,
    pub last_at: i64,
    pub last_message: String,
    pub last_route: String,
}

/// Which ledger rows to show.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LedgerFilter {
    pub operation: Option<String>,
    pub key_id: Option<String>,
    /// From this time (unix ms, inclusive).
    pub from: Option<i64>,
    /// Before this time (unix ms, exclusive).
    pub to: Option<i64>,
    pub limit: i64,
}

/// One ledger row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LedgerRow {
    pub id: String,
    pub key_id: Option<String>,
    pub key_name: Option<String>,
    pub operation: String,
    pub reserved: i64,
    pub settled: Option<i64>,
    pub state: String,
    pub created_at: i64,
}

/// An organization's usage-alert settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AlertSettings {
    /// The owner's threshold; none = 10% of the last top-up.
    pub threshold: Option<i64>,
    /// Credits of the last top-up (creation or credits added).
    pub last_topup: i64,
}

impl AlertSettings {
    /// The threshold in force.
    pub fn effective(&self) -> i64 {
        self.threshold.unwrap_or(self.last_topup / 10)
    }
}

impl Store {
    /// Records an answered request (and the key's last use, at most once a
    /// minute per key).
    pub async fn log_request(&self, r: &RequestRecord) -> StoreResult<()> {
        sqlx::query("INSERT INTO request_log (id, org_id, key_id, method, route, status, error_code, message, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)")
            .bind(new_id("rq"))
            .bind(&r.org_id)
            .bind(&r.key_id)
            .bind(&r.method)
            .bind(&r.route)
            .bind(r.status)
            .bind(&r.error_code)
            .bind(r.message.as_deref().map(|m| m.chars().take(300).collect::<String>()))
            .bind(r.at)
            .execute(self.pool())
            .await?;
        if let Some(k) = &r.key_id {
            sqlx::query("UPDATE api_keys SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)")
                .bind(r.at)
                .bind(k)
                .bind(r.at - 60_000)
                .execute(self.pool())
                .await?;
        }
        Ok(())
    }

    /// Requests and credits per UTC day for the `days` days ending today,
    /// oldest first, days without use included as zeros.
    pub async fn daily_usage(&self, org_id: &str, days: i64) -> StoreResult<Vec<DayUsage>> {
        let today = now_ms().div_euclid(DAY_MS);
        let first = today - days + 1;
        let mut out: Vec<DayUsage> = (first..=today)
            .map(|d| DayUsage {
                day: d * DAY_MS,
                requests: 0,
                credits: 0,
            })
            .collect();
        let requests = sqlx::query(
            "SELECT at / 86400000 AS d, COUNT(*) AS n FROM request_log WHERE org_id = $1 AND at >= $2 GROUP BY at / 86400000",
        )
        .bind(org_id)
        .bind(first * DAY_MS)
        .fetch_all(self.pool())
        .await?;
        for r in requests {
            let (d, n): (i64, i64) = (r.try_get("d")?, r.try_get("n")?);
            if let Some(slot) = out.get_mut((d - first) as usize) {
                slot.requests = n;
            }
        }
        let credits = sqlx::query(
            "SELECT created_at / 86400000 AS d, CAST(SUM(COALESCE(settled, reserved)) AS BIGINT) AS c FROM credit_ledger \
             WHERE org_id = $1 AND created_at >= $2 AND state <> 'released' GROUP BY created_at / 86400000",
        )
        .bind(org_id)
        .bind(first * DAY_MS)
        .fetch_all(self.pool())
        .await?;
        for r in credits {
            let d: i64 = r.try_get("d")?;
            let c = opt_i64(&r, "c")?.unwrap_or(0);
            if let Some(slot) = out.get_mut((d - first) as usize) {
                slot.credits = c;
            }
        }
        Ok(out)
    }

    /// Failed requests since `since`, by error code, most frequent first.
    pub async fn failures_by_code(
        &self,
        org_id: &str,
        since: i64,
    ) -> StoreResult<Vec<FailureCount>> {
        let rows = sqlx::query(
            "SELECT error_code, COUNT(*) AS n, MAX(at) AS last FROM request_log \
             WHERE org_id = $1 AND at >= $2 AND error_code IS NOT NULL GROUP BY error_code ORDER BY COUNT(*) DESC, error_code",
        )
        .bind(org_id)
        .bind(since)
        .fetch_all(self.pool())
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let code: String = r.try_get("error_code")?;
            let last: i64 = r.try_get("last")?;
            let example = sqlx::query(
                "SELECT message, route FROM request_log WHERE org_id = $1 AND error_code = $2 AND at = $3 LIMIT 1",
            )
            .bind(org_id)
            .bind(&code)
            .bind(last)
            .fetch_optional(self.pool())
            .await?;
            let (msg, route) = match example {
                Some(e) => (
                    e.try_get::<Option<String>, _>("message")?
                        .unwrap_or_default(),
                    e.try_get::<String, _>("route")?,
                ),
                None => (String::new(), String::new()),
            };
            out.push(FailureCount {
                code,
                count: r.try_get("n")?,
                last_at: last,
                last_message: msg,
                last_route: route,
            });
        }
        Ok(out)
    }

    /// Ledger rows matching `f`, newest first, with the key's name.
    pub async fn ledger_rows(&self, org_id: &str, f: &LedgerFilter) -> StoreResult<Vec<LedgerRow>> {
        let rows = sqlx::query(
            "SELECT l.id, l.key_id, k.name AS key_name, l.operation, l.reserved, l.settled, l.state, l.created_at \
             FROM credit_ledger l LEFT JOIN api_keys k ON k.id = l.key_id \
             WHERE l.org_id = $1 AND ($2 = '' OR l.operation = $2) AND ($3 = '' OR l.key_id = $3) \
               AND l.created_at >= $4 AND l.created_at < $5 \
             ORDER BY l.created_at DESC, l.id DESC LIMIT $6",
        )
        .bind(org_id)
        .bind(f.operation.as_deref().unwrap_or(""))
        .bind(f.key_id.as_deref().unwrap_or(""))
        .bind(f.from.unwrap_or(0))
        .bind(f.to.unwrap_or(i64::MAX))
        .bind(f.limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(LedgerRow {
                    id: r.try_get("id")?,
                    key_id: r.try_get("key_id")?,
                    key_name: r.try_get("key_name")?,
                    operation: r.try_get("operation")?,
                    reserved: r.try_get("reserved")?,
                    settled: opt_i64(r, "settled")?,
                    state: r.try_get("state")?,
                    created_at: r.try_get("created_at")?,
                })
            })
            .collect()
    }

    /// The operations that appear in an organization's ledger.
    pub async fn ledger_operations(&self, org_id: &str) -> StoreResult<Vec<String>> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT operation FROM credit_ledger WHERE org_id = $1 ORDER BY operation",
        )
        .bind(org_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Forgets request-log rows past retention.
    pub async fn sweep_request_log(&self) -> StoreResult<u64> {
        Ok(sqlx::query("DELETE FROM request_log WHERE at < $1")
            .bind(now_ms() - REQUEST_LOG_RETENTION_MS)
            .execute(self.pool())
            .await?
            .rows_affected())
    }

    /// The organization's alert threshold and last top-up.
    pub async fn alert_settings(&self, org_id: &str) -> StoreResult<AlertSettings> {
        let r =
            sqlx::query("SELECT low_credit_threshold, last_topup FROM organizations WHERE id = $1")
                .bind(org_id)
                .fetch_optional(self.pool())
                .await?
                .ok_or_else(|| super::StoreError::NotFound(format!("organization {org_id}")))?;
        Ok(AlertSettings {
            threshold: opt_i64(&r, "low_credit_threshold")?,
            last_topup: r.try_get("last_topup")?,
        })
    }

    /// Sets (or, None, resets to 10% of the last top-up) the low-credit threshold.
    pub async fn set_alert_threshold(
        &self,
        org_id: &str,
        threshold: Option<i64>,
    ) -> StoreResult<()> {
        if threshold.is_some_and(|t| t < 0) {
            return Err(super::StoreError::Invalid(
                "the threshold must be 0 or more".into(),
            ));
        }
        sqlx::query("UPDATE organizations SET low_credit_threshold = $1 WHERE id = $2")
            .bind(threshold)
            .bind(org_id)
            .execute(self.pool())
            .await?;
        self.audit(
            org_id,
            None,
            "alerts.threshold_set",
            &threshold
                .map(|t| t.to_string())
                .unwrap_or_else(|| "default".into()),
        )
        .await
    }

    /// Notes that a request was refused by the spend cap this month (the
    /// spend-cap alert then goes out even when `period_spent` is below it).
    pub async fn note_spend_cap_hit(&self, org_id: &str) -> StoreResult<()> {
        sqlx::query("UPDATE organizations SET cap_hit_period = $1 WHERE id = $2")
            .bind(period_of(now_ms()))
            .bind(org_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Queues the usage alerts that are due, each once per crossing, to
    /// every enabled endpoint of the organization, in one transaction with
    /// the flag that keeps it from going twice. Re-arms the low-credit
    /// alert of organizations back above their threshold. Returns how many
    /// alerts were raised.
    pub async fn queue_usage_alerts(&self) -> StoreResult<usize> {
        let now = now_ms();
        let period = period_of(now);
        let threshold = "COALESCE(low_credit_threshold, last_topup / 10)";
        // Re-arm: topped up above the threshold again.
        sqlx::query(&format!(
            "UPDATE organizations SET low_credit_alerted = 0 WHERE low_credit_alerted = 1 AND credits > {threshold}"
        ))
        .execute(self.pool())
        .await?;
        let low = sqlx::query(&format!(
            "SELECT id, credits, {threshold} AS threshold FROM organizations \
             WHERE deleted_at IS NULL AND low_credit_alerted = 0 AND {threshold} > 0 AND credits <= {threshold}"
        ))
        .fetch_all(self.pool())
        .await?;
        let capped = sqlx::query(
            "SELECT id, spend_cap, period_spent FROM organizations WHERE deleted_at IS NULL AND spend_cap IS NOT NULL \
             AND cap_alert_period <> $1 AND ((period = $1 AND period_spent >= spend_cap) OR cap_hit_period = $1)",
        )
        .bind(&period)
        .fetch_all(self.pool())
        .await?;
        let mut raised = 0;
        for r in low {
            let org: String = r.try_get("id")?;
            let data = serde_json::json!({
                "organizationId": org,
                "credits": r.try_get::<i64, _>("credits")?,
                "threshold": r.try_get::<i64, _>("threshold")?,
            });
            let flip = format!(
                "UPDATE organizations SET low_credit_alerted = 1 WHERE id = $1 AND low_credit_alerted = 0 AND credits <= {threshold}"
            );
            if self
                .raise_alert(&org, &flip, &[], "usage.credits_low", data, now)
                .await?
            {
                raised += 1;
            }
        }
        for r in capped {
            let org: String = r.try_get("id")?;
            let data = serde_json::json!({
                "organizationId": org,
                "spendCap": opt_i64(&r, "spend_cap")?,
                "spent": r.try_get::<i64, _>("period_spent")?,
                "period": period,
            });
            let flip = "UPDATE organizations SET cap_alert_period = $2 WHERE id = $1 AND cap_alert_period <> $2";
            if self
                .raise_alert(&org, flip, &[&period], "usage.spend_cap_reached", data, now)
                .await?
            {
                raised += 1;
            }
        }
        Ok(raised)
    }

    async fn raise_alert(
        &self,
        org_id: &str,
        flip_sql: &str,
        extra: &[&str],
        event_type: &str,
        data: serde_json::Value,
        now: i64,
    ) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let mut q = sqlx::query(flip_sql).bind(org_id);
        for e in extra {
            q = q.bind(*e);
        }
        if q.execute(&mut *tx).await?.rows_affected() == 0 {
            return Ok(false);
        }
        let event_id = new_id("evt");
        let body = serde_json::json!({
            "id": event_id,
            "type": event_type,
            "createdAt": rfc3339(now),
            "data": data,
        })
        .to_string();
        let endpoints = sqlx::query(
            "SELECT id, url FROM webhook_endpoints WHERE org_id = $1 AND disabled_at IS NULL",
        )
        .bind(org_id)
        .fetch_all(&mut *tx)
        .await?;
        for e in &endpoints {
            let d = NewDelivery {
                event_id: event_id.clone(),
                endpoint_id: Some(e.try_get("id")?),
                url: e.try_get("url")?,
                event_type: event_type.to_string(),
                body: body.clone(),
            };
            insert_delivery(&mut tx, org_id, "", &d, now).await?;
        }
        tx.commit().await?;
        self.audit(org_id, None, event_type, &data.to_string())
            .await?;
        Ok(true)
    }

    /// Queues a `webhook.test` event to one endpoint (disabled or not).
    pub async fn queue_test_event(&self, org_id: &str, endpoint_id: &str) -> StoreResult<String> {
        let e = self
            .webhook_endpoints(org_id)
            .await?
            .into_iter()
            .find(|e| e.id == endpoint_id)
            .ok_or_else(|| {
                super::StoreError::NotFound(format!("webhook endpoint {endpoint_id}"))
            })?;
        let now = now_ms();
        let event_id = new_id("evt");
        let body = serde_json::json!({
            "id": event_id,
            "type": "webhook.test",
            "createdAt": rfc3339(now),
            "data": { "organizationId": org_id, "endpointId": endpoint_id, "message": "A test event from the webdata dashboard." },
        })
        .to_string();
        let d = NewDelivery {
            event_id: event_id.clone(),
            endpoint_id: Some(e.id),
            url: e.url,
            event_type: "webhook.test".into(),
            body,
        };
        let mut tx = self.begin_write().await?;
        insert_delivery(&mut tx, org_id, "", &d, now).await?;
        tx.commit().await?;
        Ok(event_id)
    }
}
