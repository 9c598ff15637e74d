//! How fast a full-size sitemap parses: 50,000 URLs with `<lastmod>`, plain
//! and gzipped. Run with `cargo run --release -p webdata-engine --example sitemap_speed`.

use std::io::Write;
use std::time::Instant;

use flate2::write::GzEncoder;
use flate2::Compression;
use webdata_engine::sitemap::{parse_sitemap, Sitemap};

const URLS: usize = 50_000;
const ROUNDS: usize = 5;

fn main() {
    let mut xml = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
"#,
    );
    for i in 0..URLS {
        xml.push_str(&format!(
            "  <url>\n    <loc>https://www.example.com/docs/section-{}/page-{i}?lang=en&amp;v=2</loc>\n    <lastmod>2024-05-{:02}T10:00:00+00:00</lastmod>\n    <changefreq>weekly</changefreq>\n  </url>\n",
            i % 97,
            i % 28 + 1
        ));
    }
    xml.push_str("</urlset>\n");
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    if enc.write_all(xml.as_bytes()).is_err() {
        eprintln!("gzip failed");
        return;
    }
    let Ok(gz) = enc.finish() else {
        eprintln!("gzip failed");
        return;
    };

    for (name, bytes) in [("plain", xml.as_bytes()), ("gzip", gz.as_slice())] {
        let mut best = f64::MAX;
        for _ in 0..ROUNDS {
            let start = Instant::now();
            let parsed = parse_sitemap(bytes);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            match parsed {
                Ok(Sitemap::UrlSet { urls, .. }) if urls.len() == URLS => {}
                other => {
                    eprintln!("unexpected result: {other:?}");
                    return;
                }
            }
            best = best.min(ms);
        }
        let mb = xml.len() as f64 / 1e6;
        println!(
            "{name}: {URLS} URLs, {mb:.1} MB XML ({} bytes input) parsed in {best:.1} ms (best of {ROUNDS}), {:.0} MB/s",
            bytes.len(),
            mb / (best / 1000.0)
        );
    }
}
