//! Batch scrape: POST /v1/batch/scrape runs a list of URLs as a crawl whose
//! URLs are given (same frontier, workers, restart safety, operator path,
//! billing and events); GET/DELETE/events/errors are crawl's, for batches.

use crate::body;
use crate::context::Caller;
use crate::error::{ApiError, ApiResult};
use crate::idempotency::{self, Claim};
use crate::routes::crawl::{self, PageQuery};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::Extension;
use webdata_core::store::crawl::KIND_BATCH;
use webdata_core::types::{BatchScrapeRequest, BATCH_URLS_MAX};
use webdata_core::validate;

/// `POST /v1/batch/scrape`: 202 with the job id; refused URLs are named
/// (or, with `ignoreInvalidURLs`, listed in `invalidURLs` and skipped).
pub async fn start(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (req, value): (BatchScrapeRequest, _) = body::json(&headers, b).await?;
    if req.urls.is_empty() || req.urls.len() > BATCH_URLS_MAX {
        return Err(ApiError::invalid(format!(
            "`urls` must hold 1 to {BATCH_URLS_MAX} URLs (got {})",
            req.urls.len()
        )));
    }
    let ignore_invalid = req.ignore_invalid_urls.unwrap_or(false);
    let mut valid = Vec::with_capacity(req.urls.len());
    let mut invalid = Vec::new();
    for (i, u) in req.urls.iter().enumerate() {
        let field = format!("urls[{i}]");
        let checked = validate::check_url(&field, u)
            .map_err(ApiError::from)
            .and_then(|_| {
                app.engine
                    .check_url(u)
                    .map_err(|e| ApiError::new(e.code, format!("{field}: {}", e.message)))
            });
        match checked {
            Ok(_) => valid.push(u.trim().to_string()),
            Err(_) if ignore_invalid => invalid.push(u.clone()),
            Err(e) => return Err(e),
        }
    }
    if valid.is_empty() {
        return Err(ApiError::invalid(
            "`urls` holds no URL that can be scraped (all were invalid or refused)",
        ));
    }
    let stored = req.as_crawl(&valid);
    validate::check_crawl_request(&stored)
        .map_err(|e| ApiError::new(e.code, e.message.replace("`url`", "`urls[0]`")))?;
    if let Some(w) = &stored.webhook {
        app.engine
            .check_url(&w.url)
            .map_err(|e| ApiError::new(e.code, format!("webhook.url: {}", e.message)))?;
    }
    let claim =
        match idempotency::claim(&app, &caller, &headers, "POST /v1/batch/scrape", &value).await? {
            Claim::Replay(resp) => return Ok(resp),
            Claim::Run(c) => c,
        };
    crawl::can_start(&caller, "a batch scrape")?;
    let request_json =
        serde_json::to_string(&stored).map_err(|e| ApiError::internal(e.to_string()))?;
    let mut extra = serde_json::Map::new();
    extra.insert("invalidURLs".into(), serde_json::json!(invalid));
    crawl::create_and_launch(
        &app,
        &caller,
        claim,
        &stored,
        &request_json,
        Some(&valid),
        Some(extra),
    )
    .await
}

/// `GET /v1/batch/scrape/{id}`
pub async fn get(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Query(q): Query<PageQuery>,
) -> ApiResult<Response> {
    crawl::get_kind(app, caller, id, q, KIND_BATCH).await
}

/// `DELETE /v1/batch/scrape/{id}`
pub async fn cancel(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    crawl::cancel_kind(app, caller, id, KIND_BATCH).await
}

/// `GET /v1/batch/scrape/{id}/events`
pub async fn events(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    crawl::events_kind(app, caller, id, headers, KIND_BATCH).await
}

/// `GET /v1/batch/scrape/{id}/errors`
pub async fn errors(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    crawl::errors_kind(app, caller, id, KIND_BATCH).await
}
