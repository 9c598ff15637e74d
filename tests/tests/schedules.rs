//! Scheduled crawls through the real binary, on SQLite and PostgreSQL. The
//! clock is controlled by moving a schedule's `next_run_at` into the past
//! in its store (the scheduler ticks every 100 ms here): runs start on time
//! as ordinary crawls with change tracking, summarise what changed and
//! send `schedule.run.completed`; suspend, concurrency policies and the
//! starting deadline hold; two processes on one store never start a run
//! twice; bad schedules are refused naming the field.

#[macro_use]
mod support;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{Html, IntoResponse};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Db, Server, ServerOptions, Site};

#[derive(Default)]
struct Web {
    pages: HashMap<String, String>,
    /// Milliseconds every page takes.
    delay_ms: u64,
    /// Webhook deliveries: (event type, body).
    hooks: Vec<(String, serde_json::Value)>,
}

type Shared = Arc<Mutex<Web>>;

async fn site(web: Shared) -> Site {
    async fn serve(State(web): State<Shared>, uri: Uri) -> axum::response::Response {
        let (page, delay) = {
            let w = web.lock().unwrap_or_else(|p| p.into_inner());
            (w.pages.get(uri.path()).cloned(), w.delay_ms)
        };
        tokio::time::sleep(Duration::from_millis(delay)).await;
        match page {
            Some(html) => Html(html).into_response(),
            None => (StatusCode::NOT_FOUND, "not found").into_response(),
        }
    }
    async fn hook(State(web): State<Shared>, headers: HeaderMap, body: String) -> StatusCode {
        let kind = headers
            .get("service-event")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let v = serde_json::from_str(&body).unwrap_or_default();
        web.lock()
            .unwrap_or_else(|p| p.into_inner())
            .hooks
            .push((kind, v));
        StatusCode::OK
    }
    Site::serve(
        axum::Router::new()
            .route("/hook", axum::routing::post(hook))
            .fallback(serve)
            .with_state(web),
    )
    .await
}

fn article(title: &str, extra: &str, links: &str) -> String {
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><main><article><h1>{title}</h1>\
         <p>{title} is a page of the watched site with enough words to count as a real page for the scraper.</p>\
         {extra}{links}</article></main></body></html>"
    )
}

fn three_pages(web: &Shared) {
    let mut w = web.lock().unwrap_or_else(|p| p.into_inner());
    w.pages.insert(
        "/".into(),
        article("Home", "", "<a href=\"/a\">A</a> <a href=\"/b\">B</a>"),
    );
    w.pages.insert("/a".into(), article("Page A", "", ""));
    w.pages.insert("/b".into(), article("Page B", "", ""));
}

async fn server(db: Db, database_url: Option<String>) -> Server {
    let mut o = ServerOptions::new(db)
        .env("WEBDATA_SCHEDULER_TICK_MS", "100")
        .env("WEBDATA_WEBHOOK_DELAY_SCALE", "0.001");
    o.database_url = database_url;
    Server::start_with(o).await
}

async fn create(s: &Server, body: serde_json::Value) -> serde_json::Value {
    let r = s.post("/v1/schedules", body).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.json["success"], true);
    r.json["data"].clone()
}

async fn get(s: &Server, id: &str) -> serde_json::Value {
    let r = s.get_as(&s.key, &format!("/v1/schedules/{id}")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.json["data"].clone()
}

/// Moves the schedule's next run into the past: it is due now.
async fn make_due(s: &Server, id: &str, ago_ms: i64) {
    let now = webdata_core::store::now_ms();
    sqlx::query("UPDATE schedules SET next_run_at = $1 WHERE id = $2")
        .bind(now - ago_ms)
        .bind(id)
        .execute(s.store().await.pool())
        .await
        .expect("due");
}

/// Waits until the schedule has `n` runs in an ended state.
async fn ended_runs(s: &Server, id: &str, n: usize) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let sched = get(s, id).await;
        let runs = sched["runs"].as_array().cloned().unwrap_or_default();
        let ended: Vec<_> = runs
            .iter()
            .filter(|r| !["starting", "running"].contains(&r["state"].as_str().unwrap_or("")))
            .cloned()
            .collect();
        if ended.len() >= n {
            return runs;
        }
        assert!(
            Instant::now() < deadline,
            "runs did not end: {sched}\n{}",
            s.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn runs_on_time_and_summarise_what_changed(db: Db) {
    let web: Shared = Arc::default();
    three_pages(&web);
    let site = site(web.clone()).await;
    let s = server(db, None).await;
    let credits = s.credits().await;
    let sched = create(
        &s,
        json!({"name": "docs watch", "every": "1h", "webhook": {"url": site.url("/hook")},
               "crawl": {"url": site.url("/"), "limit": 10, "sitemap": "skip", "scrapeOptions": {"ignoreRobots": true}}}),
    )
    .await;
    let id = sched["id"].as_str().expect("id").to_string();
    assert!(id.starts_with("sched_"), "{sched}");
    assert_eq!(sched["every"], "1h");
    assert_eq!(sched["suspend"], false);
    assert!(sched["runs"].as_array().is_some_and(|r| r.is_empty()));
    let next: jiff::Timestamp = sched["nextRunAt"]
        .as_str()
        .expect("nextRunAt")
        .parse()
        .expect("time");
    let in_ms = next.as_millisecond() - webdata_core::store::now_ms();
    assert!(
        (3_590_000..=3_600_000).contains(&in_ms),
        "next run in {in_ms} ms"
    );
    // Not due: nothing runs.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(get(&s, &id).await["runs"]
        .as_array()
        .is_some_and(|r| r.is_empty()));

    make_due(&s, &id, 1000).await;
    let runs = ended_runs(&s, &id, 1).await;
    let run = &runs[0];
    assert_eq!(run["state"], "completed", "{run}");
    assert_eq!(
        run["summary"],
        json!({"pages": 3, "new": 3, "same": 0, "changed": 0, "removed": 0}),
        "{run}"
    );
    let crawl_id = run["crawlId"].as_str().expect("crawlId").to_string();
    // The run is an ordinary crawl, with change tracking under the schedule's id.
    let c = s
        .get_as(&s.key, &format!("/v1/crawl/{crawl_id}?limit=10"))
        .await;
    assert_eq!(c.json["status"], "completed", "{}", c.text);
    assert!(
        c.json["data"].as_array().is_some_and(|d| d
            .iter()
            .all(|d| d["changeTracking"]["changeStatus"] == "new" && d["markdown"].is_string())),
        "{}",
        c.text
    );
    assert_eq!(
        s.credits().await,
        credits - 3,
        "billed as the crawl: 1 per page"
    );
    let after: jiff::Timestamp = get(&s, &id).await["nextRunAt"]
        .as_str()
        .expect("next")
        .parse()
        .expect("t");
    assert!(
        after.as_millisecond() > webdata_core::store::now_ms() + 3_000_000,
        "the next slot is ahead"
    );

    // A page changes; the next run says so.
    web.lock().unwrap_or_else(|p| p.into_inner()).pages.insert(
        "/a".into(),
        article(
            "Page A",
            "<p>Prices went up by ten percent this week, for every plan.</p>",
            "",
        ),
    );
    make_due(&s, &id, 1000).await;
    let runs = ended_runs(&s, &id, 2).await;
    assert_eq!(
        runs[0]["summary"],
        json!({"pages": 3, "new": 0, "same": 2, "changed": 1, "removed": 0}),
        "newest first: {runs:?}"
    );
    assert_ne!(runs[0]["crawlId"], runs[1]["crawlId"]);

    // schedule.run.completed reached the schedule's webhook, once per run.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let hooks: Vec<serde_json::Value> = web
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .hooks
            .iter()
            .filter(|(k, _)| k == "schedule.run.completed")
            .map(|(_, v)| v.clone())
            .collect();
        if hooks.len() >= 2 {
            assert_eq!(hooks.len(), 2, "{hooks:?}");
            let last = hooks
                .iter()
                .find(|h| h["data"]["summary"]["changed"] == 1)
                .expect("changed run");
            assert_eq!(last["type"], "schedule.run.completed");
            assert_eq!(last["data"]["scheduleId"], id.as_str());
            assert_eq!(last["data"]["status"], "completed");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "webhooks: {hooks:?}\n{}",
            s.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn suspend_policies_and_deadline(db: Db) {
    let web: Shared = Arc::default();
    three_pages(&web);
    let site = site(web.clone()).await;
    let s = server(db, None).await;
    let crawl = json!({"url": site.url("/"), "limit": 10, "sitemap": "skip", "scrapeOptions": {"ignoreRobots": true}});
    // Suspended: due, but nothing starts.
    let sched = create(&s, json!({"every": "1h", "suspend": true, "crawl": crawl})).await;
    let id = sched["id"].as_str().expect("id").to_string();
    assert!(sched["nextRunAt"].is_null(), "{sched}");
    make_due(&s, &id, 1000).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(get(&s, &id).await["runs"]
        .as_array()
        .is_some_and(|r| r.is_empty()));
    // Resumed: the next slot is an hour from now (missed slots do not run).
    let r = s
        .post(&format!("/v1/schedules/{id}/resume"), json!({}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["data"]["suspend"], false);
    assert!(r.json["data"]["nextRunAt"].is_string());

    // Forbid (the default): a run due while the last one crawls is skipped.
    web.lock().unwrap_or_else(|p| p.into_inner()).delay_ms = 1500;
    make_due(&s, &id, 1000).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while get(&s, &id).await["runs"][0]["state"] != "running" {
        assert!(Instant::now() < deadline, "no run started: {}", s.logs());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    make_due(&s, &id, 1000).await;
    let runs = ended_runs(&s, &id, 1).await;
    assert_eq!(runs[0]["state"], "skipped", "{runs:?}");
    assert!(runs[0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("Forbid")));
    assert!(runs[0].get("crawlId").is_none());
    // Replace: the running one is cancelled and a new one starts.
    let r = s
        .http
        .patch(s.url(&format!("/v1/schedules/{id}")))
        .bearer_auth(&s.key)
        .json(&json!({"concurrencyPolicy": "Replace"}))
        .send()
        .await
        .expect("patch");
    assert_eq!(r.status(), 200);
    make_due(&s, &id, 1000).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let runs = get(&s, &id).await["runs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let states: Vec<&str> = runs
            .iter()
            .map(|r| r["state"].as_str().unwrap_or(""))
            .collect();
        // Newest first: the replacement, the skipped slot, the replaced run.
        if states.len() >= 3
            && states[2] == "cancelled"
            && ["running", "completed"].contains(&states[0])
        {
            assert!(runs[2]["message"]
                .as_str()
                .is_some_and(|m| m.contains("Replace")));
            let old = runs[2]["crawlId"].as_str().expect("old crawl");
            let c = s.get_as(&s.key, &format!("/v1/crawl/{old}?limit=1")).await;
            assert_eq!(c.json["status"], "cancelled", "{}", c.text);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no replacement: {states:?}\n{}",
            s.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    web.lock().unwrap_or_else(|p| p.into_inner()).delay_ms = 0;

    // A run an hour late with a 60 s starting deadline is missed, not run.
    let late = create(
        &s,
        json!({"cron": "0 * * * *", "startingDeadlineSeconds": 60, "crawl": crawl}),
    )
    .await;
    let lid = late["id"].as_str().expect("id").to_string();
    make_due(&s, &lid, 3_600_000).await;
    let runs = ended_runs(&s, &lid, 1).await;
    assert_eq!(runs.len(), 1, "one record for the missed slot: {runs:?}");
    assert_eq!(runs[0]["state"], "missed", "{runs:?}");
    assert!(runs[0].get("crawlId").is_none());
    let next: jiff::Timestamp = get(&s, &lid).await["nextRunAt"]
        .as_str()
        .expect("next")
        .parse()
        .expect("t");
    assert!(next.as_millisecond() > webdata_core::store::now_ms());

    // Pause, list, delete.
    let r = s
        .post(&format!("/v1/schedules/{lid}/pause"), json!({}))
        .await;
    assert_eq!(
        (r.status, r.json["data"]["suspend"].clone()),
        (200, json!(true)),
        "{}",
        r.text
    );
    let all = s.get_as(&s.key, "/v1/schedules").await;
    assert_eq!(
        all.json["data"].as_array().map(Vec::len),
        Some(2),
        "{}",
        all.text
    );
    let d = s
        .http
        .delete(s.url(&format!("/v1/schedules/{lid}")))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("delete");
    assert_eq!(d.status(), 200);
    let gone = s.get_as(&s.key, &format!("/v1/schedules/{lid}")).await;
    gone.assert_error(404, "not_found");
}

async fn two_processes_never_start_a_run_twice_and_a_restart_catches_up_once(db: Db) {
    let web: Shared = Arc::default();
    three_pages(&web);
    let site = site(web.clone()).await;
    let mut a = server(db, None).await;
    let mut b = server(db, Some(a.database_url.clone())).await;
    b.key = a.key.clone();
    let mut ids = Vec::new();
    for _ in 0..4 {
        let sched = create(&a, json!({"every": "1d", "crawl": {"url": site.url("/"), "limit": 10, "sitemap": "skip", "scrapeOptions": {"ignoreRobots": true}}})).await;
        ids.push(sched["id"].as_str().expect("id").to_string());
    }
    for _ in 0..3 {
        for id in &ids {
            make_due(&a, id, 1000).await;
        }
        for id in &ids {
            let deadline = Instant::now() + Duration::from_secs(30);
            // Each slot makes one run, started by one of the two processes.
            loop {
                let runs = get(&b, id).await["runs"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let due_now = get(&b, id).await["nextRunAt"].as_str().is_some_and(|t| {
                    t.parse::<jiff::Timestamp>()
                        .is_ok_and(|t| t.as_millisecond() > webdata_core::store::now_ms())
                });
                if due_now && runs.iter().all(|r| r["state"] == "completed") && !runs.is_empty() {
                    break;
                }
                assert!(Instant::now() < deadline, "runs: {runs:?}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    let crawls: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM crawls")
        .fetch_one(a.store().await.pool())
        .await
        .expect("count");
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM schedule_runs")
        .fetch_one(a.store().await.pool())
        .await
        .expect("count");
    assert_eq!(
        (runs, crawls),
        (12, 12),
        "4 schedules x 3 slots, each run once"
    );

    // Both processes stop; while they are down three daily slots pass. On
    // restart each schedule runs once (the overdue slot), not three times,
    // and its next run is the next slot after now.
    let database_url = a.database_url.clone();
    let key = a.key.clone();
    a.kill();
    b.kill();
    for id in &ids {
        make_due_in(&database_url, id, 3 * 86_400_000 + 1000).await;
    }
    let mut c = server(db, Some(database_url.clone())).await;
    c.key = key;
    for id in &ids {
        let runs = ended_runs(&c, id, 4).await;
        assert_eq!(runs.len(), 4, "one catch-up run: {runs:?}");
        let next: jiff::Timestamp = get(&c, id).await["nextRunAt"]
            .as_str()
            .expect("next")
            .parse()
            .expect("t");
        assert!(next.as_millisecond() > webdata_core::store::now_ms());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM schedule_runs")
        .fetch_one(c.store().await.pool())
        .await
        .expect("count");
    assert_eq!(runs, 16, "4 schedules x (3 slots + 1 catch-up)");
}

/// [`make_due`] on a store whose server is down.
async fn make_due_in(database_url: &str, id: &str, ago_ms: i64) {
    let store = webdata_core::Store::connect(database_url)
        .await
        .expect("store");
    sqlx::query("UPDATE schedules SET next_run_at = $1 WHERE id = $2")
        .bind(webdata_core::store::now_ms() - ago_ms)
        .bind(id)
        .execute(store.pool())
        .await
        .expect("due");
}

async fn bad_schedules_are_refused_naming_the_field(db: Db) {
    let s = server(db, None).await;
    let crawl = json!({"url": "http://127.0.0.2:9/", "limit": 5});
    let credits = s.credits().await;
    for (body, field) in [
        (json!({"crawl": crawl}), "`cron`"),
        (json!({"cron": "* * * *", "crawl": crawl}), "`cron`"),
        (json!({"cron": "0 25 * * *", "crawl": crawl}), "hour"),
        (json!({"cron": "0 0 30 2 *", "crawl": crawl}), "never fires"),
        (
            json!({"cron": "@daily", "every": "1h", "crawl": crawl}),
            "not both",
        ),
        (json!({"every": "30s", "crawl": crawl}), "`every`"),
        (
            json!({"every": "1h", "timezone": "Mars/Base", "crawl": crawl}),
            "`timezone`",
        ),
        (json!({"every": "1h"}), "`crawl`"),
        (
            json!({"every": "1h", "crawl": crawl, "batch": {"urls": ["http://127.0.0.2:9/"]}}),
            "`batch`",
        ),
        (
            json!({"every": "1h", "crawl": {"url": "ftp://x.test/", "limit": 5}}),
            "crawl.url",
        ),
        (
            json!({"every": "1h", "crawl": {"url": "http://127.0.0.2:9/", "limit": 0}}),
            "crawl.limit",
        ),
        (json!({"every": "1h", "batch": {"urls": []}}), "batch.urls"),
        (
            json!({"every": "1h", "crawl": crawl, "historyLimit": 0}),
            "historyLimit",
        ),
        (
            json!({"every": "1h", "crawl": crawl, "startingDeadlineSeconds": 0}),
            "startingDeadlineSeconds",
        ),
        (json!({"every": "1h", "crawl": crawl, "tag": ""}), "`tag`"),
        (
            json!({"every": "1h", "crawl": crawl, "webhook": {"url": "not a url"}}),
            "webhook.url",
        ),
        (
            json!({"every": "1h", "crawl": crawl, "concurrencyPolicy": "Sometimes"}),
            "concurrencyPolicy",
        ),
        (
            json!({"every": "1h", "crawl": crawl, "colour": "red"}),
            "colour",
        ),
    ] {
        let r = s.post("/v1/schedules", body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(
            r.message().contains(field),
            "{body}: expected {field} in {}",
            r.text
        );
    }
    assert_eq!(s.credits().await, credits);
    let list = s.get_as(&s.key, "/v1/schedules").await;
    assert_eq!(
        list.json["data"],
        json!([]),
        "nothing was stored: {}",
        list.text
    );
    // Another organization's schedule is not found.
    let sched = create(&s, json!({"every": "1h", "crawl": crawl})).await;
    let other = s
        .admin(
            reqwest::Method::POST,
            "/admin/v1/organizations",
            Some(json!({"name": "other", "credits": 10})),
        )
        .await;
    let org = other.json["data"]["id"].as_str().expect("org").to_string();
    let key = s
        .admin(
            reqwest::Method::POST,
            &format!("/admin/v1/organizations/{org}/keys"),
            Some(json!({"name": "k"})),
        )
        .await;
    let secret = key.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    let r = s
        .get_as(
            &secret,
            &format!("/v1/schedules/{}", sched["id"].as_str().expect("id")),
        )
        .await;
    r.assert_error(404, "not_found");
}

on_both!(
    runs_on_time_and_summarise_what_changed,
    suspend_policies_and_deadline,
    two_processes_never_start_a_run_twice_and_a_restart_catches_up_once,
    bad_schedules_are_refused_naming_the_field,
);
