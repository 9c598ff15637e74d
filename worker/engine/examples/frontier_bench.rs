//! Lease latency over a 100,000-URL frontier (issue 5): enqueue 100k URLs
//! into one running crawl, then drain it the way workers do — lease a batch
//! of 16, commit each page — and report lease latency (p50/p95/max) per
//! tenth of the drain, so a latency that grows with the frontier shows up.
//!
//! `frontier_bench [urls] [database-url]` (defaults 100000, a fresh SQLite
//! file). Pass `postgres://…` to measure Postgres.

use std::time::Instant;
use webdata_core::store::{NewOrganization, NewUrl, PageCommit};
use webdata_core::Store;

fn pct(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let total: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let url = args.get(2).cloned().unwrap_or_else(|| {
        let dir =
            std::env::temp_dir().join(format!("webdata-frontier-bench-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        format!("sqlite://{}/bench.db", dir.display())
    });
    let store = Store::connect(&url).await.expect("store");
    let org = store
        .create_org(&NewOrganization {
            name: format!("bench-{}", std::process::id()),
            credits: 10_000_000,
            ..Default::default()
        })
        .await
        .expect("org");
    let id = Store::new_crawl_id();
    store
        .create_crawl(
            &id,
            &org.id,
            None,
            "https://bench.test/",
            r#"{"url":"https://bench.test/"}"#,
            total as i64,
        )
        .await
        .expect("crawl");
    assert!(store.start_crawl(&id).await.expect("start"));

    let t = Instant::now();
    for chunk in (0..total).collect::<Vec<_>>().chunks(1000) {
        let urls: Vec<NewUrl> = chunk
            .iter()
            .map(|i| NewUrl {
                key: format!("https://bench.test/p/{i}"),
                url: format!("https://bench.test/p/{i}"),
                depth: (i % 7) as i64,
                source: "link".into(),
            })
            .collect();
        store.enqueue_urls(&id, &urls).await.expect("enqueue");
    }
    println!(
        "{} ({}): enqueued {total} URLs in {:.1} s",
        if url.starts_with("postgres") {
            "Postgres"
        } else {
            "SQLite"
        },
        url.split('?').next().unwrap_or(""),
        t.elapsed().as_secs_f64()
    );

    let mut done = 0usize;
    let mut tenth = Vec::new();
    let mut all = Vec::new();
    let step = (total / 10).max(1);
    let t = Instant::now();
    loop {
        let l0 = Instant::now();
        let leases = store
            .lease_urls("bench", None, 16, 60_000)
            .await
            .expect("lease");
        let ms = l0.elapsed().as_secs_f64() * 1000.0;
        if leases.is_empty() {
            break;
        }
        tenth.push(ms);
        all.push(ms);
        for lease in &leases {
            match store
                .commit_page(lease, "{}", &[], true)
                .await
                .expect("commit")
            {
                PageCommit::Stored { .. } => done += 1,
                other => panic!("unexpected {other:?}"),
            }
        }
        if done / step > (done - leases.len()) / step || done >= total {
            let remaining = total - done;
            println!(
                "  {:>3}% drained ({remaining:>6} left): lease of 16 p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
                done * 100 / total,
                pct(&mut tenth.clone(), 0.5),
                pct(&mut tenth.clone(), 0.95),
                pct(&mut tenth.clone(), 1.0)
            );
            tenth.clear();
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "drained {done} URLs in {secs:.1} s ({:.0} leases+commits/s); lease p50 {:.2} ms, p95 {:.2} ms over the whole drain",
        done as f64 / secs,
        pct(&mut all.clone(), 0.5),
        pct(&mut all, 0.95)
    );
}
