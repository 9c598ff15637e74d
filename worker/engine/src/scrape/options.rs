//! What the request's options turn into: the `Accept-Language` header and
//! the scrape-cache key.

use webdata_core::types::ScrapeRequest;

/// `Accept-Language` from `location.languages` (first is preferred).
pub fn accept_language(languages: &[String]) -> Option<String> {
    let langs: Vec<&str> = languages
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        .take(10)
        .collect();
    if langs.is_empty() {
        return None;
    }
    Some(
        langs
            .iter()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    l.to_string()
                } else {
                    format!("{l};q={:.1}", (10 - i.min(9)) as f32 / 10.0)
                }
            })
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// The scrape-cache key: the URL plus every option that changes the
/// output (`timeout` and `maxAge` do not; `ignoreRobots` does, so a page
/// fetched past robots.txt is never served to a caller who respects it).
pub fn cache_key(req: &ScrapeRequest) -> String {
    use sha2::{Digest, Sha256};
    let mut o = req.options.clone();
    o.timeout = None;
    o.max_age = None;
    o.formats = Some(o.formats());
    o.only_main_content = Some(o.only_main_content());
    o.chunk_size = Some(o.chunk_size());
    o.tier = Some(o.tier());
    o.ignore_robots = Some(o.ignore_robots.unwrap_or(false));
    o.site_markdown = Some(o.site_markdown.unwrap_or(false));
    let url = url::Url::parse(req.url.trim())
        .map(|mut u| {
            u.set_fragment(None);
            u.to_string()
        })
        .unwrap_or_else(|_| req.url.trim().to_string());
    let mut h = Sha256::new();
    h.update(url.as_bytes());
    h.update(b"\n");
    h.update(serde_json::to_string(&o).unwrap_or_default().as_bytes());
    hex::encode(h.finalize())
}
