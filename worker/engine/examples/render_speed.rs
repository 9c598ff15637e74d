//! Render-tier speed on this machine: p50/p95 of 30 renders of a simple
//! loopback page with a warm pool, and pages per minute through one session.
//!
//! `cargo run --release -p webdata-engine --example render_speed`
//! (needs chromium and chromium-driver: `make test` installs them).

use std::time::{Duration, Instant};

use axum::response::Html;
use axum::routing::get;
use axum::Router;
use url::Url;
use webdata_engine::guard::NetworkGuard;
use webdata_engine::render::{BrowserConfig, BrowserPool, RenderRequest};

const PAGE: &str = r#"<!doctype html><html><head><title>Speed</title></head><body>
<h1>Speed test</h1><p id="js"></p>
<script>document.getElementById('js').textContent = 'rendered at ' + Date.now();</script>
</body></html>"#;

const RUNS: usize = 30;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

async fn pool(sessions: usize) -> BrowserPool {
    let mut cfg = BrowserConfig::new(NetworkGuard::from_setting(Some("127.0.0.2")).unwrap());
    cfg.max_sessions = sessions;
    cfg.acquire_timeout = Duration::from_secs(30);
    BrowserPool::start(cfg)
        .await
        .expect("chromium and chromedriver are installed (run `make test`)")
}

/// Renders `runs` times in a row; returns each latency and the wall time.
async fn run(pool: &BrowserPool, url: &Url, runs: usize) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(runs);
    for _ in 0..runs {
        let req = RenderRequest::new(url.clone(), Duration::from_secs(20));
        let rendered = pool.render(&req).await.expect("render");
        assert!(rendered.html.contains("rendered at"));
        latencies.push(rendered.elapsed);
    }
    (latencies, started.elapsed())
}

#[tokio::main]
async fn main() {
    let listener = tokio::net::TcpListener::bind("127.0.0.2:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route("/", get(|| async { Html(PAGE) }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = Url::parse(&format!("http://{addr}/")).unwrap();

    for sessions in [2usize, 1] {
        let pool = pool(sessions).await;
        let cold = Instant::now();
        run(&pool, &url, 1).await;
        let cold = cold.elapsed();
        run(&pool, &url, 4).await; // warm every session
        let (mut latencies, wall) = run(&pool, &url, RUNS).await;
        latencies.sort();
        let pages_per_minute = RUNS as f64 / wall.as_secs_f64() * 60.0;
        println!(
            "max_sessions={sessions}: first render (browser start) {:>5} ms; warm x{RUNS}: p50 {:>4} ms, p95 {:>4} ms, max {:>4} ms; sequential {:.0} pages/min; sessions started {}",
            cold.as_millis(),
            percentile(&latencies, 0.50).as_millis(),
            percentile(&latencies, 0.95).as_millis(),
            latencies.last().map_or(0, |d| d.as_millis()),
            pages_per_minute,
            pool.sessions_started(),
        );
        pool.shutdown().await;
    }
}
