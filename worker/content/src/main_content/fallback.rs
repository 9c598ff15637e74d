//! The main landmark or the body minus chrome, and when it beats the Readability selection.

use super::facts::Page;
use super::flags::{DOC_LINK_DENSITY, DOC_MORE_TEXT};
use super::stats::Stats;
use crate::dom::{Dom, Kind, Tag};

/// What a selection keeps.
#[derive(Default, Debug)]
pub(super) struct Kept {
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
pub(super) fn kept(dom: &Dom<'_>, page: &Page, dead: &[bool], roots: &[usize]) -> Kept {
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
                    k.toc |= page.hints[j].toc;
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
pub(super) fn doc_page_wins(sel: &Kept, all: &Kept, landmark: bool) -> bool {
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
pub(super) fn adds_mostly_links(sel: &Kept, all: &Kept) -> bool {
    let more = all.chars.saturating_sub(sel.chars);
    let more_links = all.link_chars.saturating_sub(sel.link_chars);
    !all.toc && more_links as f32 > DOC_LINK_DENSITY * more as f32
}

/// The largest live `<main>` (or `role=main`) holding text, else the body.
pub(super) fn main_landmark(
    dom: &Dom<'_>,
    page: &Page,
    dead: &[bool],
    stats: &Stats,
    body: usize,
) -> usize {
    let end = dom.nodes[body].end as usize;
    let mut best = body;
    let mut i = body + 1;
    while i < end {
        if dead[i] {
            i = dom.nodes[i].end as usize;
            continue;
        }
        if (dom.tag(i) == Some(Tag::Main) || page.hints[i].role_main)
            && stats.chars[i] > 0
            && (best == body || stats.chars[i] > stats.chars[best])
        {
            best = i;
        }
        i += 1;
    }
    best
}
