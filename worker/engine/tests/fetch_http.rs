//! The fetch tier and robots cache against real HTTP servers on loopback.
//! Every address used here is in 127.0.0.0/8; "blocked" targets are other
//! loopback addresses the guard does not allow.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;
use webdata_engine::fetch::{FetchError, FetchRequest, Fetcher, DEFAULT_USER_AGENT};
use webdata_engine::guard::{NetworkGuard, StaticResolver};
use webdata_engine::robots::{fetch_robots, RobotsCache, RobotsSource};

/// What the test server saw.
struct Seen {
    path: String,
    head: String,
}

/// What the test server answers.
enum Reply {
    Raw(Vec<u8>),
    /// Headers now, then nothing (a body that never comes).
    Stall(Vec<u8>),
    /// Never answers at all.
    Hang,
}

struct Server {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
}

impl Server {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

async fn serve_on(ip: &str, handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let handler = Arc::new(handler);
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let handler = handler.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let head = String::from_utf8_lossy(&buf).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                match handler(&Seen { path, head }) {
                    Reply::Raw(bytes) => {
                        let _ = stream.write_all(&bytes).await;
                        let _ = stream.shutdown().await;
                    }
                    Reply::Stall(bytes) => {
                        let _ = stream.write_all(&bytes).await;
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                    Reply::Hang => tokio::time::sleep(Duration::from_secs(30)).await,
                }
            });
        }
    });
    Server { addr, hits }
}

async fn serve(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Server {
    serve_on("127.0.0.1", handler).await
}

fn http(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    Reply::Raw(bytes)
}

fn fetcher_with(allow: &str, dns: StaticResolver) -> Fetcher {
    let guard = NetworkGuard::from_setting(Some(allow)).unwrap();
    Fetcher::new(guard, Arc::new(dns), DEFAULT_USER_AGENT).unwrap()
}

fn fetcher() -> Fetcher {
    fetcher_with("127.0.0.1", StaticResolver::new())
}

fn request(url: &str) -> FetchRequest {
    FetchRequest::new(url, Duration::from_secs(10))
}

/// `/r/N` redirects to `/r/N-1`; `/r/0` is the page.
fn redirect_chain(seen: &Seen) -> Reply {
    match seen
        .path
        .strip_prefix("/r/")
        .and_then(|n| n.parse::<u32>().ok())
    {
        Some(0) => http("200 OK", &[("Content-Type", "text/plain")], b"done"),
        Some(n) => http("302 Found", &[("Location", &format!("/r/{}", n - 1))], b""),
        None => http("404 Not Found", &[], b""),
    }
}

#[tokio::test]
async fn redirect_chain_is_followed_and_final_url_set() {
    let server = serve(redirect_chain).await;
    let resp = fetcher()
        .fetch(&request(&server.url("/r/3")))
        .await
        .unwrap();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.final_url.path(), "/r/0");
    assert_eq!(resp.text.as_deref(), Some("done"));
    assert_eq!(server.hits.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn ten_redirects_are_followed_and_eleven_refused() {
    let server = serve(redirect_chain).await;
    assert!(fetcher()
        .fetch(&request(&server.url("/r/10")))
        .await
        .is_ok());
    let err = fetcher()
        .fetch(&request(&server.url("/r/11")))
        .await
        .unwrap_err();
    assert!(
        matches!(err, FetchError::TooManyRedirects { max: 10, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn redirect_into_a_blocked_address_is_refused_before_connecting() {
    let target = serve_on("127.0.0.2", |_| http("200 OK", &[], b"secret")).await;
    let port = target.addr.port();
    let locations = [
        format!("http://127.0.0.2:{port}/secret"),
        format!("http://[::ffff:127.0.0.2]:{port}/secret"),
        format!("http://rebind.test:{port}/secret"),
        "file:///etc/passwd".to_owned(),
    ];
    for location in locations {
        let loc = location.clone();
        let server =
            serve(move |_| http("301 Moved Permanently", &[("Location", &loc)], b"")).await;
        let dns = StaticResolver::new().with("rebind.test", ["127.0.0.2".parse().unwrap()]);
        let err = fetcher_with("127.0.0.1", dns)
            .fetch(&request(&server.url("/")))
            .await
            .unwrap_err();
        assert!(matches!(err, FetchError::Blocked(_)), "{location}: {err}");
    }
    assert_eq!(target.hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn blocked_ip_literal_is_never_requested() {
    let server = serve(|_| http("200 OK", &[], b"hi")).await;
    let err = fetcher_with("127.0.0.2", StaticResolver::new())
        .fetch(&request(&server.url("/")))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("127.0.0.1, a loopback address"),
        "{err}"
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn hostname_from_static_dns_is_fetched_only_when_allowed() {
    let server = serve(|_| http("200 OK", &[("Content-Type", "text/plain")], b"hello")).await;
    let dns = || StaticResolver::new().with("site.test", ["127.0.0.1".parse::<IpAddr>().unwrap()]);
    let url = format!("http://site.test:{}/", server.addr.port());
    let resp = fetcher_with("127.0.0.1", dns())
        .fetch(&request(&url))
        .await
        .unwrap();
    assert_eq!(resp.text.as_deref(), Some("hello"));
    let err = fetcher_with("10.0.0.0/8", dns())
        .fetch(&request(&url))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Blocked(_)), "{err}");
    assert!(
        err.to_string().contains("site.test resolves to 127.0.0.1"),
        "{err}"
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
    let err = fetcher()
        .fetch(&request("http://nowhere.test/"))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Dns { .. }), "{err}");
}

#[tokio::test]
async fn gzip_body_is_decompressed_and_the_cap_counts_decompressed_bytes() {
    let page = "<p>hello gzip</p>".repeat(20_000);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(page.as_bytes()).unwrap();
    let compressed = gz.finish().unwrap();
    assert!(compressed.len() < 20_000);
    let server = serve(move |_| {
        http(
            "200 OK",
            &[("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            &compressed,
        )
    })
    .await;
    let resp = fetcher().fetch(&request(&server.url("/"))).await.unwrap();
    assert_eq!(resp.text.as_deref(), Some(page.as_str()));
    assert!(!resp.truncated);
    let mut capped = request(&server.url("/"));
    capped.max_bytes = 100_000;
    let resp = fetcher().fetch(&capped).await.unwrap();
    assert!(resp.truncated);
    assert_eq!(resp.body.len(), 100_000);
}

#[tokio::test]
async fn size_cap_truncates_without_error() {
    let server =
        serve(|_| http("200 OK", &[("Content-Type", "text/plain")], &[b'a'; 50_000])).await;
    let mut req = request(&server.url("/"));
    req.max_bytes = 10_000;
    let resp = fetcher().fetch(&req).await.unwrap();
    assert!(resp.truncated);
    assert_eq!(resp.body.len(), 10_000);
    req.max_bytes = 50_000;
    let resp = fetcher().fetch(&req).await.unwrap();
    assert!(!resp.truncated);
    assert_eq!(resp.body.len(), 50_000);
}

#[tokio::test]
async fn pages_are_decoded_by_bom_header_and_meta_charset() {
    let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode("<p>日本語</p>");
    let sjis = sjis.into_owned();
    let server = serve(move |seen| match seen.path.as_str() {
        "/latin1" => http(
            "200 OK",
            &[("Content-Type", "text/html")],
            b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=ISO-8859-1\"></head><p>Caf\xE9</p>",
        ),
        "/sjis" => http("200 OK", &[("Content-Type", "text/html; charset=Shift_JIS")], &sjis),
        _ => http(
            "200 OK",
            &[("Content-Type", "text/html; charset=windows-1252")],
            "\u{feff}<p>naïve</p>".as_bytes(),
        ),
    })
    .await;
    let get = |path: &str| {
        let url = server.url(path);
        async move { fetcher().fetch(&request(&url)).await.unwrap() }
    };
    let latin1 = get("/latin1").await;
    assert!(latin1.text.unwrap().contains("Café"));
    assert_eq!(latin1.encoding, Some("windows-1252"));
    assert_eq!(latin1.content_type.as_deref(), Some("text/html"));
    assert_eq!(get("/sjis").await.text.as_deref(), Some("<p>日本語</p>"));
    let bom = get("/bom").await;
    assert_eq!(bom.text.as_deref(), Some("<p>naïve</p>"));
    assert_eq!(bom.encoding, Some("UTF-8"));
}

#[tokio::test]
async fn deadline_fires_on_a_server_that_never_answers() {
    let hang = serve(|_| Reply::Hang).await;
    let stall =
        serve(|_| Reply::Stall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial".to_vec()))
            .await;
    for server in [hang, stall] {
        let started = std::time::Instant::now();
        let req = FetchRequest::new(server.url("/"), Duration::from_millis(300));
        let err = fetcher().fetch(&req).await.unwrap_err();
        assert!(matches!(err, FetchError::Timeout { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn caller_headers_and_accept_language_arrive() {
    let server = serve(|seen| match seen.path.as_str() {
        "/hop" => http("307 Temporary Redirect", &[("Location", "/echo")], b""),
        "/away" => {
            let head = seen.head.to_ascii_lowercase();
            let port = head
                .split("host: 127.0.0.1:")
                .nth(1)
                .and_then(|r| r.lines().next())
                .unwrap_or("0");
            http(
                "302 Found",
                &[("Location", &format!("http://localhost:{port}/echo"))],
                b"",
            )
        }
        _ => http(
            "200 OK",
            &[("Content-Type", "text/plain")],
            seen.head.to_ascii_lowercase().as_bytes(),
        ),
    })
    .await;
    let mut req = request(&server.url("/hop"));
    req.headers = vec![
        ("X-Webdata-Test".into(), "yes".into()),
        ("Authorization".into(), "Bearer t".into()),
    ];
    req.accept_language = Some("fr-CH, fr;q=0.9".into());
    req.accept = Some("text/markdown".into());
    let echoed = fetcher().fetch(&req).await.unwrap().text.unwrap();
    for line in [
        "x-webdata-test: yes",
        "authorization: bearer t",
        "accept-language: fr-ch, fr;q=0.9",
        "accept: text/markdown",
        "user-agent: webdata/",
    ] {
        assert!(echoed.contains(line), "{line:?} missing in {echoed}");
    }
    // Credentials stay with the origin they were given for.
    req.url = server.url("/away");
    let resp = fetcher().fetch(&req).await.unwrap();
    assert_eq!(resp.final_url.host_str(), Some("localhost"));
    let echoed = resp.text.unwrap();
    assert!(echoed.contains("x-webdata-test: yes"), "{echoed}");
    assert!(!echoed.contains("authorization"), "{echoed}");
}

#[tokio::test]
async fn refused_connection_is_a_connect_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = fetcher()
        .fetch(&request(&format!("http://{addr}/")))
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Connect { .. }), "{err}");
}

#[tokio::test]
async fn robots_status_decides_allow_all_or_disallow_all() {
    let server = serve(|seen| match seen.path.as_str() {
        "/robots.txt" => http("301 Moved", &[("Location", "/real-robots.txt")], b""),
        "/real-robots.txt" => http("200 OK", &[], b"User-agent: webdata\nDisallow: /private\n"),
        _ => http("404 Not Found", &[], b""),
    })
    .await;
    let f = fetcher();
    let timeout = Duration::from_secs(5);
    let robots = fetch_robots(&f, &Url::parse(&server.url("/x")).unwrap(), timeout).await;
    assert_eq!(robots.source(), RobotsSource::Parsed);
    assert!(!robots.is_allowed("/private/a") && robots.is_allowed("/public"));

    for (status, source) in [
        ("404 Not Found", RobotsSource::Unavailable),
        ("403 Forbidden", RobotsSource::Unavailable),
        ("429 Too Many Requests", RobotsSource::Unreachable),
        ("500 Internal Server Error", RobotsSource::Unreachable),
        ("503 Service Unavailable", RobotsSource::Unreachable),
    ] {
        let server = serve(move |_| http(status, &[], b"User-agent: *\nDisallow: /\n")).await;
        let robots = fetch_robots(&f, &Url::parse(&server.url("/")).unwrap(), timeout).await;
        assert_eq!(robots.source(), source, "{status}");
        assert_eq!(robots.is_allowed("/a"), source == RobotsSource::Unavailable);
    }
    let hang = serve(|_| Reply::Hang).await;
    let url = Url::parse(&hang.url("/")).unwrap();
    let robots = fetch_robots(&f, &url, Duration::from_millis(200)).await;
    assert_eq!(robots.source(), RobotsSource::Unreachable);
}

#[tokio::test]
async fn robots_cache_fetches_once_for_many_concurrent_callers() {
    let server = serve(|_| {
        http(
            "200 OK",
            &[],
            b"User-agent: *\nDisallow: /no\nCrawl-delay: 1\n",
        )
    })
    .await;
    let cache = Arc::new(RobotsCache::default());
    let f = fetcher();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let (cache, f) = (cache.clone(), f.clone());
        let url = Url::parse(&server.url(&format!("/page/{i}"))).unwrap();
        tasks.push(tokio::spawn(async move { cache.get(&f, &url).await }));
    }
    let mut fetched = 0;
    for task in tasks {
        let lookup = task.await.unwrap();
        fetched += usize::from(lookup.fetched);
        assert!(!lookup.robots.is_allowed("/no/x"));
        assert_eq!(lookup.robots.crawl_delay(), Some(Duration::from_secs(1)));
    }
    assert_eq!(fetched, 1);
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
    let again = Url::parse(&server.url("/other")).unwrap();
    assert!(cache.is_allowed(&f, &again).await);
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
}
