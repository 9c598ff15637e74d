//! Scheduled crawls: checking a schedule, showing it, and the scheduler
//! that starts each run as an ordinary crawl (or batch scrape) with change
//! tracking, follows it and sends `schedule.run.completed` with what
//! changed.

use crate::context::Caller;
use crate::error::{ApiError, ApiResult};
use crate::routes::crawl::launch;
use crate::state::AppState;
use std::time::Duration;
use webdata_core::schedule::When;
use webdata_core::store::{now_ms, rfc3339, Claimed, RunRow, ScheduleRow};
use webdata_core::types::{
    BatchScrapeRequest, ConcurrencyPolicy, CrawlRequest, Schedule, ScheduleRequest, ScheduleRun,
    BATCH_URLS_MAX,
};
use webdata_core::validate::{self, limits};
use webdata_core::ErrorCode;
use webdata_engine::Engine;

/// Longest `name`.
const NAME_MAX: usize = 200;
/// A run still `starting` this long after its claim was cut short (the
/// process died between the claim and the crawl's creation).
const STARTING_STALE_MS: i64 = 60_000;

/// Checks a schedule as it will be stored; returns when it fires.
pub fn check(app: &AppState, req: &ScheduleRequest, anchor_ms: i64) -> ApiResult<When> {
    if let Some(n) = &req.name {
        if n.chars().count() > NAME_MAX {
            return Err(ApiError::invalid(format!(
                "`name` must be at most {NAME_MAX} characters"
            )));
        }
    }
    let when = When::parse(
        req.cron.as_deref(),
        req.every.as_deref(),
        req.timezone.as_deref(),
        anchor_ms,
    )
    .map_err(|(field, msg)| ApiError::invalid(format!("`{field}`: {msg}")))?;
    if when.next_after(now_ms()).is_none() {
        return Err(ApiError::invalid(
            "`cron`: the expression never fires (for example February 30th)",
        ));
    }
    match (&req.crawl, &req.batch) {
        (Some(c), None) => check_crawl(app, c)?,
        (None, Some(b)) => check_batch(app, b)?,
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "`batch`: give `crawl` or `batch`, not both",
            ))
        }
        (None, None) => {
            return Err(ApiError::invalid(
                "`crawl` is required (the crawl each run starts), or `batch` (the URLs each run scrapes)",
            ))
        }
    }
    if let Some(t) = &req.tag {
        if t.is_empty()
            || t.chars().count() > limits::CHANGE_TAG_MAX
            || t.chars().any(char::is_control)
        {
            return Err(ApiError::invalid(format!(
                "`tag` must be 1 to {} characters, without control characters",
                limits::CHANGE_TAG_MAX
            )));
        }
    }
    if let Some(w) = &req.webhook {
        validate::check_url("webhook.url", &w.url)?;
        app.engine
            .check_url(&w.url)
            .map_err(|e| ApiError::new(e.code, format!("webhook.url: {}", e.message)))?;
    }
    if let Some(d) = req.starting_deadline_seconds {
        if d < 1 {
            return Err(ApiError::invalid(
                "`startingDeadlineSeconds` must be 1 or more",
            ));
        }
    }
    if let Some(h) = req.history_limit {
        if !(1..=100).contains(&h) {
            return Err(ApiError::invalid("`historyLimit` must be 1 to 100"));
        }
    }
    Ok(when)
}

fn check_crawl(app: &AppState, c: &CrawlRequest) -> ApiResult<()> {
    let field = |e: ApiError| prefix(e, "crawl.");
    validate::check_crawl_request(c).map_err(|e| field(e.into()))?;
    if c.resume_from.is_some() {
        return Err(ApiError::invalid(
            "`crawl.resumeFrom` cannot be scheduled: every run crawls anew",
        ));
    }
    Engine::check_path_filters(
        c.include_paths.as_deref().unwrap_or_default(),
        c.exclude_paths.as_deref().unwrap_or_default(),
    )
    .map_err(|e| field(e.into()))?;
    app.engine.check_url(&c.url).map_err(|e| field(e.into()))?;
    if let Some(w) = &c.webhook {
        app.engine
            .check_url(&w.url)
            .map_err(|e| ApiError::new(e.code, format!("crawl.webhook.url: {}", e.message)))?;
    }
    Ok(())
}

fn check_batch(app: &AppState, b: &BatchScrapeRequest) -> ApiResult<()> {
    if b.urls.is_empty() || b.urls.len() > BATCH_URLS_MAX {
        return Err(ApiError::invalid(format!(
            "`batch.urls` must hold 1 to {BATCH_URLS_MAX} URLs (got {})",
            b.urls.len()
        )));
    }
    for (i, u) in b.urls.iter().enumerate() {
        let f = format!("batch.urls[{i}]");
        validate::check_url(&f, u)?;
        app.engine
            .check_url(u)
            .map_err(|e| ApiError::new(e.code, format!("{f}: {}", e.message)))?;
    }
    let urls: Vec<String> = b.urls.iter().map(|u| u.trim().to_string()).collect();
    validate::check_crawl_request(&b.as_crawl(&urls)).map_err(|e| prefix(e.into(), "batch."))?;
    Ok(())
}

/// Names fields inside `crawl`/`batch` with their place in the schedule.
fn prefix(e: ApiError, p: &str) -> ApiError {
    let message = e.message.replacen('`', &format!("`{p}"), 1);
    ApiError::new(e.code, message)
}

/// The tag a schedule's runs track changes under.
pub fn tag_of(id: &str, spec: &ScheduleRequest) -> String {
    spec.tag.clone().unwrap_or_else(|| id.to_string())
}

/// The crawl request of one run and, for a batch, its URLs.
pub fn run_request(
    id: &str,
    spec: &ScheduleRequest,
) -> Option<(CrawlRequest, Option<Vec<String>>)> {
    let tag = tag_of(id, spec);
    if let Some(c) = &spec.crawl {
        let mut c = c.clone();
        c.url = c.url.trim().to_string();
        c.scrape_options = Some(webdata_core::types::tracked_options(
            c.scrape_options.take(),
            &tag,
        ));
        return Some((c, None));
    }
    let b = spec.batch.as_ref()?;
    let mut b = b.clone();
    b.scrape_options = Some(webdata_core::types::tracked_options(
        b.scrape_options.take(),
        &tag,
    ));
    let urls: Vec<String> = b.urls.iter().map(|u| u.trim().to_string()).collect();
    Some((b.as_crawl(&urls), Some(urls)))
}

fn ms(t: Option<i64>) -> Option<String> {
    t.map(rfc3339)
}

/// A run as the API shows it.
pub fn show_run(r: &RunRow) -> ScheduleRun {
    ScheduleRun {
        id: r.id.clone(),
        scheduled_for: rfc3339(r.scheduled_for),
        started_at: rfc3339(r.started_at),
        finished_at: ms(r.finished_at),
        state: r.state.clone(),
        crawl_id: r.crawl_id.clone(),
        summary: r
            .summary
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok()),
        message: r.message.clone(),
    }
}

/// A schedule as the API shows it, with its newest runs.
pub async fn show(app: &AppState, row: &ScheduleRow) -> ApiResult<Schedule> {
    let spec: ScheduleRequest = serde_json::from_str(&row.spec)
        .map_err(|e| ApiError::internal(format!("stored schedule is unreadable: {e}")))?;
    let runs = app
        .store
        .schedule_runs(&row.id, spec.history_limit() + 5)
        .await?
        .iter()
        .map(show_run)
        .collect();
    let mut spec = spec;
    spec.suspend = Some(row.suspended);
    Ok(Schedule {
        id: row.id.clone(),
        spec,
        next_run_at: if row.suspended {
            None
        } else {
            ms(row.next_run_at)
        },
        last_run_at: ms(row.last_run_at),
        created_at: rfc3339(row.created_at),
        updated_at: rfc3339(row.updated_at),
        runs,
    })
}

/// Stores `spec` (checked) with `suspended`; the next slot is recomputed
/// from now when the timing changed or the schedule is resumed.
pub async fn save(
    app: &AppState,
    row: &ScheduleRow,
    spec: ScheduleRequest,
    suspended: bool,
) -> ApiResult<ScheduleRow> {
    let old: ScheduleRequest = serde_json::from_str(&row.spec).unwrap_or_default();
    let when = check(app, &spec, row.created_at)?;
    let timing_changed =
        (&old.cron, &old.every, &old.timezone) != (&spec.cron, &spec.every, &spec.timezone);
    let next = if timing_changed || (row.suspended && !suspended) || row.next_run_at.is_none() {
        when.next_after(now_ms())
    } else {
        row.next_run_at
    };
    let mut spec = spec;
    spec.suspend = None;
    let json = serde_json::to_string(&spec).map_err(|e| ApiError::internal(e.to_string()))?;
    if !app
        .store
        .update_schedule(&row.org_id, &row.id, &json, suspended, next)
        .await?
    {
        return Err(ApiError::not_found(format!(
            "schedule `{}` does not exist",
            row.id
        )));
    }
    app.store
        .get_schedule(&row.org_id, &row.id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("schedule `{}` does not exist", row.id)))
}

/// Pauses (`suspended`) or resumes a schedule, keeping its spec; resuming
/// starts from the next slot after now.
pub async fn set_suspended(
    app: &AppState,
    row: &ScheduleRow,
    suspended: bool,
) -> ApiResult<ScheduleRow> {
    let spec: ScheduleRequest = serde_json::from_str(&row.spec).unwrap_or_default();
    save(app, row, spec, suspended).await
}

/// Runs the scheduler every `tick` until the process stops.
pub fn spawn(app: AppState, tick: Duration) {
    tokio::spawn(async move {
        let mut t = tokio::time::interval(tick);
        t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            t.tick().await;
            if let Err(e) = start_due(&app).await {
                tracing::warn!(error = %e.message, "starting scheduled runs failed");
            }
            if let Err(e) = follow_runs(&app).await {
                tracing::warn!(error = %e.message, "following scheduled runs failed");
            }
        }
    });
}

/// Claims and starts every due run.
pub async fn start_due(app: &AppState) -> ApiResult<()> {
    let now = now_ms();
    for s in app.store.due_schedules(now, 50).await? {
        let Some(due) = s.next_run_at else { continue };
        let Ok(spec) = serde_json::from_str::<ScheduleRequest>(&s.spec) else {
            continue;
        };
        let Ok(when) = When::parse(
            spec.cron.as_deref(),
            spec.every.as_deref(),
            spec.timezone.as_deref(),
            s.created_at,
        ) else {
            continue;
        };
        // After downtime, one run for everything missed, then the next slot
        // after now (as a CronJob does).
        let next = when.next_after(now.max(due));
        if let Some(d) = spec.starting_deadline_seconds {
            if now - due > d * 1000 {
                let msg = format!(
                    "not started: {} s late, past startingDeadlineSeconds ({d})",
                    (now - due) / 1000
                );
                if let Some(run) = app
                    .store
                    .claim_schedule_run(&s.id, due, next, Claimed::Skip("missed"), Some(&msg))
                    .await?
                {
                    tracing::info!(schedule = %s.id, run = %run.id, "{msg}");
                    app.store
                        .trim_schedule_runs(&s.id, spec.history_limit())
                        .await?;
                }
                continue;
            }
        }
        let open: Vec<RunRow> = app
            .store
            .schedule_runs(&s.id, 20)
            .await?
            .into_iter()
            .filter(RunRow::is_open)
            .collect();
        let policy = spec.concurrency_policy.unwrap_or_default();
        if !open.is_empty() && policy == ConcurrencyPolicy::Forbid {
            let msg = "not started: the previous run is still running (concurrencyPolicy Forbid)";
            if app
                .store
                .claim_schedule_run(&s.id, due, next, Claimed::Skip("skipped"), Some(msg))
                .await?
                .is_some()
            {
                app.store
                    .trim_schedule_runs(&s.id, spec.history_limit())
                    .await?;
            }
            continue;
        }
        let Some(run) = app
            .store
            .claim_schedule_run(&s.id, due, next, Claimed::Start, None)
            .await?
        else {
            continue;
        };
        if policy == ConcurrencyPolicy::Replace {
            for old in &open {
                replace(app, old).await?;
            }
        }
        start(app, &s, &spec, &run).await?;
    }
    Ok(())
}

/// Cancels a run that a newer one replaces (concurrencyPolicy Replace).
async fn replace(app: &AppState, old: &RunRow) -> ApiResult<()> {
    if let Some(id) = &old.crawl_id {
        if let Some(c) = app.store.get_crawl(id).await? {
            crate::services::crawls::cancel(app, &c).await?;
        }
    }
    app.store
        .finish_schedule_run(
            old,
            "cancelled",
            None,
            Some("replaced by a newer run (concurrencyPolicy Replace)"),
            None,
        )
        .await?;
    Ok(())
}

/// Starts the crawl of a claimed run, as the schedule's organization and
/// key; a run that cannot start ends `failed`, saying why.
async fn start(
    app: &AppState,
    s: &ScheduleRow,
    spec: &ScheduleRequest,
    run: &RunRow,
) -> ApiResult<()> {
    let failed = |msg: String| async move {
        let data = serde_json::json!({"scheduleId": s.id, "runId": run.id, "error": msg});
        app.store
            .finish_schedule_run(
                run,
                "failed",
                None,
                Some(&msg),
                Some((
                    "schedule.run.failed",
                    data,
                    spec.webhook.as_ref().map(|w| w.url.as_str()),
                )),
            )
            .await?;
        tracing::warn!(schedule = %s.id, run = %run.id, "scheduled run failed to start: {msg}");
        Ok::<(), ApiError>(())
    };
    let org = app.store.get_org(&s.org_id).await?;
    let key = match &s.key_id {
        Some(k) => app
            .store
            .get_key(k)
            .await
            .ok()
            .filter(|k| k.revoked_at.is_none()),
        None => None,
    };
    let Some(key) = key else {
        return failed(
            "the key that created the schedule was revoked; recreate the schedule with a live key"
                .into(),
        )
        .await;
    };
    if org.credits < 1 {
        return failed(format!(
            "{}: the organization has no credits left",
            ErrorCode::InsufficientCredits.as_str()
        ))
        .await;
    }
    let Some((request, seeds)) = run_request(&s.id, spec) else {
        return failed("the stored schedule has neither `crawl` nor `batch`".into()).await;
    };
    let request_json =
        serde_json::to_string(&request).map_err(|e| ApiError::internal(e.to_string()))?;
    let caller = Caller { org, key };
    match launch(app, &caller, &request, &request_json, seeds.as_deref()).await {
        Ok(row) => {
            app.store.schedule_run_started(&run.id, &row.id).await?;
            tracing::info!(schedule = %s.id, run = %run.id, crawl = %row.id, "scheduled run started");
            Ok(())
        }
        Err(e) => failed(e.message).await,
    }
}

/// Ends runs whose crawl has ended, with their summary and event; fails
/// runs whose start was cut short.
pub async fn follow_runs(app: &AppState) -> ApiResult<()> {
    let now = now_ms();
    for run in app.store.open_schedule_runs(200).await? {
        let Some(crawl_id) = &run.crawl_id else {
            if now - run.started_at > STARTING_STALE_MS {
                app.store
                    .finish_schedule_run(
                        &run,
                        "failed",
                        None,
                        Some("interrupted before its crawl started (the process stopped)"),
                        None,
                    )
                    .await?;
            }
            continue;
        };
        let Some(crawl) = app.store.get_crawl(crawl_id).await? else {
            continue;
        };
        if !crawl.is_finished() {
            continue;
        }
        let summary = app.store.crawl_change_summary(crawl_id).await?;
        let state = match crawl.status.as_str() {
            "completed" => "completed",
            "cancelled" => "cancelled",
            _ => "failed",
        };
        let spec: Option<ScheduleRequest> = app
            .store
            .get_schedule(&run.org_id, &run.schedule_id)
            .await?
            .and_then(|s| serde_json::from_str(&s.spec).ok());
        let data = serde_json::json!({
            "scheduleId": run.schedule_id,
            "runId": run.id,
            "crawlId": crawl_id,
            "status": crawl.status,
            "scheduledFor": rfc3339(run.scheduled_for),
            "summary": summary,
        });
        let hook = spec
            .as_ref()
            .and_then(|s| s.webhook.as_ref())
            .map(|w| w.url.as_str());
        let message = crawl.error_message.clone();
        if app
            .store
            .finish_schedule_run(
                &run,
                state,
                Some(&serde_json::to_string(&summary).unwrap_or_default()),
                message.as_deref(),
                Some(("schedule.run.completed", data, hook)),
            )
            .await?
        {
            if let Some(spec) = &spec {
                app.store
                    .trim_schedule_runs(&run.schedule_id, spec.history_limit())
                    .await?;
            }
        }
    }
    Ok(())
}
