//! Sitemap discovery wired the way the crawler uses it (robots.txt, the
//! guarded fetcher, gzip files and gzip transfer encoding) against a server
//! on loopback, and the parser's memory bound measured with a counting
//! allocator. Every address used here is in 127.0.0.0/8.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flate2::write::GzEncoder;
use flate2::Compression;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;
use webdata_engine::fetch::{FetchRequest, Fetcher, DEFAULT_USER_AGENT};
use webdata_engine::guard::{NetworkGuard, StaticResolver};
use webdata_engine::robots::fetch_robots;
use webdata_engine::sitemap::{
    default_sitemap_urls, discover, parse_sitemap, Sitemap, SitemapFetchPolicy,
    MAX_DECOMPRESSED_BYTES,
};

/// Counts the bytes live on each thread, so a test can measure its own peak.
struct CountingAlloc;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        track(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Peak bytes allocated on this thread by `f`, above what was live before it.
fn peak_while<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, usize::try_from(peak - start).unwrap_or(0))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// `head` then `fill` up to 200 MiB, as concatenated 1 MiB gzip members.
fn bomb(head: &[u8], fill: u8) -> Vec<u8> {
    let mut first = head.to_vec();
    first.resize(1 << 20, fill);
    let mut out = gzip(&first);
    let member = gzip(&vec![fill; 1 << 20]);
    for _ in 1..200 {
        out.extend_from_slice(&member);
    }
    out
}

#[test]
fn gzip_bombs_parse_in_bounded_memory() {
    const BOUND: usize = 8 * 1024 * 1024;
    let urlset_head = b"<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>https://a.com/1</loc></url>";
    let in_loc = b"<urlset><url><loc>https://a.com/";
    let cases: [(&str, Vec<u8>); 4] = [
        ("zeros", bomb(b"", 0)),
        ("whitespace in urlset", bomb(urlset_head, b' ')),
        ("runaway loc", bomb(in_loc, b'a')),
        ("text lines", bomb(b"https://a.com/1\n", b'x')),
    ];
    for (name, bytes) in cases {
        let (result, peak) = peak_while(|| parse_sitemap(&bytes));
        assert!(peak < BOUND, "{name}: peak {peak} bytes");
        match result {
            Ok(sitemap) => assert!(sitemap.truncated(), "{name}: {sitemap:?}"),
            Err(e) => assert_ne!(name, "text lines", "{e}"),
        }
    }
    // The byte cap itself: a well-formed urlset just over 50 MiB, with fewer than
    // 50,000 entries, is cut at the cap and keeps what came before it.
    let mut entry = b"<url><loc>https://a.com/p</loc></url>".to_vec();
    entry.resize(1200, b' ');
    let mut big = b"<urlset>".to_vec();
    while big.len() as u64 <= MAX_DECOMPRESSED_BYTES {
        big.extend_from_slice(&entry);
    }
    big.extend_from_slice(b"</urlset>");
    let packed = gzip(&big);
    drop(big);
    let (result, peak) = peak_while(|| parse_sitemap(&packed));
    let sitemap = result.unwrap();
    assert!(sitemap.truncated());
    let Sitemap::UrlSet { urls, .. } = sitemap else {
        panic!("not a urlset")
    };
    assert!(urls.len() > 40_000 && urls.len() < 50_000, "{}", urls.len());
    assert!(peak < 2 * BOUND, "peak {peak}");
}

/// One route: path, response headers, body.
type Route = (&'static str, Vec<(&'static str, &'static str)>, Vec<u8>);

/// A listener on loopback and its base URL.
async fn bind() -> (TcpListener, Url) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let base = Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
    (listener, base)
}

/// Answers from a fixed table (404 otherwise), recording each path asked.
fn serve(listener: TcpListener, routes: Vec<Route>) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let routes = Arc::new(routes);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let routes = routes.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
                log.lock().unwrap().push(path.clone());
                let (status, headers, body) = match routes.iter().find(|(p, _, _)| *p == path) {
                    Some((_, headers, body)) => ("200 OK", headers.clone(), body.clone()),
                    None => ("404 Not Found", Vec::new(), Vec::new()),
                };
                let mut out = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                for (name, value) in headers {
                    out.push_str(&format!("{name}: {value}\r\n"));
                }
                out.push_str("\r\n");
                let mut bytes = out.into_bytes();
                bytes.extend_from_slice(&body);
                let _ = stream.write_all(&bytes).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    seen
}

/// A urlset of the given (relative) `<loc>`s; discovery resolves them against their file.
fn urlset(locs: &[&str]) -> Vec<u8> {
    let body: String = locs
        .iter()
        .map(|p| format!("<url><loc>{p}</loc></url>"))
        .collect();
    format!(r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</urlset>"#)
        .into_bytes()
}

#[tokio::test]
async fn robots_sitemaps_and_gzip_are_discovered_through_the_guarded_fetcher() {
    let xml = ("Content-Type", "application/xml");
    let index = br#"<sitemapindex>
        <sitemap><loc>/plain.xml</loc></sitemap>
        <sitemap><loc>/files.xml.gz</loc></sitemap>
        <sitemap><loc>/encoded.xml</loc></sitemap>
        <sitemap><loc>/missing.xml</loc></sitemap>
        <sitemap><loc>http://127.0.0.2:9/blocked.xml</loc></sitemap>
    </sitemapindex>"#
        .to_vec();
    let (listener, base) = bind().await;
    let robots = format!(
        "User-agent: *\nAllow: /\nSitemap: /not-absolute.xml\nSitemap: {}\n",
        base.join("/index.xml").unwrap()
    );
    let seen = serve(
        listener,
        vec![
            (
                "/robots.txt",
                vec![("Content-Type", "text/plain")],
                robots.into_bytes(),
            ),
            ("/index.xml", vec![xml], index),
            ("/plain.xml", vec![xml], urlset(&["/a", "/b"])),
            (
                "/files.xml.gz",
                vec![("Content-Type", "application/gzip")],
                gzip(&urlset(&["/c", "/a/"])),
            ),
            (
                "/encoded.xml",
                vec![xml, ("Content-Encoding", "gzip")],
                gzip(&urlset(&["/d"])),
            ),
            ("/sitemap.xml", vec![xml], urlset(&["/b#again"])),
        ],
    );

    let guard = NetworkGuard::from_setting(Some("127.0.0.1")).unwrap();
    let fetcher = Fetcher::new(guard, Arc::new(StaticResolver::new()), DEFAULT_USER_AGENT).unwrap();
    let robots = fetch_robots(&fetcher, &base, Duration::from_secs(5)).await;
    let start = default_sitemap_urls(&base, robots.sitemaps());
    let start_paths: Vec<&str> = start.iter().map(Url::path).collect();
    assert_eq!(start_paths, ["/index.xml", "/sitemap.xml"]);

    let fetches = AtomicUsize::new(0);
    let fetch = |url: Url| {
        let fetcher = fetcher.clone();
        fetches.fetch_add(1, Ordering::SeqCst);
        async move {
            let req = FetchRequest::new(url.as_str(), Duration::from_secs(5));
            let resp = fetcher.fetch(&req).await.ok()?;
            (200..300).contains(&resp.status).then_some(resp.body)
        }
    };
    let found = discover(start, &SitemapFetchPolicy::default(), fetch).await;
    let paths: Vec<String> = found
        .urls
        .iter()
        .map(|u| Url::parse(&u.loc).unwrap().path().to_owned())
        .collect();
    // Breadth first: sitemap.xml (depth 0) before the index's children; /a/ is /a.
    assert_eq!(paths, ["/b", "/a", "/c", "/d"]);
    // index, sitemap.xml, then plain, files, encoded, missing, blocked
    assert_eq!(found.files_fetched, 7);
    assert_eq!(fetches.load(Ordering::SeqCst), 7);
    assert!(!found.truncated);
    let asked = seen.lock().unwrap().clone();
    assert!(!asked.iter().any(|p| p == "/blocked.xml"), "{asked:?}");
}
