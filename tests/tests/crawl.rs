//! Issue 5, black-box: crawls through the real binary against sites served
//! on loopback, on SQLite and on PostgreSQL.
//!
//! Long by design: a test suite (one area of the spec per file).
//! Each test stands alone; splitting the file would only add test
//! binaries to link.

#[macro_use]
mod support;

use axum::extract::Path;
use axum::http::{header, HeaderMap};
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use serde_json::json;
use std::io::Write;
use std::time::{Duration, Instant};
use support::{Db, Resp, Server, ServerOptions, Site};

fn page(title: &str, links: &[&str]) -> String {
    let links: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body>\
         <nav><a href=\"/\">Home</a> · <a href=\"/about\">About us</a></nav>\
         <main><article><h1>{title}</h1><p>{title} is a page of the test site with enough words in it to count as a real page for the crawler and its quality checks.</p><ul>{links}</ul></article></main>\
         <footer>Test site footer · all rights reserved</footer></body></html>"
    )
}

fn host(h: &HeaderMap) -> String {
    h.get("host")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.2")
        .to_string()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = e.write_all(data);
    e.finish().unwrap_or_default()
}

/// A site: robots (sitemap index, a disallowed folder, a crawl delay),
/// a gzip sitemap, pages that link around, and slow pages.
async fn site(delay_ms: u64) -> Site {
    Site::serve(
        axum::Router::new()
            .route("/robots.txt", get(|h: HeaderMap| async move {
                format!("User-agent: *\nDisallow: /secret\nCrawl-delay: 0\nSitemap: http://{}/sitemap_index.xml\n", host(&h))
            }))
            .route("/sitemap_index.xml", get(|h: HeaderMap| async move {
                ([(header::CONTENT_TYPE, "application/xml")],
                 format!("<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><sitemap><loc>http://{}/docs-sitemap.xml.gz</loc></sitemap></sitemapindex>", host(&h)))
            }))
            .route("/docs-sitemap.xml.gz", get(|h: HeaderMap| async move {
                let b = format!("http://{}", host(&h));
                let xml = format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>{b}/docs/a</loc></url><url><loc>{b}/docs/b</loc></url><url><loc>{b}/secret/s</loc></url></urlset>");
                ([(header::CONTENT_TYPE, "application/gzip")], gzip(xml.as_bytes()))
            }))
            .route("/", get(|| async { Html(page("Home", &["/blog/1", "/docs/a", "/secret/x", "/about#team", "http://127.0.0.3:1/elsewhere", "/blog/1?utm_source=x"])) }))
            .route("/about", get(|| async { Html(page("About", &["/"])) }))
            .route("/blog/{n}", get(move |Path(n): Path<u32>| async move {
                tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                let next = format!("/blog/{}", n + 1);
                if n < 6 { Html(page(&format!("Blog {n}"), &[next.as_str()])).into_response() } else { Html(page("Blog end", &[])).into_response() }
            }))
            .route("/docs/{p}", get(|Path(p): Path<String>| async move { Html(page(&format!("Doc {p}"), &["/docs/b"])) }))
            .route("/secret/{p}", get(|| async { Html(page("Secret", &[])) }))
            .route("/news/{n}", get(|Path(n): Path<u32>| async move {
                let next = if n < 5 { format!("<p><a href=\"/news/{}\">Next story</a></p>", n + 1) } else { String::new() };
                Html(format!("<html><head><title>News {n}</title></head><body><main><article><h1>Story {n}</h1>\
                    <p>Story number {n} reports something that happened, in enough words to be a real article for a reader.</p>\
                    <p>Subscribe to our newsletter for weekly stories delivered to your inbox every Monday morning.</p>{next}</article></main></body></html>"))
            })),
    )
    .await
}

async fn start(s: &Server, body: serde_json::Value) -> String {
    let r = s.post("/v1/crawl", body).await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.json["status"], "queued");
    r.assert_request_id();
    assert!(r.json["createdAt"]
        .as_str()
        .is_some_and(|t| t.ends_with('Z')));
    r.json["id"].as_str().expect("id").to_string()
}

async fn wait_done(s: &Server, id: &str) -> Resp {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = s.get_as(&s.key, &format!("/v1/crawl/{id}?limit=1")).await;
        assert_eq!(r.status, 200, "{}", r.text);
        if ["completed", "failed", "cancelled"].contains(&r.json["status"].as_str().unwrap_or("")) {
            return r;
        }
        assert!(
            Instant::now() < deadline,
            "crawl did not finish: {}\n{}",
            r.text,
            s.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every document of a crawl, paging with `limit`, asserting `next` rules.
async fn all_docs(s: &Server, id: &str, limit: usize) -> Vec<serde_json::Value> {
    let mut docs = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..1000 {
        let path = match &cursor {
            Some(c) => format!("/v1/crawl/{id}?limit={limit}&cursor={c}"),
            None => format!("/v1/crawl/{id}?limit={limit}"),
        };
        let r = s.get_as(&s.key, &path).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let page = r.json["data"].as_array().expect("data").clone();
        assert!(page.len() <= limit);
        docs.extend(page);
        match r.json["next"].as_str() {
            Some(n) => cursor = Some(n.to_string()),
            None => return docs,
        }
    }
    panic!("paging never ended");
}

fn urls(docs: &[serde_json::Value]) -> Vec<String> {
    let mut u: Vec<String> = docs
        .iter()
        .filter_map(|d| d["url"].as_str().map(String::from))
        .collect();
    u.sort();
    u
}

on_both!(
    crawl_is_sitemap_first_respects_robots_and_pages_every_document_once,
    globs_depth_and_sitemap_only,
    cancel_keeps_scraped_pages_and_charges_them,
    credits_running_out_stops_the_crawl_early_with_its_pages,
    events_replay_from_last_event_id_and_close_after_done,
    killed_server_resumes_the_crawl_without_losing_or_double_charging,
    repeated_blocks_are_removed_unless_asked_to_keep_them,
    errors_list_failed_urls_with_codes_and_what_robots_kept_out,
    no_request_starts_after_a_cancel,
    crawl_delay_spaces_fetches_by_the_delay_without_stalling,
    a_cancelled_crawl_does_not_hold_up_its_host,
);

/// Requests in the order they started (robots.txt and sitemaps left out).
type Starts = std::sync::Arc<std::sync::Mutex<Vec<(String, Instant)>>>;

/// A site whose robots.txt says `Crawl-delay: 1` and whose every page links
/// to `/page1` … `/page{links}`; it logs when each page request started.
async fn crawl_delay_site(links: usize) -> (Site, Starts) {
    let starts: Starts = Default::default();
    let log = starts.clone();
    let app = axum::Router::new().route(
        "/{*path}",
        get(move |Path(path): Path<String>| {
            let log = log.clone();
            async move {
                if path == "robots.txt" {
                    return "User-agent: *\nCrawl-delay: 1\n".into_response();
                }
                if path.ends_with(".xml") {
                    return axum::http::StatusCode::NOT_FOUND.into_response();
                }
                log.lock().unwrap().push((path.clone(), Instant::now()));
                let links: String = (1..=links)
                    .map(|k| format!("<a href=\"/page{k}\">page {k}</a> "))
                    .collect();
                Html(format!(
                    "<html><head><title>{path}</title></head><body><main><p>The page {path}, with enough words for a reader.</p>{links}</main></body></html>"
                ))
                .into_response()
            }
        }),
    );
    (Site::serve(app).await, starts)
}

/// Issue 27: `Crawl-delay: 1` sometimes left 4–5 s between two fetches of a
/// five-page site. Fetches are spaced by the delay, not more.
async fn crawl_delay_spaces_fetches_by_the_delay_without_stalling(db: Db) {
    let (site, starts) = crawl_delay_site(4).await;
    let s = Server::start_with(ServerOptions::new(db).env("WEBDATA_BROWSER", "off")).await;
    for round in 0..2 {
        starts.lock().unwrap().clear();
        let r = s
            .post("/v1/crawl", json!({"url": site.url("/page0"), "limit": 5}))
            .await;
        assert_eq!(r.status, 202, "{:?}", r.json);
        let id = r.json["id"].as_str().expect("id").to_string();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let st = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
            if st.json["status"] == "completed" {
                assert_eq!(st.json["completed"], 5, "{:?}", st.json);
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the crawl did not finish: {:?}",
                st.json
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let times: Vec<Instant> = starts.lock().unwrap().iter().map(|(_, t)| *t).collect();
        assert_eq!(times.len(), 5, "round {round}");
        let gaps: Vec<u128> = times
            .windows(2)
            .map(|w| (w[1] - w[0]).as_millis())
            .collect();
        for g in &gaps {
            assert!(
                (900..=2500).contains(g),
                "round {round}: gaps between fetches {gaps:?} ms (Crawl-delay: 1)"
            );
        }
    }
}

/// Issue 27: pages waiting for a host's `Crawl-delay` used to book their
/// fetch times ahead, and the bookings of pages that never fetched (a
/// cancelled crawl's) stayed: after a cancel with 16 pages waiting, the
/// next crawl of the host waited 17 s for its first fetch. The delay
/// counts from the last fetch that really started.
async fn a_cancelled_crawl_does_not_hold_up_its_host(db: Db) {
    let (site, starts) = crawl_delay_site(30).await;
    let s = Server::start_with(ServerOptions::new(db).env("WEBDATA_BROWSER", "off")).await;
    // A crawl of 31 pages, cancelled after its third fetch: its other pages
    // are leased and waiting for their turn at the host.
    let r = s
        .post(
            "/v1/crawl",
            json!({"url": site.url("/page0"), "limit": 100}),
        )
        .await;
    assert_eq!(r.status, 202, "{:?}", r.json);
    let first = r.json["id"].as_str().expect("id").to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    while starts.lock().unwrap().len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the first crawl did not fetch 3 pages"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let c = s
        .http
        .delete(s.url(&format!("/v1/crawl/{first}")))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("delete");
    assert_eq!(c.status(), 200);
    let last_of_first = starts.lock().unwrap().last().expect("fetches").1;
    let fetched_by_first = starts.lock().unwrap().len();
    let posted = Instant::now();
    let r = s
        .post("/v1/crawl", json!({"url": site.url("/page0"), "limit": 3}))
        .await;
    assert_eq!(r.status, 202, "{:?}", r.json);
    let second = r.json["id"].as_str().expect("id").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let st = s.get_as(&s.key, &format!("/v1/crawl/{second}")).await;
        if st.json["status"] == "completed" {
            assert_eq!(st.json["completed"], 3, "{:?}", st.json);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the second crawl did not finish: {:?}",
            st.json
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let times: Vec<Instant> = starts.lock().unwrap().iter().map(|(_, t)| *t).collect();
    // The cancelled crawl started nothing after its cancel (at most the
    // fetch already under way), and the second crawl fetched its 3 pages.
    assert!(
        times.len() <= fetched_by_first + 1 + 3 && times.len() >= fetched_by_first + 3,
        "{} fetches, {fetched_by_first} before the cancel",
        times.len()
    );
    let second_fetches = &times[times.len() - 3..];
    let waited = second_fetches[0] - posted;
    assert!(
        waited < Duration::from_millis(2500),
        "the second crawl's first fetch came {waited:?} after it started (Crawl-delay: 1)"
    );
    assert!(
        second_fetches[0] - last_of_first >= Duration::from_millis(900),
        "the delay still holds across crawls of one host"
    );
    for w in second_fetches.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            (Duration::from_millis(900)..=Duration::from_millis(2500)).contains(&gap),
            "gap {gap:?} between the second crawl's fetches (Crawl-delay: 1)"
        );
    }
}

/// Issue 27: workers waiting on slow pages at the cancel used to request one
/// more page each once theirs answered. After a cancel no request starts.
async fn no_request_starts_after_a_cancel(db: Db) {
    let starts: std::sync::Arc<std::sync::Mutex<Vec<(String, Instant)>>> = Default::default();
    let log = starts.clone();
    let app = axum::Router::new().route(
        "/{*path}",
        get(move |Path(path): Path<String>| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push((path.clone(), Instant::now()));
                if path == "robots.txt" || path.ends_with(".xml") {
                    return axum::http::StatusCode::NOT_FOUND.into_response();
                }
                let n: usize = path.trim_start_matches("p").parse().unwrap_or(0);
                // The start page answers at once; every other page takes 1.5 s.
                if n > 0 {
                    tokio::time::sleep(Duration::from_millis(1500)).await;
                }
                let links: String = (1..=40)
                    .map(|k| format!("<a href=\"/p{}\">p</a> ", n * 40 + k))
                    .collect();
                Html(format!(
                    "<html><head><title>P{n}</title></head><body><main><p>Page {n} of a slow site, with words enough.</p>{links}</main></body></html>"
                ))
                .into_response()
            }
        }),
    );
    let site = Site::serve(app).await;
    // The default concurrency (16) with 8 requests per host: 8 pages wait
    // for a host slot behind the 8 slow ones.
    let s = Server::start_with(ServerOptions::new(db).env("WEBDATA_BROWSER", "off")).await;
    let r = s
        .post(
            "/v1/crawl",
            json!({"url": site.url("/p0"), "limit": 200, "sitemap": "skip"}),
        )
        .await;
    assert_eq!(r.status, 202, "{:?}", r.json);
    let id = r.json["id"].as_str().expect("id").to_string();
    // Wait until the workers are all waiting on slow pages.
    let deadline = Instant::now() + Duration::from_secs(30);
    while starts
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| p.starts_with('p') && p != "p0")
        .count()
        < 8
    {
        assert!(Instant::now() < deadline, "the workers never got busy");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cancel = s
        .http
        .delete(s.url(&format!("/v1/crawl/{id}")))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("cancel");
    assert_eq!(cancel.status(), 200);
    let cancelled_at = Instant::now();
    // The slow pages answer 1.5 s after they started; give the workers time
    // to take another page if they were going to.
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let late: Vec<String> = starts
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, t)| *t > cancelled_at)
        .map(|(p, _)| p.clone())
        .collect();
    assert!(
        late.is_empty(),
        "requests started after the cancel: {late:?}"
    );
    let st = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
    assert_eq!(st.json["status"], "cancelled");
}

async fn errors_list_failed_urls_with_codes_and_what_robots_kept_out(db: Db) {
    let s = Server::start(db).await;
    let site = Site::serve(
        axum::Router::new()
            .route(
                "/robots.txt",
                get(|| async { "User-agent: *\nDisallow: /private\n" }),
            )
            .route(
                "/",
                get(|| async { Html(page("Home", &["/ok", "/private/a", "/private/b", "/blob"])) }),
            )
            .route("/ok", get(|| async { Html(page("Ok", &["/private/a"])) }))
            .route("/about", get(|| async { Html(page("About", &[])) }))
            .route("/private/{p}", get(|| async { Html(page("Private", &[])) }))
            .route(
                "/blob",
                get(|| async {
                    (
                        [(header::CONTENT_TYPE, "application/octet-stream")],
                        vec![0u8, 1, 2, 3, 255, 254],
                    )
                }),
            ),
    )
    .await;
    let id = start(
        &s,
        json!({"url": site.url("/"), "limit": 20, "sitemap": "skip"}),
    )
    .await;
    let done = wait_done(&s, &id).await;
    assert_eq!(done.json["status"], "completed", "{}", done.text);
    let r = s.get_as(&s.key, &format!("/v1/crawl/{id}/errors")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["success"], true);
    let errors = r.json["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{}", r.text);
    assert_eq!(errors[0]["url"], site.url("/blob"));
    assert_eq!(errors[0]["code"], "unsupported_content", "{}", r.text);
    assert!(errors[0]["error"].as_str().is_some_and(|m| !m.is_empty()));
    let mut blocked: Vec<String> = r.json["robotsBlocked"]
        .as_array()
        .expect("robotsBlocked")
        .iter()
        .filter_map(|u| u.as_str().map(String::from))
        .collect();
    blocked.sort();
    assert_eq!(
        blocked,
        vec![site.url("/private/a"), site.url("/private/b")],
        "each once"
    );
    assert_eq!(done.json["failed"], 1);
    assert_eq!(
        s.credits().await,
        1000 - 3,
        "the three pages are charged, the failed one is not: {}",
        done.text
    );
    // Another organization's crawl does not exist for the caller.
    s.get_as(&s.key, "/v1/crawl/crawl_nope/errors")
        .await
        .assert_error(404, "not_found");
}

async fn crawl_is_sitemap_first_respects_robots_and_pages_every_document_once(db: Db) {
    let s = Server::start(db).await;
    let site = site(0).await;
    let id = start(&s, json!({"url": site.url("/"), "limit": 50})).await;
    let done = wait_done(&s, &id).await;
    assert_eq!(done.json["status"], "completed", "{}", done.text);
    let docs = all_docs(&s, &id, 3).await;
    let got = urls(&docs);
    let mut want: Vec<String> = [
        "/", "/about", "/docs/a", "/docs/b", "/blog/1", "/blog/2", "/blog/3", "/blog/4", "/blog/5",
        "/blog/6",
    ]
    .iter()
    .map(|p| site.url(p))
    .collect();
    want.sort();
    assert_eq!(
        got, want,
        "each page once; robots-disallowed and off-site never"
    );
    assert_eq!(done.json["completed"], 10);
    assert_eq!(done.json["credits_used"], 10);
    assert_eq!(s.credits().await, 1000 - 10);
    for d in &docs {
        assert!(d["markdown"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(d["links"].is_null(), "links only when asked for");
    }
    // Unknown and other organizations' crawls are 404; bad cursors 400.
    s.get_as(&s.key, "/v1/crawl/crawl_nope")
        .await
        .assert_error(404, "not_found");
    s.get_as(&s.key, &format!("/v1/crawl/{id}?cursor=zzz"))
        .await
        .assert_error(400, "invalid_request");
    s.get_as(&s.key, &format!("/v1/crawl/{id}?limit=101"))
        .await
        .assert_error(400, "invalid_request");
    let org2 = s
        .admin(
            reqwest::Method::POST,
            "/admin/v1/organizations",
            Some(json!({"name": "other", "credits": 5})),
        )
        .await;
    let org2 = org2.json["data"]["id"].as_str().expect("org").to_string();
    let k2 = s
        .admin(
            reqwest::Method::POST,
            &format!("/admin/v1/organizations/{org2}/keys"),
            Some(json!({"name": "k"})),
        )
        .await;
    let k2 = k2.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string();
    s.get_as(&k2, &format!("/v1/crawl/{id}"))
        .await
        .assert_error(404, "not_found");
    // Validation.
    for (body, field) in [
        (json!({"url": site.url("/"), "limit": 0}), "limit"),
        (json!({"url": site.url("/"), "limit": 100001}), "limit"),
        (json!({"url": site.url("/"), "maxDepth": 21}), "maxDepth"),
        (
            json!({"url": site.url("/"), "includePaths": ["/a$b"]}),
            "includePaths[0]",
        ),
        (
            json!({"url": site.url("/"), "sitemap": "sometimes"}),
            "sitemap",
        ),
        (
            json!({"url": site.url("/"), "webhook": {"url": "https://x.test/", "events": ["page", "nope"]}}),
            "webhook.events[1]",
        ),
        (
            json!({"url": site.url("/"), "scrapeOptions": {"timeout": 5}}),
            "scrapeOptions.timeout",
        ),
        (json!({"url": site.url("/"), "limits": 5}), "limits"),
    ] {
        let r = s.post("/v1/crawl", body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(r.message().contains(field), "{body}: {}", r.message());
    }
    s.post("/v1/crawl", json!({"url": "http://10.1.2.3/"}))
        .await
        .assert_error(400, "blocked_url");
    s.post(
        "/v1/crawl",
        json!({"url": site.url("/"), "webhook": {"url": "http://169.254.169.254/"}}),
    )
    .await
    .assert_error(400, "blocked_url");
}

async fn globs_depth_and_sitemap_only(db: Db) {
    let s = Server::start(db).await;
    let site = site(0).await;
    let id = start(&s, json!({"url": site.url("/"), "includePaths": ["/blog/**", "/$"], "excludePaths": ["/blog/5$"], "sitemap": "skip"})).await;
    wait_done(&s, &id).await;
    let got = urls(&all_docs(&s, &id, 50).await);
    let want: Vec<String> = ["/", "/blog/1", "/blog/2", "/blog/3", "/blog/4"]
        .iter()
        .map(|p| site.url(p))
        .collect();
    assert_eq!(
        got, want,
        "include, exclude (which wins), and exclusion cuts the chain"
    );
    let id = start(
        &s,
        json!({"url": site.url("/"), "maxDepth": 1, "sitemap": "skip"}),
    )
    .await;
    wait_done(&s, &id).await;
    let got = urls(&all_docs(&s, &id, 50).await);
    let want: Vec<String> = ["/", "/about", "/blog/1", "/docs/a"]
        .iter()
        .map(|p| site.url(p))
        .collect();
    assert_eq!(got, want, "one hop");
    let id = start(&s, json!({"url": site.url("/"), "maxDepth": 0})).await;
    wait_done(&s, &id).await;
    assert_eq!(
        urls(&all_docs(&s, &id, 50).await),
        vec![site.url("/")],
        "depth 0 is the start URL only"
    );
    let id = start(&s, json!({"url": site.url("/"), "sitemap": "only"})).await;
    wait_done(&s, &id).await;
    assert_eq!(
        urls(&all_docs(&s, &id, 50).await),
        vec![site.url("/docs/a"), site.url("/docs/b")]
    );
    let id = start(
        &s,
        json!({"url": site.url("/"), "limit": 3, "sitemap": "skip"}),
    )
    .await;
    let done = wait_done(&s, &id).await;
    assert_eq!(done.json["completed"], 3);
    assert_eq!(done.json["total"], 3);
}

async fn cancel_keeps_scraped_pages_and_charges_them(db: Db) {
    let s = Server::start_with(ServerOptions::new(db).env("WEBDATA_WORKER_CONCURRENCY", "1")).await;
    let site = site(400).await;
    let id = start(&s, json!({"url": site.url("/blog/1"), "sitemap": "skip"})).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
        if r.json["completed"].as_i64().unwrap_or(0) >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "{}", r.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let c = s
        .http
        .delete(s.url(&format!("/v1/crawl/{id}")))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("delete");
    let c = Resp::from(c).await;
    assert_eq!(c.status, 200, "{}", c.text);
    assert_eq!(c.json["status"], "cancelled");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let r = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
    assert_eq!(r.json["status"], "cancelled");
    let kept = r.json["completed"].as_i64().expect("completed");
    // Pages already scraped when the cancel lands may still be committed
    // before it: the one being fetched (concurrency 1) and up to two waiting
    // for the committer (a page gives its fetch slot back when scraped).
    assert!((2..=5).contains(&kept), "{kept}");
    // And nothing after it.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let later = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
    assert_eq!(later.json["completed"], kept, "{}", later.text);
    assert_eq!(r.json["credits_used"], kept, "scraped pages are charged");
    assert_eq!(
        all_docs(&s, &id, 50).await.len() as i64,
        kept,
        "scraped pages stay available"
    );
    assert_eq!(s.credits().await, 1000 - kept);
    assert!(r.json["next"].is_null() || !all_docs(&s, &id, 50).await.is_empty());
}

async fn credits_running_out_stops_the_crawl_early_with_its_pages(db: Db) {
    let s = Server::start_with(
        ServerOptions::new(db)
            .credits(3)
            .env("WEBDATA_WORKER_CONCURRENCY", "1"),
    )
    .await;
    let site = site(0).await;
    let id = start(&s, json!({"url": site.url("/blog/1"), "sitemap": "skip"})).await;
    let done = wait_done(&s, &id).await;
    assert_eq!(done.json["completed"], 3, "{}", done.text);
    assert_eq!(
        done.json["error"]["code"], "insufficient_credits",
        "{}",
        done.text
    );
    assert_eq!(all_docs(&s, &id, 10).await.len(), 3);
    assert_eq!(s.credits().await, 0);
    s.post("/v1/crawl", json!({"url": site.url("/")}))
        .await
        .assert_error(402, "insufficient_credits");
}

async fn events_replay_from_last_event_id_and_close_after_done(db: Db) {
    let s = Server::start_with(ServerOptions::new(db).env("WEBDATA_SSE_KEEPALIVE_MS", "200")).await;
    let site = site(300).await;
    let id = start(
        &s,
        json!({"url": site.url("/blog/4"), "sitemap": "skip", "includePaths": ["/blog/**"]}),
    )
    .await;
    // Live: keep-alive comments while pages are slow, then page events and done.
    let resp = s
        .http
        .get(s.url(&format!("/v1/crawl/{id}/events")))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("sse");
    assert_eq!(resp.status(), 200);
    assert!(resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream")));
    let text = tokio::time::timeout(Duration::from_secs(30), resp.text())
        .await
        .expect("stream closes after done")
        .expect("body");
    assert!(text.contains(": keep-alive"), "{text}");
    let events = parse_sse(&text);
    let names: Vec<&str> = events.iter().map(|e| e.1.as_str()).collect();
    assert_eq!(names.first().copied(), Some("status"), "{names:?}");
    assert_eq!(names.last().copied(), Some("done"), "{names:?}");
    assert_eq!(
        names.iter().filter(|n| **n == "page").count(),
        3,
        "{names:?}"
    );
    let pages: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| e.1 == "page")
        .map(|e| serde_json::from_str(&e.2).expect("json"))
        .collect();
    assert!(pages
        .iter()
        .all(|p| p["markdown"].is_string() && p["url"].is_string()));
    let done: serde_json::Value =
        serde_json::from_str(&events.last().expect("done").2).expect("json");
    assert_eq!(done["status"], "completed");
    assert!(done.get("data").is_none());
    // Replay after the second event.
    let second = events[1].0.clone();
    let again = s
        .http
        .get(s.url(&format!("/v1/crawl/{id}/events")))
        .bearer_auth(&s.key)
        .header("last-event-id", &second)
        .send()
        .await
        .expect("sse");
    let replay = parse_sse(&again.text().await.expect("body"));
    let ids: Vec<i64> = replay.iter().map(|e| e.0.parse().expect("id")).collect();
    let all_ids: Vec<i64> = events.iter().map(|e| e.0.parse().expect("id")).collect();
    assert_eq!(ids, all_ids[2..].to_vec());
    let bad = s
        .http
        .get(s.url(&format!("/v1/crawl/{id}/events")))
        .bearer_auth(&s.key)
        .header("last-event-id", "x")
        .send()
        .await
        .expect("sse");
    Resp::from(bad).await.assert_error(400, "invalid_request");
}

fn parse_sse(text: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let (mut id, mut ev, mut data) = (String::new(), String::new(), String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().to_string();
            }
            if let Some(v) = line.strip_prefix("event:") {
                ev = v.trim().to_string();
            }
            if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.trim_start());
            }
        }
        if !ev.is_empty() {
            out.push((id, ev, data));
        }
    }
    out
}

async fn killed_server_resumes_the_crawl_without_losing_or_double_charging(db: Db) {
    let site = site(150).await;
    let mut a =
        Server::start_with(ServerOptions::new(db).env("WEBDATA_WORKER_CONCURRENCY", "2")).await;
    let id = start(
        &a,
        json!({"url": site.url("/blog/1"), "sitemap": "skip", "includePaths": ["/blog/**"]}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = a.get_as(&a.key, &format!("/v1/crawl/{id}")).await;
        if r.json["completed"].as_i64().unwrap_or(0) >= 2 {
            break;
        }
        assert!(Instant::now() < deadline);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    a.kill();
    // Leases of the dead process expire; a short lease lets the test finish quickly.
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
    let docs = all_docs(&b, &id, 50).await;
    let got = urls(&docs);
    let want: Vec<String> = (1..=6).map(|n| site.url(&format!("/blog/{n}"))).collect();
    assert_eq!(got, want, "every page exactly once");
    assert_eq!(done.json["credits_used"], 6);
    assert_eq!(
        b.get_as(&a.key, "/v1/team/credit-usage").await.json["data"]["remainingCredits"],
        1000 - 6
    );
}

async fn repeated_blocks_are_removed_unless_asked_to_keep_them(db: Db) {
    let s = Server::start(db).await;
    let site = site(0).await;
    let id = start(&s, json!({"url": site.url("/news/1"), "sitemap": "skip"})).await;
    wait_done(&s, &id).await;
    let docs = all_docs(&s, &id, 50).await;
    assert_eq!(docs.len(), 5);
    // The event stream strips the same blocks from the pages it sends.
    let stream = s
        .http
        .get(s.url(&format!("/v1/crawl/{id}/events")))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("sse");
    let pages: Vec<serde_json::Value> = parse_sse(&stream.text().await.expect("body"))
        .into_iter()
        .filter(|e| e.1 == "page")
        .map(|e| serde_json::from_str(&e.2).expect("page json"))
        .collect();
    assert_eq!(pages.len(), 5);
    for d in docs.iter().chain(&pages) {
        let md = d["markdown"].as_str().expect("md");
        assert!(!md.contains("Subscribe to our newsletter"), "{md}");
        assert!(md.contains("reports something that happened"), "{md}");
    }
    let id = start(
        &s,
        json!({"url": site.url("/news/1"), "sitemap": "skip", "removeBoilerplate": false}),
    )
    .await;
    wait_done(&s, &id).await;
    let docs = all_docs(&s, &id, 50).await;
    assert!(docs.iter().all(|d| d["markdown"]
        .as_str()
        .is_some_and(|m| m.contains("Subscribe to our newsletter"))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_worker_processes_share_a_crawl_on_postgres_and_lose_nothing() {
    let site = Site::serve(axum::Router::new().route("/p/{n}", get(|Path(n): Path<u32>| async move {
        tokio::time::sleep(Duration::from_millis(120)).await;
        let links: String = (1..=16).map(|i| format!("<a href=\"/p/{i}\">p{i}</a> ")).collect();
        Html(format!("<html><head><title>P{n}</title></head><body><main><article><h1>Page {n}</h1><p>Page {n} of a site that two workers crawl together, with enough words to count as content.</p>{links}</article></main></body></html>"))
    }))).await;
    let s =
        Server::start_with(ServerOptions::new(Db::Postgres).env("WEBDATA_WORKER_CONCURRENCY", "0"))
            .await;
    let env = [
        ("WEBDATA_WORKER_CONCURRENCY", "2"),
        ("WEBDATA_LEASE_MS", "1500"),
    ];
    let mut a = support::Worker::start(&s.database_url, &env);
    let mut b = support::Worker::start(&s.database_url, &env);
    let id = start(&s, json!({"url": site.url("/p/1"), "sitemap": "skip"})).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
        if r.json["completed"].as_i64().unwrap_or(0) >= 4 {
            break;
        }
        assert!(Instant::now() < deadline, "{}", r.text);
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    a.kill(); // SIGKILL mid-crawl: its leases expire and are leased again by b
    let done = wait_done(&s, &id).await;
    assert_eq!(done.json["status"], "completed", "{}", done.text);
    let docs = all_docs(&s, &id, 100).await;
    let got = urls(&docs);
    let want: Vec<String> = {
        let mut w: Vec<String> = (1..=16).map(|n| site.url(&format!("/p/{n}"))).collect();
        w.sort();
        w
    };
    assert_eq!(got, want, "every page exactly once");
    assert_eq!(done.json["credits_used"], 16);
    assert_eq!(s.credits().await, 1000 - 16, "charged once per page");
    let worked = |w: &support::Worker| w.log.lock().unwrap_or_else(|p| p.into_inner()).len();
    assert!(worked(&b) > 0);
    // SIGTERM: the worker finishes what it has and exits cleanly.
    let id2 = start(
        &s,
        json!({"url": site.url("/p/2"), "sitemap": "skip", "limit": 6}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(b.terminate(20), Some(0), "clean exit on SIGTERM");
    let store = s.store().await;
    let held: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM frontier WHERE crawl_id = $1 AND state = 'leased'",
    )
    .bind(&id2)
    .fetch_one(store.pool())
    .await
    .expect("count");
    assert_eq!(held, 0, "no lease left behind by the stopped worker");
    let mut c = support::Worker::start(&s.database_url, &env);
    let done = wait_done(&s, &id2).await;
    assert_eq!(done.json["completed"], 6, "{}", done.text);
    c.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn robots_crawl_delay_spaces_requests_to_a_host() {
    let times: std::sync::Arc<std::sync::Mutex<Vec<Instant>>> = Default::default();
    let t2 = times.clone();
    let site = Site::serve(
        axum::Router::new()
            .route("/robots.txt", get(|| async { "User-agent: *\nCrawl-delay: 0.3\n" }))
            .route("/d/{n}", get(move |Path(n): Path<u32>| {
                let t = t2.clone();
                async move {
                    t.lock().unwrap_or_else(|p| p.into_inner()).push(Instant::now());
                    let links: String = (1..=4).map(|i| format!("<a href=\"/d/{i}\">d{i}</a> ")).collect();
                    Html(format!("<html><head><title>D{n}</title></head><body><main><article><h1>D {n}</h1><p>Delayed page {n} with enough words to count as a real page of content here.</p>{links}</article></main></body></html>"))
                }
            })),
    )
    .await;
    let s = Server::start(Db::Sqlite).await;
    let id = start(&s, json!({"url": site.url("/d/1"), "sitemap": "skip"})).await;
    let done = wait_done(&s, &id).await;
    assert_eq!(done.json["completed"], 4, "{}", done.text);
    let mut t = times.lock().unwrap_or_else(|p| p.into_inner()).clone();
    t.sort();
    assert_eq!(t.len(), 4);
    // Arrival times carry scheduler noise under a loaded test run, so check
    // the spacing over the whole run: three delays of 300 ms, where an
    // unthrottled crawl fetches all four pages within a few milliseconds.
    let span = t[3] - t[0];
    assert!(
        span >= Duration::from_millis(750),
        "4 requests within {span:?}"
    );
    let tightest = t.windows(2).map(|w| w[1] - w[0]).min().unwrap_or_default();
    assert!(
        tightest >= Duration::from_millis(100),
        "two requests {tightest:?} apart"
    );
}

/// Politeness without a `Crawl-delay`: at most 8 requests to one host at a
/// time (the runner's per-host slots), however many pages are ready, and
/// several at a time (the host is not fetched one page after another).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_host_gets_at_most_eight_requests_at_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let now = std::sync::Arc::new(AtomicUsize::new(0));
    let peak = std::sync::Arc::new(AtomicUsize::new(0));
    let (n2, p2) = (now.clone(), peak.clone());
    let site = Site::serve(axum::Router::new().route(
        "/p/{n}",
        get(move |Path(n): Path<u32>| {
            let (now, peak) = (n2.clone(), p2.clone());
            async move {
                // Counted down however the request ends (a dropped
                // connection included), so a lost request cannot inflate it.
                struct InFlight(std::sync::Arc<AtomicUsize>);
                impl Drop for InFlight {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::SeqCst);
                    }
                }
                let at = now.fetch_add(1, Ordering::SeqCst) + 1;
                let _in_flight = InFlight(now);
                peak.fetch_max(at, Ordering::SeqCst);
                // Slow enough that every ready page is in flight at once,
                // even on a loaded machine.
                tokio::time::sleep(Duration::from_millis(400)).await;
                // The start page links to all the others.
                let links: String = if n == 0 {
                    (1..=40).map(|i| format!("<a href=\"/p/{i}\">p{i}</a> ")).collect()
                } else {
                    String::new()
                };
                Html(format!("<html><head><title>P{n}</title></head><body><main><article><h1>P {n}</h1><p>Page {n} of a slow site, with enough words to count as a real page of content.</p>{links}</article></main></body></html>"))
            }
        }),
    ))
    .await;
    let s = Server::start(Db::Sqlite).await;
    let id = start(&s, json!({"url": site.url("/p/0"), "sitemap": "skip"})).await;
    let done = wait_done(&s, &id).await;
    assert_eq!(done.json["completed"], 41, "{}", done.text);
    let peak = peak.load(Ordering::SeqCst);
    assert!(peak <= 8, "{peak} requests to one host at once");
    assert!(peak >= 4, "only {peak} requests to the host at once");
}
