//! The main-content pipeline: Readability's attempts, the landmark fallback, finishing passes.

use super::caption::take_captions;
use super::clean::clean;
use super::facts::Page;
use super::fallback::{adds_mostly_links, doc_page_wins, kept, main_landmark};
use super::flags::{ALL_FLAGS, CHAR_THRESHOLD, CLEAN_CONDITIONALLY, NEARLY_EMPTY, WEIGHT_CLASSES};
use super::furniture::{drop_remnants, strip_boilerplate};
use super::prepass::prepass;
use super::score::grab;
use super::selection::Selection;
use super::stats::Stats;
use super::title::{drop_kicker, take_title};
use crate::dom::Dom;

/// One attempt's result.
struct Attempt {
    roots: Vec<usize>,
    dead: Vec<bool>,
    len: u32,
}

/// The main-content selection, starting from already-dead nodes.
pub(super) fn main_content(dom: &Dom<'_>, base: Vec<bool>, body: usize) -> (Selection, Stats) {
    let before = Stats::compute(dom, &base);
    let page = Page::read(dom, &base, &before);
    let mut best: Option<Attempt> = None;
    // The first attempt's prepass and sums (every filter on), which the
    // landmark fallback below starts from too.
    let mut all_flags: Option<(Vec<bool>, Stats)> = None;
    for flags in [
        ALL_FLAGS,
        WEIGHT_CLASSES | CLEAN_CONDITIONALLY,
        CLEAN_CONDITIONALLY,
        0,
    ] {
        let a = attempt(dom, &base, &before, &page, body, flags, &mut all_flags);
        if a.len >= CHAR_THRESHOLD {
            best = Some(a);
            break;
        }
        // Readability keeps the longest; a later attempt (fewer filters)
        // must say clearly more, or a short page gets its chrome back.
        if best.as_ref().is_none_or(|b| a.len >= 2 * b.len.max(50)) {
            best = Some(a);
        }
    }
    if let Some(b) = best.as_mut() {
        // Nothing reads like an article (a table of contents, a list of
        // links, a short note), or a documentation page (no `<article>` or
        // `<main>`) where the best-scoring block is one part (a long
        // parameter list beside the synopsis and the examples): the page's
        // main landmark or body, minus the chrome, when it says clearly more.
        let short = b.len < CHAR_THRESHOLD;
        if short || !page.has_landmark[body] {
            let (mut dead, stats) = all_flags.take().unwrap_or_else(|| {
                let dead = prepass(dom, &base, &before, &page, body, ALL_FLAGS);
                let stats = Stats::compute(dom, &dead);
                (dead, stats)
            });
            let root = main_landmark(dom, &page, &dead, &stats, body);
            let len = clean(dom, &mut dead, &stats, &page, &[root], WEIGHT_CLASSES);
            let better = (short
                && len >= 2 * b.len.max(50)
                && (root != body
                    || b.len < NEARLY_EMPTY
                    || !adds_mostly_links(
                        &kept(dom, &page, &b.dead, &b.roots),
                        &kept(dom, &page, &dead, &[root]),
                    )))
                || (!page.has_landmark[body]
                    && doc_page_wins(
                        &kept(dom, &page, &b.dead, &b.roots),
                        &kept(dom, &page, &dead, &[root]),
                        root != body,
                    ));
            if better {
                *b = Attempt {
                    roots: vec![root],
                    dead,
                    len,
                };
            }
        }
    }
    let Some(Attempt {
        roots, mut dead, ..
    }) = best
    else {
        return (
            Selection {
                roots: vec![body],
                dead: base,
                captions: Vec::new(),
                title: None,
            },
            before,
        );
    };
    strip_boilerplate(dom, &mut dead, &before, &page, &roots);
    drop_remnants(dom, &mut dead, &before, &page, &roots);
    drop_kicker(dom, &mut dead, &before, &roots);
    // As markdown writes it: a no-break space is a space.
    let title = take_title(dom, &before, &page, &mut dead, &roots)
        .map(|t| t.replace('\u{a0}', " ").trim().to_string());
    let captions = take_captions(dom, &mut dead, &before, &page, &roots);
    (
        Selection {
            roots,
            dead,
            captions,
            title,
        },
        before,
    )
}

/// One pass of Readability's `_grabArticle` with `flags`. The pass with
/// every filter on leaves its prepass and sums in `keep`.
fn attempt(
    dom: &Dom<'_>,
    base: &[bool],
    before: &Stats,
    page: &Page,
    body: usize,
    flags: u8,
    keep: &mut Option<(Vec<bool>, Stats)>,
) -> Attempt {
    let mut dead = prepass(dom, base, before, page, body, flags);
    let stats = Stats::compute(dom, &dead);
    let roots = grab(dom, &dead, &stats, page, body, flags);
    let pre = (flags == ALL_FLAGS).then(|| dead.clone());
    let len = clean(dom, &mut dead, &stats, page, &roots, flags);
    if let Some(pre) = pre {
        *keep = Some((pre, stats));
    }
    Attempt { roots, dead, len }
}
