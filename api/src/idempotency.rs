//! `Idempotency-Key` for POST /v1/scrape and /v1/crawl. Successful answers
//! are stored and replayed for 24 hours with `Idempotent-Replayed: true`;
//! a failed request frees its key so a retry runs again.

use crate::context::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use webdata_core::store::{IdempotencyBegin, StoredResponse};
use webdata_core::{validate, ErrorCode, Store};

/// Slack on top of the request timeout before a `running` key counts as
/// abandoned (clock differences between replicas, the time to record it).
const ABANDON_MARGIN_MS: i64 = 5_000;

/// What the handler should do.
pub enum Claim {
    /// Answer with this stored response.
    Replay(Response),
    /// Run the request; `Some` holds the key to complete.
    Run(Option<Held>),
}

/// A claimed key; dropped without `complete`, it is freed.
pub struct Held {
    store: Store,
    org: String,
    key: String,
    done: bool,
}

impl Held {
    pub(crate) fn org(&self) -> &str {
        &self.org
    }

    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// The answer as stored for replays.
    pub(crate) fn stored(&self, status: StatusCode, body: &serde_json::Value) -> StoredResponse {
        StoredResponse {
            status: status.as_u16(),
            body: body.to_string(),
        }
    }

    /// The answer was stored with the charge (`settle_credits_answering`).
    pub(crate) fn stored_already(mut self) {
        self.done = true;
    }

    /// Stores the answer for replays.
    pub async fn complete(mut self, status: StatusCode, body: &serde_json::Value) {
        let stored = self.stored(status, body);
        if let Err(e) = self
            .store
            .idempotency_complete(&self.org, &self.key, &stored)
            .await
        {
            tracing::error!(error = %e, "storing the idempotent answer failed");
        }
        self.done = true;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if !self.done {
            let (store, org, key) = (self.store.clone(), self.org.clone(), self.key.clone());
            tokio::spawn(async move {
                if let Err(e) = store.idempotency_abandon(&org, &key).await {
                    tracing::warn!(error = %e, "freeing an idempotency key failed; it frees itself after the request timeout");
                }
            });
        }
    }
}

/// Claims the request's `Idempotency-Key`, if it has one.
pub async fn claim(
    app: &AppState,
    caller: &Caller,
    headers: &HeaderMap,
    route: &str,
    body: &serde_json::Value,
) -> ApiResult<Claim> {
    let Some(raw) = headers.get("idempotency-key") else {
        return Ok(Claim::Run(None));
    };
    let key = raw
        .to_str()
        .map_err(|_| ApiError::invalid("`Idempotency-Key` must be visible ASCII text"))?
        .to_string();
    validate::check_idempotency_key(&key)?;
    let mut h = Sha256::new();
    h.update(route.as_bytes());
    h.update(b"\n");
    h.update(body.to_string().as_bytes());
    let hash = hex::encode(h.finalize());
    // Every request ends (or frees its key) within the request timeout, so
    // a `running` record older than that belongs to a replica that died
    // (SIGKILL, OOM): a retry takes it over instead of waiting 5 minutes.
    let abandoned_after_ms = (app.config.request_timeout.as_millis() as i64 + ABANDON_MARGIN_MS)
        .min(webdata_core::store::ABANDONED_AFTER_MS);
    match app
        .store
        .idempotency_begin_within(&caller.org.id, &key, &hash, abandoned_after_ms)
        .await?
    {
        IdempotencyBegin::Proceed => Ok(Claim::Run(Some(Held {
            store: app.store.clone(),
            org: caller.org.id.clone(),
            key,
            done: false,
        }))),
        IdempotencyBegin::Replay(stored) => {
            let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
            let mut resp = (
                status,
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                stored.body,
            )
                .into_response();
            resp.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
            Ok(Claim::Replay(resp))
        }
        IdempotencyBegin::InProgress => Err(ApiError::new(
            ErrorCode::IdempotencyInProgress,
            "a request with this Idempotency-Key is still running; retry when it has finished",
        )
        .retry_after(1000)),
        IdempotencyBegin::Mismatch => Err(ApiError::new(
            ErrorCode::IdempotencyMismatch,
            "this Idempotency-Key was used with a different request in the last 24 hours; use a new key",
        )),
    }
}
