//! A small CSS reader: rules, `@media` (dark-scheme blocks set apart),
//! `@font-face`, custom properties with `var()` resolution, and the colour
//! and font evidence brand extraction needs. It is not a full CSS parser:
//! it reads what sites write for their own theme.

mod evidence;

use super::fonts;

pub use evidence::{evidence, resolve, variables};

/// One style rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub selector: String,
    pub decls: Vec<(String, String)>,
    /// Inside `@media (prefers-color-scheme: dark)`.
    pub dark: bool,
}

/// A parsed style sheet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sheet {
    pub rules: Vec<Rule>,
    /// `font-family` of each `@font-face`.
    pub font_faces: Vec<String>,
}

fn strip_comments(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        match rest[i + 2..].find("*/") {
            Some(j) => rest = &rest[i + 2 + j + 2..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// Index of the `}` closing the block that starts after `open` (the
/// index just past `{`), skipping strings.
fn block_end(s: &[u8], open: usize) -> usize {
    let (mut depth, mut i, mut quote) = (1usize, open, None::<u8>);
    while i < s.len() {
        let c = s[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) if c == b'\\' => i += 1,
            Some(_) => {}
            None => match c {
                b'"' | b'\'' => quote = Some(c),
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return i;
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    s.len()
}

/// Splits `s` on `sep` outside parentheses and strings.
pub fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start, mut quote) = (0i32, 0usize, None::<char>);
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '(' => depth += 1,
                ')' => depth -= 1,
                c if c == sep && depth <= 0 => {
                    out.push(&s[start..i]);
                    start = i + c.len_utf8();
                }
                _ => {}
            },
        }
    }
    out.push(&s[start..]);
    out
}

/// `name: value` pairs of a declaration block (names lower-cased,
/// `!important` dropped; nested rules skipped).
pub fn declarations(body: &str) -> Vec<(String, String)> {
    split_top(body, ';')
        .into_iter()
        .filter(|d| !d.contains('{') && !d.contains('}'))
        .filter_map(|d| {
            let (n, v) = d.split_once(':')?;
            let n = n.trim().to_ascii_lowercase();
            let v = v.trim().trim_end_matches("!important").trim();
            (!n.is_empty() && !v.is_empty()).then(|| (n, v.to_string()))
        })
        .collect()
}

/// Parses a style sheet.
pub fn parse(css: &str) -> Sheet {
    let text = strip_comments(css);
    let mut sheet = Sheet::default();
    parse_into(&text, false, &mut sheet, 0);
    sheet
}

fn parse_into(text: &str, dark: bool, sheet: &mut Sheet, depth: usize) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() && sheet.rules.len() < 20_000 {
        let Some(rel) = text[i..].find(['{', ';', '}']) else {
            break;
        };
        let at = i + rel;
        if b[at] != b'{' {
            i = at + 1; // a statement (`@import …;`) or a stray brace
            continue;
        }
        let prelude = text[i..at].trim();
        let end = block_end(b, at + 1);
        let body = &text[at + 1..end.min(text.len())];
        let lower = prelude.to_ascii_lowercase();
        if let Some(at_rule) = lower.strip_prefix('@') {
            let squeezed: String = lower.chars().filter(|c| !c.is_whitespace()).collect();
            if at_rule.starts_with("media") && depth < 8 {
                let d = dark || squeezed.contains("prefers-color-scheme:dark");
                parse_into(body, d, sheet, depth + 1);
            } else if (at_rule.starts_with("supports")
                || at_rule.starts_with("layer")
                || at_rule.starts_with("container"))
                && depth < 8
            {
                parse_into(body, dark, sheet, depth + 1);
            } else if at_rule.starts_with("font-face") {
                if let Some((_, v)) = declarations(body)
                    .into_iter()
                    .find(|(n, _)| n == "font-family")
                {
                    if let Some(f) = fonts::first_family(&v) {
                        sheet.font_faces.push(f);
                    }
                }
            }
        } else if !prelude.is_empty() {
            sheet.rules.push(Rule {
                selector: prelude.to_string(),
                decls: declarations(body),
                dark,
            });
        }
        i = end + 1;
    }
}

/// The `@import` targets of a style sheet, in order, resolved against
/// `base` (the sheet's own URL, or the page for a `<style>` block).
/// Imports only for print, or only for a dark colour scheme, are skipped.
pub fn imports(css: &str, base: &url::Url) -> Vec<url::Url> {
    let text = strip_comments(css);
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = lower[from..].find("@import") {
        let start = from + rel + "@import".len();
        let end = lower[start..]
            .find([';', '{', '}'])
            .map_or(lower.len(), |e| start + e);
        from = end.max(start);
        let stmt = text[start..end].trim();
        let (target, media) = if stmt.len() >= 4 && stmt[..4].eq_ignore_ascii_case("url(") {
            match stmt.find(')') {
                Some(close) => (stmt[4..close].trim(), &stmt[close + 1..]),
                None => continue,
            }
        } else if let Some(q) = stmt.chars().next().filter(|c| *c == '"' || *c == '\'') {
            match stmt[1..].find(q) {
                Some(close) => (&stmt[1..close + 1], &stmt[close + 2..]),
                None => continue,
            }
        } else {
            continue;
        };
        let target = target.trim_matches(|c| c == '"' || c == '\'').trim();
        let media: String = media
            .to_ascii_lowercase()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let print_only =
            media.contains("print") && !media.contains("screen") && !media.contains("all");
        if target.is_empty() || print_only || media.contains("prefers-color-scheme:dark") {
            continue;
        }
        if let Ok(u) = base.join(target) {
            if matches!(u.scheme(), "http" | "https") && !out.contains(&u) {
                out.push(u);
            }
        }
    }
    out
}
#[cfg(test)]
mod tests;
