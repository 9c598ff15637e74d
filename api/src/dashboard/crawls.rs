//! Crawls: the organization's crawls and batch scrapes with status and live progress (the
//! crawl's own event stream, read with the session), one crawl's documents
//! paged by cursor, cancel.

use super::view::{button_form, time};
use super::{page, CsrfToken, Ctx, Page, PageResult};
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use maud::{html, Markup};
use serde::Deserialize;
use webdata_core::store::{CrawlRow, Role};

/// Crawls per page of the list.
const PAGE: i64 = 50;
/// Documents per page of a crawl.
const DOCS: i64 = 20;

#[derive(Deserialize, Default)]
pub struct ListQuery {
    before: Option<i64>,
}

fn progress(c: &CrawlRow) -> Markup {
    html! {
        span data-field="status" class={ "status " (c.status) } { (c.status) }
        " "
        progress data-field="progress" max=(c.total.max(1)) value=(c.completed + c.failed) aria-label="Progress" {}
        " "
        span data-field="completed" { (c.completed) } " / " span data-field="total" { (c.total) } " done, "
        span data-field="failed" { (c.failed) } " failed, "
        span data-field="credits_used" { (c.credits_used) } " credits"
    }
}

/// `GET /dashboard/crawls`
pub async fn list(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Query(q): Query<ListQuery>,
    headers: HeaderMap,
) -> PageResult {
    let crawls = app
        .store
        .crawls_of(&ctx.org.id, q.before.unwrap_or(i64::MAX), PAGE)
        .await?;
    let body = html! {
        @if crawls.is_empty() {
            p.muted { "No crawls yet. Start one from the " a href="/dashboard/playground" { "playground" } " or with " code { "POST /v1/crawl" } "." }
        } @else {
            div.scroll { table {
                thead { tr { th { "Started" } th { "Kind" } th { "URL" } th { "Progress" } } }
                tbody {
                    @for c in &crawls {
                        tr data-events=[(!c.is_finished()).then(|| format!("/dashboard/crawls/{}/events?after={}", c.id, c.event_seq))] {
                            td { (time(c.created_at)) }
                            td { @if c.is_batch() { "batch scrape" } @else { "crawl" } }
                            td { a href={ "/dashboard/crawls/" (c.id) } { (c.url) } }
                            td { (progress(c)) }
                        }
                    }
                }
            } }
            @if crawls.len() as i64 == PAGE {
                p { a href={ "/dashboard/crawls?before=" (crawls.last().map(|c| c.created_at).unwrap_or(0)) } { "Older crawls" } }
            }
        }
    };
    Ok(page(&app, &ctx, &token, &headers, "crawls", "Crawls", body))
}

/// A crawl of the person's organization, or 404.
async fn own_crawl(app: &AppState, ctx: &Ctx, id: &str) -> Result<CrawlRow, Page> {
    match app.store.get_crawl(id).await? {
        Some(c) if c.org_id == ctx.org.id => Ok(c),
        _ => Err(Page::not_found("That crawl")),
    }
}

#[derive(Deserialize, Default)]
pub struct DocQuery {
    after: Option<i64>,
}

/// May this person cancel the crawl: owners and admins, or the member
/// whose playground key started it.
async fn may_cancel(app: &AppState, ctx: &Ctx, c: &CrawlRow) -> bool {
    ctx.may_act_on(app, c.key_id.as_deref()).await
}

/// `GET /dashboard/crawls/{id}`: status (live), documents a page at a time.
pub async fn show(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Path(id): Path<String>,
    Query(q): Query<DocQuery>,
    headers: HeaderMap,
) -> PageResult {
    let c = own_crawl(&app, &ctx, &id).await?;
    let after = q.after.unwrap_or(0).max(0);
    let (docs, last) = crate::services::crawls::documents_after(&app, &c, after, DOCS)
        .await
        .map_err(|e| Page::error(e.status(), "Something went wrong", &e.message))?;
    let live = !c.is_finished() && after == 0;
    let body = html! {
        section.card id="crawl-live" data-events=[live.then(|| format!("/dashboard/crawls/{}/events?after={}", c.id, c.event_seq))] data-append="crawl-pages" {
            p { "URL: " a href=(c.url) rel="noopener noreferrer nofollow" { (c.url) } }
            p { "Started " (time(c.created_at)) }
            p { (progress(&c)) }
            @if let Some(msg) = &c.error_message {
                p.error { code { (c.error_code.clone().unwrap_or_default()) } ": " (msg) }
            }
            @if !c.is_finished() && may_cancel(&app, &ctx, &c).await {
                div data-hide-when-done { (button_form(&format!("/dashboard/crawls/{}/cancel", c.id), &token.0, "Cancel crawl", "danger", Some("Cancel this crawl? Pages already scraped stay available and charged."))) }
            }
        }
        h2 { "Pages" }
        div.scroll { table {
            thead { tr { th { "#" } th { "Title" } th { "URL" } th { "Status" } } }
            tbody id="crawl-pages" {
                @for (i, d) in docs.iter().enumerate() {
                    tr {
                        td { (after + i as i64 + 1) }
                        td.page-title { (d["metadata"]["title"].as_str().unwrap_or("")) }
                        td { (d["url"].as_str().or(d["metadata"]["sourceURL"].as_str()).unwrap_or("")) }
                        td { (d["metadata"]["statusCode"].as_i64().map(|s| s.to_string()).unwrap_or_default()) }
                    }
                }
            }
        } }
        nav.pager aria-label="Pages of documents" {
            @if after > 0 { a href={ "/dashboard/crawls/" (c.id) } { "First page" } " " }
            @if last > after && (docs.len() as i64) == DOCS { a href={ "/dashboard/crawls/" (c.id) "?after=" (last) } { "Next page" } }
        }
    };
    let title = if c.is_batch() {
        "Batch scrape"
    } else {
        "Crawl"
    };
    Ok(page(&app, &ctx, &token, &headers, "crawls", title, body))
}

/// `GET /dashboard/crawls/{id}/events`: the crawl's event stream, for the
/// signed-in person (the same stream `/v1/crawl/{id}/events` serves).
pub async fn events(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Path(id): Path<String>,
    Query(q): Query<DocQuery>,
    headers: HeaderMap,
) -> Result<Response, Page> {
    let c = own_crawl(&app, &ctx, &id).await?;
    let after = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .or(q.after)
        .unwrap_or(0)
        .max(0);
    Ok(crate::services::crawls::event_stream(&app, c.id, after).into_response())
}

/// `POST /dashboard/crawls/{id}/cancel`
pub async fn cancel(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Path(id): Path<String>,
) -> PageResult {
    let c = own_crawl(&app, &ctx, &id).await?;
    if !may_cancel(&app, &ctx, &c).await {
        ctx.require(Role::Admin)?;
    }
    crate::services::crawls::cancel(&app, &c)
        .await
        .map_err(|e| Page::error(e.status(), "Something went wrong", &e.message))?;
    ctx.audited(app.store.audit(&ctx.org.id, None, "crawl.cancelled", &c.id))
        .await?;
    Ok(Page::see_other(&format!("/dashboard/crawls/{}", c.id))
        .flash("Crawl cancelled.", app.config.cookie_secure))
}
