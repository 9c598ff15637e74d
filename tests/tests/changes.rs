//! Change tracking through the real binary, on SQLite and PostgreSQL: a
//! loopback site whose pages change between scrapes, checked for every
//! `changeStatus` (new, same, changed, removed), the unified diff, what
//! does not count as a change (whitespace, navigation and footer, hidden
//! elements), tags, the formats left as asked, crawls and batches sharing
//! one history, and the retention setting.

#[macro_use]
mod support;

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{Html, IntoResponse};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{Db, Server, ServerOptions, Site};

/// Path → page; a path that is not there answers 404.
type Pages = Arc<Mutex<HashMap<String, String>>>;

async fn site(pages: Pages) -> Site {
    async fn serve(State(pages): State<Pages>, uri: Uri) -> axum::response::Response {
        let page = pages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(uri.path())
            .cloned();
        match page {
            Some(html) => Html(html).into_response(),
            None => (StatusCode::NOT_FOUND, Html("<h1>Not found</h1>")).into_response(),
        }
    }
    Site::serve(axum::Router::new().fallback(serve).with_state(pages)).await
}

/// A pricing page: `nav` and `footer` are chrome, `hidden` sits in an
/// element no reader sees, `body` is the article's own text.
fn pricing(nav: &str, body: &str, hidden: &str, footer: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><title>Pricing</title></head><body>\
         <nav><a href=\"/\">Home</a> <a href=\"/blog\">{nav}</a></nav>\
         <main><article><h1>Pricing</h1>\
         <p>Our plans are simple and every plan includes the full product with support by email.</p>\
         <p>{body}</p>\
         <div hidden>{hidden}</div><div style=\"display:none\">{hidden}</div>\
         <p>Prices are per month and exclude taxes; you can change plans at any time from the account page.</p>\
         </article></main><footer>{footer}</footer></body></html>"
    )
}

fn set(pages: &Pages, path: &str, html: Option<String>) {
    let mut p = pages.lock().unwrap_or_else(|p| p.into_inner());
    match html {
        Some(h) => p.insert(path.to_string(), h),
        None => p.remove(path),
    };
}

async fn tracked(s: &Server, url: &str, extra: serde_json::Value) -> serde_json::Value {
    let mut body =
        json!({"url": url, "formats": ["markdown", "changeTracking"], "ignoreRobots": true});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let r = s.post("/v1/scrape", body).await;
    assert_eq!(r.status, 200, "{}", r.text);
    // A page is charged as any scrape: 1, none for an error page.
    let charge = if r.json["data"]["metadata"]["statusCode"] == 200 {
        1
    } else {
        0
    };
    assert_eq!(r.json["credits_used"], charge, "{}", r.text);
    r.json["data"].clone()
}

fn status(doc: &serde_json::Value) -> &str {
    doc["changeTracking"]["changeStatus"].as_str().unwrap_or("")
}

async fn every_change_status_with_its_diff(db: Db) {
    let pages: Pages = Arc::default();
    let site = site(pages.clone()).await;
    let s = Server::start(db).await;
    let url = site.url("/pricing");
    let starter = "Starter costs 9 dollars and Pro costs 29 dollars for teams of any size.";
    set(
        &pages,
        "/pricing",
        Some(pricing("Blog", starter, "secret", "Copyright 2025")),
    );

    let first = tracked(&s, &url, json!({})).await;
    assert_eq!(status(&first), "new", "{first}");
    assert!(
        first["changeTracking"]["previousScrapeAt"].is_null(),
        "{first}"
    );
    assert_eq!(first["changeTracking"]["visibility"], "visible");
    assert!(first["changeTracking"].get("diff").is_none(), "{first}");
    assert!(first["markdown"]
        .as_str()
        .is_some_and(|m| m.contains("29 dollars")));

    // Unchanged, re-indented, chrome and hidden text changed: all `same`.
    let again = tracked(&s, &url, json!({})).await;
    assert_eq!(status(&again), "same", "{again}");
    let at = again["changeTracking"]["previousScrapeAt"]
        .as_str()
        .expect("previousScrapeAt");
    assert!(at.ends_with('Z') && at.len() == 24, "{at}");
    set(
        &pages,
        "/pricing",
        Some(pricing(
            "Blog",
            &starter.replace(' ', "\n      "),
            "secret",
            "Copyright 2025",
        )),
    );
    assert_eq!(
        status(&tracked(&s, &url, json!({})).await),
        "same",
        "whitespace only"
    );
    set(
        &pages,
        "/pricing",
        Some(pricing(
            "News and stories",
            starter,
            "secret",
            "Copyright 2026, all rights reserved",
        )),
    );
    assert_eq!(
        status(&tracked(&s, &url, json!({})).await),
        "same",
        "navigation and footer only"
    );
    set(
        &pages,
        "/pricing",
        Some(pricing(
            "News and stories",
            starter,
            "a different hidden note",
            "Copyright 2026, all rights reserved",
        )),
    );
    assert_eq!(
        status(&tracked(&s, &url, json!({})).await),
        "same",
        "hidden elements only"
    );

    // The article's text changes: `changed`, with a unified diff of it.
    let dearer = starter.replace("29 dollars", "39 dollars");
    set(
        &pages,
        "/pricing",
        Some(pricing("News and stories", &dearer, "x", "y")),
    );
    let changed = tracked(&s, &url, json!({})).await;
    assert_eq!(status(&changed), "changed", "{changed}");
    let diff = changed["changeTracking"]["diff"]["text"]
        .as_str()
        .expect("diff.text");
    assert!(diff.starts_with("--- previous\n+++ current\n@@ "), "{diff}");
    assert!(
        diff.contains(&format!("\n-{starter}\n+{dearer}\n")),
        "{diff}"
    );
    assert!(
        diff.contains("\n Our plans are simple"),
        "context lines: {diff}"
    );
    assert!(!diff.contains("Copyright"), "{diff}");
    // Compared with the changed version now.
    assert_eq!(status(&tracked(&s, &url, json!({})).await), "same");

    // Gone (404): `removed`; back again: `new`.
    set(&pages, "/pricing", None);
    let removed = tracked(&s, &url, json!({})).await;
    assert_eq!(status(&removed), "removed", "{removed}");
    assert!(removed["changeTracking"]["previousScrapeAt"].is_string());
    set(&pages, "/pricing", Some(pricing("Blog", starter, "", "")));
    assert_eq!(status(&tracked(&s, &url, json!({})).await), "new");
}

async fn tags_formats_and_refusals(db: Db) {
    let pages: Pages = Arc::default();
    let site = site(pages.clone()).await;
    let s = Server::start(db).await;
    let url = site.url("/pricing");
    let before = "Starter costs 9 dollars and Pro costs 29 dollars for teams of any size.";
    set(&pages, "/pricing", Some(pricing("Blog", before, "", "")));
    let a = json!({"changeTrackingOptions": {"tag": "competitor-a"}});
    assert_eq!(status(&tracked(&s, &url, a.clone()).await), "new");
    set(
        &pages,
        "/pricing",
        Some(pricing("Blog", &before.replace("29", "49"), "", "")),
    );
    // Another tag has its own history: its first look is `new`, and it does
    // not move tag a's snapshot.
    let b = json!({"changeTrackingOptions": {"tag": "competitor-b"}});
    assert_eq!(status(&tracked(&s, &url, b.clone()).await), "new");
    assert_eq!(status(&tracked(&s, &url, a.clone()).await), "changed");
    assert_eq!(status(&tracked(&s, &url, b).await), "same");
    // Untagged is a history of its own too.
    assert_eq!(status(&tracked(&s, &url, json!({})).await), "new");

    // Formats stay as asked: no markdown unless requested.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": url, "formats": ["changeTracking"], "ignoreRobots": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.json["data"].get("markdown").is_none(), "{}", r.text);
    assert_eq!(
        r.json["data"]["changeTracking"]["changeStatus"], "same",
        "{}",
        r.text
    );
    set(
        &pages,
        "/pricing",
        Some(pricing(
            "Blog",
            "Everything is free now, for everyone.",
            "",
            "",
        )),
    );
    let d = tracked(
        &s,
        &url,
        json!({"changeTrackingOptions": {"modes": ["git-diff"]}}),
    )
    .await;
    assert_eq!(status(&d), "changed");
    assert!(d["changeTracking"]["diff"]["text"].is_string());
    // A cached copy is never compared: maxAge does not apply.
    let d = tracked(&s, &url, json!({"maxAge": 600000})).await;
    assert_eq!(status(&d), "same");
    assert!(d.get("cached").is_none_or(|c| c == false), "{d}");

    // Refusals name the field and charge nothing.
    let credits = s.credits().await;
    for (body, field) in [
        (
            json!({"url": url, "formats": ["markdown"], "changeTrackingOptions": {"tag": "x"}}),
            "changeTrackingOptions",
        ),
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"tag": "x".repeat(129)}}),
            "changeTrackingOptions.tag",
        ),
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"modes": []}}),
            "changeTrackingOptions.modes",
        ),
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"modes": ["xml"]}}),
            "modes",
        ),
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"modes": ["json"]}}),
            "changeTrackingOptions.schema",
        ),
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"schema": {}}}),
            "changeTrackingOptions.schema",
        ),
    ] {
        let r = s.post("/v1/scrape", body).await;
        r.assert_error(400, "invalid_request");
        assert!(r.message().contains(field), "{field}: {}", r.text);
    }
    assert_eq!(s.credits().await, credits);
}

async fn wait_done(s: &Server, path: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = s.get_as(&s.key, path).await;
        assert_eq!(r.status, 200, "{}", r.text);
        if r.json["status"] == "completed" && r.json["next"].is_null() {
            return r.json;
        }
        assert!(
            Instant::now() < deadline,
            "not finished: {}\n{}",
            r.text,
            s.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Status per URL path of a finished crawl or batch (one page of data).
fn statuses(done: &serde_json::Value) -> HashMap<String, String> {
    done["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|d| {
            let path = d["url"]
                .as_str()
                .unwrap_or("")
                .splitn(4, '/')
                .nth(3)
                .unwrap_or("");
            (format!("/{path}"), status(d).to_string())
        })
        .collect()
}

async fn crawls_and_batches_share_one_history(db: Db) {
    let pages: Pages = Arc::default();
    let site = site(pages.clone()).await;
    let s = Server::start(db).await;
    let article = |t: &str, links: &str| {
        format!(
            "<!doctype html><html><head><title>{t}</title></head><body><main><article><h1>{t}</h1>\
             <p>{t} is a page of the watched site with enough words to count as a real page for the scraper.</p>\
             {links}</article></main></body></html>"
        )
    };
    set(
        &pages,
        "/",
        Some(article("Home", "<a href=\"/a\">A</a> <a href=\"/b\">B</a>")),
    );
    set(&pages, "/a", Some(article("Page A", "")));
    set(&pages, "/b", Some(article("Page B", "")));
    let crawl = json!({"url": site.url("/"), "limit": 10, "sitemap": "skip",
        "scrapeOptions": {"formats": ["markdown", "changeTracking"], "ignoreRobots": true}});
    let r = s.post("/v1/crawl", crawl.clone()).await;
    assert_eq!(r.status, 202, "{}", r.text);
    let first = wait_done(
        &s,
        &format!("/v1/crawl/{}?limit=50", r.json["id"].as_str().expect("id")),
    )
    .await;
    let want: HashMap<String, String> = ["/", "/a", "/b"]
        .iter()
        .map(|p| (p.to_string(), "new".to_string()))
        .collect();
    assert_eq!(statuses(&first), want, "{first}");
    assert_eq!(first["credits_used"], 3, "{first}");

    set(
        &pages,
        "/a",
        Some(article(
            "Page A",
            "<p>A new paragraph was added to page A since the last crawl.</p>",
        )),
    );
    let r = s.post("/v1/crawl", crawl).await;
    let second = wait_done(
        &s,
        &format!("/v1/crawl/{}?limit=50", r.json["id"].as_str().expect("id")),
    )
    .await;
    let got = statuses(&second);
    assert_eq!(
        (got["/"].as_str(), got["/a"].as_str(), got["/b"].as_str()),
        ("same", "changed", "same"),
        "{second}"
    );
    let a = second["data"]
        .as_array()
        .and_then(|d| d.iter().find(|d| status(d) == "changed"))
        .expect("changed page");
    assert!(
        a["changeTracking"]["diff"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("\n+A new paragraph was added")),
        "{a}"
    );

    // Home stops linking its pages; /a is deleted, /b still answers. The
    // crawl re-checks the pages it remembers: /a is `removed`, /b `hidden`.
    set(&pages, "/", Some(article("Home", "")));
    set(&pages, "/a", None);
    let r = s
        .post(
            "/v1/crawl",
            json!({"url": site.url("/"), "limit": 10, "sitemap": "skip",
        "scrapeOptions": {"formats": ["markdown", "changeTracking"], "ignoreRobots": true}}),
        )
        .await;
    let third = wait_done(
        &s,
        &format!("/v1/crawl/{}?limit=50", r.json["id"].as_str().expect("id")),
    )
    .await;
    let got = statuses(&third);
    assert_eq!(
        (
            got["/"].as_str(),
            got.get("/a").map(String::as_str),
            got.get("/b").map(String::as_str)
        ),
        ("changed", Some("removed"), Some("same")),
        "{third}"
    );
    let visibility = |path: &str| {
        third["data"].as_array().and_then(|d| {
            d.iter()
                .find(|d| d["url"].as_str().is_some_and(|u| u.ends_with(path)))
                .map(|d| d["changeTracking"]["visibility"].clone())
        })
    };
    assert_eq!(visibility("/b"), Some(json!("hidden")), "{third}");
    assert_eq!(visibility("/"), Some(json!("visible")), "{third}");
    // A crawl that is not tracking changes does not look back.
    let r = s
        .post(
            "/v1/crawl",
            json!({"url": site.url("/"), "limit": 10, "sitemap": "skip",
        "scrapeOptions": {"formats": ["markdown"], "ignoreRobots": true}}),
        )
        .await;
    let plain = wait_done(
        &s,
        &format!("/v1/crawl/{}?limit=50", r.json["id"].as_str().expect("id")),
    )
    .await;
    assert_eq!(plain["total"], 1, "{plain}");
    set(
        &pages,
        "/a",
        Some(article(
            "Page A",
            "<p>A new paragraph was added to page A since the last crawl.</p>",
        )),
    );

    // A batch compares with the crawl's snapshots (same organization, no tag).
    set(
        &pages,
        "/b",
        Some(article(
            "Page B",
            "<p>Page B changed between the crawl and the batch.</p>",
        )),
    );
    let r = s
        .post(
            "/v1/batch/scrape",
            json!({"urls": [site.url("/a"), site.url("/b")],
            "scrapeOptions": {"formats": ["changeTracking"]}, "ignoreRobots": true}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let batch = wait_done(
        &s,
        &format!(
            "/v1/batch/scrape/{}?limit=50",
            r.json["id"].as_str().expect("id")
        ),
    )
    .await;
    let got = statuses(&batch);
    // /a came back after it was removed: `new` again.
    assert_eq!(
        (got["/a"].as_str(), got["/b"].as_str()),
        ("new", "changed"),
        "{batch}"
    );
    assert!(
        batch["data"]
            .as_array()
            .is_some_and(|d| d.iter().all(|d| d.get("markdown").is_none())),
        "{batch}"
    );
}

/// Snapshots older than `WEBDATA_CHANGE_RETENTION_DAYS` are forgotten (the
/// janitor's sweep, which runs at start and every minute).
async fn retention_forgets_old_snapshots(db: Db) {
    let pages: Pages = Arc::default();
    let site = site(pages.clone()).await;
    set(
        &pages,
        "/p",
        Some(pricing(
            "Blog",
            "Plans start at 9 dollars a month for one person.",
            "",
            "",
        )),
    );
    let mut a =
        Server::start_with(ServerOptions::new(db).env("WEBDATA_CHANGE_RETENTION_DAYS", "2")).await;
    let url = site.url("/p");
    assert_eq!(status(&tracked(&a, &url, json!({})).await), "new");
    assert_eq!(
        status(&tracked(&a, &url, json!({"changeTrackingOptions": {"tag": "t"}})).await),
        "new"
    );
    // One snapshot is 3 days old, the other 1 day: only the first goes.
    let store = a.store().await;
    sqlx::query("UPDATE change_snapshots SET scraped_at = scraped_at - 259200000 WHERE tag = ''")
        .execute(store.pool())
        .await
        .expect("age");
    sqlx::query("UPDATE change_snapshots SET scraped_at = scraped_at - 86400000 WHERE tag = 't'")
        .execute(store.pool())
        .await
        .expect("age");
    a.kill();
    let mut opts = ServerOptions::new(db).env("WEBDATA_CHANGE_RETENTION_DAYS", "2");
    opts.database_url = Some(a.database_url.clone());
    let mut b = Server::start_with(opts).await;
    b.key = a.key.clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM change_snapshots")
            .fetch_one(store.pool())
            .await
            .expect("count");
        if left == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the sweep did not run: {left} left\n{}",
            b.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status(&tracked(&b, &url, json!({})).await), "new");
    assert_eq!(
        status(&tracked(&b, &url, json!({"changeTrackingOptions": {"tag": "t"}})).await),
        "same"
    );
}

on_both!(
    every_change_status_with_its_diff,
    tags_formats_and_refusals,
    crawls_and_batches_share_one_history,
    retention_forgets_old_snapshots,
    a_page_dropped_by_a_cancel_leaves_the_baseline,
);

/// A crawl page's snapshot goes in with the page: a page fetched but not
/// stored (its crawl was cancelled while it loaded) used to replace the
/// baseline anyway, and the next crawl reported its change as `same`.
async fn a_page_dropped_by_a_cancel_leaves_the_baseline(db: Db) {
    #[derive(Clone, Default)]
    struct Page {
        html: Arc<Mutex<String>>,
        slow: Arc<std::sync::atomic::AtomicBool>,
        answered: Arc<std::sync::atomic::AtomicUsize>,
        asked: Arc<std::sync::atomic::AtomicUsize>,
    }
    use std::sync::atomic::Ordering::SeqCst;
    async fn serve(State(p): State<Page>) -> axum::response::Response {
        p.asked.fetch_add(1, SeqCst);
        if p.slow.load(SeqCst) {
            tokio::time::sleep(Duration::from_millis(2000)).await;
        }
        let html = p.html.lock().unwrap_or_else(|e| e.into_inner()).clone();
        p.answered.fetch_add(1, SeqCst);
        Html(html).into_response()
    }
    let page = Page::default();
    let article = |extra: &str| {
        format!(
            "<!doctype html><html><head><title>Notes</title></head><body><main><article><h1>Notes</h1>\
             <p>These notes are a page of the watched site with enough words to count as a real page for the scraper.</p>\
             {extra}</article></main></body></html>"
        )
    };
    *page.html.lock().unwrap() = article("");
    let site = Site::serve(axum::Router::new().fallback(serve).with_state(page.clone())).await;
    let s = Server::start(db).await;
    let crawl = json!({"url": site.url("/notes"), "limit": 1, "sitemap": "skip",
        "scrapeOptions": {"formats": ["markdown", "changeTracking"], "ignoreRobots": true}});
    let run = |body: serde_json::Value| {
        let s = &s;
        async move {
            let r = s.post("/v1/crawl", body).await;
            assert_eq!(r.status, 202, "{}", r.text);
            r.json["id"].as_str().expect("id").to_string()
        }
    };
    let first = run(crawl.clone()).await;
    let done = wait_done(&s, &format!("/v1/crawl/{first}")).await;
    assert_eq!(statuses(&done)["/notes"], "new", "{done}");

    // The page changes; a crawl fetches it slowly and is cancelled meanwhile.
    *page.html.lock().unwrap() = article("<p>A paragraph added after the first crawl.</p>");
    page.slow.store(true, SeqCst);
    let asked = page.asked.load(SeqCst);
    let answered = page.answered.load(SeqCst);
    let second = run(crawl.clone()).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while page.asked.load(SeqCst) == asked {
        assert!(
            Instant::now() < deadline,
            "the second crawl never fetched the page"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let c = s
        .http
        .delete(s.url(&format!("/v1/crawl/{second}")))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("cancel");
    assert_eq!(c.status(), 200);
    // The slow answer arrives after the cancel; the page is then dropped.
    while page.answered.load(SeqCst) == answered {
        assert!(Instant::now() < deadline, "the slow page never answered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let cancelled = s.get_as(&s.key, &format!("/v1/crawl/{second}")).await;
    assert_eq!(cancelled.json["status"], "cancelled", "{}", cancelled.text);
    assert_eq!(cancelled.json["completed"], 0, "{}", cancelled.text);

    // The next crawl still sees the change the dropped page saw.
    page.slow.store(false, SeqCst);
    let third = run(crawl).await;
    let done = wait_done(&s, &format!("/v1/crawl/{third}")).await;
    assert_eq!(statuses(&done)["/notes"], "changed", "{done}");
}
