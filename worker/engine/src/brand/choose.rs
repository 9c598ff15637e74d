//! The pure choices: whether to render, what the manifest says, which
//! image is a logo or an icon, and which logo and icon are best.

use url::Url;
use webdata_core::brand::{
    Brand, BrandImage, BrandImageType, ColorRole, ImageBackground, ImageFormat,
};

use super::colors::{self, ColorEvidence};
use super::fonts::{self, FontEvidence};
use super::page::{self, Candidate, ImageRef, PageFacts};
use super::{confidence, socials, MAX_IMAGES};

/// Why the fetched home page should be rendered for its brand, if it should.
pub fn render_reason(
    signals: Option<&webdata_content::QualitySignals>,
    facts: &page::PageFacts,
    domain: &str,
) -> Option<&'static str> {
    let signals = signals?;
    if let Some(why) = webdata_content::needs_render(signals) {
        return Some(why);
    }
    let named = facts.og_site_name.is_some()
        || facts.ld_name.is_some()
        || facts.app_name.is_some()
        || facts
            .title
            .as_deref()
            .and_then(|t| page::name_from_title(t, domain))
            .is_some();
    let logo = facts.candidates.iter().any(|c| {
        matches!(
            c.source,
            "header" | "header-dark" | "inline-svg" | "json-ld"
        )
    });
    (signals.scripts > 0 && !named && !logo).then_some("script_shell_without_brand")
}

/// The web manifest's fields brand extraction uses.
#[derive(Debug, Default)]
pub(super) struct Manifest {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) theme_color: Option<String>,
    pub(super) background_color: Option<String>,
    pub(super) icons: Vec<Url>,
}

pub(super) fn read_manifest(text: &str, base: &Url) -> Manifest {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Manifest::default();
    };
    let s = |k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
    };
    let mut icons: Vec<(u32, Url)> = v
        .get("icons")
        .and_then(|i| i.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|i| {
                    let src = base.join(i.get("src")?.as_str()?).ok()?;
                    let size = i
                        .get("sizes")
                        .and_then(|s| s.as_str())
                        .and_then(|s| {
                            s.split_whitespace()
                                .filter_map(|d| d.split('x').next()?.parse::<u32>().ok())
                                .max()
                        })
                        .unwrap_or(0);
                    Some((size, src))
                })
                .collect()
        })
        .unwrap_or_default();
    icons.sort_by_key(|i| std::cmp::Reverse(i.0));
    Manifest {
        name: s("name").or_else(|| s("short_name")),
        description: s("description"),
        theme_color: s("theme_color"),
        background_color: s("background_color"),
        icons: icons.into_iter().take(3).map(|(_, u)| u).collect(),
    }
}

fn source_rank(source: &str) -> u8 {
    match source {
        "header" | "inline-svg" => 0,
        "header-dark" => 1,
        "json-ld" => 2,
        "apple-touch-icon" => 3,
        "manifest" => 4,
        "favicon" => 5,
        _ => 6, // og:image
    }
}

pub(super) fn image_type(c: &Candidate, w: u32, h: u32) -> BrandImageType {
    if matches!(c.source, "apple-touch-icon" | "manifest" | "favicon") {
        return BrandImageType::Icon;
    }
    if c.wordmark {
        return BrandImageType::Wordmark;
    }
    let (long, short) = (w.max(h) as f64, w.min(h).max(1) as f64);
    if long / short <= 1.25 {
        BrandImageType::Icon
    } else {
        BrandImageType::Logo
    }
}

/// The best full logo: the site's own header first, artwork for a light
/// page before a dark-mode variant, SVG before raster, then the larger.
pub fn best_logo(logos: &[BrandImage]) -> Option<&BrandImage> {
    let pick = |kind: BrandImageType| {
        logos.iter().filter(|l| l.kind == kind).min_by_key(|l| {
            (
                source_rank(&l.source),
                l.background == ImageBackground::Dark,
                l.format != ImageFormat::Svg,
                std::cmp::Reverse(l.width as u64 * l.height as u64),
            )
        })
    };
    pick(BrandImageType::Logo).or_else(|| pick(BrandImageType::Wordmark))
}

/// The best square mark: the largest (an SVG counts as any size), then
/// apple-touch-icon, manifest, header, favicon in that order.
pub fn best_icon(logos: &[BrandImage]) -> Option<&BrandImage> {
    logos
        .iter()
        .filter(|l| l.kind == BrandImageType::Icon)
        .min_by_key(|l| {
            let side = if l.format == ImageFormat::Svg {
                1024
            } else {
                l.width.min(l.height)
            };
            let rank = match l.source.as_str() {
                "apple-touch-icon" => 0,
                "manifest" => 1,
                "header" | "inline-svg" => 2,
                _ => 3,
            };
            (std::cmp::Reverse(side), rank)
        })
}

/// Colour and font evidence the page and its manifest add to the style
/// sheets': theme colours, manifest colours, and font families named by
/// the page or by font-service imports.
pub(super) fn add_page_evidence(
    facts: &PageFacts,
    manifest: &Manifest,
    imported_fonts: &[String],
    colour_ev: &mut Vec<ColorEvidence>,
    font_ev: &mut Vec<FontEvidence>,
) {
    for c in facts
        .theme_colors
        .iter()
        .filter_map(|c| colors::parse_color(c))
    {
        colour_ev.push(ColorEvidence {
            color: c,
            role: ColorRole::Primary,
            weight: 5,
        });
    }
    if let Some(c) = manifest
        .theme_color
        .as_deref()
        .and_then(colors::parse_color)
    {
        colour_ev.push(ColorEvidence {
            color: c,
            role: ColorRole::Primary,
            weight: 4,
        });
    }
    if let Some(c) = manifest
        .background_color
        .as_deref()
        .and_then(colors::parse_color)
    {
        colour_ev.push(ColorEvidence {
            color: c,
            role: ColorRole::Background,
            weight: 2,
        });
    }
    for f in facts.font_families.iter().chain(imported_fonts) {
        font_ev.push(FontEvidence {
            family: f.clone(),
            role: None,
            weight: 2,
        });
    }
}

/// The images worth loading, at most [`MAX_IMAGES`].
pub(super) fn image_candidates(
    facts: &PageFacts,
    manifest: &Manifest,
    page_url: &Url,
) -> Vec<Candidate> {
    // Image candidates, de-duplicated by URL; og:image only when nothing
    // better names a logo; /favicon.ico always (browsers look for it there
    // whatever the page declares, and every image found is listed; when it
    // is absent its fetch fails and it is left out).
    let mut candidates: Vec<Candidate> = facts.candidates.clone();
    for u in &manifest.icons {
        candidates.push(Candidate {
            image: ImageRef::Url(u.clone()),
            source: "manifest",
            wordmark: false,
        });
    }
    if let Ok(u) = page_url.join("/favicon.ico") {
        candidates.push(Candidate {
            image: ImageRef::Url(u),
            source: "favicon",
            wordmark: false,
        });
    }
    let strong_logo = candidates.iter().any(|c| {
        matches!(
            c.source,
            "header" | "header-dark" | "inline-svg" | "json-ld"
        )
    });
    if strong_logo {
        candidates.retain(|c| c.source != "og:image");
    }
    let mut seen = std::collections::HashSet::new();
    candidates.retain(|c| match &c.image {
        ImageRef::Url(u) => seen.insert(u.as_str().to_string()),
        ImageRef::Inline(m) => seen.insert(m.clone()),
    });
    candidates.truncate(MAX_IMAGES);
    candidates
}

/// The brand from the evidence and the images loaded: the best logo and
/// icon, name, description, colours, fonts, socials and confidence.
pub(super) fn assemble(
    domain: &str,
    facts: &PageFacts,
    manifest: &Manifest,
    colour_ev: &[ColorEvidence],
    font_ev: &[FontEvidence],
    logos: Vec<BrandImage>,
) -> Brand {
    let logo = best_logo(&logos).cloned();
    let icon = best_icon(&logos).cloned();

    let (name, name_level) = if let Some(n) = facts
        .og_site_name
        .clone()
        .or(facts.ld_name.clone())
        .or(facts.app_name.clone())
        .or(manifest.name.clone())
    {
        (Some(n), 2)
    } else if let Some(n) = facts
        .title
        .as_deref()
        .and_then(|t| page::name_from_title(t, domain))
    {
        (Some(n), 1)
    } else {
        (None, 0)
    };
    let description = facts.description.clone().or(manifest.description.clone());
    let colors = colors::choose(colour_ev);
    let primary_level = colors
        .iter()
        .find(|c| c.role == Some(ColorRole::Primary))
        .map(|p| {
            let strong = colour_ev
                .iter()
                .any(|e| e.role == ColorRole::Primary && e.weight >= 4 && e.color.hex() == p.hex);
            if strong {
                2
            } else {
                1
            }
        })
        .unwrap_or(0);
    let fonts = fonts::choose(font_ev);
    let socials = socials::collect(facts.social_links.iter().map(String::as_str));
    let signals = confidence::Signals {
        name: name_level,
        logo: match &logo {
            Some(l) if l.source == "og:image" => 1,
            Some(_) => 2,
            None => 0,
        },
        icon_px: icon
            .as_ref()
            .map(|i| {
                if i.format == ImageFormat::Svg {
                    1024
                } else {
                    i.width.min(i.height)
                }
            })
            .unwrap_or(0),
        primary: primary_level,
        fonts: fonts.iter().any(|f| f.role.is_some()),
        description: description.is_some(),
        socials: !socials.is_empty(),
    };
    Brand {
        domain: domain.to_string(),
        name,
        description,
        logo,
        icon,
        logos,
        colors,
        fonts,
        socials,
        confidence: confidence::confidence(&signals),
    }
}
