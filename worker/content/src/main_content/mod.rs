//! Which parts of a page are content. A selection is a list of subtree roots
//! plus a `dead` flag per node (a dead node's subtree is skipped).
//!
//! Main content follows Mozilla Readability's `_grabArticle` on the flat DOM
//! (nothing is mutated: removals are `dead` flags): drop hidden nodes and
//! unlikely candidates (class/id and role), score paragraphs into their
//! ancestors, take the top candidate (or a close ancestor), join the
//! siblings that belong, then clean the result (`_prepArticle`: asides,
//! footers, share widgets, and tables/lists/divs/forms that look like
//! chrome). A result under 500 characters is retried with fewer filters;
//! when nothing reads like an article, the main landmark or body minus the
//! chrome is kept. Every pass is linear in the page size.

mod caption;
mod clean;
mod facts;
mod fallback;
mod flags;
mod furniture;
mod pipeline;
mod prepass;
mod rules;
mod score;
mod selection;
mod slug;
mod stats;
mod title;
mod walk;
mod words;

pub use rules::{non_content, Rules};
pub use selection::Selection;
pub use slug::url_slug;
pub use stats::Stats;

use crate::dom::Dom;
use pipeline::main_content;
use rules::matches_any;
use slug::other_articles;

/// Selects the content of the page according to `rules`.
pub fn select(dom: &Dom<'_>, rules: &Rules<'_>) -> Selection {
    let mut dead = non_content(dom);
    if !rules.exclude.is_empty() {
        for (i, d) in dead.iter_mut().enumerate() {
            if !*d && matches_any(dom, i, rules.exclude) {
                *d = true;
            }
        }
    }
    if !rules.include.is_empty() {
        let mut roots = Vec::new();
        let mut i = 0;
        while i < dom.len() {
            if dead[i] {
                i = dom.nodes[i].end as usize;
            } else if matches_any(dom, i, rules.include) {
                roots.push(i);
                i = dom.nodes[i].end as usize;
            } else {
                i += 1;
            }
        }
        return Selection {
            roots,
            dead,
            captions: Vec::new(),
            title: None,
        };
    }
    let body = dom.body();
    if !rules.only_main {
        return Selection {
            roots: vec![body],
            dead,
            captions: Vec::new(),
            title: None,
        };
    }
    if let Some(slug) = rules.slug {
        other_articles(dom, &mut dead, slug);
    }
    main_content(dom, dead, body).0
}

/// The main content with no user selectors, plus the text sums of the page
/// before chrome removal (only never-content nodes dropped), for the quality pass.
/// `slug` is the last segment of the page's URL path: on a page that
/// holds several articles (the next stories loaded below this one), the
/// article it names is the one to read.
pub fn main_with_page_stats(dom: &Dom<'_>, slug: Option<&str>) -> (Selection, Stats) {
    let mut dead = non_content(dom);
    if let Some(slug) = slug {
        other_articles(dom, &mut dead, slug);
    }
    main_content(dom, dead, dom.body())
}
