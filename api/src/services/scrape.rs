//! One page through the scrape cache or the engine, with its brand and
//! screenshot resolved: the Document that scrape, search and extract return.

use crate::context::Caller;
use crate::error::ApiResult;
use crate::services::{blobs, brand};
use crate::state::AppState;
use axum::http::HeaderMap;
use webdata_core::types::ScrapeRequest;

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
        scraped.document.brand = brand::for_scraped_page(app, headers, &page)
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
        scraped.document.screenshot = Some(blobs::signed_url(app, headers, &id, expires));
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
