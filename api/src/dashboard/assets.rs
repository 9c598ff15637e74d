//! The dashboard's stylesheet and script, compiled into the binary (no
//! CDN, works offline).

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

const CSS: &str = include_str!("../../assets/app.css");
const JS: &str = include_str!("../../assets/app.js");

/// `GET /dashboard/assets/{file}`
pub async fn asset(Path(file): Path<String>) -> Response {
    let (ty, body) = match file.as_str() {
        "app.css" => ("text/css; charset=utf-8", CSS),
        "app.js" => ("text/javascript; charset=utf-8", JS),
        _ => return super::Page::not_found("That file").into_response(),
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, ty),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}
