//! Figure captions, taken out of the text and kept with their picture (the image's title).

use super::facts::Page;
use super::stats::Stats;
use super::walk::{first_live, holds_media, live_element_children};
use crate::dom::{Dom, Kind, Tag};

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
pub(super) fn take_captions(
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

/// A caption (see [`Hint::caption`](super::facts::Hint::caption)) of at
/// most 600 characters; one that is not a `<figcaption>` holds no picture
/// itself.
fn is_caption(dom: &Dom<'_>, before: &Stats, page: &Page, j: usize) -> bool {
    page.hints[j].caption
        && (1..=600).contains(&before.chars[j])
        && (dom.name(j) == "figcaption" || !holds_media(dom, j))
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
