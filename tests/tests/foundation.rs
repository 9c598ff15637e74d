//! Issue 2, black-box: auth, the error envelope on hostile input, credits,
//! rate and concurrency limits, idempotency, keys, OpenAPI and operations —
//! each against SQLite and against PostgreSQL.
//!
//! Long by design: a test suite (one area of the spec per file).
//! Each test stands alone; splitting the file would only add test
//! binaries to link.

#[macro_use]
mod support;

use axum::routing::get;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;
use support::{article_page, Db, Server, ServerOptions, Site};

on_both!(
    auth_refuses_missing_malformed_unknown_revoked_and_expired_keys,
    hostile_bodies_get_the_envelope_no_charge_and_the_service_keeps_answering,
    unknown_routes_and_wrong_methods_get_the_envelope,
    two_concurrent_scrapes_over_the_balance_exactly_one_succeeds,
    rate_limit_headers_and_429_with_retry_after,
    concurrency_limit_refuses_the_extra_request,
    playground_keys_are_limited_budgeted_hidden_and_expire,
    idempotency_replays_without_charge_conflicts_and_mismatches,
    keys_rotate_and_revoke_through_admin_api_and_audit,
    spend_cap_reached_is_402,
    failed_scrape_costs_nothing,
    operations_endpoints_answer,
    replicas_share_credits_rate_limits_and_revocation,
);

async fn site() -> Site {
    Site::serve(
        axum::Router::new()
            .route(
                "/",
                get(|| async { axum::response::Html(article_page("Home")) }),
            )
            .route(
                "/a",
                get(|| async { axum::response::Html(article_page("Alpha")) }),
            )
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_millis(1500)).await;
                    axum::response::Html(article_page("Slow"))
                }),
            )
            .route(
                "/missing",
                get(|| async { (axum::http::StatusCode::NOT_FOUND, "gone") }),
            ),
    )
    .await
}

async fn auth_refuses_missing_malformed_unknown_revoked_and_expired_keys(db: Db) {
    let s = Server::start(db).await;
    let path = "/v1/team/credit-usage";
    let none = support::Resp::from(s.http.get(s.url(path)).send().await.expect("send")).await;
    none.assert_error(401, "unauthorized");
    assert!(none.message().contains("Authorization"));
    let basic = support::Resp::from(
        s.http
            .get(s.url(path))
            .header("authorization", "Basic abc")
            .send()
            .await
            .expect("send"),
    )
    .await;
    basic.assert_error(401, "unauthorized");
    s.get_as("not-a-key", path)
        .await
        .assert_error(401, "unauthorized");
    s.get_as(&webdata_core::store::generate_key(), path)
        .await
        .assert_error(401, "unauthorized");
    let ok = s.get_as(&s.key, path).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    ok.assert_request_id();
    assert_eq!(ok.json["credits_used"], 0);
    assert_eq!(ok.json["data"]["remainingCredits"], 1000);

    // Revoked: effective on the next request.
    let org = s.org_id().await;
    let created = s
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org}/keys"),
            Some(json!({"name": "temp"})),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text);
    let secret = created.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    let id = created.json["data"]["id"].as_str().expect("id").to_string();
    assert_eq!(s.get_as(&secret, path).await.status, 200);
    s.admin(Method::DELETE, &format!("/admin/v1/keys/{id}"), None)
        .await;
    let revoked = s.get_as(&secret, path).await;
    revoked.assert_error(401, "unauthorized");
    assert!(revoked.message().contains("revoked"));

    // Expired (a playground key an hour later).
    let pg = s
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org}/playground-keys"),
            Some(json!({"person": "a@b.c"})),
        )
        .await;
    let pg_secret = pg.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    assert_eq!(s.get_as(&pg_secret, path).await.status, 200);
    let store = s.store().await;
    sqlx::query("UPDATE api_keys SET expires_at = expires_at - 3600001 WHERE kind = 'playground'")
        .execute(store.pool())
        .await
        .expect("age key");
    let expired = s.get_as(&pg_secret, path).await;
    expired.assert_error(401, "unauthorized");
    assert!(expired.message().contains("expired"));
    assert_eq!(s.credits().await, 1000, "no charge for any of it");
}

async fn hostile_bodies_get_the_envelope_no_charge_and_the_service_keeps_answering(db: Db) {
    let s = Server::start(db).await;
    let site = site().await;
    let url = site.url("/a");
    let raw = |body: Vec<u8>, ct: &'static str| {
        let s = &s;
        async move {
            support::Resp::from(
                s.http
                    .post(s.url("/v1/scrape"))
                    .bearer_auth(&s.key)
                    .header("content-type", ct)
                    .body(body)
                    .send()
                    .await
                    .expect("send"),
            )
            .await
        }
    };
    // 11 MiB body: the server answers 413 without reading it all, so send it
    // on a raw socket and read the answer whatever happens to the upload.
    let big = support::raw_post(&s.base, "/v1/scrape", &s.key, 11 * 1024 * 1024).await;
    big.assert_error(413, "invalid_request");
    // 100k-deep JSON.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let r = raw(deep.into_bytes(), "application/json").await;
    r.assert_error(400, "invalid_request");
    let deep_obj = format!(
        "{{\"url\":{}1{}}}",
        "{\"a\":".repeat(100_000),
        "}".repeat(100_000)
    );
    raw(deep_obj.into_bytes(), "application/json")
        .await
        .assert_error(400, "invalid_request");
    // Invalid UTF-8.
    let mut bad = format!("{{\"url\":\"{url}\",\"x\":\"").into_bytes();
    bad.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    bad.extend_from_slice(b"\"}");
    let r = raw(bad, "application/json").await;
    r.assert_error(400, "invalid_request");
    assert!(r.message().contains("UTF-8"), "{}", r.message());
    // Not JSON at all, and the wrong content type.
    raw(b"url=http://x".to_vec(), "application/json")
        .await
        .assert_error(400, "invalid_request");
    raw(format!("{{\"url\":\"{url}\"}}").into_bytes(), "text/plain")
        .await
        .assert_error(415, "invalid_request");
    raw(b"".to_vec(), "application/json")
        .await
        .assert_error(400, "invalid_request");
    raw(b"[1,2]".to_vec(), "application/json")
        .await
        .assert_error(400, "invalid_request");

    let cases: Vec<(serde_json::Value, &str)> = vec![
        (json!({"url": url, "timeout": "fast"}), "timeout"),
        (json!({"url": url, "timeout": -5}), "timeout"),
        (
            json!({"url": url, "timeout": 18446744073709551616u128 as f64}),
            "timeout",
        ),
        (
            json!({"url": url, "chunkSize": 9_223_372_036_854_775_807i64}),
            "chunkSize",
        ),
        (json!({"url": url, "waitFor": 30001}), "waitFor"),
        (
            json!({"url": url, "formats": ["markdown", "pdf"]}),
            "formats",
        ),
        (
            json!({"url": url, "onlyMainContent": "yes"}),
            "onlyMainContent",
        ),
        (json!({"url": url, "bogusField": 1}), "bogusField"),
        (
            json!({"url": url, "location": {"country": "de", "planet": "mars"}}),
            "planet",
        ),
        (
            json!({"url": url, "actions": [{"type": "click"}]}),
            "actions[0]",
        ),
        (json!({"url": 42}), "url"),
        (json!({"url": "notaurl"}), "url"),
        (json!({"url": "ftp://example.com/"}), "url"),
        (json!({}), "url"),
    ];
    for (body, field) in cases {
        let r = s.post("/v1/scrape", body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(
            r.message().contains(field),
            "message for {body} should name `{field}`: {}",
            r.message()
        );
    }
    // 2^64 as a literal integer (not representable as f64 exactly either).
    let r = raw(
        format!("{{\"url\":\"{url}\",\"timeout\":18446744073709551616}}").into_bytes(),
        "application/json",
    )
    .await;
    r.assert_error(400, "invalid_request");
    assert!(r.message().contains("timeout"), "{}", r.message());
    // Idempotency key of 256 characters.
    let long = "k".repeat(256);
    let r = s
        .post_as(
            &s.key,
            "/v1/scrape",
            json!({"url": url}),
            &[("idempotency-key", long.as_str())],
        )
        .await;
    r.assert_error(400, "invalid_request");
    assert!(r.message().contains("Idempotency-Key"));
    // Nothing was charged, and the service still answers a good request.
    assert_eq!(s.credits().await, 1000);
    let ok = s.post("/v1/scrape", json!({"url": url})).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_eq!(ok.json["credits_used"], 1);
    assert_eq!(s.credits().await, 999);
}

async fn unknown_routes_and_wrong_methods_get_the_envelope(db: Db) {
    let s = Server::start(db).await;
    let r = s.get_as(&s.key, "/v1/nope").await;
    r.assert_error(404, "not_found");
    let r = support::Resp::from(
        s.http
            .get(s.url("/definitely/not"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    r.assert_error(404, "not_found");
    // Search and extract exist; without a provider or model they answer 501.
    s.post("/v1/search", json!({"query": "anything"}))
        .await
        .assert_error(501, "not_configured");
    s.post(
        "/v1/extract",
        json!({"urls": ["http://127.0.0.2:9/"], "prompt": "x"}),
    )
    .await
    .assert_error(501, "not_configured");
    let r = s.get_as(&s.key, "/v1/scrape").await;
    r.assert_error(405, "invalid_request");
    assert!(r.message().contains("GET"));
    let r = support::Resp::from(s.http.delete(s.url("/healthz")).send().await.expect("send")).await;
    r.assert_error(405, "invalid_request");
}

async fn two_concurrent_scrapes_over_the_balance_exactly_one_succeeds(db: Db) {
    let s = Server::start_with(ServerOptions::new(db).credits(1)).await;
    let site = site().await;
    for round in 0..3 {
        if round > 0 {
            s.set_org(json!({"credits": 1})).await;
        }
        let a = s.post("/v1/scrape", json!({"url": site.url("/a")}));
        let b = s.post("/v1/scrape", json!({"url": site.url("/")}));
        let (a, b) = tokio::join!(a, b);
        let mut statuses = [a.status, b.status];
        statuses.sort();
        assert_eq!(statuses, [200, 402], "a: {} b: {}", a.text, b.text);
        let refused = if a.status == 402 { &a } else { &b };
        refused.assert_error(402, "insufficient_credits");
        assert_eq!(s.credits().await, 0, "never negative");
    }
}

async fn rate_limit_headers_and_429_with_retry_after(db: Db) {
    let s = Server::start(db).await;
    s.set_org(json!({"rateLimitPerMinute": 3})).await;
    let path = "/v1/team/credit-usage";
    support::away_from_minute_boundary().await;
    let first = s.get_as(&s.key, path).await;
    assert_eq!(
        first.header("ratelimit-policy"),
        Some("\"default\";q=3;w=60")
    );
    let rl = first.header("ratelimit").expect("RateLimit");
    assert!(rl.starts_with("\"default\";r=2;t="), "{rl}");
    s.get_as(&s.key, path).await;
    let third = s.get_as(&s.key, path).await;
    assert_eq!(third.status, 200);
    let fourth = s.get_as(&s.key, path).await;
    fourth.assert_error(429, "rate_limited");
    let retry: i64 = fourth
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=60).contains(&retry));
    assert_eq!(
        fourth.json["error"]["retry_after_ms"].as_i64(),
        Some(retry * 1000)
    );
    assert_eq!(
        fourth.header("ratelimit-policy"),
        Some("\"default\";q=3;w=60")
    );
    assert!(fourth
        .header("ratelimit")
        .is_some_and(|v| v.contains("r=0")));
    // Unauthenticated answers do not spend the bucket and carry no policy.
    let anon = support::Resp::from(s.http.get(s.url(path)).send().await.expect("send")).await;
    assert_eq!(anon.status, 401);
    assert!(anon.header("ratelimit-policy").is_none());
}

async fn concurrency_limit_refuses_the_extra_request(db: Db) {
    let s = Server::start(db).await;
    s.set_org(json!({"concurrencyLimit": 1})).await;
    let site = site().await;
    let slow = s.post("/v1/scrape", json!({"url": site.url("/slow")}));
    let second = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        s.get_as(&s.key, "/v1/team/credit-usage").await
    };
    let (slow, second) = tokio::join!(slow, second);
    assert_eq!(slow.status, 200, "{}", slow.text);
    second.assert_error(429, "rate_limited");
    assert!(second.json["error"]["retry_after_ms"].as_i64().is_some());
    // The slot comes back when the request ends.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.get_as(&s.key, "/v1/team/credit-usage").await.status, 200);
}

async fn playground_keys_are_limited_budgeted_hidden_and_expire(db: Db) {
    let s = Server::start(db).await;
    let org = s.org_id().await;
    let pg = s
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org}/playground-keys"),
            Some(json!({"person": "dev@acme.test"})),
        )
        .await;
    assert_eq!(pg.status, 201, "{}", pg.text);
    let key = pg.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    // Hidden from the key list, visible with includePlayground, audited.
    let list = s
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/keys"),
            None,
        )
        .await;
    assert!(list.json["data"]
        .as_array()
        .expect("keys")
        .iter()
        .all(|k| k["kind"] == "standard"));
    let all = s
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/keys?includePlayground=true"),
            None,
        )
        .await;
    assert!(all.json["data"]
        .as_array()
        .expect("keys")
        .iter()
        .any(|k| k["kind"] == "playground"));
    let audit = s
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/audit"),
            None,
        )
        .await;
    assert!(audit.text.contains("playground_key.created"));
    // 20 requests a minute.
    support::away_from_minute_boundary().await;
    let first = s.get_as(&key, "/v1/team/credit-usage").await;
    assert_eq!(
        first.header("ratelimit-policy"),
        Some("\"default\";q=20;w=60")
    );
    assert_eq!(first.json["data"]["keyRemainingCredits"], 50);
    let mut limited = false;
    for _ in 0..21 {
        let r = s.get_as(&key, "/v1/team/credit-usage").await;
        if r.status == 429 {
            r.assert_error(429, "rate_limited");
            limited = true;
            break;
        }
    }
    assert!(limited, "the 21st request in a minute is refused");
    // 50 credits in total, then 402 for that key only.
    let store = s.store().await;
    sqlx::query("UPDATE api_keys SET spent = 50 WHERE kind = 'playground'")
        .execute(store.pool())
        .await
        .expect("spend");
    s.get_as(&key, "/v1/team/credit-usage")
        .await
        .assert_error(402, "insufficient_credits");
    assert_eq!(
        s.get_as(&s.key, "/v1/team/credit-usage").await.status,
        200,
        "other keys unaffected"
    );
}

async fn idempotency_replays_without_charge_conflicts_and_mismatches(db: Db) {
    let s = Server::start(db).await;
    let site = site().await;
    let body = json!({"url": site.url("/a"), "formats": ["markdown"]});
    let first = s
        .post_as(
            &s.key,
            "/v1/scrape",
            body.clone(),
            &[("idempotency-key", "abc-1")],
        )
        .await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert!(first.header("idempotent-replayed").is_none());
    let hits = site.hits();
    let again = s
        .post_as(
            &s.key,
            "/v1/scrape",
            body.clone(),
            &[("idempotency-key", "abc-1")],
        )
        .await;
    assert_eq!(again.status, 200);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json["data"], first.json["data"]);
    assert_eq!(site.hits(), hits, "the work was not redone");
    assert_eq!(s.credits().await, 999, "charged once");
    // Same key, different body.
    let other = json!({"url": site.url("/"), "formats": ["markdown"]});
    s.post_as(&s.key, "/v1/scrape", other, &[("idempotency-key", "abc-1")])
        .await
        .assert_error(422, "idempotency_mismatch");
    // Same key while the first is still running.
    let slow = json!({"url": site.url("/slow")});
    let a = s.post_as(
        &s.key,
        "/v1/scrape",
        slow.clone(),
        &[("idempotency-key", "slow-1")],
    );
    let b = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        s.post_as(
            &s.key,
            "/v1/scrape",
            slow.clone(),
            &[("idempotency-key", "slow-1")],
        )
        .await
    };
    let (a, b) = tokio::join!(a, b);
    assert_eq!(a.status, 200, "{}", a.text);
    b.assert_error(409, "idempotency_in_progress");
    assert_eq!(s.credits().await, 998);
    // A failed request frees its key: the retry runs again.
    let fail = json!({"url": "http://127.0.0.2:9/", "timeout": 2000});
    let f1 = s
        .post_as(
            &s.key,
            "/v1/scrape",
            fail.clone(),
            &[("idempotency-key", "f-1")],
        )
        .await;
    assert!(f1.status >= 400);
    let f2 = s
        .post_as(&s.key, "/v1/scrape", fail, &[("idempotency-key", "f-1")])
        .await;
    assert!(f2.header("idempotent-replayed").is_none());
    // Keys belong to the organization: the same key text elsewhere is independent.
    assert_eq!(s.credits().await, 998);
}

async fn keys_rotate_and_revoke_through_admin_api_and_audit(db: Db) {
    let s = Server::start(db).await;
    let org = s.org_id().await;
    let created = s
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org}/keys"),
            Some(json!({"name": "ci"})),
        )
        .await;
    let old_secret = created.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    let old_id = created.json["data"]["id"].as_str().expect("id").to_string();
    assert_eq!(
        created.json["data"]["prefix"].as_str(),
        Some(&old_secret[..10])
    );
    let listed = s
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/keys"),
            None,
        )
        .await;
    assert!(
        !listed.text.contains(&old_secret),
        "the secret is never listed"
    );
    let rotated = s
        .admin(
            Method::POST,
            &format!("/admin/v1/keys/{old_id}/rotate"),
            None,
        )
        .await;
    assert_eq!(rotated.status, 201, "{}", rotated.text);
    assert_eq!(rotated.json["data"]["name"], "ci");
    let new_secret = rotated.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    s.get_as(&old_secret, "/v1/team/credit-usage")
        .await
        .assert_error(401, "unauthorized");
    assert_eq!(
        s.get_as(&new_secret, "/v1/team/credit-usage").await.status,
        200
    );
    let audit = s
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/audit"),
            None,
        )
        .await;
    assert!(audit.text.contains("key.rotated"));
    // The admin API needs its token.
    let r = support::Resp::from(
        s.http
            .get(s.url("/admin/v1/organizations"))
            .bearer_auth("wrong")
            .send()
            .await
            .expect("send"),
    )
    .await;
    r.assert_error(401, "unauthorized");
    let r = s
        .admin(
            Method::POST,
            "/admin/v1/organizations",
            Some(json!({"name": "x", "credits": -1})),
        )
        .await;
    r.assert_error(400, "invalid_request");
    let r = s
        .admin(Method::GET, "/admin/v1/organizations/org_nope", None)
        .await;
    r.assert_error(404, "not_found");
}

async fn spend_cap_reached_is_402(db: Db) {
    let s = Server::start(db).await;
    let site = site().await;
    s.set_org(json!({"spendCap": 1})).await;
    let ok = s.post("/v1/scrape", json!({"url": site.url("/a")})).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    let capped = s.post("/v1/scrape", json!({"url": site.url("/a")})).await;
    capped.assert_error(402, "spend_cap_reached");
    assert_eq!(s.credits().await, 999);
}

async fn failed_scrape_costs_nothing(db: Db) {
    let s = Server::start(db).await;
    let site = site().await;
    // A target error page, a blocked address and a refused connection.
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/missing")}))
        .await;
    assert_eq!(r.json["credits_used"], 0, "{}", r.text);
    r.assert_request_id();
    s.post("/v1/scrape", json!({"url": "http://127.0.0.1:9/"}))
        .await
        .assert_error(400, "blocked_url");
    s.post("/v1/scrape", json!({"url": "http://10.0.0.1/"}))
        .await
        .assert_error(400, "blocked_url");
    let dead = s
        .post(
            "/v1/scrape",
            json!({"url": "http://127.0.0.2:9/", "timeout": 2000}),
        )
        .await;
    assert!(dead.status >= 500, "{}", dead.text);
    assert_eq!(dead.json["credits_used"], 0);
    assert_eq!(s.credits().await, 1000);
    let store = s.store().await;
    let charged: i64 =
        sqlx::query_scalar("SELECT CAST(COALESCE(SUM(settled), 0) AS BIGINT) FROM credit_ledger")
            .fetch_one(store.pool())
            .await
            .expect("ledger");
    assert_eq!(charged, 0);
}

async fn operations_endpoints_answer(db: Db) {
    let s = Server::start(db).await;
    let h = support::Resp::from(s.http.get(s.url("/healthz")).send().await.expect("send")).await;
    assert_eq!(h.status, 200);
    h.assert_request_id();
    let r = support::Resp::from(s.http.get(s.url("/readyz")).send().await.expect("send")).await;
    assert_eq!(r.status, 200);
    s.get_as(&s.key, "/v1/team/credit-usage").await;
    let m = support::Resp::from(s.http.get(s.url("/metrics")).send().await.expect("send")).await;
    assert_eq!(m.status, 200);
    assert!(m.text.contains("webdata_http_requests_total{method=\"GET\",route=\"/v1/team/credit-usage\",status=\"200\"} 1"), "{}", m.text);
    let doc = support::Resp::from(
        s.http
            .get(s.url("/v1/openapi.json"))
            .send()
            .await
            .expect("send"),
    )
    .await;
    assert_eq!(doc.status, 200);
    for p in [
        "/v1/scrape",
        "/v1/crawl",
        "/v1/crawl/{id}",
        "/v1/crawl/{id}/events",
        "/v1/team/credit-usage",
        "/v1/map",
    ] {
        assert!(doc.json["paths"].get(p).is_some(), "{p}");
    }
    assert!(
        doc.json["components"]["schemas"]["MapResponse"]["properties"]
            .get("budgetLimited")
            .is_some(),
        "{}",
        doc.json["components"]["schemas"]["MapResponse"]
    );
    // Logs carry the request id.
    let id = h.header("x-request-id").expect("id").to_string();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(s.logs().contains(&id), "request id {id} in the logs");
}

async fn replicas_share_credits_rate_limits_and_revocation(db: Db) {
    let a = Server::start_with(ServerOptions::new(db).credits(3)).await;
    let mut opts = ServerOptions::new(db);
    opts.database_url = Some(a.database_url.clone());
    let b = Server::start_with(opts).await;
    let site = site().await;
    // Six concurrent scrapes across two replicas against 3 credits: exactly three succeed.
    let mut calls = Vec::new();
    for i in 0..6 {
        let server = if i % 2 == 0 { &a } else { &b };
        calls.push(server.post_as(
            &a.key,
            "/v1/scrape",
            json!({"url": site.url("/a"), "maxAge": 0}),
            &[],
        ));
    }
    let results = futures::future::join_all(calls).await;
    let ok = results.iter().filter(|r| r.status == 200).count();
    let refused = results.iter().filter(|r| r.status == 402).count();
    assert_eq!(
        (ok, refused),
        (3, 3),
        "{:?}",
        results.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert_eq!(a.credits().await, 0);
    // One per-minute window across replicas (a fresh organization, away from a minute boundary).
    let org2 = a
        .admin(
            Method::POST,
            "/admin/v1/organizations",
            Some(json!({"name": "limited", "rateLimitPerMinute": 4})),
        )
        .await;
    let org2 = org2.json["data"]["id"].as_str().expect("org").to_string();
    let k2 = a
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org2}/keys"),
            Some(json!({"name": "k"})),
        )
        .await;
    let k2 = k2.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    support::away_from_minute_boundary().await;
    let mut statuses = Vec::new();
    for i in 0..6 {
        let server = if i % 2 == 0 { &a } else { &b };
        statuses.push(server.get_as(&k2, "/v1/team/credit-usage").await.status);
    }
    assert_eq!(statuses, vec![200, 200, 200, 200, 429, 429]);
    // Revoked on one replica, refused on the other at once.
    let org = a.org_id().await;
    let k = a
        .admin(
            Method::POST,
            &format!("/admin/v1/organizations/{org}/keys"),
            Some(json!({"name": "r"})),
        )
        .await;
    let secret = k.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    let id = k.json["data"]["id"].as_str().expect("id").to_string();
    assert_eq!(b.get_as(&secret, "/v1/team/credit-usage").await.status, 200);
    a.admin(Method::DELETE, &format!("/admin/v1/keys/{id}"), None)
        .await;
    b.get_as(&secret, "/v1/team/credit-usage")
        .await
        .assert_error(401, "unauthorized");
}
