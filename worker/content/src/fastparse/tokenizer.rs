//! The tokenizer: one pass over the bytes, tags, attributes and text handed to the builder.

use std::borrow::Cow;

use super::builder::{Builder, Mode};
use super::entities::decode;
use super::nodes::{PKind, PNode, Parsed};
use super::rules::Raw;

/// Parses a whole page.
pub fn parse(html: &str) -> Parsed<'_> {
    let mut b = Builder {
        nodes: Vec::with_capacity(html.len() / 24 + 8),
        open: vec![0],
        mode: Mode::BeforeHead,
        html: None,
        head: None,
        body: None,
        swallow: Vec::new(),
        skip_newline: false,
        counts: [0; 256],
    };
    b.nodes.push(PNode {
        kind: PKind::Document,
        parent: u32::MAX,
        end: 1,
    });
    let bytes = html.as_bytes();
    let mut i = 0;
    let n = bytes.len();
    while i < n {
        let Some(lt) = memchr(b'<', &bytes[i..]).map(|p| i + p) else {
            b.text(decode(&html[i..], false));
            break;
        };
        if lt > i {
            b.text(decode(&html[i..lt], false));
        }
        i = lt;
        let next = bytes.get(i + 1).copied().unwrap_or(0);
        if next == b'!' {
            if bytes[i..].starts_with(b"<!--") {
                i = match find(bytes, i + 4, b"-->") {
                    Some(p) => p + 3,
                    None => n,
                };
            } else if bytes[i..].starts_with(b"<![CDATA[") {
                // CDATA is only meaningful in foreign content: keep its text.
                let end = find(bytes, i + 9, b"]]>").unwrap_or(n);
                if b.in_foreign() {
                    b.text(Cow::Borrowed(&html[i + 9..end]));
                }
                i = (end + 3).min(n);
            } else {
                i = skip_to_gt(bytes, i + 2);
            }
        } else if next == b'?' {
            i = skip_to_gt(bytes, i + 2);
        } else if next == b'/' {
            let c = bytes.get(i + 2).copied().unwrap_or(0);
            if c.is_ascii_alphabetic() {
                let (name, after) = read_name(html, i + 2);
                i = skip_to_gt(bytes, after);
                b.end_tag(&name);
            } else if c == b'>' {
                i += 3;
            } else if i + 2 >= n {
                b.text(Cow::Borrowed(&html[i..]));
                i = n;
            } else {
                // `</` + non-letter: a bogus comment.
                i = skip_to_gt(bytes, i + 2);
            }
        } else if next.is_ascii_alphabetic() {
            let (name, after) = read_name(html, i + 1);
            let (attrs, self_closing, after) = read_attrs(html, after);
            i = after;
            let raw = b.start_tag(name, attrs, self_closing);
            if let Some(kind) = raw {
                let name = b.current_name().to_string();
                let end = find_end_tag(bytes, i, name.as_bytes()).unwrap_or(n);
                let body = &html[i..end];
                if !body.is_empty() {
                    match kind {
                        Raw::Text => b.text_raw(Cow::Borrowed(body)),
                        Raw::Rcdata => b.text_raw(decode(body, false)),
                    }
                }
                b.pop_current();
                i = if end < n {
                    skip_to_gt(bytes, end + 2 + name.len())
                } else {
                    n
                };
            }
        } else {
            b.text(Cow::Borrowed("<"));
            i += 1;
        }
    }
    b.finish()
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    memchr::memchr(needle, hay)
}

/// First position of `pat` in `bytes` at or after `from`.
fn find(bytes: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    let first = pat[0];
    let mut i = from;
    while i + pat.len() <= bytes.len() {
        let p = memchr(first, &bytes[i..])? + i;
        if bytes[p..].starts_with(pat) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// Position after the next `>` (or the end).
fn skip_to_gt(bytes: &[u8], from: usize) -> usize {
    match memchr(b'>', bytes.get(from..).unwrap_or(&[])) {
        Some(p) => from + p + 1,
        None => bytes.len(),
    }
}

/// Position of `</name` (any case) followed by a space, `/` or `>`.
fn find_end_tag(bytes: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut i = from;
    loop {
        let p = find(bytes, i, b"</")?;
        let after = p + 2 + name.len();
        if after <= bytes.len()
            && bytes[p + 2..after].eq_ignore_ascii_case(name)
            && matches!(
                bytes.get(after).copied(),
                None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>')
            )
        {
            return Some(p);
        }
        i = p + 2;
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// A tag name from `from`, lower-cased; and the position after it.
fn read_name(html: &str, from: usize) -> (Cow<'_, str>, usize) {
    let bytes = html.as_bytes();
    let mut end = from;
    let mut upper = false;
    while end < bytes.len() && !is_space(bytes[end]) && bytes[end] != b'/' && bytes[end] != b'>' {
        upper |= bytes[end].is_ascii_uppercase();
        end += 1;
    }
    // `end` stops at ASCII bytes, so it is a char boundary.
    let name = &html[from..end];
    let name = if upper {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    };
    (name, end)
}

type Attrs<'h> = Vec<(Cow<'h, str>, Cow<'h, str>)>;

/// Attributes up to the tag's `>`: (attributes, self-closing, position after `>`).
fn read_attrs(html: &str, from: usize) -> (Attrs<'_>, bool, usize) {
    let bytes = html.as_bytes();
    let n = bytes.len();
    let mut attrs: Attrs<'_> = Vec::new();
    let mut i = from;
    let mut self_closing = false;
    loop {
        while i < n && is_space(bytes[i]) {
            i += 1;
        }
        if i >= n {
            return (attrs, self_closing, n);
        }
        match bytes[i] {
            b'>' => return (attrs, self_closing, i + 1),
            b'/' => {
                self_closing = bytes.get(i + 1) == Some(&b'>');
                i += 1;
                continue;
            }
            _ => {}
        }
        self_closing = false;
        // Name: up to space, `/`, `>` or `=` (a leading `=` belongs to it).
        let start = i;
        i += 1;
        let mut upper = bytes[start].is_ascii_uppercase();
        while i < n && !is_space(bytes[i]) && !matches!(bytes[i], b'/' | b'>' | b'=') {
            upper |= bytes[i].is_ascii_uppercase();
            i += 1;
        }
        let name = &html[start..i];
        let name = if upper {
            Cow::Owned(name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(name)
        };
        let mut j = i;
        while j < n && is_space(bytes[j]) {
            j += 1;
        }
        let mut value = Cow::Borrowed("");
        if j < n && bytes[j] == b'=' {
            j += 1;
            while j < n && is_space(bytes[j]) {
                j += 1;
            }
            if j < n && (bytes[j] == b'"' || bytes[j] == b'\'') {
                let q = bytes[j];
                let vstart = j + 1;
                let vend = memchr(q, &bytes[vstart..]).map_or(n, |p| vstart + p);
                value = decode(&html[vstart..vend], true);
                i = (vend + 1).min(n);
            } else {
                let vstart = j;
                while j < n && !is_space(bytes[j]) && bytes[j] != b'>' {
                    j += 1;
                }
                value = decode(&html[vstart..j], true);
                i = j;
            }
        }
        if !attrs.iter().any(|(k, _)| *k == name) {
            attrs.push((name, value));
        }
    }
}
