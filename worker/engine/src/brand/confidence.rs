//! How sure a lookup is: the weighted share of the brand that was found
//! from strong evidence. Each part adds its weight when present:
//!
//! | part | weight | counts when |
//! |---|---|---|
//! | name | 0.20 | from og:site_name, JSON-LD, application-name or the manifest (0.10 from the title, 0 from the domain) |
//! | logo | 0.25 | a header image, inline SVG or JSON-LD logo (0.10 when only og:image) |
//! | icon | 0.15 | at least 64 px (0.10 when smaller) |
//! | primary colour | 0.15 | from theme-color, the manifest, a named variable or a button (0.08 from links or headers) |
//! | fonts | 0.10 | at least one family with a role |
//! | description | 0.10 | present |
//! | socials | 0.05 | at least one profile |
//!
//! 1.0 means every part came from a strong source; a page with only a
//! favicon and a title scores about 0.2.

/// The evidence behind one lookup.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Signals {
    /// 2 explicit name, 1 from the title, 0 from the domain.
    pub name: u8,
    /// 2 strong logo, 1 og:image only, 0 none.
    pub logo: u8,
    /// Largest icon side in pixels (0 = none).
    pub icon_px: u32,
    /// 2 strong primary colour, 1 weak, 0 none.
    pub primary: u8,
    pub fonts: bool,
    pub description: bool,
    pub socials: bool,
}

/// The confidence, 0 to 1, rounded to two decimals.
pub fn confidence(s: &Signals) -> f64 {
    let level = |l: u8, strong: f64, weak: f64| match l {
        0 => 0.0,
        1 => weak,
        _ => strong,
    };
    let icon = match s.icon_px {
        0 => 0.0,
        px if px >= 64 => 0.15,
        _ => 0.10,
    };
    let total = level(s.name, 0.20, 0.10)
        + level(s.logo, 0.25, 0.10)
        + icon
        + level(s.primary, 0.15, 0.08)
        + if s.fonts { 0.10 } else { 0.0 }
        + if s.description { 0.10 } else { 0.0 }
        + if s.socials { 0.05 } else { 0.0 };
    (total.min(1.0) * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_strong_is_one_and_nothing_is_zero() {
        let all = Signals {
            name: 2,
            logo: 2,
            icon_px: 180,
            primary: 2,
            fonts: true,
            description: true,
            socials: true,
        };
        assert_eq!(confidence(&all), 1.0);
        assert_eq!(confidence(&Signals::default()), 0.0);
        let favicon_only = Signals {
            name: 1,
            icon_px: 32,
            ..Default::default()
        };
        assert_eq!(confidence(&favicon_only), 0.2);
    }
}
