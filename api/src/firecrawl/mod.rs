//! A Firecrawl-compatible API, so that Firecrawl's clients (firecrawl-py,
//! @mendable/firecrawl-js, firecrawl-mcp, and the integrations built on
//! them) work once their API URL points here. Served under `/firecrawl`
//! on the main listener and at the root of `WEBDATA_FIRECRAWL_LISTEN`
//! (firecrawl-py's v2 client drops any path of its `api_url`).
//!
//! Each call is translated into our own `/v1` request and sent through the
//! application's router with the caller's `Authorization`, so keys,
//! credits, rate limits, idempotency, validation and the network guard are
//! exactly `/v1`'s; the answer is translated back into Firecrawl's shapes.

mod translate;

use crate::openapi::{ApiRouter, Body as DocBody, Op, Security};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use tower::ServiceExt;
pub use translate::{Refused, Version};

/// Documents per page of a status answer.
const PAGE: i64 = 100;

fn answer(status: StatusCode, body: Value) -> Response {
    let mut r = (status, axum::Json(body)).into_response();
    r.extensions_mut().insert(crate::error::Enveloped);
    r
}

fn ok(body: Value) -> Response {
    answer(StatusCode::OK, body)
}

/// Firecrawl's error body: `{success:false, error, code}`.
fn fail(status: StatusCode, message: &str, code: &str) -> Response {
    answer(status, crate::error::firecrawl_body(message, code))
}

fn refused(r: Refused) -> Response {
    fail(StatusCode::BAD_REQUEST, &r.message(), "invalid_request")
}

/// Our error envelope as Firecrawl's, same status.
fn from_ours(status: StatusCode, ours: &Value) -> Response {
    let msg = ours["error"]["message"]
        .as_str()
        .unwrap_or("the request failed");
    let code = ours["error"]["code"].as_str().unwrap_or("internal");
    fail(status, msg, code)
}

/// Sends a request to our own `/v1` with the caller's credentials.
async fn call(
    app: &AppState,
    headers: &HeaderMap,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let Some(router) = app.loopback.router() else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"code": "internal", "message": "the API is not ready"}}),
        );
    };
    let mut req = Request::builder().method(method).uri(path);
    for name in [header::AUTHORIZATION, header::HOST] {
        if let Some(v) = headers.get(&name) {
            req = req.header(name, v.clone());
        }
    }
    if let Some(k) = headers.get("x-idempotency-key") {
        req = req.header("idempotency-key", k.clone());
    }
    if body.is_some() {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let Ok(req) = req.body(Body::from(body.map(|b| b.to_string()).unwrap_or_default())) else {
        return (
            StatusCode::BAD_REQUEST,
            json!({"error": {"code": "invalid_request", "message": "the request could not be built"}}),
        );
    };
    match router.oneshot(req).await {
        Ok(resp) => {
            let status = resp.status();
            let bytes = axum::body::to_bytes(resp.into_body(), 256 * 1024 * 1024)
                .await
                .unwrap_or_default();
            (
                status,
                serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            )
        }
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": {"code": "internal", "message": "the request failed"}}),
        ),
    }
}

/// The JSON object of a request body, or Firecrawl's 400.
async fn object(body: Body) -> Result<Map<String, Value>, Response> {
    let bytes = axum::body::to_bytes(body, 16 * 1024 * 1024)
        .await
        .map_err(|_| {
            fail(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is too large",
                "invalid_request",
            )
        })?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(o)) => Ok(o),
        _ => Err(fail(
            StatusCode::BAD_REQUEST,
            "the body must be a JSON object",
            "invalid_request",
        )),
    }
}

/// `http://<Host the client used><mount>`, for absolute status and `next` URLs.
fn base(headers: &HeaderMap, mount: &str) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}{mount}")
}

fn v(version: Version) -> &'static str {
    match version {
        Version::V1 => "v1",
        Version::V2 => "v2",
    }
}

async fn scrape(app: AppState, headers: HeaderMap, body: Body, version: Version) -> Response {
    let mut b = match object(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    // `{"type":"json", schema, prompt}` is answered by our extract (the
    // configured model) over the same URL, after the scrape.
    let mut json_format = None;
    if let Some(list) = b.get_mut("formats").and_then(Value::as_array_mut) {
        if let Some(i) = list
            .iter()
            .position(|f| f.get("type").and_then(Value::as_str) == Some("json"))
        {
            json_format = Some(list.remove(i));
        }
    }
    let url = match translate::required_str(&b, "url") {
        Ok(u) => u.to_string(),
        Err(r) => return refused(r),
    };
    let mut ours = match translate::scrape_options(version, &b, "", &["url"]) {
        Ok(o) => o,
        Err(r) => return refused(r),
    };
    ours.insert("url".into(), json!(url));
    let (status, out) = call(
        &app,
        &headers,
        Method::POST,
        "/v1/scrape",
        Some(Value::Object(ours)),
    )
    .await;
    if !status.is_success() {
        return from_ours(status, &out);
    }
    let mut doc = translate::document(&out["data"], Some(&url));
    if let Some(f) = json_format {
        let mut ask = json!({ "urls": [url] });
        for k in ["schema", "prompt"] {
            if let Some(v) = f.get(k).filter(|v| !v.is_null()) {
                ask[k] = v.clone();
            }
        }
        let (st, ex) = call(&app, &headers, Method::POST, "/v1/extract", Some(ask)).await;
        if st.is_success() {
            doc["json"] = ex["data"].clone();
        } else {
            // The page was scraped (and charged): it is returned, with why
            // the JSON is missing.
            doc["warning"] = json!(format!(
                "json: {}",
                ex["error"]["message"]
                    .as_str()
                    .unwrap_or("the extract failed")
            ));
        }
    }
    ok(json!({ "success": true, "data": doc }))
}

/// Our path of a crawl or batch job, or the 404 Firecrawl clients expect
/// when `id` cannot be one of ours (it goes into an internal path, so a
/// `?`, `/` or `..` in it must never reach the router).
fn job_path(id: &str) -> Result<String, Box<Response>> {
    if !webdata_core::store::is_id_text(id) {
        return Err(Box::new(fail(
            StatusCode::NOT_FOUND,
            &format!("job `{id}` does not exist"),
            "not_found",
        )));
    }
    let base = if id.starts_with("batch_") {
        "/v1/batch/scrape"
    } else {
        "/v1/crawl"
    };
    Ok(format!("{base}/{id}"))
}

async fn start_job(
    app: AppState,
    headers: HeaderMap,
    body: Body,
    version: Version,
    batch: bool,
    mount: &'static str,
) -> Response {
    let b = match object(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let ours = if batch {
        translate::batch_request(version, &b)
    } else {
        translate::crawl_request(version, &b)
    };
    let ours = match ours {
        Ok(o) => o,
        Err(r) => return refused(r),
    };
    let path = if batch {
        "/v1/batch/scrape"
    } else {
        "/v1/crawl"
    };
    let (status, out) = call(
        &app,
        &headers,
        Method::POST,
        path,
        Some(Value::Object(ours)),
    )
    .await;
    if !status.is_success() {
        return from_ours(status, &out);
    }
    let id = out["id"].as_str().unwrap_or("").to_string();
    let kind = if batch { "batch/scrape" } else { "crawl" };
    let mut body = json!({ "success": true, "id": id, "url": format!("{}/{}/{kind}/{id}", base(&headers, mount), v(version)) });
    if batch {
        body["invalidURLs"] = out["invalidURLs"].clone();
    }
    ok(body)
}

#[derive(Deserialize, Default)]
pub struct SkipQuery {
    skip: Option<i64>,
}

async fn status(
    app: AppState,
    headers: HeaderMap,
    id: String,
    q: SkipQuery,
    version: Version,
    kind: &'static str,
    mount: &'static str,
) -> Response {
    let skip = q.skip.unwrap_or(0).max(0);
    let job = match job_path(&id) {
        Ok(p) => p,
        Err(not_found) => return *not_found,
    };
    let mut path = format!("{job}?limit={PAGE}");
    if skip > 0 {
        path.push_str(&format!(
            "&cursor={}",
            crate::services::crawls::encode_cursor(skip)
        ));
    }
    let (st, out) = call(&app, &headers, Method::GET, &path, None).await;
    if !st.is_success() {
        return from_ours(st, &out);
    }
    let data: Vec<Value> = out["data"]
        .as_array()
        .map(|d| d.iter().map(|doc| translate::document(doc, None)).collect())
        .unwrap_or_default();
    let state = match out["status"].as_str().unwrap_or("") {
        "completed" => "completed",
        "failed" => "failed",
        "cancelled" => "cancelled",
        _ => "scraping",
    };
    let mut body = json!({
        "success": true,
        "status": state,
        "completed": out["completed"].as_i64().unwrap_or(0),
        "total": out["total"].as_i64().unwrap_or(0),
        "creditsUsed": out["credits_used"].as_i64().unwrap_or(0),
        "expiresAt": webdata_core::store::rfc3339(webdata_core::store::now_ms() + 86_400_000),
        "data": data,
    });
    // `next` only when more documents can be read now: never the same URL
    // with an empty page (some clients would fetch it in a tight loop).
    if !data.is_empty() {
        if let Some(next) = out["next"]
            .as_str()
            .and_then(crate::services::crawls::cursor_seq)
        {
            if next > skip {
                body["next"] = json!(format!(
                    "{}/{}/{kind}/{id}?skip={next}",
                    base(&headers, mount),
                    v(version)
                ));
            }
        }
    }
    if let Some(msg) = out["error"]["message"].as_str() {
        body["error"] = json!(msg);
    }
    ok(body)
}

async fn cancel(app: AppState, headers: HeaderMap, id: String) -> Response {
    let job = match job_path(&id) {
        Ok(p) => p,
        Err(not_found) => return *not_found,
    };
    let (st, before) = call(&app, &headers, Method::GET, &format!("{job}?limit=1"), None).await;
    if !st.is_success() {
        return from_ours(st, &before);
    }
    if matches!(
        before["status"].as_str(),
        Some("completed") | Some("failed")
    ) {
        return fail(
            StatusCode::CONFLICT,
            "the job has already finished",
            "conflict",
        );
    }
    let (st, out) = call(&app, &headers, Method::DELETE, &job, None).await;
    if !st.is_success() {
        return from_ours(st, &out);
    }
    ok(json!({ "success": true, "status": "cancelled" }))
}

async fn errors(app: AppState, headers: HeaderMap, id: String) -> Response {
    let job = match job_path(&id) {
        Ok(p) => p,
        Err(not_found) => return *not_found,
    };
    let (st, out) = call(&app, &headers, Method::GET, &format!("{job}/errors"), None).await;
    if !st.is_success() {
        return from_ours(st, &out);
    }
    let errors: Vec<Value> = out["errors"]
        .as_array()
        .map(|l| {
            l.iter()
                .enumerate()
                .map(|(i, e)| json!({ "id": format!("{id}-{i}"), "url": e["url"], "code": e["code"], "error": e["error"] }))
                .collect()
        })
        .unwrap_or_default();
    ok(json!({ "success": true, "errors": errors, "robotsBlocked": out["robotsBlocked"].clone() }))
}

async fn active(app: AppState, headers: HeaderMap) -> Response {
    // The caller is authenticated (and counted) by our own credit-usage call.
    let (st, who) = call(&app, &headers, Method::GET, "/v1/team/credit-usage", None).await;
    if !st.is_success() {
        return from_ours(st, &who);
    }
    let org = who["data"]["organization"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let crawls = match app.store.crawls_of(&org, i64::MAX, 1000).await {
        Ok(c) => c,
        Err(e) => {
            return fail(
                StatusCode::INTERNAL_SERVER_ERROR,
                &e.to_string(),
                "internal",
            )
        }
    };
    let list: Vec<Value> = crawls
        .into_iter()
        .filter(|c| !c.is_finished() && !c.is_batch())
        .map(|c| {
            json!({ "id": c.id, "teamId": c.org_id, "url": c.url,
            "options": serde_json::from_str::<Value>(&c.request).unwrap_or_default() })
        })
        .collect();
    ok(json!({ "success": true, "crawls": list }))
}

async fn map(app: AppState, headers: HeaderMap, body: Body, version: Version) -> Response {
    let b = match object(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let ours = match translate::map_request(&b) {
        Ok(o) => o,
        Err(r) => return refused(r),
    };
    let (st, out) = call(
        &app,
        &headers,
        Method::POST,
        "/v1/map",
        Some(Value::Object(ours)),
    )
    .await;
    if !st.is_success() {
        return from_ours(st, &out);
    }
    let links = out["links"].as_array().cloned().unwrap_or_default();
    let links: Vec<Value> = match version {
        Version::V1 => links.iter().map(|l| l["url"].clone()).collect(),
        Version::V2 => links
            .iter()
            .map(|l| {
                let mut o = json!({ "url": l["url"] });
                if let Some(t) = l["title"].as_str() {
                    o["title"] = json!(t);
                }
                o
            })
            .collect(),
    };
    ok(json!({ "success": true, "links": links }))
}

async fn search(app: AppState, headers: HeaderMap, body: Body, version: Version) -> Response {
    let b = match object(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let ours = match translate::search_request(version, &b) {
        Ok(o) => o,
        Err(r) => return refused(r),
    };
    let (st, out) = call(
        &app,
        &headers,
        Method::POST,
        "/v1/search",
        Some(Value::Object(ours)),
    )
    .await;
    if !st.is_success() {
        return from_ours(st, &out);
    }
    let results: Vec<Value> = out["results"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|r| {
                    let mut item = match r.get("document").filter(|d| d.is_object()) {
                        Some(d) => translate::document(d, r["url"].as_str()),
                        None => json!({}),
                    };
                    item["url"] = r["url"].clone();
                    item["title"] = r["title"].clone();
                    item["description"] = r["snippet"].clone();
                    item["position"] = r["position"].clone();
                    item
                })
                .collect()
        })
        .unwrap_or_default();
    ok(match version {
        Version::V1 => json!({ "success": true, "data": results }),
        Version::V2 => json!({ "success": true, "data": { "web": results } }),
    })
}

/// An extract job of the Firecrawl API (its status is read by id).
#[derive(Clone)]
pub struct ExtractJob {
    org: String,
    status: &'static str,
    answer: Value,
}

/// Extract jobs of this process, kept 24 hours (by id, with their start).
struct ExtractJobs(std::sync::Mutex<std::collections::HashMap<String, (i64, ExtractJob)>>);

impl ExtractJobs {
    fn insert(&self, id: String, job: ExtractJob) {
        let now = webdata_core::store::now_ms();
        let mut jobs = self.0.lock().unwrap_or_else(|p| p.into_inner());
        jobs.retain(|_, (at, _)| now - *at < 86_400_000);
        let at = jobs.get(&id).map(|(at, _)| *at).unwrap_or(now);
        jobs.insert(id, (at, job));
    }

    fn get(&self, id: &str) -> Option<ExtractJob> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .map(|(_, j)| j.clone())
    }
}

fn extract_jobs() -> &'static ExtractJobs {
    static JOBS: std::sync::OnceLock<ExtractJobs> = std::sync::OnceLock::new();
    JOBS.get_or_init(|| ExtractJobs(Default::default()))
}

/// The caller's organization (authenticated and counted like any call).
async fn caller_org(app: &AppState, headers: &HeaderMap) -> Result<String, Response> {
    let (st, who) = call(app, headers, Method::GET, "/v1/team/credit-usage", None).await;
    if !st.is_success() {
        return Err(from_ours(st, &who));
    }
    Ok(who["data"]["organization"]
        .as_str()
        .unwrap_or("")
        .to_string())
}

async fn extract_start(
    app: AppState,
    headers: HeaderMap,
    body: Body,
    version: Version,
) -> Response {
    let b = match object(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let ours = match translate::extract_request(version, &b) {
        Ok(o) => o,
        Err(r) => return refused(r),
    };
    let org = match caller_org(&app, &headers).await {
        Ok(o) => o,
        Err(r) => return r,
    };
    // Refused at once, as Firecrawl does, not as a job that then fails.
    if let Err(e) = crate::routes::extract::precheck(&app, Value::Object(ours.clone())) {
        let status = e.status();
        return fail(status, &e.message, e.code.as_str());
    }
    let id = webdata_core::store::new_id("extract");
    extract_jobs().insert(
        id.clone(),
        ExtractJob {
            org: org.clone(),
            status: "processing",
            answer: Value::Null,
        },
    );
    let job_id = id.clone();
    tokio::spawn(async move {
        let (st, out) = call(
            &app,
            &headers,
            Method::POST,
            "/v1/extract",
            Some(Value::Object(ours)),
        )
        .await;
        let status = if st.is_success() {
            "completed"
        } else {
            "failed"
        };
        extract_jobs().insert(
            job_id,
            ExtractJob {
                org,
                status,
                answer: out,
            },
        );
    });
    ok(json!({ "success": true, "id": id }))
}

async fn extract_status(app: AppState, headers: HeaderMap, id: String) -> Response {
    let org = match caller_org(&app, &headers).await {
        Ok(o) => o,
        Err(r) => return r,
    };
    let Some(job) = extract_jobs().get(&id).filter(|j| j.org == org) else {
        return fail(
            StatusCode::NOT_FOUND,
            &format!("extract job `{id}` does not exist"),
            "not_found",
        );
    };
    let mut body = json!({
        "success": true,
        "status": job.status,
        "expiresAt": webdata_core::store::rfc3339(webdata_core::store::now_ms() + 86_400_000),
        "creditsUsed": job.answer["credits_used"].as_i64().unwrap_or(0),
        "tokensUsed": 0,
    });
    match job.status {
        "completed" => {
            body["data"] = job.answer["data"].clone();
        }
        "failed" => {
            body["error"] = job.answer["error"]["message"].clone();
        }
        _ => {}
    }
    ok(body)
}

/// Firecrawl's `maxUrls` when it is not given.
const LLMSTXT_MAX_URLS_DEFAULT: i64 = 10;

/// Firecrawl v1's `POST /v1/llmstxt` (`generate_llms_text` in its SDKs):
/// our llms.txt job. `maxUrls` is our `limit` (default 10, as Firecrawl's);
/// `showFullText` and `cache` are accepted and change nothing (both files
/// are always made, every page is crawled fresh); streaming is refused.
async fn llmstxt_start(app: AppState, headers: HeaderMap, body: Body) -> Response {
    let b = match object(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let mut ours = Map::new();
    for (k, v) in &b {
        match k.as_str() {
            "url" => {
                ours.insert("url".into(), v.clone());
            }
            "maxUrls" => {
                if !v.is_null() {
                    if !v.as_i64().is_some_and(|n| (1..=5000).contains(&n)) {
                        return refused(Refused {
                            field: k.clone(),
                            reason: format!("must be a whole number from 1 to 5000 (got {v})"),
                        });
                    }
                    ours.insert("limit".into(), v.clone());
                }
            }
            "showFullText" | "cache" | "origin" | "integration" => {}
            "__experimental_stream" => {
                if v.as_bool() == Some(true) {
                    return refused(Refused {
                        field: k.clone(),
                        reason: "streaming is not supported; poll GET /v1/llmstxt/{id}".into(),
                    });
                }
            }
            other => {
                return refused(Refused {
                    field: other.to_string(),
                    reason: "is not supported by webdata".into(),
                })
            }
        }
    }
    ours.entry("limit")
        .or_insert(json!(LLMSTXT_MAX_URLS_DEFAULT));
    let (st, out) = call(
        &app,
        &headers,
        Method::POST,
        "/v1/llmstxt",
        Some(Value::Object(ours)),
    )
    .await;
    if !st.is_success() {
        return from_ours(st, &out);
    }
    ok(json!({ "success": true, "id": out["id"] }))
}

/// Firecrawl v1's `GET /v1/llmstxt/{id}`: `processing` until our job ends,
/// then `completed` with `data.llmstxt` and `data.llmsfulltxt`, or `failed`
/// (a failed or cancelled job) with `error`.
async fn llmstxt_status(app: AppState, headers: HeaderMap, id: String) -> Response {
    if !webdata_core::store::is_id_text(&id) {
        return fail(
            StatusCode::NOT_FOUND,
            &format!("llms.txt job `{id}` does not exist"),
            "not_found",
        );
    }
    let (st, out) = call(
        &app,
        &headers,
        Method::GET,
        &format!("/v1/llmstxt/{id}"),
        None,
    )
    .await;
    if !st.is_success() {
        return from_ours(st, &out);
    }
    let status = match out["status"].as_str() {
        Some("completed") => "completed",
        Some("failed") | Some("cancelled") => "failed",
        _ => "processing",
    };
    let mut body = json!({
        "success": true,
        "status": status,
        "expiresAt": webdata_core::store::rfc3339(webdata_core::store::now_ms() + 86_400_000),
        "creditsUsed": out["credits_used"].as_i64().unwrap_or(0),
    });
    match status {
        "completed" => {
            body["data"] = json!({
                "llmstxt": out["data"]["llmsTxt"],
                "llmsfulltxt": out["data"]["llmsFullTxt"],
            });
            if let Some(m) = out["error"]["message"].as_str() {
                body["warning"] = json!(m);
            }
        }
        "failed" => {
            body["error"] = match out["error"]["message"].as_str() {
                Some(m) => json!(m),
                None => json!(format!(
                    "the job was {}",
                    out["status"].as_str().unwrap_or("stopped")
                )),
            };
        }
        _ => {}
    }
    ok(body)
}

async fn credit_usage(app: AppState, headers: HeaderMap, version: Version) -> Response {
    let (st, out) = call(&app, &headers, Method::GET, "/v1/team/credit-usage", None).await;
    if !st.is_success() {
        return from_ours(st, &out);
    }
    let remaining = out["data"]["remainingCredits"].as_i64().unwrap_or(0);
    ok(match version {
        Version::V1 => json!({ "success": true, "data": { "remaining_credits": remaining } }),
        Version::V2 => json!({ "success": true, "data": { "remainingCredits": remaining,
            "billingPeriodStart": null, "billingPeriodEnd": null } }),
    })
}

/// The Firecrawl routes mounted at `$mount` (`"/firecrawl"` or `""`).
macro_rules! firecrawl_routes {
    ($mount:literal) => {{
        const M: &str = $mount;
        let op = |id: &'static str, s: &'static str| {
            Op::new(id, s).answers(
                200,
                "Firecrawl's answer.",
                DocBody::Json(crate::openapi::any_object),
            )
        };
        ApiRouter::new(Security::Key)
            .post(
                concat!($mount, "/v2/scrape"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| scrape(a, h, b, Version::V2),
                op("fcScrapeV2", "Firecrawl v2 scrape."),
            )
            .post(
                concat!($mount, "/v1/scrape"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| scrape(a, h, b, Version::V1),
                op("fcScrapeV1", "Firecrawl v1 scrape."),
            )
            .post(
                concat!($mount, "/v2/crawl"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| {
                    start_job(a, h, b, Version::V2, false, M)
                },
                op("fcCrawlV2", "Firecrawl v2 crawl."),
            )
            .post(
                concat!($mount, "/v1/crawl"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| {
                    start_job(a, h, b, Version::V1, false, M)
                },
                op("fcCrawlV1", "Firecrawl v1 crawl."),
            )
            .get(
                concat!($mount, "/v2/crawl/active"),
                |State(a): State<AppState>, h: HeaderMap| active(a, h),
                op("fcActiveV2", "Active crawls."),
            )
            .get(
                concat!($mount, "/v1/crawl/active"),
                |State(a): State<AppState>, h: HeaderMap| active(a, h),
                op("fcActiveV1", "Active crawls."),
            )
            .get(
                concat!($mount, "/v2/crawl/{id}"),
                |State(a): State<AppState>,
                 h: HeaderMap,
                 Path(id): Path<String>,
                 Query(q): Query<SkipQuery>| {
                    status(a, h, id, q, Version::V2, "crawl", M)
                },
                op("fcCrawlStatusV2", "Crawl status."),
            )
            .get(
                concat!($mount, "/v1/crawl/{id}"),
                |State(a): State<AppState>,
                 h: HeaderMap,
                 Path(id): Path<String>,
                 Query(q): Query<SkipQuery>| {
                    status(a, h, id, q, Version::V1, "crawl", M)
                },
                op(
                    "fcCrawlStatusV1",
                    "Crawl status (batch ids too, as firecrawl-js v1 polls them here).",
                ),
            )
            .delete(
                concat!($mount, "/v2/crawl/{id}"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| cancel(a, h, id),
                op("fcCrawlCancelV2", "Cancel a crawl."),
            )
            .delete(
                concat!($mount, "/v1/crawl/{id}"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| cancel(a, h, id),
                op("fcCrawlCancelV1", "Cancel a crawl."),
            )
            .get(
                concat!($mount, "/v2/crawl/{id}/errors"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| errors(a, h, id),
                op("fcCrawlErrorsV2", "Crawl errors."),
            )
            .get(
                concat!($mount, "/v1/crawl/{id}/errors"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| errors(a, h, id),
                op("fcCrawlErrorsV1", "Crawl errors."),
            )
            .delete(
                concat!($mount, "/v1/crawl/{id}/errors"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| errors(a, h, id),
                op(
                    "fcCrawlErrorsV1Delete",
                    "Crawl errors (firecrawl-js v1 sends DELETE).",
                ),
            )
            .post(
                concat!($mount, "/v2/batch/scrape"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| {
                    start_job(a, h, b, Version::V2, true, M)
                },
                op("fcBatchV2", "Batch scrape."),
            )
            .post(
                concat!($mount, "/v1/batch/scrape"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| {
                    start_job(a, h, b, Version::V1, true, M)
                },
                op("fcBatchV1", "Batch scrape."),
            )
            .get(
                concat!($mount, "/v2/batch/scrape/{id}"),
                |State(a): State<AppState>,
                 h: HeaderMap,
                 Path(id): Path<String>,
                 Query(q): Query<SkipQuery>| {
                    status(a, h, id, q, Version::V2, "batch/scrape", M)
                },
                op("fcBatchStatusV2", "Batch status."),
            )
            .get(
                concat!($mount, "/v1/batch/scrape/{id}"),
                |State(a): State<AppState>,
                 h: HeaderMap,
                 Path(id): Path<String>,
                 Query(q): Query<SkipQuery>| {
                    status(a, h, id, q, Version::V1, "batch/scrape", M)
                },
                op("fcBatchStatusV1", "Batch status."),
            )
            .delete(
                concat!($mount, "/v2/batch/scrape/{id}"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| cancel(a, h, id),
                op("fcBatchCancelV2", "Cancel a batch."),
            )
            .delete(
                concat!($mount, "/v1/batch/scrape/{id}"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| cancel(a, h, id),
                op("fcBatchCancelV1", "Cancel a batch."),
            )
            .get(
                concat!($mount, "/v2/batch/scrape/{id}/errors"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| errors(a, h, id),
                op("fcBatchErrorsV2", "Batch errors."),
            )
            .get(
                concat!($mount, "/v1/batch/scrape/{id}/errors"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| errors(a, h, id),
                op("fcBatchErrorsV1", "Batch errors."),
            )
            .post(
                concat!($mount, "/v2/map"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| map(a, h, b, Version::V2),
                op("fcMapV2", "Map."),
            )
            .post(
                concat!($mount, "/v1/map"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| map(a, h, b, Version::V1),
                op("fcMapV1", "Map."),
            )
            .post(
                concat!($mount, "/v2/search"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| search(a, h, b, Version::V2),
                op("fcSearchV2", "Search."),
            )
            .post(
                concat!($mount, "/v1/search"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| search(a, h, b, Version::V1),
                op("fcSearchV1", "Search."),
            )
            .post(
                concat!($mount, "/v2/extract"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| {
                    extract_start(a, h, b, Version::V2)
                },
                op("fcExtractV2", "Start an extract."),
            )
            .post(
                concat!($mount, "/v1/extract"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| {
                    extract_start(a, h, b, Version::V1)
                },
                op("fcExtractV1", "Start an extract."),
            )
            .get(
                concat!($mount, "/v2/extract/{id}"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| {
                    extract_status(a, h, id)
                },
                op("fcExtractStatusV2", "Extract status."),
            )
            .get(
                concat!($mount, "/v1/extract/{id}"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| {
                    extract_status(a, h, id)
                },
                op("fcExtractStatusV1", "Extract status."),
            )
            .post(
                concat!($mount, "/v1/llmstxt"),
                |State(a): State<AppState>, h: HeaderMap, b: Body| llmstxt_start(a, h, b),
                op(
                    "fcLlmsTxtV1",
                    "Start an llms.txt job (Firecrawl v1 generate_llms_text).",
                ),
            )
            .get(
                concat!($mount, "/v1/llmstxt/{id}"),
                |State(a): State<AppState>, h: HeaderMap, Path(id): Path<String>| {
                    llmstxt_status(a, h, id)
                },
                op("fcLlmsTxtStatusV1", "llms.txt job status."),
            )
            .get(
                concat!($mount, "/v2/team/credit-usage"),
                |State(a): State<AppState>, h: HeaderMap| credit_usage(a, h, Version::V2),
                op("fcCreditsV2", "Credit usage."),
            )
            .get(
                concat!($mount, "/v1/team/credit-usage"),
                |State(a): State<AppState>, h: HeaderMap| credit_usage(a, h, Version::V1),
                op("fcCreditsV1", "Credit usage."),
            )
    }};
}

/// The Firecrawl API under `/firecrawl` on the main listener.
pub fn prefixed() -> ApiRouter<AppState> {
    firecrawl_routes!("/firecrawl")
}

/// The Firecrawl API at the root (the `WEBDATA_FIRECRAWL_LISTEN` listener).
pub fn rooted() -> ApiRouter<AppState> {
    firecrawl_routes!("")
}

/// The application for `WEBDATA_FIRECRAWL_LISTEN`: Firecrawl's paths at the
/// root; its requests go through `state`'s main router.
pub fn root_router(state: AppState) -> axum::Router {
    let (r, _) = rooted().into_parts();
    // Unknown paths and wrong methods are answered by the envelope layer,
    // in Firecrawl's shape (see `FirecrawlListener`).
    r.layer(axum::middleware::from_fn_with_state(
        state.clone(),
        crate::layers::envelope_layer,
    ))
    .layer(axum::Extension(crate::layers::FirecrawlListener))
    .with_state(state)
}
