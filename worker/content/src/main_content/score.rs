//! Readability's scoring core: paragraph scores, the top candidate, the siblings that belong.

use super::facts::{Page, NONE};
use super::flags::{EXPAND_LINK_DENSITY, EXPAND_SCORE, WEIGHT_CLASSES};
use super::stats::{text_len, Stats};
use super::walk::live_element_children;
use crate::dom::{Dom, Tag};

/// Readability's tag score plus (with `WEIGHT_CLASSES`) the class weight.
fn initial_score(dom: &Dom<'_>, page: &Page, i: usize, flags: u8) -> f32 {
    let tag_score = match dom.tag(i) {
        Some(Tag::Div) => 5.0,
        Some(Tag::Pre | Tag::Td | Tag::Blockquote) => 3.0,
        Some(Tag::Ol | Tag::Ul | Tag::Dl | Tag::Dd | Tag::Dt | Tag::Li | Tag::Form) => -3.0,
        Some(Tag::Block) if dom.name(i) == "address" => -3.0,
        Some(Tag::H(_) | Tag::Th) => -5.0,
        _ => 0.0,
    };
    tag_score + weight(page, i, flags) as f32
}

/// Class weight when classes are weighted in this attempt.
pub(super) fn weight(page: &Page, i: usize, flags: u8) -> i32 {
    if flags & WEIGHT_CLASSES != 0 {
        page.hints[i].weight as i32
    } else {
        0
    }
}

/// A `<div>` Readability turns into a paragraph (no block inside).
fn div_paragraph(dom: &Dom<'_>, page: &Page, i: usize) -> bool {
    dom.tag(i) == Some(Tag::Div) && !page.block_desc[i]
}

/// Paragraph-like for sibling joining: `<p>`, or a `<div>` read as one.
fn is_paragraph(dom: &Dom<'_>, page: &Page, i: usize) -> bool {
    dom.tag(i) == Some(Tag::P) || div_paragraph(dom, page, i) || page.single_p[i]
}

/// Readability's candidate scoring, top candidate and sibling joining.
pub(super) fn grab(
    dom: &Dom<'_>,
    dead: &[bool],
    stats: &Stats,
    page: &Page,
    body: usize,
    flags: u8,
) -> Vec<usize> {
    let n = dom.len();
    let mut score = vec![0f32; n];
    let mut scored = vec![false; n];
    let mut candidates: Vec<usize> = Vec::new();
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
        // (length, commas, first ancestor to credit)
        let para = match tag {
            // A data table is one block of the article, scored like a
            // paragraph (its cells are not paragraphs of their own, or a big
            // table outscores the text around it).
            _ if page.table_above[i] != NONE => None,
            Tag::Table if page.dt_self[i] => Some((
                text_len(stats, i),
                stats.commas[i].min(10),
                dom.nodes[i].parent as usize,
            )),
            Tag::P | Tag::Td | Tag::Pre | Tag::Section | Tag::H(2..=6) => Some((
                text_len(stats, i),
                stats.commas[i],
                dom.nodes[i].parent as usize,
            )),
            Tag::Div if page.single_p[i] => None,
            Tag::Div if !page.block_desc[i] => Some((
                text_len(stats, i),
                stats.commas[i],
                dom.nodes[i].parent as usize,
            )),
            // Text directly in a div with blocks becomes paragraphs of that div.
            Tag::Div if stats.inline_chars[i] > 0 => Some((
                stats.inline_chars[i] + stats.inline_chars[i] / 6,
                stats.inline_commas[i],
                i,
            )),
            _ => None,
        };
        i += 1;
        let Some((len, commas, first)) = para else {
            continue;
        };
        if len < 25 {
            continue;
        }
        let content = 2.0 + commas as f32 + (len / 100).min(3) as f32;
        let mut a = first;
        let mut level = 0;
        while level < 5 && a >= body && a < n {
            if page.single_p[a] {
                // Readability replaced this wrapper by its paragraph.
                a = dom.nodes[a].parent as usize;
                continue;
            }
            if !scored[a] {
                scored[a] = true;
                score[a] = initial_score(dom, page, a, flags);
                candidates.push(a);
            }
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                l => l as f32 * 3.0,
            };
            score[a] += content / divider;
            if a == body {
                break;
            }
            a = dom.nodes[a].parent as usize;
            level += 1;
        }
    }
    // Final scores are scaled by link density.
    for &c in &candidates {
        score[c] *= 1.0 - stats.link_density(c);
    }
    let mut top5: Vec<usize> = Vec::with_capacity(6);
    for &c in &candidates {
        let pos = top5
            .iter()
            .position(|&t| score[c] > score[t])
            .unwrap_or(top5.len());
        if pos < 5 {
            top5.insert(pos, c);
            top5.truncate(5);
        }
    }
    let Some(&first) = top5.first() else {
        return vec![body];
    };
    if first == body {
        return vec![body];
    }
    let mut top = first;
    // Several close candidates share an ancestor: that ancestor is the article.
    let alts: Vec<usize> = top5[1..]
        .iter()
        .copied()
        .filter(|&c| score[c] >= 0.75 * score[top])
        .collect();
    if alts.len() >= 3 {
        let mut a = dom.nodes[top].parent as usize;
        while a > body && a < n {
            if alts
                .iter()
                .filter(|&&c| c != a && dom.contains(a, c))
                .count()
                >= 3
            {
                top = a;
                break;
            }
            a = dom.nodes[a].parent as usize;
        }
    }
    // Never a part of a data table: the whole table.
    while page.table_above[top] != NONE {
        top = page.table_above[top] as usize;
    }
    if !scored[top] {
        scored[top] = true;
        score[top] = initial_score(dom, page, top, flags);
    }
    // A parent scoring higher than the candidate holds more of the article.
    let mut last = score[top];
    let threshold = last / 3.0;
    let mut p = dom.nodes[top].parent as usize;
    while p > body && p < n {
        if !scored[p] {
            p = dom.nodes[p].parent as usize;
            continue;
        }
        if score[p] < threshold {
            break;
        }
        if score[p] > last {
            top = p;
            break;
        }
        last = score[p];
        p = dom.nodes[p].parent as usize;
    }
    // A candidate that is a small part of a scored ancestor scoring at least
    // half as much (a table or one section of a documentation page): the
    // ancestor is the article.
    let (top_score, top_chars) = (score[top], stats.chars[top]);
    let mut a = dom.nodes[top].parent as usize;
    let mut steps = 0;
    while a > body && a < n && steps < 8 {
        if scored[a]
            && score[a] >= EXPAND_SCORE * top_score
            && stats.chars[a] >= 2 * top_chars
            && stats.link_density(a) < EXPAND_LINK_DENSITY
        {
            top = a;
        }
        a = dom.nodes[a].parent as usize;
        steps += 1;
    }
    // An only child: its parent's siblings may hold the rest.
    loop {
        let parent = dom.nodes[top].parent as usize;
        if parent <= body || parent >= n {
            break;
        }
        let own_text = dom.tag(parent) == Some(Tag::Div) && stats.inline_chars[parent] > 0;
        if own_text || live_element_children(dom, dead, parent).take(2).count() != 1 {
            break;
        }
        top = parent;
    }
    if !scored[top] {
        scored[top] = true;
        score[top] = initial_score(dom, page, top, flags);
    }
    siblings_that_belong(dom, dead, stats, page, &score, &scored, top)
}

/// The top candidate plus siblings that look like more of the same article.
fn siblings_that_belong(
    dom: &Dom<'_>,
    dead: &[bool],
    stats: &Stats,
    page: &Page,
    score: &[f32],
    scored: &[bool],
    top: usize,
) -> Vec<usize> {
    let parent = dom.nodes[top].parent as usize;
    if parent >= dom.len() {
        return vec![top];
    }
    let top_score = score[top];
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = dom.attr(top, "class").filter(|c| !c.is_empty());
    live_element_children(dom, dead, parent)
        .filter(|&s| {
            if s == top {
                return true;
            }
            let bonus = if top_class.is_some() && dom.attr(s, "class") == top_class {
                top_score * 0.2
            } else {
                0.0
            };
            if scored[s] && score[s] + bonus >= threshold {
                return true;
            }
            if !is_paragraph(dom, page, s) {
                return false;
            }
            let ld = stats.link_density(s);
            let len = text_len(stats, s);
            (len > 80 && ld < 0.25)
                || (len < 80
                    && stats.chars[s] > 0
                    && ld == 0.0
                    && ends_sentence(&dom.text_of(s, Some(dead))))
        })
        .collect()
}

/// Readability's `/\.( |$)/`: a full stop ending the text or a sentence.
fn ends_sentence(text: &str) -> bool {
    text.ends_with(['.', '。']) || text.contains(". ")
}
