//! `POST /v1/scrape`: validate, claim the idempotency key, reserve one
//! credit, run the engine, settle (1 for a page returned, 0 otherwise).

use crate::body;
use crate::context::{request_id, Caller};
use crate::credits::CreditHold;
use crate::error::{ApiError, ApiResult};
use crate::idempotency::{self, Claim};
use crate::routes::extract::EXTRACT_CREDITS;
use crate::services::llm::{self as ex, ChatModel};
use crate::services::scrape::scrape_document;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use std::time::Instant;
use webdata_core::types::{ScrapeOptions, ScrapeRequest};
use webdata_core::{validate, ErrorCode};
use webdata_engine::changes::{FieldReader, TrackError};

/// Change tracking's `json` mode: the schema compiles (offline) and a model
/// is configured; returns the schema's validator.
fn json_mode_ready(
    app: &AppState,
    options: &ScrapeOptions,
) -> ApiResult<Option<jsonschema::Validator>> {
    let ct = options.change_tracking_options.as_ref();
    let validator = match ct.and_then(|c| c.schema.as_ref()) {
        Some(s) => Some(ex::compile_schema(s).map_err(|m| {
            ApiError::invalid(format!(
                "`changeTrackingOptions.schema` is not a valid JSON Schema: {m}"
            ))
        })?),
        None => None,
    };
    if app.model.is_none() {
        return Err(ApiError::new(
            ErrorCode::NotConfigured,
            "`changeTrackingOptions.modes`: the `json` mode needs the extract model, which is not configured on this deployment (set WEBDATA_LLM_BASE_URL and WEBDATA_LLM_MODEL)",
        ));
    }
    Ok(validator)
}

/// The extract model reading the `json` mode's fields from one page.
struct ModelFields<'a> {
    app: &'a AppState,
    model: &'a ChatModel,
    prompt: Option<&'a str>,
    schema: Option<&'a serde_json::Value>,
    validator: Option<&'a jsonschema::Validator>,
}

impl FieldReader for ModelFields<'_> {
    async fn read(
        &self,
        url: &str,
        markdown: &str,
    ) -> Result<serde_json::Value, (ErrorCode, String)> {
        let pages = ex::trim_pages(
            &[(url.to_string(), markdown.to_string())],
            self.model.max_input_tokens,
        );
        let messages = ex::first_messages(self.prompt, self.schema, &pages);
        crate::routes::extract::ask(self.app, self.model, &messages, true, self.validator)
            .await
            .map_err(|e| (e.code, e.message))
    }
}

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
    // Change tracking's `json` mode needs the extract model; checked before
    // anything is held.
    let json_mode = req.options.change_json_wanted();
    let validator = if json_mode {
        json_mode_ready(&app, &req.options)?
    } else {
        None
    };
    let worst = 1 + if json_mode { EXTRACT_CREDITS } else { 0 };
    let hold = CreditHold::reserve(&app, &caller, "scrape", worst).await?;
    let tracked = req.options.tracks_changes();
    let mut req = req;
    let markdown_asked = webdata_engine::changes::ensure_markdown(&mut req.options);
    match scrape_document(&app, &caller, &headers, &req).await {
        Ok(mut scraped) => {
            let mut fields_read = false;
            let mut snapshot = None;
            if tracked {
                let tracking = webdata_engine::changes::Tracking {
                    store: &app.store,
                    org_id: &caller.org.id,
                    options: &req.options,
                    found: webdata_engine::changes::Found::Visible,
                    crawl_id: None,
                    markdown_asked,
                    billable: scraped.billable,
                    // Written with the charge below: a failed charge keeps
                    // the baseline, so the retry reports the change again.
                    defer_write: true,
                };
                let ct = req.options.change_tracking_options.as_ref();
                let reader = app.model.as_deref().map(|model| ModelFields {
                    app: &app,
                    model,
                    prompt: ct.and_then(|c| c.prompt.as_deref()),
                    schema: ct.and_then(|c| c.schema.as_ref()),
                    validator: validator.as_ref(),
                });
                match tracking.run(&mut scraped.document, reader.as_ref()).await {
                    Ok(t) => {
                        fields_read = t.fields_read;
                        snapshot = t.write;
                    }
                    Err(e) => {
                        hold.settle(0).await?;
                        return Err(match e {
                            TrackError::Store(e) => e.into(),
                            TrackError::Fields(code, message) => ApiError::new(
                                code,
                                format!("changeTracking `json` mode: {message}"),
                            ),
                        });
                    }
                }
            }
            let charge =
                i64::from(scraped.billable) + if fields_read { EXTRACT_CREDITS } else { 0 };
            let (rid, latency) = (request_id(), started.elapsed().as_millis() as i64);
            let data = scraped.document;
            // The charge and the answer a retry replays commit together.
            let body = hold
                .settle_answering(charge, claim, StatusCode::OK, snapshot, |charged| {
                    serde_json::json!({
                        "success": true,
                        "data": data,
                        "credits_used": charged,
                        "request_id": rid,
                        "latency_ms": latency,
                    })
                })
                .await?;
            Ok((StatusCode::OK, axum::Json(body)).into_response())
        }
        Err(e) => {
            hold.settle(0).await?;
            Err(e)
        }
    }
}
