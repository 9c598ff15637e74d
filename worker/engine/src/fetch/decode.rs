//! Decoding bodies as browsers do: MIME type, BOM, Content-Type charset,
//! `<meta charset>` or the XML declaration, then detection.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// Bytes of the body searched for `<meta charset>`, as browsers do.
const META_PRESCAN_BYTES: usize = 1024;

/// Bytes fed to the charset detector.
const DETECT_BYTES: usize = 1024 * 1024;

/// The MIME type of a Content-Type value, lower-cased, without parameters.
pub fn mime_of(content_type: &str) -> Option<String> {
    let mime = content_type.split(';').next()?.trim().to_ascii_lowercase();
    (!mime.is_empty()).then_some(mime)
}

pub(super) fn is_textual(mime: Option<&str>, body: &[u8]) -> bool {
    match mime {
        Some(m) => {
            m.starts_with("text/")
                || m.ends_with("+xml")
                || m.ends_with("+json")
                || matches!(
                    m,
                    "application/xml"
                        | "application/json"
                        | "application/javascript"
                        | "application/ecmascript"
                        | "application/x-javascript"
                        | "application/ld+json"
                )
        }
        // No type: text unless it looks binary.
        None => !body[..body.len().min(META_PRESCAN_BYTES)].contains(&0),
    }
}

/// Decodes a body the way browsers do: BOM, then the Content-Type charset,
/// then `<meta charset>` (or an XML declaration) in the first 1024 bytes,
/// then detection (UTF-8 when the bytes are valid UTF-8).
pub fn decode_body(body: &[u8], content_type: Option<&str>) -> (String, &'static Encoding) {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return (decode_with(encoding, &body[bom_len..]), encoding);
    }
    let mime = content_type.and_then(mime_of);
    let encoding = content_type
        .and_then(charset_param)
        .or_else(|| prescan(body, mime.as_deref()))
        .or_else(|| {
            mime.as_deref()
                .is_some_and(|m| m == "application/json" || m.ends_with("+json"))
                .then_some(UTF_8)
        })
        .unwrap_or_else(|| detect(body));
    (decode_with(encoding, body), encoding)
}

fn decode_with(encoding: &'static Encoding, bytes: &[u8]) -> String {
    encoding.decode_without_bom_handling(bytes).0.into_owned()
}

fn detect(body: &[u8]) -> &'static Encoding {
    let sample = &body[..body.len().min(DETECT_BYTES)];
    match std::str::from_utf8(sample) {
        Ok(_) => return UTF_8,
        // Valid UTF-8 cut off mid-character by the sample or the size cap.
        Err(e) if e.error_len().is_none() => return UTF_8,
        Err(_) => {}
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(sample, sample.len() == body.len());
    detector.guess(None, true)
}

/// The encoding named by a Content-Type's `charset` parameter.
fn charset_param(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        Encoding::for_label(value.trim().trim_matches(['"', '\'']).as_bytes())
    })
}

/// WHATWG's "prescan a byte stream" for `<meta>` (simplified), plus the XML
/// declaration for XML types.
fn prescan(body: &[u8], mime: Option<&str>) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(META_PRESCAN_BYTES)];
    let is_xml = mime.is_some_and(|m| m.ends_with("xml") && m != "application/xhtml+xml");
    if is_xml || head.starts_with(b"<?xml") {
        if let Some(found) = xml_declaration_encoding(head) {
            return Some(found);
        }
        if is_xml {
            return None;
        }
    }
    let mut i = 0;
    while i < head.len() {
        let rest = &head[i..];
        if rest.starts_with(b"<!--") {
            i += find(&rest[4..], b"-->").map_or(head.len(), |p| p + 7);
        } else if starts_with_ci(rest, b"<meta")
            && rest
                .get(5)
                .is_some_and(|b| b.is_ascii_whitespace() || *b == b'/')
        {
            i += 5;
            if let Some(found) = meta_charset(head, &mut i) {
                return Some(html_fixup(found));
            }
        } else if rest.starts_with(b"<")
            && rest
                .get(1)
                .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'/' | b'!' | b'?'))
        {
            i += find(rest, b">").map_or(head.len(), |p| p + 1);
        } else {
            i += 1;
        }
    }
    None
}

/// Encodings a `<meta>` may not pick: UTF-16 means UTF-8 there.
fn html_fixup(encoding: &'static Encoding) -> &'static Encoding {
    if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
        UTF_8
    } else if encoding == encoding_rs::X_USER_DEFINED {
        WINDOWS_1252
    } else {
        encoding
    }
}

fn meta_charset(head: &[u8], i: &mut usize) -> Option<&'static Encoding> {
    let mut got_pragma = false;
    let mut need_pragma = None;
    let mut charset = None;
    while let Some((name, value)) = next_attribute(head, i) {
        match name.as_str() {
            "http-equiv" if value.eq_ignore_ascii_case(b"content-type") => got_pragma = true,
            "content" if charset.is_none() => {
                if let Some(found) = charset_in_content(&value) {
                    charset = Some(found);
                    need_pragma = Some(true);
                }
            }
            "charset" if charset.is_none() => {
                charset = Encoding::for_label(&value);
                need_pragma = Some(false);
            }
            _ => {}
        }
    }
    match need_pragma {
        Some(true) if !got_pragma => None,
        Some(_) => charset,
        None => None,
    }
}

/// One attribute of a tag (name lower-cased), advancing `i`; `None` at `>`.
fn next_attribute(head: &[u8], i: &mut usize) -> Option<(String, Vec<u8>)> {
    let at = |i: usize| head.get(i).copied();
    while at(*i).is_some_and(|b| b.is_ascii_whitespace() || b == b'/') {
        *i += 1;
    }
    if at(*i).is_none_or(|b| b == b'>') {
        return None;
    }
    let start = *i;
    while at(*i).is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b'=' | b'>' | b'/')) {
        *i += 1;
    }
    let name = String::from_utf8_lossy(&head[start..*i]).to_ascii_lowercase();
    while at(*i).is_some_and(|b| b.is_ascii_whitespace()) {
        *i += 1;
    }
    if at(*i) != Some(b'=') {
        return Some((name, Vec::new()));
    }
    *i += 1;
    while at(*i).is_some_and(|b| b.is_ascii_whitespace()) {
        *i += 1;
    }
    let value = match at(*i) {
        Some(q @ (b'"' | b'\'')) => {
            let from = *i + 1;
            let len = head[from..]
                .iter()
                .position(|b| *b == q)
                .unwrap_or(head.len() - from);
            *i = (from + len + 1).min(head.len());
            head[from..from + len].to_vec()
        }
        _ => {
            let from = *i;
            while at(*i).is_some_and(|b| !b.is_ascii_whitespace() && b != b'>') {
                *i += 1;
            }
            head[from..*i].to_vec()
        }
    };
    Some((name, value))
}

/// `charset=...` inside a `<meta http-equiv content>` value.
fn charset_in_content(content: &[u8]) -> Option<&'static Encoding> {
    let lower = content.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = find(&lower[from..], b"charset") {
        let mut j = from + pos + 7;
        while lower.get(j).is_some_and(|b| b.is_ascii_whitespace()) {
            j += 1;
        }
        if lower.get(j) != Some(&b'=') {
            from = j;
            continue;
        }
        j += 1;
        while lower.get(j).is_some_and(|b| b.is_ascii_whitespace()) {
            j += 1;
        }
        let rest = &content[j..];
        let label = match rest.first() {
            Some(q @ (b'"' | b'\'')) => {
                let body = &rest[1..];
                &body[..body.iter().position(|b| b == q)?]
            }
            _ => {
                let end = rest
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || *b == b';')
                    .unwrap_or(rest.len());
                &rest[..end]
            }
        };
        return Encoding::for_label(label);
    }
    None
}

fn xml_declaration_encoding(head: &[u8]) -> Option<&'static Encoding> {
    let decl_end = find(head, b"?>")?;
    let decl = &head[..decl_end];
    if !decl.starts_with(b"<?xml") {
        return None;
    }
    let pos = find(decl, b"encoding")? + 8;
    let rest = decl[pos..]
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    let quote = *rest.first()?;
    let body = &rest[1..];
    let label = &body[..body.iter().position(|b| *b == quote)?];
    Encoding::for_label(label).map(html_fixup)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn starts_with_ci(haystack: &[u8], prefix: &[u8]) -> bool {
    haystack.len() >= prefix.len() && haystack[..prefix.len()].eq_ignore_ascii_case(prefix)
}
