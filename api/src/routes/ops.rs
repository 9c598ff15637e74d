//! Operations endpoints: liveness, readiness, metrics.

use crate::state::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

/// `GET /healthz`: the process is up.
pub async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok", "request_id": crate::context::request_id() }))
}

/// `GET /readyz`: the store answers.
pub async fn readyz(State(app): State<AppState>) -> Response {
    if app.store.ping().await {
        Json(serde_json::json!({ "status": "ready", "request_id": crate::context::request_id() }))
            .into_response()
    } else {
        crate::error::ApiError::new(
            webdata_core::ErrorCode::Internal,
            "the database does not answer",
        )
        .with_status(StatusCode::SERVICE_UNAVAILABLE)
        .into_response()
    }
}

/// `GET /metrics`: OpenMetrics text.
pub async fn metrics(State(app): State<AppState>) -> Response {
    if let Some(b) = app.engine.browser() {
        app.metrics
            .raise_to("browser_sessions_started", b.sessions_started());
    }
    (
        [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        app.metrics.render(),
    )
        .into_response()
}
