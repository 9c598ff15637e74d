//! Issue 5 webhooks, black-box: signed deliveries from a durable outbox,
//! verified here by an independent verifier, with the retry schedule on a
//! scaled clock, 410, dead letters, re-drive, endpoints and secret rotation.

#[macro_use]
mod support;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Html;
use axum::routing::{get, post};
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::json;
use sha2::Sha256;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Db, Server, ServerOptions, Site};

#[derive(Clone, Debug)]
struct Received {
    path: String,
    at: Instant,
    signature: String,
    event: String,
    attempt: String,
    raw: Vec<u8>,
}

#[derive(Clone, Default)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    counts: Arc<Mutex<HashMap<String, u32>>>,
}

impl Receiver {
    fn all(&self) -> Vec<Received> {
        self.got.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    fn on(&self, path: &str) -> Vec<Received> {
        self.all().into_iter().filter(|r| r.path == path).collect()
    }
}

async fn receive(
    State(r): State<Receiver>,
    Path(path): Path<String>,
    h: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let hv = |n: &str| {
        h.get(n)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    r.got
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Received {
            path: path.clone(),
            at: Instant::now(),
            signature: hv("service-signature"),
            event: hv("service-event"),
            attempt: hv("service-delivery-attempt"),
            raw: body.to_vec(),
        });
    let n = {
        let mut c = r.counts.lock().unwrap_or_else(|p| p.into_inner());
        let e = c.entry(path.clone()).or_default();
        *e += 1;
        *e
    };
    match path.as_str() {
        "flaky" if n <= 2 => StatusCode::INTERNAL_SERVER_ERROR,
        "gone" => StatusCode::GONE,
        "down" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::NO_CONTENT,
    }
}

/// The spec's verifier, written from the spec alone: split on `,`, take `t`
/// and every `v1`, HMAC-SHA256 of `<t>.<raw body>`, constant-time compare,
/// reject when |now - t| > 300 s.
fn verify(header: &str, raw: &[u8], secret: &str) -> bool {
    let mut t = None;
    let mut sigs = Vec::new();
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", v)) => t = v.parse::<i64>().ok(),
            Some(("v1", v)) => sigs.push(v.to_string()),
            _ => {}
        }
    }
    let Some(t) = t else { return false };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    if (now - t).abs() > 300 {
        return false;
    }
    sigs.iter().any(|s| {
        let Ok(expected) = hex::decode(s) else {
            return false;
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
            return false;
        };
        mac.update(format!("{t}.").as_bytes());
        mac.update(raw);
        mac.verify_slice(&expected).is_ok()
    })
}

fn page(n: u32) -> String {
    let next = if n < 6 {
        format!("<a href=\"/blog/{}\">next</a>", n + 1)
    } else {
        String::new()
    };
    format!("<html><head><title>Blog {n}</title></head><body><main><article><h1>Blog {n}</h1><p>Post number {n} has enough words in it to be a real page of content for the crawler.</p>{next}</article></main></body></html>")
}

async fn setup(db: Db) -> (Server, Site, Site, Receiver) {
    let s = Server::start_with(ServerOptions::new(db).env("WEBDATA_WEBHOOK_DELAY_SCALE", "0.001"))
        .await;
    let site = Site::serve(axum::Router::new().route(
        "/blog/{n}",
        get(|Path(n): Path<u32>| async move { Html(page(n)) }),
    ))
    .await;
    let rx = Receiver::default();
    let hook = Site::serve(
        axum::Router::new()
            .route("/hook/{path}", post(receive))
            .with_state(rx.clone()),
    )
    .await;
    (s, site, hook, rx)
}

async fn secret(s: &Server) -> String {
    let org = s.org_id().await;
    let r = s
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/webhook-secret"),
            None,
        )
        .await;
    r.json["data"]["secrets"][0]
        .as_str()
        .expect("secret")
        .to_string()
}

async fn wait_for(rx: &Receiver, path: &str, n: usize, secs: u64) -> Vec<Received> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let got = rx.on(path);
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

on_both!(
    deliveries_are_signed_filtered_and_echo_metadata,
    retries_follow_the_schedule_410_stops_and_dead_letters_are_kept,
    endpoints_receive_everything_and_rotation_sends_two_signatures,
);

async fn deliveries_are_signed_filtered_and_echo_metadata(db: Db) {
    let (s, site, hook, rx) = setup(db).await;
    let key = secret(&s).await;
    let body = json!({"url": site.url("/blog/5"), "sitemap": "skip", "webhook": {"url": hook.url("/hook/ok"), "metadata": {"job": "42"}}});
    let r = s.post("/v1/crawl", body).await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().expect("id").to_string();
    let got = wait_for(&rx, "ok", 4, 20).await;
    let types: Vec<String> = got
        .iter()
        .map(|g| {
            serde_json::from_slice::<serde_json::Value>(&g.raw).expect("json")["type"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let mut sorted = types.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec![
            "crawl.completed",
            "crawl.page",
            "crawl.page",
            "crawl.started"
        ],
        "{types:?}"
    );
    let mut ids = Vec::new();
    for g in &got {
        assert!(
            verify(&g.signature, &g.raw, &key),
            "signature verifies: {}",
            g.signature
        );
        assert!(!verify(&g.signature, &g.raw, "whsec_wrong"));
        let mut tampered = g.raw.clone();
        tampered.push(b' ');
        assert!(
            !verify(&g.signature, &tampered, &key),
            "the raw bytes are what is signed"
        );
        let v: serde_json::Value = serde_json::from_slice(&g.raw).expect("json");
        assert_eq!(
            v["type"].as_str(),
            Some(g.event.as_str()),
            "Service-Event names the type"
        );
        assert_eq!(g.attempt, "1");
        assert_eq!(v["metadata"]["job"], "42");
        assert!(v["createdAt"].as_str().is_some_and(|t| t.ends_with('Z')));
        ids.push(v["id"].as_str().expect("id").to_string());
        match v["type"].as_str() {
            Some("crawl.page") => {
                assert_eq!(v["data"]["id"], id.as_str());
                assert!(v["data"]["document"]["markdown"]
                    .as_str()
                    .is_some_and(|m| m.contains("Post number")));
            }
            Some("crawl.completed") => {
                assert_eq!(v["data"]["status"], "completed");
                assert_eq!(v["data"]["completed"], 2);
                assert!(v["data"].get("data").is_none());
            }
            _ => {}
        }
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "unique event ids");
    // The events filter uses the short names.
    let body = json!({"url": site.url("/blog/6"), "sitemap": "skip", "webhook": {"url": hook.url("/hook/filtered"), "events": ["completed"]}});
    assert_eq!(s.post("/v1/crawl", body).await.status, 202);
    let got = wait_for(&rx, "filtered", 1, 20).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got_after = rx.on("filtered");
    assert_eq!(got.len(), 1);
    assert_eq!(got_after.len(), 1, "only `completed`");
    assert_eq!(got_after[0].event, "crawl.completed");
}

async fn retries_follow_the_schedule_410_stops_and_dead_letters_are_kept(db: Db) {
    let (s, site, hook, rx) = setup(db).await;
    for path in ["flaky", "gone", "down"] {
        let body = json!({"url": site.url("/blog/6"), "sitemap": "skip", "webhook": {"url": hook.url(&format!("/hook/{path}")), "events": ["completed"]}});
        assert_eq!(s.post("/v1/crawl", body).await.status, 202);
    }
    let flaky = wait_for(&rx, "flaky", 3, 20).await;
    assert_eq!(flaky.len(), 3);
    let attempts: Vec<&str> = flaky.iter().map(|f| f.attempt.as_str()).collect();
    assert_eq!(attempts, vec!["1", "2", "3"]);
    let event_ids: Vec<String> = flaky
        .iter()
        .map(|f| {
            serde_json::from_slice::<serde_json::Value>(&f.raw).expect("json")["id"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert!(
        event_ids.iter().all(|i| i == &event_ids[0]),
        "the id is identical across retries"
    );
    // Scaled clock: 10 ms then 20 ms (plus polling), so the second gap is not shorter than the first's minimum.
    assert!(flaky[1].at - flaky[0].at >= Duration::from_millis(10));
    assert!(flaky[2].at - flaky[1].at >= Duration::from_millis(20));
    let down = wait_for(&rx, "down", 8, 30).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(rx.on("down").len(), 8, "8 attempts in total");
    assert_eq!(down.last().map(|d| d.attempt.as_str()), Some("8"));
    assert_eq!(rx.on("gone").len(), 1, "410 stops retries");
    let org = s.org_id().await;
    let dead = s
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/webhook-deliveries?state=dead"),
            None,
        )
        .await;
    let dead = dead.json["data"].as_array().expect("dead").clone();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0]["attempts"], 8);
    assert_eq!(dead[0]["lastStatus"], 503);
    let redrive = s
        .admin(
            Method::POST,
            &format!(
                "/admin/v1/organizations/{org}/webhook-deliveries/{}/redrive",
                dead[0]["id"].as_str().expect("id")
            ),
            None,
        )
        .await;
    assert_eq!(redrive.status, 200, "{}", redrive.text);
    wait_for(&rx, "down", 9, 10).await;
    assert!(rx.on("down").len() >= 9, "re-driven delivery is sent again");
    let delivered = s
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/webhook-deliveries?state=delivered"),
            None,
        )
        .await;
    assert_eq!(delivered.json["data"].as_array().map(|a| a.len()), Some(1));
    s.admin(
        Method::GET,
        &format!("/admin/v1/organizations/{org}/webhook-deliveries?state=weird"),
        None,
    )
    .await
    .assert_error(400, "invalid_request");
}

async fn endpoints_receive_everything_and_rotation_sends_two_signatures(db: Db) {
    let (s, site, hook, rx) = setup(db).await;
    let org = s.org_id().await;
    let ep = s
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org}/webhook-endpoints"),
            Some(json!({"url": hook.url("/hook/endpoint")})),
        )
        .await;
    assert_eq!(ep.status, 201, "{}", ep.text);
    let ep_secret = ep.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    s.admin(
        Method::POST,
        &format!("/admin/v1/organizations/{org}/webhook-endpoints"),
        Some(json!({"url": "http://10.0.0.1/x"})),
    )
    .await
    .assert_error(400, "blocked_url");
    let old = secret(&s).await;
    let rot = s
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org}/webhook-secret/rotate"),
            None,
        )
        .await;
    assert_eq!(rot.status, 200, "{}", rot.text);
    let new = rot.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    assert_ne!(old, new);
    let body = json!({"url": site.url("/blog/6"), "sitemap": "skip", "webhook": {"url": hook.url("/hook/crawl"), "events": ["completed"]}});
    assert_eq!(s.post("/v1/crawl", body).await.status, 202);
    let on_ep = wait_for(&rx, "endpoint", 3, 20).await;
    assert_eq!(
        on_ep.len(),
        3,
        "started, page, completed reach the endpoint"
    );
    for g in &on_ep {
        assert!(
            verify(&g.signature, &g.raw, &ep_secret),
            "endpoint deliveries use the endpoint's secret"
        );
        assert!(!verify(&g.signature, &g.raw, &new));
    }
    let on_crawl = wait_for(&rx, "crawl", 1, 20).await;
    let sig = &on_crawl[0].signature;
    assert_eq!(
        sig.matches("v1=").count(),
        2,
        "two v1 values during the overlap: {sig}"
    );
    assert!(verify(sig, &on_crawl[0].raw, &new));
    assert!(verify(sig, &on_crawl[0].raw, &old));
    // Without overlap only the new secret signs.
    let rot = s
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org}/webhook-secret/rotate"),
            Some(json!({"overlapSeconds": 0})),
        )
        .await;
    let newest = rot.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    let body = json!({"url": site.url("/blog/6"), "sitemap": "skip", "webhook": {"url": hook.url("/hook/crawl2"), "events": ["completed"]}});
    assert_eq!(s.post("/v1/crawl", body).await.status, 202);
    let got = wait_for(&rx, "crawl2", 1, 20).await;
    assert_eq!(got[0].signature.matches("v1=").count(), 1);
    assert!(verify(&got[0].signature, &got[0].raw, &newest));
}
