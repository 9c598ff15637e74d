//! Facts about the page that no attempt changes: what elements' attributes and subtrees say.

use std::sync::LazyLock;

use regex::RegexSet;

use super::stats::Stats;
use crate::dom::{Common, Dom, StrKey, Tag};

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

/// A class with a `code` word: `code-header`, `sourceCode`, `code_block`.
fn class_names_code(class: &str) -> bool {
    class.len() >= 4
        && class
            .split(|c: char| c.is_ascii_whitespace() || c == '-' || c == '_')
            .any(|w| w.eq_ignore_ascii_case("code") || w.eq_ignore_ascii_case("sourcecode"))
}

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
static HINT_SET: LazyLock<Option<RegexSet>> = LazyLock::new(|| RegexSet::new(HINT_PATTERNS).ok());
// `hint_bits` keeps one bit per pattern in a u16.
const _: () = assert!(HINT_PATTERNS.len() <= 16);
const HINT_PATTERNS: [&str; 9] = [
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
];
/// The patterns of [`HINT_SET`] that `v` matches, as bits (pattern `k` is
/// bit `k`); none for an empty string.
fn hint_bits(set: &RegexSet, v: &str) -> u16 {
    if v.is_empty() {
        return 0;
    }
    set.matches(v).iter().fold(0, |b, k| b | (1 << k))
}

/// [`hint_bits`] answered once per distinct string on a page (keyed inline:
/// see [`StrKey`]).
#[derive(Default)]
struct HintMemo<'a>(rustc_hash::FxHashMap<StrKey<'a>, u16>);

impl<'a> HintMemo<'a> {
    fn bits(&mut self, set: &RegexSet, v: &'a str) -> u16 {
        if v.is_empty() {
            return 0;
        }
        *self
            .0
            .entry(StrKey::new(v))
            .or_insert_with(|| hint_bits(set, v))
    }
}

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
pub(super) struct Hint {
    /// A table of contents by class (`toc`, Sphinx's `toctree-*`).
    pub(super) toc: bool,
    /// `role="main"`.
    pub(super) role_main: bool,
    /// Readability's class weight: +-25 for the class, +-25 for the id.
    pub(super) weight: i8,
    /// Unlikely candidate by class/id (and not "maybe" a candidate).
    pub(super) unlikely: bool,
    /// Chrome by our own class/id words (consent, ads, newsletters).
    pub(super) chrome: bool,
    /// Class or id names a consent (cookie) banner.
    pub(super) consent: bool,
    /// A share widget by class/id.
    pub(super) share: bool,
    /// Boilerplate inside an article by class/id (see `BOILER`).
    pub(super) boiler: bool,
    /// Boilerplate by an id that is only such a word ("meta", "byline"):
    /// counts when the element holds no heading (documentation sections
    /// take their ids from their headings).
    pub(super) boiler_id: bool,
    /// Hidden by attribute or inline style.
    pub(super) hidden: bool,
    /// A role Readability drops.
    pub(super) role: bool,
    /// A navigation bar by its markup (see [`names_navigation`]):
    /// dropped in every attempt, like `<nav>`.
    pub(super) nav_bar: bool,
    /// A heading or block whose class names code (see [`class_names_code`]).
    code_class: bool,
    /// A figure caption by its markup: `<figcaption>`, or a class naming a
    /// caption (see [`is_caption`](super::caption::is_caption)).
    pub(super) caption: bool,
}

/// Facts about the page that no attempt changes.
pub(super) struct Page {
    pub(super) hints: Vec<Hint>,
    /// Has a descendant Readability treats as a block (so a `<div>` is not a paragraph).
    pub(super) block_desc: Vec<bool>,
    /// Holds a `<pre>`.
    pub(super) pre_desc: Vec<bool>,
    /// Holds a heading.
    pub(super) head_desc: Vec<bool>,
    /// A `<div>` wrapping a single `<p>` and no text: stands for that paragraph.
    pub(super) single_p: Vec<bool>,
    /// Inside a `<table>`, `<code>` or `<pre>` (never an unlikely candidate).
    pub(super) in_table_code: Vec<bool>,
    /// Inside a data table, `<code>` or `<figure>` (never cleaned away).
    pub(super) keep_inside: Vec<bool>,
    /// Inside a `<figure>`.
    pub(super) in_figure: Vec<bool>,
    /// Inside an `<article>` or `<main>`.
    pub(super) in_landmark: Vec<bool>,
    /// Holds an `<article>` or `<main>`.
    pub(super) has_landmark: Vec<bool>,
    /// A data table, or holds one (never cleaned away).
    pub(super) data_table: Vec<bool>,
    /// A data table.
    pub(super) dt_self: Vec<bool>,
    /// The nearest data table above the node, `NONE` if there is none.
    pub(super) table_above: Vec<u32>,
    /// Inside a heading or block whose class names code: rustdoc's
    /// `code-header` signatures (`impl Clone for TryFromIntError`). Every
    /// type in them is a link, and those links are not navigation: they do
    /// not make a block link-heavy in the conditional clean.
    pub(super) in_signature: Vec<bool>,
    /// Some element is a caption by its markup (see [`Hint::caption`]).
    pub(super) any_caption: bool,
    /// Holds a field for an e-mail address (see
    /// [`is_signup_box`](super::furniture::is_signup_box)).
    pub(super) email_desc: Vec<bool>,
}

/// No such node.
pub(super) const NONE: u32 = u32::MAX;

impl Page {
    pub(super) fn read(dom: &Dom<'_>, dead: &[bool], before: &Stats) -> Page {
        let n = dom.len();
        let mut hints = vec![Hint::default(); n];
        let set = HINT_SET.as_ref();
        // The patterns each class or id string matches, by string: a page
        // repeats a few class strings on most of its elements (a docs
        // sidebar's "toctree-l2", "reference internal"), and the set's
        // search was 3% of a crawl's CPU.
        let mut memo = HintMemo::default();
        for (i, h) in hints.iter_mut().enumerate() {
            if dead[i] || dom.tag(i).is_none() {
                continue;
            }
            let c = dom.common(i);
            h.hidden = is_hidden(&c);
            h.toc = c
                .class
                .split_ascii_whitespace()
                .any(|w| w == "toc" || w.starts_with("toctree"));
            h.role_main = c.role == "main";
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
            let (class, class_bits) = if c.class.len() >= 6
                && (c.class.contains("elementor") || c.class.contains("has-ad"))
            {
                builder = c
                    .class
                    .split_ascii_whitespace()
                    .filter(|t| !t.starts_with("elementor") && !t.contains("has-ad"))
                    .collect::<Vec<_>>()
                    .join(" ");
                (builder.as_str(), hint_bits(set, &builder))
            } else {
                (c.class, memo.bits(set, c.class))
            };
            let id_bits = memo.bits(set, c.id);
            for (v, m, is_class) in [(class, class_bits, true), (c.id, id_bits, false)] {
                if v.is_empty() {
                    continue;
                }
                let matched = |k: usize| m & (1 << k) != 0;
                if matched(NEGATIVE_RE) {
                    w -= 25;
                }
                if matched(POSITIVE_RE) {
                    w += 25;
                }
                unlikely |= matched(UNLIKELY);
                maybe |= matched(MAYBE);
                h.share |= matched(SHARE);
                h.chrome |= matched(CHROME);
                h.consent |= matched(CONSENT);
                // Class only: documentation ids name what they document
                // ("multiprocessing.shared_memory.SharedMemory", "credits").
                h.boiler |= is_class && matched(BOILER);
                h.hidden |= is_class && matched(SR_ONLY);
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

/// An `<input>` for an e-mail address, by its type, name, id or placeholder.
fn is_email_field(dom: &Dom<'_>, i: usize) -> bool {
    ["type", "name", "placeholder", "id"].iter().any(|a| {
        dom.attr(i, a)
            .is_some_and(|v| v.len() < 200 && v.to_ascii_lowercase().contains("email"))
    })
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
