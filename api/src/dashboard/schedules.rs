//! Schedules: the organization's scheduled crawls (timing, target, state,
//! next and last run with its summary), one schedule's run history and the
//! pages that changed in its newest run with changes (unified diffs, capped),
//! pause, resume and delete.

use super::view::{button_form, time, time_or};
use super::{page, CsrfToken, Ctx, Page, PageResult};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::Extension;
use maud::{html, Markup};
use webdata_core::store::{Role, RunRow, ScheduleRow};
use webdata_core::types::{RunSummary, ScheduleRequest};

/// Changed, removed and new pages listed for a run.
const CHANGES_MAX: usize = 50;
/// Bytes of one page's diff shown.
const DIFF_MAX: usize = 20 * 1024;
/// Documents of a run's crawl read when looking for its changes.
const SCAN_MAX: i64 = 5000;

/// The stored spec (empty when unreadable).
fn spec_of(row: &ScheduleRow) -> ScheduleRequest {
    serde_json::from_str(&row.spec).unwrap_or_default()
}

fn timing(spec: &ScheduleRequest) -> Markup {
    html! {
        @if let Some(c) = &spec.cron {
            code { (c) } " (" (spec.timezone.as_deref().unwrap_or("UTC")) ")"
        } @else if let Some(e) = &spec.every {
            "every " code { (e) }
        } @else {
            span.muted { "none" }
        }
    }
}

fn target(spec: &ScheduleRequest) -> Markup {
    html! {
        @if let Some(c) = &spec.crawl {
            "crawl of " span.url { (c.url) }
        } @else if let Some(b) = &spec.batch {
            "batch of " span.url { (b.urls.first().map(String::as_str).unwrap_or("")) }
            @if b.urls.len() > 1 { " and " (b.urls.len() - 1) " more" }
        } @else {
            span.muted { "nothing" }
        }
    }
}

fn state(row: &ScheduleRow) -> Markup {
    html! {
        @if row.suspended {
            span.state.paused data-field="state" { "paused" }
        } @else {
            span.state.active data-field="state" { "active" }
        }
    }
}

fn summary_of(run: &RunRow) -> Option<RunSummary> {
    run.summary
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
}

fn summary(s: &RunSummary) -> Markup {
    html! {
        span.summary data-field="summary" {
            (s.pages) " pages: " (s.new) " new, " (s.same) " same, "
            (s.changed) " changed, " (s.removed) " removed"
        }
    }
}

fn next_run(row: &ScheduleRow) -> Markup {
    if row.suspended {
        html! { span.muted { "paused" } }
    } else {
        time_or(row.next_run_at, "none")
    }
}

/// `GET /dashboard/schedules`
pub async fn list(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    let rows = app.store.list_schedules(&ctx.org.id).await?;
    let mut last = Vec::with_capacity(rows.len());
    for r in &rows {
        last.push(app.store.schedule_runs(&r.id, 1).await?.into_iter().next());
    }
    let base = super::base_url(&app, &ctx.host);
    let body = html! {
        @if rows.is_empty() {
            p.muted { "No schedules yet. A schedule runs a crawl (or a batch scrape) on a cron timing or at a fixed interval, each run with change tracking: every run says which pages are new, the same, changed (with a diff) or removed since the previous one. Create one with " code { "POST /v1/schedules" } ":" }
            pre { code { "curl -s " (base) "/v1/schedules -H \"Authorization: Bearer $KEY\" -H 'Content-Type: application/json' \\\n  -d '{\"name\":\"docs\",\"cron\":\"0 6 * * 1-5\",\"timezone\":\"Europe/Berlin\",\"crawl\":{\"url\":\"https://example.com/docs/\",\"limit\":100}}'" } }
        } @else {
            div.scroll { table id="schedules" {
                thead { tr { th { "Schedule" } th { "Timing" } th { "Target" } th { "State" } th { "Next run" } th { "Last run" } th { "Last run's summary" } } }
                tbody {
                    @for (r, run) in rows.iter().zip(&last) {
                        @let spec = spec_of(r);
                        tr data-schedule=(r.id) {
                            td { a href={ "/dashboard/schedules/" (r.id) } { (spec.name.as_deref().unwrap_or(&r.id)) } }
                            td { (timing(&spec)) }
                            td { (target(&spec)) }
                            td { (state(r)) }
                            td { (next_run(r)) }
                            td { (time_or(r.last_run_at, "never")) }
                            td {
                                @if let Some(run) = run {
                                    span class={ "status " (run.state) } { (run.state) }
                                    @if let Some(s) = summary_of(run) { ": " (summary(&s)) }
                                } @else {
                                    span.muted { "no run yet" }
                                }
                            }
                        }
                    }
                }
            } }
        }
    };
    Ok(page(
        &app,
        &ctx,
        &token,
        &headers,
        "schedules",
        "Schedules",
        body,
    ))
}

/// A schedule of the person's organization, or 404.
async fn own_schedule(app: &AppState, ctx: &Ctx, id: &str) -> Result<ScheduleRow, Page> {
    app.store
        .get_schedule(&ctx.org.id, id)
        .await?
        .ok_or_else(|| Page::not_found("That schedule"))
}

/// May this person pause, resume or delete the schedule: owners and
/// admins, or the member whose playground key created it.
async fn may_manage(app: &AppState, ctx: &Ctx, s: &ScheduleRow) -> bool {
    ctx.may_act_on(app, s.key_id.as_deref()).await
}

/// A page that is not `same` in a run's crawl.
struct Change {
    status: String,
    title: String,
    url: String,
    visibility: Option<String>,
    /// The diff (cut to [`DIFF_MAX`]) and whether it was cut.
    diff: Option<(String, bool)>,
}

/// `text` cut at a line end within `max` bytes.
fn cut(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_string(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').map(|i| i + 1).unwrap_or(end);
    (text[..end].to_string(), true)
}

/// The changed, removed and new pages of a crawl (at most
/// [`CHANGES_MAX`]), and whether there were more (or more to read).
async fn changes_of(app: &AppState, crawl_id: &str) -> Result<(Vec<Change>, bool), Page> {
    let mut out = Vec::new();
    let mut after = 0;
    let mut read = 0;
    loop {
        let docs = app.store.crawl_documents(crawl_id, after, 200).await?;
        let Some(last) = docs.last().map(|d| d.0) else {
            return Ok((out, false));
        };
        for (_, url, json) in &docs {
            let d: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
            let ct = &d["changeTracking"];
            let status = ct["changeStatus"].as_str().unwrap_or("");
            if !matches!(status, "new" | "changed" | "removed") {
                continue;
            }
            if out.len() == CHANGES_MAX {
                return Ok((out, true));
            }
            out.push(Change {
                status: status.to_string(),
                title: d["metadata"]["title"].as_str().unwrap_or("").to_string(),
                url: d["url"]
                    .as_str()
                    .or(d["metadata"]["sourceURL"].as_str())
                    .unwrap_or(url)
                    .to_string(),
                visibility: ct["visibility"].as_str().map(str::to_string),
                diff: ct["diff"]["text"].as_str().map(|t| cut(t, DIFF_MAX)),
            });
        }
        read += docs.len() as i64;
        if read >= SCAN_MAX {
            return Ok((out, true));
        }
        after = last;
    }
}

/// A unified diff with its added, removed and hunk lines marked (escaped
/// like all text: it comes from the web).
fn diff_view(text: &str) -> Markup {
    html! {
        pre.diff {
            @for line in text.lines() {
                @let class = if line.starts_with("+++") || line.starts_with("---") {
                    "file"
                } else if line.starts_with('+') {
                    "add"
                } else if line.starts_with('-') {
                    "del"
                } else if line.starts_with("@@") {
                    "hunk"
                } else {
                    "same"
                };
                span class=(class) { (line) "\n" }
            }
        }
    }
}

/// `GET /dashboard/schedules/{id}`: details, run history, the newest run's
/// changes.
pub async fn show(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> PageResult {
    let row = own_schedule(&app, &ctx, &id).await?;
    let spec = spec_of(&row);
    let runs = app
        .store
        .schedule_runs(&row.id, spec.history_limit() + 5)
        .await?;
    let changed_run = runs.iter().find(|r| {
        r.crawl_id.is_some() && summary_of(r).is_some_and(|s| s.new + s.changed + s.removed > 0)
    });
    let changes = match changed_run.and_then(|r| r.crawl_id.as_deref()) {
        Some(c) => Some(changes_of(&app, c).await?),
        None => None,
    };
    let manage = may_manage(&app, &ctx, &row).await;
    let base = format!("/dashboard/schedules/{}", row.id);
    let t = &token.0;
    let body = html! {
        section.card id="schedule" {
            p { "Id: " code { (row.id) } }
            p { "Timing: " (timing(&spec)) }
            p { "Target: " (target(&spec)) }
            p { "State: " (state(&row)) }
            p { "Next run: " (next_run(&row)) }
            p { "Last run: " (time_or(row.last_run_at, "never")) }
            p { "Created " (time(row.created_at)) }
            @if manage {
                div.row {
                    @if row.suspended {
                        (button_form(&format!("{base}/resume"), t, "Resume", "secondary", None))
                    } @else {
                        (button_form(&format!("{base}/pause"), t, "Pause", "secondary", None))
                    }
                    (button_form(&format!("{base}/delete"), t, "Delete", "danger", Some("Delete this schedule? No more runs start; the crawls it started stay.")))
                }
            }
        }
        h2 { "Runs" }
        @if runs.is_empty() {
            p.muted { "No runs yet." }
        } @else {
            div.scroll { table id="runs" {
                thead { tr { th { "State" } th { "Scheduled for" } th { "Started" } th { "Finished" } th { "Crawl" } th { "Summary" } th { "Message" } } }
                tbody {
                    @for r in &runs {
                        tr data-run=(r.id) {
                            td { span class={ "status " (r.state) } data-field="state" { (r.state) } }
                            td { (time(r.scheduled_for)) }
                            td { (time(r.started_at)) }
                            td { (time_or(r.finished_at, "")) }
                            td { @if let Some(c) = &r.crawl_id { a href={ "/dashboard/crawls/" (c) } { (c) } } }
                            td { @if let Some(s) = summary_of(r) { (summary(&s)) } }
                            td { (r.message.as_deref().unwrap_or("")) }
                        }
                    }
                }
            } }
        }
        @if let (Some(run), Some((changes, more))) = (changed_run, &changes) {
            section id="changes" aria-labelledby="changes-h" {
                h2 id="changes-h" { "Changes in the run scheduled for " (time(run.scheduled_for)) }
                @if *more {
                    p.muted { "Showing the first " (changes.len()) " changed, removed or new pages; the crawl's own page lists them all." }
                }
                @for c in changes {
                    div.change data-change=(c.status) {
                        p {
                            span class={ "change-status " (c.status) } { (c.status) }
                            @if let Some(v) = &c.visibility { @if v != "visible" { " (" (v) ")" } }
                            " "
                            strong.page-title { (c.title) }
                            " "
                            span.url { (c.url) }
                        }
                        @if let Some((d, cut)) = &c.diff {
                            (diff_view(d))
                            @if *cut { p.muted { "Diff truncated at " (DIFF_MAX / 1024) " KB." } }
                        }
                    }
                }
            }
        }
    };
    let title = format!(
        "Schedule {}",
        spec.name.as_deref().unwrap_or(row.id.as_str())
    );
    Ok(page(
        &app,
        &ctx,
        &token,
        &headers,
        "schedules",
        &title,
        body,
    ))
}

async fn act(app: &AppState, ctx: &Ctx, id: &str) -> Result<ScheduleRow, Page> {
    let row = own_schedule(app, ctx, id).await?;
    if !may_manage(app, ctx, &row).await {
        ctx.require(Role::Admin)?;
    }
    Ok(row)
}

fn failed(e: crate::error::ApiError) -> Page {
    Page::error(e.status(), "Something went wrong", &e.message)
}

async fn suspend(app: AppState, ctx: Ctx, id: String, suspended: bool) -> PageResult {
    let row = act(&app, &ctx, &id).await?;
    crate::services::schedules::set_suspended(&app, &row, suspended)
        .await
        .map_err(failed)?;
    let (action, said) = if suspended {
        ("schedule.paused", "Schedule paused.")
    } else {
        ("schedule.resumed", "Schedule resumed.")
    };
    ctx.audited(app.store.audit(&ctx.org.id, None, action, &row.id))
        .await?;
    Ok(Page::see_other(&format!("/dashboard/schedules/{}", row.id))
        .flash(said, app.config.cookie_secure))
}

/// `POST /dashboard/schedules/{id}/pause`
pub async fn pause(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Path(id): Path<String>,
) -> PageResult {
    suspend(app, ctx, id, true).await
}

/// `POST /dashboard/schedules/{id}/resume`: the next run is the next slot
/// after now.
pub async fn resume(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Path(id): Path<String>,
) -> PageResult {
    suspend(app, ctx, id, false).await
}

/// `POST /dashboard/schedules/{id}/delete`: no more runs; its crawls stay.
pub async fn delete(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Path(id): Path<String>,
) -> PageResult {
    let row = act(&app, &ctx, &id).await?;
    if !app.store.delete_schedule(&ctx.org.id, &row.id).await? {
        return Err(Page::not_found("That schedule"));
    }
    ctx.audited(
        app.store
            .audit(&ctx.org.id, None, "schedule.deleted", &row.id),
    )
    .await?;
    Ok(Page::see_other("/dashboard/schedules").flash(
        &format!(
            "Schedule \"{}\" deleted.",
            spec_of(&row).name.as_deref().unwrap_or(&row.id)
        ),
        app.config.cookie_secure,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_are_marked_and_escaped() {
        let d = "--- previous\n+++ current\n@@ -1 +1 @@\n-old <b>x</b>\n+new <script>alert(1)</script>\n same";
        let out = diff_view(d).into_string();
        assert!(
            out.contains("<span class=\"file\">--- previous\n</span>"),
            "{out}"
        );
        assert!(
            out.contains("<span class=\"del\">-old &lt;b&gt;x&lt;/b&gt;\n</span>"),
            "{out}"
        );
        assert!(
            out.contains("<span class=\"add\">+new &lt;script&gt;alert(1)&lt;/script&gt;\n</span>"),
            "{out}"
        );
        assert!(!out.contains("<script"), "{out}");
    }

    #[test]
    fn long_diffs_are_cut_at_a_line_end() {
        let line = "+ä line of text\n";
        let text = line.repeat(2000);
        let (shown, was_cut) = cut(&text, DIFF_MAX);
        assert!(was_cut);
        assert!(shown.len() <= DIFF_MAX && shown.ends_with('\n'));
        assert_eq!(cut("short\n", DIFF_MAX), ("short\n".to_string(), false));
    }
}
