//! `POST /v1/extract`: validate (the schema compiled offline), answer 501
//! `not_configured` when no model is set (before any credit is held), hold
//! 5 credits plus 1 per URL, scrape the URLs concurrently through the
//! engine, trim their markdown to the token budget, ask the model, check its
//! JSON against the schema (one retry showing the errors), settle 5 + the
//! billable scrapes. Every failure costs 0.

use crate::body;
use crate::context::{request_id, Caller};
use crate::credits::CreditHold;
use crate::error::{ApiError, ApiResult};
use crate::services::llm::{self as ex, ChatModel, Message};
use crate::services::scrape::scrape_document;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Extension, Json};
use futures::StreamExt;
use std::time::Instant;
use webdata_core::types::{
    ExtractRequest, ExtractResponse, ExtractSource, Format, ScrapeOptions, ScrapeRequest,
};
use webdata_core::{validate, ErrorCode};

/// Credits of one successful extract (the model calls), on top of 1 per
/// page read.
pub const EXTRACT_CREDITS: i64 = 5;
/// Pages scraped at once.
pub const SCRAPE_CONCURRENCY: usize = 5;

/// What an extract request must pass before anything is held: its fields,
/// its schema, and a configured model. Returns the compiled schema and the
/// model.
fn accepted(
    app: &AppState,
    req: &ExtractRequest,
) -> ApiResult<(Option<jsonschema::Validator>, std::sync::Arc<ChatModel>)> {
    validate::check_extract_request(req)?;
    let validator =
        match &req.schema {
            Some(s) => Some(ex::compile_schema(s).map_err(|m| {
                ApiError::invalid(format!("`schema` is not a valid JSON Schema: {m}"))
            })?),
            None => None,
        };
    let Some(model) = app.model.clone() else {
        return Err(ApiError::new(
            ErrorCode::NotConfigured,
            "extract is not configured on this deployment (set WEBDATA_LLM_BASE_URL and WEBDATA_LLM_MODEL)",
        ));
    };
    Ok((validator, model))
}

/// [`accepted`] for a request body given as JSON (the Firecrawl extract
/// job checks it before it answers with a job id).
pub(crate) fn precheck(app: &AppState, body: serde_json::Value) -> ApiResult<()> {
    let req: ExtractRequest = body::from_value(body)?;
    accepted(app, &req).map(|_| ())
}

/// The handler.
pub async fn extract(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Json<ExtractResponse>> {
    let started = Instant::now();
    let (req, _): (ExtractRequest, _) = body::json(&headers, b).await?;
    let (validator, model) = accepted(&app, &req)?;
    let worst = EXTRACT_CREDITS + req.urls.len() as i64;
    let hold = CreditHold::reserve(&app, &caller, "extract", worst).await?;

    // Read the pages. The model reads markdown, so it is always asked for.
    let mut options: ScrapeOptions = req.scrape_options.clone().unwrap_or_default();
    let mut formats = options.formats();
    if !formats.contains(&Format::Markdown) {
        formats.push(Format::Markdown);
    }
    options.formats = Some(formats);
    // Half the request's time for reading, the rest for the model.
    let deadline = tokio::time::Instant::now() + app.config.request_timeout / 2;
    let (app_ref, caller_ref, headers_ref) = (&app, &caller, &headers);
    let requests: Vec<ScrapeRequest> = req
        .urls
        .iter()
        .map(|u| ScrapeRequest {
            url: u.trim().to_string(),
            options: options.clone(),
        })
        .collect();
    let outcomes: Vec<Result<String, String>> =
        futures::stream::iter(requests.into_iter().map(|sreq| async move {
            match tokio::time::timeout_at(
                deadline,
                scrape_document(app_ref, caller_ref, headers_ref, &sreq),
            )
            .await
            {
                Ok(Ok(s)) if s.billable => Ok(s.document.markdown.unwrap_or_default()),
                Ok(Ok(s)) => Err(s
                    .document
                    .quality
                    .and_then(|q| q.reason)
                    .unwrap_or_else(|| "the page answered with an error".into())),
                Ok(Err(e)) => Err(format!("{}: {}", e.code.as_str(), e.message)),
                Err(_) => Err("timeout: the page was not read in time".into()),
            }
        }))
        .buffered(SCRAPE_CONCURRENCY)
        .collect()
        .await;
    let mut sources = Vec::new();
    let mut pages = Vec::new();
    for (u, o) in req.urls.iter().zip(outcomes) {
        match o {
            Ok(md) => {
                pages.push((u.clone(), md));
                sources.push(ExtractSource {
                    url: u.clone(),
                    ok: true,
                    error: None,
                    trimmed: false,
                });
            }
            Err(why) => {
                tracing::info!(url = %u, error = %why, "extract page not read (0 credits)");
                sources.push(ExtractSource {
                    url: u.clone(),
                    ok: false,
                    error: Some(why),
                    trimmed: false,
                });
            }
        }
    }
    if pages.is_empty() {
        hold.settle(0).await?;
        let first = sources
            .first()
            .and_then(|s| s.error.clone())
            .unwrap_or_default();
        return Err(ApiError::new(
            ErrorCode::FetchFailed,
            format!("none of the `urls` could be read (first: {first})"),
        ));
    }
    let read = pages.len() as i64;

    // Bound the input, then ask.
    let texts = ex::trim_pages(&pages, model.max_input_tokens);
    let trimmed = texts.iter().filter(|t| t.trimmed).count();
    for t in &texts {
        if let Some(s) = sources.iter_mut().find(|s| s.ok && s.url == t.url) {
            s.trimmed = t.trimmed;
        }
    }
    if trimmed > 0 {
        tracing::info!(
            pages = texts.len(),
            trimmed,
            budget = model.max_input_tokens,
            "extract pages trimmed to the model's input budget"
        );
    }
    let messages = ex::first_messages(req.prompt.as_deref(), req.schema.as_ref(), &texts);
    let json_mode = ex::wants_object(req.schema.as_ref());
    let data = match ask(&app, &model, &messages, json_mode, validator.as_ref()).await {
        Ok(v) => v,
        Err(e) => {
            hold.settle(0).await?;
            return Err(e);
        }
    };
    let charged = hold.settle(EXTRACT_CREDITS + read).await?;
    tracing::info!(
        model = model.model(),
        urls = req.urls.len(),
        read,
        trimmed,
        credits = charged,
        ms = started.elapsed().as_millis() as u64,
        "extract finished"
    );
    Ok(Json(ExtractResponse {
        success: true,
        data,
        sources,
        credits_used: charged,
        request_id: Some(request_id()),
    }))
}

/// The model call, and one retry showing the validation errors (also used
/// by change tracking's `json` mode).
pub(crate) async fn ask(
    app: &AppState,
    model: &ChatModel,
    messages: &[Message],
    json_mode: bool,
    validator: Option<&jsonschema::Validator>,
) -> ApiResult<serde_json::Value> {
    let call = |m: Vec<Message>| async move {
        app.metrics.add("extract_model_calls", 1);
        model
            .complete(&m, json_mode)
            .await
            .map_err(|e| ApiError::new(e.code, e.message))
    };
    let answer = call(messages.to_vec()).await?;
    let errors = match ex::check_answer(validator, &answer) {
        Ok(v) => return Ok(v),
        Err(errors) => errors,
    };
    tracing::info!(errors = ?errors, "the model's answer does not match the schema; retrying once");
    let retry = ex::retry_messages(messages, &answer, &errors);
    let answer = call(retry).await?;
    ex::check_answer(validator, &answer).map_err(|errors| {
        tracing::info!(errors = ?errors, "the model's second answer does not match the schema either (0 credits)");
        let shown: Vec<&str> = errors.iter().take(3).map(String::as_str).collect();
        ApiError::new(
            ErrorCode::ExtractFailed,
            format!(
                "the model could not produce JSON matching the schema after one retry: {}",
                shown.join("; ")
            ),
        )
    })
}
