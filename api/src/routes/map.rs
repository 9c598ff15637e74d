//! `POST /v1/map`: validate, hold the worst case (42 credits, or the largest
//! multiple of 3 the organization can afford), discover within the fetch
//! budget those credits buy, settle 3 credits per 10 fetches made (at least
//! 3; 0 when the start page fails to load).

use crate::body;
use crate::context::{request_id, Caller};
use crate::credits::CreditHold;
use crate::error::ApiResult;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Extension, Json};
use std::time::Instant;
use webdata_core::types::{MapRequest, MapResponse};
use webdata_core::validate;
use webdata_engine::map::{self, CREDIT_STEP, WORST_CASE_CREDITS};
use webdata_engine::Engine;

/// The handler.
pub async fn map(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    b: Body,
) -> ApiResult<Json<MapResponse>> {
    let started = Instant::now();
    let (req, _): (MapRequest, _) = body::json(&headers, b).await?;
    validate::check_map_request(&req)?;
    Engine::check_path_filters(
        req.include_paths.as_deref().unwrap_or_default(),
        req.exclude_paths.as_deref().unwrap_or_default(),
    )?;
    app.engine.check_url(&req.url)?;
    let (hold, reserved) = CreditHold::reserve_up_to(
        &app,
        &caller,
        "map",
        WORST_CASE_CREDITS,
        CREDIT_STEP,
        CREDIT_STEP,
    )
    .await?;
    let budget = map::fetches_for(reserved);
    match app.engine.map(&req, budget).await {
        Ok(out) => {
            let cost = map::credits_for(out.fetches).min(reserved);
            let charged = hold.settle(cost).await?;
            app.metrics.add("map_fetches", out.fetches as u64);
            tracing::info!(
                url = %req.url,
                fetches = out.fetches,
                budget,
                credits = charged,
                found = out.found,
                returned = out.links.len(),
                budget_limited = out.budget_limited,
                rendered = out.rendered,
                ms = started.elapsed().as_millis() as u64,
                "map finished"
            );
            Ok(Json(MapResponse {
                success: true,
                links: out.links,
                budget_limited: out.budget_limited,
                credits_used: charged,
                request_id: Some(request_id()),
            }))
        }
        Err(f) => {
            hold.settle(0).await?;
            tracing::info!(url = %req.url, code = f.code.as_str(), error = %f.message, "map failed (0 credits)");
            Err(f.into())
        }
    }
}
