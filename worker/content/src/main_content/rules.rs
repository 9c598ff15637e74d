//! The user's selection rules (include/exclude selectors) and the nodes never content.

use scraper::Selector;

use crate::dom::{Dom, Kind, Tag, MAX_DEPTH};

/// How to select.
pub struct Rules<'s> {
    /// Keep only the main content (ignored when `include` is non-empty).
    pub only_main: bool,
    /// Keep only elements matching one of these.
    pub include: &'s [Selector],
    /// Drop elements matching one of these.
    pub exclude: &'s [Selector],
    /// The page URL's slug (see [`url_slug`](super::slug::url_slug)).
    pub slug: Option<&'s str>,
}

/// Nodes that are never content: scripts, styles, head, embedded media.
pub fn non_content(dom: &Dom<'_>) -> Vec<bool> {
    (0..dom.len())
        .map(|i| {
            matches!(
                dom.tag(i),
                Some(
                    Tag::NonContent
                        | Tag::Script
                        | Tag::Noscript
                        | Tag::Iframe
                        | Tag::Input
                        | Tag::Head
                        | Tag::Title
                )
            )
        })
        .collect()
}

/// Whether element `i` (at depth within the cap) matches one of `sels`.
pub(super) fn matches_any(dom: &Dom<'_>, i: usize, sels: &[Selector]) -> bool {
    if dom.nodes[i].depth > MAX_DEPTH {
        return false;
    }
    match dom.nodes[i].kind {
        Kind::Element(el, _) => sels.iter().any(|s| el.matches(s)),
        _ => false,
    }
}
