//! Whole-site crawl of an external loopback site (used by
//! `bench/crawl-compare/run.sh`, the side-by-side with spider + htmd).
//!
//! Crawls `<start-url>` with `CrawlRunner` and the embedded SQLite store the
//! way a user's `POST /v1/crawl {url, limit, scrapeOptions: {formats:
//! ["markdown"]}}` would (every other option at its default: sitemap
//! include, removeBoilerplate, robots), and prints pages completed/failed,
//! wall seconds, pages/s, CPU ms per page (utime+stime of this process from
//! /proc/self/stat) and peak RSS (VmHWM). Unlike `crawl_bench`, the site is
//! served by another process, so the CPU figure is the crawler's alone.
//!
//! Usage: `crawl_site <start-url> [concurrency] [limit] [urls-out-file]`
//! (defaults 32, 100000). The network guard allows 127.0.0.2 only.

mod common;

/// The binaries' allocator, so the figures are what `webdata` does.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use common::{cpu_ms, peak_rss_mb};
use std::time::{Duration, Instant};
use webdata_engine::crawl::{CrawlRunner, RunnerConfig};
use webdata_engine::guard::NetworkGuard;
use webdata_engine::Engine;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let start = args
        .get(1)
        .cloned()
        .expect("usage: crawl_site <start-url> [concurrency] [limit] [urls-out]");
    let concurrency: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(32);
    let limit: i64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let urls_out = args.get(4).cloned();

    let guard = NetworkGuard::from_setting(Some("127.0.0.2")).expect("guard");
    let engine = Engine::new(guard).expect("engine");
    let dir = std::env::temp_dir().join(format!("webdata-crawl-site-{}", std::process::id()));
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
    let request = serde_json::json!({ "url": start, "limit": limit, "scrapeOptions": { "formats": ["markdown"] } });
    let id = webdata_core::Store::new_crawl_id();
    store
        .create_crawl(&id, &org.id, None, &start, &request.to_string(), limit)
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
    let (completed, failed, secs, cpu) = loop {
        tokio::time::sleep(Duration::from_millis(5)).await;
        if let Ok(Some(c)) = store.get_crawl(&id).await {
            if c.is_finished() {
                break (
                    c.completed,
                    c.failed,
                    t0.elapsed().as_secs_f64(),
                    cpu_ms() - cpu0,
                );
            }
        }
    };
    let rss = peak_rss_mb();
    let _ = stop_tx.send(true);
    let _ = task.await;

    // After the clock: the stored documents' URLs and markdown size.
    let (mut urls, mut md_bytes, mut after) = (Vec::new(), 0usize, 0i64);
    loop {
        let batch = store
            .crawl_documents(&id, after, 500)
            .await
            .expect("documents");
        if batch.is_empty() {
            break;
        }
        for (seq, url, doc) in batch {
            after = seq;
            let v = serde_json::from_str::<serde_json::Value>(&doc).unwrap_or_default();
            md_bytes += v["markdown"].as_str().map_or(0, str::len);
            let status = v["metadata"]["statusCode"].as_i64().unwrap_or(0);
            urls.push(format!("{url} {status}"));
        }
    }
    println!(
        "webdata: {completed} pages completed, {failed} failed, {} documents stored, concurrency {concurrency}, SQLite: {secs:.2} s, {:.0} pages/s, {:.2} CPU ms/page, peak RSS {rss:.0} MB, markdown {:.1} MB",
        urls.len(),
        completed as f64 / secs,
        cpu / completed.max(1) as f64,
        md_bytes as f64 / 1e6,
    );
    println!(
        "RESULT tool=webdata pages={completed} failed={failed} secs={secs:.3} pps={:.1} cpu_ms_per_page={:.3} peak_rss_mb={rss:.1}",
        completed as f64 / secs,
        cpu / completed.max(1) as f64,
    );
    if let Some(path) = urls_out {
        urls.sort();
        let _ = std::fs::write(path, urls.join("\n") + "\n");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
