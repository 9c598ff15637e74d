//! Computed styles of a rendered home page: the colours and fonts the
//! browser actually painted, read by a small script run in the page just
//! before its DOM is serialised. They catch themes a script applies
//! (constructed style sheets, CSS-in-JS, inline styles set by code) that
//! no style sheet on the wire shows.

use super::colors::{self, ColorEvidence, Rgb};
use super::fonts::{self, FontEvidence};
use serde::Deserialize;
use webdata_core::brand::{ColorRole, FontRole};

/// Run by the browser (a WebDriver script body). Reads at most a few dozen
/// elements; every value is a computed CSS string.
pub const SCRIPT: &str = r#"
const cs = (el, p) => (el ? getComputedStyle(el).getPropertyValue(p) : "") || "";
const shown = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
const all = (sel, n) => Array.from(document.querySelectorAll(sel)).filter(shown).slice(0, n);
const b = document.body, h = document.documentElement;
const heading = all("h1, h2, h3", 1)[0];
const code = all("code, pre, kbd, samp", 1)[0];
return {
  bodyBackground: cs(b, "background-color"),
  htmlBackground: cs(h, "background-color"),
  bodyColor: cs(b, "color"),
  bodyFont: cs(b, "font-family"),
  headingFont: cs(heading, "font-family"),
  monoFont: cs(code, "font-family"),
  buttons: all('button, input[type="submit"], a[role="button"], .btn, .button, [class*="btn-"], [class*="button"], [class*="cta"]', 12)
    .map((el) => cs(el, "background-color")),
  links: all("main a[href], section a[href], p a[href], a[href]", 60)
    .filter((a) => !a.closest("header, nav, footer") && !a.matches('[role="button"], .btn, .button'))
    .slice(0, 12)
    .map((a) => cs(a, "color")),
  headers: all('header, [role="banner"], nav', 3).map((el) => cs(el, "background-color")),
};
"#;

/// What [`SCRIPT`] returns.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Computed {
    pub body_background: String,
    pub html_background: String,
    pub body_color: String,
    pub body_font: String,
    pub heading_font: String,
    pub mono_font: String,
    pub buttons: Vec<String>,
    pub links: Vec<String>,
    pub headers: Vec<String>,
}

impl Computed {
    /// Reads the script's result; None when it is not the expected shape.
    pub fn from_json(v: &serde_json::Value) -> Option<Self> {
        serde_json::from_value(v.clone()).ok()
    }
}

/// Browser defaults, which say nothing about the brand: black text,
/// the default link blues and purple, Chromium's button face greys.
const DEFAULT_TEXT: Rgb = Rgb(0, 0, 0);
const DEFAULT_LINKS: [Rgb; 3] = [Rgb(0, 0, 238), Rgb(85, 26, 139), Rgb(238, 0, 0)];
const BUTTON_FACES: [Rgb; 3] = [Rgb(239, 239, 239), Rgb(240, 240, 240), Rgb(233, 233, 237)];
/// The browser's default font, never a brand's choice when computed.
const DEFAULT_FONTS: [&str; 2] = ["times new roman", "times"];

fn color(v: &str) -> Option<Rgb> {
    colors::parse_color(v)
}

/// The colour evidence of the painted page. Weights match the style-sheet
/// evidence for the same elements (docs/brand.md): a painted button is
/// primary 4, the page background and text 4, links accent 2, a coloured
/// header primary 2.
pub fn color_evidence(c: &Computed) -> Vec<ColorEvidence> {
    let mut out = Vec::new();
    let mut push = |color: Rgb, role: ColorRole, weight: u32| {
        out.push(ColorEvidence {
            color,
            role,
            weight,
        })
    };
    for b in c.buttons.iter().filter_map(|v| color(v)) {
        if !BUTTON_FACES.contains(&b) {
            push(b, ColorRole::Primary, 4);
        }
    }
    if let Some(bg) = color(&c.body_background).or_else(|| color(&c.html_background)) {
        push(bg, ColorRole::Background, 4);
    }
    if let Some(t) = color(&c.body_color).filter(|t| *t != DEFAULT_TEXT) {
        push(t, ColorRole::Text, 4);
    }
    for l in c.links.iter().filter_map(|v| color(v)) {
        if !DEFAULT_LINKS.contains(&l) {
            push(l, ColorRole::Accent, 2);
        }
    }
    for h in c.headers.iter().filter_map(|v| color(v)) {
        if h.is_chromatic() {
            push(h, ColorRole::Primary, 2);
        }
    }
    out
}

fn family(stack: &str) -> Option<String> {
    fonts::first_family(stack).filter(|f| !DEFAULT_FONTS.contains(&f.to_ascii_lowercase().as_str()))
}

/// The font evidence of the painted page: the body's family, a heading's
/// when it differs from the body's (else it is only inherited), code's.
pub fn font_evidence(c: &Computed) -> Vec<FontEvidence> {
    let mut out = Vec::new();
    let body = family(&c.body_font);
    if let Some(f) = &body {
        out.push(FontEvidence {
            family: f.clone(),
            role: Some(FontRole::Body),
            weight: 4,
        });
    }
    if let Some(f) = family(&c.heading_font).filter(|f| Some(f) != body.as_ref()) {
        out.push(FontEvidence {
            family: f,
            role: Some(FontRole::Heading),
            weight: 4,
        });
    }
    if let Some(f) = family(&c.mono_font).filter(|f| Some(f) != body.as_ref()) {
        out.push(FontEvidence {
            family: f,
            role: Some(FontRole::Mono),
            weight: 4,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn browser_defaults_are_not_evidence() {
        let c = Computed::from_json(&json!({
            "bodyBackground": "rgba(0, 0, 0, 0)",
            "htmlBackground": "rgba(0, 0, 0, 0)",
            "bodyColor": "rgb(0, 0, 0)",
            "bodyFont": "\"Times New Roman\"",
            "headingFont": "\"Times New Roman\"",
            "monoFont": "monospace",
            "buttons": ["rgb(239, 239, 239)"],
            "links": ["rgb(0, 0, 238)"],
            "headers": ["rgba(0, 0, 0, 0)"],
        }))
        .expect("shape");
        assert!(color_evidence(&c).is_empty());
        assert!(font_evidence(&c).is_empty());
    }

    #[test]
    fn painted_buttons_background_text_links_and_fonts_count() {
        let c = Computed::from_json(&json!({
            "bodyBackground": "rgba(0, 0, 0, 0)",
            "htmlBackground": "rgb(250, 250, 249)",
            "bodyColor": "rgb(28, 25, 23)",
            "bodyFont": "Manrope, system-ui, sans-serif",
            "headingFont": "\"Fraunces\", Georgia, serif",
            "monoFont": "Manrope, system-ui, sans-serif",
            "buttons": ["rgb(190, 18, 60)", "rgb(190, 18, 60)"],
            "links": ["rgb(3, 105, 161)"],
            "headers": ["rgb(255, 255, 255)"],
            "unknown": 1,
        }))
        .expect("shape");
        let ev: Vec<(String, ColorRole, u32)> = color_evidence(&c)
            .into_iter()
            .map(|e| (e.color.hex(), e.role, e.weight))
            .collect();
        assert_eq!(
            ev,
            vec![
                ("#be123c".into(), ColorRole::Primary, 4),
                ("#be123c".into(), ColorRole::Primary, 4),
                ("#fafaf9".into(), ColorRole::Background, 4),
                ("#1c1917".into(), ColorRole::Text, 4),
                ("#0369a1".into(), ColorRole::Accent, 2),
            ],
            "a white header is not a primary colour"
        );
        let fonts: Vec<(String, Option<FontRole>)> = font_evidence(&c)
            .into_iter()
            .map(|f| (f.family, f.role))
            .collect();
        assert_eq!(
            fonts,
            vec![
                ("Manrope".into(), Some(FontRole::Body)),
                ("Fraunces".into(), Some(FontRole::Heading)),
            ],
            "code that inherits the body font is not a mono font"
        );
        assert_eq!(Computed::from_json(&json!("nope")), None);
    }
}
