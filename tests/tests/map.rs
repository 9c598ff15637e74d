//! Issue 6, black-box: POST /v1/map through the real binary against sites
//! on loopback: discovery (robots, sitemaps, links, the rendered fallback),
//! filters, subdomains, ranking, and billing by fetches against the ledger.
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
use serde_json::{json, Value};
use std::io::Write;
use support::{Db, Resp, Server, ServerOptions, Site};

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

fn page(title: &str, links: &[(&str, &str)]) -> String {
    let links: String = links
        .iter()
        .map(|(href, text)| format!("<li><a href=\"{href}\">{text}</a></li>"))
        .collect();
    format!("<!doctype html><html><head><title>{title}</title></head><body><main><h1>{title}</h1><ul>{links}</ul></main></body></html>")
}

fn urls(r: &Resp) -> Vec<String> {
    r.json["links"]
        .as_array()
        .unwrap_or_else(|| panic!("no links: {}", r.text))
        .iter()
        .map(|l| l["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn paths(r: &Resp) -> Vec<String> {
    urls(r)
        .iter()
        .map(|u| {
            let p = url::Url::parse(u).expect("url");
            match p.query() {
                Some(q) => format!("{}?{q}", p.path()),
                None => p.path().to_string(),
            }
        })
        .collect()
}

fn link<'a>(r: &'a Resp, path: &str) -> &'a Value {
    r.json["links"]
        .as_array()
        .and_then(|a| {
            a.iter().find(|l| {
                l["url"]
                    .as_str()
                    .and_then(|u| url::Url::parse(u).ok())
                    .is_some_and(|u| u.path() == path)
            })
        })
        .unwrap_or_else(|| panic!("{path} not in {}", r.text))
}

/// robots.txt (a disallowed folder, a sitemap index), a gzip sitemap with a
/// title, a text sitemap, and pages linking around.
async fn docs_site() -> Site {
    Site::serve(
        axum::Router::new()
            .route("/robots.txt", get(|h: HeaderMap| async move {
                format!("User-agent: *\nDisallow: /private\nSitemap: http://{}/sitemap_index.xml\n", host(&h))
            }))
            .route("/sitemap_index.xml", get(|h: HeaderMap| async move {
                let b = host(&h);
                ([(header::CONTENT_TYPE, "application/xml")],
                 format!("<?xml version=\"1.0\"?><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                   <sitemap><loc>http://{b}/docs-sitemap.xml.gz</loc></sitemap><sitemap><loc>http://{b}/extra.txt</loc></sitemap></sitemapindex>"))
            }))
            .route("/docs-sitemap.xml.gz", get(|h: HeaderMap| async move {
                let b = format!("http://{}", host(&h));
                let xml = format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" xmlns:news=\"http://www.google.com/schemas/sitemap-news/0.9\">\
                    <url><loc>{b}/docs/install</loc></url>\
                    <url><loc>{b}/docs/api/</loc><news:news><news:title>API reference (sitemap)</news:title></news:news></url>\
                    <url><loc>{b}/private/plans</loc></url>\
                    <url><loc>{b}/docs/only-in-sitemap</loc></url></urlset>");
                ([(header::CONTENT_TYPE, "application/gzip")], gzip(xml.as_bytes()))
            }))
            .route("/extra.txt", get(|h: HeaderMap| async move {
                let b = format!("http://{}", host(&h));
                ([(header::CONTENT_TYPE, "text/plain")], format!("{b}/blog/from-text-sitemap\n{b}/docs/install\n"))
            }))
            .route("/", get(|| async {
                Html(page("Acme home", &[("/docs/install", "Install"), ("/blog/", "Blog"), ("/private/x", "Private"),
                    ("/about?utm_source=nav", "About us"), ("/blog/#top", "Blog again"), ("mailto:a@b.c", "mail"),
                    ("http://127.0.0.3:9/elsewhere", "Off site")]))
            }))
            .route("/about", get(|| async { Html(page("About Acme", &[("/", "Home")])) }))
            .route("/blog/", get(|| async { Html(page("Blog", &[("/blog/first-post", "First post"), ("/files/report.pdf", "Report")])) }))
            .route("/blog/first-post", get(|| async { Html(page("First post", &[("/blog/second-post", "Second post")])) }))
            .route("/blog/second-post", get(|| async { Html(page("Second post", &[])) }))
            .route("/docs/{p}", get(|Path(p): Path<String>| async move { Html(page(&format!("Docs: {p}"), &[("/docs/api/", "API")])) }))
            .route("/private/{p}", get(|| async { Html(page("Private", &[("/private/deeper", "Deeper")])) })),
    )
    .await
}

fn no_browser(db: Db) -> ServerOptions {
    ServerOptions::new(db).env("WEBDATA_BROWSER", "off")
}

async fn sitemap_modes(db: Db) {
    let site = docs_site().await;
    let s = Server::start_with(no_browser(db)).await;

    // include: sitemap URLs (with their sources and titles) and links.
    let r = s.post("/v1/map", json!({ "url": site.url("/") })).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.assert_request_id();
    let p = paths(&r);
    for want in [
        "/",
        "/docs/install",
        "/docs/api/",
        "/docs/only-in-sitemap",
        "/blog/from-text-sitemap",
        "/blog/",
        "/about",
        "/blog/first-post",
        "/blog/second-post",
        "/files/report.pdf",
    ] {
        assert!(p.contains(&want.to_string()), "{want} missing from {p:?}");
    }
    // robots.txt disallows /private; other sites, mailto and fragments never appear.
    assert!(
        p.iter().all(|x| !x.starts_with("/private")),
        "robots-disallowed URL returned: {p:?}"
    );
    assert!(
        urls(&r).iter().all(|u| u.starts_with(&site.base)),
        "{:?}",
        urls(&r)
    );
    // De-duplicated and normalised: one /blog/ (fragment dropped), /about without utm_*.
    assert_eq!(p.iter().filter(|x| x.as_str() == "/blog/").count(), 1);
    assert!(p.contains(&"/about".to_string()), "{p:?}");
    let mut uniq = p.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), p.len(), "duplicates in {p:?}");
    // The start page comes first, then sitemap URLs in sitemap order.
    assert_eq!(p[0], "/");
    assert_eq!(
        &p[1..5],
        &[
            "/docs/install",
            "/docs/api/",
            "/docs/only-in-sitemap",
            "/blog/from-text-sitemap"
        ]
    );
    assert_eq!(link(&r, "/")["source"], "link");
    assert_eq!(link(&r, "/")["title"], "Acme home");
    assert_eq!(link(&r, "/docs/install")["source"], "sitemap");
    // Titles: a fetched page's <title> beats the sitemap's, which beats link text.
    assert_eq!(link(&r, "/docs/install")["title"], "Docs: install");
    assert_eq!(
        link(&r, "/docs/only-in-sitemap")["title"],
        "Docs: only-in-sitemap"
    );
    assert_eq!(link(&r, "/blog/from-text-sitemap")["source"], "sitemap");
    assert_eq!(link(&r, "/blog/first-post")["source"], "link");
    assert_eq!(link(&r, "/blog/first-post")["title"], "First post");
    assert_eq!(link(&r, "/files/report.pdf")["title"], "Report");
    assert_eq!(r.json["budgetLimited"], false);

    // skip: no sitemap file is fetched, so sitemap-only URLs are missing.
    let before = site.hits();
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/"), "sitemap": "skip" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let p = paths(&r);
    assert!(!p.contains(&"/docs/only-in-sitemap".to_string()), "{p:?}");
    assert!(!p.contains(&"/blog/from-text-sitemap".to_string()), "{p:?}");
    assert!(p.contains(&"/blog/second-post".to_string()), "{p:?}");
    assert!(r.json["links"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["source"] == "link"));
    // robots.txt is cached from the first map: only pages were fetched, and
    // the charge is 3 credits per 10 of them.
    let fetched = site.hits() - before;
    assert_eq!(
        r.json["credits_used"],
        json!((fetched.div_ceil(10) * 3) as i64),
        "{fetched} fetches"
    );

    // only: sitemap URLs, no page fetched at all.
    let before = site.hits();
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/"), "sitemap": "only" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        paths(&r),
        vec![
            "/docs/install",
            "/docs/api/",
            "/docs/only-in-sitemap",
            "/blog/from-text-sitemap"
        ]
    );
    assert!(r.json["links"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l["source"] == "sitemap"));
    assert_eq!(link(&r, "/docs/api/")["title"], "API reference (sitemap)");
    // Four sitemap files (the index robots.txt names, its gzip and text
    // children, and /sitemap.xml, which is always tried); robots.txt was cached.
    assert_eq!(site.hits() - before, 4);
    assert_eq!(r.json["credits_used"], 3);
}

async fn include_exclude_and_limit(db: Db) {
    let site = docs_site().await;
    let s = Server::start_with(no_browser(db)).await;
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/"), "includePaths": ["/blog/**"] }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let mut p = paths(&r);
    p.sort();
    // Pages outside includePaths are still read for links (the home page
    // leads to the blog) but only matching URLs are returned.
    assert_eq!(
        p,
        vec![
            "/blog/",
            "/blog/first-post",
            "/blog/from-text-sitemap",
            "/blog/second-post"
        ]
    );

    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/"), "excludePaths": ["/blog/**", "/docs/api/"] }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    // Excluded pages are neither returned nor fetched: the blog posts, only
    // linked from /blog/, are never seen.
    assert_eq!(
        paths(&r),
        vec!["/", "/docs/install", "/docs/only-in-sitemap", "/about"]
    );

    let r = s
        .post("/v1/map", json!({ "url": site.url("/"), "limit": 3 }))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(paths(&r), vec!["/", "/docs/install", "/docs/api/"]);

    // Bad input: named field and rule, no charge.
    let credits = s.credits().await;
    for (body, needle) in [
        (
            json!({ "url": site.url("/"), "limit": 0 }),
            "`limit` must be between 1 and 100000",
        ),
        (json!({ "url": site.url("/"), "limit": 100001 }), "`limit`"),
        (
            json!({ "url": site.url("/"), "sitemap": "sometimes" }),
            "sitemap",
        ),
        (
            json!({ "url": site.url("/"), "includePaths": ["/a/***"] }),
            "/a/***",
        ),
        (
            json!({ "url": site.url("/"), "search": "x".repeat(501) }),
            "`search`",
        ),
        (json!({ "url": "ftp://a.test/" }), "`url`"),
        (
            json!({ "url": site.url("/"), "crawlEntireDomain": true }),
            "crawlEntireDomain",
        ),
        (json!({}), "url"),
    ] {
        let r = s.post("/v1/map", body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(r.message().contains(needle), "{body}: {}", r.message());
    }
    assert_eq!(s.credits().await, credits);
}

/// Three names on one server: the site, its docs subdomain, another site.
async fn subdomains(db: Db) {
    let site = Site::serve(axum::Router::new().fallback(
        |h: HeaderMap, uri: axum::http::Uri| async move {
            let host = host(&h);
            let port = host.rsplit(':').next().unwrap_or("").to_string();
            let name = host.split(':').next().unwrap_or("").to_string();
            match (name.as_str(), uri.path()) {
                (_, "/robots.txt") => "User-agent: *\nAllow: /\n".into_response(),
                ("acme.test", "/") => Html(page(
                    "Acme",
                    &[
                        (&format!("http://docs.acme.test:{port}/guide"), "Guide"),
                        (&format!("http://www.acme.test:{port}/team"), "Team"),
                        (&format!("http://other.test:{port}/x"), "Other"),
                        ("/pricing", "Pricing"),
                    ],
                ))
                .into_response(),
                ("docs.acme.test", "/guide") => {
                    Html(page("Guide", &[("/guide/start", "Start")])).into_response()
                }
                (_, p) => Html(page(&format!("{name}{p}"), &[])).into_response(),
            }
        },
    ))
    .await;
    let port = site.base.rsplit(':').next().unwrap().to_string();
    let s = Server::start_with(no_browser(db).env(
        "WEBDATA_RESOLVE",
        "acme.test=127.0.0.2,www.acme.test=127.0.0.2,docs.acme.test=127.0.0.2,other.test=127.0.0.2",
    ))
    .await;
    let start = format!("http://acme.test:{port}/");
    let r = s
        .post("/v1/map", json!({ "url": start, "sitemap": "skip" }))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let mut got: Vec<String> = urls(&r);
    got.sort();
    // www. is the same site; the docs subdomain and another domain are not.
    assert_eq!(
        got,
        vec![
            format!("http://acme.test:{port}/"),
            format!("http://acme.test:{port}/pricing"),
            format!("http://www.acme.test:{port}/team"),
        ]
    );
    let r = s
        .post(
            "/v1/map",
            json!({ "url": start, "sitemap": "skip", "includeSubdomains": true }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let got = urls(&r);
    assert!(
        got.contains(&format!("http://docs.acme.test:{port}/guide")),
        "{got:?}"
    );
    // The subdomain's page was fetched for its links too.
    assert!(
        got.contains(&format!("http://docs.acme.test:{port}/guide/start")),
        "{got:?}"
    );
    assert!(got.iter().all(|u| !u.contains("other.test")), "{got:?}");
}

async fn search_ranking(db: Db) {
    let site = Site::serve(
        axum::Router::new()
            .route("/robots.txt", get(|| async { "User-agent: *\nAllow: /\n" }))
            .route("/sitemap.xml", get(|h: HeaderMap| async move {
                let b = format!("http://{}", host(&h));
                let locs: String = ["/", "/about", "/blog/pricing-update", "/pricing", "/plans/enterprise", "/contact", "/docs/webhooks"]
                    .iter()
                    .map(|p| format!("<url><loc>{b}{p}</loc></url>"))
                    .collect();
                ([(header::CONTENT_TYPE, "application/xml")],
                 format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{locs}</urlset>"))
            }))
            .route("/", get(|| async { Html(page("Home", &[])) }))
            .route("/about", get(|| async { Html(page("About us", &[])) }))
            .route("/blog/pricing-update", get(|| async { Html(page("A pricing update", &[])) }))
            .route("/pricing", get(|| async { Html(page("Pricing plans", &[])) }))
            .route("/plans/enterprise", get(|| async { Html(page("Enterprise", &[])) }))
            .route("/contact", get(|| async { Html(page("Contact", &[])) }))
            .route("/docs/webhooks", get(|| async { Html(page("Webhooks guide", &[])) })),
    )
    .await;
    let s = Server::start_with(no_browser(db)).await;
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/"), "search": "Pricing PLANS" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    // BM25 over URL words and page titles (see worker/src/map/rank.rs):
    // both words first; then "pricing" twice (URL and title) outweighs one
    // "plan" although that document is shorter; then the rest in discovery order.
    assert_eq!(
        paths(&r),
        vec![
            "/pricing",
            "/blog/pricing-update",
            "/plans/enterprise",
            "/",
            "/about",
            "/contact",
            "/docs/webhooks"
        ]
    );
    // Ranking happens before `limit`: the best match survives a small limit.
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/"), "search": "webhook", "limit": 1 }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(paths(&r), vec!["/docs/webhooks"]);
}

/// A tree of `n` pages: /p/i links to /p/2i+1 and /p/2i+2; robots.txt allows all.
async fn tree_site(n: usize) -> Site {
    Site::serve(
        axum::Router::new()
            .route("/robots.txt", get(|| async { "User-agent: *\nAllow: /\n" }))
            .route(
                "/p/{i}",
                get(move |Path(i): Path<usize>| async move {
                    let kids: Vec<(String, String)> = [2 * i + 1, 2 * i + 2]
                        .into_iter()
                        .filter(|k| *k < n)
                        .map(|k| (format!("/p/{k}"), format!("Page {k}")))
                        .collect();
                    let refs: Vec<(&str, &str)> =
                        kids.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
                    Html(page(&format!("Page {i}"), &refs))
                }),
            ),
    )
    .await
}

/// Maps `site` with sitemaps skipped and checks the charge against the
/// site's request count (every fetch is one request), the balance and the
/// ledger entry.
async fn map_and_check(
    s: &Server,
    site: &Site,
    expect_fetches: usize,
    expect_credits: i64,
) -> Resp {
    let before_hits = site.hits();
    let before_credits = s.credits().await;
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/p/0"), "sitemap": "skip" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(site.hits() - before_hits, expect_fetches, "fetches");
    assert_eq!(r.json["credits_used"], json!(expect_credits), "{}", r.text);
    assert_eq!(
        before_credits - s.credits().await,
        expect_credits,
        "balance"
    );
    let store = s.store().await;
    let entry = &store
        .ledger_entries(&s.org_id().await, 1)
        .await
        .expect("ledger")[0];
    assert_eq!(entry["operation"], "map");
    assert_eq!(entry["settled"], json!(expect_credits), "ledger {entry}");
    r
}

async fn billing_table(db: Db) {
    let s = Server::start_with(no_browser(db)).await;
    // robots.txt + 9 pages = 10 fetches: 3 credits.
    let site = tree_site(9).await;
    let r = map_and_check(&s, &site, 10, 3).await;
    assert_eq!(r.json["links"].as_array().unwrap().len(), 9);
    // The same site again: robots.txt is cached; 9 fetches, 3 credits.
    map_and_check(&s, &site, 9, 3).await;
    // robots.txt + 10 pages = 11 fetches: 6 credits.
    map_and_check(&s, &tree_site(10).await, 11, 6).await;
    // robots.txt + 139 pages = 140 fetches: 42 credits.
    let r = map_and_check(&s, &tree_site(139).await, 140, 42).await;
    assert_eq!(r.json["links"].as_array().unwrap().len(), 139);
    // A bigger site stops at 140 fetches: 42 credits; the credits were there,
    // so this is not budget-limited.
    let r = map_and_check(&s, &tree_site(400).await, 140, 42).await;
    assert_eq!(r.json["budgetLimited"], false);
    assert!(r.json["links"].as_array().unwrap().len() > 139);

    // One fetch: a page without links, robots.txt cached: 3 credits.
    let single = tree_site(1).await;
    map_and_check(&s, &single, 2, 3).await;
    map_and_check(&s, &single, 1, 3).await;

    // Fetches are counted in the metrics: 10 + 9 + 11 + 140 + 140 + 2 + 1.
    let metrics = s
        .http
        .get(s.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("webdata_map_fetches_total 313"),
        "{metrics}"
    );
}

async fn start_page_failures_cost_nothing(db: Db) {
    let site = Site::serve(
        axum::Router::new()
            .route(
                "/robots.txt",
                get(|| async { "User-agent: *\nDisallow: /closed\n" }),
            )
            .route(
                "/broken",
                get(|| async { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, "boom") }),
            )
            .route(
                "/gone",
                get(|| async {
                    (
                        axum::http::StatusCode::NOT_FOUND,
                        Html(page("Not found", &[("/a", "a")])),
                    )
                }),
            ),
    )
    .await;
    let s = Server::start_with(no_browser(db)).await;
    let credits = s.credits().await;
    let r = s
        .post("/v1/map", json!({ "url": site.url("/broken") }))
        .await;
    r.assert_error(502, "fetch_failed");
    assert!(
        r.message().contains("start page") && r.message().contains("500"),
        "{}",
        r.message()
    );
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/gone"), "sitemap": "skip" }),
        )
        .await;
    r.assert_error(502, "fetch_failed");
    let r = s
        .post("/v1/map", json!({ "url": site.url("/closed") }))
        .await;
    r.assert_error(403, "forbidden");
    // Nothing listens here: robots.txt is unreachable, the site is closed.
    let r = s
        .post("/v1/map", json!({ "url": "http://127.0.0.2:9/" }))
        .await;
    r.assert_error(502, "fetch_failed");
    assert_eq!(s.credits().await, credits);
    let store = s.store().await;
    for e in store
        .ledger_entries(&s.org_id().await, 10)
        .await
        .expect("ledger")
    {
        assert_eq!(e["settled"], json!(0), "{e}");
    }
}

async fn balances_below_the_worst_case(db: Db) {
    let site = tree_site(400).await;
    let small = tree_site(3).await;
    for (credits, fetches, charged, limited) in [
        (41i64, 130usize, 39i64, true),
        (5, 10, 3, true),
        (3, 10, 3, true),
    ] {
        let s = Server::start_with(no_browser(db).credits(credits)).await;
        let r = map_and_check(&s, &site, fetches, charged).await;
        assert_eq!(
            r.json["budgetLimited"], limited,
            "{credits} credits: {}",
            r.text
        );
        assert_eq!(s.credits().await, credits - charged);
    }
    // A small site fits the reduced budget: not limited.
    let s = Server::start_with(no_browser(db).credits(5)).await;
    let r = map_and_check(&s, &small, 4, 3).await;
    assert_eq!(r.json["budgetLimited"], false);
    assert_eq!(r.json["links"].as_array().unwrap().len(), 3);
    // Fewer than 3 credits: 402, nothing fetched, nothing charged.
    let s = Server::start_with(no_browser(db).credits(2)).await;
    let before = site.hits();
    let r = s.post("/v1/map", json!({ "url": site.url("/p/0") })).await;
    r.assert_error(402, "insufficient_credits");
    assert_eq!(site.hits(), before);
    assert_eq!(s.credits().await, 2);
}

on_both!(
    sitemap_modes,
    include_exclude_and_limit,
    subdomains,
    search_ranking,
    billing_table,
    start_page_failures_cost_nothing,
    balances_below_the_worst_case,
);

/// The rendered-links fallback with real Chromium: a page whose links are
/// written by script yields nothing to a fetch, so the map renders it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn render_fallback_finds_script_links() {
    assert!(
        std::path::Path::new("/usr/bin/chromedriver").exists(),
        "chromedriver is missing: run `make test`, which installs chromium and chromium-driver"
    );
    let site = Site::serve(
        axum::Router::new()
            .route("/robots.txt", get(|| async { "User-agent: *\nAllow: /\n" }))
            .route("/", get(|| async {
                Html("<!doctype html><html><head><title>App</title></head><body><div id=app></div><script>\
                  const links=[['/features','Features'],['/pricing','Pricing'],['/docs/start','Get started']];\
                  document.getElementById('app').innerHTML=links.map(([h,t])=>`<a href=\"${h}\">${t}</a>`).join(' ');\
                  </script></body></html>")
            })),
    )
    .await;
    let s = Server::start(Db::Sqlite).await;
    let before = site.hits();
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/"), "sitemap": "skip" }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(link(&r, "/features")["source"], "render");
    assert_eq!(link(&r, "/features")["title"], "Features");
    assert_eq!(link(&r, "/docs/start")["source"], "render");
    assert_eq!(link(&r, "/")["source"], "link");
    // robots.txt, the start page, the render (its own page load counts once
    // for billing, whatever the browser requested): 3 credits.
    assert!(site.hits() - before >= 3);
    assert_eq!(r.json["credits_used"], 3);

    // When the start page alone meets `limit`, nothing is rendered.
    let r = s
        .post(
            "/v1/map",
            json!({ "url": site.url("/"), "sitemap": "skip", "limit": 1 }),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.json["links"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["source"] != "render"),
        "{}",
        r.text
    );
}
