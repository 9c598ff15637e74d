//! The pass before scoring: hidden nodes, page chrome and Readability's unlikely candidates.

use super::facts::Page;
use super::flags::STRIP_UNLIKELYS;
use super::stats::Stats;
use crate::dom::{Dom, Tag};

/// Drops hidden nodes and (with `STRIP_UNLIKELYS`) unlikely candidates.
pub(super) fn prepass(
    dom: &Dom<'_>,
    base: &[bool],
    before: &Stats,
    page: &Page,
    body: usize,
    flags: u8,
) -> Vec<bool> {
    let mut dead = base.to_vec();
    let body_chars = before.chars[body].max(1) as f32;
    let body_plain = (before.chars[body] - before.link_chars[body]).max(1) as f32;
    let body_end = dom.nodes[body].end as usize;
    let mut i = body + 1;
    while i < body_end {
        if dead[i] {
            i = dom.nodes[i].end as usize;
            continue;
        }
        let Some(tag) = dom.tag(i) else {
            i += 1;
            continue;
        };
        let h = page.hints[i];
        // Our chrome rules, beside Readability's: page furniture by tag, and
        // class words for consent banners, ads and share bars; never a
        // block holding most of the page's text or a content landmark.
        // Readability matches its unlikely words inside ids, and
        // documentation ids name what they document ("EXTRACT",
        // "add_header", "PGTYPES-TIMESTAMP", "PAGEHEADERDATA-TABLE"): on a
        // page with no `<article>` or `<main>`, a block holding code or a
        // data table that is not a navigation bar is never dropped by its
        // class or id.
        let doc_block = page.pre_desc[i]
            || (page.data_table[i] && before.chars[i] >= 200 && before.link_density(i) < 0.25);
        let doc_code = doc_block && !page.has_landmark[body];
        let protected = page.has_landmark[i]
            || (before.chars[i] - before.link_chars[i]) as f32 > 0.5 * body_plain;
        let strict = flags & STRIP_UNLIKELYS != 0;
        let chrome = match tag {
            Tag::Nav | Tag::Aside | Tag::Footer | Tag::Form => !protected,
            _ if h.nav_bar => !protected,
            Tag::Header => !page.in_landmark[i] && !page.has_landmark[i],
            _ => (h.consent || (strict && h.chrome)) && !protected && !doc_code,
        };
        let unlikely = h.unlikely && !page.in_table_code[i] && tag != Tag::A && !doc_code;
        // Page furniture by tag and consent banners go in every attempt (a
        // retry must not bring a cookie banner back around a short
        // article); our ad/newsletter/byline words, like Readability's
        // unlikely words and roles, only in the first: dropping them in the
        // retries too cost 0.024 F1 on the benchmark's non-English pages
        // (Readability's set) and 0.010 on trafilatura's set.
        let drop = (h.hidden && before.chars[i] as f32 <= 0.5 * body_chars)
            || chrome
            || (flags & STRIP_UNLIKELYS != 0 && (unlikely || h.role));
        if drop {
            dead[i] = true;
            i = dom.nodes[i].end as usize;
        } else {
            i += 1;
        }
    }
    dead
}
