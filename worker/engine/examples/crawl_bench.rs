//! Benchmarks on loopback (run with `make bench`, release build):
//!
//! 1. Scrape overhead: p50/p95 of `Engine::scrape` (markdown + metadata)
//!    minus p50 of a raw `Fetcher::fetch` of the same 100 KB page.
//! 2. Crawl throughput: a whole site of N generated documentation pages
//!    (~13 KB each, linked in a tree and listed in a sitemap) crawled with
//!    the embedded SQLite store; pages/s, CPU ms per page, peak RSS.
//!
//! Usage: `crawl_bench [pages] [concurrency]` (defaults 2000, 32).

mod common;

/// The binaries' allocator, so the figures are what `webdata` does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use axum::extract::{Path, State};
use axum::response::Html;
use axum::routing::get;
use common::{cpu_ms, peak_rss_mb};
use std::sync::Arc;
use std::time::{Duration, Instant};
use webdata_core::types::{ScrapeOptions, ScrapeRequest};
use webdata_engine::crawl::{CrawlRunner, RunnerConfig};
use webdata_engine::fetch::FetchRequest;
use webdata_engine::guard::NetworkGuard;
use webdata_engine::Engine;

fn doc_page(n: usize, total: usize, kb: usize) -> String {
    let mut body = format!("<h1>Module {n}</h1>");
    let mut i = 0;
    while body.len() < kb * 1024 {
        body.push_str(&format!(
            "<h2>Section {i}</h2><p>The <code>mod{n}.call{i}()</code> function returns the value described here; \
             see the <a href=\"/doc/{}\">related module</a> and the <a href=\"/doc/{}\">next one</a> for details. \
             It accepts an optional argument, raises an error on bad input, and is safe to call from threads.</p>\
             <pre><code class=\"language-python\">x = mod{n}.call{i}(1)\nprint(x)</code></pre>",
            (n * 7 + i) % total,
            (n + 1) % total
        ));
        i += 1;
    }
    let children: String = [2 * n + 1, 2 * n + 2]
        .iter()
        .filter(|c| **c < total)
        .map(|c| format!("<li><a href=\"/doc/{c}\">Module {c}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html lang=\"en\"><head><title>Module {n} — Docs</title></head><body>\
         <nav><a href=\"/doc/0\">Index</a> <a href=\"/doc/1\">Guide</a></nav><main><article>{body}<ul>{children}</ul></article></main>\
         <footer>Docs footer</footer></body></html>"
    )
}

struct Site {
    pages: Vec<String>,
    sitemap: String,
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * p) as usize]
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let total: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let concurrency: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(32);
    let listener = tokio::net::TcpListener::bind("127.0.0.2:0")
        .await
        .expect("bind 127.0.0.2");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let site = Arc::new(Site {
        pages: (0..total).map(|n| doc_page(n, total, 13)).collect(),
        sitemap: {
            let mut s = String::from("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">");
            for n in 0..total {
                s.push_str(&format!("<url><loc>{base}/doc/{n}</loc></url>"));
            }
            s + "</urlset>"
        },
    });
    let big = doc_page(0, 10, 100);
    let app = axum::Router::new()
        .route(
            "/doc/{n}",
            get(
                |State(s): State<Arc<Site>>, Path(n): Path<usize>| async move {
                    Html(s.pages.get(n).cloned().unwrap_or_default())
                },
            ),
        )
        .route(
            "/sitemap.xml",
            get(|State(s): State<Arc<Site>>| async move { s.sitemap.clone() }),
        )
        .route(
            "/big",
            get(move || {
                let b = big.clone();
                async move { Html(b) }
            }),
        )
        .with_state(site);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let guard = NetworkGuard::from_setting(Some("127.0.0.2")).expect("guard");
    let engine = Engine::new(guard).expect("engine");

    // 1. Scrape overhead over a raw fetch, 100 KB page.
    let url = format!("{base}/big");
    let req = ScrapeRequest {
        url: url.clone(),
        options: ScrapeOptions::default(),
    };
    for _ in 0..20 {
        let _ = engine.scrape(&req).await;
    }
    let (mut raw, mut full) = (Vec::new(), Vec::new());
    for _ in 0..300 {
        let t = Instant::now();
        let _ = engine
            .fetcher()
            .fetch(&FetchRequest::new(url.as_str(), Duration::from_secs(10)))
            .await;
        raw.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let _ = engine.scrape(&req).await;
        full.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let (raw50, full50, full95) = (
        pct(&mut raw, 0.5),
        pct(&mut full, 0.5),
        pct(&mut full, 0.95),
    );
    println!("scrape 100 KB page: raw fetch p50 {raw50:.2} ms, scrape p50 {full50:.2} ms (p95 {full95:.2}), added p50 {:.2} ms", full50 - raw50);

    // 2. Whole-site crawl with the embedded store.
    let dir = std::env::temp_dir().join(format!("webdata-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let store = webdata_core::Store::connect(&format!("sqlite://{}/bench.db", dir.display()))
        .await
        .expect("store");
    let org = store
        .create_org(&webdata_core::store::NewOrganization {
            name: "bench".into(),
            credits: 10_000_000,
            ..Default::default()
        })
        .await
        .expect("org");
    let request = serde_json::json!({ "url": format!("{base}/doc/0"), "limit": total, "scrapeOptions": { "formats": ["markdown"] } });
    let id = webdata_core::Store::new_crawl_id();
    store
        .create_crawl(
            &id,
            &org.id,
            None,
            &format!("{base}/doc/0"),
            &request.to_string(),
            total as i64,
        )
        .await
        .expect("crawl");
    let cfg = RunnerConfig {
        concurrency,
        per_host: concurrency,
        idle_poll: Duration::from_millis(20),
        ..Default::default()
    };
    let runner = CrawlRunner::new(store.clone(), engine.clone(), cfg);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let cpu0 = cpu_ms();
    let t0 = Instant::now();
    let task = tokio::spawn(runner.run(stop_rx));
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Ok(Some(c)) = store.get_crawl(&id).await {
            if c.is_finished() {
                let secs = t0.elapsed().as_secs_f64();
                let cpu = cpu_ms() - cpu0;
                println!(
                    "crawl of {} pages ({} completed, {} failed) with SQLite, concurrency {concurrency}: {:.1} s, {:.0} pages/s, {:.2} CPU ms/page (API+worker+site in one process), peak RSS {:.0} MB",
                    total, c.completed, c.failed, secs, c.completed as f64 / secs, cpu / c.completed.max(1) as f64, peak_rss_mb()
                );
                break;
            }
        }
    }
    let _ = stop_tx.send(true);
    let _ = task.await;
    let _ = std::fs::remove_dir_all(&dir);
}
