//! `/v1/schedules`: scheduled crawls (an addition to v1). Creating, reading
//! and changing a schedule is free; each run is billed as the crawl or
//! batch scrape it starts.

use crate::body;
use crate::context::{request_id, Caller};
use crate::error::{ApiError, ApiResult};
use crate::services::schedules::{self, check, save, show};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use webdata_core::store::{now_ms, ScheduleRow};
use webdata_core::types::ScheduleRequest;
use webdata_core::Store;

fn answer(status: StatusCode, data: serde_json::Value) -> Response {
    (
        status,
        Json(serde_json::json!({
            "success": true,
            "data": data,
            "request_id": request_id(),
        })),
    )
        .into_response()
}

async fn owned(app: &AppState, caller: &Caller, id: &str) -> ApiResult<ScheduleRow> {
    app.store
        .get_schedule(&caller.org.id, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("schedule `{id}` does not exist")))
}

async fn shown(app: &AppState, row: &ScheduleRow) -> ApiResult<serde_json::Value> {
    serde_json::to_value(show(app, row).await?).map_err(|e| ApiError::internal(e.to_string()))
}

/// `POST /v1/schedules`: 201 with the schedule and its first `nextRunAt`.
pub async fn create(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (req, _): (ScheduleRequest, _) = body::json(&headers, b).await?;
    let now = now_ms();
    let when = check(&app, &req, now)?;
    let suspended = req.suspend.unwrap_or(false);
    let mut spec = req;
    spec.suspend = None;
    let row = ScheduleRow {
        id: Store::new_schedule_id(),
        org_id: caller.org.id.clone(),
        key_id: Some(caller.key.id.clone()),
        spec: serde_json::to_string(&spec).map_err(|e| ApiError::internal(e.to_string()))?,
        suspended,
        next_run_at: when.next_after(now),
        last_run_at: None,
        created_at: now,
        updated_at: now,
    };
    app.store.create_schedule(&row).await?;
    Ok(answer(StatusCode::CREATED, shown(&app, &row).await?))
}

/// `GET /v1/schedules`: the organization's schedules, oldest first.
pub async fn list(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Response> {
    let mut out = Vec::new();
    for row in app.store.list_schedules(&caller.org.id).await? {
        out.push(shown(&app, &row).await?);
    }
    Ok(answer(StatusCode::OK, serde_json::Value::Array(out)))
}

/// `GET /v1/schedules/{id}`: the schedule and its run history.
pub async fn get(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let row = owned(&app, &caller, &id).await?;
    Ok(answer(StatusCode::OK, shown(&app, &row).await?))
}

/// `PATCH /v1/schedules/{id}`: the fields given replace the stored ones.
pub async fn update(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Response> {
    let (patch, _): (ScheduleRequest, _) = body::json(&headers, b).await?;
    let row = owned(&app, &caller, &id).await?;
    let old: ScheduleRequest = serde_json::from_str(&row.spec).unwrap_or_default();
    let suspended = patch.suspend.unwrap_or(row.suspended);
    let row = save(&app, &row, old.merged(&patch), suspended).await?;
    Ok(answer(StatusCode::OK, shown(&app, &row).await?))
}

async fn set_suspended(
    app: AppState,
    caller: Caller,
    id: String,
    suspended: bool,
) -> ApiResult<Response> {
    let row = owned(&app, &caller, &id).await?;
    let row = schedules::set_suspended(&app, &row, suspended).await?;
    Ok(answer(StatusCode::OK, shown(&app, &row).await?))
}

/// `POST /v1/schedules/{id}/pause`: no run starts until resumed.
pub async fn pause(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    set_suspended(app, caller, id, true).await
}

/// `POST /v1/schedules/{id}/resume`: the next run is the next slot after now.
pub async fn resume(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    set_suspended(app, caller, id, false).await
}

/// `DELETE /v1/schedules/{id}`: no more runs; crawls it started stay.
pub async fn delete(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    if !app.store.delete_schedule(&caller.org.id, &id).await? {
        return Err(ApiError::not_found(format!(
            "schedule `{id}` does not exist"
        )));
    }
    Ok(answer(
        StatusCode::OK,
        serde_json::json!({"id": id, "deleted": true}),
    ))
}
