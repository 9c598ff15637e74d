//! `/admin/v1`: what the spec's dashboard does — organizations, credits,
//! spend caps, plan limits, keys (create, rotate, revoke), playground keys,
//! audit log and ledger. Guarded by `WEBDATA_ADMIN_TOKEN`.

use crate::body;
use crate::context::request_id;
use crate::error::ApiResult;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use webdata_core::store::{DeliveryState, NewOrganization, OrgUpdate};

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

/// `GET /admin/v1/organizations/{id}/webhook-secret`: the current signing
/// secret, and the previous one while its overlap lasts.
pub async fn webhook_secret(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    Ok(ok(
        StatusCode::OK,
        serde_json::json!({ "secrets": app.store.signing_secrets(&id).await? }),
    ))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RotateBody {
    #[serde(default)]
    overlap_seconds: Option<i64>,
}

/// `POST /admin/v1/organizations/{id}/webhook-secret/rotate`: deliveries are
/// signed with both secrets (two `v1` values) during the overlap (default 24 h).
pub async fn rotate_webhook_secret(
    State(app): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let bytes = body::read_body(b).await?;
    let rb: RotateBody = if bytes.iter().all(u8::is_ascii_whitespace) {
        RotateBody::default()
    } else {
        body::require_json(&headers)?;
        body::from_value(body::parse_value(&bytes)?)?
    };
    let overlap = rb.overlap_seconds.unwrap_or(86_400);
    if !(0..=30 * 86_400).contains(&overlap) {
        return Err(crate::error::ApiError::invalid(
            "`overlapSeconds` must be between 0 and 2592000",
        ));
    }
    let secret = app.store.rotate_webhook_secret(&id, overlap * 1000).await?;
    Ok(ok(
        StatusCode::OK,
        serde_json::json!({ "secret": secret, "overlapSeconds": overlap }),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EndpointBody {
    url: String,
}

/// `POST /admin/v1/organizations/{id}/webhook-endpoints`: the endpoint's
/// signing secret is in the answer.
pub async fn create_endpoint(
    State(app): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (eb, _): (EndpointBody, _) = body::json(&headers, b).await?;
    webdata_core::validate::check_url("url", &eb.url)?;
    app.engine.check_url(&eb.url)?;
    Ok(ok(
        StatusCode::CREATED,
        app.store
            .create_webhook_endpoint(&id, eb.url.trim())
            .await?,
    ))
}

/// `GET /admin/v1/organizations/{id}/webhook-endpoints`
pub async fn list_endpoints(
    State(app): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    app.store.get_org(&id).await?;
    Ok(ok(StatusCode::OK, app.store.webhook_endpoints(&id).await?))
}

/// `DELETE /admin/v1/organizations/{id}/webhook-endpoints/{endpoint}`
pub async fn delete_endpoint(
    State(app): State<AppState>,
    Path((id, endpoint)): Path<(String, String)>,
) -> ApiResult<Response> {
    app.store.delete_webhook_endpoint(&id, &endpoint).await?;
    Ok(ok(
        StatusCode::OK,
        serde_json::json!({ "deleted": endpoint }),
    ))
}

#[derive(Deserialize)]
pub struct DeliveriesQuery {
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    limit: Option<i64>,
}

/// `GET /admin/v1/organizations/{id}/webhook-deliveries[?state=dead]`: the
/// outbox, dead letters included.
pub async fn list_deliveries(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<DeliveriesQuery>,
) -> ApiResult<Response> {
    let state = match q.state.as_deref() {
        None => None,
        Some(s) => Some(DeliveryState::parse(s).ok_or_else(|| {
            crate::error::ApiError::invalid("`state` must be pending, delivered, gone or dead")
        })?),
    };
    app.store.get_org(&id).await?;
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    Ok(ok(
        StatusCode::OK,
        app.store.deliveries(&id, state, limit).await?,
    ))
}

/// `POST /admin/v1/organizations/{id}/webhook-deliveries/{delivery}/redrive`
pub async fn redrive_delivery(
    State(app): State<AppState>,
    Path((id, delivery)): Path<(String, String)>,
) -> ApiResult<Response> {
    app.store.redrive_delivery(&id, &delivery).await?;
    Ok(ok(
        StatusCode::OK,
        serde_json::json!({ "redriven": delivery }),
    ))
}
