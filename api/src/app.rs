//! The router: every route with its layers (request id and envelope,
//! auth on `/v1`, the admin token on `/admin/v1`).

use crate::layers::{admin_layer, auth_layer, envelope_layer};
use crate::routes::{admin, brand, crawl, extract, map, ops, scrape, search, team};
use crate::state::AppState;
use axum::routing::{get, post};
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    router_with(state, Router::new())
}

/// The application with `extra` routes merged in under the same layers
/// (tests use it to prove the envelope holds for panics and timeouts).
pub fn router_with(state: AppState, extra: Router<AppState>) -> Router {
    let v1 = Router::new()
        .route("/v1/team/credit-usage", get(team::credit_usage))
        .route("/v1/scrape", post(scrape::scrape))
        .route("/v1/brand", get(brand::brand))
        .route("/v1/crawl", post(crawl::start))
        .route("/v1/crawl/{id}", get(crawl::get).delete(crawl::cancel))
        .route("/v1/crawl/{id}/events", get(crawl::events))
        .route("/v1/map", post(map::map))
        .route("/v1/search", post(search::search))
        .route("/v1/extract", post(extract::extract))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth_layer,
        ));
    let admin = Router::new()
        .route(
            "/admin/v1/organizations",
            post(admin::create_org).get(admin::list_orgs),
        )
        .route(
            "/admin/v1/organizations/{id}",
            get(admin::get_org).patch(admin::update_org),
        )
        .route(
            "/admin/v1/organizations/{id}/keys",
            post(admin::create_key).get(admin::list_keys),
        )
        .route(
            "/admin/v1/organizations/{id}/playground-keys",
            post(admin::create_playground_key),
        )
        .route("/admin/v1/organizations/{id}/audit", get(admin::audit))
        .route("/admin/v1/organizations/{id}/ledger", get(admin::ledger))
        .route(
            "/admin/v1/organizations/{id}/webhook-secret",
            get(admin::webhook_secret),
        )
        .route(
            "/admin/v1/organizations/{id}/webhook-secret/rotate",
            post(admin::rotate_webhook_secret),
        )
        .route(
            "/admin/v1/organizations/{id}/webhook-endpoints",
            post(admin::create_endpoint).get(admin::list_endpoints),
        )
        .route(
            "/admin/v1/organizations/{id}/webhook-endpoints/{endpoint}",
            axum::routing::delete(admin::delete_endpoint),
        )
        .route(
            "/admin/v1/organizations/{id}/webhook-deliveries",
            get(admin::list_deliveries),
        )
        .route(
            "/admin/v1/organizations/{id}/webhook-deliveries/{delivery}/redrive",
            post(admin::redrive_delivery),
        )
        .route("/admin/v1/keys/{id}/rotate", post(admin::rotate_key))
        .route(
            "/admin/v1/keys/{id}",
            axum::routing::delete(admin::revoke_key),
        )
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            admin_layer,
        ));
    Router::new()
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .route("/v1/blobs/{file}", get(crate::routes::blobs::get))
        .route(
            "/v1/openapi.json",
            get(|| async { axum::Json(crate::openapi::document()) }),
        )
        .merge(v1)
        .merge(admin)
        .merge(extra)
        .fallback(|| async { axum::http::StatusCode::NOT_FOUND })
        .layer(CatchPanicLayer::new())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            envelope_layer,
        ))
        .with_state(state)
}
