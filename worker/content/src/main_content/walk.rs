//! Small walks over a subtree that several passes share: live children, first tag, media.

use crate::dom::{Dom, Kind, Tag};

pub(super) fn holds_media(dom: &Dom<'_>, i: usize) -> bool {
    (i + 1..dom.nodes[i].end as usize).any(|k| {
        dom.tag(k) == Some(Tag::Img)
            || (dom.tag(k).is_some() && matches!(dom.name(k), "picture" | "video" | "iframe"))
    })
}

/// The first live `tag` element in the subtree at `i` (`i` itself included).
pub(super) fn first_live(dom: &Dom<'_>, dead: &[bool], i: usize, tag: Tag) -> Option<usize> {
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

/// Live element children of `p`.
pub(super) fn live_element_children<'d>(
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
