//! Readability's `_prepArticle`: asides, footers, share widgets and chrome-like blocks go.

use super::facts::Page;
use super::flags::{CHAR_THRESHOLD, CLEAN_CONDITIONALLY};
use super::score::weight;
use super::stats::Stats;
use super::words::is_ad_or_loading;
use crate::dom::{Dom, Kind, Tag};

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
pub(super) fn clean(
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
