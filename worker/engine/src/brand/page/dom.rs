//! Element helpers for reading the page: selectors, text cleaning,
//! logo-ish and wordmark-ish elements, links home, and image URLs.

use scraper::{ElementRef, Selector};
use url::Url;

pub(super) fn sel(s: &str) -> Selector {
    // The selectors below are constants that parse.
    Selector::parse(s).unwrap_or_else(|_| Selector::parse("never-matches").expect("constant"))
}

pub(super) fn clean(s: &str) -> Option<String> {
    let t = s.split_whitespace().collect::<Vec<_>>().join(" ");
    (!t.is_empty()).then(|| t.chars().take(300).collect())
}

pub(super) fn tokens(el: &ElementRef<'_>) -> String {
    let v = el.value();
    format!(
        "{} {} {} {} {}",
        v.attr("class").unwrap_or(""),
        v.attr("id").unwrap_or(""),
        v.attr("alt").unwrap_or(""),
        v.attr("aria-label").unwrap_or(""),
        v.attr("src").unwrap_or("")
    )
    .to_ascii_lowercase()
}

pub(super) fn logo_ish(el: &ElementRef<'_>) -> bool {
    std::iter::once(*el)
        .chain(el.ancestors().filter_map(ElementRef::wrap).take(4))
        .any(|e| {
            let t = tokens(&e);
            t.contains("logo") || t.contains("brand") || t.contains("wordmark")
        })
}

pub(super) fn wordmark_ish(el: &ElementRef<'_>) -> bool {
    std::iter::once(*el)
        .chain(el.ancestors().filter_map(ElementRef::wrap).take(2))
        .any(|e| {
            let t = tokens(&e);
            t.contains("wordmark")
                || t.contains("logotype")
                || t.contains("logo-text")
                || t.contains("text-logo")
        })
}

pub(super) fn inside(el: &ElementRef<'_>, names: &[&str]) -> bool {
    el.ancestors()
        .filter_map(ElementRef::wrap)
        .any(|a| names.contains(&a.value().name()))
}

pub(super) fn home_link(el: &ElementRef<'_>, page: &Url) -> bool {
    el.ancestors().filter_map(ElementRef::wrap).any(|a| {
        if a.value().name() != "a" {
            return false;
        }
        if a.value()
            .attr("rel")
            .is_some_and(|r| r.split_whitespace().any(|t| t == "home"))
        {
            return true;
        }
        a.value()
            .attr("href")
            .and_then(|h| page.join(h.trim()).ok())
            .is_some_and(|u| {
                u.host_str() == page.host_str()
                    && matches!(u.path(), "/" | "")
                    && u.query().is_none()
            })
    })
}

pub(super) fn best_srcset(srcset: &str) -> Option<&str> {
    srcset
        .split(',')
        .filter_map(|c| {
            let mut parts = c.split_whitespace();
            let url = parts.next()?;
            let w = parts
                .next()
                .and_then(|d| d.trim_end_matches(['w', 'x']).parse::<f64>().ok())
                .unwrap_or(1.0);
            Some((url, w))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(u, _)| u)
}

pub(super) fn img_url(el: &ElementRef<'_>, page: &Url) -> Option<Url> {
    let v = el.value();
    let src = v
        .attr("src")
        .filter(|s| !s.trim().is_empty() && !s.starts_with("data:"))
        .or_else(|| v.attr("data-src"))
        .or_else(|| v.attr("srcset").and_then(best_srcset))?;
    let u = page.join(src.trim()).ok()?;
    matches!(u.scheme(), "http" | "https").then_some(u)
}
