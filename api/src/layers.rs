//! Middleware: the outermost envelope layer (request id, timeout, error
//! envelope for everything, metrics, logs), `/v1` authentication with rate
//! and concurrency limits, and the admin token check.

use crate::context::{new_request_id, with_request_id, Caller};
use crate::error::{envelope, firecrawl_body, ApiError, Enveloped, ErrorDetail};
use crate::state::AppState;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Instant;
use tracing::Instrument;
use webdata_core::store::{ConcurrencySlot, KeyKind, RateDecision};
use webdata_core::{ErrorCode, Store};

/// Marks a request that came in on the Firecrawl listener: the envelope
/// layer then answers its errors (a 405, a body too large) in Firecrawl's
/// shape, as it does under `/firecrawl` on the main listener.
#[derive(Clone, Copy, Debug)]
pub struct FirecrawlListener;

/// Outermost layer: every response gets a request id, and every error
/// response gets the Error envelope.
pub async fn envelope_layer(State(app): State<AppState>, req: Request, next: Next) -> Response {
    let id = new_request_id();
    let start = Instant::now();
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    // Firecrawl's clients read Firecrawl's error body, on its listener and
    // under `/firecrawl` on this one.
    let firecrawl =
        path.starts_with("/firecrawl/") || req.extensions().get::<FirecrawlListener>().is_some();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let span = tracing::info_span!("request", request_id = %id, %method, %path);
    let timeout = app.config.request_timeout;
    let mut resp = with_request_id(id.clone(), async move {
        match tokio::time::timeout(timeout, next.run(req)).await {
            Ok(resp) => resp,
            Err(_) => ApiError::internal(format!(
                "the request did not finish within {} s; it is safe to retry with the same Idempotency-Key",
                timeout.as_secs()
            ))
            .into_response(),
        }
    })
    .instrument(span.clone())
    .await;
    let status = resp.status();
    if status.as_u16() >= 400 && resp.extensions().get::<Enveloped>().is_none() {
        let (code, message) = match status {
            StatusCode::NOT_FOUND if firecrawl => (
                ErrorCode::NotFound,
                format!("{method} {path} is not part of webdata's Firecrawl-compatible API"),
            ),
            StatusCode::NOT_FOUND => (ErrorCode::NotFound, format!("no route for {method} {path}")),
            StatusCode::METHOD_NOT_ALLOWED => (
                ErrorCode::InvalidRequest,
                format!("method {method} is not allowed on {path}"),
            ),
            StatusCode::PAYLOAD_TOO_LARGE => (
                ErrorCode::InvalidRequest,
                "the request body is too large".to_string(),
            ),
            s if s.is_server_error() => (
                ErrorCode::Internal,
                "unexpected server error; it is safe to retry with the same Idempotency-Key"
                    .to_string(),
            ),
            s => (
                ErrorCode::InvalidRequest,
                format!("the request was refused ({s})"),
            ),
        };
        let keep = resp.headers().clone();
        resp = if firecrawl {
            (status, axum::Json(firecrawl_body(&message, code.as_str()))).into_response()
        } else {
            (status, axum::Json(envelope(code, &message, None, &id))).into_response()
        };
        for (k, v) in keep.iter() {
            if k != axum::http::header::CONTENT_TYPE && k != axum::http::header::CONTENT_LENGTH {
                resp.headers_mut().insert(k.clone(), v.clone());
            }
        }
    }
    if let Ok(v) = HeaderValue::from_str(&id) {
        resp.headers_mut().insert("x-request-id", v);
    }
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    app.metrics
        .observe_request(&method, &route, resp.status().as_u16(), ms);
    span.in_scope(|| {
        tracing::info!(
            status = resp.status().as_u16(),
            latency_ms = ms as u64,
            "answered"
        );
    });
    resp
}

fn bearer(req: &Request) -> Result<&str, ApiError> {
    let Some(h) = req.headers().get(axum::http::header::AUTHORIZATION) else {
        return Err(ApiError::unauthorized(
            "missing `Authorization: Bearer <API key>` header",
        ));
    };
    let h = h
        .to_str()
        .map_err(|_| ApiError::unauthorized("the Authorization header is not valid text"))?;
    let (scheme, rest) = h.split_once(' ').unwrap_or((h, ""));
    if !scheme.eq_ignore_ascii_case("bearer") || rest.trim().is_empty() {
        return Err(ApiError::unauthorized(
            "the Authorization header must be `Bearer <API key>`",
        ));
    }
    Ok(rest.trim())
}

/// Keeps concurrency slots until the request ends, however it ends.
struct SlotGuard {
    store: Store,
    slot: Option<ConcurrencySlot>,
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            let store = self.store.clone();
            tokio::spawn(async move {
                if let Err(e) = store.release_slots(&slot).await {
                    tracing::warn!(error = %e, "could not release concurrency slots; they expire on their own");
                }
            });
        }
    }
}

fn rate_headers(resp: &mut Response, d: &RateDecision) {
    let policy = format!("\"default\";q={};w=60", d.limit);
    let state = format!("\"default\";r={};t={}", d.remaining, d.reset_secs);
    if let Ok(v) = HeaderValue::from_str(&policy) {
        resp.headers_mut().insert("ratelimit-policy", v);
    }
    if let Ok(v) = HeaderValue::from_str(&state) {
        resp.headers_mut().insert("ratelimit", v);
    }
}

async fn authorize(app: &AppState, secret: Result<String, ApiError>) -> Result<Caller, ApiError> {
    let secret = secret?;
    let secret = secret.as_str();
    if !webdata_core::store::looks_like_key(secret) {
        return Err(ApiError::unauthorized(
            "the API key is malformed; keys look like `wd_…` (46 characters)",
        ));
    }
    let key = app
        .store
        .find_key_by_secret(secret)
        .await?
        .ok_or_else(|| ApiError::unauthorized("the API key is not valid"))?;
    let now = webdata_core::store::now_ms();
    if key.revoked_at.is_some() {
        return Err(ApiError::unauthorized("the API key was revoked"));
    }
    if key.expires_at.is_some_and(|e| e <= now) {
        return Err(ApiError::unauthorized("the API key has expired"));
    }
    let org = app.store.get_org(&key.org_id).await?;
    Ok(Caller { org, key })
}

/// The bearer secret of a request (the API's 401 when it has none).
pub fn bearer_secret(req: &Request) -> Result<String, ApiError> {
    bearer(req).map(str::to_string)
}

/// The secret is a valid, live API key (no rate limit is counted: `/mcp`
/// counts each tool call's `/v1` request instead).
pub async fn check_secret(
    app: &AppState,
    secret: Result<String, ApiError>,
) -> Result<(), ApiError> {
    authorize(app, secret).await.map(|_| ())
}

/// `/v1` authentication, per-minute rate limits and concurrency limits.
pub async fn auth_layer(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let secret = bearer(&req).map(str::to_string);
    let caller = match authorize(&app, secret).await {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    if caller.key.kind == KeyKind::Playground {
        if let Some(budget) = caller.key.budget {
            if caller.key.spent >= budget {
                return ApiError::new(
                    ErrorCode::InsufficientCredits,
                    format!("this playground key has spent its {budget} credits; create an API key to continue"),
                )
                .into_response();
            }
        }
    }
    // Per-minute windows: the organization's, and the key's own when it has one.
    let mut decisions = Vec::with_capacity(2);
    let org_rate = app
        .store
        .hit_rate(
            &format!("org:{}", caller.org.id),
            caller.org.rate_limit_per_minute,
        )
        .await;
    let key_rate = match caller.key.rate_limit_per_minute {
        Some(limit) => Some(
            app.store
                .hit_rate(&format!("key:{}", caller.key.id), limit)
                .await,
        ),
        None => None,
    };
    for d in std::iter::once(org_rate).chain(key_rate) {
        match d {
            Ok(d) => decisions.push(d),
            Err(e) => return ApiError::from(e).into_response(),
        }
    }
    let tightest = decisions
        .iter()
        .copied()
        .filter(|d| !d.allowed)
        .max_by_key(|d| d.reset_secs)
        .or_else(|| decisions.iter().copied().min_by_key(|d| d.remaining));
    let Some(decision) = tightest else {
        return ApiError::internal("rate limiter produced no decision").into_response();
    };
    if !decision.allowed {
        let mut resp = ApiError::new(
            ErrorCode::RateLimited,
            format!(
                "more than {} requests in this minute; retry in {} s",
                decision.limit, decision.reset_secs
            ),
        )
        .retry_after(decision.reset_secs * 1000)
        .into_response();
        rate_headers(&mut resp, &decision);
        return resp;
    }
    let mut subjects = vec![(
        format!("org:{}", caller.org.id),
        caller.org.concurrency_limit,
    )];
    if let Some(c) = caller.key.concurrency_limit {
        subjects.push((format!("key:{}", caller.key.id), c));
    }
    let ttl_ms = app.config.request_timeout.as_millis() as i64 + 30_000;
    let slot = match app.store.acquire_slots(&subjects, ttl_ms).await {
        Ok(Some(slot)) => slot,
        Ok(None) => {
            let limit = subjects.iter().map(|s| s.1).min().unwrap_or(0);
            let mut resp = ApiError::new(
                ErrorCode::RateLimited,
                format!(
                    "too many requests running at once (limit {limit}); retry when one finishes"
                ),
            )
            .retry_after(1000)
            .into_response();
            rate_headers(&mut resp, &decision);
            return resp;
        }
        Err(e) => return ApiError::from(e).into_response(),
    };
    let _guard = SlotGuard {
        store: app.store.clone(),
        slot: Some(slot),
    };
    let method = req.method().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| req.uri().path().to_string());
    let (org_id, key_id) = (caller.org.id.clone(), caller.key.id.clone());
    req.extensions_mut().insert(caller);
    let mut resp = next.run(req).await;
    rate_headers(&mut resp, &decision);
    let detail = resp.extensions().get::<ErrorDetail>().cloned();
    let record = webdata_core::store::RequestRecord {
        org_id,
        key_id: Some(key_id),
        method,
        route,
        status: resp.status().as_u16() as i64,
        error_code: detail.as_ref().map(|d| d.code.as_str().to_string()),
        message: detail.map(|d| d.message),
        at: webdata_core::store::now_ms(),
    };
    let store = app.store.clone();
    tokio::spawn(async move {
        if let Err(e) = store.log_request(&record).await {
            tracing::warn!(error = %e, "could not record the request in the usage log");
        }
    });
    resp
}

/// `/admin/v1`: bearer `WEBDATA_ADMIN_TOKEN`, compared in constant time.
pub async fn admin_layer(State(app): State<AppState>, req: Request, next: Next) -> Response {
    use subtle::ConstantTimeEq;
    let Some(token) = app.config.admin_token.as_deref() else {
        return ApiError::not_found(
            "the admin API is disabled: set WEBDATA_ADMIN_TOKEN to enable it",
        )
        .into_response();
    };
    let given = match bearer(&req) {
        Ok(g) => g,
        Err(e) => return e.into_response(),
    };
    if given.len() != token.len() || !bool::from(given.as_bytes().ct_eq(token.as_bytes())) {
        return ApiError::unauthorized("the admin token is not valid").into_response();
    }
    next.run(req).await
}

/// Security headers on every answer (the dashboard sets its own stricter
/// set first, and those are kept): no MIME sniffing, no framing, no
/// referrer; and `Strict-Transport-Security` when `serve` terminates TLS.
pub async fn security_headers(State(app): State<AppState>, req: Request, next: Next) -> Response {
    use axum::http::{header, HeaderValue};
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    for (name, value) in [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
    ] {
        if !h.contains_key(&name) {
            h.insert(name, HeaderValue::from_static(value));
        }
    }
    if app.config.tls {
        h.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000; includeSubDomains"),
        );
    }
    resp
}
