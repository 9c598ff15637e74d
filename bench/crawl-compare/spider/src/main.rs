//! spider + htmd side of `bench/crawl-compare` (see ../run.sh).
//!
//! Crawls one site from a start URL with the `spider` crate (its defaults:
//! same host only, robots.txt as spider's default has it), converts every
//! fetched HTML page to markdown with htmd on the blocking pool, keeps the
//! markdown in memory, and prints pages, wall seconds, pages/s, CPU ms per
//! page (utime+stime from /proc/self/stat) and peak RSS (VmHWM).
//!
//! Usage: `spider-htmd-bench <start-url> [concurrency] [urls-out-file] [fetch-only]`
//! (concurrency default 32; urls-out-file `-` for none). With `fetch-only`
//! the pages are counted and dropped, no markdown: spider's fetch rate
//! alone. Only point it at a loopback server.

use spider::tokio;
use spider::website::Website;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

fn cpu_ms() -> f64 {
    // utime + stime from /proc/self/stat (clock ticks, 100 Hz on Linux).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    ticks * 10.0
}

fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let start = args
        .get(1)
        .cloned()
        .expect("usage: spider-htmd-bench <start-url> [concurrency] [urls-out]");
    let host = start
        .split("://")
        .nth(1)
        .and_then(|r| r.split(['/', ':']).next())
        .unwrap_or("");
    assert!(
        host.starts_with("127.") || host == "localhost",
        "refusing to crawl a non-loopback host: {host}"
    );
    let concurrency: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(32);
    let urls_out = args.get(3).cloned().filter(|p| p != "-");
    let fetch_only = args.get(4).is_some_and(|m| m == "fetch-only");

    let mut website = Website::new(&start);
    website.with_concurrency_limit(Some(concurrency));
    // Capacity well above what the receiver can fall behind by: it only
    // hands each page to the blocking pool.
    let mut rx = website.subscribe(16_384);

    let pages = Arc::new(AtomicUsize::new(0));
    let non_ok = Arc::new(AtomicUsize::new(0));
    let md_bytes = Arc::new(AtomicUsize::new(0));
    let html_bytes = Arc::new(AtomicUsize::new(0));
    let kept: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));
    let urls: Arc<Mutex<Vec<String>>> = Arc::new(Mutex::new(Vec::new()));

    let cpu0 = cpu_ms();
    let t0 = Instant::now();
    let recv = {
        let (pages, non_ok, md_bytes, html_bytes, kept, urls) = (
            pages.clone(),
            non_ok.clone(),
            md_bytes.clone(),
            html_bytes.clone(),
            kept.clone(),
            urls.clone(),
        );
        tokio::spawn(async move {
            let mut lagged = 0u64;
            let mut jobs = Vec::new();
            loop {
                match rx.recv().await {
                    Ok(page) => {
                        if !page.status_code.is_success() {
                            non_ok.fetch_add(1, Ordering::Relaxed);
                        }
                        urls.lock().unwrap().push(format!(
                            "{} {}",
                            page.get_url(),
                            page.status_code.as_u16()
                        ));
                        let (pages, md_bytes, html_bytes, kept) = (
                            pages.clone(),
                            md_bytes.clone(),
                            html_bytes.clone(),
                            kept.clone(),
                        );
                        if fetch_only {
                            html_bytes.fetch_add(page.get_html_bytes_u8().len(), Ordering::Relaxed);
                            pages.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        jobs.push(tokio::task::spawn_blocking(move || {
                            let html = page.get_html();
                            html_bytes.fetch_add(html.len(), Ordering::Relaxed);
                            let md = htmd::convert(&html).unwrap_or_default();
                            md_bytes.fetch_add(md.len(), Ordering::Relaxed);
                            pages.fetch_add(1, Ordering::Relaxed);
                            kept.lock().unwrap().push(md);
                        }));
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => lagged += n,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                }
            }
            for j in jobs {
                let _ = j.await;
            }
            lagged
        })
    };
    website.crawl().await;
    website.unsubscribe();
    let lagged = recv.await.unwrap_or(0);
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_ms() - cpu0;
    let n = pages.load(Ordering::Relaxed);
    println!(
        "spider{}: {n} pages ({} non-2xx, {lagged} lost to channel lag), concurrency {concurrency}: {secs:.2} s, {:.0} pages/s, {:.2} CPU ms/page, peak RSS {:.0} MB, html {:.1} MB, markdown kept {:.1} MB in {} docs",
        if fetch_only { " (fetch only)" } else { "+htmd" },
        non_ok.load(Ordering::Relaxed),
        n as f64 / secs,
        cpu / n.max(1) as f64,
        peak_rss_mb(),
        html_bytes.load(Ordering::Relaxed) as f64 / 1e6,
        md_bytes.load(Ordering::Relaxed) as f64 / 1e6,
        kept.lock().unwrap().len(),
    );
    println!(
        "RESULT tool={} pages={n} secs={secs:.3} pps={:.1} cpu_ms_per_page={:.3} peak_rss_mb={:.1}",
        if fetch_only { "spider-fetch" } else { "spider" },
        n as f64 / secs,
        cpu / n.max(1) as f64,
        peak_rss_mb()
    );
    if let Some(path) = urls_out {
        let mut u = urls.lock().unwrap().clone();
        u.sort();
        let _ = std::fs::write(path, u.join("\n") + "\n");
    }
}
