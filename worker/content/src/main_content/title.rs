//! The title heading, taken out of the content, with the kicker above it and its bylines.

use super::facts::Page;
use super::furniture::is_home_link_heading;
use super::stats::Stats;
use super::walk::{first_live, holds_media, live_element_children};
use crate::dom::{Dom, Tag};

/// Drops a kicker: the short line of links right above the title heading
/// (a section name, "SPACE"; "News · War · Video"). Walks up from the
/// first live `<h1>` of the selection, at most four levels and not past
/// its root, dropping the previous siblings that are at most 60
/// characters and at least 80% link text, nearest first; the first other
/// sibling with text ends the walk.
pub(super) fn drop_kicker(dom: &Dom<'_>, dead: &mut [bool], before: &Stats, roots: &[usize]) {
    let first_h1 = roots
        .iter()
        .find_map(|&r| first_live(dom, dead, r, Tag::H(1)).map(|h| (r, h)));
    let Some((r, h)) = first_h1 else { return };
    let mut a = h;
    for _ in 0..4 {
        if a == r {
            return;
        }
        let p = dom.nodes[a].parent as usize;
        let before_a: Vec<usize> = live_element_children(dom, dead, p)
            .take_while(|&s| s < a)
            .collect();
        for &s in before_a.iter().rev() {
            let n = before.chars[s];
            if n == 0 {
                continue;
            }
            if n > 60 || (before.link_chars[s] as f32) < 0.8 * n as f32 {
                return;
            }
            dead[s] = true;
        }
        a = p;
    }
}

/// Takes the page's title heading out of the content and returns its
/// text. The markdown is the body; the title is `metadata.title` (always
/// returned) and the top of every chunk's `headingPath`. Readability.js
/// drops a heading that repeats the title too, trafilatura reports the
/// title apart, and no ground truth of the benchmarks here has it.
///
/// The title heading is the first live `<h1>` of the selection that the
/// `<title>` names (see [`title_names`]). When a later, longer h1 is also
/// named, the earlier one is the site's name ("The GiveWell Blog" over
/// "September 2018 open thread", in "September 2018 open thread - The
/// GiveWell Blog"): it goes and the later one is the title. With no h1 in
/// the selection, a named `<h2>` that is its first heading (a WordPress
/// theme's linked post title). An h1 the `<title>` does not name is a
/// heading of the content and stays.
///
/// When the content starts after the page's h1, nothing is taken; that h1
/// names the chunks when the `<title>` repeats it, or when it is live and
/// shares a word with the `<title>`; one that links the home page is the
/// site's name (see [`is_home_link_heading`](super::furniture::is_home_link_heading)).
pub(super) fn take_title(
    dom: &Dom<'_>,
    before: &Stats,
    page: &Page,
    dead: &mut [bool],
    roots: &[usize],
) -> Option<String> {
    let first = *roots.first()?;
    let title = dom
        .find(Tag::Title)
        .map(|t| dom.text_of(t, None).to_lowercase())
        .unwrap_or_default();
    // The live h1s of the selection and its first live heading; whether it
    // has any h1, live or not.
    let mut h1s: Vec<(usize, String)> = Vec::new();
    let mut first_heading = None;
    let mut any_h1 = false;
    for &r in roots {
        let end = dom.nodes[r].end as usize;
        let mut j = r;
        while j < end {
            any_h1 |= dom.tag(j) == Some(Tag::H(1));
            if dead[j] {
                j = dom.nodes[j].end as usize;
                continue;
            }
            if let Some(Tag::H(level)) = dom.tag(j) {
                first_heading.get_or_insert((j, level));
                if level == 1 {
                    h1s.push((j, dom.text_of(j, Some(dead))));
                }
                j = dom.nodes[j].end as usize;
                continue;
            }
            j += 1;
        }
    }
    let named: Vec<&(usize, String)> = h1s.iter().filter(|h| title_names(&title, &h.1)).collect();
    let longest_after = |k: usize| {
        let n = named[k].1.chars().count();
        !named[k + 1..].iter().any(|l| l.1.chars().count() > n)
    };
    if let Some(k) = (0..named.len()).find(|&k| longest_after(k)) {
        for site in &named[..k] {
            dead[site.0] = true;
        }
        dead[named[k].0] = true;
        drop_header_bylines(dom, before, page, dead, roots, named[k].0);
        return Some(named[k].1.clone());
    }
    if let (true, Some((h2, 2))) = (h1s.is_empty(), first_heading) {
        let t = dom.text_of(h2, Some(dead));
        if title_names(&title, &t) {
            dead[h2] = true;
            drop_header_bylines(dom, before, page, dead, roots, h2);
            return Some(t);
        }
    }
    if any_h1 {
        return None;
    }
    // The content starts after the page's h1: that h1 names the chunks.
    let mut live = vec![true; first];
    for i in 0..first {
        if dead[i] {
            live[i] = false;
        }
        let p = dom.nodes[i].parent as usize;
        if p < i && !live[p] {
            live[i] = false;
        }
        if dom.tag(i) != Some(Tag::H(1))
            || roots.iter().any(|&r| dom.contains(r, i))
            || is_home_link_heading(dom, before, i)
        {
            continue;
        }
        let shown = dom.text_of(i, None);
        let text = shown.to_lowercase();
        let named_in_title = text.chars().count() >= 3 && title.contains(&text);
        // A live h1 that shares no word with the `<title>` names a section
        // or the site ("Aktuelle Artikel" over "„Wir haben bereits die
        // Zusage“"), not this page.
        let shares_a_word = title.trim().is_empty()
            || text
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w.chars().count() >= 3 && title.contains(w));
        if (live[i] && shares_a_word) || named_in_title {
            return Some(shown);
        }
    }
    None
}

/// The byline and date lines of an article's `<header>` (the title
/// heading `t` is in it, up to three levels up, and it holds at most 1,000
/// characters): its live children of fewer than eight words (sixteen
/// with a `<time>` in them), with no heading and no picture ("By Brigit
/// Katz", "JANIE HAR Nov. 20, 2019 Updated: …", a breadcrumb, share
/// buttons). A dek, a kicker heading and the pictures stay: readers and
/// two of the four ground truths here keep them.
fn drop_header_bylines(
    dom: &Dom<'_>,
    before: &Stats,
    page: &Page,
    dead: &mut [bool],
    roots: &[usize],
    t: usize,
) {
    let Some(&r) = roots.iter().find(|&&r| dom.contains(r, t)) else {
        return;
    };
    // The header may be the root itself (a sibling joined to the article).
    let is_header = |a: usize| dom.tag(a).is_some() && dom.name(a) == "header";
    let mut a = dom.nodes[t].parent as usize;
    for _ in 0..3 {
        if a < r || is_header(a) {
            break;
        }
        a = dom.nodes[a].parent as usize;
    }
    if a < r || !is_header(a) || before.chars[a] > 1000 {
        return;
    }
    let kids: Vec<usize> = live_element_children(dom, dead, a).collect();
    for c in kids {
        if !page.head_desc[c]
            && !matches!(dom.tag(c), Some(Tag::H(_) | Tag::Img))
            && !holds_media(dom, c)
            && is_byline(dom, dead, c)
        {
            dead[c] = true;
        }
    }
}

/// A line of fewer than eight words, or sixteen with a `<time>` in it (a
/// dateline: "JANIE HAR Nov. 20, 2019 Updated: Nov. 20, 2019 1:35 a.m.").
fn is_byline(dom: &Dom<'_>, dead: &[bool], c: usize) -> bool {
    let end = dom.nodes[c].end as usize;
    let has_time = (c..end).any(|k| dom.tag(k).is_some() && dom.name(k) == "time");
    let words = dom.text_of(c, Some(dead)).split_whitespace().count();
    words < if has_time { 16 } else { 8 }
}

/// Whether the `<title>` (lower case) names a heading: it holds the
/// heading's text, or at least 3/4 of the heading's words of two or more
/// characters ("What Is Ownership?" in "What is Ownership? - The Rust
/// Programming Language"; "Three Cases of Plague Diagnosed in China" in
/// "Three Cases of Plague Diagnosed in China | Smart News | Smithsonian").
fn title_names(title: &str, heading: &str) -> bool {
    let h = heading.trim().to_lowercase();
    if h.chars().count() < 3 || title.is_empty() {
        return false;
    }
    if title.contains(&h) {
        return true;
    }
    let words: Vec<&str> = h
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .collect();
    let found = words.iter().filter(|w| title.contains(*w)).count();
    !words.is_empty() && 4 * found >= 3 * words.len()
}
