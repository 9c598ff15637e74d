//! Fonts: family names from CSS values and font links, generic and
//! system fallbacks excluded, one family per role.

use url::Url;
use webdata_core::brand::{BrandFont, FontRole};

/// One piece of font evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct FontEvidence {
    pub family: String,
    pub role: Option<FontRole>,
    /// 4 a rule on body/headings/code, 3 a named variable, 2 a font
    /// link, 1 an `@font-face` alone.
    pub weight: u32,
}

/// Families that are fallbacks, not a brand's choice.
const GENERIC: &[&str] = &[
    "serif",
    "sans-serif",
    "monospace",
    "cursive",
    "fantasy",
    "system-ui",
    "ui-serif",
    "ui-sans-serif",
    "ui-monospace",
    "ui-rounded",
    "math",
    "emoji",
    "fangsong",
    "-apple-system",
    "blinkmacsystemfont",
    "inherit",
    "initial",
    "unset",
    "revert",
    "apple color emoji",
    "segoe ui emoji",
    "segoe ui symbol",
    "noto color emoji",
    "android emoji",
    "emojisymbols",
    "emojione mozilla",
    "twemoji mozilla",
];

/// True for a generic family or a system-font alias.
pub fn is_generic(family: &str) -> bool {
    let f = family.trim().to_ascii_lowercase();
    f.is_empty() || GENERIC.contains(&f.as_str()) || f.starts_with("var(")
}

/// The family behind a Next.js `next/font` name (`__Inter_aaf875` →
/// `Inter`); None for its generated fallback faces.
fn demangle(f: &str) -> Option<String> {
    let Some(inner) = f.strip_prefix("__") else {
        return Some(f.to_string());
    };
    if inner.contains("_Fallback") {
        return None;
    }
    let name = match inner.rsplit_once('_') {
        Some((n, hash)) if hash.len() == 6 && hash.chars().all(|c| c.is_ascii_hexdigit()) => n,
        _ => inner,
    };
    Some(name.replace('_', " "))
}

/// The first family of a `font-family` list that is not a fallback.
pub fn first_family(value: &str) -> Option<String> {
    value
        .split(',')
        .map(|f| f.trim().trim_matches(|c| c == '"' || c == '\'').trim())
        .filter(|f| !is_generic(f) && f.len() <= 80 && !f.contains(['(', ')', '{', '}', ';']))
        .find_map(demangle)
}

/// The family list of a `font` shorthand (`700 2rem/1.2 "Acme", serif`).
pub fn family_of_shorthand(value: &str) -> Option<String> {
    let re = regex::Regex::new(
        r"(?i)^(?:.*\s)?[\d.]+(?:px|rem|em|%|pt|vw|vh)(?:\s*/\s*[\d.]+[a-z%]*)?\s+(.+)$",
    )
    .ok()?;
    let families = re.captures(value)?.get(1)?.as_str();
    first_family(families)
}

/// Families named by a font-service stylesheet link (Google Fonts' `css`
/// and `css2`, Bunny Fonts). These links are read, never fetched.
pub fn families_of_link(href: &Url) -> Vec<String> {
    let host = href.host_str().unwrap_or("");
    if !matches!(host, "fonts.googleapis.com" | "fonts.bunny.net") {
        return Vec::new();
    }
    href.query_pairs()
        .filter(|(k, _)| k == "family")
        .flat_map(|(_, v)| {
            v.split('|')
                .map(|f| {
                    f.split(':')
                        .next()
                        .unwrap_or("")
                        .replace('+', " ")
                        .trim()
                        .to_string()
                })
                .collect::<Vec<_>>()
        })
        .filter(|f| !f.is_empty() && !is_generic(f))
        .collect()
}

/// True for hosts whose stylesheets only declare fonts (read from the URL).
pub fn is_font_service(href: &Url) -> bool {
    matches!(
        href.host_str(),
        Some("fonts.googleapis.com" | "fonts.bunny.net" | "use.typekit.net" | "fonts.gstatic.com")
    )
}

/// One family per role (strongest evidence, then first seen); families
/// loaded but not tied to a role are listed after them without a role.
pub fn choose(evidence: &[FontEvidence]) -> Vec<BrandFont> {
    let mut out: Vec<BrandFont> = Vec::new();
    for role in [FontRole::Heading, FontRole::Body, FontRole::Mono] {
        let best = evidence
            .iter()
            .enumerate()
            .filter(|(_, e)| e.role == Some(role))
            .max_by(|(ia, a), (ib, b)| a.weight.cmp(&b.weight).then(ib.cmp(ia)));
        if let Some((_, e)) = best {
            out.push(BrandFont {
                family: e.family.clone(),
                role: Some(role),
            });
        }
    }
    let mut loose: Vec<&FontEvidence> = evidence.iter().filter(|e| e.role.is_none()).collect();
    loose.sort_by_key(|e| std::cmp::Reverse(e.weight));
    for e in loose {
        let known = out.iter().any(|f| f.family.eq_ignore_ascii_case(&e.family));
        if !known {
            let role = e
                .family
                .to_ascii_lowercase()
                .contains("mono")
                .then_some(FontRole::Mono)
                .filter(|_| !out.iter().any(|f| f.role == Some(FontRole::Mono)));
            out.push(BrandFont {
                family: e.family.clone(),
                role,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_fallbacks_are_skipped() {
        assert_eq!(
            first_family("-apple-system, BlinkMacSystemFont, \"Segoe UI\", sans-serif").as_deref(),
            Some("Segoe UI")
        );
        assert_eq!(first_family("system-ui, sans-serif"), None);
        assert_eq!(
            first_family("'Inter var', Inter, sans-serif").as_deref(),
            Some("Inter var")
        );
        assert_eq!(
            family_of_shorthand("italic 700 2rem/1.2 \"Playfair Display\", serif").as_deref(),
            Some("Playfair Display")
        );
    }

    #[test]
    fn next_font_names_are_demangled() {
        assert_eq!(
            first_family("__Inter_aaf875, __Inter_Fallback_aaf875").as_deref(),
            Some("Inter")
        );
        assert_eq!(
            first_family("'__JetBrains_Mono_3c557b', monospace").as_deref(),
            Some("JetBrains Mono")
        );
    }

    #[test]
    fn google_fonts_links_name_their_families() {
        let u = Url::parse("https://fonts.googleapis.com/css2?family=Inter:wght@400;700&family=Playfair+Display:ital@1&display=swap");
        assert_eq!(
            u.map(|u| families_of_link(&u)).unwrap_or_default(),
            vec!["Inter", "Playfair Display"]
        );
        let v1 = Url::parse("https://fonts.googleapis.com/css?family=Roboto:400,700|Roboto+Mono");
        assert_eq!(
            v1.map(|u| families_of_link(&u)).unwrap_or_default(),
            vec!["Roboto", "Roboto Mono"]
        );
    }

    #[test]
    fn choose_gives_one_family_per_role() {
        let ev = [
            FontEvidence {
                family: "Inter".into(),
                role: Some(FontRole::Body),
                weight: 3,
            },
            FontEvidence {
                family: "Lato".into(),
                role: Some(FontRole::Body),
                weight: 4,
            },
            FontEvidence {
                family: "Lora".into(),
                role: Some(FontRole::Heading),
                weight: 4,
            },
            FontEvidence {
                family: "Fira Mono".into(),
                role: None,
                weight: 2,
            },
            FontEvidence {
                family: "Lora".into(),
                role: None,
                weight: 2,
            },
        ];
        let got: Vec<(String, Option<FontRole>)> = choose(&ev)
            .into_iter()
            .map(|f| (f.family, f.role))
            .collect();
        assert_eq!(
            got,
            vec![
                ("Lora".into(), Some(FontRole::Heading)),
                ("Lato".into(), Some(FontRole::Body)),
                ("Fira Mono".into(), Some(FontRole::Mono)),
            ]
        );
    }
}
