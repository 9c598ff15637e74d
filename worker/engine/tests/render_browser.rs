//! The render tier against real Chromium through chromedriver. Test pages are
//! served on 127.0.0.2, the only address the guard allows; 127.0.0.1 hosts
//! "secret" servers that must never see a single connection from the browser.
//!
//! These tests need Chromium and chromedriver; they fail (not skip) without
//! them: `make test` installs both.
//!
//! Long by design: a test suite (one browser shared by the whole file).
//! Each test stands alone; splitting the file would only add test
//! binaries to link.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use tokio::net::{TcpListener, UdpSocket};
use tokio::runtime::Runtime;
use tokio::sync::OnceCell;
use url::Url;
use webdata_core::types::{Action, ActionType};
use webdata_engine::guard::NetworkGuard;
use webdata_engine::render::{
    BrowserConfig, BrowserPool, RenderError, RenderRequest, Rendered, ScreenshotKind,
};

/// One runtime for every test, so the shared pool's tasks outlive each test.
fn rt() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// Connections and datagrams that reached the forbidden address.
struct Secret {
    tcp: SocketAddr,
    udp: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl Secret {
    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn secret_servers() -> Secret {
    let hits = Arc::new(AtomicUsize::new(0));
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tcp_addr = tcp.local_addr().unwrap();
    let counter = hits.clone();
    tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        while let Ok((mut stream, _)) = tcp.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecret")
                .await;
        }
    });
    let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let udp_addr = udp.local_addr().unwrap();
    let counter = hits.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 2048];
        while udp.recv_from(&mut buf).await.is_ok() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    Secret {
        tcp: tcp_addr,
        udp: udp_addr,
        hits,
    }
}

#[derive(Clone)]
struct Site {
    secret_tcp: SocketAddr,
    secret_udp: SocketAddr,
    /// Request headers seen per `/headers/{token}`.
    seen: Arc<Mutex<HashMap<String, HeaderMap>>>,
}

/// The test site on 127.0.0.2.
struct TestSite {
    addr: SocketAddr,
    seen: Arc<Mutex<HashMap<String, HeaderMap>>>,
}

impl TestSite {
    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).unwrap()
    }
}

async fn serve_site(secret: &Secret) -> TestSite {
    let seen = Arc::new(Mutex::new(HashMap::new()));
    let state = Site {
        secret_tcp: secret.tcp,
        secret_udp: secret.udp,
        seen: seen.clone(),
    };
    let app = Router::new()
        .route("/plain", get(|| async { Html(PLAIN) }))
        .route("/js", get(|| async { Html(JS_ONLY) }))
        .route("/actions", get(|| async { Html(ACTIONS) }))
        .route("/tall", get(|| async { Html(TALL) }))
        .route(
            "/hang",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Html(PLAIN)
            }),
        )
        .route("/guard", get(guard_page))
        .route("/to-secret", get(to_secret))
        .route("/to-secret-tls", get(to_secret_tls))
        .route("/headers/{token}", get(record_headers))
        .route("/set-state", get(set_state))
        .route("/show-state", get(show_state))
        .with_state(state);
    let listener = TcpListener::bind("127.0.0.2:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    TestSite { addr, seen }
}

const PLAIN: &str =
    "<!doctype html><html><head><title>Plain</title></head><body><p>Plain page</p></body></html>";

const JS_ONLY: &str = r#"<!doctype html><html><head><title>JS</title></head><body>
<div id="app"></div>
<script>document.getElementById('app').innerHTML = '<h1>Written by script</h1><p>' + (6 * 7) + '</p>';</script>
</body></html>"#;

const ACTIONS: &str = r#"<!doctype html><html><head><title>Actions</title></head>
<body style="margin:0">
<button id="reveal" onclick="document.getElementById('hidden').textContent = 'Revealed by click'">Reveal</button>
<p id="hidden"></p>
<input id="name" oninput="document.getElementById('echo').textContent = 'Typed: ' + this.value">
<p id="echo"></p>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('submitted').textContent = 'Submitted: ' + document.getElementById('q').value;">
  <input id="q" name="q">
</form>
<p id="submitted"></p>
<div style="height:3000px">spacer</div>
<div id="bottom"></div>
<script>
  window.addEventListener('scroll', () => {
    if (window.scrollY > 100 && !document.getElementById('lazy')) {
      const p = document.createElement('p'); p.id = 'lazy'; p.textContent = 'Lazy content after scroll';
      document.getElementById('bottom').appendChild(p);
    }
  });
  setTimeout(() => {
    const p = document.createElement('p'); p.id = 'late'; p.textContent = 'Late element after 300 ms';
    document.body.appendChild(p);
  }, 300);
</script>
</body></html>"#;

const TALL: &str = r#"<!doctype html><html><head><title>Tall</title></head>
<body style="margin:0"><div style="height:3000px;background:linear-gradient(#fff,#48c)">tall</div></body></html>"#;

async fn guard_page(State(site): State<Site>) -> Html<String> {
    let tcp = site.secret_tcp;
    let port = tcp.port();
    let udp = site.secret_udp;
    Html(format!(
        r#"<!doctype html><html><head><title>Guard</title>
<link rel="stylesheet" href="http://{tcp}/secret.css">
<script src="http://{tcp}/secret.js"></script>
</head><body>
<h1>Guard test page</h1>
<img src="http://{tcp}/secret.png">
<img src="/to-secret">
<img src="http://localhost:{port}/secret-localhost.png">
<iframe src="http://{tcp}/secret-frame"></iframe>
<iframe src="https://{tcp}/secret-frame-tls"></iframe>
<script>
  const tries = [];
  tries.push(fetch("http://{tcp}/secret-fetch").catch(() => {{}}));
  tries.push(fetch("https://{tcp}/secret-fetch-tls").catch(() => {{}}));
  tries.push(fetch("http://[::ffff:127.0.0.1]:{port}/secret-mapped").catch(() => {{}}));
  try {{ const x = new XMLHttpRequest(); x.open("GET", "http://{tcp}/secret-xhr"); x.send(); }} catch (e) {{}}
  try {{ new WebSocket("ws://{tcp}/secret-ws"); }} catch (e) {{}}
  try {{ navigator.sendBeacon("http://{tcp}/secret-beacon", "x"); }} catch (e) {{}}
  try {{ new EventSource("http://{tcp}/secret-sse"); }} catch (e) {{}}
  try {{
    const pc = new RTCPeerConnection({{ iceServers: [{{ urls: "stun:{udp}" }}, {{ urls: "turn:{udp}", username: "u", credential: "p" }}] }});
    pc.createDataChannel("x");
    pc.createOffer().then(o => pc.setLocalDescription(o)).catch(() => {{}});
  }} catch (e) {{}}
  try {{ if (typeof WebTransport !== "undefined") new WebTransport("https://{tcp}/secret-wt").ready.catch(() => {{}}); }} catch (e) {{}}
  Promise.allSettled(tries).then(() => document.body.insertAdjacentHTML("beforeend", "<p id=done>attempts finished</p>"));
</script>
</body></html>"#
    ))
}

async fn to_secret(State(site): State<Site>) -> Redirect {
    Redirect::temporary(&format!("http://{}/secret-redirect", site.secret_tcp))
}

async fn to_secret_tls(State(site): State<Site>) -> Redirect {
    Redirect::temporary(&format!("https://{}/secret-redirect", site.secret_tcp))
}

async fn record_headers(
    State(site): State<Site>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Html<&'static str> {
    site.seen.lock().unwrap().insert(token, headers);
    Html(
        r#"<!doctype html><html><body><p id="lang"></p>
<script>document.getElementById('lang').textContent = 'languages=' + navigator.languages.join('|');</script>
</body></html>"#,
    )
}

async fn set_state() -> Response {
    (
        [(
            header::SET_COOKIE,
            "server_cookie=leak; Path=/; Max-Age=3600",
        )],
        Html(
            r#"<!doctype html><html><body><p>state set</p><script>
document.cookie = "script_cookie=leak; path=/; max-age=3600";
localStorage.setItem("ls", "leak");
sessionStorage.setItem("ss", "leak");
</script></body></html>"#,
        ),
    )
        .into_response()
}

async fn show_state(headers: HeaderMap) -> Html<String> {
    let cookie = headers
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    Html(format!(
        r#"<!doctype html><html><body><p id="server">server-cookie=[{cookie}]</p><p id="client"></p><script>
document.getElementById('client').textContent =
  'cookie=[' + document.cookie + '] ls=[' + (localStorage.getItem('ls') || '') + '] ss=[' + (sessionStorage.getItem('ss') || '') + ']';
</script></body></html>"#
    ))
}

/// Everything most tests share: one pool of two sessions and the servers.
struct Env {
    pool: BrowserPool,
    site: TestSite,
    secret: Secret,
}

fn guard() -> NetworkGuard {
    NetworkGuard::from_setting(Some("127.0.0.2")).unwrap()
}

async fn start_pool(cfg: BrowserConfig) -> BrowserPool {
    match BrowserPool::start(cfg).await {
        Ok(pool) => pool,
        Err(e) => panic!(
            "the render tests need Chromium and chromedriver ({e}); run `make test`, \
             which installs chromium and chromium-driver"
        ),
    }
}

async fn env() -> &'static Env {
    static ENV: OnceCell<Env> = OnceCell::const_new();
    ENV.get_or_init(|| async {
        let secret = secret_servers().await;
        let site = serve_site(&secret).await;
        let mut cfg = BrowserConfig::new(guard());
        cfg.max_sessions = 2;
        cfg.acquire_timeout = Duration::from_secs(30);
        let pool = start_pool(cfg).await;
        Env { pool, site, secret }
    })
    .await
}

fn request(url: Url) -> RenderRequest {
    RenderRequest::new(url, Duration::from_secs(20))
}

fn action(kind: ActionType) -> Action {
    Action {
        kind,
        selector: None,
        text: None,
        ms: None,
        key: None,
    }
}

fn with_selector(kind: ActionType, selector: &str) -> Action {
    Action {
        selector: Some(selector.to_owned()),
        ..action(kind)
    }
}

fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let h = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    (w, h)
}

async fn ok(pool: &BrowserPool, req: &RenderRequest) -> Rendered {
    match pool.render(req).await {
        Ok(r) => r,
        Err(e) => panic!("render of {} failed: {e:?}", req.url),
    }
}

#[test]
fn starting_a_pool_launches_no_browser() {
    rt().block_on(async {
        let pool = start_pool(BrowserConfig::new(guard())).await;
        assert!(pool.available());
        assert_eq!(pool.sessions_started(), 0);
        assert_eq!(pool.process_ids().driver, None);
        pool.shutdown().await;
        assert!(!pool.available());
    });
}

#[test]
fn a_script_written_page_renders_with_its_content() {
    rt().block_on(async {
        let env = env().await;
        let rendered = ok(&env.pool, &request(env.site.url("/js"))).await;
        assert!(
            rendered
                .html
                .contains("<h1>Written by script</h1><p>42</p>"),
            "{}",
            rendered.html
        );
        assert!(
            rendered.html.starts_with("<!DOCTYPE html>"),
            "{}",
            &rendered.html[..40]
        );
        assert_eq!(rendered.status, Some(200));
        assert_eq!(rendered.final_url, env.site.url("/js"));
        assert!(rendered.screenshot_png.is_none());
    });
}

#[test]
fn every_action_type_runs_in_order() {
    rt().block_on(async {
        let env = env().await;
        let mut req = request(env.site.url("/actions"));
        req.actions = vec![
            with_selector(ActionType::Click, "#reveal"),
            Action {
                text: Some("webdata".into()),
                ..with_selector(ActionType::Type, "#name")
            },
            Action {
                text: Some("query".into()),
                ..with_selector(ActionType::Type, "#q")
            },
            Action {
                key: Some("Enter".into()),
                ..with_selector(ActionType::Press, "#q")
            },
            Action {
                text: Some("down".into()),
                ..action(ActionType::Scroll)
            },
            with_selector(ActionType::Wait, "#lazy"),
            with_selector(ActionType::Wait, "#late"),
            Action {
                ms: Some(50),
                ..action(ActionType::Wait)
            },
        ];
        let html = ok(&env.pool, &req).await.html;
        for expected in [
            "Revealed by click",
            "Typed: webdata",
            "Submitted: query",
            "Lazy content after scroll",
            "Late element after 300 ms",
        ] {
            assert!(html.contains(expected), "missing {expected:?} in {html}");
        }
    });
}

#[test]
fn waiting_for_a_selector_that_never_appears_names_index_and_selector() {
    rt().block_on(async {
        let env = env().await;
        let mut req = RenderRequest::new(env.site.url("/plain"), Duration::from_secs(4));
        req.actions = vec![
            Action {
                ms: Some(10),
                ..action(ActionType::Wait)
            },
            with_selector(ActionType::Wait, "#never-there"),
        ];
        match env.pool.render(&req).await {
            Err(RenderError::ActionFailed { index, message }) => {
                assert_eq!(index, 1);
                assert!(message.contains("#never-there"), "{message}");
            }
            other => panic!("expected ActionFailed, got {other:?}"),
        }
        // A click on a missing element fails the same way, quickly.
        let mut req = request(env.site.url("/plain"));
        req.actions = vec![with_selector(ActionType::Click, "#missing-button")];
        match env.pool.render(&req).await {
            Err(RenderError::ActionFailed { index: 0, message }) => {
                assert!(message.contains("#missing-button"), "{message}")
            }
            other => panic!("expected ActionFailed, got {other:?}"),
        }
    });
}

#[test]
fn screenshots_cover_the_viewport_or_the_whole_page() {
    rt().block_on(async {
        let env = env().await;
        let mut req = request(env.site.url("/tall"));
        req.screenshot = Some(ScreenshotKind::Viewport);
        let png = ok(&env.pool, &req).await.screenshot_png.unwrap();
        let (w, h) = png_size(&png);
        assert_eq!(w, 1280, "viewport width");
        assert!((700..=800).contains(&h), "viewport height {h}");

        req.screenshot = Some(ScreenshotKind::FullPage);
        let png = ok(&env.pool, &req).await.screenshot_png.unwrap();
        let (w, h) = png_size(&png);
        assert_eq!(w, 1280, "full page width");
        assert!(h >= 3000, "full page height {h}");
    });
}

#[test]
fn the_browser_never_reaches_a_private_address() {
    rt().block_on(async {
        let env = env().await;
        let mut req = request(env.site.url("/guard"));
        req.actions = vec![with_selector(ActionType::Wait, "#done")];
        req.wait_for = Some(Duration::from_millis(1500));
        let rendered = ok(&env.pool, &req).await;
        assert!(rendered.html.contains("Guard test page"));
        assert_eq!(env.secret.hits(), 0, "the browser reached 127.0.0.1");

        // Navigating there directly is refused before the browser is asked.
        let direct = Url::parse(&format!("http://{}/secret", env.secret.tcp)).unwrap();
        match env.pool.render(&request(direct)).await {
            Err(RenderError::Blocked(message)) => {
                assert!(message.contains("127.0.0.1"), "{message}")
            }
            other => panic!("expected Blocked, got {other:?}"),
        }
        // A redirect of the page itself to a private address is refused by the proxy.
        match env.pool.render(&request(env.site.url("/to-secret"))).await {
            Err(RenderError::Blocked(message)) => {
                assert!(message.contains("127.0.0.1"), "{message}")
            }
            other => panic!("expected Blocked, got {other:?}"),
        }
        assert_eq!(env.secret.hits(), 0, "the browser reached 127.0.0.1");
    });
}

#[test]
fn extra_headers_and_languages_reach_the_server() {
    rt().block_on(async {
        let env = env().await;
        let mut req = request(env.site.url("/headers/h1"));
        req.headers = vec![("X-Webdata-Test".into(), "from-caller".into())];
        req.languages = vec!["de-DE".into(), "fr".into()];
        let rendered = ok(&env.pool, &req).await;
        let seen = env.site.seen.lock().unwrap().get("h1").cloned().unwrap();
        assert_eq!(seen.get("x-webdata-test").unwrap(), "from-caller");
        let accept = seen.get("accept-language").unwrap().to_str().unwrap();
        assert!(accept.starts_with("de-DE"), "Accept-Language {accept}");
        assert!(accept.contains("fr"), "Accept-Language {accept}");
        let agent = seen.get("user-agent").unwrap().to_str().unwrap();
        assert!(!agent.contains("Headless"), "User-Agent {agent}");
        assert!(
            rendered.html.contains("languages=de-DE|fr"),
            "{}",
            rendered.html
        );

        // The next render on the same pool is back to the defaults.
        let rendered = ok(&env.pool, &request(env.site.url("/headers/h2"))).await;
        let seen = env.site.seen.lock().unwrap().get("h2").cloned().unwrap();
        assert!(seen.get("x-webdata-test").is_none());
        assert!(
            rendered.html.contains("languages=en-US|en"),
            "{}",
            rendered.html
        );
    });
}

#[test]
fn cookies_and_storage_do_not_survive_into_the_next_render() {
    rt().block_on(async {
        let env = env().await;
        let secret = &env.secret;
        let site = serve_site(secret).await;
        let mut cfg = BrowserConfig::new(guard());
        cfg.max_sessions = 1;
        let pool = start_pool(cfg).await;
        ok(&pool, &request(site.url("/set-state"))).await;
        let html = ok(&pool, &request(site.url("/show-state"))).await.html;
        assert!(html.contains("server-cookie=[]"), "{html}");
        assert!(html.contains("cookie=[] ls=[] ss=[]"), "{html}");
        assert_eq!(
            pool.sessions_started(),
            1,
            "the session should have been reused"
        );
        pool.shutdown().await;
    });
}

#[test]
fn a_busy_pool_answers_capacity_after_the_acquire_timeout() {
    rt().block_on(async {
        let env = env().await;
        let mut cfg = BrowserConfig::new(guard());
        cfg.max_sessions = 1;
        cfg.acquire_timeout = Duration::from_millis(300);
        let pool = start_pool(cfg).await;
        let mut slow = request(env.site.url("/plain"));
        slow.wait_for = Some(Duration::from_millis(1500));
        let (a, b) = tokio::join!(pool.render(&slow), pool.render(&slow));
        let capacity = [&a, &b]
            .iter()
            .filter(|r| matches!(r, Err(RenderError::Capacity { retry_after_ms }) if *retry_after_ms > 0))
            .count();
        assert_eq!(capacity, 1, "{a:?} / {b:?}");
        assert!(a.is_ok() || b.is_ok(), "{a:?} / {b:?}");
        pool.shutdown().await;
    });
}

#[test]
fn a_killed_or_overrunning_browser_and_a_killed_chromedriver_are_replaced() {
    rt().block_on(async {
        let env = env().await;
        let mut cfg = BrowserConfig::new(guard());
        cfg.max_sessions = 1;
        let pool = start_pool(cfg).await;
        ok(&pool, &request(env.site.url("/plain"))).await;
        assert_eq!(pool.sessions_started(), 1);

        // Kill Chromium in the middle of a render.
        let mut slow = request(env.site.url("/plain"));
        slow.wait_for = Some(Duration::from_secs(3));
        let victim = pool.clone();
        let during = tokio::spawn(async move { victim.render(&slow).await });
        tokio::time::sleep(Duration::from_millis(800)).await;
        let browsers = pool.process_ids().browsers;
        assert_eq!(browsers.len(), 1, "{browsers:?}");
        kill(&browsers[0].to_string());
        // The broken session was reused, so the render is retried once on a
        // fresh browser within its deadline.
        let interrupted = during.await.unwrap();
        assert!(interrupted.is_ok(), "{interrupted:?}");
        assert_eq!(pool.sessions_started(), 2);
        assert_ne!(pool.process_ids().browsers, browsers);
        let after = ok(&pool, &request(env.site.url("/js"))).await;
        assert!(after.html.contains("Written by script"));

        // A render that overruns its deadline is cut off; its browser is
        // killed and the next render gets a fresh one.
        let before = pool.sessions_started();
        let hang = RenderRequest::new(env.site.url("/hang"), Duration::from_millis(1500));
        let started = std::time::Instant::now();
        assert_eq!(pool.render(&hang).await.unwrap_err(), RenderError::Timeout);
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        let after = ok(&pool, &request(env.site.url("/js"))).await;
        assert!(after.html.contains("Written by script"));
        assert_eq!(pool.sessions_started(), before + 1);

        // Kill chromedriver between renders.
        let driver = pool.process_ids().driver.expect("chromedriver runs");
        kill(&driver.to_string());
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = ok(&pool, &request(env.site.url("/js"))).await;
        assert!(after.html.contains("Written by script"));
        assert_ne!(pool.process_ids().driver, Some(driver));
        pool.shutdown().await;
        assert!(pool.process_ids().browsers.is_empty());
    });
}

#[test]
fn a_webdriver_url_renders_through_the_guard_proxy_too() {
    rt().block_on(async {
        let env = env().await;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut chromedriver = tokio::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .arg("--silent")
            .stdout(std::process::Stdio::null())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver is installed (run `make test`)");
        let webdriver_url = format!("http://127.0.0.1:{port}");
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let mut cfg = BrowserConfig::new(guard());
        cfg.webdriver_url = Some(webdriver_url);
        let pool = start_pool(cfg).await;
        let mut req = request(env.site.url("/guard"));
        req.actions = vec![with_selector(ActionType::Wait, "#done")];
        req.wait_for = Some(Duration::from_millis(500));
        let rendered = ok(&pool, &req).await;
        assert!(rendered.html.contains("Guard test page"));
        let rendered = ok(&pool, &request(env.site.url("/js"))).await;
        assert!(rendered.html.contains("Written by script"));
        assert_eq!(env.secret.hits(), 0, "the browser reached 127.0.0.1");
        pool.shutdown().await;
        // chromedriver's own Chromium is in its process group.
        if let Some(pid) = chromedriver.id() {
            kill(&format!("-{pid}"));
        }
        let _ = chromedriver.wait().await;
    });
}

/// `kill -KILL` a pid (or `-pgid` for a process group).
fn kill(target: &str) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", "--", target])
        .status()
        .unwrap();
    assert!(status.success(), "kill {target}");
}
