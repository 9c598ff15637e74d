//! `POST /v1/search`: validate, answer 501 `not_configured` when no provider
//! is set (before any credit is held), hold 1 credit plus 1 per result to
//! scrape, ask the provider, scrape the results concurrently through the
//! engine, settle 1 + the billable scrapes (0 when the provider fails).

use crate::body;
use crate::context::{request_id, Caller};
use crate::credits::CreditHold;
use crate::error::{ApiError, ApiResult};
use crate::services::scrape::scrape_document;
use crate::services::search::SearchQuery;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Extension, Json};
use futures::StreamExt;
use std::time::{Duration, Instant};
use webdata_core::types::{ScrapeRequest, SearchRequest, SearchResponse};
use webdata_core::{validate, ErrorCode};

/// Credits of one search, whatever the number of results (0 when the
/// provider fails). Scraped results cost 1 each on top, like a scrape.
pub const SEARCH_CREDITS: i64 = 1;
/// Results scraped at once.
pub const SCRAPE_CONCURRENCY: usize = 5;

/// The handler.
pub async fn search(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Json<SearchResponse>> {
    let started = Instant::now();
    let (req, _): (SearchRequest, _) = body::json(&headers, b).await?;
    validate::check_search_request(&req)?;
    let Some(provider) = app.search.clone() else {
        return Err(ApiError::new(
            ErrorCode::NotConfigured,
            "search is not configured on this deployment (set WEBDATA_SEARXNG_URL)",
        ));
    };
    let limit = req.limit();
    let worst = SEARCH_CREDITS
        + if req.scrape_options.is_some() {
            limit
        } else {
            0
        };
    let hold = CreditHold::reserve(&app, &caller, "search", worst).await?;
    let query = SearchQuery {
        query: req.query.trim().to_string(),
        limit: limit.max(1) as usize,
        country: req.country.clone(),
        language: req.language.clone(),
        time_range: req.time_range,
    };
    let mut results = match provider.search(&query).await {
        Ok(r) => r,
        Err(e) => {
            hold.settle(0).await?;
            tracing::info!(provider = provider.name(), code = e.code.as_str(), error = %e.message, "search failed (0 credits)");
            return Err(ApiError::new(e.code, e.message));
        }
    };
    app.metrics.add("search_requests", 1);
    let mut billable = 0i64;
    let mut failed = 0usize;
    if let Some(options) = &req.scrape_options {
        // Leave time to answer before the request timeout: a result still
        // being scraped then is returned without its document.
        let deadline = tokio::time::Instant::now()
            + app
                .config
                .request_timeout
                .saturating_sub(Duration::from_secs(5));
        let (app_ref, caller_ref, headers_ref) = (&app, &caller, &headers);
        let requests: Vec<ScrapeRequest> = results
            .iter()
            .map(|r| ScrapeRequest {
                url: r.url.clone(),
                options: options.clone(),
            })
            .collect();
        let outcomes: Vec<_> = futures::stream::iter(requests.into_iter().map(|sreq| {
            async move {
                let out = tokio::time::timeout_at(
                    deadline,
                    scrape_document(app_ref, caller_ref, headers_ref, &sreq),
                )
                .await;
                match out {
                    Ok(Ok(s)) => Some(s),
                    Ok(Err(e)) => {
                        tracing::info!(url = %sreq.url, code = e.code.as_str(), error = %e.message, "search result scrape failed (0 credits)");
                        None
                    }
                    Err(_) => {
                        tracing::info!(url = %sreq.url, "search result scrape ran out of time (0 credits)");
                        None
                    }
                }
            }
        }))
        .buffered(SCRAPE_CONCURRENCY)
        .collect()
        .await;
        for (r, o) in results.iter_mut().zip(outcomes) {
            match o {
                Some(s) => {
                    billable += i64::from(s.billable);
                    r.document = Some(s.document);
                }
                None => failed += 1,
            }
        }
    }
    let charged = hold.settle(SEARCH_CREDITS + billable).await?;
    tracing::info!(
        provider = provider.name(),
        results = results.len(),
        scraped = billable,
        scrape_failed = failed,
        credits = charged,
        ms = started.elapsed().as_millis() as u64,
        "search finished"
    );
    Ok(Json(SearchResponse {
        success: true,
        results,
        credits_used: charged,
        request_id: Some(request_id()),
    }))
}
