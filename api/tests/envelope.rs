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

async fn send(app: axum::Router, method: &str, path: &str) -> axum::response::Response {
    app.oneshot(
        Request::builder()
            .method(method)
            .uri(path)
            .body(Body::empty())
            .expect("request"),
    )
    .await
    .expect("response")
}

async fn json_of(resp: axum::response::Response) -> serde_json::Value {
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .expect("body");
    serde_json::from_slice(&bytes).expect("json body")
}

/// Errors the router makes itself (a wrong method, an unknown path) come in
/// the shape the caller reads: Firecrawl's body under `/firecrawl` and on
/// its listener, our envelope elsewhere; `/dashboard/…/` is the page
/// without the slash.
#[tokio::test]
async fn router_errors_come_in_the_callers_shape() {
    let st = state(Duration::from_secs(5)).await;
    let app = router_with(st.clone(), axum::Router::new());
    let listener = webdata_api::firecrawl::root_router(st);

    for (app, base) in [(app.clone(), "/firecrawl"), (listener.clone(), "")] {
        let resp = send(app.clone(), "PUT", &format!("{base}/v1/scrape")).await;
        assert_eq!(resp.status(), 405, "{base}");
        assert_eq!(
            resp.headers().get("allow").and_then(|v| v.to_str().ok()),
            Some("POST")
        );
        let body = json_of(resp).await;
        assert_eq!(body["success"], false, "{body}");
        assert_eq!(body["code"], "invalid_request", "{body}");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|m| m.contains("method PUT is not allowed")),
            "{base}: {body}"
        );
        let body = json_of(send(app, "GET", &format!("{base}/v1/nothing")).await).await;
        assert_eq!(body["code"], "not_found", "{base}: {body}");
        assert!(
            body["error"]
                .as_str()
                .is_some_and(|m| m
                    .ends_with("/v1/nothing is not part of webdata's Firecrawl-compatible API")),
            "{base}: {body}"
        );
    }

    let resp = send(app.clone(), "GET", "/v1/nothing").await;
    assert_eq!(resp.status(), 404);
    let body = json_of(resp).await;
    assert_eq!(body["error"]["code"], "not_found", "{body}");
    assert_eq!(body["credits_used"], 0, "{body}");

    for (from, to) in [
        ("/dashboard/", "/dashboard"),
        ("/dashboard/keys/?page=2", "/dashboard/keys?page=2"),
    ] {
        let resp = send(app.clone(), "GET", from).await;
        assert_eq!(resp.status(), 308, "{from}");
        assert!(
            resp.headers()
                .get("content-security-policy")
                .is_some_and(|v| v.to_str().unwrap_or("").contains("default-src 'none'")),
            "{from}: the dashboard's headers"
        );
        assert_eq!(
            resp.headers().get("location").and_then(|v| v.to_str().ok()),
            Some(to)
        );
    }
    assert_eq!(send(app, "GET", "/dashboard//x/").await.status(), 404);
}
