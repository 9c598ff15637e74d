//! The kept part of a page: subtree roots, dead flags, and the captions and title taken out.

/// The kept part of a page.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Subtrees to output, in document order.
    pub roots: Vec<usize>,
    /// Per node: skip this node's subtree.
    pub dead: Vec<bool>,
    /// Figure captions taken out of the text (see
    /// [`take_captions`](super::caption::take_captions)), each with the image
    /// it describes, sorted by image: markdown writes the caption as that
    /// image's title.
    pub captions: Vec<(usize, String)>,
    /// The title heading taken out of the content (see [`take_title`](super::title::take_title)),
    /// for the top of the chunks' `headingPath`.
    pub title: Option<String>,
}
