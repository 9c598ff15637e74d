//! Overview: credits left, spent this month against the spend cap,
//! requests and credits per day for 30 days, recent failures by code.

use super::view::{bar_chart, time};
use super::{page, CsrfToken, Ctx, PageResult};
use crate::state::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Extension;
use maud::html;
use webdata_core::store::{now_ms, period_of, DAY_MS};

/// `GET /dashboard`
pub async fn overview(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    let org = &ctx.org;
    let days = app.store.daily_usage(&org.id, 30).await?;
    let failures = app
        .store
        .failures_by_code(&org.id, now_ms() - 7 * DAY_MS)
        .await?;
    let spent = if org.period == period_of(now_ms()) {
        org.period_spent
    } else {
        0
    };
    let alerts = app.store.alert_settings(&org.id).await?;
    let body = html! {
        section.cards aria-label="Credits" {
            div.card {
                h2 { "Credits left" }
                p.big id="credits-left" { (org.credits) }
                @if org.credits <= alerts.effective() && alerts.effective() > 0 {
                    p.warn { "Below the alert threshold of " (alerts.effective()) "." }
                }
            }
            div.card {
                h2 { "Spent this month" }
                p.big id="spent-month" { (spent) }
                @match org.spend_cap {
                    Some(cap) => {
                        label for="cap-progress" { "of the spend cap of " (cap) }
                        progress id="cap-progress" max=(cap.max(1)) value=(spent.min(cap)) { (spent) " of " (cap) }
                    }
                    None => { p.muted { "No monthly spend cap." } }
                }
            }
            div.card {
                h2 { "Plan limits" }
                p { (org.rate_limit_per_minute) " requests a minute, " (org.concurrency_limit) " at once." }
            }
        }
        section aria-labelledby="usage-h" {
            h2 id="usage-h" { "The last 30 days" }
            (bar_chart(&days, "Requests", |d| d.requests, "requests"))
            (bar_chart(&days, "Credits", |d| d.credits, "credits"))
        }
        section aria-labelledby="fail-h" {
            h2 id="fail-h" { "Recent failures (7 days)" }
            @if failures.is_empty() {
                p.muted { "No failed requests." }
            } @else {
                div.scroll { table {
                    thead { tr { th { "Error code" } th { "Count" } th { "Last seen" } th { "Last message" } } }
                    tbody {
                        @for f in &failures {
                            tr {
                                td { code { (f.code) } }
                                td { (f.count) }
                                td { (time(f.last_at)) }
                                td { (f.last_route) ": " (f.last_message) }
                            }
                        }
                    }
                } }
            }
        }
    };
    Ok(page(
        &app,
        &ctx,
        &token,
        &headers,
        "overview",
        &format!("Overview of {}", org.name),
        body,
    ))
}
