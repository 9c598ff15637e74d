//! Usage: the credit ledger, filtered by operation, key and dates, and
//! exported as CSV; and the audit log.

use super::view::time;
use super::{page, CsrfToken, Ctx, Page, PageResult};
use crate::state::AppState;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::Extension;
use maud::html;
use serde::Deserialize;
use webdata_core::store::{rfc3339, LedgerFilter, LedgerRow, DAY_MS};

/// Rows shown on the page; the CSV holds up to [`CSV_ROWS`].
const SHOWN: i64 = 200;
const CSV_ROWS: i64 = 100_000;

#[derive(Deserialize, Default, Clone)]
pub struct UsageQuery {
    #[serde(default)]
    operation: String,
    #[serde(default)]
    key: String,
    /// `YYYY-MM-DD` (UTC), inclusive.
    #[serde(default)]
    from: String,
    /// `YYYY-MM-DD` (UTC), inclusive.
    #[serde(default)]
    to: String,
}

fn day_ms(s: &str) -> Result<Option<i64>, Page> {
    if s.is_empty() {
        return Ok(None);
    }
    s.parse::<jiff::civil::Date>()
        .ok()
        .and_then(|d| d.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map(|z| Some(z.timestamp().as_millisecond()))
        .ok_or_else(|| {
            Page::error(
                StatusCode::BAD_REQUEST,
                "Not possible",
                "Dates are YYYY-MM-DD.",
            )
        })
}

fn filter(q: &UsageQuery, limit: i64) -> Result<LedgerFilter, Page> {
    Ok(LedgerFilter {
        operation: Some(q.operation.clone()).filter(|s| !s.is_empty()),
        key_id: Some(q.key.clone()).filter(|s| !s.is_empty()),
        from: day_ms(&q.from)?,
        to: day_ms(&q.to)?.map(|t| t + DAY_MS),
        limit,
    })
}

fn charged(r: &LedgerRow) -> i64 {
    r.settled.unwrap_or(r.reserved)
}

/// `GET /dashboard/usage`
pub async fn show(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Query(q): Query<UsageQuery>,
    headers: HeaderMap,
) -> PageResult {
    let rows = app
        .store
        .ledger_rows(&ctx.org.id, &filter(&q, SHOWN)?)
        .await?;
    let ops = app.store.ledger_operations(&ctx.org.id).await?;
    let keys = app.store.list_keys(&ctx.org.id, true).await?;
    let total: i64 = rows.iter().map(charged).sum();
    let qs = serde_urlencoded_query(&q);
    let body = html! {
        form method="get" action="/dashboard/usage" class="row filters" {
            label for="f-op" { "Operation" }
            select id="f-op" name="operation" {
                option value="" { "all" }
                @for o in &ops { option value=(o) selected[*o == q.operation] { (o) } }
            }
            label for="f-key" { "Key" }
            select id="f-key" name="key" {
                option value="" { "all" }
                @for k in &keys { option value=(k.id) selected[k.id == q.key] { (k.name) " (" (k.prefix) "…)" } }
            }
            label for="f-from" { "From" }
            input id="f-from" name="from" type="date" value=(q.from);
            label for="f-to" { "To" }
            input id="f-to" name="to" type="date" value=(q.to);
            button type="submit" class="secondary" { "Filter" }
            a.button href={ "/dashboard/usage.csv?" (qs) } download { "Export CSV" }
        }
        p { (rows.len()) " entries shown, " strong id="usage-total" { (total) } " credits." }
        div.scroll { table id="ledger" {
            thead { tr { th { "Time" } th { "Operation" } th { "Key" } th { "Reserved" } th { "Charged" } th { "State" } } }
            tbody {
                @for r in &rows {
                    tr {
                        td { (time(r.created_at)) }
                        td { code { (r.operation) } }
                        td { (r.key_name.clone().unwrap_or_default()) }
                        td { (r.reserved) }
                        td { (charged(r)) }
                        td { (r.state) }
                    }
                }
            }
        } }
    };
    Ok(page(&app, &ctx, &token, &headers, "usage", "Usage", body))
}

fn serde_urlencoded_query(q: &UsageQuery) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("operation", &q.operation)
        .append_pair("key", &q.key)
        .append_pair("from", &q.from)
        .append_pair("to", &q.to)
        .finish()
}

/// A CSV cell: quoted when needed, and never read as a formula by a
/// spreadsheet (a leading `= + - @` gets a `'`).
fn cell(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// `GET /dashboard/usage.csv`: the filtered ledger.
pub async fn csv(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Query(q): Query<UsageQuery>,
) -> Result<axum::response::Response, Page> {
    let rows = app
        .store
        .ledger_rows(&ctx.org.id, &filter(&q, CSV_ROWS)?)
        .await?;
    let mut out = String::from("time,id,operation,key_id,key_name,reserved,charged,state\n");
    for r in &rows {
        let line = [
            rfc3339(r.created_at),
            r.id.clone(),
            r.operation.clone(),
            r.key_id.clone().unwrap_or_default(),
            r.key_name.clone().unwrap_or_default(),
            r.reserved.to_string(),
            charged(r).to_string(),
            r.state.clone(),
        ]
        .iter()
        .map(|c| cell(c))
        .collect::<Vec<_>>()
        .join(",");
        out.push_str(&line);
        out.push('\n');
    }
    let name = format!(
        "attachment; filename=\"webdata-usage-{}.csv\"",
        &rfc3339(webdata_core::store::now_ms())[..10]
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, name),
        ],
        out,
    )
        .into_response())
}

/// `GET /dashboard/audit`
pub async fn audit(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    let rows = app.store.audit_log(&ctx.org.id, 500).await?;
    let body = html! {
        div.scroll { table id="audit" {
            thead { tr { th { "Time" } th { "Who" } th { "Action" } th { "Detail" } } }
            tbody {
                @for r in &rows {
                    tr {
                        td { (time(r["at"].as_i64().unwrap_or(0))) }
                        td { (r["actor"].as_str().unwrap_or("admin API / CLI / system")) }
                        td { code { (r["action"].as_str().unwrap_or("")) } }
                        td { (r["detail"].as_str().unwrap_or("")) @if let Some(k) = r["keyId"].as_str() { " " span.muted { "(" (k) ")" } } }
                    }
                }
            }
        } }
    };
    Ok(page(
        &app,
        &ctx,
        &token,
        &headers,
        "audit",
        "Audit log",
        body,
    ))
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn csv_cells_are_quoted_and_never_formulas() {
        assert_eq!(cell("scrape"), "scrape");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(cell("-1"), "'-1");
    }
}
