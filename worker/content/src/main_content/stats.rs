//! Per-node text sums over the live nodes: characters, words, link text, commas.

use crate::dom::{Dom, Kind, Tag};

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
    /// Kept spaces in the subtree (see [`crate::dom::TextFacts::spaces`]).
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

/// Rendered length of a subtree: visible characters plus kept spaces.
pub(super) fn text_len(s: &Stats, i: usize) -> u32 {
    if s.chars[i] == 0 {
        0
    } else {
        s.chars[i] + s.spaces[i]
    }
}
