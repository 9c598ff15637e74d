//! Issue 4 through the API, with real Chromium via chromedriver (installed
//! by `make test`): tier render, auto escalation, actions, and what a
//! deployment without a browser answers.

mod support;

use axum::response::Html;
use axum::routing::get;
use serde_json::json;
use support::{Db, Server, ServerOptions, Site};

const JS_ONLY: &str = r#"<!doctype html><html><head><title>App</title>
<script src="/vendor.js"></script><script src="/app.js"></script><script src="/runtime.js"></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>
<script>document.getElementById('root').innerHTML = '<main><h1>Rendered heading</h1><p>This paragraph was written by a script, so only a browser sees it, and it has enough words to be real content.</p></main>';</script>
</body></html>"#;

const CLICK: &str = r#"<!doctype html><html><head><title>Click</title></head><body><main><h1>Click page</h1>
<p>The button below reveals a hidden paragraph that only exists after the click happens in a browser.</p>
<button id="more" onclick="document.getElementById('out').textContent='Revealed after the click, with enough words to see.'">More</button>
<p id="out"></p></main></body></html>"#;

const STATIC: &str = "<!doctype html><html><head><title>Static</title></head><body><main><h1>Static</h1><p>A plain page whose text is all in the HTML, so no browser is ever needed to read it properly.</p></main></body></html>";

const TALL: &str = "<!doctype html><html><head><title>Tall</title></head><body style=\"margin:0\"><main><h1>Tall page</h1><p>A page that is much taller than the viewport, so a full-page screenshot is taller too.</p><div style=\"height:3000px;background:linear-gradient(#fff,#39f)\"></div></main></body></html>";

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.len() > 24 && &bytes[..8] == b"\x89PNG\r\n\x1a\n",
        "not a PNG"
    );
    let w = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
    let h = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
    (w, h)
}

async fn site() -> Site {
    Site::serve(
        axum::Router::new()
            .route("/js", get(|| async { Html(JS_ONLY) }))
            .route("/click", get(|| async { Html(CLICK) }))
            .route("/static", get(|| async { Html(STATIC) }))
            .route("/tall", get(|| async { Html(TALL) }))
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
                    Html(STATIC)
                }),
            )
            .route("/vendor.js", get(|| async { "" }))
            .route("/app.js", get(|| async { "" }))
            .route("/runtime.js", get(|| async { "" })),
    )
    .await
}

fn sessions(metrics: &str) -> i64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("webdata_browser_sessions_started_total "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(-1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn auto_escalates_js_pages_renders_actions_and_leaves_static_pages_alone() {
    assert!(
        std::path::Path::new("/usr/bin/chromedriver").exists(),
        "chromedriver is missing: run `make test`, which installs chromium and chromium-driver"
    );
    let s = Server::start(Db::Sqlite).await;
    let site = site().await;
    let metrics = || async {
        support::Resp::from(s.http.get(s.url("/metrics")).send().await.expect("metrics"))
            .await
            .text
    };
    // A static page under auto never starts a browser.
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/static")}))
        .await;
    assert_eq!(r.json["data"]["tier"], "fetch", "{}", r.text);
    assert_eq!(
        sessions(&metrics().await),
        0,
        "no browser for a static page"
    );
    // The fetch tier sees an empty shell.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/js"), "tier": "fetch"}),
        )
        .await;
    assert!(
        !r.json["data"]["markdown"]
            .as_str()
            .unwrap_or("")
            .contains("Rendered heading"),
        "{}",
        r.text
    );
    assert!(r.json["data"]["quality"]["issues"]
        .as_array()
        .expect("issues")
        .iter()
        .any(|i| i == "js_required"));
    // Auto escalates and says so.
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/js"), "maxAge": 0}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["data"]["tier"], "render", "{}", r.text);
    assert!(r.json["data"]["markdown"]
        .as_str()
        .expect("md")
        .contains("Rendered heading"));
    assert_eq!(r.json["data"]["quality"]["escalations"], json!(["render"]));
    assert!(r.json["data"]["quality"]["reason"]
        .as_str()
        .is_some_and(|m| m.contains("JavaScript")));
    assert_eq!(r.json["credits_used"], 1, "1 credit, browser included");
    assert!(sessions(&metrics().await) >= 1);
    // Tier render and a click action.
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/click"), "tier": "render", "actions": [{"type": "click", "selector": "#more"}]}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.json["data"]["markdown"]
            .as_str()
            .expect("md")
            .contains("Revealed after the click"),
        "{}",
        r.text
    );
    // A failing action names itself; nothing is charged.
    let before = s.credits().await;
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/click"), "timeout": 5000, "actions": [{"type": "wait", "selector": "#never", "ms": 500}]}))
        .await;
    assert!(r.status >= 400, "{}", r.text);
    assert!(r.message().contains("actions[0]"), "{}", r.message());
    assert_eq!(s.credits().await, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_a_browser_render_is_not_configured_and_auto_keeps_the_fetch() {
    let s = Server::start_with(ServerOptions::new(Db::Sqlite).env("WEBDATA_BROWSER", "off")).await;
    let site = site().await;
    s.post(
        "/v1/scrape",
        json!({"url": site.url("/static"), "tier": "render"}),
    )
    .await
    .assert_error(501, "not_configured");
    s.post(
        "/v1/scrape",
        json!({"url": site.url("/static"), "actions": [{"type": "press", "key": "Enter"}]}),
    )
    .await
    .assert_error(501, "not_configured");
    let r = s.post("/v1/scrape", json!({"url": site.url("/js")})).await;
    assert_eq!(r.json["data"]["tier"], "fetch");
    assert!(
        r.json["data"]["quality"]["reason"]
            .as_str()
            .is_some_and(|m| m.contains("no browser")),
        "{}",
        r.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn screenshots_are_signed_links_that_expire() {
    let s =
        Server::start_with(ServerOptions::new(Db::Sqlite).env("WEBDATA_SCREENSHOT_TTL_MS", "4000"))
            .await;
    let site = site().await;
    let view = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/tall"), "formats": ["markdown", "screenshot"]}),
        )
        .await;
    assert_eq!(view.status, 200, "{}", view.text);
    assert_eq!(view.json["data"]["tier"], "render");
    assert_eq!(view.json["credits_used"], 1);
    let link = view.json["data"]["screenshot"]
        .as_str()
        .expect("screenshot link")
        .to_string();
    assert!(link.contains("sig=") && link.contains("expires="), "{link}");
    let png = reqwest::get(&link).await.expect("get");
    assert_eq!(png.status(), 200, "a signed link needs no API key: {link}");
    assert_eq!(
        png.headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/png")
    );
    let (w, h) = png_size(&png.bytes().await.expect("bytes"));
    assert!(
        (1200..=1300).contains(&w) && (700..=820).contains(&h),
        "viewport {w}x{h}"
    );
    let full = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/tall"), "formats": ["screenshotFull"]}),
        )
        .await;
    let flink = full.json["data"]["screenshot"]
        .as_str()
        .expect("link")
        .to_string();
    let (fw, fh) = png_size(
        &reqwest::get(&flink)
            .await
            .expect("get")
            .bytes()
            .await
            .expect("bytes"),
    );
    assert!(fw >= 1200 && fh >= 3000, "full page {fw}x{fh}");
    // A tampered link is refused in the error envelope.
    let bad = support::Resp::from(
        reqwest::get(link.replace("sig=", "sig=0"))
            .await
            .expect("get"),
    )
    .await;
    bad.assert_error(404, "not_found");
    let forged = support::Resp::from(
        reqwest::get(link.replace("expires=", "expires=9"))
            .await
            .expect("get"),
    )
    .await;
    forged.assert_error(404, "not_found");
    // And the link stops working when it expires.
    tokio::time::sleep(std::time::Duration::from_millis(4200)).await;
    support::Resp::from(reqwest::get(&link).await.expect("get"))
        .await
        .assert_error(404, "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_busy_browser_pool_answers_capacity_exceeded_and_charges_nothing() {
    let s = Server::start_with(
        ServerOptions::new(Db::Sqlite)
            .env("WEBDATA_BROWSER_SESSIONS", "1")
            .env("WEBDATA_BROWSER_ACQUIRE_TIMEOUT_MS", "300"),
    )
    .await;
    let site = site().await;
    let body = json!({"url": site.url("/slow"), "tier": "render", "timeout": 20000});
    let first = s.post("/v1/scrape", body.clone());
    let second = async {
        tokio::time::sleep(std::time::Duration::from_millis(800)).await;
        s.post("/v1/scrape", body.clone()).await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(first.status, 200, "{}", first.text);
    second.assert_error(503, "capacity_exceeded");
    assert!(
        second.json["error"]["retry_after_ms"]
            .as_i64()
            .is_some_and(|ms| ms > 0),
        "{}",
        second.text
    );
    assert!(second.header("retry-after").is_some());
    assert_eq!(s.credits().await, 999, "only the rendered page is charged");
}

/// A page that says "Loading" and whose script inserts the article 200 ms
/// after load, like a single-page app fetching its content.
const LATE: &str = r#"<!doctype html><html><head><title>Late</title></head><body><div id="app">Loading…</div>
<script>setTimeout(function () {
  document.getElementById('app').innerHTML = '<main><h1>Late article</h1><p>This article arrived two hundred milliseconds after the page loaded, the way a single-page app fills itself in, and it has plenty of words.</p><p>A second paragraph, so the page is clearly the real content and not a shell.</p></main>';
}, 200);</script></body></html>"#;

/// A page that never stops changing (a ticking clock).
const RESTLESS: &str = r#"<!doctype html><html><head><title>Restless</title></head><body><main><h1>Restless page</h1>
<p>This page has a clock that changes every 100 milliseconds, so it never settles; the paragraph itself has enough words to count.</p>
<p id="clock">0</p></main><script>var n = 0; setInterval(function () { document.getElementById('clock').textContent = String(++n); }, 100);
document.body.setAttribute('data-needs', 'js');</script></body></html>"#;

/// Issue 27: with `tier: auto` the DOM used to be read before the page
/// settled, so a page filled in after load came back empty. The render now
/// waits for the DOM and network to be quiet (bounded by `timeout`), and
/// says when the cap cut the wait short.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_page_filled_in_after_load_comes_back_complete_without_wait_for() {
    let s = Server::start(Db::Sqlite).await;
    let site = Site::serve(
        axum::Router::new()
            .route("/late", get(|| async { Html(LATE) }))
            .route("/restless", get(|| async { Html(RESTLESS) })),
    )
    .await;
    let r = s
        .post("/v1/scrape", json!({"url": site.url("/late")}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.json["data"];
    assert_eq!(d["tier"], "render", "escalated: {}", r.text);
    let md = d["markdown"].as_str().unwrap_or("");
    assert!(
        md.contains("Late article") && md.contains("two hundred milliseconds"),
        "{md}"
    );
    assert!(!md.contains("Loading"), "{md}");
    assert!(
        !d["quality"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("still changing"),
        "{}",
        d["quality"]
    );
    // A page that never settles is read when the cap allows, and says so.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": site.url("/restless"), "tier": "render", "timeout": 4000}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.json["data"];
    assert!(
        d["markdown"]
            .as_str()
            .unwrap_or("")
            .contains("Restless page"),
        "{}",
        r.text
    );
    assert!(
        d["quality"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("still changing"),
        "{}",
        d["quality"]
    );
}

/// A host name pinned with `WEBDATA_RESOLVE` renders in the browser as it
/// fetches: the browser's requests resolve through the same pinned names
/// (before, the render proxy asked the system's DNS and answered 502
/// "could not resolve"; the long contract-fuzzing run found it).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pinned_host_name_renders_in_the_browser() {
    let site = site().await;
    let port = site.base.rsplit(':').next().expect("port").to_string();
    let s = Server::start_with(
        ServerOptions::new(Db::Sqlite).env("WEBDATA_RESOLVE", "pinned.test=127.0.0.2"),
    )
    .await;
    let url = format!("http://pinned.test:{port}/tall");
    let fetched = s
        .post("/v1/scrape", json!({"url": url, "tier": "fetch"}))
        .await;
    assert_eq!(fetched.status, 200, "{}", fetched.text);
    let rendered = s
        .post(
            "/v1/scrape",
            json!({"url": url, "formats": ["markdown", "screenshot"]}),
        )
        .await;
    assert_eq!(rendered.status, 200, "{}", rendered.text);
    assert_eq!(rendered.json["data"]["tier"], "render");
    assert!(
        rendered.json["data"]["markdown"]
            .as_str()
            .is_some_and(|m| m.contains("Tall page")),
        "{}",
        rendered.text
    );
}
