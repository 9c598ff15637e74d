//! Issue 3, black-box: POST /v1/scrape against pages served on loopback,
//! through the real binary (SQLite store; the store contract and the
//! foundation tests cover Postgres).
//!
//! Long by design: a test suite (one area of the spec per file).
//! Each test stands alone; splitting the file would only add test
//! binaries to link.

mod support;

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect};
use axum::routing::get;
use serde_json::json;
use std::time::Duration;
use support::{Db, Server, Site};

/// A short German article in `<main>` between a cookie banner, nav, aside
/// and footer (shared with the worker's main-content unit tests).
const ARTICLE: &str =
    include_str!("../../worker/content/tests/fixtures/content/article_short_de.html");

const SPA_SHELL: &str = r#"<!doctype html><html><head><title>App</title>
<script src="/static/js/chunk-vendors.js"></script><script src="/static/js/app.js"></script><script src="/static/js/runtime.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>"#;

const BOT_WALL: &str = r#"<!doctype html><html><head><title>Just a moment...</title></head>
<body><div id="cf-challenge-running">Checking your browser before accessing the site.</div>
<p>Verify you are human</p><iframe src="https://challenges.cloudflare.com/x"></iframe></body></html>"#;

/// A 96-word blog post whose comment form carries a reCAPTCHA widget: a page, not a wall.
const CAPTCHA_POST: &str =
    include_str!("../../worker/content/tests/botwall/article/en_short_blog_recaptcha.html");
/// Cloudflare's managed challenge (Turnstile), served with 403.
const CF_CHALLENGE: &str =
    include_str!("../../worker/content/tests/botwall/challenge/cf_managed_turnstile.html");

const SOFT_404: &str = r#"<!doctype html><html><head><title>Page not found</title></head>
<body><main><h1>404 - Page not found</h1><p>Sorry, the page you are looking for does not exist.</p></main></body></html>"#;

const LOGIN_WALL: &str = r#"<!doctype html><html><head><title>Sign in</title></head>
<body><main><h1>Sign in to continue</h1><form><input name="user"><input type="password" name="pw"><button>Log in</button></form></main></body></html>"#;

fn long_article() -> String {
    let mut s = String::from("<!doctype html><html lang=\"en\"><head><title>Long</title></head><body><main><article><h1>Guide</h1>");
    for i in 0..30 {
        s.push_str(&format!("<h2>Section {i}</h2>"));
        for j in 0..4 {
            s.push_str(&format!("<p>Paragraph {j} of section {i} explains a detail with many ordinary words so that the chunker has real sentences to split. It continues for a while, adding more sentences. And then some more words appear here.</p>"));
        }
    }
    s.push_str("</article></main></body></html>");
    s
}

async fn echo_headers(headers: HeaderMap) -> Html<String> {
    let lang = headers
        .get("accept-language")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none")
        .to_string();
    let custom = headers
        .get("x-custom")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none")
        .to_string();
    Html(format!(
        "<html><head><title>Echo</title></head><body><main><article><h1>Echo</h1><p>accept-language={lang} and x-custom={custom} were received by this page, which has enough words to be content.</p></article></main></body></html>"
    ))
}

const SITE_MD: &str = "# Install guide\n\nThis guide explains how to install the tool on a fresh machine, step by step, with every command you need and the reasons behind each one so you can adapt it.\n\n## Steps\n\n1. Download the package from the release page and check its signature.\n2. Unpack it into a folder on your path and run the self test to see it works.\n";

fn wants_markdown(h: &HeaderMap) -> bool {
    h.get("accept")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.starts_with("text/markdown"))
}

async fn negotiated(h: HeaderMap) -> axum::response::Response {
    if wants_markdown(&h) {
        (
            [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
            SITE_MD,
        )
            .into_response()
    } else {
        Html(ARTICLE).into_response()
    }
}

async fn negotiated_thin(h: HeaderMap) -> axum::response::Response {
    if wants_markdown(&h) {
        ([(header::CONTENT_TYPE, "text/markdown")], "# Hi\n\nshort").into_response()
    } else {
        Html(ARTICLE).into_response()
    }
}

async fn site() -> Site {
    let long = long_article();
    Site::serve(
        axum::Router::new()
            .route("/robots.txt", get(|| async { "User-agent: *\nDisallow: /private\n\nUser-agent: webdata\nDisallow: /nobots\n" }))
            .route("/artikel/herbst", get(|| async { Html(ARTICLE) }))
            .route("/spa", get(|| async { Html(SPA_SHELL) }))
            .route("/bot", get(|| async { Html(BOT_WALL) }))
            .route("/captcha-post", get(|| async { Html(CAPTCHA_POST) }))
            .route("/cf-403", get(|| async { (StatusCode::FORBIDDEN, Html(CF_CHALLENGE)) }))
            .route("/soft404", get(|| async { Html(SOFT_404) }))
            .route("/login", get(|| async { Html(LOGIN_WALL) }))
            .route("/long", get(move || { let l = long.clone(); async move { Html(l) } }))
            .route("/echo", get(echo_headers))
            .route("/docs/page", get(negotiated))
            .route("/docs/thin", get(negotiated_thin))
            .route("/nobots/page", get(|| async { Html(ARTICLE) }))
            .route("/private/page", get(|| async { Html(ARTICLE) }))
            .route("/hop1", get(|| async { Redirect::temporary("/hop2") }))
            .route("/hop2", get(|| async { Redirect::permanent("/artikel/herbst") }))
            .route("/to-private", get(|| async { Redirect::temporary("http://127.0.0.1:9/secret") }))
            .route("/to-metadata", get(|| async { Redirect::temporary("http://169.254.169.254/latest/meta-data/") }))
            .route("/loop", get(|| async { Redirect::temporary("/loop") }))
            .route("/data.json", get(|| async { ([(header::CONTENT_TYPE, "application/json")], r#"{"a":[1,2],"b":"x"}"#) }))
            .route("/notes.txt", get(|| async { ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], "Plain notes.\nSecond line.") }))
            .route("/report.pdf", get(|| async { ([(header::CONTENT_TYPE, "application/pdf")], webdata_content::pdf::simple_pdf(&["Annual report 2026", "Sales grew in every region."])) }))
            .route("/broken.pdf", get(|| async { ([(header::CONTENT_TYPE, "application/pdf")], b"%PDF-1.4 nonsense".to_vec()) }))
            .route("/image.png", get(|| async { ([(header::CONTENT_TYPE, "image/png")], vec![0x89u8, b'P', b'N', b'G', 0, 0, 0, 0]) }))
            .route("/latin1", get(|| async {
                ([(header::CONTENT_TYPE, "text/html")], b"<html><head><meta charset=\"iso-8859-1\"><title>Caf\xe9</title></head><body><main><p>Un caf\xe9 cr\xe8me avec beaucoup de mots pour faire un vrai contenu lisible et complet pour le lecteur.</p></main></body></html>".to_vec())
            }))
            .route("/slow", get(|| async { tokio::time::sleep(Duration::from_secs(5)).await; Html(ARTICLE) }))
            .route("/server-error", get(|| async { (StatusCode::INTERNAL_SERVER_ERROR, Html(ARTICLE)).into_response() })),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_format_comes_back_from_one_scrape() {
    let s = Server::start(Db::Sqlite).await;
    let site = site().await;
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/artikel/herbst"), "formats": ["markdown", "html", "rawHtml", "text", "links", "metadata", "chunks"], "chunkSize": 200}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["success"], true);
    assert_eq!(r.json["credits_used"], 1);
    assert!(r.json["latency_ms"].as_i64().is_some());
    r.assert_request_id();
    let d = &r.json["data"];
    assert_eq!(d["tier"], "fetch");
    assert_eq!(d["cached"], false);
    let md = d["markdown"].as_str().expect("markdown");
    // The title heading is metadata.title and the top of the chunks' headingPath.
    assert!(!md.contains("Gärten im Herbst"), "{md}");
    assert!(md.starts_with("Im Herbst braucht der Garten"), "{md}");
    assert!(md.contains("## Laub und Boden"));
    let first_path = &d["chunks"][0]["headingPath"];
    assert_eq!(first_path[0], "Gärten im Herbst", "{first_path}");
    assert!(
        md.contains(&format!("[regelmäßig entfernt]({})", site.url("/rasen"))),
        "absolute links: {md}"
    );
    assert!(md.contains("| Pflanze | Aufgabe |"), "GFM table: {md}");
    assert!(
        md.contains("ausgraben \\| einlagern"),
        "pipes escaped: {md}"
    );
    assert!(md.contains("```bash"), "code language: {md}");
    assert!(md.contains(&format!(
        "![Laub auf dem Beet]({})",
        site.url("/img/laub.jpg")
    )));
    for boiler in [
        "Wir verwenden Cookies",
        "Ähnliche Artikel",
        "Beispiel GmbH",
        "Kontakt",
    ] {
        assert!(!md.contains(boiler), "main content drops `{boiler}`: {md}");
    }
    let html = d["html"].as_str().expect("html");
    assert!(
        html.contains("<h2>Laub und Boden</h2>") && !html.contains("<h1>"),
        "{html}"
    );
    assert!(
        d["rawHtml"]
            .as_str()
            .expect("raw")
            .contains("cookie-banner"),
        "rawHtml is untouched"
    );
    let text = d["text"].as_str().expect("text");
    assert!(text.contains("Im Herbst braucht der Garten") && !text.contains("<p>"));
    let links: Vec<&str> = d["links"]
        .as_array()
        .expect("links")
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(
        links.contains(&site.url("/kontakt").as_str()),
        "links of the whole page: {links:?}"
    );
    assert!(
        links.contains(&site.url("/impressum").as_str()),
        "fragment removed: {links:?}"
    );
    assert!(links.iter().all(|l| l.starts_with("http")));
    let mut dedup = links.clone();
    dedup.sort();
    dedup.dedup();
    assert_eq!(dedup.len(), links.len(), "no duplicates");
    let m = &d["metadata"];
    assert_eq!(m["title"], "Gärten im Herbst | Beispiel");
    assert_eq!(m["description"], "Wie man Gärten im Herbst pflegt.");
    assert_eq!(m["language"], "de");
    assert_eq!(m["canonicalUrl"], site.url("/artikel/herbst"));
    assert_eq!(m["ogImage"], site.url("/img/og.png"));
    assert_eq!(m["author"], "Anna Beispiel");
    assert_eq!(m["statusCode"], 200);
    assert_eq!(m["contentType"], "text/html");
    assert!(m["publishedAt"]
        .as_str()
        .is_some_and(|p| p.starts_with("2026-10-01")));
    assert_eq!(m["jsonLd"][0]["@type"], "Article");
    let chunks = d["chunks"].as_array().expect("chunks");
    assert!(!chunks.is_empty());
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(c["index"], i as i64);
        assert!(c["tokens"].as_i64().expect("tokens") <= 200);
    }
    let q = &d["quality"];
    assert!(q["score"].as_f64().expect("score") > 0.5, "{q}");
    assert_eq!(q["issues"].as_array().map(|a| a.len()), Some(0), "{q}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn defaults_metadata_and_options() {
    let s = Server::start(Db::Sqlite).await;
    let site = site().await;
    // Default formats: markdown + metadata (basic metadata without jsonLd only when metadata not asked).
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/artikel/herbst")}))
        .await;
    let d = &r.json["data"];
    assert!(d["markdown"].is_string());
    assert!(d["html"].is_null() && d["links"].is_null() && d["chunks"].is_null());
    assert!(d["metadata"]["jsonLd"].is_array());
    // Basic metadata is returned even when only markdown is asked for, without JSON-LD.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/artikel/herbst"), "formats": ["markdown"], "maxAge": 0}),
        )
        .await;
    assert_eq!(
        r.json["data"]["metadata"]["title"],
        "Gärten im Herbst | Beispiel"
    );
    assert!(r.json["data"]["metadata"]["jsonLd"].is_null());
    // onlyMainContent: false keeps navigation and footer.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/artikel/herbst"), "onlyMainContent": false, "maxAge": 0}),
        )
        .await;
    let md = r.json["data"]["markdown"].as_str().expect("md");
    assert!(md.contains("Beispiel GmbH"), "{md}");
    // includeTags / excludeTags.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/artikel/herbst"), "includeTags": ["table"], "maxAge": 0}),
        )
        .await;
    let md = r.json["data"]["markdown"].as_str().expect("md");
    assert!(
        md.contains("Rosen") && !md.contains("Laub ist ein wertvoller"),
        "{md}"
    );
    let r = s.post("/v1/scrape", json!({"url": site.url("/artikel/herbst"), "excludeTags": ["table", "pre"], "maxAge": 0})).await;
    let md = r.json["data"]["markdown"].as_str().expect("md");
    assert!(
        !md.contains("Rosen") && !md.contains("Kompost") && md.contains("Laub ist ein wertvoller"),
        "{md}"
    );
    let bad = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/artikel/herbst"), "includeTags": ["div[["]}),
        )
        .await;
    bad.assert_error(400, "invalid_request");
    assert!(bad.message().contains("div[["), "{}", bad.message());
    // Caller headers and location.languages reach the site.
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/echo"), "headers": {"X-Custom": "hello"}, "location": {"country": "DE", "languages": ["de-DE", "en"]}}))
        .await;
    let md = r.json["data"]["markdown"].as_str().expect("md");
    assert!(md.contains("accept-language=de-DE,en;q=0.9"), "{md}");
    assert!(md.contains("x-custom=hello"), "{md}");
    // Charset from <meta charset>.
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/latin1")}))
        .await;
    assert_eq!(r.json["data"]["metadata"]["title"], "Café");
    assert!(r.json["data"]["markdown"]
        .as_str()
        .expect("md")
        .contains("café crème"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chunks_respect_size_and_headings() {
    let s = Server::start(Db::Sqlite).await;
    let site = site().await;
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/long"), "formats": ["chunks"], "chunkSize": 200}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let chunks = r.json["data"]["chunks"].as_array().expect("chunks");
    assert!(chunks.len() > 10, "{}", chunks.len());
    for c in chunks {
        let t = c["tokens"].as_i64().expect("tokens");
        assert!(t > 0 && t <= 200, "{t}");
        let text = c["text"].as_str().expect("text");
        assert!(
            !text.starts_with(char::is_lowercase) || text.starts_with("and"),
            "no mid-word split: {text:?}"
        );
        let path: Vec<&str> = c["headingPath"]
            .as_array()
            .map(|a| a.iter().filter_map(|h| h.as_str()).collect())
            .unwrap_or_default();
        if text.contains("Paragraph 0 of section 7") {
            assert_eq!(path.last().copied(), Some("Section 7"), "{path:?}");
        }
    }
    let bad = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/long"), "formats": ["chunks"], "chunkSize": 100}),
        )
        .await;
    bad.assert_error(400, "invalid_request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn quality_issues_and_what_they_cost() {
    let s = Server::start(Db::Sqlite).await;
    let site = site().await;
    let issues = |r: &support::Resp| -> Vec<String> {
        r.json["data"]["quality"]["issues"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| i.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let spa = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/spa"), "tier": "fetch"}),
        )
        .await;
    assert_eq!(spa.status, 200, "{}", spa.text);
    assert!(
        issues(&spa).contains(&"js_required".to_string()),
        "{}",
        spa.text
    );
    let soft = s
        .post("/v1/scrape", json!({"url": site.url("/soft404")}))
        .await;
    assert!(
        issues(&soft).contains(&"soft_404".to_string()),
        "{}",
        soft.text
    );
    let login = s
        .post("/v1/scrape", json!({"url": site.url("/login")}))
        .await;
    assert!(
        issues(&login).contains(&"login_wall".to_string()),
        "{}",
        login.text
    );
    assert_eq!(login.json["credits_used"], 0, "walls are not charged");
    assert!(login.json["data"]["quality"]["reason"].as_str().is_some());
    let bot = s.post("/v1/scrape", json!({"url": site.url("/bot")})).await;
    bot.assert_error(502, "blocked_by_site");
    s.post("/v1/scrape", json!({"url": site.url("/cf-403")}))
        .await
        .assert_error(502, "blocked_by_site");
    // A captcha widget in a short post's comment form does not refuse the page.
    let post = s
        .post("/v1/scrape", json!({"url": site.url("/captcha-post")}))
        .await;
    assert_eq!(post.status, 200, "{}", post.text);
    assert!(
        post.json["data"]["markdown"]
            .as_str()
            .expect("md")
            .contains("dahlia tubers"),
        "{}",
        post.text
    );
    assert!(
        !issues(&post).contains(&"bot_wall".to_string()),
        "{}",
        post.text
    );
    let err = s
        .post("/v1/scrape", json!({"url": site.url("/server-error")}))
        .await;
    assert_eq!(err.status, 200);
    assert_eq!(
        err.json["credits_used"], 0,
        "target error pages cost nothing"
    );
    assert_eq!(err.json["data"]["metadata"]["statusCode"], 500);
    assert!(err.json["data"]["quality"]["reason"]
        .as_str()
        .expect("reason")
        .contains("500"));
    let json_doc = s
        .post("/v1/scrape", json!({"url": site.url("/data.json")}))
        .await;
    assert!(issues(&json_doc).contains(&"non_html".to_string()));
    assert!(json_doc.json["data"]["markdown"]
        .as_str()
        .expect("md")
        .contains("\"b\""));
    let txt = s
        .post("/v1/scrape", json!({"url": site.url("/notes.txt")}))
        .await;
    assert!(issues(&txt).contains(&"non_html".to_string()));
    assert!(txt.json["data"]["markdown"]
        .as_str()
        .expect("md")
        .contains("Second line."));
    s.post("/v1/scrape", json!({"url": site.url("/image.png")}))
        .await
        .assert_error(415, "unsupported_content");
    let pdf = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/report.pdf"), "formats": ["markdown", "text", "metadata"]}),
        )
        .await;
    assert_eq!(pdf.status, 200, "{}", pdf.text);
    assert!(
        pdf.json["data"]["markdown"]
            .as_str()
            .expect("md")
            .contains("Sales grew in every region."),
        "{}",
        pdf.text
    );
    assert_eq!(
        pdf.json["data"]["metadata"]["contentType"],
        "application/pdf"
    );
    assert_eq!(pdf.json["data"]["metadata"]["title"], "Annual report 2026");
    assert!(issues(&pdf).contains(&"non_html".to_string()));
    s.post("/v1/scrape", json!({"url": site.url("/broken.pdf")}))
        .await
        .assert_error(415, "unsupported_content");
    // Charged: spa (thin but returned), soft404 page, captcha post, json, text, pdf = 6;
    // not: login, bot, cf-403, 500, png, broken pdf.
    assert_eq!(s.credits().await, 1000 - 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn robots_redirects_and_refusals() {
    let s = Server::start(Db::Sqlite).await;
    let site = site().await;
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/nobots/page")}))
        .await;
    r.assert_error(403, "forbidden");
    assert!(r.message().contains("robots.txt"));
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/nobots/page"), "ignoreRobots": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    // Our group wins over `*`: /private is allowed for webdata.
    assert_eq!(
        s.post("/v1/scrape", json!({"url": site.url("/private/page")}))
            .await
            .status,
        200
    );
    // Redirect chain → finalUrl.
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/hop1")}))
        .await;
    assert_eq!(r.json["data"]["finalUrl"], site.url("/artikel/herbst"));
    assert_eq!(r.json["data"]["url"], site.url("/hop1"));
    // Redirects into private space and metadata addresses are refused.
    s.post("/v1/scrape", json!({"url": site.url("/to-private")}))
        .await
        .assert_error(400, "blocked_url");
    s.post("/v1/scrape", json!({"url": site.url("/to-metadata")}))
        .await
        .assert_error(400, "blocked_url");
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/loop")}))
        .await;
    r.assert_error(502, "fetch_failed");
    assert!(r.message().contains("redirect"));
    for url in [
        "http://localhost/",
        "http://[::1]/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://user:pw@example.com/",
        "http://169.254.169.254/",
    ] {
        let r = s.post("/v1/scrape", json!({"url": url})).await;
        assert!(r.status == 400, "{url}: {}", r.text);
        let code = r.json["error"]["code"].as_str().unwrap_or_default();
        assert!(code == "blocked_url", "{url}: {code}");
    }
    // Timeout covers the whole scrape.
    let started = std::time::Instant::now();
    s.post(
        "/v1/scrape",
        json!({"url": site.url("/slow"), "timeout": 1000}),
    )
    .await
    .assert_error(504, "timeout");
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(s.credits().await, 1000 - 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cache_hits_say_cached_and_max_age_zero_fetches_again() {
    let s = Server::start(Db::Sqlite).await;
    let site = site().await;
    let url = site.url("/artikel/herbst");
    let first = s.post("/v1/scrape", json!({"url": url})).await;
    assert_eq!(first.json["data"]["cached"], false);
    let hits = site.hits();
    let second = s
        .post("/v1/scrape", json!({"url": url, "timeout": 20000}))
        .await;
    assert_eq!(second.json["data"]["cached"], true, "{}", second.text);
    assert_eq!(
        second.json["data"]["markdown"],
        first.json["data"]["markdown"]
    );
    assert_eq!(site.hits(), hits, "served from the cache");
    assert_eq!(second.json["credits_used"], 1);
    let other_formats = s
        .post("/v1/scrape", json!({"url": url, "formats": ["links"]}))
        .await;
    assert_eq!(
        other_formats.json["data"]["cached"], false,
        "formats are part of the key"
    );
    let fresh = s.post("/v1/scrape", json!({"url": url, "maxAge": 0})).await;
    assert_eq!(fresh.json["data"]["cached"], false);
    assert!(site.hits() > hits);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn site_markdown_is_used_when_served_and_good() {
    let s = Server::start(Db::Sqlite).await;
    let site = site().await;
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/docs/page"), "siteMarkdown": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["data"]["markdown"], SITE_MD);
    assert_eq!(r.json["data"]["metadata"]["title"], "Install guide");
    assert!(
        r.json["data"]["metadata"]["language"].is_null(),
        "site markdown has less metadata"
    );
    assert_eq!(r.json["credits_used"], 1);
    // Thin site markdown fails the check: HTML is extracted as usual.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/docs/thin"), "siteMarkdown": true}),
        )
        .await;
    assert!(
        r.json["data"]["markdown"]
            .as_str()
            .expect("md")
            .contains("Im Herbst braucht der Garten"),
        "{}",
        r.text
    );
    // Ignored with the html format.
    let r = s.post("/v1/scrape", json!({"url": site.url("/docs/page"), "siteMarkdown": true, "formats": ["markdown", "html"]})).await;
    assert!(
        r.json["data"]["markdown"]
            .as_str()
            .expect("md")
            .contains("Im Herbst braucht der Garten"),
        "{}",
        r.text
    );
    // Off by default.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/docs/page"), "maxAge": 0}),
        )
        .await;
    assert!(r.json["data"]["markdown"]
        .as_str()
        .expect("md")
        .contains("Im Herbst braucht der Garten"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_shot_cli_scrapes_without_a_server() {
    let site = site().await;
    let url = site.url("/artikel/herbst");
    let run = |args: Vec<String>| {
        std::process::Command::new(support::binary("webdata"))
            .args(args)
            .env("WEBDATA_ALLOW_PRIVATE_NETWORKS", "127.0.0.2")
            .output()
            .expect("run webdata scrape")
    };
    let out = tokio::task::spawn_blocking({
        let url = url.clone();
        move || run(vec!["scrape".into(), url])
    })
    .await
    .expect("join");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("Im Herbst braucht der Garten") && !md.contains("Wir verwenden Cookies"),
        "{md}"
    );
    let out = tokio::task::spawn_blocking({
        let url = url.clone();
        move || {
            run(vec![
                "scrape".into(),
                url,
                "--json".into(),
                "-f".into(),
                "links,metadata".into(),
            ])
        }
    })
    .await
    .expect("join");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["metadata"]["language"], "de");
    assert!(doc["links"].as_array().is_some_and(|l| !l.is_empty()));
    // Refusals exit non-zero with the error code.
    let out =
        tokio::task::spawn_blocking(move || run(vec!["scrape".into(), "http://10.0.0.1/".into()]))
            .await
            .expect("join");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("blocked_url"));
}
