//! `GET /v1/team/credit-usage`: the caller's balance and limits (a cheap
//! authenticated call for checking a key).

use crate::context::{request_id, Caller};
use axum::Extension;
use axum::Json;

/// Remaining credits, spend cap and plan limits of the caller's organization.
pub async fn credit_usage(Extension(caller): Extension<Caller>) -> Json<serde_json::Value> {
    let org = &caller.org;
    let key_budget = caller.key.budget.map(|b| (b - caller.key.spent).max(0));
    Json(serde_json::json!({
        "success": true,
        "data": {
            "organization": org.id,
            "remainingCredits": org.credits,
            "spendCap": org.spend_cap,
            "spentThisMonth": if org.period == webdata_core::store::period_of(webdata_core::store::now_ms()) { org.period_spent } else { 0 },
            "rateLimitPerMinute": caller.key.rate_limit_per_minute.unwrap_or(org.rate_limit_per_minute).min(org.rate_limit_per_minute),
            "concurrencyLimit": caller.key.concurrency_limit.unwrap_or(org.concurrency_limit).min(org.concurrency_limit),
            "keyRemainingCredits": key_budget,
        },
        "credits_used": 0,
        "request_id": request_id(),
    }))
}
