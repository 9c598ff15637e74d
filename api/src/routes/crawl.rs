//! Crawls: POST /v1/crawl (202 CrawlJob), GET /v1/crawl/{id} (status and a
//! page of documents with a cursor), DELETE /v1/crawl/{id} (cancel), and
//! GET /v1/crawl/{id}/events (server-sent events replayed from the store).

use crate::body;
use crate::context::{request_id, Caller};
use crate::error::{ApiError, ApiResult};
use crate::idempotency::{self, Claim};
use crate::services::crawls;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use webdata_core::store::crawl::KIND_CRAWL;
use webdata_core::store::{rfc3339, CrawlRow, CrawlStatus, Placement};
use webdata_core::types::CrawlRequest;
use webdata_core::{validate, ErrorCode, Store};
use webdata_engine::Engine;

fn job(c: &CrawlRow) -> serde_json::Value {
    serde_json::json!({
        "success": true,
        "id": c.id,
        "status": c.status,
        "url": c.url,
        "createdAt": rfc3339(c.created_at),
        "credits_used": 0,
        "request_id": request_id(),
    })
}

/// `POST /v1/crawl`.
pub async fn start(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (req, value): (CrawlRequest, _) = body::json(&headers, b).await?;
    validate::check_crawl_request(&req)?;
    Engine::check_path_filters(
        req.include_paths.as_deref().unwrap_or_default(),
        req.exclude_paths.as_deref().unwrap_or_default(),
    )?;
    app.engine.check_url(&req.url)?;
    if let Some(prev) = &req.resume_from {
        check_resume_from(&app, &caller, &req.url, prev).await?;
    }
    if let Some(w) = &req.webhook {
        app.engine
            .check_url(&w.url)
            .map_err(|e| ApiError::new(e.code, format!("webhook.url: {}", e.message)))?;
    }
    let claim = match idempotency::claim(&app, &caller, &headers, "POST /v1/crawl", &value).await? {
        Claim::Replay(resp) => return Ok(resp),
        Claim::Run(c) => c,
    };
    can_start(&caller, "a crawl")?;
    let mut stored = req.clone();
    stored.url = req.url.trim().to_string();
    let request_json =
        serde_json::to_string(&stored).map_err(|e| ApiError::internal(e.to_string()))?;
    create_and_launch(&app, &caller, claim, &stored, &request_json, None, None).await
}

/// `resumeFrom` names an ended crawl of the caller's organization that
/// started at the same URL.
/// A crawl, batch or llms.txt job (`what`) starts only when the
/// organization has a credit and the key's budget is not spent.
pub(crate) fn can_start(caller: &Caller, what: &str) -> ApiResult<()> {
    if caller.org.credits < 1 {
        return Err(ApiError::new(
            ErrorCode::InsufficientCredits,
            format!("{what} needs at least 1 credit to start (1 credit per page scraped)"),
        ));
    }
    if caller.key.budget.is_some_and(|b| caller.key.spent >= b) {
        return Err(ApiError::new(
            ErrorCode::InsufficientCredits,
            "this playground key has spent its credits",
        ));
    }
    Ok(())
}

async fn check_resume_from(
    app: &AppState,
    caller: &Caller,
    url: &str,
    prev: &str,
) -> ApiResult<()> {
    let old = app
        .store
        .get_crawl(prev)
        .await?
        .filter(|c| c.org_id == caller.org.id && c.kind == KIND_CRAWL)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("resumeFrom: no crawl `{prev}` in this organization"),
            )
        })?;
    if !old.is_finished() {
        return Err(ApiError::invalid(format!(
            "resumeFrom: crawl `{prev}` is still {}; cancel it (DELETE /v1/crawl/{prev}) or let it end first",
            old.status
        )));
    }
    if old.url.trim() != url.trim() {
        return Err(ApiError::invalid(format!(
            "resumeFrom: crawl `{prev}` started at {}; a resumed crawl starts at the same url",
            old.url
        )));
    }
    Ok(())
}

/// Stores a crawl (or, with `seeds`, a batch scrape over those URLs),
/// launches it (a CrawlJob in cluster mode, else the local runner) and
/// answers 202 with the job, plus `extra` fields.
pub(crate) async fn create_and_launch(
    app: &AppState,
    caller: &Caller,
    claim: Option<idempotency::Held>,
    stored: &CrawlRequest,
    request_json: &str,
    seeds: Option<&[String]>,
    extra: Option<serde_json::Map<String, serde_json::Value>>,
) -> ApiResult<Response> {
    let row = launch(app, caller, stored, request_json, seeds).await?;
    let mut body = job(&row);
    for (k, v) in extra.unwrap_or_default() {
        body[k] = v;
    }
    if let Some(c) = claim {
        c.complete(StatusCode::ACCEPTED, &body).await;
    }
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// Creates the crawl (or, with `seeds`, the batch scrape) and hands it to
/// the cluster or the in-process workers.
pub(crate) async fn launch(
    app: &AppState,
    caller: &Caller,
    stored: &CrawlRequest,
    request_json: &str,
    seeds: Option<&[String]>,
) -> ApiResult<CrawlRow> {
    let id = match seeds {
        None => Store::new_crawl_id(),
        Some(_) => Store::new_batch_id(),
    };
    launch_as(app, caller, &id, stored, request_json, seeds).await
}

/// [`launch`] under a given id (an llms.txt job's `llmstxt_…`).
pub(crate) async fn launch_as(
    app: &AppState,
    caller: &Caller,
    id: &str,
    stored: &CrawlRequest,
    request_json: &str,
    seeds: Option<&[String]>,
) -> ApiResult<CrawlRow> {
    let placement = match &app.kube {
        Some(k) => Placement {
            pool: k.pool.clone(),
            admitted: false,
            renders: stored.renders_every_page(),
            launcher: "kube".into(),
        },
        None => Placement::default(),
    };
    let row = match seeds {
        None => {
            app.store
                .create_crawl_in(
                    id,
                    &caller.org.id,
                    Some(&caller.key.id),
                    &stored.url,
                    request_json,
                    stored.limit(),
                    &placement,
                )
                .await?
        }
        Some(urls) => {
            app.store
                .create_batch_in(
                    id,
                    &caller.org.id,
                    Some(&caller.key.id),
                    urls,
                    request_json,
                    &placement,
                )
                .await?
        }
    };
    if let Some(k) = &app.kube {
        if let Err(msg) = k.launch(&row, stored).await {
            tracing::error!(crawl = %row.id, error = %msg, "could not launch the crawl in the cluster");
            app.store
                .finish_crawl(
                    &row.id,
                    CrawlStatus::Failed,
                    Some((
                        "internal",
                        &format!("the crawl could not be launched: {msg}"),
                    )),
                )
                .await?;
            return Err(ApiError::internal(format!(
                "the crawl could not be launched in the cluster ({msg}); crawl {} failed and nothing was charged",
                row.id
            )));
        }
    }
    if let Some(r) = &app.runner {
        r.wake();
    }
    Ok(row)
}

/// Query of GET /v1/crawl/{id}.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageQuery {
    cursor: Option<String>,
    limit: Option<String>,
}

fn decode_cursor(c: &str) -> ApiResult<i64> {
    crawls::cursor_seq(c).ok_or_else(|| ApiError::invalid("`cursor` is not a cursor this API issued; pass the `next` value of the previous response"))
}

/// `GET /v1/crawl/{id}`.
pub async fn get(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> ApiResult<Response> {
    get_kind(app, caller, id, q, KIND_CRAWL).await
}

/// Status and a page of documents of a crawl or batch scrape.
pub(crate) async fn get_kind(
    app: AppState,
    caller: Caller,
    id: String,
    q: PageQuery,
    kind: &str,
) -> ApiResult<Response> {
    let limit = match q.limit.as_deref() {
        None => 50,
        Some(l) => match l.parse::<i64>() {
            Ok(n) if (1..=100).contains(&n) => n,
            _ => {
                return Err(ApiError::invalid(format!(
                    "`limit` must be an integer between 1 and 100 (got `{l}`)"
                )))
            }
        },
    };
    let after = match q.cursor.as_deref() {
        Some(c) if !c.is_empty() => decode_cursor(c)?,
        _ => 0,
    };
    let crawl = crawls::owned(&app, &caller, &id, kind).await?;
    let (data, last) = crawls::documents_after(&app, &crawl, after, limit).await?;
    let next = if crawl.is_finished() && last >= crawl.doc_seq {
        serde_json::Value::Null
    } else {
        serde_json::Value::String(crawls::encode_cursor(last))
    };
    let mut body = webdata_engine::crawl::status_json(&crawl);
    body["success"] = true.into();
    body["createdAt"] = rfc3339(crawl.created_at).into();
    body["data"] = data.into();
    body["next"] = next;
    body["request_id"] = request_id().into();
    Ok(Json(body).into_response())
}

/// `DELETE /v1/crawl/{id}`: cancels; scraped pages stay available and charged.
pub async fn cancel(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    cancel_kind(app, caller, id, KIND_CRAWL).await
}

/// Cancels a crawl or batch scrape.
pub(crate) async fn cancel_kind(
    app: AppState,
    caller: Caller,
    id: String,
    kind: &str,
) -> ApiResult<Response> {
    let crawl = crawls::owned(&app, &caller, &id, kind).await?;
    crawls::cancel(&app, &crawl).await?;
    let crawl = crawls::owned(&app, &caller, &id, kind).await?;
    Ok(Json(job(&crawl)).into_response())
}

/// `GET /v1/crawl/{id}/events`: replays every event after `Last-Event-ID`,
/// follows the crawl, closes after `done`.
pub async fn events(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    events_kind(app, caller, id, headers, KIND_CRAWL).await
}

/// The event stream of a crawl or batch scrape.
pub(crate) async fn events_kind(
    app: AppState,
    caller: Caller,
    id: String,
    headers: HeaderMap,
    kind: &str,
) -> ApiResult<Response> {
    crawls::owned(&app, &caller, &id, kind).await?;
    let after = match headers.get("last-event-id").and_then(|v| v.to_str().ok()) {
        None | Some("") => 0,
        Some(v) => v.trim().parse::<i64>().map_err(|_| {
            ApiError::invalid(format!(
                "`Last-Event-ID` must be an event id from this stream (got `{v}`)"
            ))
        })?,
    };
    Ok(crawls::event_stream(&app, id, after))
}

/// Entries of each list `GET /v1/crawl/{id}/errors` returns at most.
pub const ERRORS_MAX: i64 = 10_000;

/// `GET /v1/crawl/{id}/errors`: every URL that failed for good with its
/// error code and message, and the URLs robots.txt kept out.
pub async fn errors(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    errors_kind(app, caller, id, KIND_CRAWL).await
}

/// Why pages of a crawl or batch scrape failed.
pub(crate) async fn errors_kind(
    app: AppState,
    caller: Caller,
    id: String,
    kind: &str,
) -> ApiResult<Response> {
    let crawl = crawls::owned(&app, &caller, &id, kind).await?;
    let failed = app.store.failed_urls(&crawl.id, ERRORS_MAX).await?;
    let blocked = app.store.robots_blocked(&crawl.id, ERRORS_MAX).await?;
    Ok(Json(serde_json::json!({
        "success": true,
        "errors": failed,
        "robotsBlocked": blocked,
        "credits_used": 0,
        "request_id": request_id(),
    }))
    .into_response())
}
