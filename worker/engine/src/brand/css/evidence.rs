//! What the style sheets say about the brand: custom properties and their
//! `var()` resolution, and colour and font evidence by selector and name.

use std::collections::HashMap;

use webdata_core::brand::{ColorRole, FontRole};

use super::{split_top, Sheet};
use crate::brand::colors::{self, ColorEvidence};
use crate::brand::fonts::{self, FontEvidence};

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
