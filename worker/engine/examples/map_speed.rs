//! How fast a map answers for a site with a 50,000-URL sitemap, and how much
//! of our own CPU it takes once the sitemap is fetched. The site is served by
//! a separate process (`python3 -m http.server` on 127.0.0.2), so this
//! process's CPU time is the map's alone.
//!
//! Run with `cargo run --release -p webdata-engine --example map_speed`.

mod common;

use common::cpu_ms;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use webdata_core::types::{MapRequest, SitemapMode};
use webdata_engine::fetch::FetchRequest;
use webdata_engine::guard::NetworkGuard;
use webdata_engine::map;
use webdata_engine::Engine;

const URLS: usize = 50_000;
const ROUNDS: usize = 5;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn site(dir: &std::path::Path, port: u16) -> std::io::Result<()> {
    let base = format!("http://127.0.0.2:{port}");
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for i in 0..URLS {
        xml.push_str(&format!(
            "  <url><loc>{base}/docs/section-{}/page-{i}?lang=en&amp;v=2</loc><lastmod>2024-05-{:02}</lastmod></url>\n",
            i % 97,
            i % 28 + 1
        ));
    }
    xml.push_str("</urlset>\n");
    std::fs::write(dir.join("sitemap.xml"), xml)?;
    std::fs::write(
        dir.join("robots.txt"),
        "User-agent: *\nDisallow: /private/\n",
    )?;
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><html><head><title>Docs</title></head><body><a href=\"/docs/section-1/page-1?lang=en&v=2\">One</a> <a href=\"/about.html\">About</a></body></html>",
    )?;
    Ok(())
}

#[tokio::main]
async fn main() {
    let dir = std::env::temp_dir().join(format!("webdata-map-speed-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("temp dir: {e}");
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.2:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(18_765);
    if let Err(e) = site(&dir, port) {
        eprintln!("writing the site: {e}");
        return;
    }
    let child = Command::new("python3")
        .args([
            "-m",
            "http.server",
            "--bind",
            "127.0.0.2",
            &port.to_string(),
            "--directory",
        ])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = child else {
        eprintln!("python3 is needed to serve the site");
        return;
    };
    let _server = Server(child);
    let guard = NetworkGuard::from_setting(Some("127.0.0.2")).expect("guard");
    let engine = Engine::new(guard).expect("engine");
    let base = format!("http://127.0.0.2:{port}");
    // Wait for the server.
    for _ in 0..100 {
        let req = FetchRequest::new(format!("{base}/robots.txt"), Duration::from_secs(2));
        if engine.fetcher().fetch(&req).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The sitemap fetch alone: what any map of this site has to pay.
    let mut fetch_wall = f64::MAX;
    let mut fetch_cpu = f64::MAX;
    for _ in 0..ROUNDS {
        let (t, c) = (Instant::now(), cpu_ms());
        let req = FetchRequest::new(format!("{base}/sitemap.xml"), Duration::from_secs(20));
        let size = engine
            .fetcher()
            .fetch(&req)
            .await
            .map(|r| r.body.len())
            .unwrap_or(0);
        fetch_wall = fetch_wall.min(t.elapsed().as_secs_f64() * 1000.0);
        fetch_cpu = fetch_cpu.min(cpu_ms() - c);
        assert!(size > 1_000_000, "sitemap not served");
    }
    println!("raw fetch of the {URLS}-URL sitemap: {fetch_wall:.1} ms wall, {fetch_cpu:.0} ms CPU (best of {ROUNDS})");

    let cases: [(&str, MapRequest); 4] = [
        (
            "sitemap only, limit 5000",
            MapRequest {
                url: format!("{base}/"),
                sitemap: Some(SitemapMode::Only),
                ..Default::default()
            },
        ),
        (
            "include (start page + sitemap), limit 5000",
            MapRequest {
                url: format!("{base}/"),
                ..Default::default()
            },
        ),
        (
            "include, limit 100000",
            MapRequest {
                url: format!("{base}/"),
                limit: Some(100_000),
                ..Default::default()
            },
        ),
        (
            "include, search \"section 42 page\", limit 100000",
            MapRequest {
                url: format!("{base}/"),
                limit: Some(100_000),
                search: Some("section 42 page".into()),
                ..Default::default()
            },
        ),
    ];
    for (name, req) in cases {
        let mut walls = Vec::new();
        let mut cpus = Vec::new();
        let mut last = None;
        for _ in 0..ROUNDS {
            let (t, c) = (Instant::now(), cpu_ms());
            let out = map::map(&engine, &req, map::MAX_FETCHES).await;
            walls.push(t.elapsed().as_secs_f64() * 1000.0);
            cpus.push(cpu_ms() - c);
            last = Some(out);
        }
        walls.sort_by(f64::total_cmp);
        cpus.sort_by(f64::total_cmp);
        match last {
            Some(Ok(out)) => println!(
                "{name}: {} links of {} found, {} fetches; median {:.0} ms wall, {:.0} ms CPU; after the sitemap fetch: ~{:.0} ms CPU",
                out.links.len(),
                out.found,
                out.fetches,
                walls[ROUNDS / 2],
                cpus[ROUNDS / 2],
                (cpus[ROUNDS / 2] - fetch_cpu).max(0.0)
            ),
            Some(Err(e)) => println!("{name}: failed: {}", e.message),
            None => {}
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
