//! `POST /mcp`: the MCP Streamable HTTP transport on the running service,
//! stateless (no session to pin to a replica) and answering JSON. The key
//! is checked first, so a missing or bad key gets the API's 401 envelope;
//! each tool call then runs through `/v1` with that key.

use super::WebdataMcp;
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;
use tower::ServiceExt;

/// `POST /mcp`.
pub async fn handle(State(app): State<AppState>, req: Request) -> Response {
    let secret = crate::layers::bearer_secret(&req);
    if let Err(e) = crate::layers::check_secret(&app, secret).await {
        return e.into_response();
    }
    let Some(router) = app.loopback.router() else {
        return ApiError::internal("the API is not ready").into_response();
    };
    // The key is required on every request, so a DNS-rebinding page gains
    // nothing: the Host allow-list (loopback by default) is not needed,
    // and a public deployment's host name works.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        move || Ok(WebdataMcp::per_request(router.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    match service.oneshot(req).await {
        Ok(resp) => resp.map(axum::body::Body::new),
        Err(never) => match never {},
    }
}
