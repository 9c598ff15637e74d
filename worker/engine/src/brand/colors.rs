//! Colours: parsing CSS colour values, WCAG 2 contrast, readable text
//! colours, and choosing one colour per role from weighted evidence.

use webdata_core::brand::{BrandColor, ColorRole};

/// An opaque sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`, lower case.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// WCAG 2 relative luminance (0 = black, 1 = white).
    pub fn luminance(self) -> f64 {
        fn channel(c: u8) -> f64 {
            let c = c as f64 / 255.0;
            if c <= 0.03928 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        }
        0.2126 * channel(self.0) + 0.7152 * channel(self.1) + 0.0722 * channel(self.2)
    }

    /// True for colours with visible hue (not white, black or grey).
    pub fn is_chromatic(self) -> bool {
        let max = self.0.max(self.1).max(self.2) as i32;
        let min = self.0.min(self.1).min(self.2) as i32;
        max - min >= 40
    }

    /// Squared distance in RGB space.
    fn distance2(self, o: Rgb) -> i32 {
        let d = |a: u8, b: u8| (a as i32 - b as i32).pow(2);
        d(self.0, o.0) + d(self.1, o.1) + d(self.2, o.2)
    }
}

/// WCAG 2 contrast ratio of two colours, 1 to 21.
pub fn contrast(a: Rgb, b: Rgb) -> f64 {
    let (la, lb) = (a.luminance(), b.luminance());
    let (hi, lo) = if la >= lb { (la, lb) } else { (lb, la) };
    (hi + 0.05) / (lo + 0.05)
}

const WHITE: Rgb = Rgb(255, 255, 255);
const BLACK: Rgb = Rgb(0, 0, 0);

/// The readable text colour on `bg` (white or black, whichever contrasts
/// more; white on a tie) and its contrast rounded to two decimals.
pub fn readable_text(bg: Rgb) -> (Rgb, f64) {
    let (w, b) = (contrast(WHITE, bg), contrast(BLACK, bg));
    let (text, ratio) = if w >= b { (WHITE, w) } else { (BLACK, b) };
    (text, (ratio * 100.0).round() / 100.0)
}

fn number(s: &str, scale_percent: f64) -> Option<f64> {
    let s = s.trim();
    if let Some(p) = s.strip_suffix('%') {
        return p
            .trim()
            .parse::<f64>()
            .ok()
            .map(|v| v / 100.0 * scale_percent);
    }
    s.parse::<f64>().ok()
}

fn hsl_to_rgb(h: f64, s: f64, l: f64) -> Rgb {
    let h = h.rem_euclid(360.0) / 360.0;
    let (s, l) = (s.clamp(0.0, 1.0), l.clamp(0.0, 1.0));
    let q = if l < 0.5 {
        l * (1.0 + s)
    } else {
        l + s - l * s
    };
    let p = 2.0 * l - q;
    let f = |mut t: f64| {
        if t < 0.0 {
            t += 1.0
        }
        if t > 1.0 {
            t -= 1.0
        }
        let v = if t < 1.0 / 6.0 {
            p + (q - p) * 6.0 * t
        } else if t < 0.5 {
            q
        } else if t < 2.0 / 3.0 {
            p + (q - p) * (2.0 / 3.0 - t) * 6.0
        } else {
            p
        };
        (v * 255.0).round().clamp(0.0, 255.0) as u8
    };
    Rgb(f(h + 1.0 / 3.0), f(h), f(h - 1.0 / 3.0))
}

fn split_args(inner: &str) -> Vec<&str> {
    inner
        .split(|c: char| c == ',' || c == '/' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Parses one CSS colour value, in any syntax CSS Color 4 names (`#hex`,
/// `rgb()`, `hsl()`, `hwb()`, `lab()`, `lch()`, `oklab()`, `oklch()`, the
/// named colours) with `csscolorparser`. Mostly transparent colours (alpha
/// under one half) and keywords such as `currentColor` are None.
pub fn parse_color(v: &str) -> Option<Rgb> {
    let v = v.trim().trim_end_matches("!important").trim();
    let c = csscolorparser::parse(v).ok()?;
    if c.a < 0.5 {
        return None;
    }
    let [r, g, b, _] = c.to_rgba8();
    Some(Rgb(r, g, b))
}

/// A custom property's value: a colour, or the bare channel lists design
/// systems keep in variables (`18, 18, 18` as Shopify themes do,
/// `222.2 47.4% 11.2%` HSL as shadcn/Tailwind themes do).
pub fn parse_variable_color(v: &str) -> Option<Rgb> {
    if let Some(c) = parse_color(v) {
        return Some(c);
    }
    let parts: Vec<&str> = split_args(v.trim());
    if parts.len() != 3 {
        return None;
    }
    if parts[1].ends_with('%') && parts[2].ends_with('%') {
        let h = parts[0].trim_end_matches("deg").parse::<f64>().ok()?;
        return Some(hsl_to_rgb(
            h,
            number(parts[1], 1.0)?,
            number(parts[2], 1.0)?,
        ));
    }
    let c = |s: &str| s.parse::<u16>().ok().filter(|n| *n <= 255).map(|n| n as u8);
    Some(Rgb(c(parts[0])?, c(parts[1])?, c(parts[2])?))
}

/// One piece of colour evidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColorEvidence {
    pub color: Rgb,
    pub role: ColorRole,
    /// How strong the source is: 5 theme-color / named variable, 4 button
    /// background, manifest, body; 2 links, headers; 1 weak.
    pub weight: u32,
}

/// Colours closer than this (RGB distance ~40) count as one.
const SAME_COLOR_D2: i32 = 40 * 40;

/// Picks at most one colour per role. A role's winner is the colour with
/// the highest total (best weight first, then a chromatic colour over a
/// grey for primary and accent, then how often it was seen); accent must
/// differ from primary.
pub fn choose(evidence: &[ColorEvidence]) -> Vec<BrandColor> {
    let best = |role: ColorRole, avoid: Option<Rgb>| -> Option<Rgb> {
        let mut tally: Vec<(Rgb, u32, u32, usize)> = Vec::new();
        for (i, e) in evidence.iter().enumerate() {
            if e.role != role || avoid.is_some_and(|a| a.distance2(e.color) < SAME_COLOR_D2) {
                continue;
            }
            match tally.iter_mut().find(|t| t.0 == e.color) {
                Some(t) => {
                    t.1 = t.1.max(e.weight);
                    t.2 += 1;
                }
                None => tally.push((e.color, e.weight, 1, i)),
            }
        }
        let chroma_counts = matches!(role, ColorRole::Primary | ColorRole::Accent);
        tally.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| {
                    if chroma_counts {
                        b.0.is_chromatic().cmp(&a.0.is_chromatic())
                    } else {
                        std::cmp::Ordering::Equal
                    }
                })
                .then_with(|| b.2.cmp(&a.2))
                .then_with(|| a.3.cmp(&b.3))
        });
        tally.first().map(|t| t.0)
    };
    let primary = best(ColorRole::Primary, None);
    let accent = best(ColorRole::Accent, primary);
    let background = best(ColorRole::Background, None);
    let text = best(ColorRole::Text, None);
    [
        (primary, ColorRole::Primary),
        (accent, ColorRole::Accent),
        (background, ColorRole::Background),
        (text, ColorRole::Text),
    ]
    .into_iter()
    .filter_map(|(c, role)| {
        let c = c?;
        let (t, ratio) = readable_text(c);
        Some(BrandColor {
            hex: c.hex(),
            role: Some(role),
            text_color: Some(t.hex()),
            contrast: Some(ratio),
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contrast_follows_the_wcag_formula() {
        assert_eq!((contrast(WHITE, BLACK) * 100.0).round() / 100.0, 21.0);
        assert_eq!(contrast(WHITE, WHITE), 1.0);
        // #767676 on white is the classic 4.54:1.
        let grey = Rgb(0x76, 0x76, 0x76);
        assert_eq!((contrast(grey, WHITE) * 100.0).round() / 100.0, 4.54);
        // Symmetric.
        assert_eq!(contrast(grey, WHITE), contrast(WHITE, grey));
    }

    #[test]
    fn readable_text_picks_the_stronger_of_white_and_black() {
        let (t, r) = readable_text(Rgb(0x25, 0x63, 0xeb));
        assert_eq!(t, WHITE);
        assert_eq!(r, 5.17);
        let (t, r) = readable_text(Rgb(0xfa, 0xcc, 0x15));
        assert_eq!(t, BLACK);
        assert!(r > 12.0, "{r}");
        let (_, r) = readable_text(WHITE);
        assert_eq!(r, 21.0);
    }

    #[test]
    fn parses_css_colour_syntaxes() {
        assert_eq!(parse_color("#FFF"), Some(WHITE));
        assert_eq!(parse_color("#2563eb"), Some(Rgb(0x25, 0x63, 0xeb)));
        assert_eq!(parse_color("#2563ebff"), Some(Rgb(0x25, 0x63, 0xeb)));
        assert_eq!(parse_color("#2563eb10"), None, "mostly transparent");
        assert_eq!(parse_color("rgb(37, 99, 235)"), Some(Rgb(37, 99, 235)));
        assert_eq!(parse_color("rgb(37 99 235 / 90%)"), Some(Rgb(37, 99, 235)));
        assert_eq!(parse_color("rgba(0,0,0,0)"), None);
        assert_eq!(parse_color("hsl(0, 100%, 50%)"), Some(Rgb(255, 0, 0)));
        assert_eq!(parse_color("White"), Some(WHITE));
        assert_eq!(parse_color("currentColor"), None);
        assert_eq!(parse_color("#12"), None);
        assert_eq!(parse_variable_color("18, 18, 18"), Some(Rgb(18, 18, 18)));
        assert_eq!(
            parse_variable_color("222.2 47.4% 11.2%"),
            Some(hsl_to_rgb(222.2, 0.474, 0.112))
        );
        assert_eq!(parse_variable_color("1rem 2rem 3rem"), None);
        // Syntaxes and names the hand-written parser did not read.
        assert_eq!(parse_color("hwb(0 0% 0%)"), Some(Rgb(255, 0, 0)));
        assert_eq!(parse_color("rebeccapurple"), Some(Rgb(102, 51, 153)));
        assert_eq!(parse_color("cornflowerblue"), Some(Rgb(100, 149, 237)));
        assert_eq!(
            parse_color("oklch(62.8% 0.2577 29.23)"),
            Some(Rgb(255, 0, 0))
        );
        assert_eq!(parse_color("transparent"), None);
    }

    #[test]
    fn choose_prefers_weight_then_chroma_and_keeps_accent_distinct() {
        let blue = Rgb(0x25, 0x63, 0xeb);
        let near_blue = Rgb(0x26, 0x64, 0xea);
        let pink = Rgb(0xdb, 0x27, 0x77);
        let ev = [
            ColorEvidence {
                color: WHITE,
                role: ColorRole::Primary,
                weight: 4,
            },
            ColorEvidence {
                color: blue,
                role: ColorRole::Primary,
                weight: 4,
            },
            ColorEvidence {
                color: near_blue,
                role: ColorRole::Accent,
                weight: 4,
            },
            ColorEvidence {
                color: pink,
                role: ColorRole::Accent,
                weight: 2,
            },
            ColorEvidence {
                color: WHITE,
                role: ColorRole::Background,
                weight: 4,
            },
        ];
        let out = choose(&ev);
        assert_eq!(out[0].hex, "#2563eb");
        assert_eq!(out[0].role, Some(ColorRole::Primary));
        assert_eq!(
            out[1].hex, "#db2777",
            "an accent equal to primary is skipped"
        );
        assert_eq!(out[2].role, Some(ColorRole::Background));
        assert_eq!(out[2].text_color.as_deref(), Some("#000000"));
        assert_eq!(out.len(), 3);
    }
}
