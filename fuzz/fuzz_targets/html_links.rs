//! URL discovery from a page (`webdata_content::page_links`, what map and
//! crawl read links with) and the non-HTML path (`text_document`). The first
//! byte picks the page URL and content type; the rest is the body.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use url::Url;
use webdata_content::{page_links, text_document};

const BASES: [&str; 4] = [
    "https://example.com/blog/post.html",
    "http://example.com:8080/a/b/?q=1",
    "https://xn--caf-dma.example/%7Euser/",
    "https://example.com",
];
const TYPES: [&str; 4] = [
    "text/plain",
    "application/json",
    "text/markdown",
    "application/rss+xml",
];

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let html = String::from_utf8_lossy(body);
    let base = Url::parse(BASES[(flags & 3) as usize]).expect("static URL");
    let found = page_links(&html, &base);
    let mut seen = HashSet::new();
    for (url, text) in &found.links {
        assert!(matches!(url.scheme(), "http" | "https"), "{url}");
        assert!(url.fragment().is_none(), "{url}");
        assert!(url.host_str().is_some_and(|h| !h.is_empty()), "{url}");
        assert!(seen.insert(url.as_str().to_owned()), "duplicate link {url}");
        if let Some(t) = text {
            assert!(!t.is_empty() && t.len() <= 200, "{t:?}");
        }
    }
    if let Some(title) = &found.title {
        assert!(!title.is_empty());
    }

    let doc = text_document(&html, TYPES[((flags >> 2) & 3) as usize]);
    assert!(doc.markdown.is_some() && doc.text.is_some());
});
