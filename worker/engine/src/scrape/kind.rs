//! What a response is, by its Content-Type (and a sniff of the body where
//! there is none): HTML, PDF, markdown or other text.

use crate::fetch::FetchResponse;

pub(crate) fn is_html(resp: &FetchResponse) -> bool {
    match resp.content_type.as_deref() {
        Some("text/html") | Some("application/xhtml+xml") => true,
        None => resp
            .text
            .as_deref()
            .map(|t| {
                let head = t.trim_start().get(..256).unwrap_or(t.trim_start());
                let head = head.to_ascii_lowercase();
                head.starts_with("<!doctype html") || head.starts_with("<html")
            })
            .unwrap_or(false),
        _ => false,
    }
}

pub(super) fn is_pdf(resp: &FetchResponse) -> bool {
    resp.content_type.as_deref() == Some("application/pdf")
        || (resp
            .content_type
            .as_deref()
            .is_none_or(|m| m == "application/octet-stream")
            && resp.body.starts_with(b"%PDF-"))
}

pub(super) fn is_textual(mime: &str) -> bool {
    mime.starts_with("text/")
        || mime == "application/json"
        || mime.ends_with("+json")
        || mime == "application/xml"
        || mime.ends_with("+xml")
}

pub(super) fn is_markdown(resp: &FetchResponse) -> bool {
    matches!(
        resp.content_type.as_deref(),
        Some("text/markdown") | Some("text/x-markdown")
    )
}
