//! A small CSS reader: rules, `@media` (dark-scheme blocks set apart),
//! `@font-face`, custom properties with `var()` resolution, and the colour
//! and font evidence brand extraction needs. It is not a full CSS parser:
//! it reads what sites write for their own theme.

use super::colors::{self, ColorEvidence};
use super::fonts::{self, FontEvidence};
use std::collections::HashMap;
use webdata_core::brand::{ColorRole, FontRole};

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

/// Custom properties declared on the document (`:root`, `html`, `body`,
/// or a class the `<html>`/`<body>` element carries), outside dark-scheme
/// blocks; later declarations win, as in CSS.
pub fn variables(sheets: &[Sheet], doc_classes: &[String]) -> HashMap<String, String> {
    let mut vars = HashMap::new();
    for rule in sheets.iter().flat_map(|s| &s.rules) {
        if rule.dark {
            continue;
        }
        let global = rule.selector.split(',').any(|p| {
            let p = p.trim().to_ascii_lowercase();
            p == ":root"
                || p == "html"
                || p == "body"
                || p == ":host"
                || p.starts_with(":root")
                || is_document_selector(&p, doc_classes)
        });
        if !global {
            continue;
        }
        for (n, v) in &rule.decls {
            if n.starts_with("--") {
                vars.insert(n.clone(), v.clone());
            }
        }
    }
    vars
}

/// `value` with every `var(--x, fallback)` replaced (four levels deep).
pub fn resolve(value: &str, vars: &HashMap<String, String>) -> String {
    let mut v = value.to_string();
    for _ in 0..4 {
        let Some(start) = v.find("var(") else { break };
        let inner_start = start + 4;
        let mut depth = 1;
        let mut end = None;
        for (i, c) in v[inner_start..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(inner_start + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        let inner = &v[inner_start..end];
        let (name, fallback) = match inner.split_once(',') {
            Some((n, f)) => (n.trim(), Some(f.trim())),
            None => (inner.trim(), None),
        };
        let replacement = vars
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
            .or(fallback)
            .unwrap_or("")
            .to_string();
        v.replace_range(start..=end, &replacement);
    }
    v
}

/// The first colour in a `background`/`color` value.
fn color_in(value: &str) -> Option<colors::Rgb> {
    if value.to_ascii_lowercase().contains("gradient(") {
        return None;
    }
    colors::parse_color(value).or_else(|| {
        split_top(value, ' ')
            .into_iter()
            .find_map(colors::parse_color)
    })
}

/// The role a custom property's name gives its colour.
fn variable_color_role(name: &str) -> Option<(ColorRole, u32)> {
    let n = name.trim_start_matches('-').to_ascii_lowercase();
    const SKIP: &[&str] = &[
        "hover", "active", "focus", "dark", "muted", "border", "shadow", "ring", "disabled",
        "error", "danger", "success", "warning", "info", "input", "overlay", "gradient", "font",
        "size", "radius", "spacing", "opacity", "width",
    ];
    if SKIP.iter().any(|s| n.contains(s)) {
        return None;
    }
    let on_colour = n.contains("foreground")
        || n.contains("contrast")
        || n.contains("on-")
        || n.contains("label");
    if n.contains("primary") || n.contains("brand") {
        return (!on_colour).then_some((ColorRole::Primary, 5));
    }
    if n.contains("accent") || n.contains("secondary") || n.contains("highlight") {
        return (!on_colour).then_some((ColorRole::Accent, 4));
    }
    if n.ends_with("background")
        || n.ends_with("-bg")
        || n == "bg"
        || n.contains("background-1")
        || n.contains("surface")
    {
        return Some((ColorRole::Background, 3));
    }
    if n.ends_with("foreground")
        || n.contains("text")
        || n.ends_with("-fg")
        || n == "fg"
        || n.contains("body-color")
    {
        return Some((ColorRole::Text, 3));
    }
    None
}

fn variable_font_role(name: &str) -> Option<FontRole> {
    let n = name.trim_start_matches('-').to_ascii_lowercase();
    if !n.contains("font") || n.contains("size") || n.contains("weight") || n.contains("line") {
        return None;
    }
    if n.contains("mono") || n.contains("code") {
        Some(FontRole::Mono)
    } else if n.contains("heading")
        || n.contains("display")
        || n.contains("title")
        || n.contains("headline")
    {
        Some(FontRole::Heading)
    } else if n.contains("body")
        || n.contains("sans")
        || n.contains("base")
        || n.contains("text")
        || n.ends_with("primary")
    {
        Some(FontRole::Body)
    } else {
        None
    }
}

fn is_heading_selector(part: &str) -> bool {
    let re = regex::Regex::new(r"(^|[\s>+~(])h[1-3]($|[\s.:#\[,)])").ok();
    re.is_some_and(|re| re.is_match(part)) || part.contains("heading") || part.contains("headline")
}

fn is_mono_selector(part: &str) -> bool {
    part.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|t| matches!(t, "code" | "pre" | "kbd" | "samp"))
}

fn is_button_selector(part: &str) -> bool {
    !part.contains(":hover")
        && !part.contains(":focus")
        && !part.contains(":active")
        && !part.contains(":disabled")
        && (part.contains("button")
            || part.contains("btn")
            || part.contains("cta")
            || part.contains("[type=submit]")
            || part.contains("[type=\"submit\"]"))
}

fn is_link_selector(part: &str) -> bool {
    let last = part.rsplit([' ', '>']).next().unwrap_or(part);
    matches!(last, "a" | "a:link" | "a:visited")
}

fn is_header_selector(part: &str) -> bool {
    let last = part.rsplit([' ', '>']).next().unwrap_or(part);
    last == "header" || last == "nav" || last.contains("header") || last.contains("navbar")
}

fn is_document_selector(part: &str, doc_classes: &[String]) -> bool {
    matches!(part, "body" | "html" | ":root" | "html body")
        || part
            .strip_prefix('.')
            .is_some_and(|c| doc_classes.iter().any(|d| d.eq_ignore_ascii_case(c)))
}

/// Colour and font evidence of the sheets; `doc_classes` are the classes
/// of `<html>` and `<body>` (frameworks put the page font on one).
pub fn evidence(
    sheets: &[Sheet],
    doc_classes: &[String],
) -> (Vec<ColorEvidence>, Vec<FontEvidence>) {
    let vars = variables(sheets, doc_classes);
    let mut colours = Vec::new();
    let mut font_ev = Vec::new();
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort();
    for name in names {
        let value = resolve(&vars[name], &vars);
        if let Some((role, weight)) = variable_color_role(name) {
            if let Some(color) = colors::parse_variable_color(&value) {
                colours.push(ColorEvidence {
                    color,
                    role,
                    weight,
                });
            }
        }
        if let Some(role) = variable_font_role(name) {
            if let Some(family) = fonts::first_family(&value) {
                font_ev.push(FontEvidence {
                    family,
                    role: Some(role),
                    weight: 3,
                });
            }
        }
    }
    for rule in sheets.iter().flat_map(|s| &s.rules) {
        if rule.dark {
            continue;
        }
        let sel = rule.selector.to_ascii_lowercase();
        for part in sel.split(',').map(str::trim) {
            for (n, v) in &rule.decls {
                if n.starts_with("--") {
                    continue;
                }
                let v = resolve(v, &vars);
                let bg = n == "background-color" || n == "background";
                let mut colour = |role: ColorRole, weight: u32| {
                    if let Some(color) = color_in(&v) {
                        colours.push(ColorEvidence {
                            color,
                            role,
                            weight,
                        });
                    }
                };
                if is_document_selector(part, doc_classes) {
                    if bg {
                        colour(ColorRole::Background, 4);
                    } else if n == "color" {
                        colour(ColorRole::Text, 4);
                    }
                } else if is_button_selector(part) {
                    if bg {
                        colour(ColorRole::Primary, 4);
                    }
                } else if is_link_selector(part) {
                    if n == "color" {
                        colour(ColorRole::Accent, 2);
                    }
                } else if is_header_selector(part) && bg {
                    // A coloured header is brand evidence; a white or
                    // black one says nothing about the page background.
                    if let Some(c) = color_in(&v).filter(|c| c.is_chromatic()) {
                        colours.push(ColorEvidence {
                            color: c,
                            role: ColorRole::Primary,
                            weight: 2,
                        });
                    }
                }
                let family = match n.as_str() {
                    "font-family" => fonts::first_family(&v),
                    "font" => fonts::family_of_shorthand(&v),
                    _ => None,
                };
                if let Some(family) = family {
                    let role = if is_document_selector(part, doc_classes) {
                        Some(FontRole::Body)
                    } else if is_heading_selector(part) {
                        Some(FontRole::Heading)
                    } else if is_mono_selector(part) {
                        Some(FontRole::Mono)
                    } else {
                        None
                    };
                    if role.is_some() {
                        font_ev.push(FontEvidence {
                            family,
                            role,
                            weight: 4,
                        });
                    }
                }
            }
        }
    }
    for f in sheets.iter().flat_map(|s| &s.font_faces) {
        font_ev.push(FontEvidence {
            family: f.clone(),
            role: None,
            weight: 1,
        });
    }
    (colours, font_ev)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brand::colors::Rgb;

    #[test]
    fn imports_are_read_in_order_and_resolved_against_the_sheet() {
        let base = url::Url::parse("https://acme.com/css/main.css").expect("url");
        let got: Vec<String> = imports(
            "@charset \"utf-8\"; /* @import 'commented.css'; */\
             @import url(\"base.css\");\
             @import url(/theme/colors.css) screen;\
             @IMPORT 'fonts.css' layer(fonts);\
             @import \"print.css\" print;\
             @import url(dark.css) (prefers-color-scheme: dark);\
             @import url(https://fonts.googleapis.com/css2?family=Inter&display=swap);\
             @import url(base.css);\
             body{color:#111}",
            &base,
        )
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(
            got,
            vec![
                "https://acme.com/css/base.css",
                "https://acme.com/theme/colors.css",
                "https://acme.com/css/fonts.css",
                "https://fonts.googleapis.com/css2?family=Inter&display=swap",
            ]
        );
        assert!(imports("body{color:red}", &base).is_empty());
    }

    #[test]
    fn reads_rules_media_and_font_faces() {
        let s = parse(
            "/* theme */ @charset \"utf-8\"; :root{--brand:#2563eb;--bg: var(--white, #fff)}\
             @font-face{font-family:'Acme Sans';src:url(data:font/woff2;base64,AAA=) format('woff2')}\
             @media (prefers-color-scheme: dark){ body{background:#000} }\
             @media (min-width: 600px){ .btn{background-color:#ff0000 !important} }\
             body { color: #111 }",
        );
        assert_eq!(s.font_faces, vec!["Acme Sans".to_string()]);
        assert_eq!(s.rules.len(), 4);
        assert!(s.rules[1].dark);
        assert_eq!(
            s.rules[2].decls,
            vec![("background-color".to_string(), "#ff0000".to_string())]
        );
        let vars = variables(&[s], &[]);
        assert_eq!(resolve("var(--bg)", &vars), "#fff");
        assert_eq!(resolve("var(--missing, #123)", &vars), "#123");
    }

    #[test]
    fn evidence_gives_roles() {
        let s = parse(
            ":root{--wp--preset--color--primary:#0f766e;--color-primary-foreground:#fff}\
             body{background-color:#fafafa;color:#1f2937;font-family:-apple-system,\"Inter\",sans-serif}\
             h1,h2{font-family:var(--font-head, 'Playfair Display'),serif}\
             code{font-family:ui-monospace,'JetBrains Mono',monospace}\
             a{color:#db2777} a:hover{color:#000}\
             @media (prefers-color-scheme:dark){body{background:#000}}",
        );
        let (c, f) = evidence(&[s], &[]);
        assert!(c.contains(&ColorEvidence {
            color: Rgb(0x0f, 0x76, 0x6e),
            role: ColorRole::Primary,
            weight: 5
        }));
        assert!(c.contains(&ColorEvidence {
            color: Rgb(0xfa, 0xfa, 0xfa),
            role: ColorRole::Background,
            weight: 4
        }));
        assert!(c.contains(&ColorEvidence {
            color: Rgb(0xdb, 0x27, 0x77),
            role: ColorRole::Accent,
            weight: 2
        }));
        assert!(
            !c.iter().any(|e| e.color == Rgb(0, 0, 0)),
            "hover and dark rules are not brand colours"
        );
        assert!(
            !c.iter().any(|e| e.color == Rgb(255, 255, 255)),
            "foreground-on-primary is not a role"
        );
        let fam = |r: FontRole| {
            f.iter()
                .find(|e| e.role == Some(r))
                .map(|e| e.family.clone())
        };
        assert_eq!(fam(FontRole::Body).as_deref(), Some("Inter"));
        assert_eq!(fam(FontRole::Heading).as_deref(), Some("Playfair Display"));
        assert_eq!(fam(FontRole::Mono).as_deref(), Some("JetBrains Mono"));
    }
}
