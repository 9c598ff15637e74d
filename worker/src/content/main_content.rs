//! Which parts of a page are content. A selection is a list of subtree roots
//! plus a `dead` flag per node (a dead node's subtree is skipped).
//!
//! Main content, readability-style: drop chrome (nav, header, footer, aside,
//! banners, ads, share and comment widgets, hidden elements); prefer a single
//! dominant `<main>`/`<article>`; otherwise score blocks by their own text
//! (characters, not words, so CJK counts), punctuation, link density and
//! class/id hints, pick the best container and add the siblings that belong.

use scraper::Selector;

use super::dom::{
    class_id_tokens, is_one_of, starts_with_one_of, Common, Dom, Kind, Tag, MAX_DEPTH,
};

/// The kept part of a page.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Subtrees to output, in document order.
    pub roots: Vec<usize>,
    /// Per node: skip this node's subtree.
    pub dead: Vec<bool>,
}

/// How to select.
pub struct Rules<'s> {
    /// Keep only the main content (ignored when `include` is non-empty).
    pub only_main: bool,
    /// Keep only elements matching one of these.
    pub include: &'s [Selector],
    /// Drop elements matching one of these.
    pub exclude: &'s [Selector],
}

/// Class/id words that mark chrome.
const NEGATIVE: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    "menu",
    "menubar",
    "breadcrumb",
    "breadcrumbs",
    "footer",
    "sidebar",
    "widget",
    "cookie",
    "cookies",
    "consent",
    "gdpr",
    "cmp",
    "banner",
    "ad",
    "ads",
    "advert",
    "advertisement",
    "adsbygoogle",
    "sponsor",
    "sponsored",
    "promo",
    "promotion",
    "share",
    "sharing",
    "social",
    "comment",
    "comments",
    "disqus",
    "related",
    "recommended",
    "newsletter",
    "subscribe",
    "subscription",
    "signup",
    "popup",
    "modal",
    "overlay",
    "masthead",
    "toolbar",
    "pagination",
    "pager",
    "skip",
    "outbrain",
    "taboola",
    "onetrust",
    "didomi",
    "usercentrics",
    "cookiebot",
];
/// Prefixes of chrome words (`cookiebanner`, `sidebarleft`, ...).
const NEGATIVE_PREFIX: &[&str] = &[
    "cookie",
    "consent",
    "sidebar",
    "comment",
    "advert",
    "social",
    "newsletter",
    "breadcrumb",
    "navbar",
    "popup",
];
/// Class/id words that mark content.
const POSITIVE: &[&str] = &[
    "content",
    "article",
    "post",
    "entry",
    "main",
    "body",
    "story",
    "text",
    "blog",
    "prose",
    "markdown",
    "docs",
    "documentation",
];
/// Roles that mark chrome.
const CHROME_ROLES: &[&str] = &[
    "navigation",
    "contentinfo",
    "complementary",
    "search",
    "menu",
    "menubar",
    "toolbar",
    "dialog",
    "alertdialog",
    "tooltip",
];

/// Class/id hint: +1 content, -1 chrome, 0 neither.
pub fn class_weight(c: &Common<'_>) -> i32 {
    if c.class.is_empty() && c.id.is_empty() {
        return 0;
    }
    let mut neg = false;
    let mut pos = false;
    for t in class_id_tokens(c.class, c.id) {
        if is_one_of(t, NEGATIVE) || starts_with_one_of(t, NEGATIVE_PREFIX) {
            neg = true;
        } else if is_one_of(t, POSITIVE) {
            pos = true;
        }
    }
    if neg {
        -1
    } else if pos {
        1
    } else {
        0
    }
}

/// Elements that stand for "the content is here".
fn is_content_landmark(tag: Option<Tag>, c: &Common<'_>) -> bool {
    matches!(tag, Some(Tag::Main | Tag::Article)) || c.role == "main" || c.itemprop == "articleBody"
}

/// Hidden by attribute or inline style.
fn is_hidden(c: &Common<'_>) -> bool {
    if c.hidden || c.aria_hidden {
        return true;
    }
    !c.style.is_empty() && {
        let s: String = c
            .style
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        s.contains("display:none") || s.contains("visibility:hidden")
    }
}

/// Per-node text sums over live nodes.
pub struct Stats {
    /// Visible characters in the subtree.
    pub chars: Vec<u32>,
    /// Words in the subtree.
    pub words: Vec<u32>,
    /// Of those, characters inside links.
    pub link_chars: Vec<u32>,
    /// Characters not inside a nested block: the element's own paragraph text.
    pub inline_chars: Vec<u32>,
    /// Commas (any script) in the element's own paragraph text.
    pub inline_commas: Vec<u32>,
}

impl Stats {
    /// Sums text over the live nodes of `dom`, children before parents.
    pub fn compute(dom: &Dom<'_>, dead: &[bool]) -> Stats {
        let n = dom.len();
        let mut in_link = vec![false; n];
        for i in 1..n {
            let p = dom.nodes[i].parent as usize;
            in_link[i] = in_link[p] || dom.tag(p) == Some(Tag::A);
        }
        let mut s = Stats {
            chars: vec![0; n],
            words: vec![0; n],
            link_chars: vec![0; n],
            inline_chars: vec![0; n],
            inline_commas: vec![0; n],
        };
        for i in (1..n).rev() {
            if dead[i] {
                continue;
            }
            if let Kind::Text(_) = dom.nodes[i].kind {
                let f = dom.nodes[i].text;
                s.chars[i] = f.chars;
                s.words[i] = f.words;
                s.inline_chars[i] = f.chars;
                s.inline_commas[i] = f.commas;
                if in_link[i] {
                    s.link_chars[i] = f.chars;
                }
            }
            let p = dom.nodes[i].parent as usize;
            s.chars[p] += s.chars[i];
            s.words[p] += s.words[i];
            s.link_chars[p] += s.link_chars[i];
            if !dom.tag(i).is_some_and(Tag::is_block) {
                s.inline_chars[p] += s.inline_chars[i];
                s.inline_commas[p] += s.inline_commas[i];
            }
        }
        s
    }

    /// Share of the subtree's text that sits in links.
    pub fn link_density(&self, i: usize) -> f32 {
        if self.chars[i] == 0 {
            0.0
        } else {
            self.link_chars[i] as f32 / self.chars[i] as f32
        }
    }
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
fn matches_any(dom: &Dom<'_>, i: usize, sels: &[Selector]) -> bool {
    if dom.nodes[i].depth > MAX_DEPTH {
        return false;
    }
    match dom.nodes[i].kind {
        Kind::Element(el, _) => sels.iter().any(|s| el.matches(s)),
        _ => false,
    }
}

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
        return Selection { roots, dead };
    }
    let body = dom.body();
    if !rules.only_main {
        return Selection {
            roots: vec![body],
            dead,
        };
    }
    main_content(dom, dead, body).0
}

/// The main content with no user selectors, plus the text sums of the page
/// before chrome removal (only never-content nodes dropped), for the quality pass.
pub fn main_with_page_stats(dom: &Dom<'_>) -> (Selection, Stats) {
    main_content(dom, non_content(dom), dom.body())
}

/// The main-content selection, starting from already-dead nodes.
fn main_content(dom: &Dom<'_>, mut dead: Vec<bool>, body: usize) -> (Selection, Stats) {
    let n = dom.len();
    let before = Stats::compute(dom, &dead);
    let body_chars = before.chars[body].max(1) as f32;
    let body_plain = (before.chars[body] - before.link_chars[body]).max(1) as f32;

    // Landmarks and inherited context, parents before children.
    let landmark: Vec<bool> = (0..n)
        .map(|i| dom.tag(i).is_some() && is_content_landmark(dom.tag(i), &dom.common(i)))
        .collect();
    let mut in_landmark = vec![false; n];
    let mut has_landmark = landmark.clone();
    for i in 1..n {
        let p = dom.nodes[i].parent as usize;
        in_landmark[i] = in_landmark[p] || landmark[p];
    }
    for i in (1..n).rev() {
        if has_landmark[i] {
            has_landmark[dom.nodes[i].parent as usize] = true;
        }
    }

    // Chrome removal, outermost first so a removed subtree is not revisited.
    let mut i = 1;
    while i < n {
        if dead[i] {
            i = dom.nodes[i].end as usize;
            continue;
        }
        let Some(tag) = dom.tag(i) else {
            i += 1;
            continue;
        };
        if matches!(tag, Tag::Html | Tag::Body) || landmark[i] {
            i += 1;
            continue;
        }
        let plain = (before.chars[i] - before.link_chars[i]) as f32;
        let bulk = plain > 0.5 * body_plain;
        let protected = has_landmark[i] || bulk;
        let c = &dom.common(i);
        let role = c.role;
        let chrome = match tag {
            Tag::Nav | Tag::Aside | Tag::Footer | Tag::Form => !protected,
            Tag::Header => !in_landmark[i] && !has_landmark[i],
            _ => false,
        } || (CHROME_ROLES.contains(&role) && !protected)
            || (role == "banner" && !in_landmark[i] && !has_landmark[i])
            || (class_weight(c) < 0 && !protected)
            || (is_hidden(c) && before.chars[i] as f32 <= 0.5 * body_chars);
        if chrome {
            dead[i] = true;
            i = dom.nodes[i].end as usize;
        } else {
            i += 1;
        }
    }

    let stats = Stats::compute(dom, &dead);
    let mut roots = landmark_root(dom, &dead, &stats, body)
        .map(|r| vec![r])
        .unwrap_or_else(|| scored_roots(dom, &dead, &stats, body));
    let kept: u32 = roots.iter().map(|&r| stats.chars[r]).sum();
    if kept < 100 || (kept as f32) < 0.1 * stats.chars[body] as f32 {
        roots = vec![body];
    }
    clean_inside(dom, &mut dead, &stats, &roots);
    add_title_heading(dom, &mut dead, &mut roots);
    (Selection { roots, dead }, before)
}

/// A single `<main>` or dominant `<article>` holding most of the text. Inside
/// a `<main>` that holds much more than its dominant `<article>`, the article
/// is preferred (a main that also wraps a live ticker, related links or a
/// sidebar).
fn landmark_root(dom: &Dom<'_>, dead: &[bool], stats: &Stats, body: usize) -> Option<usize> {
    let body_chars = stats.chars[body] as f32;
    let live = |i: &usize| !dead[*i] && stats.chars[*i] > 0;
    let mains: Vec<usize> = (0..dom.len())
        .filter(|&i| dom.tag(i) == Some(Tag::Main) || dom.attr(i, "role") == Some("main"))
        .filter(live)
        .collect();
    if let Some(&m) = mains.iter().max_by_key(|&&m| stats.chars[m]) {
        if stats.chars[m] as f32 >= 0.25 * body_chars {
            // An article that is nearly all of the main: keep the main (a
            // title or byline outside the article comes along).
            let article = dominant_article(dom, dead, stats, m, 0.25)
                .filter(|&a| (stats.chars[a] as f32) < 0.9 * stats.chars[m] as f32);
            return Some(article.unwrap_or(m));
        }
    }
    dominant_article(dom, dead, stats, body, 0.3)
}

/// The outermost `<article>` (or `articleBody`) inside `within` holding at
/// least `share` of its text, with no other article half as large.
fn dominant_article(
    dom: &Dom<'_>,
    dead: &[bool],
    stats: &Stats,
    within: usize,
    share: f32,
) -> Option<usize> {
    let end = dom.nodes[within].end as usize;
    let mut articles: Vec<usize> = (within + 1..end)
        .filter(|&i| {
            dom.tag(i) == Some(Tag::Article) || dom.attr(i, "itemprop") == Some("articleBody")
        })
        .filter(|&i| !dead[i] && stats.chars[i] > 0)
        .collect();
    // Nested articles (comments inside a post) count through their outermost.
    articles.dedup_by(|inner, outer| dom.contains(*outer, *inner));
    articles.sort_by_key(|&a| std::cmp::Reverse(stats.chars[a]));
    let first = *articles.first()?;
    let second = articles.get(1).map_or(0.0, |&a| stats.chars[a] as f32);
    let top = stats.chars[first] as f32;
    (top >= share * stats.chars[within] as f32 && second < 0.5 * top).then_some(first)
}

/// Readability's scoring: paragraphs feed their ancestors.
fn scored_roots(dom: &Dom<'_>, dead: &[bool], stats: &Stats, body: usize) -> Vec<usize> {
    let n = dom.len();
    let mut score = vec![0f32; n];
    let mut scored = vec![false; n];
    let mut i = body;
    let body_end = dom.nodes[body].end as usize;
    while i < body_end {
        if dead[i] {
            i = dom.nodes[i].end as usize;
            continue;
        }
        let is_para = dom.tag(i).is_some_and(Tag::is_block) && stats.inline_chars[i] >= 25;
        if is_para {
            let own = stats.inline_chars[i] as f32;
            let content = 1.0 + stats.inline_commas[i] as f32 + (own / 100.0).min(3.0);
            let mut anc = dom.nodes[i].parent;
            let mut level = 0;
            while level < 5 && anc as usize >= body && (anc as usize) < n {
                let a = anc as usize;
                if !scored[a] {
                    scored[a] = true;
                    score[a] = initial_score(dom, a);
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
                anc = dom.nodes[a].parent;
                level += 1;
            }
        }
        i += 1;
    }
    let final_score = |c: usize| score[c] * (1.0 - stats.link_density(c));
    let mut ranked: Vec<usize> = (body..body_end).filter(|&c| scored[c]).collect();
    ranked.sort_by(|&a, &b| final_score(b).total_cmp(&final_score(a)));
    let Some(&first) = ranked.first() else {
        return vec![body];
    };
    let mut top = first;
    let top_score = final_score(top);

    // Several strong candidates under one ancestor: that ancestor is the article.
    let strong: Vec<usize> = ranked
        .iter()
        .skip(1)
        .take(4)
        .copied()
        .filter(|&c| final_score(c) >= 0.75 * top_score)
        .collect();
    if strong.len() >= 2 {
        let mut a = dom.nodes[top].parent as usize;
        while a > body && a < n {
            if strong.iter().filter(|&&c| dom.contains(a, c)).count() >= 2 {
                top = a;
                break;
            }
            a = dom.nodes[a].parent as usize;
        }
    }
    // Climb while the parent scores higher; wrappers with one child come along.
    let mut last = final_score(top);
    let mut p = dom.nodes[top].parent as usize;
    while p > body && p < n {
        if scored[p] {
            let ps = final_score(p);
            if ps < last / 3.0 {
                break;
            }
            if ps > last {
                top = p;
            }
            last = ps;
        }
        p = dom.nodes[p].parent as usize;
    }
    while top > body {
        let parent = dom.nodes[top].parent as usize;
        if parent <= body || live_element_children(dom, dead, parent).take(2).count() != 1 {
            break;
        }
        top = parent;
    }
    if top == body {
        return vec![body];
    }
    siblings_that_belong(dom, dead, stats, &score, top, final_score(top))
}

/// Start score of a candidate container.
fn initial_score(dom: &Dom<'_>, i: usize) -> f32 {
    let tag_score = match dom.tag(i) {
        Some(Tag::Div | Tag::Article | Tag::Main) => 5.0,
        Some(Tag::Pre | Tag::Td | Tag::Blockquote | Tag::Section) => 3.0,
        Some(Tag::Ol | Tag::Ul | Tag::Dl | Tag::Dd | Tag::Dt | Tag::Li | Tag::Form) => -3.0,
        Some(Tag::H(_) | Tag::Th) => -5.0,
        _ => 0.0,
    };
    tag_score + 25.0 * class_weight(&dom.common(i)) as f32
}

/// Live element children of `p`.
fn live_element_children<'d>(
    dom: &'d Dom<'_>,
    dead: &'d [bool],
    p: usize,
) -> impl Iterator<Item = usize> + 'd {
    let end = dom.nodes[p].end as usize;
    let mut c = p + 1;
    std::iter::from_fn(move || {
        while c < end {
            let cur = c;
            c = dom.nodes[cur].end as usize;
            if !dead[cur] && matches!(dom.nodes[cur].kind, Kind::Element(..)) {
                return Some(cur);
            }
        }
        None
    })
}

/// The top candidate plus siblings that look like more of the same article.
fn siblings_that_belong(
    dom: &Dom<'_>,
    dead: &[bool],
    stats: &Stats,
    score: &[f32],
    top: usize,
    top_score: f32,
) -> Vec<usize> {
    let parent = dom.nodes[top].parent as usize;
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = dom.attr(top, "class").filter(|c| !c.is_empty());
    let mut picked: Vec<usize> = Vec::new();
    let siblings: Vec<usize> = live_element_children(dom, dead, parent).collect();
    for &s in &siblings {
        let belongs = if s == top {
            true
        } else {
            let bonus = if top_class.is_some() && dom.attr(s, "class") == top_class {
                top_score * 0.2
            } else {
                0.0
            };
            let ld = stats.link_density(s);
            let chars = stats.chars[s];
            score[s] * (1.0 - ld) + bonus >= threshold
                || (dom.tag(s) == Some(Tag::P)
                    && ((chars > 80 && ld < 0.25)
                        || (chars > 0 && ld == 0.0 && ends_sentence(&dom.text_of(s, Some(dead))))))
        };
        if belongs {
            picked.push(s);
        }
    }
    // Headings, lists and figures between picked siblings are part of the flow.
    let (Some(&first), Some(&last)) = (picked.first(), picked.last()) else {
        return vec![top];
    };
    siblings
        .into_iter()
        .filter(|&s| {
            picked.binary_search(&s).is_ok()
                || (s > first && s < last && stats.link_density(s) < 0.5)
        })
        .collect()
}

/// Text that ends like a sentence, in Latin or CJK punctuation.
fn ends_sentence(text: &str) -> bool {
    text.ends_with(['.', '!', '?', '。', '！', '？']) || text.contains(". ")
}

/// Removes link farms left inside the chosen content (share bars, tag lists).
fn clean_inside(dom: &Dom<'_>, dead: &mut [bool], stats: &Stats, roots: &[usize]) {
    // Subtrees holding a heading, image or code block are never link farms.
    let mut media = vec![false; dom.len()];
    for j in (1..dom.len()).rev() {
        if matches!(dom.tag(j), Some(Tag::H(_) | Tag::Img | Tag::Pre)) {
            media[j] = true;
        }
        if media[j] {
            media[dom.nodes[j].parent as usize] = true;
        }
    }
    for &r in roots {
        let end = dom.nodes[r].end as usize;
        let mut i = r + 1;
        while i < end {
            if dead[i] {
                i = dom.nodes[i].end as usize;
                continue;
            }
            let farm = matches!(
                dom.tag(i),
                Some(Tag::Div | Tag::Section | Tag::Ul | Tag::Ol)
            ) && stats.chars[i] < 500
                && stats.link_density(i) > 0.65
                && !media[i];
            if farm {
                dead[i] = true;
                i = dom.nodes[i].end as usize;
            } else {
                i += 1;
            }
        }
    }
}

/// Puts the page's `<h1>` in front when the content starts after it. An h1
/// inside removed chrome (a page header) counts only when the `<title>` repeats it.
fn add_title_heading(dom: &Dom<'_>, dead: &mut [bool], roots: &mut Vec<usize>) {
    let Some(&first) = roots.first() else { return };
    let has_h1 = roots
        .iter()
        .any(|&r| (r..dom.nodes[r].end as usize).any(|j| dom.tag(j) == Some(Tag::H(1))));
    if has_h1 {
        return;
    }
    let title = dom
        .find(Tag::Title)
        .map(|t| dom.text_of(t, None).to_lowercase())
        .unwrap_or_default();
    let mut live = vec![true; first];
    for i in 0..first {
        if dead[i] {
            live[i] = false;
        }
        let p = dom.nodes[i].parent as usize;
        if p < i && !live[p] {
            live[i] = false;
        }
        if dom.tag(i) != Some(Tag::H(1)) || roots.iter().any(|&r| dom.contains(r, i)) {
            continue;
        }
        let text = dom.text_of(i, None).to_lowercase();
        let named_in_title = text.chars().count() >= 3 && title.contains(&text);
        if live[i] || named_in_title {
            dead[i] = false;
            roots.insert(0, i);
            return;
        }
    }
}
