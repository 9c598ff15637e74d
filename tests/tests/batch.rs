//! Batch scrape through the real binary, on SQLite and PostgreSQL: given
//! URLs only (nothing discovered), invalid URLs listed and not charged,
//! robots.txt respected and reported, paging, events and signed
//! `batch_scrape.*` webhooks, cancel, a restart in the middle, and
//! batch and crawl ids kept apart.

#[macro_use]
mod support;

use axum::extract::Path;
use axum::response::Html;
use axum::routing::{get, post};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Db, Resp, Server, ServerOptions, Site};

fn page(title: &str, links: &[&str]) -> String {
    let links: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><main><article><h1>{title}</h1>\
         <p>{title} is a page of the test site with enough words in it to count as a real page for the scraper.</p>\
         <ul>{links}</ul></article></main></body></html>"
    )
}

/// Webhook deliveries received: the signature header and the raw body.
type Hooks = Arc<Mutex<Vec<(String, String)>>>;

/// Pages /p/{n} (each links to /next/{n}, which must never be fetched),
/// /private/* disallowed by robots.txt, /slow/{n} (300 ms), and a webhook
/// receiver at /hook.
async fn site(hooks: Hooks) -> Site {
    Site::serve(
        axum::Router::new()
            .route(
                "/robots.txt",
                get(|| async { "User-agent: *\nDisallow: /private\n" }),
            )
            .route(
                "/p/{n}",
                get(|Path(n): Path<u32>| async move {
                    Html(page(&format!("Page {n}"), &[&format!("/next/{n}")]))
                }),
            )
            .route("/next/{n}", get(|| async { Html(page("Never", &[])) }))
            .route("/private/{p}", get(|| async { Html(page("Private", &[])) }))
            .route(
                "/slow/{n}",
                get(|Path(n): Path<u32>| async move {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    Html(page(&format!("Slow {n}"), &[]))
                }),
            )
            .route(
                "/hook",
                post(move |headers: axum::http::HeaderMap, body: String| {
                    let hooks = hooks.clone();
                    async move {
                        let sig = headers
                            .get("service-signature")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("")
                            .to_string();
                        hooks
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push((sig, body));
                        "ok"
                    }
                }),
            ),
    )
    .await
}

async fn wait_done(s: &Server, id: &str) -> Resp {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = s
            .get_as(&s.key, &format!("/v1/batch/scrape/{id}?limit=1"))
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        if ["completed", "failed", "cancelled"].contains(&r.json["status"].as_str().unwrap_or("")) {
            return r;
        }
        assert!(
            Instant::now() < deadline,
            "batch did not finish: {}\n{}",
            r.text,
            s.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn all_urls(s: &Server, id: &str) -> Vec<String> {
    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/batch/scrape/{id}?limit=2&cursor={c}"),
            None => format!("/v1/batch/scrape/{id}?limit=2"),
        };
        let r = s.get_as(&s.key, &path).await;
        assert_eq!(r.status, 200, "{}", r.text);
        for d in r.json["data"].as_array().expect("data") {
            got.push(
                d["metadata"]["sourceURL"]
                    .as_str()
                    .or(d["url"].as_str())
                    .unwrap_or("")
                    .to_string(),
            );
        }
        match r.json["next"].as_str() {
            Some(n) => cursor = Some(n.to_string()),
            None => break,
        }
    }
    got.sort();
    got
}

on_both!(
    given_urls_only_invalid_listed_robots_respected_each_page_charged_once,
    bad_requests_are_refused_naming_the_url,
    webhooks_are_batch_scrape_events_signed_like_crawls,
    cancel_and_restart_keep_every_page_once,
);

async fn given_urls_only_invalid_listed_robots_respected_each_page_charged_once(db: Db) {
    let s = Server::start(db).await;
    let site = site(Hooks::default()).await;
    let r = s
        .post(
            "/v1/batch/scrape",
            json!({
                "urls": [site.url("/p/1"), site.url("/p/2"), "not a url", site.url("/p/3"), site.url("/p/1"),
                         site.url("/private/x"), "http://127.0.0.1:9/loopback"],
                "ignoreInvalidURLs": true,
                "scrapeOptions": {"formats": ["markdown"]},
            }),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.json["status"], "queued");
    assert_eq!(
        r.json["invalidURLs"],
        json!(["not a url", "http://127.0.0.1:9/loopback"])
    );
    let id = r.json["id"].as_str().expect("id").to_string();
    assert!(id.starts_with("batch_"), "{id}");
    let done = wait_done(&s, &id).await;
    assert_eq!(done.json["status"], "completed", "{}", done.text);
    let want: Vec<String> = (1..=3).map(|n| site.url(&format!("/p/{n}"))).collect();
    assert_eq!(
        all_urls(&s, &id).await,
        want,
        "the given URLs once each; no link followed"
    );
    assert_eq!(done.json["completed"], 3);
    assert_eq!(done.json["credits_used"], 3);
    assert_eq!(s.credits().await, 1000 - 3);
    let e = s
        .get_as(&s.key, &format!("/v1/batch/scrape/{id}/errors"))
        .await;
    assert_eq!(e.status, 200, "{}", e.text);
    assert_eq!(e.json["robotsBlocked"], json!([site.url("/private/x")]));
    assert_eq!(e.json["errors"], json!([]));
    // Batch and crawl ids do not mix; another organization sees neither.
    s.get_as(&s.key, &format!("/v1/crawl/{id}"))
        .await
        .assert_error(404, "not_found");
    s.get_as(&s.key, "/v1/batch/scrape/crawl_nope")
        .await
        .assert_error(404, "not_found");
    let c = s
        .post("/v1/crawl", json!({"url": site.url("/p/9"), "limit": 1}))
        .await;
    let cid = c.json["id"].as_str().expect("crawl id").to_string();
    s.get_as(&s.key, &format!("/v1/batch/scrape/{cid}"))
        .await
        .assert_error(404, "not_found");
    // The ledger names the operation.
    let ledger = s
        .admin(
            reqwest::Method::GET,
            &format!("/admin/v1/organizations/{}/ledger", s.org_id().await),
            None,
        )
        .await;
    assert!(ledger.text.contains("batch_scrape"), "{}", ledger.text);
}

async fn bad_requests_are_refused_naming_the_url(db: Db) {
    let s = Server::start(db).await;
    let site = site(Hooks::default()).await;
    let r = s
        .post(
            "/v1/batch/scrape",
            json!({"urls": [site.url("/p/1"), "ftp://x"]}),
        )
        .await;
    r.assert_error(400, "invalid_request");
    assert!(r.message().contains("urls[1]"), "{}", r.text);
    let r = s
        .post(
            "/v1/batch/scrape",
            json!({"urls": [site.url("/p/1"), "http://127.0.0.1:9/"]}),
        )
        .await;
    r.assert_error(400, "blocked_url");
    assert!(r.message().contains("urls[1]"), "{}", r.text);
    s.post("/v1/batch/scrape", json!({"urls": []}))
        .await
        .assert_error(400, "invalid_request");
    let many: Vec<String> = (0..10_001)
        .map(|n| format!("https://example.com/{n}"))
        .collect();
    let r = s.post("/v1/batch/scrape", json!({"urls": many})).await;
    r.assert_error(400, "invalid_request");
    assert!(r.message().contains("10000"), "{}", r.text);
    s.post(
        "/v1/batch/scrape",
        json!({"urls": [site.url("/p/1")], "limit": 3}),
    )
    .await
    .assert_error(400, "invalid_request");
    s.post(
        "/v1/batch/scrape",
        json!({"urls": ["nope"], "ignoreInvalidURLs": true}),
    )
    .await
    .assert_error(400, "invalid_request");
    assert_eq!(s.credits().await, 1000, "refusals cost nothing");
}

async fn webhooks_are_batch_scrape_events_signed_like_crawls(db: Db) {
    let s = Server::start(db).await;
    let hooks = Hooks::default();
    let site = site(hooks.clone()).await;
    let r = s
        .post(
            "/v1/batch/scrape",
            json!({"urls": [site.url("/p/1"), site.url("/p/2")],
                   "webhook": {"url": site.url("/hook"), "metadata": {"job": "nightly"}}}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().expect("id").to_string();
    wait_done(&s, &id).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let got = loop {
        let got: Vec<(String, serde_json::Value, String)> = hooks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(sig, raw)| {
                (
                    sig.clone(),
                    serde_json::from_str(raw).unwrap_or_default(),
                    raw.clone(),
                )
            })
            .collect();
        if got
            .iter()
            .any(|(_, v, _)| v["type"] == "batch_scrape.completed")
            && got
                .iter()
                .filter(|(_, v, _)| v["type"] == "batch_scrape.page")
                .count()
                == 2
        {
            break got;
        }
        assert!(Instant::now() < deadline, "webhooks: {got:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut types: Vec<&str> = got
        .iter()
        .filter_map(|(_, v, _)| v["type"].as_str())
        .collect();
    types.sort();
    types.dedup();
    assert_eq!(
        types,
        [
            "batch_scrape.completed",
            "batch_scrape.page",
            "batch_scrape.started"
        ]
    );
    let secrets = s
        .admin(
            reqwest::Method::GET,
            &format!(
                "/admin/v1/organizations/{}/webhook-secret",
                s.org_id().await
            ),
            None,
        )
        .await;
    let secret = secrets.json["data"]["secrets"][0]
        .as_str()
        .expect("secret")
        .to_string();
    use hmac::Mac;
    for (sig, v, raw) in &got {
        assert_eq!(v["metadata"]["job"], "nightly");
        assert_eq!(v["data"]["id"], id.as_str());
        let t = sig
            .split(',')
            .find_map(|p| p.strip_prefix("t="))
            .expect("t");
        let v1 = sig
            .split(',')
            .find_map(|p| p.strip_prefix("v1="))
            .expect("v1");
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("key");
        mac.update(format!("{t}.{raw}").as_bytes());
        assert_eq!(
            v1,
            hex::encode(mac.finalize().into_bytes()),
            "signed with the organization's secret"
        );
    }
}

async fn cancel_and_restart_keep_every_page_once(db: Db) {
    let site = site(Hooks::default()).await;
    let mut a =
        Server::start_with(ServerOptions::new(db).env("WEBDATA_WORKER_CONCURRENCY", "1")).await;
    let urls: Vec<String> = (1..=6).map(|n| site.url(&format!("/slow/{n}"))).collect();
    let r = a.post("/v1/batch/scrape", json!({"urls": urls})).await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().expect("id").to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = a.get_as(&a.key, &format!("/v1/batch/scrape/{id}")).await;
        if r.json["completed"].as_i64().unwrap_or(0) >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "{}", r.text);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    a.kill();
    let store = webdata_core::Store::connect(&a.database_url)
        .await
        .expect("store");
    sqlx::query("UPDATE frontier SET lease_until = 0 WHERE state = 'leased'")
        .execute(store.pool())
        .await
        .expect("expire");
    let mut opts = ServerOptions::new(db);
    opts.database_url = Some(a.database_url.clone());
    let mut b = Server::start_with(opts).await;
    b.key = a.key.clone();
    let done = wait_done(&b, &id).await;
    assert_eq!(done.json["status"], "completed", "{}", done.text);
    let mut want = urls.clone();
    want.sort();
    assert_eq!(
        all_urls(&b, &id).await,
        want,
        "every page exactly once after the restart"
    );
    assert_eq!(done.json["credits_used"], 6);

    // Cancel: queued pages are dropped at no cost, scraped ones stay.
    let urls: Vec<String> = (10..=30).map(|n| site.url(&format!("/slow/{n}"))).collect();
    let r = b.post("/v1/batch/scrape", json!({"urls": urls})).await;
    let id = r.json["id"].as_str().expect("id").to_string();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let c = Resp::from(
        b.http
            .delete(b.url(&format!("/v1/batch/scrape/{id}")))
            .bearer_auth(&b.key)
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(c.status, 200, "{}", c.text);
    assert_eq!(c.json["status"], "cancelled");
    let done = wait_done(&b, &id).await;
    let charged = done.json["credits_used"].as_i64().expect("credits");
    assert!(charged < 21, "cancelled early: {}", done.text);
    assert_eq!(done.json["completed"].as_i64(), Some(charged));
}
