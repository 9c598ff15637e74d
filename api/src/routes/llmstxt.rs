//! llms.txt: POST /v1/llmstxt crawls a site (a crawl with an `llmstxt_` id:
//! same frontier, workers, billing, events) and GET /v1/llmstxt/{id} turns
//! its pages into llms.txt and llms-full.txt once it has completed;
//! DELETE cancels it as a crawl is cancelled.

use crate::body;
use crate::context::{request_id, Caller};
use crate::error::{ApiError, ApiResult};
use crate::idempotency::{self, Claim};
use crate::routes::crawl;
use crate::services::crawls;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use webdata_content::llmstxt::{self, Page};
use webdata_core::store::crawl::KIND_CRAWL;
use webdata_core::store::{new_id, rfc3339, CrawlRow, CrawlStatus};
use webdata_core::types::{
    llmstxt_status, LlmsTxtData, LlmsTxtError, LlmsTxtRequest, LlmsTxtStatus, LLMSTXT_ID_PREFIX,
};
use webdata_core::validate;
use webdata_engine::Engine;

/// Documents read from the store at a time while the files are built.
const READ_BATCH: i64 = 200;

/// `POST /v1/llmstxt`: 202 with the job (status `queued`).
pub async fn start(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (req, value): (LlmsTxtRequest, _) = body::json(&headers, b).await?;
    validate::check_llmstxt_request(&req)?;
    let stored = req.as_crawl();
    Engine::check_path_filters(
        stored.include_paths.as_deref().unwrap_or_default(),
        stored.exclude_paths.as_deref().unwrap_or_default(),
    )?;
    app.engine.check_url(&stored.url)?;
    let claim =
        match idempotency::claim(&app, &caller, &headers, "POST /v1/llmstxt", &value).await? {
            Claim::Replay(resp) => return Ok(resp),
            Claim::Run(c) => c,
        };
    crawl::can_start(&caller, "an llms.txt job")?;
    let request_json =
        serde_json::to_string(&stored).map_err(|e| ApiError::internal(e.to_string()))?;
    let row = crawl::launch_as(
        &app,
        &caller,
        &new_id(LLMSTXT_ID_PREFIX),
        &stored,
        &request_json,
        None,
    )
    .await?;
    let body = json(&status_of(&row, None));
    if let Some(c) = claim {
        c.complete(StatusCode::ACCEPTED, &body).await;
    }
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// `GET /v1/llmstxt/{id}`: status and counters; the files once completed.
pub async fn get(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let job = owned(&app, &caller, &id).await?;
    let data = if job.state() == Some(CrawlStatus::Completed) {
        Some(files(&app, &job).await?)
    } else {
        None
    };
    Ok(Json(json(&status_of(&job, data))).into_response())
}

/// `DELETE /v1/llmstxt/{id}`: cancels; scraped pages stay charged.
pub async fn cancel(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let job = owned(&app, &caller, &id).await?;
    crawls::cancel(&app, &job).await?;
    let job = owned(&app, &caller, &id).await?;
    Ok(Json(json(&status_of(&job, None))).into_response())
}

/// The llms.txt job `id` of the caller's organization; `not_found` for
/// anything else (another organization's job, a crawl or batch id).
async fn owned(app: &AppState, caller: &Caller, id: &str) -> ApiResult<CrawlRow> {
    let is_job = id
        .strip_prefix(LLMSTXT_ID_PREFIX)
        .is_some_and(|r| r.starts_with('_'));
    match app.store.get_crawl(id).await? {
        Some(c) if is_job && c.org_id == caller.org.id && c.kind == KIND_CRAWL => Ok(c),
        _ => Err(ApiError::not_found(format!(
            "llms.txt job `{id}` does not exist"
        ))),
    }
}

fn status_of(c: &CrawlRow, data: Option<LlmsTxtData>) -> LlmsTxtStatus {
    LlmsTxtStatus {
        success: true,
        id: c.id.clone(),
        status: llmstxt_status(&c.status).to_string(),
        url: c.url.clone(),
        created_at: rfc3339(c.created_at),
        completed: c.completed,
        total: c.total,
        failed: c.failed,
        credits_used: c.credits_used,
        error: match (&c.error_code, &c.error_message) {
            (Some(code), Some(message)) => Some(LlmsTxtError {
                code: code.clone(),
                message: message.clone(),
            }),
            _ => None,
        },
        data,
        request_id: request_id(),
    }
}

fn json(s: &LlmsTxtStatus) -> serde_json::Value {
    serde_json::to_value(s).unwrap_or_default()
}

/// One stored page, as the files need it.
struct Stored {
    url: String,
    requested: Option<String>,
    title: Option<String>,
    description: Option<String>,
    markdown: String,
}

/// Reads every document of the job (boilerplate removed; error pages, 400
/// and up, left out) and builds both files.
async fn files(app: &AppState, job: &CrawlRow) -> ApiResult<LlmsTxtData> {
    let boilerplate = webdata_engine::crawl::boilerplate_for(&app.store, job).await;
    let mut pages = Vec::new();
    let mut after = 0;
    loop {
        let batch = app
            .store
            .crawl_documents(&job.id, after, READ_BATCH)
            .await?;
        let n = batch.len() as i64;
        for (seq, url, text) in batch {
            after = seq;
            let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            if doc["metadata"]["statusCode"]
                .as_i64()
                .is_some_and(|s| s >= 400)
            {
                continue;
            }
            webdata_content::boilerplate::strip_document(&mut doc, &boilerplate);
            pages.push(stored_page(url, &doc));
        }
        if n < READ_BATCH {
            break;
        }
    }
    let view: Vec<Page<'_>> = pages
        .iter()
        .map(|p| Page {
            url: &p.url,
            requested_url: p.requested.as_deref(),
            title: p.title.as_deref(),
            description: p.description.as_deref(),
            markdown: &p.markdown,
        })
        .collect();
    let out = llmstxt::build(&job.url, &view);
    Ok(LlmsTxtData {
        llms_txt: out.llms_txt,
        llms_full_txt: out.llms_full_txt,
    })
}

/// A page's link is where it ended up when that is on the same host as the
/// URL crawled (a redirect inside the site), else the URL crawled.
fn stored_page(frontier_url: String, doc: &serde_json::Value) -> Stored {
    let asked = doc["url"].as_str().unwrap_or(&frontier_url).to_string();
    let host = |u: &str| {
        url::Url::parse(u)
            .ok()
            .map(|u| u.host_str().map(str::to_string))
    };
    let landed = doc["finalUrl"]
        .as_str()
        .filter(|f| host(f).is_some() && host(f) == host(&asked))
        .map(str::to_string);
    let text = |v: &serde_json::Value| v.as_str().map(str::to_string);
    let (url, requested) = match landed {
        Some(f) if f != asked => (f, Some(asked)),
        _ => (asked, None),
    };
    Stored {
        url,
        requested,
        title: text(&doc["metadata"]["title"]),
        description: text(&doc["metadata"]["description"]),
        markdown: doc["markdown"].as_str().unwrap_or_default().to_string(),
    }
}
