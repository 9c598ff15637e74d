//! Page furniture inside the article: related and tag blocks, share links, sign-up boxes.

use super::facts::Page;
use super::stats::Stats;
use super::walk::{holds_media, live_element_children};
use super::words::{
    first_word_is_known, is_ad_or_credit_line, is_lead_in, is_promo_link, is_stock_credit,
};
use crate::dom::{Dom, Kind, Tag};

/// Drops what trafilatura drops inside an article and Readability keeps:
/// blocks whose class or id names related stories, share and tag bars,
/// author boxes, comment links or photo credits (`BOILER`), when they are a
/// small part of their root and hold no code or data table. Runs once on the
/// final selection, after Readability's cleaning, so its removals do not
/// change what that cleaning decides.
pub(super) fn strip_boilerplate(
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
pub(super) fn is_home_link_heading(dom: &Dom<'_>, before: &Stats, j: usize) -> bool {
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
pub(super) fn drop_remnants(
    dom: &Dom<'_>,
    dead: &mut [bool],
    before: &Stats,
    page: &Page,
    roots: &[usize],
) {
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
