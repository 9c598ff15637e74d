//! Sitemaps: XML `<urlset>`/`<sitemapindex>`, gzip of either, and text
//! lists (`parse_sitemap`). The input is parsed as fetched (a gzip input
//! goes through the decoder); a plain input is also gzipped, which must
//! read the same.
#![no_main]

use std::io::Write;

use flate2::{write::GzEncoder, Compression};
use libfuzzer_sys::fuzz_target;
use webdata_engine::sitemap::{parse_sitemap, Sitemap, MAX_ENTRIES_PER_FILE};

fn check(sitemap: &Sitemap) {
    match sitemap {
        Sitemap::UrlSet { urls, .. } => assert!(urls.len() <= MAX_ENTRIES_PER_FILE),
        Sitemap::Index { sitemaps, .. } => assert!(sitemaps.len() <= MAX_ENTRIES_PER_FILE),
    }
}

fuzz_target!(|data: &[u8]| {
    let plain = parse_sitemap(data);
    if let Ok(s) = &plain {
        check(s);
    }
    if data.starts_with(&[0x1f, 0x8b]) {
        return;
    }
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(data).expect("in memory");
    let gz = gz.finish().expect("in memory");
    let zipped = parse_sitemap(&gz);
    match (&plain, &zipped) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "gzip changed the result"),
        (Err(a), Err(b)) => assert_eq!(
            std::mem::discriminant(a),
            std::mem::discriminant(b),
            "gzip changed the error: {a} vs {b}"
        ),
        (a, b) => panic!("gzip changed the outcome: {a:?} vs {b:?}"),
    }
});
