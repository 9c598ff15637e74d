//! What the home page's HTML says about its brand: names, description,
//! image candidates, style sheets, the web manifest, theme colours, font
//! links and social links. No network here.

mod dom;
mod json_ld;
mod title;

use super::fonts;
use dom::{best_srcset, clean, home_link, img_url, inside, logo_ish, sel, tokens, wordmark_ish};
use json_ld::{json_ld_types, ld_url, walk_ld, ORG_TYPES};
use scraper::ElementRef;
use serde_json::Value;
use url::Url;

pub use title::name_from_title;

/// Where an image candidate's bytes are.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageRef {
    Url(Url),
    /// The markup of an inline `<svg>`.
    Inline(String),
}

/// An image the page points at as its logo or icon.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub image: ImageRef,
    /// `header`, `header-dark`, `inline-svg`, `json-ld`, `og:image`,
    /// `apple-touch-icon`, `manifest`, `favicon`.
    pub source: &'static str,
    /// Named as a text-only logo (`wordmark`, `logotype`, …).
    pub wordmark: bool,
}

/// Facts read from the page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageFacts {
    pub og_site_name: Option<String>,
    pub ld_name: Option<String>,
    pub app_name: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    pub candidates: Vec<Candidate>,
    pub stylesheets: Vec<Url>,
    /// `<style>` blocks and inline `style` attributes as rules.
    pub inline_css: Vec<String>,
    pub manifest: Option<Url>,
    pub theme_colors: Vec<String>,
    pub font_families: Vec<String>,
    /// JSON-LD `sameAs` first, then every outbound link.
    pub social_links: Vec<String>,
    /// Classes of `<html>` and `<body>`.
    pub doc_classes: Vec<String>,
}

/// Reads the page.
pub fn read(html: &str, page: &Url) -> PageFacts {
    // Guarded like the content pipeline's parse: hostile nesting stays linear.
    let doc = webdata_content::parse_html(html);
    let mut f = PageFacts::default();
    let meta = |key: &str| -> Option<String> {
        doc.select(&sel("meta")).find_map(|m| {
            let v = m.value();
            let k = v.attr("property").or_else(|| v.attr("name"))?;
            k.eq_ignore_ascii_case(key)
                .then(|| v.attr("content").and_then(clean))
                .flatten()
        })
    };
    f.og_site_name = meta("og:site_name");
    f.app_name = meta("application-name").or_else(|| meta("apple-mobile-web-app-title"));
    f.title = doc
        .select(&sel("title"))
        .next()
        .and_then(|t| clean(&t.text().collect::<String>()));
    f.description = meta("description").or_else(|| meta("og:description"));
    for m in doc.select(&sel("meta[name=theme-color]")) {
        let media = m.value().attr("media").unwrap_or("").to_ascii_lowercase();
        if media.contains("dark") {
            continue;
        }
        if let Some(c) = m.value().attr("content") {
            f.theme_colors.push(c.trim().to_string());
        }
    }

    // JSON-LD: the organisation's name, logo and profiles.
    let mut ld_logo = None;
    let mut same_as = Vec::new();
    for s in doc.select(&sel("script[type='application/ld+json']")) {
        let text: String = s.text().collect();
        let Ok(v) = serde_json::from_str::<Value>(text.trim()) else {
            continue;
        };
        let mut nodes = Vec::new();
        walk_ld(&v, &mut nodes);
        for n in nodes {
            let types = json_ld_types(n);
            let org = types.iter().any(|t| ORG_TYPES.contains(&t.as_str()));
            if org {
                if f.ld_name.is_none() {
                    f.ld_name = n.get("name").and_then(Value::as_str).and_then(clean);
                }
                if ld_logo.is_none() {
                    ld_logo = n
                        .get("logo")
                        .and_then(ld_url)
                        .and_then(|u| page.join(u).ok());
                }
                if f.description.is_none() {
                    f.description = n.get("description").and_then(Value::as_str).and_then(clean);
                }
                match n.get("sameAs") {
                    Some(Value::String(s)) => same_as.push(s.clone()),
                    Some(Value::Array(a)) => {
                        same_as.extend(a.iter().filter_map(|x| x.as_str().map(str::to_string)))
                    }
                    _ => {}
                }
            } else if types.iter().any(|t| t == "WebSite") && f.ld_name.is_none() {
                f.ld_name = n.get("name").and_then(Value::as_str).and_then(clean);
            }
        }
    }

    // <link>: icons, manifest, style sheets, font services.
    for l in doc.select(&sel("link[href]")) {
        let v = l.value();
        let rel = v.attr("rel").unwrap_or("").to_ascii_lowercase();
        let rels: Vec<&str> = rel.split_whitespace().collect();
        let Some(href) = v.attr("href").and_then(|h| page.join(h.trim()).ok()) else {
            continue;
        };
        if !matches!(href.scheme(), "http" | "https") {
            continue;
        }
        if rels.iter().any(|r| r.starts_with("apple-touch-icon")) {
            f.candidates.push(Candidate {
                image: ImageRef::Url(href),
                source: "apple-touch-icon",
                wordmark: false,
            });
        } else if rels.contains(&"icon") {
            f.candidates.push(Candidate {
                image: ImageRef::Url(href),
                source: "favicon",
                wordmark: false,
            });
        } else if rels.contains(&"manifest") {
            f.manifest.get_or_insert(href);
        } else if rels.contains(&"stylesheet")
            || (rels.contains(&"preload") && v.attr("as") == Some("style"))
        {
            if fonts::is_font_service(&href) {
                f.font_families.extend(fonts::families_of_link(&href));
            } else if !f.stylesheets.contains(&href) {
                f.stylesheets.push(href);
            }
        }
    }

    // Header images and inline SVGs: in a link to the home page, or named
    // as a logo inside the header or navigation.
    let mut header_images = 0;
    for img in doc.select(&sel("img")) {
        if header_images >= 8 {
            break;
        }
        let chrome = inside(&img, &["header", "nav"]);
        if !(home_link(&img, page) || (chrome && logo_ish(&img))) || inside(&img, &["footer"]) {
            continue;
        }
        let wordmark = wordmark_ish(&img);
        // <picture> sources for the dark scheme are the dark-mode variant.
        if let Some(picture) = img
            .parent()
            .and_then(ElementRef::wrap)
            .filter(|p| p.value().name() == "picture")
        {
            for s in picture.select(&sel("source")) {
                let media = s.value().attr("media").unwrap_or("").to_ascii_lowercase();
                if media.contains("prefers-color-scheme") && media.contains("dark") {
                    if let Some(u) = s
                        .value()
                        .attr("srcset")
                        .and_then(best_srcset)
                        .and_then(|u| page.join(u).ok())
                    {
                        f.candidates.push(Candidate {
                            image: ImageRef::Url(u),
                            source: "header-dark",
                            wordmark,
                        });
                    }
                }
            }
        }
        if let Some(u) = img_url(&img, page) {
            header_images += 1;
            let t = tokens(&img);
            let dark_variant = t.contains("dark-mode")
                || t.contains("dark:block")
                || t.contains("only-dark")
                || t.contains("for-dark");
            let source = if dark_variant {
                "header-dark"
            } else {
                "header"
            };
            f.candidates.push(Candidate {
                image: ImageRef::Url(u),
                source,
                wordmark,
            });
        }
    }
    for svg in doc.select(&sel("svg")).take(200) {
        let chrome = inside(&svg, &["header", "nav"]);
        if inside(&svg, &["svg", "button", "footer"])
            || !(home_link(&svg, page) || (chrome && logo_ish(&svg)))
        {
            continue;
        }
        let markup = svg.html();
        let lower = markup.to_ascii_lowercase();
        let drawn = [
            "<path", "<rect", "<circle", "<polygon", "<text", "<ellipse", "<g",
        ]
        .iter()
        .any(|t| lower.contains(t));
        if !drawn || markup.len() > 200_000 {
            continue;
        }
        let text_only = lower.contains("<text")
            && !["<path", "<rect", "<circle", "<polygon", "<ellipse"]
                .iter()
                .any(|t| lower.contains(t));
        let markup = if lower.contains("xmlns=") {
            markup
        } else {
            markup.replacen("<svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"", 1)
        };
        f.candidates.push(Candidate {
            image: ImageRef::Inline(markup),
            source: "inline-svg",
            wordmark: text_only || wordmark_ish(&svg),
        });
        if f.candidates
            .iter()
            .filter(|c| c.source == "inline-svg")
            .count()
            >= 3
        {
            break;
        }
    }
    if let Some(u) = ld_logo {
        f.candidates.push(Candidate {
            image: ImageRef::Url(u),
            source: "json-ld",
            wordmark: false,
        });
    }
    if let Some(u) = meta("og:image").and_then(|u| page.join(&u).ok()) {
        f.candidates.push(Candidate {
            image: ImageRef::Url(u),
            source: "og:image",
            wordmark: false,
        });
    }

    for el in doc.select(&sel("html, body")) {
        f.doc_classes
            .extend(el.value().classes().map(str::to_string));
    }
    // CSS on the page itself.
    for s in doc.select(&sel("style")) {
        f.inline_css.push(s.text().collect());
    }
    for el in doc.select(&sel(
        "body[style], header[style], nav[style], button[style], a[style], html[style]",
    )) {
        let v = el.value();
        let mut selector = v.name().to_string();
        for c in v.classes() {
            selector.push('.');
            selector.push_str(c);
        }
        if let Some(style) = v.attr("style") {
            f.inline_css.push(format!("{selector} {{ {style} }}"));
        }
    }

    // Profiles: JSON-LD first, then the links.
    f.social_links = same_as;
    for a in doc.select(&sel("a[href]")) {
        if let Some(u) = a
            .value()
            .attr("href")
            .and_then(|h| page.join(h.trim()).ok())
        {
            if u.host_str() != page.host_str() {
                f.social_links.push(u.to_string());
            }
        }
        if f.social_links.len() > 2000 {
            break;
        }
    }
    f
}

#[cfg(test)]
mod tests;
