//! The tree-construction rules as tables: raw-text elements, head elements, what closes what.

/// How a raw-text element's content is read.
#[derive(Clone, Copy)]
pub(super) enum Raw {
    /// Verbatim (`script`, `style`, ...).
    Text,
    /// Character references decoded (`title`, `textarea`).
    Rcdata,
}

pub(super) fn raw_kind(name: &str) -> Option<Raw> {
    match name {
        "script" | "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
            Some(Raw::Text)
        }
        "title" | "textarea" => Some(Raw::Rcdata),
        _ => None,
    }
}

/// Elements that belong in `<head>` when they come before any content.
pub(super) fn is_head_element(name: &str) -> bool {
    matches!(
        name,
        "title"
            | "meta"
            | "link"
            | "base"
            | "style"
            | "script"
            | "noscript"
            | "template"
            | "basefont"
            | "bgsound"
            | "noframes"
    )
}

/// Start tags that close an open `<p>`.
pub(super) fn closes_p(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "center"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "listing"
            | "section"
            | "summary"
            | "table"
            | "ul"
            | "li"
            | "dd"
            | "dt"
            | "search"
            | "xmp"
            | "plaintext"
    )
}

pub(super) fn is_heading(name: &str) -> bool {
    matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// Elements an end tag's search does not cross (the spec's default scope).
pub(super) fn is_scope_boundary(name: &str) -> bool {
    matches!(
        name,
        "html" | "table" | "td" | "th" | "caption" | "template" | "marquee" | "object" | "applet"
    )
}

/// "Special" elements that stop the search for an open `li`/`dd`/`dt`
/// (all but `address`, `div` and `p`).
pub(super) fn stops_item_search(name: &str) -> bool {
    matches!(
        name,
        "applet"
            | "area"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "button"
            | "caption"
            | "center"
            | "dir"
            | "dl"
            | "fieldset"
            | "figure"
            | "footer"
            | "form"
            | "header"
            | "html"
            | "main"
            | "marquee"
            | "menu"
            | "nav"
            | "object"
            | "ol"
            | "section"
            | "select"
            | "table"
            | "td"
            | "template"
            | "th"
            | "tr"
            | "ul"
    )
}
