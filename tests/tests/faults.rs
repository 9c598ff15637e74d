//! Issue 27, part 4: faults, each an automated test against the real
//! binary. The API killed with SIGKILL mid idempotent scrapes; PostgreSQL
//! restarted during a crawl (a private cluster, never the shared one);
//! SQLite's disk full (a tmpfs); hostile targets through `/v1/scrape`
//! (trickle, endless body, gzip bomb, redirect loop, HTTP/0.9, malformed
//! heads); a webhook receiver that hangs; slow-loris clients on the API.
//!
//! Every target is on loopback (127.0.0.2, the address the test servers
//! allow); nothing leaves the machine.

#[macro_use]
mod support;

use axum::extract::Path;
use axum::response::Html;
use axum::routing::get;
use futures::future::BoxFuture;
use reqwest::Method;
use serde_json::json;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{article_page, Db, Resp, Server, ServerOptions, Site};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

// ---------------------------------------------------------------------------
// Raw TCP test targets: they answer whatever bytes a test wants, including
// answers no HTTP library would send.

type Handler = Arc<dyn Fn(String, String, TcpStream) -> BoxFuture<'static, ()> + Send + Sync>;

/// A raw TCP server on 127.0.0.2: reads a request head, then hands the
/// path, the head and the socket to `handler`.
struct RawSite {
    base: String,
    handle: tokio::task::JoinHandle<()>,
}

impl RawSite {
    async fn serve(handler: Handler) -> RawSite {
        let listener = tokio::net::TcpListener::bind("127.0.0.2:0")
            .await
            .expect("bind 127.0.0.2");
        let addr = listener.local_addr().expect("addr");
        let handle = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let handler = handler.clone();
                tokio::spawn(async move {
                    let Some(head) = read_head(&mut stream).await else {
                        return;
                    };
                    let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                    handler(path, head, stream).await;
                });
            }
        });
        RawSite {
            base: format!("http://{addr}"),
            handle,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for RawSite {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// Reads up to the end of a request head (`\r\n\r\n`).
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// Waits until the peer closes `stream` (or `limit` passes); returns when.
async fn wait_closed(stream: &mut TcpStream, limit: Duration) -> Option<Instant> {
    let mut chunk = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(Instant::now()),
            Ok(Ok(_)) => {}
        }
    }
}

/// A scrape request for a hostile target: no robots.txt lookup (the raw
/// servers answer only what the test asks) and no cache.
fn scrape_body(url: &str, timeout_ms: u64) -> serde_json::Value {
    json!({"url": url, "formats": ["markdown"], "timeout": timeout_ms, "ignoreRobots": true, "maxAge": 0})
}

fn issues(r: &Resp) -> Vec<String> {
    r.json["data"]["quality"]["issues"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// `bytes` of small HTML paragraphs, gzip-compressed (about 1000:1).
fn gzip_bomb(bytes: usize) -> Vec<u8> {
    use std::io::Write;
    let line = b"<p>bomb bomb bomb bomb bomb bomb bomb bomb bomb bomb bomb bomb</p>\n";
    let block: Vec<u8> = line.iter().copied().cycle().take(1 << 20).collect();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len());
        e.write_all(&block[..n]).expect("gzip");
        left -= n;
    }
    e.finish().expect("gzip")
}

on_both!(sigkill_mid_idempotent_scrapes_replays_and_charges_each_key_once);

// ---------------------------------------------------------------------------
// Hostile targets through /v1/scrape.

/// Bytes a target wrote to the endless-body connection.
static ENDLESS_WRITTEN: AtomicUsize = AtomicUsize::new(0);

fn hostile_handler(bomb: Arc<Vec<u8>>) -> Handler {
    Arc::new(move |path: String, _head: String, mut stream: TcpStream| {
        let bomb = bomb.clone();
        Box::pin(async move {
            let ok_head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n";
            // Malformed answers, written as they are and closed.
            if let Some(bytes) = malformed(&path) {
                let _ = stream.write_all(bytes).await;
                let _ = stream.shutdown().await;
                return;
            }
            match path.as_str() {
                // The whole answer, status line included, one byte a second.
                "/trickle-head" => {
                    let answer = format!("{ok_head}Content-Length: 13\r\n\r\n<p>slow</p>\r\n");
                    for b in answer.as_bytes() {
                        if stream.write_all(&[*b]).await.is_err() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
                // Headers at once, then the body one byte a second.
                "/trickle-body" => {
                    let head = format!("{ok_head}Content-Length: 100000\r\n\r\n");
                    if stream.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    loop {
                        if stream.write_all(b"a").await.is_err() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
                // No length, never ends: read-until-close framing.
                "/endless" => {
                    let head = format!(
                        "{ok_head}\r\n<html><head><title>Endless</title></head><body><main><article><h1>Endless</h1>"
                    );
                    if stream.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    let para = b"<p>An endless page keeps sending paragraphs of words for as long as anyone reads them.</p>\n";
                    let chunk: Vec<u8> = para.iter().copied().cycle().take(64 * 1024).collect();
                    while stream.write_all(&chunk).await.is_ok() {
                        ENDLESS_WRITTEN.fetch_add(chunk.len(), Ordering::SeqCst);
                    }
                }
                "/bomb" => {
                    let head = format!(
                        "{ok_head}Content-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
                        bomb.len()
                    );
                    let _ = stream.write_all(head.as_bytes()).await;
                    let _ = stream.write_all(&bomb).await;
                    let _ = wait_closed(&mut stream, Duration::from_secs(30)).await;
                }
                "/loop-a" | "/loop-b" => {
                    let to = if path == "/loop-a" {
                        "/loop-b"
                    } else {
                        "/loop-a"
                    };
                    let answer = format!(
                        "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                    let _ = stream.shutdown().await;
                }
                _ => {
                    let body = article_page("Healthy");
                    let answer = format!(
                        "{ok_head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                    let _ = stream.shutdown().await;
                }
            }
        }) as BoxFuture<'static, ()>
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hostile_targets_get_documented_answers_and_charges() {
    let s = Server::start(Db::Sqlite).await;
    let bomb = Arc::new(gzip_bomb(48 << 20));
    assert!(bomb.len() * 50 < 48 << 20, "a bomb: {} bytes", bomb.len());
    let site = RawSite::serve(hostile_handler(bomb)).await;
    let before = s.credits().await;

    // A target that trickles one byte a second: the `timeout` holds.
    for path in ["/trickle-head", "/trickle-body"] {
        let t = Instant::now();
        let r = s
            .post("/v1/scrape", scrape_body(&site.url(path), 2000))
            .await;
        let took = t.elapsed();
        r.assert_error(504, "timeout");
        assert!(
            took >= Duration::from_millis(1900) && took <= Duration::from_millis(5000),
            "{path}: answered after {took:?} for a 2000 ms timeout"
        );
        eprintln!("{path}: 504 timeout after {took:?}");
    }

    // An endless body: cut at the size cap, reported as `truncated`, charged once.
    let t = Instant::now();
    let r = s
        .post("/v1/scrape", scrape_body(&site.url("/endless"), 30000))
        .await;
    let took = t.elapsed();
    assert_eq!(r.status, 200, "{}", &r.text[..r.text.len().min(2000)]);
    assert!(
        issues(&r).contains(&"truncated".to_string()),
        "{:?}",
        issues(&r)
    );
    assert_eq!(r.json["credits_used"], 1);
    let md = r.json["data"]["markdown"].as_str().expect("markdown");
    assert!(md.contains("An endless page"), "content kept up to the cap");
    assert!(md.len() <= 11 << 20, "markdown of {} bytes", md.len());
    // The service stopped reading: the target's writes stall at the cap
    // plus socket buffers.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let written = ENDLESS_WRITTEN.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        ENDLESS_WRITTEN.load(Ordering::SeqCst),
        written,
        "the endless connection is closed after the answer"
    );
    assert!(
        written <= 24 << 20,
        "{written} bytes were read from the endless body"
    );
    eprintln!(
        "/endless: 200 truncated after {took:?}, {written} bytes sent by the target, markdown {} bytes",
        md.len()
    );

    // A decompression bomb: the cap counts decompressed bytes.
    let t = Instant::now();
    let r = s
        .post("/v1/scrape", scrape_body(&site.url("/bomb"), 30000))
        .await;
    let took = t.elapsed();
    assert_eq!(r.status, 200, "{}", &r.text[..r.text.len().min(2000)]);
    assert!(
        issues(&r).contains(&"truncated".to_string()),
        "{:?}",
        issues(&r)
    );
    assert_eq!(r.json["credits_used"], 1);
    let md_len = r.json["data"]["markdown"].as_str().map_or(0, str::len);
    assert!(md_len <= 11 << 20, "markdown of {md_len} bytes");
    eprintln!("/bomb: 200 truncated after {took:?}, markdown {md_len} bytes");

    // A redirect loop: `fetch_failed`, quickly.
    let t = Instant::now();
    let r = s
        .post("/v1/scrape", scrape_body(&site.url("/loop-a"), 10000))
        .await;
    let took = t.elapsed();
    r.assert_error(502, "fetch_failed");
    assert!(r.message().contains("redirect"), "{}", r.message());
    assert!(took < Duration::from_secs(5), "{took:?}");
    eprintln!("/loop-a: 502 fetch_failed after {took:?}: {}", r.message());

    // HTTP/0.9 and malformed heads: a clear `fetch_failed`, never `internal`.
    for path in [
        "/http09",
        "/no-colon",
        "/bad-status",
        "/ctl-in-header",
        "/bad-length",
    ] {
        let t = Instant::now();
        let r = s
            .post("/v1/scrape", scrape_body(&site.url(path), 5000))
            .await;
        let took = t.elapsed();
        r.assert_error(502, "fetch_failed");
        assert!(took < Duration::from_secs(5), "{path}: {took:?}");
        eprintln!("{path}: 502 fetch_failed after {took:?}: {}", r.message());
    }

    // Failed scrapes are free; the two truncated pages cost one each.
    assert_eq!(
        s.credits().await,
        before - 2,
        "charged only the two pages returned"
    );
    // And the service is still healthy.
    let r = s
        .post("/v1/scrape", scrape_body(&site.url("/fine"), 5000))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(s.credits().await, before - 3);
}

// ---------------------------------------------------------------------------
// Slow-loris clients on the API.

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slow_loris_clients_are_shed_while_normal_requests_are_answered() {
    let s = Server::start(Db::Sqlite).await;
    let addr = s.base.trim_start_matches("http://").to_string();
    const SLOW: usize = 50;
    let started = Instant::now();
    let closed: Arc<Mutex<Vec<Option<Duration>>>> = Arc::default();
    let mut tasks = Vec::new();
    for _ in 0..SLOW {
        let addr = addr.clone();
        let closed = closed.clone();
        tasks.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(&addr).await.expect("connect");
            let head = format!(
                "GET /v1/team/credit-usage HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: slowloris\r\nX-Padding: {}\r\n\r\n",
                "x".repeat(200)
            );
            let mut chunk = [0u8; 1024];
            let mut at = 0;
            let limit = Duration::from_secs(25);
            let end = loop {
                if started.elapsed() > limit {
                    break None;
                }
                tokio::select! {
                    r = stream.read(&mut chunk) => match r {
                        Ok(0) | Err(_) => break Some(started.elapsed()),
                        Ok(_) => {}
                    },
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {
                        if stream.write_all(&head.as_bytes()[at..at + 1]).await.is_err() {
                            break Some(started.elapsed());
                        }
                        at = (at + 1).min(head.len() - 3);
                    }
                }
            };
            closed.lock().unwrap_or_else(|p| p.into_inner()).push(end);
        }));
    }
    // Normal requests keep being answered promptly meanwhile.
    let mut slowest = Duration::ZERO;
    let mut answered = 0;
    while started.elapsed() < Duration::from_secs(13) {
        let client = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("client");
        let t = Instant::now();
        let r = client
            .get(s.url("/v1/team/credit-usage"))
            .bearer_auth(&s.key)
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .expect("a normal request is answered while slow clients hold connections");
        assert_eq!(r.status(), 200);
        slowest = slowest.max(t.elapsed());
        answered += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(
        slowest < Duration::from_secs(3),
        "slowest normal answer {slowest:?}"
    );
    for t in tasks {
        t.await.expect("slow client");
    }
    let closed = closed.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(closed.len(), SLOW);
    let open = closed.iter().filter(|c| c.is_none()).count();
    assert_eq!(
        open, 0,
        "{open} of {SLOW} slow-loris connections were still open after 25 s"
    );
    let last = closed.iter().flatten().max().copied().unwrap_or_default();
    assert!(
        last <= Duration::from_secs(16),
        "the last slow connection was closed after {last:?}"
    );
    eprintln!(
        "slow-loris: {SLOW} connections closed by {last:?}; {answered} normal requests, slowest {slowest:?}"
    );
}

// ---------------------------------------------------------------------------
// A webhook receiver that hangs.

#[derive(Clone, Debug)]
struct Attempt {
    attempt: u32,
    event_id: String,
    at: Instant,
    cut_after: Option<Duration>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hanging_webhook_receiver_is_cut_at_10s_retried_and_dead_lettered() {
    let s = Server::start_with(
        ServerOptions::new(Db::Sqlite).env("WEBDATA_WEBHOOK_DELAY_SCALE", "0.001"),
    )
    .await;
    let site = Site::serve(
        axum::Router::new().route("/page", get(|| async { Html(article_page("Hooked")) })),
    )
    .await;
    // Attempts 1 and 8 hang (accept, read, never answer); 2 to 7 answer 503
    // at once, so the test sees the timeout twice and still ends in ~25 s.
    let seen: Arc<Mutex<Vec<Attempt>>> = Arc::default();
    let log = seen.clone();
    let hook = RawSite::serve(Arc::new(move |_path: String, head: String, mut stream: TcpStream| {
        let log = log.clone();
        Box::pin(async move {
            let at = Instant::now();
            let attempt: u32 = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("service-delivery-attempt")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            // The body follows the head; read a little of it for the event id.
            let mut body = head.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
            let mut chunk = [0u8; 8192];
            if !body.contains("\"id\"") {
                if let Ok(Ok(n)) =
                    tokio::time::timeout(Duration::from_secs(2), stream.read(&mut chunk)).await
                {
                    body.push_str(&String::from_utf8_lossy(&chunk[..n]));
                }
            }
            let event_id = body
                .split("\"id\":\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_string();
            let index = {
                let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
                l.push(Attempt {
                    attempt,
                    event_id,
                    at,
                    cut_after: None,
                });
                l.len() - 1
            };
            if attempt == 1 || attempt == 8 {
                let cut = wait_closed(&mut stream, Duration::from_secs(30)).await;
                log.lock().unwrap_or_else(|p| p.into_inner())[index].cut_after =
                    cut.map(|c| c - at);
            } else {
                let _ = stream
                    .write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
                let _ = stream.shutdown().await;
            }
        }) as BoxFuture<'static, ()>
    }))
    .await;
    let r = s
        .post(
            "/v1/crawl",
            json!({"url": site.url("/page"), "sitemap": "skip", "limit": 1,
                   "webhook": {"url": hook.url("/hook"), "events": ["completed"]}}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let org = s.org_id().await;
    let deadline = Instant::now() + Duration::from_secs(50);
    let dead = loop {
        let d = s
            .admin(
                Method::GET,
                &format!("/admin/v1/organizations/{org}/webhook-deliveries?state=dead"),
                None,
            )
            .await;
        let list = d.json["data"].as_array().cloned().unwrap_or_default();
        if !list.is_empty() {
            break list;
        }
        assert!(
            Instant::now() < deadline,
            "no dead letter after 50 s; attempts: {:?}",
            seen.lock().unwrap_or_else(|p| p.into_inner())
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // No ninth attempt follows.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let seen = seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let numbers: Vec<u32> = seen.iter().map(|a| a.attempt).collect();
    assert_eq!(numbers, (1..=8).collect::<Vec<u32>>(), "{seen:?}");
    assert!(!seen[0].event_id.is_empty(), "{seen:?}");
    assert!(
        seen.iter().all(|a| a.event_id == seen[0].event_id),
        "one event, retried: {seen:?}"
    );
    for a in [&seen[0], &seen[7]] {
        let cut = a.cut_after.expect("the hanging attempt was cut");
        assert!(
            cut >= Duration::from_millis(9500) && cut <= Duration::from_millis(12500),
            "attempt {} was cut after {cut:?}, not at the 10 s timeout",
            a.attempt
        );
    }
    // The retry follows the cut (10 s timeout + 10 ms scaled backoff + polling).
    let gap = seen[1].at - seen[0].at;
    assert!(
        gap >= Duration::from_millis(9500) && gap <= Duration::from_millis(14000),
        "{gap:?}"
    );
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0]["attempts"], 8, "{dead:?}");
    assert!(dead[0]["lastStatus"].is_null(), "{dead:?}");
    let text = dead[0].to_string().to_lowercase();
    assert!(
        text.contains("timed out") || text.contains("timeout"),
        "{text}"
    );
    eprintln!(
        "hanging receiver: cut after {:?} and {:?}; attempt 2 came {gap:?} after attempt 1; dead letter after 8 attempts",
        seen[0].cut_after, seen[7].cut_after
    );
}

// ---------------------------------------------------------------------------
// SIGKILL in the middle of idempotent scrapes.

async fn sigkill_mid_idempotent_scrapes_replays_and_charges_each_key_once(db: Db) {
    let site = Site::serve(
        axum::Router::new()
            .route(
                "/fast/{n}",
                get(|Path(n): Path<u32>| async move { Html(article_page(&format!("Fast {n}"))) }),
            )
            .route(
                "/slow/{n}",
                get(|Path(n): Path<u32>| async move {
                    tokio::time::sleep(Duration::from_millis(2500)).await;
                    Html(article_page(&format!("Slow {n}")))
                }),
            ),
    )
    .await;
    // A short request timeout bounds how long a dead replica's key blocks.
    let opts = ServerOptions::new(db).env("WEBDATA_REQUEST_TIMEOUT_MS", "5000");
    let mut a = Server::start_with(opts).await;
    let key = a.key.clone();
    let body = |path: &str| json!({"url": site.url(path), "formats": ["markdown"], "timeout": 4000, "ignoreRobots": true, "maxAge": 0});
    let mut jobs: Vec<(String, serde_json::Value)> = Vec::new();
    let mut first: std::collections::HashMap<String, serde_json::Value> = Default::default();
    for i in 0..2 {
        let k = format!("done-{i}");
        let b = body(&format!("/fast/{i}"));
        let r = a
            .post_as(
                &key,
                "/v1/scrape",
                b.clone(),
                &[("idempotency-key", k.as_str())],
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
        first.insert(k.clone(), r.json["data"].clone());
        jobs.push((k, b));
    }
    const FLYING: usize = 6;
    let mut flying = Vec::new();
    for i in 0..FLYING {
        let k = format!("fly-{i}");
        let b = body(&format!("/slow/{i}"));
        jobs.push((k.clone(), b.clone()));
        let http = a.http.clone();
        let url = a.url("/v1/scrape");
        let key = key.clone();
        flying.push(tokio::spawn(async move {
            http.post(url)
                .bearer_auth(key)
                .header("idempotency-key", k)
                .json(&b)
                .send()
                .await
                .map(|r| r.status().as_u16())
        }));
    }
    // Every slow scrape has reached the target: they are in flight.
    let deadline = Instant::now() + Duration::from_secs(20);
    while site.hits() < 2 + FLYING {
        assert!(
            Instant::now() < deadline,
            "scrapes did not start: {}",
            a.logs()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = Instant::now();
    a.kill();
    for f in flying {
        let got = f.await.expect("join");
        assert!(
            got.is_err(),
            "the in-flight scrape was cut by the kill: {got:?}"
        );
    }
    let mut opts = ServerOptions::new(db).env("WEBDATA_REQUEST_TIMEOUT_MS", "5000");
    opts.database_url = Some(a.database_url.clone());
    let mut b = Server::start_with(opts).await;
    b.key = key.clone();
    // Retry every key with the same body, all at once as clients would:
    // each answers, at worst once the dead replica's claims count as
    // abandoned (request timeout + 5 s after they were made).
    let waited_409 = AtomicUsize::new(0);
    let retries = jobs.iter().map(|(k, body)| {
        let (b, key, waited_409) = (&b, &key, &waited_409);
        async move {
            loop {
                let r = b
                    .post_as(
                        key,
                        "/v1/scrape",
                        body.clone(),
                        &[("idempotency-key", k.as_str())],
                    )
                    .await;
                if r.status != 409 {
                    return (k.clone(), r);
                }
                r.assert_error(409, "idempotency_in_progress");
                let wait = r.json["error"]["retry_after_ms"]
                    .as_u64()
                    .expect("retry_after_ms");
                assert!(
                    killed.elapsed() < Duration::from_secs(20),
                    "{k} still in progress {:?} after the kill",
                    killed.elapsed()
                );
                waited_409.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
        }
    });
    for (k, r) in futures::future::join_all(retries).await {
        assert_eq!(r.status, 200, "{k}: {}", r.text);
        if let Some(data) = first.get(&k) {
            assert_eq!(r.header("idempotent-replayed"), Some("true"), "{k}");
            assert_eq!(&r.json["data"], data, "{k}");
        }
    }
    let waited_409 = waited_409.load(Ordering::SeqCst);
    let answered_after = killed.elapsed();
    // Once more: everything replays now, nothing is redone.
    let hits = site.hits();
    for (k, body) in &jobs {
        let r = b
            .post_as(
                &key,
                "/v1/scrape",
                body.clone(),
                &[("idempotency-key", k.as_str())],
            )
            .await;
        assert_eq!(r.status, 200, "{k}: {}", r.text);
        assert_eq!(r.header("idempotent-replayed"), Some("true"), "{k}");
    }
    assert_eq!(site.hits(), hits, "replays redo no work");
    // The ledger: one settled credit per distinct key, never more; the
    // killed requests' holds were never charged.
    let org = b.org_id().await;
    let ledger = b
        .admin(
            Method::GET,
            &format!("/admin/v1/organizations/{org}/ledger?limit=100"),
            None,
        )
        .await;
    assert_eq!(ledger.status, 200, "{}", ledger.text);
    let entries = ledger.json["data"].as_array().expect("ledger").clone();
    let scrapes: Vec<&serde_json::Value> = entries
        .iter()
        .filter(|e| e["operation"] == "scrape")
        .collect();
    let charged: i64 = scrapes.iter().filter_map(|e| e["settled"].as_i64()).sum();
    let held: i64 = scrapes
        .iter()
        .filter(|e| e["state"] == "reserved")
        .filter_map(|e| e["reserved"].as_i64())
        .sum();
    assert_eq!(charged, jobs.len() as i64, "{entries:?}");
    assert!(held <= FLYING as i64, "{entries:?}");
    // What the organization sees: the charges plus, until the janitor
    // releases them at no cost, the holds of the killed requests.
    assert_eq!(b.credits().await, 1000 - charged - held);
    eprintln!(
        "{db:?}: {} keys, all answered {answered_after:?} after the kill ({waited_409} answers 409 meanwhile); charged {charged}, {held} killed holds pending release",
        jobs.len()
    );
}

// ---------------------------------------------------------------------------
// PostgreSQL restarted during a crawl (a private cluster).

/// A throwaway PostgreSQL cluster on a free loopback port, as
/// `scripts/test-postgres.sh` makes one; stopped and removed on drop.
struct PrivatePostgres {
    bin: std::path::PathBuf,
    dir: std::path::PathBuf,
    port: u16,
}

fn as_postgres(program: &std::path::Path) -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    }
}

impl PrivatePostgres {
    fn start() -> PrivatePostgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL server binaries (/usr/lib/postgresql/*/bin) are needed")
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("bin"))
            .filter(|p| p.join("pg_ctl").exists())
            .max()
            .expect("no /usr/lib/postgresql/*/bin/pg_ctl");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let dir = std::env::temp_dir().join(support::unique("webdata-faults-pg"));
        std::fs::create_dir_all(&dir).expect("pg dir");
        let _ = Command::new("chown")
            .args(["postgres:postgres"])
            .arg(&dir)
            .status();
        let pg = PrivatePostgres { bin, dir, port };
        let out = as_postgres(&pg.bin.join("initdb"))
            .arg("-D")
            .arg(&pg.dir)
            .args(["-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"])
            .output()
            .expect("initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.ctl("start");
        pg
    }

    fn ctl(&self, action: &str) {
        let out = as_postgres(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.dir)
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-w", "-t", "30", "-m", "fast", "-o"])
            .arg(format!(
                "-h 127.0.0.1 -p {} -k {} -c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                self.port,
                self.dir.display()
            ))
            .arg(action)
            .output()
            .expect("pg_ctl");
        assert!(
            out.status.success(),
            "pg_ctl {action} failed: {} {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
        );
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The running postmaster's process id.
    fn pid(&self) -> String {
        std::fs::read_to_string(self.dir.join("postmaster.pid"))
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = as_postgres(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.dir)
            .args(["-m", "immediate", "stop"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `/p/n` links to `/p/n+1` and `/p/n+2` (up to 29): 30 pages, at most two
/// fetchable at a time, each answered after `delay`.
fn chain_site(delay: Duration) -> axum::Router {
    axum::Router::new().route(
        "/p/{n}",
        get(move |Path(n): Path<u32>| async move {
            tokio::time::sleep(delay).await;
            let links: String = [n + 1, n + 2]
                .iter()
                .filter(|m| **m < 30)
                .map(|m| format!("<li><a href=\"/p/{m}\">page {m}</a></li>"))
                .collect();
            Html(format!(
                "<html><head><title>Page {n}</title></head><body><main><article><h1>Page {n}</h1>\
                 <p>Page number {n} of the chain has enough words to be a real page for the crawler.</p>\
                 <ul>{links}</ul></article></main></body></html>"
            ))
        }),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_restart_mid_crawl_loses_and_double_charges_nothing() {
    let pg = PrivatePostgres::start();
    let s = Server::start_with(ServerOptions {
        db: Db::Postgres,
        database_url: Some(pg.url()),
        credits: 1000,
        env: Vec::new(),
    })
    .await;
    let site = Site::serve(chain_site(Duration::from_millis(250))).await;
    let r = s
        .post(
            "/v1/crawl",
            json!({"url": site.url("/p/0"), "sitemap": "skip", "maxDepth": 20, "limit": 100}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().expect("id").to_string();
    // Restart PostgreSQL once some pages are stored and most are not.
    let deadline = Instant::now() + Duration::from_secs(30);
    let at_restart = loop {
        let r = s.get_as(&s.key, &format!("/v1/crawl/{id}?limit=1")).await;
        let done = r.json["completed"].as_i64().unwrap_or(0);
        if done >= 5 {
            break done;
        }
        assert!(Instant::now() < deadline, "crawl stalled: {}", r.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let t = Instant::now();
    let pid = pg.pid();
    pg.ctl("restart");
    let restart_took = t.elapsed();
    assert_ne!(pg.pid(), pid, "PostgreSQL was restarted");
    assert!(at_restart < 30, "the crawl ended before the restart");
    // The crawl resumes and completes.
    let deadline = Instant::now() + Duration::from_secs(45);
    let done = loop {
        let r = s
            .http
            .get(s.url(&format!("/v1/crawl/{id}?limit=1")))
            .bearer_auth(&s.key)
            .send()
            .await;
        if let Ok(r) = r {
            let r = Resp::from(r).await;
            let status = r.json["status"].as_str().unwrap_or("");
            if ["completed", "failed", "cancelled"].contains(&status) {
                break r;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the crawl did not finish after the restart:\n{}",
            s.logs()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(
        done.json["status"],
        "completed",
        "{}\n{}",
        done.text,
        s.logs()
    );
    // Every page stored exactly once, charged once.
    let mut urls = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/crawl/{id}?limit=100&cursor={c}"),
            None => format!("/v1/crawl/{id}?limit=100"),
        };
        let r = s.get_as(&s.key, &path).await;
        assert_eq!(r.status, 200, "{}", r.text);
        for d in r.json["data"].as_array().expect("data") {
            urls.push(d["url"].as_str().expect("url").to_string());
        }
        match r.json["next"].as_str() {
            Some(n) => cursor = Some(n.to_string()),
            None => break,
        }
    }
    urls.sort();
    let mut want: Vec<String> = (0..30).map(|n| site.url(&format!("/p/{n}"))).collect();
    want.sort();
    assert_eq!(urls, want, "every page exactly once");
    assert_eq!(done.json["completed"], 30, "{}", done.text);
    assert_eq!(done.json["credits_used"], 30, "{}", done.text);
    assert_eq!(s.credits().await, 1000 - 30);
    let logs = s.logs();
    let complaints = logs
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR"))
        .count();
    eprintln!(
        "postgres restart ({restart_took:?}) after {at_restart} of 30 pages: completed, 30 pages once, 30 credits; {complaints} warning/error log lines, e.g. {:?}",
        logs.lines().find(|l| l.contains("WARN") || l.contains("ERROR"))
    );
}

// ---------------------------------------------------------------------------
// SQLite's disk full.

/// A tmpfs mounted for the test; unmounted on drop.
struct Tmpfs {
    dir: std::path::PathBuf,
}

impl Tmpfs {
    fn mount(size_kib: u64) -> Tmpfs {
        let dir = std::env::temp_dir().join(support::unique("webdata-faults-full"));
        std::fs::create_dir_all(&dir).expect("mount point");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={size_kib}k"))
            .arg("tmpfs")
            .arg(&dir)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "this test needs to mount a small tmpfs (run it as root, as CI does): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs { dir }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Writes a filler file until the file system is full; returns its size.
fn fill(path: &std::path::Path) -> usize {
    use std::io::Write;
    let mut f = std::fs::File::create(path).expect("filler");
    let chunk = vec![0u8; 16 * 1024];
    let mut n = 0;
    while f.write_all(&chunk).is_ok() {
        n += chunk.len();
    }
    let _ = f.sync_all();
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_disk_full_answers_internal_with_retry_and_recovers() {
    let fs = Tmpfs::mount(16 * 1024);
    let db_path = fs.dir.join("webdata.db");
    let s = Server::start_with(ServerOptions {
        db: Db::Sqlite,
        database_url: Some(format!("sqlite://{}", db_path.display())),
        credits: 1000,
        env: Vec::new(),
    })
    .await;
    // Pages of about 200 KB, each different, so every scrape writes.
    let site = Site::serve(axum::Router::new().route(
        "/big/{n}",
        get(|Path(n): Path<u32>| async move {
            let para = format!("<p>Big page {n} paragraph with words that make it large. </p>");
            Html(format!(
                "<html><head><title>Big {n}</title></head><body><main><article><h1>Big {n}</h1>{}</article></main></body></html>",
                para.repeat(200_000 / para.len())
            ))
        }),
    ))
    .await;
    let body = |n: u32| json!({"url": site.url(&format!("/big/{n}")), "formats": ["markdown", "html"], "ignoreRobots": true, "maxAge": 0});
    let r = s.post("/v1/scrape", body(0)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let mut ok = 1;
    let filler = fs.dir.join("filler");
    let filled = fill(&filler);
    // Requests now fail: each a clear 500 `internal` with `retry_after_ms`,
    // never a hang or a dropped connection.
    let mut failures = 0;
    let mut first_failure: Option<Resp> = None;
    for n in 1..=40u32 {
        let t = Instant::now();
        let r = tokio::time::timeout(Duration::from_secs(20), s.post("/v1/scrape", body(n)))
            .await
            .expect("a request on a full disk is answered, not hung");
        assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
        if r.status == 200 {
            ok += 1;
            continue;
        }
        r.assert_error(500, "internal");
        assert!(
            r.json["error"]["retry_after_ms"]
                .as_i64()
                .is_some_and(|ms| ms > 0),
            "{}",
            r.text
        );
        assert!(r.header("retry-after").is_some(), "{:?}", r.headers);
        failures += 1;
        first_failure.get_or_insert(r);
        if failures >= 3 {
            break;
        }
    }
    assert!(
        failures >= 3,
        "a full disk never failed a request ({ok} scrapes succeeded after filling {filled} bytes)"
    );
    let first_failure = first_failure.expect("failure");
    // Space returns: the service recovers without a restart.
    std::fs::remove_file(&filler).expect("free space");
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut n = 100;
    loop {
        let r = s.post("/v1/scrape", body(n)).await;
        n += 1;
        if r.status == 200 {
            ok += 1;
            break;
        }
        if Instant::now() >= deadline {
            let logs = s.logs();
            let tail: Vec<&str> = logs.lines().rev().take(30).collect();
            panic!(
                "no recovery once space returned: {}\n{}",
                r.text,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for _ in 0..3 {
        let r = s.post("/v1/scrape", body(n)).await;
        n += 1;
        assert_eq!(r.status, 200, "{}", r.text);
        ok += 1;
    }
    // Charged exactly for the pages returned.
    assert_eq!(s.credits().await, 1000 - ok, "{ok} scrapes succeeded");
    // The store is not corrupted.
    let store = s.store().await;
    let check: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(store.pool())
        .await
        .expect("integrity_check");
    assert_eq!(check, "ok");
    store.pool().close().await;
    drop(s);
    eprintln!(
        "sqlite disk full: filled {filled} bytes; {failures} answers 500 internal (retry_after_ms {}); recovered; integrity ok; {ok} scrapes charged {ok}",
        first_failure.json["error"]["retry_after_ms"]
    );
}

/// The malformed answers of the hostile target, by path.
fn malformed(path: &str) -> Option<&'static [u8]> {
    Some(match path {
        // HTTP/0.9: no status line, no headers, just the body.
        "/http09" => b"<html><body><p>HTTP/0.9 has no status line.</p></body></html>\n",
        "/no-colon" => b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nThis header line has no colon\r\nContent-Length: 5\r\n\r\nhello",
        "/bad-status" => b"HTTP/1.1 2OO OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello",
        "/ctl-in-header" => b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Bad: a\x00b\x01c\r\nContent-Length: 5\r\n\r\nhello",
        "/bad-length" => b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello",
        _ => return None,
    })
}
