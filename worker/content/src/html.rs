//! HTML facts both parsers (and the serializer) share: void elements and
//! the limit on open elements.

/// Open elements (plus pending formatting entries) the tree builder may hold.
pub const MAX_OPEN: usize = 512;

/// Void elements: no content, no end tag (also used by the html5ever guard
/// and the HTML serializer).
pub(crate) fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "keygen"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
            | "basefont"
            | "bgsound"
            | "frame"
            | "image"
    )
}
