//! Per-request context: the request id (a task-local set by the outermost
//! layer) and who is calling.

use webdata_core::store::{ApiKey, Organization};

tokio::task_local! {
    static REQUEST_ID: String;
}

/// Runs `fut` with `id` as the current request id.
pub async fn with_request_id<F: std::future::Future>(id: String, fut: F) -> F::Output {
    REQUEST_ID.scope(id, fut).await
}

/// The current request's id (empty outside a request).
pub fn request_id() -> String {
    REQUEST_ID.try_with(|id| id.clone()).unwrap_or_default()
}

/// A new request id.
pub fn new_request_id() -> String {
    format!("req_{}", uuid::Uuid::now_v7().simple())
}

/// The authenticated caller of a `/v1` request.
#[derive(Debug, Clone)]
pub struct Caller {
    pub org: Organization,
    pub key: ApiKey,
}
