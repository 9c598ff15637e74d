//! Organizations: credit balance, spend cap, plan limits, webhook secret.

use super::{new_id, now_ms, opt_i64, Store, StoreError, StoreResult};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

/// Default requests per minute for a new organization's plan.
pub const DEFAULT_RATE_LIMIT_PER_MINUTE: i64 = 600;
/// Default concurrent requests for a new organization's plan.
pub const DEFAULT_CONCURRENCY_LIMIT: i64 = 20;

/// An organization as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    pub id: String,
    pub name: String,
    pub credits: i64,
    /// Credits the organization may spend per calendar month (UTC); none = no cap.
    pub spend_cap: Option<i64>,
    /// The month (`YYYY-MM`) `period_spent` counts.
    pub period: String,
    pub period_spent: i64,
    pub rate_limit_per_minute: i64,
    pub concurrency_limit: i64,
    pub created_at: i64,
}

/// What creating an organization takes.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewOrganization {
    pub name: String,
    #[serde(default)]
    pub credits: i64,
    #[serde(default)]
    pub spend_cap: Option<i64>,
    #[serde(default)]
    pub rate_limit_per_minute: Option<i64>,
    #[serde(default)]
    pub concurrency_limit: Option<i64>,
}

/// A partial update of an organization; absent fields stay as they are.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OrgUpdate {
    #[serde(default)]
    pub name: Option<String>,
    /// Sets the balance.
    #[serde(default)]
    pub credits: Option<i64>,
    /// Adds to (or, negative, takes from) the balance.
    #[serde(default)]
    pub add_credits: Option<i64>,
    /// `Some(None)` (JSON null) removes the cap.
    #[serde(default, with = "double_option")]
    pub spend_cap: Option<Option<i64>>,
    #[serde(default)]
    pub rate_limit_per_minute: Option<i64>,
    #[serde(default)]
    pub concurrency_limit: Option<i64>,
}

mod double_option {
    use serde::{Deserialize, Deserializer};
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<i64>>, D::Error> {
        Option::<i64>::deserialize(d).map(Some)
    }
}

tokio::task_local! {
    static ACTOR: String;
}

/// Runs `fut` with `actor` (a person's e-mail) recorded on every audit
/// record it writes; outside it records have no actor (admin API, CLI).
pub async fn with_actor<F: std::future::Future>(actor: String, fut: F) -> F::Output {
    ACTOR.scope(actor, fut).await
}

/// The person on whose behalf the store is writing (see [`with_actor`]).
pub(crate) fn current_actor() -> Option<String> {
    ACTOR.try_with(|a| a.clone()).ok()
}

/// The current billing month, `YYYY-MM`, for a unix-ms time.
pub fn period_of(ms: i64) -> String {
    utc(ms).strftime("%Y-%m").to_string()
}

/// The instant `ms` after the epoch (clamped to the range jiff supports).
fn utc(ms: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_millisecond(ms).unwrap_or(if ms < 0 {
        jiff::Timestamp::MIN
    } else {
        jiff::Timestamp::MAX
    })
}

fn random_secret(prefix: &str) -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 24];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", hex::encode(bytes))
}

const ORG_COLUMNS: &str = "id, name, credits, spend_cap, period, period_spent, rate_limit_per_minute, concurrency_limit, created_at";

fn org_from_row(row: &AnyRow) -> StoreResult<Organization> {
    Ok(Organization {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        credits: row.try_get("credits")?,
        spend_cap: opt_i64(row, "spend_cap")?,
        period: row.try_get("period")?,
        period_spent: row.try_get("period_spent")?,
        rate_limit_per_minute: row.try_get("rate_limit_per_minute")?,
        concurrency_limit: row.try_get("concurrency_limit")?,
        created_at: row.try_get("created_at")?,
    })
}

fn check_limits(new: &NewOrganization) -> StoreResult<()> {
    if new.name.trim().is_empty() {
        return Err(StoreError::Invalid("name must not be empty".into()));
    }
    if new.credits < 0 {
        return Err(StoreError::Invalid("credits must be 0 or more".into()));
    }
    if new.spend_cap.is_some_and(|c| c < 0) {
        return Err(StoreError::Invalid("spendCap must be 0 or more".into()));
    }
    if new.rate_limit_per_minute.is_some_and(|r| r < 1) {
        return Err(StoreError::Invalid(
            "rateLimitPerMinute must be at least 1".into(),
        ));
    }
    if new.concurrency_limit.is_some_and(|c| c < 1) {
        return Err(StoreError::Invalid(
            "concurrencyLimit must be at least 1".into(),
        ));
    }
    Ok(())
}

impl Store {
    /// Creates an organization with a fresh webhook signing secret.
    pub async fn create_org(&self, new: &NewOrganization) -> StoreResult<Organization> {
        check_limits(new)?;
        let id = new_id("org");
        let now = now_ms();
        sqlx::query(
            "INSERT INTO organizations (id, name, credits, spend_cap, period, period_spent, rate_limit_per_minute, concurrency_limit, webhook_secret, created_at, last_topup) \
             VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, $9, $3)",
        )
        .bind(&id)
        .bind(new.name.trim())
        .bind(new.credits)
        .bind(new.spend_cap)
        .bind(period_of(now))
        .bind(new.rate_limit_per_minute.unwrap_or(DEFAULT_RATE_LIMIT_PER_MINUTE))
        .bind(new.concurrency_limit.unwrap_or(DEFAULT_CONCURRENCY_LIMIT))
        .bind(random_secret("whsec_"))
        .bind(now)
        .execute(self.pool())
        .await?;
        self.audit(&id, None, "org.created", &new.name).await?;
        self.get_org(&id).await
    }

    /// One organization by id.
    pub async fn get_org(&self, id: &str) -> StoreResult<Organization> {
        let row = sqlx::query(&format!(
            "SELECT {ORG_COLUMNS} FROM organizations WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("organization {id}")))?;
        org_from_row(&row)
    }

    /// Every organization, oldest first.
    pub async fn list_orgs(&self) -> StoreResult<Vec<Organization>> {
        let rows = sqlx::query(&format!(
            "SELECT {ORG_COLUMNS} FROM organizations ORDER BY created_at, id"
        ))
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(org_from_row).collect()
    }

    /// True when no organization exists yet (bootstrap condition).
    pub async fn is_empty(&self) -> StoreResult<bool> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM organizations")
            .fetch_one(self.pool())
            .await?;
        Ok(n == 0)
    }

    /// Applies a partial update atomically and returns the result.
    pub async fn update_org(&self, id: &str, up: &OrgUpdate) -> StoreResult<Organization> {
        if up.credits.is_some_and(|c| c < 0) {
            return Err(StoreError::Invalid("credits must be 0 or more".into()));
        }
        if up.spend_cap.flatten().is_some_and(|c| c < 0) {
            return Err(StoreError::Invalid("spendCap must be 0 or more".into()));
        }
        if up.rate_limit_per_minute.is_some_and(|r| r < 1) {
            return Err(StoreError::Invalid(
                "rateLimitPerMinute must be at least 1".into(),
            ));
        }
        if up.concurrency_limit.is_some_and(|c| c < 1) {
            return Err(StoreError::Invalid(
                "concurrencyLimit must be at least 1".into(),
            ));
        }
        if up.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(StoreError::Invalid("name must not be empty".into()));
        }
        let mut tx = self.begin_write().await?;
        let row = sqlx::query(&format!(
            "SELECT {ORG_COLUMNS} FROM organizations WHERE id = $1{}",
            self.lock_suffix()
        ))
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("organization {id}")))?;
        let mut org = org_from_row(&row)?;
        let before = org.credits;
        if let Some(c) = up.credits {
            org.credits = c;
        }
        if let Some(add) = up.add_credits {
            org.credits = org.credits.saturating_add(add);
            if org.credits < 0 {
                return Err(StoreError::Invalid(format!(
                    "addCredits {add} would make the balance negative"
                )));
            }
        }
        if let Some(cap) = up.spend_cap {
            org.spend_cap = cap;
        }
        if let Some(r) = up.rate_limit_per_minute {
            org.rate_limit_per_minute = r;
        }
        if let Some(c) = up.concurrency_limit {
            org.concurrency_limit = c;
        }
        if let Some(n) = &up.name {
            org.name = n.trim().to_string();
        }
        sqlx::query(
            "UPDATE organizations SET name = $2, credits = $3, spend_cap = $4, rate_limit_per_minute = $5, concurrency_limit = $6 WHERE id = $1",
        )
        .bind(id)
        .bind(&org.name)
        .bind(org.credits)
        .bind(org.spend_cap)
        .bind(org.rate_limit_per_minute)
        .bind(org.concurrency_limit)
        .execute(&mut *tx)
        .await?;
        if org.credits > before {
            // A top-up: the low-credit alert's default threshold follows it.
            sqlx::query("UPDATE organizations SET last_topup = $2 WHERE id = $1")
                .bind(id)
                .bind(org.credits - before)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.audit(
            id,
            None,
            "org.updated",
            &format!("credits={} spendCap={:?}", org.credits, org.spend_cap),
        )
        .await?;
        Ok(org)
    }

    /// The organization's webhook signing secret.
    pub async fn webhook_secret(&self, org_id: &str) -> StoreResult<String> {
        sqlx::query_scalar("SELECT webhook_secret FROM organizations WHERE id = $1")
            .bind(org_id)
            .fetch_optional(self.pool())
            .await?
            .ok_or_else(|| StoreError::NotFound(format!("organization {org_id}")))
    }

    /// Appends an audit record.
    pub async fn audit(
        &self,
        org_id: &str,
        key_id: Option<&str>,
        action: &str,
        detail: &str,
    ) -> StoreResult<()> {
        sqlx::query("INSERT INTO audit_log (id, org_id, key_id, action, detail, at, actor) VALUES ($1, $2, $3, $4, $5, $6, $7)")
            .bind(new_id("aud"))
            .bind(org_id)
            .bind(key_id)
            .bind(action)
            .bind(detail)
            .bind(now_ms())
            .bind(current_actor())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The organization's audit records, newest first.
    pub async fn audit_log(&self, org_id: &str, limit: i64) -> StoreResult<Vec<serde_json::Value>> {
        let rows = sqlx::query(
            "SELECT id, key_id, action, detail, at, actor FROM audit_log WHERE org_id = $1 ORDER BY at DESC, id DESC LIMIT $2",
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
                    "action": r.try_get::<String, _>("action")?,
                    "detail": r.try_get::<String, _>("detail")?,
                    "at": r.try_get::<i64, _>("at")?,
                    "actor": r.try_get::<Option<String>, _>("actor")?,
                }))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::period_of;

    #[test]
    fn period_is_the_utc_month() {
        assert_eq!(period_of(0), "1970-01");
        // 2026-11-23T04:25:00Z
        assert_eq!(period_of(1_795_407_900_000), "2026-11");
        // 2024-02-29T23:59:59.999Z then 2024-03-01T00:00:00Z
        assert_eq!(period_of(1_709_251_199_999), "2024-02");
        assert_eq!(period_of(1_709_251_200_000), "2024-03");
    }
}

/// RFC 3339 UTC text of a unix-ms time (`2026-11-23T04:25:00.000Z`).
pub fn rfc3339(ms: i64) -> String {
    utc(ms).strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

#[cfg(test)]
mod time_tests {
    #[test]
    fn rfc3339_matches_known_instants() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            super::rfc3339(1_709_251_199_999),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(
            super::rfc3339(1_795_407_900_123),
            "2026-11-23T04:25:00.123Z"
        );
    }
}
