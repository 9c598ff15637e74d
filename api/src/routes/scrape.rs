//! `POST /v1/scrape`: validate, claim the idempotency key, reserve one
//! credit, run the engine, settle (1 for a page returned, 0 otherwise).

use crate::app::AppState;
use crate::body;
use crate::context::{request_id, Caller};
use crate::credits::CreditHold;
use crate::error::{ApiError, ApiResult};
use crate::idempotency::{self, Claim};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use std::time::Instant;
use webdata_core::types::{ScrapeOptions, ScrapeRequest};
use webdata_core::validate;

/// Splits the body into `url` and ScrapeOptions, naming any unknown field.
pub fn parse_scrape_request(mut v: serde_json::Value) -> ApiResult<ScrapeRequest> {
    let obj = v
        .as_object_mut()
        .ok_or_else(|| ApiError::invalid("the request body must be a JSON object"))?;
    if let Some(unknown) = obj
        .keys()
        .find(|k| k.as_str() != "url" && !ScrapeOptions::FIELDS.contains(&k.as_str()))
    {
        return Err(ApiError::invalid(format!(
            "unknown field `{unknown}`; expected `url` or one of {}",
            ScrapeOptions::FIELDS.join(", ")
        )));
    }
    let url = match obj.remove("url") {
        None | Some(serde_json::Value::Null) => return Err(ApiError::invalid("`url` is required")),
        Some(serde_json::Value::String(s)) => s,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "`url` must be a string (got {})",
                json_kind(&other)
            )))
        }
    };
    let options: ScrapeOptions = body::from_value(v)?;
    Ok(ScrapeRequest { url, options })
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The handler.
pub async fn scrape(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let started = Instant::now();
    body::require_json(&headers)?;
    let bytes = body::read_body(b).await?;
    let value = body::parse_value(&bytes)?;
    let req = parse_scrape_request(value.clone())?;
    validate::check_url("url", &req.url)?;
    validate::check_scrape_options("", &req.options)?;
    let claim = match idempotency::claim(&app, &caller, &headers, "POST /v1/scrape", &value).await?
    {
        Claim::Replay(resp) => return Ok(resp),
        Claim::Run(c) => c,
    };
    let hold = CreditHold::reserve(&app, &caller, "scrape", 1).await?;
    match scrape_document(&app, &caller, &headers, &req).await {
        Ok(scraped) => {
            let charged = hold.settle(if scraped.billable { 1 } else { 0 }).await?;
            let body = serde_json::json!({
                "success": true,
                "data": scraped.document,
                "credits_used": charged,
                "request_id": request_id(),
                "latency_ms": started.elapsed().as_millis() as i64,
            });
            if let Some(c) = claim {
                c.complete(StatusCode::OK, &body).await;
            }
            Ok((StatusCode::OK, axum::Json(body)).into_response())
        }
        Err(e) => {
            hold.settle(0).await?;
            Err(e)
        }
    }
}

/// One page through the cache or the engine, with its brand and screenshot
/// resolved: what scrape, search and extract return as a Document. The
/// caller bills it (1 when `billable`).
pub async fn scrape_document(
    app: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    req: &ScrapeRequest,
) -> ApiResult<webdata_engine::scrape::Scraped> {
    let key = webdata_engine::scrape::cache_key(req);
    let cached = cached_document(app, req, &key).await?;
    let was_cached = cached.is_some();
    let mut scraped = match cached {
        Some(hit) => hit,
        None => app.engine.scrape(req).await?,
    };
    if let Some(page) = scraped.brand_page.take() {
        scraped.document.brand = crate::routes::brand::for_scraped_page(app, headers, &page)
            .await
            .and_then(|b| serde_json::to_value(b).ok());
    }
    if let Some(png) = scraped.screenshot.take() {
        let (id, expires) = app
            .store
            .put_blob(
                &caller.org.id,
                "image/png",
                &png,
                app.config.screenshot_ttl_ms,
            )
            .await?;
        scraped.document.screenshot =
            Some(crate::routes::blobs::signed_url(app, headers, &id, expires));
    } else if !was_cached && scraped.billable {
        store_in_cache(app, req, &key, &scraped).await;
    }
    Ok(scraped)
}

/// A cached document younger than `maxAge`, marked `cached: true`. The URL
/// still passes the network guard, whose settings may have changed.
async fn cached_document(
    app: &AppState,
    req: &ScrapeRequest,
    key: &str,
) -> ApiResult<Option<webdata_engine::scrape::Scraped>> {
    let max_age = req.options.max_age_ms();
    if max_age <= 0 {
        return Ok(None);
    }
    let Some(hit) = app.store.cache_get(key, max_age).await? else {
        return Ok(None);
    };
    app.engine.check_url(&req.url)?;
    let Ok(mut document) = serde_json::from_str::<webdata_core::types::Document>(&hit.document)
    else {
        return Ok(None);
    };
    document.cached = Some(true);
    document.url = req.url.clone();
    app.metrics.add("scrape_cache_hits", 1);
    Ok(Some(webdata_engine::scrape::Scraped {
        document,
        billable: hit.billable,
        screenshot: None,
        brand_page: None,
    }))
}

async fn store_in_cache(
    app: &AppState,
    req: &ScrapeRequest,
    key: &str,
    scraped: &webdata_engine::scrape::Scraped,
) {
    match serde_json::to_string(&scraped.document) {
        Ok(json) => {
            if let Err(e) = app
                .store
                .cache_put(key, &req.url, &json, scraped.billable)
                .await
            {
                tracing::warn!(error = %e, "caching the scrape failed");
            }
        }
        Err(e) => tracing::warn!(error = %e, "serialising the scrape for the cache failed"),
    }
}
