//! URL normalisation and link resolution (`urlnorm`): the normal form is a
//! fixed point without a fragment, the dedup key agrees with it, a URL is on
//! its own site, and resolved links are absolute http(s) without fragment.
//! Input lines: a URL, then hrefs resolved against it (and a fixed base).
#![no_main]

use libfuzzer_sys::fuzz_target;
use url::Url;
use webdata_engine::urlnorm::{
    dedup_key, dedup_key_of_normalized, normalize, normalize_percent_escapes, registrable_domain,
    resolve_link, same_site,
};

fn check(url: &Url) {
    let n = normalize(url);
    assert_eq!(normalize(&n), n, "normalize is not idempotent for {url}");
    assert!(n.fragment().is_none());
    assert_eq!(dedup_key(url), dedup_key_of_normalized(&n));
    if matches!(n.scheme(), "http" | "https")
        && n.host_str()
            .is_some_and(|h| !h.trim_end_matches('.').is_empty())
    {
        assert!(same_site(url, url, false), "{url}");
        assert!(same_site(url, &n, true), "{url} vs {n}");
    }
    if let Some(host) = url.host_str() {
        let _ = registrable_domain(host);
    }
}

fn check_link(link: &Url) {
    assert!(matches!(link.scheme(), "http" | "https"), "{link}");
    assert!(link.fragment().is_none(), "{link}");
    check(link);
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or_default();
    let escaped = normalize_percent_escapes(first);
    assert_eq!(normalize_percent_escapes(&escaped), escaped);

    let base = Url::parse("https://example.com/a/b.html?x=1").expect("static URL");
    let page = Url::parse(first).ok();
    if let Some(url) = &page {
        check(url);
    }
    for href in std::iter::once(first).chain(lines.take(8)) {
        if let Some(link) = resolve_link(&base, href) {
            check_link(&link);
        }
        if let Some(link) = page.as_ref().and_then(|p| resolve_link(p, href)) {
            check_link(&link);
        }
    }
});
