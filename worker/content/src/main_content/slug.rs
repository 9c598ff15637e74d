//! The page URL's slug, and the other stories on a page that holds several articles.

use crate::dom::{Dom, Tag};

/// The last segment of a URL path that reads like a story's slug
/// ("wir-haben-bereits-die-zusage", "turpitude-et-architecture.html" ->
/// without the extension): at least 12 characters with a hyphen or an
/// underscore. Anything else (`/`, `/index.html`, `/1927`) is no slug.
pub fn url_slug(path: &str) -> Option<&str> {
    let last = last_segment_stem(path);
    (last.len() >= 12 && last.contains(['-', '_'])).then_some(last)
}

/// The last segment of a URL or path, trailing slashes and extension dropped.
fn last_segment_stem(path: &str) -> &str {
    let last = path.trim_end_matches('/').rsplit('/').next().unwrap_or("");
    last.split_once('.').map_or(last, |(stem, _)| stem)
}

/// When the page holds several `<article>`s side by side and exactly one
/// of them names `slug` in its id or its URL attributes, the others are
/// marked dead (they are other stories).
pub(super) fn other_articles(dom: &Dom<'_>, dead: &mut [bool], slug: &str) {
    const ATTRS: &[&str] = &[
        "id",
        "data-url",
        "data-href",
        "data-permalink",
        "data-canonical",
    ];
    let mut outer = Vec::new();
    let mut i = 0;
    while i < dom.len() {
        if dom.tag(i) == Some(Tag::Article) {
            outer.push(i);
            i = dom.nodes[i].end as usize;
        } else {
            i += 1;
        }
    }
    if outer.len() < 2 {
        return;
    }
    let names = |a: usize| {
        ATTRS.iter().any(|n| {
            dom.attr(a, n).is_some_and(|v| {
                v.eq_ignore_ascii_case(slug)
                    || (n.starts_with("data-") && last_segment_stem(v).eq_ignore_ascii_case(slug))
            })
        })
    };
    let mut named = outer.iter().filter(|&&a| names(a));
    if let (Some(&keep), None) = (named.next(), named.next()) {
        for &a in &outer {
            if a != keep {
                dead[a] = true;
            }
        }
    }
}
