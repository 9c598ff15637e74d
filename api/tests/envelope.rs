//! The error envelope holds for failures no client can trigger on purpose:
//! a handler that panics and a handler that outlives the request timeout.

use axum::body::Body;
use axum::http::Request;
use axum::routing::get;
use std::time::Duration;
use tower::ServiceExt;
use webdata_api::app::router_with;
use webdata_api::state::AppState;

mod common;

async fn state(timeout: Duration) -> AppState {
    common::state("envelope", timeout, None).await
}

async fn call(app: axum::Router, path: &str) -> (u16, String, serde_json::Value) {
    let resp = app
        .oneshot(
            Request::builder()
                .uri(path)
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("response");
    let status = resp.status().as_u16();
    let id = resp
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .expect("body");
    (
        status,
        id,
        serde_json::from_slice(&bytes).unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_panicking_handler_answers_internal_in_the_envelope() {
    let extra = axum::Router::new().route(
        "/boom",
        get(|| async {
            if std::hint::black_box(true) {
                panic!("deliberate");
            }
            "unreachable"
        }),
    );
    let app = router_with(state(Duration::from_secs(5)).await, extra);
    let (status, id, body) = call(app.clone(), "/boom").await;
    assert_eq!(status, 500);
    assert_eq!(body["error"]["code"], "internal");
    assert_eq!(body["credits_used"], 0);
    assert!(id.starts_with("req_"));
    assert_eq!(body["request_id"], id);
    assert!(body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .contains("retry"));
    // The service keeps answering.
    assert_eq!(call(app, "/healthz").await.0, 200);
}

#[tokio::test]
async fn a_handler_past_the_timeout_answers_internal_in_the_envelope() {
    let extra = axum::Router::new().route(
        "/slow",
        get(|| async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            "late"
        }),
    );
    let app = router_with(state(Duration::from_millis(1000)).await, extra);
    let started = std::time::Instant::now();
    let (status, id, body) = call(app, "/slow").await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(status, 500);
    assert_eq!(body["error"]["code"], "internal");
    assert_eq!(body["request_id"], id);
}
