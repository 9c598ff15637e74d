//! Character references: named (html5ever's table), decimal and hex, legacy forms.

use std::borrow::Cow;

use memchr::memchr;

/// Decodes character references; borrows when there are none.
pub fn decode(s: &str, in_attr: bool) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    let Some(first) = memchr(b'&', bytes) else {
        return if memchr(0, bytes).is_some() {
            Cow::Owned(s.replace('\0', "\u{fffd}"))
        } else {
            Cow::Borrowed(s)
        };
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..first]);
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] != b'&' {
            let next = memchr(b'&', &bytes[i..]).map_or(bytes.len(), |p| i + p);
            out.push_str(&s[i..next]);
            i = next;
            continue;
        }
        match reference(s, i, in_attr) {
            Some((ch, len)) => {
                out.push_str(ch.as_str());
                i += len;
            }
            None => {
                out.push('&');
                i += 1;
            }
        }
    }
    if out.contains('\0') {
        out = out.replace('\0', "\u{fffd}");
    }
    Cow::Owned(out)
}

/// Up to two characters a reference stands for.
struct Chars {
    buf: [u8; 8],
    len: usize,
}

impl Chars {
    fn new(a: char, b: Option<char>) -> Chars {
        let mut buf = [0u8; 8];
        let mut len = a.encode_utf8(&mut buf).len();
        if let Some(b) = b {
            len += b.encode_utf8(&mut buf[len..]).len();
        }
        Chars { buf, len }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// The reference at `s[at]` (an `&`): its characters and byte length.
fn reference(s: &str, at: usize, in_attr: bool) -> Option<(Chars, usize)> {
    let bytes = s.as_bytes();
    let mut i = at + 1;
    if bytes.get(i) == Some(&b'#') {
        i += 1;
        let hex = matches!(bytes.get(i), Some(b'x' | b'X'));
        if hex {
            i += 1;
        }
        let start = i;
        let mut v: u32 = 0;
        while i < bytes.len() {
            let d = match bytes[i] {
                c @ b'0'..=b'9' => (c - b'0') as u32,
                c @ b'a'..=b'f' if hex => (c - b'a' + 10) as u32,
                c @ b'A'..=b'F' if hex => (c - b'A' + 10) as u32,
                _ => break,
            };
            v = v
                .saturating_mul(if hex { 16 } else { 10 })
                .saturating_add(d);
            i += 1;
        }
        if i == start {
            return None;
        }
        if bytes.get(i) == Some(&b';') {
            i += 1;
        }
        let ch = match v {
            0 => '\u{fffd}',
            0x80..=0x9f => windows_1252(v),
            _ => char::from_u32(v).unwrap_or('\u{fffd}'),
        };
        return Some((Chars::new(ch, None), i - at));
    }
    // Named: the longest entity name that matches.
    let start = i;
    while i < bytes.len() && i - start < 32 && bytes[i].is_ascii_alphanumeric() {
        i += 1;
    }
    if i == start {
        return None;
    }
    let entities = &html5ever::data::NAMED_ENTITIES;
    if bytes.get(i) == Some(&b';') {
        // The table also lists every prefix of a name, as (0, 0).
        if let Some(&(a, b)) = entities.get(&s[start..=i]).filter(|e| e.0 != 0) {
            return Some((to_chars(a, b), i + 1 - at));
        }
    }
    // Legacy references without `;` (`&amp`, `&copy`): longest prefix.
    for end in (start + 2..=i).rev() {
        if let Some(&(a, b)) = entities.get(&s[start..end]).filter(|e| e.0 != 0) {
            if in_attr
                && end < bytes.len()
                && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'=')
            {
                return None;
            }
            return Some((to_chars(a, b), end - at));
        }
    }
    None
}

fn to_chars(a: u32, b: u32) -> Chars {
    Chars::new(
        char::from_u32(a).unwrap_or('\u{fffd}'),
        (b != 0).then(|| char::from_u32(b).unwrap_or('\u{fffd}')),
    )
}

/// Numeric references in 0x80..0x9F mean windows-1252 characters.
fn windows_1252(v: u32) -> char {
    const TABLE: [u32; 32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
        0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ];
    char::from_u32(TABLE[(v - 0x80) as usize]).unwrap_or('\u{fffd}')
}
