//! `/admin/v1`: what the spec's dashboard does — organizations, credits,
//! spend caps, plan limits, keys (create, rotate, revoke), playground keys,
//! audit log and ledger. Guarded by `WEBDATA_ADMIN_TOKEN`.

use crate::app::AppState;
use crate::body;
use crate::context::request_id;
use crate::error::ApiResult;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use webdata_core::store::{NewOrganization, OrgUpdate};

fn ok(status: StatusCode, data: impl serde::Serialize) -> Response {
    (
        status,
        Json(serde_json::json!({ "success": true, "data": data, "request_id": request_id() })),
    )
        .into_response()
}

/// `POST /admin/v1/organizations`
pub async fn create_org(
    State(app): State<AppState>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (new, _): (NewOrganization, _) = body::json(&headers, b).await?;
    Ok(ok(StatusCode::CREATED, app.store.create_org(&new).await?))
}

/// `GET /admin/v1/organizations`
pub async fn list_orgs(State(app): State<AppState>) -> ApiResult<Response> {
    Ok(ok(StatusCode::OK, app.store.list_orgs().await?))
}

/// `GET /admin/v1/organizations/{id}`
pub async fn get_org(State(app): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    Ok(ok(StatusCode::OK, app.store.get_org(&id).await?))
}

/// `PATCH /admin/v1/organizations/{id}`
pub async fn update_org(
    State(app): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (up, _): (OrgUpdate, _) = body::json(&headers, b).await?;
    Ok(ok(StatusCode::OK, app.store.update_org(&id, &up).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewKeyBody {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlaygroundBody {
    person: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListKeysQuery {
    #[serde(default)]
    include_playground: bool,
}

#[derive(Deserialize)]
pub struct LimitQuery {
    #[serde(default)]
    limit: Option<i64>,
}

/// `POST /admin/v1/organizations/{id}/keys`: the secret is in this answer only.
pub async fn create_key(
    State(app): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (nb, _): (NewKeyBody, _) = body::json(&headers, b).await?;
    Ok(ok(
        StatusCode::CREATED,
        app.store.create_key(&id, &nb.name).await?,
    ))
}

/// `GET /admin/v1/organizations/{id}/keys[?includePlayground=true]`
pub async fn list_keys(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ListKeysQuery>,
) -> ApiResult<Response> {
    app.store.get_org(&id).await?;
    Ok(ok(
        StatusCode::OK,
        app.store.list_keys(&id, q.include_playground).await?,
    ))
}

/// `POST /admin/v1/organizations/{id}/playground-keys`
pub async fn create_playground_key(
    State(app): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (pb, _): (PlaygroundBody, _) = body::json(&headers, b).await?;
    Ok(ok(
        StatusCode::CREATED,
        app.store.create_playground_key(&id, &pb.person).await?,
    ))
}

/// `POST /admin/v1/keys/{id}/rotate`
pub async fn rotate_key(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    Ok(ok(StatusCode::CREATED, app.store.rotate_key(&id).await?))
}

/// `DELETE /admin/v1/keys/{id}`
pub async fn revoke_key(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    Ok(ok(StatusCode::OK, app.store.revoke_key(&id).await?))
}

fn clamp_limit(q: &LimitQuery) -> i64 {
    q.limit.unwrap_or(100).clamp(1, 1000)
}

/// `GET /admin/v1/organizations/{id}/audit`
pub async fn audit(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<LimitQuery>,
) -> ApiResult<Response> {
    app.store.get_org(&id).await?;
    Ok(ok(
        StatusCode::OK,
        app.store.audit_log(&id, clamp_limit(&q)).await?,
    ))
}

/// `GET /admin/v1/organizations/{id}/ledger`
pub async fn ledger(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<LimitQuery>,
) -> ApiResult<Response> {
    app.store.get_org(&id).await?;
    Ok(ok(
        StatusCode::OK,
        app.store.ledger_entries(&id, clamp_limit(&q)).await?,
    ))
}
