//! Tests of the scrape options: site markdown check, cache key, Accept-Language.

use super::{accept_language, cache_key};
use webdata_core::types::ScrapeRequest;

fn req(v: serde_json::Value) -> ScrapeRequest {
    serde_json::from_value(v).unwrap_or_else(|_| ScrapeRequest {
        url: String::new(),
        options: Default::default(),
    })
}

#[test]
fn site_markdown_quality_check() {
    let good = format!("# Title\n\n{}", "word ".repeat(60));
    assert!(super::site_markdown_passes(200, &good));
    assert!(!super::site_markdown_passes(404, &good), "error pages fail");
    assert!(
        !super::site_markdown_passes(200, "# Title\n\nfew words"),
        "too thin"
    );
    let html = format!("<!doctype html><html>{}</html>", "word ".repeat(60));
    assert!(!super::site_markdown_passes(200, &html), "HTML in disguise");
    assert!(
        !super::site_markdown_passes(200, &"word ".repeat(80)),
        "no structure"
    );
}

#[test]
fn cache_key_ignores_timeout_and_fragment_but_not_formats() {
    let a = cache_key(&req(
        serde_json::json!({"url": "https://a.test/x#top", "timeout": 5000}),
    ));
    let b = cache_key(&req(
        serde_json::json!({"url": "https://a.test/x", "maxAge": 0}),
    ));
    assert_eq!(a, b);
    let defaults = cache_key(&req(
        serde_json::json!({"url": "https://a.test/x", "formats": ["markdown", "metadata"]}),
    ));
    assert_eq!(a, defaults, "explicit defaults equal implicit ones");
    let c = cache_key(&req(
        serde_json::json!({"url": "https://a.test/x", "formats": ["html"]}),
    ));
    assert_ne!(a, c);
    let d = cache_key(&req(
        serde_json::json!({"url": "https://a.test/x", "ignoreRobots": true}),
    ));
    assert_ne!(a, d);
}

#[test]
fn accept_language_weights_follow_order() {
    assert_eq!(
        accept_language(&["de-DE".into(), "de".into(), "en".into()]).as_deref(),
        Some("de-DE,de;q=0.9,en;q=0.8")
    );
    assert_eq!(accept_language(&["bad value".into()]), None);
    assert_eq!(accept_language(&[]), None);
}
