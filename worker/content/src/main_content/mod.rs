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

use std::sync::LazyLock;

use regex::RegexSet;
use scraper::Selector;

use super::dom::{push_collapsed, Common, Dom, Kind, Tag, MAX_DEPTH};

/// The kept part of a page.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Subtrees to output, in document order.
    pub roots: Vec<usize>,
    /// Per node: skip this node's subtree.
    pub dead: Vec<bool>,
    /// Figure captions taken out of the text (see [`take_captions`]), each
    /// with the image it describes, sorted by image: markdown writes the
    /// caption as that image's title.
    pub captions: Vec<(usize, String)>,
    /// The title heading taken out of the content (see [`take_title`]),
    /// for the top of the chunks' `headingPath`.
    pub title: Option<String>,
}

/// How to select.
pub struct Rules<'s> {
    /// Keep only the main content (ignored when `include` is non-empty).
    pub only_main: bool,
    /// Keep only elements matching one of these.
    pub include: &'s [Selector],
    /// Drop elements matching one of these.
    pub exclude: &'s [Selector],
    /// The page URL's slug (see [`url_slug`]).
    pub slug: Option<&'s str>,
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
    /// Commas (any script) in the subtree.
    pub commas: Vec<u32>,
    /// Kept spaces in the subtree (see [`super::dom::TextFacts::spaces`]).
    pub spaces: Vec<u32>,
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
            commas: vec![0; n],
            spaces: vec![0; n],
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
                s.commas[i] = f.commas;
                s.spaces[i] = f.spaces;
                if in_link[i] {
                    s.link_chars[i] = f.chars;
                }
            }
            let p = dom.nodes[i].parent as usize;
            s.chars[p] += s.chars[i];
            s.words[p] += s.words[i];
            s.link_chars[p] += s.link_chars[i];
            s.commas[p] += s.commas[i];
            s.spaces[p] += s.spaces[i];
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

/// A class with a `code` word: `code-header`, `sourceCode`, `code_block`.
fn class_names_code(class: &str) -> bool {
    class.len() >= 4
        && class
            .split(|c: char| c.is_ascii_whitespace() || c == '-' || c == '_')
            .any(|w| w.eq_ignore_ascii_case("code") || w.eq_ignore_ascii_case("sourcecode"))
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
fn other_articles(dom: &Dom<'_>, dead: &mut [bool], slug: &str) {
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

/// Readability's passes, as flags an attempt may drop when its result is short.
const STRIP_UNLIKELYS: u8 = 1;
const WEIGHT_CLASSES: u8 = 2;
const CLEAN_CONDITIONALLY: u8 = 4;
/// See the climb in `grab`.
const EXPAND_SCORE: f32 = 0.25;
const EXPAND_LINK_DENSITY: f32 = 0.15;
/// See `doc_page_wins`.
const DOC_MORE_TEXT: f32 = 1.25;
const DOC_LINK_DENSITY: f32 = 0.25;
const ALL_FLAGS: u8 = STRIP_UNLIKELYS | WEIGHT_CLASSES | CLEAN_CONDITIONALLY;
/// A selection shorter than this (a heading or two) says nothing: an index
/// page whose content is its lists of links takes the body minus chrome.
const NEARLY_EMPTY: u32 = 100;
/// A result shorter than this (rendered characters) is retried with fewer flags.
const CHAR_THRESHOLD: u32 = 500;

/// Class/id patterns, Readability's (`REGEXPS` in Readability.js), matched
/// case-insensitively on `class` and `id` separately.
const UNLIKELY: usize = 0;
const MAYBE: usize = 1;
const POSITIVE_RE: usize = 2;
const NEGATIVE_RE: usize = 3;
const SHARE: usize = 4;
const CHROME: usize = 5;
const CONSENT: usize = 6;
const BOILER: usize = 7;
const SR_ONLY: usize = 8;
static HINT_SET: LazyLock<Option<RegexSet>> = LazyLock::new(|| {
    RegexSet::new([
        r"(?i)-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote",
        r"(?i)and|article|body|column|content|main|shadow",
        r"(?i)article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story",
        r"(?i)-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget",
        r"(?i)(\b|_)(share|sharedaddy)(\b|_)",
        // Ours, on whole words: consent banners, ads, newsletters.
        r"(?i)(^|[^a-z])(cookies?|cookie-?banner|consent|cmp|onetrust|didomi|usercentrics|cookiebot|ad|ads|advert|advertisement|adsbygoogle|newsletter|taboola|outbrain|teaser|byline|timestamp|forum|author-?(box|bio|info))([^a-z]|$)",
        // Of those, consent banners (dropped in every attempt).
        r"(?i)(^|[^a-z])(cookies?|cookie-?banner|consent|cmp|onetrust|didomi|usercentrics|cookiebot)([^a-z]|$)",
        // Ours, after the selection (trafilatura's discard words): related
        // stories, share and tag bars, author boxes, comment links, photo credits.
        r"(?i)related|share|sharing|social|(^|[^a-z])tags?([^a-z]|$)|tag-?links|tagcloud|author-?(box|bio|info|details|card|wrap|name|s)|post-author|img-author|about-?(the-?)?author|byline|newsletter|comments?-(link|count|title)|next-?(post|story)|prev-?post|breadcrumb|entry-meta|post-meta|article-meta|post-?info|by-line|upsell|credit|copyright|(^|[^a-z])print|entry-tools|wishlist|(^|[^a-z])loading|navbox|noprint|hatnote|(^|[^a-z])meta([^a-z]|$)|recommend|more-?articles|interesting-?articles|read-?more|trending",
        // Text for screen readers only ("Image caption", "Skip to content",
        // "(opens in a new tab)"), by the class names sites use for it.
        r"(?i)(^|\s)(sr-only|visually-?hidden|off-?screen|screen-?reader-(text|only)|screenreader-only|u-visually-hidden|element-invisible)(\s|$)",
    ])
    .ok()
});
/// Roles Readability drops.
const UNLIKELY_ROLES: &[&str] = &[
    "menu",
    "menubar",
    "complementary",
    "navigation",
    "alert",
    "alertdialog",
    "dialog",
];

/// What an element's attributes say, read once per page.
#[derive(Clone, Copy, Default)]
struct Hint {
    /// Readability's class weight: +-25 for the class, +-25 for the id.
    weight: i8,
    /// Unlikely candidate by class/id (and not "maybe" a candidate).
    unlikely: bool,
    /// Chrome by our own class/id words (consent, ads, newsletters).
    chrome: bool,
    /// Class or id names a consent (cookie) banner.
    consent: bool,
    /// A share widget by class/id.
    share: bool,
    /// Boilerplate inside an article by class/id (see `BOILER`).
    boiler: bool,
    /// Boilerplate by an id that is only such a word ("meta", "byline"):
    /// counts when the element holds no heading (documentation sections
    /// take their ids from their headings).
    boiler_id: bool,
    /// Hidden by attribute or inline style.
    hidden: bool,
    /// A role Readability drops.
    role: bool,
    /// A navigation bar by its markup (see [`names_navigation`]):
    /// dropped in every attempt, like `<nav>`.
    nav_bar: bool,
    /// A heading or block whose class names code (see [`class_names_code`]).
    code_class: bool,
    /// A figure caption by its markup: `<figcaption>`, or a class naming a
    /// caption (see [`is_caption`]).
    caption: bool,
}

/// Facts about the page that no attempt changes.
struct Page {
    hints: Vec<Hint>,
    /// Has a descendant Readability treats as a block (so a `<div>` is not a paragraph).
    block_desc: Vec<bool>,
    /// Holds a `<pre>`.
    pre_desc: Vec<bool>,
    /// Holds a heading.
    head_desc: Vec<bool>,
    /// A `<div>` wrapping a single `<p>` and no text: stands for that paragraph.
    single_p: Vec<bool>,
    /// Inside a `<table>`, `<code>` or `<pre>` (never an unlikely candidate).
    in_table_code: Vec<bool>,
    /// Inside a data table, `<code>` or `<figure>` (never cleaned away).
    keep_inside: Vec<bool>,
    /// Inside a `<figure>`.
    in_figure: Vec<bool>,
    /// Inside an `<article>` or `<main>`.
    in_landmark: Vec<bool>,
    /// Holds an `<article>` or `<main>`.
    has_landmark: Vec<bool>,
    /// A data table, or holds one (never cleaned away).
    data_table: Vec<bool>,
    /// A data table.
    dt_self: Vec<bool>,
    /// The nearest data table above the node, `NONE` if there is none.
    table_above: Vec<u32>,
    /// Inside a heading or block whose class names code: rustdoc's
    /// `code-header` signatures (`impl Clone for TryFromIntError`). Every
    /// type in them is a link, and those links are not navigation: they do
    /// not make a block link-heavy in the conditional clean.
    in_signature: Vec<bool>,
    /// Some element is a caption by its markup (see [`Hint::caption`]).
    any_caption: bool,
    /// Holds a field for an e-mail address (see [`is_signup_box`]).
    email_desc: Vec<bool>,
}

/// No such node.
const NONE: u32 = u32::MAX;

impl Page {
    fn read(dom: &Dom<'_>, dead: &[bool], before: &Stats) -> Page {
        let n = dom.len();
        let mut hints = vec![Hint::default(); n];
        let set = HINT_SET.as_ref();
        for (i, h) in hints.iter_mut().enumerate() {
            if dead[i] || dom.tag(i).is_none() {
                continue;
            }
            let c = dom.common(i);
            h.hidden = is_hidden(&c);
            h.role = !c.role.is_empty()
                && (UNLIKELY_ROLES.contains(&c.role) || matches!(c.role, "search" | "contentinfo"));
            // DocBook's Prev / Up / Home / Next bars: `<table summary=
            // "Navigation header">` (and "footer").
            h.nav_bar = dom.tag(i) == Some(Tag::Table)
                && dom.attr(i, "summary").is_some_and(names_navigation);
            h.code_class =
                matches!(dom.tag(i), Some(Tag::H(_) | Tag::Div)) && class_names_code(c.class);
            h.caption = match dom.tag(i) {
                None | Some(Tag::Caption) => false,
                Some(Tag::Block) if dom.name(i) == "figcaption" => true,
                _ => c
                    .class
                    .as_bytes()
                    .windows(7)
                    .any(|w| w.eq_ignore_ascii_case(b"caption")),
            };
            let Some(set) = set else { continue };
            let mut w = 0i8;
            let mut unlikely = false;
            let mut maybe = false;
            // Page builders' structural classes say nothing about the
            // content: Elementor wraps every text block in
            // `elementor-widget-*` (Readability's negative "widget").
            let builder;
            // A modifier saying a block holds ads ("o-section--has-ads")
            // does not make the block an ad.
            let class = if c.class.len() >= 6
                && (c.class.contains("elementor") || c.class.contains("has-ad"))
            {
                builder = c
                    .class
                    .split_ascii_whitespace()
                    .filter(|t| !t.starts_with("elementor") && !t.contains("has-ad"))
                    .collect::<Vec<_>>()
                    .join(" ");
                builder.as_str()
            } else {
                c.class
            };
            for (v, is_class) in [(class, true), (c.id, false)] {
                if v.is_empty() {
                    continue;
                }
                let m = set.matches(v);
                if m.matched(NEGATIVE_RE) {
                    w -= 25;
                }
                if m.matched(POSITIVE_RE) {
                    w += 25;
                }
                unlikely |= m.matched(UNLIKELY);
                maybe |= m.matched(MAYBE);
                h.share |= m.matched(SHARE);
                h.chrome |= m.matched(CHROME);
                h.consent |= m.matched(CONSENT);
                // Class only: documentation ids name what they document
                // ("multiprocessing.shared_memory.SharedMemory", "credits").
                h.boiler |= is_class && m.matched(BOILER);
                h.hidden |= is_class && m.matched(SR_ONLY);
                h.boiler_id |= !is_class && is_boiler_id(v);
            }
            h.weight = w;
            // A heading whose class says it is one ("subheader",
            // "section-header") is not a page header: CNN's section headings.
            if unlikely && matches!(dom.tag(i), Some(Tag::H(2..=6))) {
                let words = |v: &str| v.to_ascii_lowercase().replace("header", "");
                unlikely = [&words(class), &words(c.id)]
                    .iter()
                    .any(|v| set.matches(v).matched(UNLIKELY));
            }
            h.unlikely = unlikely && !maybe;
        }
        // Children before parents: block descendants, single-<p> wrappers, table facts.
        let mut block_desc = vec![false; n];
        let mut pre_desc = vec![false; n];
        let mut head_desc = vec![false; n];
        let mut email_desc = vec![false; n];
        let mut children = vec![0u8; n];
        let mut only_p = vec![false; n];
        let mut own_text = vec![false; n];
        let mut th_like = vec![false; n];
        let mut has_table = vec![false; n];
        let mut rows = vec![0u32; n];
        let mut cols = vec![0u32; n];
        let mut dt_self = vec![false; n];
        let mut holds_dt = vec![false; n];
        for i in (1..n).rev() {
            let p = dom.nodes[i].parent as usize;
            match dom.tag(i) {
                None => {
                    if dom.nodes[i].text.chars > 0 {
                        own_text[p] = true;
                    }
                    continue;
                }
                Some(tag) => {
                    if matches!(
                        tag,
                        Tag::Blockquote
                            | Tag::Dl
                            | Tag::Div
                            | Tag::Img
                            | Tag::Ol
                            | Tag::P
                            | Tag::Pre
                            | Tag::Table
                            | Tag::Ul
                    ) || block_desc[i]
                    {
                        block_desc[p] = true;
                    }
                    if tag == Tag::Pre || pre_desc[i] {
                        pre_desc[p] = true;
                    }
                    if matches!(tag, Tag::H(_)) || head_desc[i] {
                        head_desc[p] = true;
                    }
                    if email_desc[i] || (tag == Tag::Input && is_email_field(dom, i)) {
                        email_desc[p] = true;
                    }
                    if !dead[i] {
                        children[p] = children[p].saturating_add(1);
                        only_p[p] = tag == Tag::P;
                    }
                    if tag == Tag::Table {
                        let dt = is_data_table(dom, i, th_like[i], has_table[i], rows[i], cols[i]);
                        dt_self[i] = dt;
                        holds_dt[i] |= dt;
                        has_table[p] = true;
                        th_like[p] |= th_like[i];
                        holds_dt[p] |= holds_dt[i];
                        continue;
                    }
                    th_like[p] |= th_like[i]
                        || tag == Tag::Th
                        || matches!(dom.name(i), "thead" | "tfoot" | "col" | "colgroup");
                    has_table[p] |= has_table[i];
                    holds_dt[p] |= holds_dt[i];
                    if tag == Tag::Tr {
                        rows[p] += 1;
                        cols[p] = cols[p].max(rows[i]);
                    } else if matches!(tag, Tag::Td | Tag::Th) {
                        let span = dom
                            .attr(i, "colspan")
                            .and_then(|v| v.trim().parse::<u32>().ok())
                            .unwrap_or(1)
                            .clamp(1, 1000);
                        // A row's `rows` slot counts its cells.
                        rows[p] += span;
                    } else {
                        rows[p] += rows[i];
                        cols[p] = cols[p].max(cols[i]);
                    }
                }
            }
        }
        let single_p: Vec<bool> = (0..n)
            .map(|i| {
                dom.tag(i) == Some(Tag::Div)
                    && children[i] == 1
                    && only_p[i]
                    && !own_text[i]
                    && before.link_density(i) < 0.25
            })
            .collect();
        let mut in_table_code = vec![false; n];
        let mut keep_inside = vec![false; n];
        let mut in_figure = vec![false; n];
        let mut table_above = vec![NONE; n];
        let mut in_signature = vec![false; n];
        let is_landmark = |i: usize| matches!(dom.tag(i), Some(Tag::Article | Tag::Main));
        let mut in_landmark = vec![false; n];
        let mut has_landmark = vec![false; n];
        for i in (1..n).rev() {
            if has_landmark[i] || is_landmark(i) {
                has_landmark[dom.nodes[i].parent as usize] = true;
            }
        }
        for i in 1..n {
            let p = dom.nodes[i].parent as usize;
            let pt = dom.tag(p);
            in_table_code[i] =
                in_table_code[p] || matches!(pt, Some(Tag::Table | Tag::Code | Tag::Pre));
            in_figure[i] = in_figure[p] || (pt == Some(Tag::Block) && dom.name(p) == "figure");
            in_landmark[i] = in_landmark[p] || is_landmark(p);
            keep_inside[i] = keep_inside[p] || pt == Some(Tag::Code) || dt_self[p];
            table_above[i] = if dt_self[p] { p as u32 } else { table_above[p] };
            in_signature[i] = in_signature[p] || hints[p].code_class;
        }
        let any_caption = hints.iter().any(|h| h.caption);
        Page {
            hints,
            block_desc,
            pre_desc,
            head_desc,
            single_p,
            in_table_code,
            keep_inside,
            in_figure,
            in_landmark,
            has_landmark,
            data_table: holds_dt,
            dt_self,
            table_above,
            in_signature,
            any_caption,
            email_desc,
        }
    }
}

/// A table `summary` that says the table is navigation: DocBook's
/// "Navigation header" and "Navigation footer" (PostgreSQL's, Valgrind's
/// manuals).
fn names_navigation(summary: &str) -> bool {
    summary.len() >= 10 && summary.to_ascii_lowercase().contains("navigation")
}

/// Readability's `_markDataTables` for one table, from its subtree facts.
fn is_data_table(
    dom: &Dom<'_>,
    t: usize,
    th_like: bool,
    nested: bool,
    rows: u32,
    cols: u32,
) -> bool {
    if dom.attr(t, "role") == Some("presentation") || dom.attr(t, "datatable") == Some("0") {
        return false;
    }
    if dom.attr(t, "summary").is_some_and(|s| !s.is_empty()) {
        return true;
    }
    let end = dom.nodes[t].end as usize;
    let mut c = t + 1;
    // The caption, if any, is the table's first child.
    while c < end {
        match dom.tag(c) {
            Some(Tag::Caption) => return dom.nodes[c].end as usize > c + 1 || th_like,
            Some(_) => break,
            None => c += 1,
        }
    }
    if th_like {
        return true;
    }
    if nested {
        return false;
    }
    if rows == 1 || cols == 1 {
        return false;
    }
    // A form laid out in a table (labels beside inputs) is not data. Tables
    // that reach this point hold no table, so these scans do not overlap.
    if (t + 1..end)
        .any(|k| dom.tag(k) == Some(Tag::Input) || matches!(dom.name(k), "textarea" | "select"))
    {
        return false;
    }
    rows >= 10 || cols > 4 || rows * cols > 10
}

/// Rendered length of a subtree: visible characters plus kept spaces.
fn text_len(s: &Stats, i: usize) -> u32 {
    if s.chars[i] == 0 {
        0
    } else {
        s.chars[i] + s.spaces[i]
    }
}

/// One attempt's result.
struct Attempt {
    roots: Vec<usize>,
    dead: Vec<bool>,
    len: u32,
}

/// The main-content selection, starting from already-dead nodes.
fn main_content(dom: &Dom<'_>, base: Vec<bool>, body: usize) -> (Selection, Stats) {
    let before = Stats::compute(dom, &base);
    let page = Page::read(dom, &base, &before);
    let mut best: Option<Attempt> = None;
    for flags in [
        ALL_FLAGS,
        WEIGHT_CLASSES | CLEAN_CONDITIONALLY,
        CLEAN_CONDITIONALLY,
        0,
    ] {
        let a = attempt(dom, &base, &before, &page, body, flags);
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
            let mut dead = prepass(dom, &base, &before, &page, body, ALL_FLAGS);
            let stats = Stats::compute(dom, &dead);
            let root = main_landmark(dom, &dead, &stats, body);
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

/// Drops a kicker: the short line of links right above the title heading
/// (a section name, "SPACE"; "News · War · Video"). Walks up from the
/// first live `<h1>` of the selection, at most four levels and not past
/// its root, dropping the previous siblings that are at most 60
/// characters and at least 80% link text, nearest first; the first other
/// sibling with text ends the walk.
fn drop_kicker(dom: &Dom<'_>, dead: &mut [bool], before: &Stats, roots: &[usize]) {
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

/// Takes figure captions out of the text: a `<figcaption>`, or an element
/// whose class names a caption (`wp-caption-text`, `image-caption`) and
/// that holds no image itself, in a box around its picture (see
/// [`media_box`]). A caption describes its
/// picture; it is not the article's text, and the article benchmarks'
/// ground truths leave captions out (ScrapingHub's, trafilatura's,
/// newspaper4k's; Readability's output keeps them). Each caption whose
/// picture is a live `<img>` is returned with it, sorted by image, for
/// markdown to write as the image's title (`![alt](src "caption")`), so
/// the words stay with their picture.
fn take_captions(
    dom: &Dom<'_>,
    dead: &mut [bool],
    before: &Stats,
    page: &Page,
    roots: &[usize],
) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    if !page.any_caption {
        return out;
    }
    for &r in roots {
        let end = dom.nodes[r].end as usize;
        let mut j = r + 1;
        while j < end {
            if dead[j] {
                j = dom.nodes[j].end as usize;
                continue;
            }
            // A caption box around its own picture (`span.wf_caption` over
            // an image and a line): the lines beside the picture.
            if page.hints[j].caption
                && dom.name(j) != "figcaption"
                && (1..=600).contains(&before.chars[j])
                && holds_media(dom, j)
            {
                let lines: Vec<usize> = live_element_children(dom, dead, j)
                    .filter(|&c| dom.tag(c) != Some(Tag::Img) && !holds_media(dom, c))
                    .collect();
                let text = lines
                    .iter()
                    .map(|&c| dom.text_of(c, Some(dead)))
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                // Else the caption is deeper (a table's caption cell).
                if let (Some(img), false) = (first_live(dom, dead, j, Tag::Img), text.is_empty()) {
                    for c in lines {
                        dead[c] = true;
                    }
                    out.push((img, text));
                    j = dom.nodes[j].end as usize;
                    continue;
                }
            }
            if is_caption(dom, before, page, j) {
                if let Some(host) = media_box(dom, dead, before, page, r, j) {
                    let text = dom.text_of(j, Some(dead));
                    dead[j] = true;
                    if let Some(img) = first_live(dom, dead, host, Tag::Img) {
                        if !text.is_empty() {
                            out.push((img, text));
                        }
                    }
                    j = dom.nodes[j].end as usize;
                    continue;
                }
            }
            j += 1;
        }
    }
    out.sort_by_key(|c| c.0);
    // One caption per picture: the first.
    out.dedup_by_key(|c| c.0);
    out
}

/// A caption (see [`Hint::caption`]) of at most 600 characters; one that
/// is not a `<figcaption>` holds no picture itself.
fn is_caption(dom: &Dom<'_>, before: &Stats, page: &Page, j: usize) -> bool {
    page.hints[j].caption
        && (1..=600).contains(&before.chars[j])
        && (dom.name(j) == "figcaption" || !holds_media(dom, j))
}

fn holds_media(dom: &Dom<'_>, i: usize) -> bool {
    (i + 1..dom.nodes[i].end as usize).any(|k| {
        dom.tag(k) == Some(Tag::Img)
            || (dom.tag(k).is_some() && matches!(dom.name(k), "picture" | "video" | "iframe"))
    })
}

/// The box around caption `j` that holds its picture: a parent up to three
/// levels up, below the selection root `r`, with at most 150 characters of
/// live text besides captions (a credit, "Image 1 of 8"), that holds an
/// image, video or frame, or is a `<figure>` with no live text but its
/// captions' (its picture is loaded by script: NBC's and the BBC's
/// placeholders, an `<img>` only in `<noscript>`). A box around a code
/// listing, a table or a quotation has text of its own: its caption
/// ("Listing 4-1: …") stays.
fn media_box(
    dom: &Dom<'_>,
    dead: &[bool],
    before: &Stats,
    page: &Page,
    r: usize,
    j: usize,
) -> Option<usize> {
    let mut a = dom.nodes[j].parent as usize;
    for _ in 0..3 {
        if a <= r || a >= j {
            return None;
        }
        let other = text_besides_captions(dom, dead, before, page, a);
        if other > 150 {
            return None;
        }
        if holds_media(dom, a)
            || (dom.tag(a) == Some(Tag::Block) && dom.name(a) == "figure" && other == 0)
        {
            return Some(a);
        }
        a = dom.nodes[a].parent as usize;
    }
    None
}

/// Live text of `a` outside the captions in it (see [`is_caption`]),
/// in characters.
fn text_besides_captions(
    dom: &Dom<'_>,
    dead: &[bool],
    before: &Stats,
    page: &Page,
    a: usize,
) -> u32 {
    let all = before.chars[a];
    // A box this big is more than a picture, whatever its captions.
    if all > 5000 {
        return all;
    }
    let end = dom.nodes[a].end as usize;
    let mut other = 0;
    let mut k = a + 1;
    while k < end {
        if dead[k] || is_caption(dom, before, page, k) {
            k = dom.nodes[k].end as usize;
            continue;
        }
        if let Kind::Text(_) = dom.nodes[k].kind {
            other += dom.nodes[k].text.chars;
        }
        k += 1;
    }
    other
}

/// The first live `tag` element in the subtree at `i` (`i` itself included).
fn first_live(dom: &Dom<'_>, dead: &[bool], i: usize, tag: Tag) -> Option<usize> {
    let end = dom.nodes[i].end as usize;
    let mut k = i;
    while k < end {
        if dead[k] {
            k = dom.nodes[k].end as usize;
            continue;
        }
        if dom.tag(k) == Some(tag) {
            return Some(k);
        }
        k += 1;
    }
    None
}

/// What a selection keeps.
#[derive(Default, Debug)]
struct Kept {
    /// Characters of text.
    chars: u32,
    /// Of those, inside links.
    link_chars: u32,
    /// Of those, inside `<pre>`.
    pre_chars: u32,
    /// Of those, inside data tables.
    table_chars: u32,
    /// Of those, inside links.
    table_link_chars: u32,
    /// Holds documentation blocks: `<pre>`, `<dl>` or a data table.
    doc: bool,
    /// Holds a table of contents (class `toc`, Sphinx's `toctree-wrapper`).
    toc: bool,
}

/// Sums what the live subtrees of `roots` keep, in one pass.
fn kept(dom: &Dom<'_>, page: &Page, dead: &[bool], roots: &[usize]) -> Kept {
    let mut k = Kept::default();
    for &r in roots {
        let end = dom.nodes[r].end as usize;
        let (mut pre_end, mut link_end, mut table_end) = (0, 0, 0);
        let mut j = r;
        while j < end {
            if dead[j] {
                j = dom.nodes[j].end as usize;
                continue;
            }
            match dom.nodes[j].kind {
                Kind::Text(_) => {
                    let c = dom.nodes[j].text.chars;
                    k.chars += c;
                    if j < pre_end {
                        k.pre_chars += c;
                    }
                    // A link inside `<pre>` is a name in code (gtk-doc's
                    // synopses link every type and function), not a way
                    // off the page.
                    if j < link_end && j >= pre_end {
                        k.link_chars += c;
                    }
                    if j < table_end {
                        k.table_chars += c;
                        if j < link_end {
                            k.table_link_chars += c;
                        }
                    }
                }
                Kind::Element(..) => {
                    let j_end = dom.nodes[j].end as usize;
                    match dom.tag(j) {
                        Some(Tag::Pre) => {
                            k.doc = true;
                            pre_end = pre_end.max(j_end);
                        }
                        Some(Tag::A) => link_end = link_end.max(j_end),
                        Some(Tag::Dl) => k.doc = true,
                        _ if page.dt_self[j] => {
                            k.doc = true;
                            table_end = table_end.max(j_end);
                        }
                        _ => {}
                    }
                    if !k.toc
                        && dom.attr(j, "class").is_some_and(|c| {
                            c.split_ascii_whitespace()
                                .any(|w| w == "toc" || w.starts_with("toctree"))
                        })
                    {
                        k.toc = true;
                    }
                }
                Kind::Document => {}
            }
            j += 1;
        }
    }
    k
}

/// On a page with no `<article>` or `<main>`, whether the `role=main` block
/// (`landmark`) or the body minus the chrome (`all`) beats the Readability selection (`sel`): it holds
/// documentation blocks and what it adds is not mostly links (unless it
/// holds a table of contents or is the declared main block), and it keeps code
/// or data tables the selection dropped, or clearly more text.
fn doc_page_wins(sel: &Kept, all: &Kept, landmark: bool) -> bool {
    if !all.doc && !all.toc {
        return false;
    }
    // What the body adds must not be chrome: mostly links (menus, sidebars).
    let more = all.chars.saturating_sub(sel.chars);
    let more_links = all.link_chars.saturating_sub(sel.link_chars);
    // A directory page's data table (teams with their lists and sites) is
    // link-heavy and still the content, when it is most of what is added.
    let more_table = all.table_chars.saturating_sub(sel.table_chars);
    let more_table_links = all.table_link_chars.saturating_sub(sel.table_link_chars);
    let table_ok = 2 * more_table >= more && 2 * more_table_links <= more_table;
    let links_ok =
        all.toc || landmark || table_ok || more_links as f32 <= DOC_LINK_DENSITY * more as f32;
    if more == 0 || !links_ok {
        return false;
    }
    all.pre_chars > sel.pre_chars
        || all.table_chars > sel.table_chars
        || all.chars as f32 >= DOC_MORE_TEXT * sel.chars as f32
}

/// Whether what `all` keeps beyond `sel` is mostly link text (menus, link
/// columns), unless `all` holds a table of contents.
fn adds_mostly_links(sel: &Kept, all: &Kept) -> bool {
    let more = all.chars.saturating_sub(sel.chars);
    let more_links = all.link_chars.saturating_sub(sel.link_chars);
    !all.toc && more_links as f32 > DOC_LINK_DENSITY * more as f32
}

/// The largest live `<main>` (or `role=main`) holding text, else the body.
fn main_landmark(dom: &Dom<'_>, dead: &[bool], stats: &Stats, body: usize) -> usize {
    let end = dom.nodes[body].end as usize;
    let mut best = body;
    let mut i = body + 1;
    while i < end {
        if dead[i] {
            i = dom.nodes[i].end as usize;
            continue;
        }
        if (dom.tag(i) == Some(Tag::Main) || dom.attr(i, "role") == Some("main"))
            && stats.chars[i] > 0
            && (best == body || stats.chars[i] > stats.chars[best])
        {
            best = i;
        }
        i += 1;
    }
    best
}

/// One pass of Readability's `_grabArticle` with `flags`.
fn attempt(
    dom: &Dom<'_>,
    base: &[bool],
    before: &Stats,
    page: &Page,
    body: usize,
    flags: u8,
) -> Attempt {
    let mut dead = prepass(dom, base, before, page, body, flags);
    let stats = Stats::compute(dom, &dead);
    let roots = grab(dom, &dead, &stats, page, body, flags);
    let len = clean(dom, &mut dead, &stats, page, &roots, flags);
    Attempt { roots, dead, len }
}

/// Drops hidden nodes and (with `STRIP_UNLIKELYS`) unlikely candidates.
fn prepass(
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
fn weight(page: &Page, i: usize, flags: u8) -> i32 {
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
fn grab(
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

/// Per-node sums for the conditional clean, over live nodes.
#[derive(Clone, Copy, Default)]
struct Counts {
    chars: u32,
    spaces: u32,
    commas: u32,
    link_chars: u32,
    heading_chars: u32,
    list_chars: u32,
    p: u32,
    img: u32,
    li: u32,
    input: u32,
    video: bool,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.chars += o.chars;
        self.spaces += o.spaces;
        self.commas += o.commas;
        self.link_chars += o.link_chars;
        self.heading_chars += o.heading_chars;
        self.list_chars += o.list_chars;
        self.p += o.p;
        self.img += o.img;
        self.li += o.li;
        self.input += o.input;
        self.video |= o.video;
    }
    fn len(&self) -> u32 {
        if self.chars == 0 {
            0
        } else {
            self.chars + self.spaces
        }
    }
    fn link_density(&self) -> f32 {
        if self.chars == 0 {
            0.0
        } else {
            self.link_chars as f32 / self.chars as f32
        }
    }
}

/// Embedded players Readability keeps.
fn is_video(dom: &Dom<'_>, i: usize) -> bool {
    const HOSTS: &[&str] = &[
        "youtube.com",
        "youtube-nocookie.com",
        "player.vimeo.com",
        "dailymotion.com",
        "v.qq.com",
        "archive.org",
        "upload.wikimedia.org",
        "player.twitch.tv",
    ];
    match dom.nodes[i].kind {
        Kind::Element(el, _) => el
            .attrs()
            .any(|(_, v)| v.contains("//") && HOSTS.iter().any(|h| v.contains(h))),
        _ => false,
    }
}

/// Readability's `_prepArticle` on the chosen roots: drops asides, footers,
/// share widgets and negative headers, then (with `CLEAN_CONDITIONALLY`)
/// tables, lists, divs and forms that look like chrome. Returns the rendered
/// length of what is left.
fn clean(
    dom: &Dom<'_>,
    dead: &mut [bool],
    stats: &Stats,
    page: &Page,
    roots: &[usize],
    flags: u8,
) -> u32 {
    let mut total = 0;
    for &r in roots {
        let end = dom.nodes[r].end as usize;
        // Live nodes of the subtree (a dead ancestor kills the descendants).
        let mut live = vec![false; end - r];
        let mut j = r;
        while j < end {
            if dead[j] {
                j = dom.nodes[j].end as usize;
            } else {
                live[j - r] = true;
                j += 1;
            }
        }
        let mut acc = vec![Counts::default(); end - r];
        for j in (r..end).rev() {
            let k = j - r;
            let tag = dom.tag(j);
            if !live[k] {
                // Form controls and players count although they are never text.
                if j > r && live[dom.nodes[j].parent as usize - r] {
                    let pk = dom.nodes[j].parent as usize - r;
                    match tag {
                        Some(Tag::Input) => acc[pk].input += 1,
                        Some(Tag::Iframe) | Some(Tag::NonContent)
                            if matches!(dom.name(j), "iframe" | "embed" | "object")
                                && is_video(dom, j) =>
                        {
                            acc[pk].video = true;
                        }
                        _ => {}
                    }
                }
                continue;
            }
            let mut c = acc[k];
            match dom.nodes[j].kind {
                Kind::Text(_) => {
                    let f = dom.nodes[j].text;
                    c.chars = f.chars;
                    c.spaces = f.spaces;
                    c.commas = f.commas;
                }
                Kind::Element(..) => {
                    if remove_in_clean(dom, stats, page, r, j, &c, flags) {
                        dead[j] = true;
                        continue;
                    }
                    match tag {
                        Some(Tag::A) if !page.in_signature[j] => c.link_chars = c.chars,
                        Some(Tag::H(_)) => c.heading_chars = c.chars,
                        Some(Tag::Ul | Tag::Ol) => c.list_chars += c.chars,
                        Some(Tag::P) => c.p += 1,
                        Some(Tag::Img) => c.img += 1,
                        Some(Tag::Li) => c.li += 1,
                        _ => {}
                    }
                }
                Kind::Document => {}
            }
            if j == r {
                total += c.len();
            } else {
                let pk = dom.nodes[j].parent as usize - r;
                acc[pk].add(&c);
            }
        }
    }
    total
}

/// Whether live element `j` (inside root `r`, with live subtree sums `c`)
/// goes in `_prepArticle`.
fn remove_in_clean(
    dom: &Dom<'_>,
    stats: &Stats,
    page: &Page,
    r: usize,
    j: usize,
    c: &Counts,
    flags: u8,
) -> bool {
    let Some(tag) = dom.tag(j) else {
        return false;
    };
    let h = page.hints[j];
    if j != r {
        if matches!(tag, Tag::Aside | Tag::Footer) {
            return true;
        }
        if h.share && stats.chars[j] + stats.spaces[j] < CHAR_THRESHOLD {
            return true;
        }
        if matches!(tag, Tag::H(1 | 2)) && weight(page, j, flags) < 0 {
            return true;
        }
    } else {
        // The chosen blocks themselves stay (Readability would also clean
        // them: a doc section whose id says "meta-commands" went whole).
        return false;
    }
    if flags & CLEAN_CONDITIONALLY == 0 {
        return false;
    }
    let fieldset = tag == Tag::Block && dom.name(j) == "fieldset";
    let cleaned = match tag {
        Tag::Table | Tag::Ul | Tag::Form => true,
        // A div without blocks was read as a paragraph.
        Tag::Div => page.block_desc[j] && !page.single_p[j],
        _ => fieldset,
    };
    if !cleaned || page.keep_inside[j] || page.data_table[j] {
        return false;
    }
    let weight = weight(page, j, flags);
    if weight < 0 {
        return true;
    }
    if c.commas >= 10 {
        return false;
    }
    if c.video {
        return false;
    }
    let len = c.len();
    if len < 20 && is_ad_or_loading(&dom.text_of(j, None)) {
        return true;
    }
    let is_list = tag == Tag::Ul || (c.chars > 0 && c.list_chars as f32 / c.chars as f32 > 0.9);
    let p = c.p;
    let img = c.img;
    let li = c.li as i64 - 100;
    let ld = c.link_density();
    let heading_density = if c.chars == 0 {
        0.0
    } else {
        c.heading_chars as f32 / c.chars as f32
    };
    let figure = page.in_figure[j];
    let input = if matches!(tag, Tag::Form) || fieldset {
        c.input
    } else {
        0
    };
    // Readability's gallery rule counts `<p>`s; text written with `<br>`s
    // between the pictures (old table layouts) is an article, not a gallery.
    let gallery = img > 1 && (p as f32 / img as f32) < 0.5 && (c.chars < 150 * img || ld >= 0.2);
    (!figure && gallery)
        || (!is_list && li > p as i64)
        || input > p / 3
        || (!is_list
            && !figure
            && heading_density < 0.9
            && len < 25
            && (img == 0 || img > 2)
            && ld > 0.0)
        || (!is_list && weight < 25 && ld > 0.2)
        || (weight >= 25 && ld > 0.5)
        || (img == 0 && c.chars == 0)
}

/// Drops what trafilatura drops inside an article and Readability keeps:
/// blocks whose class or id names related stories, share and tag bars,
/// author boxes, comment links or photo credits (`BOILER`), when they are a
/// small part of their root and hold no code or data table. Runs once on the
/// final selection, after Readability's cleaning, so its removals do not
/// change what that cleaning decides.
fn strip_boilerplate(
    dom: &Dom<'_>,
    dead: &mut [bool],
    before: &Stats,
    page: &Page,
    roots: &[usize],
) {
    let total: u32 = roots.iter().map(|&r| before.chars[r]).sum();
    let mut buf = String::new();
    for &r in roots {
        let end = dom.nodes[r].end as usize;
        // A joined sibling (a breadcrumb beside the article) goes whole.
        let mut j = r;
        while j < end {
            if dead[j] {
                j = dom.nodes[j].end as usize;
                continue;
            }
            if is_permalink(dom, before, j)
                || (dom.tag(j) == Some(Tag::H(1)) && is_home_link_heading(dom, before, j))
                || is_share_link(dom, before, j)
                || (j > r && is_signup_box(dom, before, page, j))
            {
                dead[j] = true;
                j = dom.nodes[j].end as usize;
                continue;
            }
            let small = 4 * before.chars[j] < if j == r { total } else { before.chars[r] };
            // An inline element only in a figure (a photo credit), in a
            // short line ("By X | 71 comments") or when it is most of its
            // block: a span inside a sentence (a bibliography's `author`)
            // is part of the sentence.
            let inline_ok = !matches!(
                dom.tag(j),
                Some(Tag::Inline | Tag::Bold | Tag::Italic | Tag::A)
            ) || page.in_figure[j]
                || {
                    let parent = before.chars[dom.nodes[j].parent as usize];
                    2 * before.chars[j] >= parent || parent <= 80
                };
            let boiler = (page.hints[j].boiler || (page.hints[j].boiler_id && !page.head_desc[j]))
                && inline_ok
                && !page.keep_inside[j]
                && !page.pre_desc[j]
                && (!page.data_table[j] || before.link_density(j) > 0.5);
            // The phrase rules below read the text; most elements are
            // ruled out by their first word.
            let phrase = j > r
                && match dom.tag(j) {
                    Some(Tag::H(2..=6) | Tag::P | Tag::Div | Tag::Dt) => true,
                    Some(Tag::Block) => dom.name(j) == "figcaption",
                    // A span is a line of its own only in a short block or a figure.
                    Some(Tag::Inline | Tag::Bold | Tag::Italic) => {
                        page.in_figure[j] || before.chars[dom.nodes[j].parent as usize] <= 200
                    }
                    _ => false,
                }
                && (2..=150).contains(&before.chars[j])
                && !page.in_table_code[j]
                && first_word_is_known(dom, j);
            let line = (phrase
                && (is_ad_or_credit_line(dom, before, page, j, &mut buf)
                    || is_promo_link(dom, before, j, &mut buf)))
                || (j > r && is_stock_credit(dom, before, page, j, &mut buf));
            if (small && boiler) || line {
                dead[j] = true;
                j = dom.nodes[j].end as usize;
                continue;
            }
            if phrase && is_lead_in(dom, before, j, &mut buf) {
                let parent = dom.nodes[j].parent as usize;
                // "Tags: a, b, c": the lead-in's block is links besides it.
                let rest = before.chars[parent] - before.chars[j];
                if parent != r
                    && rest > 0
                    && 4 * before.chars[parent] < before.chars[r]
                    && before.link_chars[parent] as f32 >= 0.6 * rest as f32
                {
                    dead[parent] = true;
                    j = dom.nodes[parent].end as usize;
                    continue;
                }
                // Else the lead-in and the links after it, if links follow
                // (a section headed "Tags" that goes on in prose stays).
                let links: Vec<usize> = live_element_children(dom, dead, parent)
                    .skip_while(|&s| s <= j)
                    .take_while(|&s| before.chars[s] == 0 || before.link_density(s) >= 0.5)
                    .collect();
                if links.iter().any(|&s| before.chars[s] > 0) {
                    dead[j] = true;
                    for s in links {
                        dead[s] = true;
                    }
                    j = dom.nodes[j].end as usize;
                    continue;
                }
            }
            j += 1;
        }
    }
}

/// A link that shares this page: a messenger's scheme (`whatsapp:`) or a
/// network's share endpoint, with a short label ("Share this on
/// WhatsApp", "teilen") and no picture.
fn is_share_link(dom: &Dom<'_>, before: &Stats, j: usize) -> bool {
    const SCHEMES: &[&str] = &["whatsapp:", "fb-messenger:", "viber:", "tg:", "sms:?"];
    /// (host, path prefix) of share endpoints, host without `www.`.
    const ENDPOINTS: &[(&str, &str)] = &[
        ("facebook.com", "/sharer"),
        ("facebook.com", "/share.php"),
        ("twitter.com", "/intent/tweet"),
        ("twitter.com", "/share"),
        ("x.com", "/intent/tweet"),
        ("linkedin.com", "/sharearticle"),
        ("pinterest.com", "/pin/create"),
        ("reddit.com", "/submit"),
        ("api.whatsapp.com", "/send"),
        ("wa.me", "/?text"),
        ("t.me", "/share"),
        ("telegram.me", "/share"),
        ("vk.com", "/share.php"),
    ];
    // Most links are ruled out by their label or their first letters.
    if dom.tag(j) != Some(Tag::A) || before.chars[j] > 40 {
        return false;
    }
    let Some(href) = dom.attr(j, "href") else {
        return false;
    };
    let href = href.trim().as_bytes();
    let starts =
        |p: &str| href.len() >= p.len() && href[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    let share = if starts("http://") || starts("https://") || starts("//") {
        let rest = &href[href.iter().position(|&b| b == b'/').unwrap_or(0) + 2..];
        let host_end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
        let (host, path) = rest.split_at(host_end);
        let host = host.strip_prefix(b"www.").unwrap_or(host);
        ENDPOINTS.iter().any(|(h, p)| {
            host.eq_ignore_ascii_case(h.as_bytes())
                && path.len() >= p.len()
                && path[..p.len()].eq_ignore_ascii_case(p.as_bytes())
        })
    } else {
        SCHEMES.iter().any(|s| starts(s))
    };
    // A quotation to tweet ("… Click To Tweet") or a picture to pin is
    // the article's own.
    share && !holds_media(dom, j)
}

/// A newsletter box: at most 300 characters around a field for an e-mail
/// address ("Let our news meet your inbox." over "Your Email Address").
fn is_signup_box(dom: &Dom<'_>, before: &Stats, page: &Page, j: usize) -> bool {
    page.email_desc[j]
        && before.chars[j] <= 300
        && matches!(dom.tag(j), Some(Tag::Div | Tag::Block | Tag::Form))
}

/// An `<input>` for an e-mail address, by its type, name, id or placeholder.
fn is_email_field(dom: &Dom<'_>, i: usize) -> bool {
    ["type", "name", "placeholder", "id"].iter().any(|a| {
        dom.attr(i, a)
            .is_some_and(|v| v.len() < 200 && v.to_ascii_lowercase().contains("email"))
    })
}

/// A heading's permalink: a link to a place on this page whose text is a
/// mark (Sphinx's "¶", rustdoc's "§", Node's "#"). In markdown it is a
/// link to the page itself after every heading (6 MB of the 114 MB of
/// markdown the local documentation gives). A "§" linking elsewhere (a
/// commit) stays.
fn is_permalink(dom: &Dom<'_>, before: &Stats, j: usize) -> bool {
    const MARKS: &[&str] = &["¶", "§", "#", "🔗", "⚓", "¶\u{fe0e}"];
    dom.tag(j) == Some(Tag::A)
        && (1..=2).contains(&before.chars[j])
        && dom.attr(j, "href").is_some_and(|h| h.starts_with('#'))
        && MARKS.contains(&dom.text_of(j, None).trim())
}

/// A top heading that is one link to a site's home page: the site's name
/// over its pages (WordPress themes write `<h1><a href="/">Blog name</a>`),
/// not this page's title.
/// Both callers have checked that `j` is an `<h1>`.
fn is_home_link_heading(dom: &Dom<'_>, before: &Stats, j: usize) -> bool {
    if before.chars[j] == 0 || before.link_chars[j] != before.chars[j] {
        return false;
    }
    let end = dom.nodes[j].end as usize;
    let mut links = (j + 1..end).filter(|&k| dom.tag(k) == Some(Tag::A));
    let (Some(a), None) = (links.next(), links.next()) else {
        return false;
    };
    let href = dom.attr(a, "href").unwrap_or("").trim();
    // The path of an absolute ("https://host/") or scheme-relative
    // ("//host/") URL; a bare origin has the root path.
    let path = match href.split_once("//") {
        Some((scheme, rest)) if scheme.is_empty() || scheme.ends_with(':') => {
            rest.find('/').map_or("/", |k| &rest[k..])
        }
        _ => href,
    };
    matches!(path, "/" | "/index.html" | "/index.php")
}

/// Drops what is left of a box the cleaning emptied: a heading over a
/// teaser or a download list that went ("Dieses Skript als PDF
/// herunterladen"), the label of a removed widget.
fn drop_remnants(dom: &Dom<'_>, dead: &mut [bool], before: &Stats, page: &Page, roots: &[usize]) {
    for &r in roots {
        let end = dom.nodes[r].end as usize;
        // Live text per element, children before parents.
        let mut live_nodes = Vec::new();
        let mut j = r;
        while j < end {
            if dead[j] {
                j = dom.nodes[j].end as usize;
                continue;
            }
            live_nodes.push(j);
            j += 1;
        }
        // Whether that text is in paragraphs, list items, definitions, cells
        // or code: what is left is then content (a function's description
        // whose note went), not a label.
        let mut live = vec![0u32; end - r];
        let mut prose = vec![false; end - r];
        for &j in live_nodes.iter().rev() {
            if let Kind::Text(_) = dom.nodes[j].kind {
                live[j - r] += dom.nodes[j].text.chars;
            }
            if j > r {
                let p = dom.nodes[j].parent as usize;
                live[p - r] += live[j - r];
                prose[p - r] |= prose[j - r]
                    || (live[j - r] > 0
                        && matches!(
                            dom.tag(j),
                            Some(
                                Tag::P
                                    | Tag::Dd
                                    | Tag::Dt
                                    | Tag::Li
                                    | Tag::Td
                                    | Tag::Pre
                                    | Tag::Code
                            )
                        ));
            }
        }
        let mut j = r + 1;
        while j < end {
            if dead[j] {
                j = dom.nodes[j].end as usize;
                continue;
            }
            let (now, was) = (live[j - r], before.chars[j]);
            if dom.tag(j).is_some()
                && was >= 150
                && now > 0
                && now <= 80
                && 4 * now <= was
                && !prose[j - r]
                && !page.keep_inside[j]
                && !page.pre_desc[j]
                && !page.data_table[j]
            {
                dead[j] = true;
                j = dom.nodes[j].end as usize;
                continue;
            }
            j += 1;
        }
    }
}

/// An id that is only a boilerplate word: "meta", "byline", "tags".
fn is_boiler_id(id: &str) -> bool {
    const IDS: &[&str] = &[
        "meta",
        "postmeta",
        "post-meta",
        "entry-meta",
        "byline",
        "author",
        "author-box",
        "authorbox",
        "share",
        "sharing",
        "social",
        "tags",
        "related",
        "related-posts",
        "breadcrumb",
        "breadcrumbs",
    ];
    id.len() <= 13 && IDS.iter().any(|w| w.eq_ignore_ascii_case(id))
}

/// What introduces a list of other stories ("Related", "You might also
/// like", "Auch interessant", "À lire aussi"), lower case, at the start of
/// a short heading or paragraph.
const LEAD_INS: &[&str] = &[
    "related",
    "you might also like",
    "you may also like",
    "you might be interested",
    "you may be interested",
    "recommended for you",
    "more from",
    "more stories",
    "read more",
    "read also",
    "also read",
    "continue reading",
    "auch interessant",
    "das könnte sie auch interessieren",
    "das könnte dich auch interessieren",
    "das thema könnte dich auch interessieren",
    "dies könnte sie auch interessieren",
    "sie könnten auch",
    "lesen sie auch",
    "lesen sie hier",
    "lies auch",
    "mehr zum thema",
    "weiterführende links",
    "weiterführender link",
    "weitere artikel",
    "ähnliche artikel",
    "ähnliche beiträge",
    "verwandte artikel",
    "à lire aussi",
    "a lire aussi",
    "lire aussi",
    "sur le même sujet",
    "articles similaires",
    "vous aimerez aussi",
    "te puede interesar",
    "lee también",
    "noticias relacionadas",
    "leggi anche",
    "potrebbe interessarti",
    "articoli correlati",
    "leia também",
    "veja também",
    "notícias relacionadas",
    "lees ook",
    "gerelateerde artikelen",
    "читайте также",
    "похожие статьи",
    "اقرأ أيضا",
    "اقرأ أيضاً",
    "مواضيع ذات صلة",
    "เรื่องที่เกี่ยวข้อง",
    "関連記事",
    "相关新闻",
    "相关阅读",
    "相關新聞",
    "관련기사",
];

/// What introduces a list of tags, lower case.
const TAG_LEAD_INS: &[&str] = &[
    "tags",
    "schlagwörter",
    "schlagworte",
    "stichwörter",
    "mots-clés",
    "étiquettes",
    "etiquetas",
    "filed under",
];

/// How a photo credit line starts, lower case.
const CREDITS: &[&str] = &[
    "credit:",
    "credits:",
    "photo credit",
    "image credit",
    "photo:",
    "photos:",
    "photograph:",
    "photograph by",
    "image:",
    "foto:",
    "fotos:",
    "bild:",
    "bildquelle",
    "beitragsbild",
    "titelbild:",
    "crédit photo",
    "crédits photo",
    "image illustrative",
    "photo d'illustration",
    "photo d’illustration",
    // What an image viewer's caption says.
    "click to enlarge",
    "zum vergrößern",
    "klicken zum vergrößern",
    "bild vergrößern",
    "cliquez pour agrandir",
    // What WordPress (Jetpack) writes where a slideshow would be.
    "this slideshow requires javascript",
    // A blog's notice about its affiliate links (a sponsorship disclosure
    // is the post's own and stays).
    "this post may contain affiliate",
    "this post contains affiliate",
    "this article may contain affiliate",
    "this article contains affiliate",
    "this page may contain affiliate",
];

/// Stock photo agencies, as a credit names them (lower case).
const STOCK_AGENCIES: &[&str] = &[
    "shutterstock",
    "getty images",
    "gettyimages",
    "istock",
    "imago images",
    "picture alliance",
    "picture-alliance",
    "adobe stock",
    "adobestock",
    "unsplash",
    "pixabay",
    "depositphotos",
    "dreamstime",
    "fotolia",
    "123rf",
    "alamy",
];

/// A short link or span in a figure that credits a stock photo agency
/// ("TebNad/Shutterstock.com"); the caption around it stays.
fn is_stock_credit(dom: &Dom<'_>, before: &Stats, page: &Page, j: usize, buf: &mut String) -> bool {
    if !page.in_figure[j]
        || !matches!(dom.tag(j), Some(Tag::A | Tag::Inline | Tag::Italic))
        || !(3..=80).contains(&before.chars[j])
    {
        return false;
    }
    let t = lower_text(dom, j, buf);
    STOCK_AGENCIES.iter().any(|a| t.contains(a))
}

/// First words of `LEAD_INS`, `TAG_LEAD_INS`, `CREDITS` and `AD_WORDS`.
static FIRST_WORDS: LazyLock<rustc_hash::FxHashSet<&'static str>> = LazyLock::new(|| {
    LEAD_INS
        .iter()
        .chain(TAG_LEAD_INS)
        .chain(CREDITS)
        .chain(AD_WORDS)
        .filter_map(|p| p.split(|c: char| !is_word_char(c)).find(|w| !w.is_empty()))
        .collect()
});

/// Per ASCII first letter, the lengths (in bytes, under 32) of the
/// `FIRST_WORDS` that start with it, as a bit mask: a word whose letter and
/// length match no phrase is ruled out without hashing it.
static FIRST_FILTER: LazyLock<[u32; 128]> = LazyLock::new(|| {
    let mut lengths = [0u32; 128];
    for w in FIRST_WORDS.iter() {
        let b = w.as_bytes()[0];
        if b.is_ascii() && w.len() < 32 {
            lengths[b as usize] |= 1u32 << w.len();
        }
    }
    lengths
});

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '-'
}

/// Whether the element's text starts (after an opening bracket) with the
/// first word of a phrase the boilerplate rules look for. Reads only the
/// first text node with a word in it.
fn first_word_is_known(dom: &Dom<'_>, j: usize) -> bool {
    let end = dom.nodes[j].end as usize;
    for k in j..end {
        let Kind::Text(t) = dom.nodes[k].kind else {
            continue;
        };
        let bytes = t.as_bytes();
        let Some(start) = bytes
            .iter()
            .position(|&b| !(b.is_ascii_whitespace() || b == b'(' || b == b'['))
        else {
            continue;
        };
        let rest = &bytes[start..];
        // The common case, an ASCII word: no char decoding.
        let len = rest
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'-'))
            .unwrap_or(rest.len());
        if len > 0 && rest.get(len).is_none_or(|b| b.is_ascii()) {
            if len >= 32 {
                return false;
            }
            // Most words are ruled out by first letter and length.
            if FIRST_FILTER[rest[0].to_ascii_lowercase() as usize] & (1u32 << len) == 0 {
                return false;
            }
            let mut lower = [0u8; 32];
            let lower = &mut lower[..len];
            lower.copy_from_slice(&rest[..len]);
            lower.make_ascii_lowercase();
            return std::str::from_utf8(lower).is_ok_and(|w| FIRST_WORDS.contains(w));
        }
        // A word with letters beyond ASCII ("À", "ähnliche", "广告"), or
        // space that is not ASCII before it.
        let t = t.trim_start_matches(|c: char| c.is_whitespace() || c == '(' || c == '[');
        let word = t.split(|c: char| !is_word_char(c)).next().unwrap_or("");
        if word.is_empty() {
            continue;
        }
        return word.len() <= 32 && FIRST_WORDS.contains(word.to_lowercase().as_str());
    }
    false
}

/// A short line that is only an advertisement label or a photo credit
/// ("Anzeige", "(Credit: Clayton Aldern / Grist)", "Beitragsbild: ...").
fn is_ad_or_credit_line(
    dom: &Dom<'_>,
    before: &Stats,
    page: &Page,
    j: usize,
    buf: &mut String,
) -> bool {
    if before.chars[j] < 2 || before.chars[j] > 150 {
        return false;
    }
    // A line of its own: a paragraph or block, or an inline element that is
    // all of its block or sits in a figure ("AD" inside a sentence or a
    // table is text).
    let alone = match dom.tag(j) {
        Some(Tag::P | Tag::Div | Tag::Block) => true,
        Some(Tag::Inline | Tag::Italic) => {
            page.in_figure[j] || before.chars[dom.nodes[j].parent as usize] <= before.chars[j] + 2
        }
        _ => false,
    };
    if !alone {
        return false;
    }
    let t = lower_text(dom, j, buf).trim_start_matches(['(', '[', ' ']);
    if before.chars[j] <= 24 && is_ad_or_loading(t.trim_end_matches([':', ' ', ')'])) {
        return true;
    }
    CREDITS.iter().any(|c| t.starts_with(c))
}

/// The text of a small subtree, whitespace collapsed and lower-cased, in
/// `buf` (reused: this runs on many short elements of every page).
fn lower_text<'b>(dom: &Dom<'_>, j: usize, buf: &'b mut String) -> &'b str {
    buf.clear();
    let end = dom.nodes[j].end as usize;
    for k in j..end {
        if let Kind::Text(t) = dom.nodes[k].kind {
            push_collapsed(buf, t);
        } else if dom.tag(k).is_some_and(Tag::is_block) && !buf.ends_with(' ') {
            buf.push(' ');
        }
    }
    if buf.is_ascii() {
        buf.make_ascii_lowercase();
    } else {
        // Soft hyphens ("illus&shy;tra&shy;tive") do not show.
        *buf = buf.replace('\u{ad}', "").to_lowercase();
    }
    buf.trim()
}

/// A short heading or paragraph that says only "related stories follow".
fn is_lead_in(dom: &Dom<'_>, before: &Stats, j: usize, buf: &mut String) -> bool {
    if before.chars[j] < 4 || before.chars[j] > 80 {
        return false;
    }
    let ok_tag = match dom.tag(j) {
        Some(Tag::H(2..=6) | Tag::P | Tag::Div | Tag::Dt) => true,
        // "<span>Tags:</span> <a>..</a>": in a short line only.
        Some(Tag::Inline | Tag::Bold) => before.chars[dom.nodes[j].parent as usize] <= 200,
        _ => false,
    };
    if !ok_tag {
        return false;
    }
    let t = lower_text(dom, j, buf).trim_end_matches([':', '…', '.', ' ', '!']);
    // The phrase alone, or with a word or two ("Related Coverage"); a
    // sentence after it ("Related: Chicago is ...", "Read more about ad
    // blocking here") is a link inside the article, which stays.
    LEAD_INS.iter().chain(TAG_LEAD_INS).any(|p| {
        t.strip_prefix(p)
            .is_some_and(|rest| rest.split_whitespace().count() <= 2 && !rest.contains(':'))
    })
}

/// A paragraph that is only a link to another story and says so ("Lesen
/// Sie hier einen weiteren spannenden Beitrag …", "Read more about this").
fn is_promo_link(dom: &Dom<'_>, before: &Stats, j: usize, buf: &mut String) -> bool {
    let c = before.chars[j];
    if !(8..=150).contains(&c)
        || before.link_chars[j] + 2 < c
        || !matches!(dom.tag(j), Some(Tag::P | Tag::Div))
    {
        return false;
    }
    // "Related: <headline>" names the story, as a link in the text would
    // (Readability keeps those): only the generic ones go.
    let t = lower_text(dom, j, buf);
    LEAD_INS.iter().any(|p| {
        t.strip_prefix(p)
            .is_some_and(|rest| !rest.trim_start().starts_with(':'))
    })
}

/// Readability's `adWords`/`loadingWords`: a block saying only "Advertisement".
fn is_ad_or_loading(text: &str) -> bool {
    let t = text.trim().trim_end_matches(['…', '.']).to_lowercase();
    AD_WORDS.contains(&t.as_str())
}

/// Readability's ad and loading words, plus advertisement labels in other
/// languages and the button labels of image viewers.
const AD_WORDS: &[&str] = &[
    "ad",
    "advert",
    "advertising",
    "advertisement",
    "pub",
    "publicité",
    "werb",
    "werbung",
    "广告",
    "реклама",
    "anuncio",
    "anzeige",
    "publicidad",
    "pubblicità",
    "publicidade",
    "anúncio",
    "advertentie",
    "reklama",
    "reklam",
    "iklan",
    "広告",
    "광고",
    "loading",
    "正在加载",
    "загрузка",
    "chargement",
    "cargando",
    // Labels of buttons: an image viewer's, rustdoc's description toggle.
    "expand description",
    "hide caption",
    "show caption",
    "toggle caption",
    "enlarge image",
    "bild vergrößern",
    "agrandir l'image",
];
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
/// site's name (see [`is_home_link_heading`]).
fn take_title(
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
