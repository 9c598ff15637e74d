//! `POST /v1/scrape`: validate, claim the idempotency key, reserve one
//! credit, run the engine, settle (1 for a page returned, 0 otherwise).

use crate::body;
use crate::context::{request_id, Caller};
use crate::credits::CreditHold;
use crate::error::{ApiError, ApiResult};
use crate::idempotency::{self, Claim};
use crate::services::scrape::scrape_document;
use crate::state::AppState;
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
    let tracked = req.options.tracks_changes();
    let mut req = req;
    let markdown_asked = webdata_engine::changes::ensure_markdown(&mut req.options);
    match scrape_document(&app, &caller, &headers, &req).await {
        Ok(mut scraped) => {
            if tracked {
                webdata_engine::changes::track(
                    &app.store,
                    &caller.org.id,
                    &req.options,
                    &mut scraped.document,
                    webdata_engine::changes::Found::Visible,
                    None,
                    markdown_asked,
                )
                .await?;
            }
            let (rid, latency) = (request_id(), started.elapsed().as_millis() as i64);
            let data = scraped.document;
            // The charge and the answer a retry replays commit together.
            let body = hold
                .settle_answering(
                    if scraped.billable { 1 } else { 0 },
                    claim,
                    StatusCode::OK,
                    |charged| {
                        serde_json::json!({
                            "success": true,
                            "data": data,
                            "credits_used": charged,
                            "request_id": rid,
                            "latency_ms": latency,
                        })
                    },
                )
                .await?;
            Ok((StatusCode::OK, axum::Json(body)).into_response())
        }
        Err(e) => {
            hold.settle(0).await?;
            Err(e)
        }
    }
}
