//! Image facts from the bytes: format, pixel size (the best entry of an
//! ICO, the viewBox of an SVG), and which background the artwork is for.
//! AVIF is measured (imagesize) but not decoded: its background is `any`.

use super::colors::{self, Rgb};
use std::io::Cursor;
use webdata_core::brand::{ImageBackground, ImageFormat};

/// What the bytes of one image say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageFacts {
    pub format: ImageFormat,
    pub width: u32,
    pub height: u32,
    pub background: ImageBackground,
}

/// Largest side decoded (bigger images are refused, not decoded).
const MAX_SIDE: u32 = 8192;

/// The format from the first bytes.
pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
    if bytes.starts_with(b"\x89PNG") {
        Some(ImageFormat::Png)
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some(ImageFormat::Jpeg)
    } else if bytes.starts_with(b"GIF8") {
        Some(ImageFormat::Gif)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(ImageFormat::Webp)
    } else if bytes.starts_with(&[0, 0, 1, 0]) {
        Some(ImageFormat::Ico)
    } else if bytes.len() >= 12
        && &bytes[4..8] == b"ftyp"
        && matches!(&bytes[8..12], b"avif" | b"avis")
    {
        Some(ImageFormat::Avif)
    } else {
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2048)]).to_ascii_lowercase();
        head.contains("<svg").then_some(ImageFormat::Svg)
    }
}

/// Format, size and background of an image, or None when the bytes are
/// not an image webdata can measure.
pub fn facts(bytes: &[u8]) -> Option<ImageFacts> {
    let format = sniff(bytes)?;
    match format {
        ImageFormat::Svg => {
            let text = std::str::from_utf8(bytes).ok()?;
            let (width, height) = svg_size(text)?;
            Some(ImageFacts {
                format,
                width,
                height,
                background: svg_background(text),
            })
        }
        ImageFormat::Avif => {
            let size = imagesize::blob_size(bytes).ok()?;
            Some(ImageFacts {
                format,
                width: size.width as u32,
                height: size.height as u32,
                background: ImageBackground::Any,
            })
        }
        _ => {
            let (width, height) = if format == ImageFormat::Ico {
                ico_best(bytes)?
            } else {
                let r = image::ImageReader::with_format(Cursor::new(bytes), raster(format)?);
                r.into_dimensions().ok()?
            };
            if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
                return None;
            }
            let mut r = image::ImageReader::with_format(Cursor::new(bytes), raster(format)?);
            let mut limits = image::Limits::default();
            limits.max_image_width = Some(MAX_SIDE);
            limits.max_image_height = Some(MAX_SIDE);
            limits.max_alloc = Some(128 * 1024 * 1024);
            r.limits(limits);
            let background = match r.decode() {
                Ok(img) => classify_pixels(&img.thumbnail(128, 128).to_rgba8()),
                Err(_) => return None,
            };
            Some(ImageFacts {
                format,
                width,
                height,
                background,
            })
        }
    }
}

fn raster(f: ImageFormat) -> Option<image::ImageFormat> {
    Some(match f {
        ImageFormat::Png => image::ImageFormat::Png,
        ImageFormat::Jpeg => image::ImageFormat::Jpeg,
        ImageFormat::Gif => image::ImageFormat::Gif,
        ImageFormat::Webp => image::ImageFormat::WebP,
        ImageFormat::Ico => image::ImageFormat::Ico,
        ImageFormat::Svg | ImageFormat::Avif => return None,
    })
}

/// The best (largest, then deepest) entry of an ICO directory: its size.
pub fn ico_best(bytes: &[u8]) -> Option<(u32, u32)> {
    let u16_at = |i: usize| Some(u16::from_le_bytes([*bytes.get(i)?, *bytes.get(i + 1)?]));
    if u16_at(0)? != 0 || u16_at(2)? != 1 {
        return None;
    }
    let count = u16_at(4)? as usize;
    (0..count)
        .filter_map(|i| {
            let e = 6 + 16 * i;
            let w = *bytes.get(e)? as u32;
            let h = *bytes.get(e + 1)? as u32;
            let bpp = u16_at(e + 6)?;
            let (w, h) = (if w == 0 { 256 } else { w }, if h == 0 { 256 } else { h });
            Some((w, h, bpp))
        })
        .max_by_key(|&(w, h, bpp)| (w * h, bpp))
        .map(|(w, h, _)| (w, h))
}

/// Dark artwork on transparency → `light`; light artwork → `dark`;
/// opaque (under 10 % transparent) or mixed → `any`. A visible pixel is
/// dark when it contrasts more with white than with black (WCAG
/// luminance below 0.179); 75 % of the visible pixels decide.
pub fn classify_pixels(img: &image::RgbaImage) -> ImageBackground {
    let total = img.width() as usize * img.height() as usize;
    if total == 0 {
        return ImageBackground::Any;
    }
    let (mut transparent, mut dark, mut light) = (0usize, 0usize, 0usize);
    for p in img.pixels() {
        let [r, g, b, a] = p.0;
        if a < 32 {
            transparent += 1;
        } else if a >= 128 {
            if Rgb(r, g, b).luminance() < DARK_LUMINANCE {
                dark += 1;
            } else {
                light += 1;
            }
        }
    }
    verdict(transparent * 10 >= total, dark, light)
}

/// Luminance where a colour contrasts equally with white and black.
const DARK_LUMINANCE: f64 = 0.1791;

fn verdict(has_transparency: bool, dark: usize, light: usize) -> ImageBackground {
    let visible = dark + light;
    if !has_transparency || visible == 0 {
        ImageBackground::Any
    } else if dark * 4 >= visible * 3 {
        ImageBackground::Light
    } else if light * 4 >= visible * 3 {
        ImageBackground::Dark
    } else {
        ImageBackground::Any
    }
}

fn svg_open_tag(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let start = lower.find("<svg")?;
    let end = start + text.get(start..)?.find('>')?;
    text.get(start..end)
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let re = regex::Regex::new(&format!(r#"(?i)\s{name}\s*=\s*["']([^"']*)["']"#)).ok()?;
    re.captures(tag)?.get(1).map(|m| m.as_str())
}

fn length(v: &str) -> Option<f64> {
    let v = v.trim().trim_end_matches("px");
    v.parse::<f64>().ok().filter(|n| *n > 0.0 && n.is_finite())
}

/// Pixel size of an SVG: its viewBox, else its width and height.
pub fn svg_size(text: &str) -> Option<(u32, u32)> {
    let tag = svg_open_tag(text)?;
    if let Some(vb) = attr(tag, "viewBox") {
        let n: Vec<f64> = vb
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .filter_map(|p| p.parse().ok())
            .collect();
        if n.len() == 4 && n[2] > 0.0 && n[3] > 0.0 {
            return Some((n[2].round().max(1.0) as u32, n[3].round().max(1.0) as u32));
        }
    }
    let w = attr(tag, "width").and_then(length)?;
    let h = attr(tag, "height").and_then(length)?;
    Some((w.round() as u32, h.round() as u32))
}

/// The background an SVG is drawn for, from its fill and stroke colours
/// (no fill at all means the default black). `currentColor` follows the
/// page, and a rectangle covering the whole picture makes it opaque:
/// both are `any`.
pub fn svg_background(text: &str) -> ImageBackground {
    let lower = text.to_ascii_lowercase();
    if lower.contains("currentcolor") {
        return ImageBackground::Any;
    }
    if let Some((w, h)) = svg_size(text) {
        let rect = regex::Regex::new(r#"<rect\b[^>]*>"#).ok();
        let covers = rect.is_some_and(|re| {
            re.find_iter(&lower).any(|m| {
                let t = m.as_str();
                let full = |name: &str, size: u32| {
                    attr(t, name).is_some_and(|v| {
                        v.trim() == "100%" || length(v).is_some_and(|n| n.round() as u32 >= size)
                    })
                };
                full("width", w)
                    && full("height", h)
                    && attr(t, "fill").is_none_or(|f| f.trim() != "none")
            })
        });
        if covers {
            return ImageBackground::Any;
        }
    }
    let Ok(re) =
        regex::Regex::new(r#"(?i)(?:fill|stroke|stop-color)\s*(?:=\s*["']|:\s*)([^"';}>]+)"#)
    else {
        return ImageBackground::Any;
    };
    let (mut dark, mut light) = (0usize, 0usize);
    for c in re.captures_iter(text) {
        let Some(v) = c.get(1) else { continue };
        if let Some(rgb) = colors::parse_color(v.as_str()) {
            if rgb.luminance() < DARK_LUMINANCE {
                dark += 1;
            } else {
                light += 1;
            }
        }
    }
    if dark + light == 0 {
        return ImageBackground::Light;
    }
    verdict(true, dark, light)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgba, RgbaImage};

    fn png(img: &RgbaImage) -> Vec<u8> {
        let mut out = Cursor::new(Vec::new());
        let _ = img.write_to(&mut out, image::ImageFormat::Png);
        out.into_inner()
    }

    /// A `w`×`h` picture: `art` in the middle third, `bg` around it.
    fn picture(w: u32, h: u32, art: [u8; 4], bg: [u8; 4]) -> RgbaImage {
        RgbaImage::from_fn(w, h, |x, y| {
            if x >= w / 3 && x < 2 * w / 3 && y >= h / 3 && y < 2 * h / 3 {
                Rgba(art)
            } else {
                Rgba(bg)
            }
        })
    }

    #[test]
    fn background_comes_from_the_pixels() {
        let clear = [0, 0, 0, 0];
        let dark_on_clear = facts(&png(&picture(60, 30, [20, 20, 60, 255], clear)));
        assert_eq!(
            dark_on_clear.map(|f| f.background),
            Some(ImageBackground::Light)
        );
        let light_on_clear = facts(&png(&picture(60, 30, [250, 250, 250, 255], clear)));
        assert_eq!(
            light_on_clear.map(|f| f.background),
            Some(ImageBackground::Dark)
        );
        let opaque = facts(&png(&picture(
            60,
            30,
            [20, 20, 60, 255],
            [255, 255, 255, 255],
        )));
        assert_eq!(opaque.map(|f| f.background), Some(ImageBackground::Any));
        let mixed = RgbaImage::from_fn(60, 30, |x, y| {
            if y < 10 {
                Rgba([0, 0, 0, 0])
            } else if x < 30 {
                Rgba([0, 0, 0, 255])
            } else {
                Rgba([255, 255, 255, 255])
            }
        });
        assert_eq!(
            facts(&png(&mixed)).map(|f| f.background),
            Some(ImageBackground::Any)
        );
        let f = facts(&png(&picture(60, 30, [0, 0, 0, 255], clear)));
        assert_eq!(
            f.map(|f| (f.format, f.width, f.height)),
            Some((ImageFormat::Png, 60, 30))
        );
    }

    /// An ICO holding PNG entries of the given sizes.
    fn ico(sizes: &[u32]) -> Vec<u8> {
        let pngs: Vec<Vec<u8>> = sizes
            .iter()
            .map(|&s| png(&picture(s, s, [200, 30, 30, 255], [0, 0, 0, 0])))
            .collect();
        let mut out = vec![0, 0, 1, 0, sizes.len() as u8, 0];
        let mut offset = 6 + 16 * sizes.len();
        for (s, p) in sizes.iter().zip(&pngs) {
            let b = if *s >= 256 { 0 } else { *s as u8 };
            out.extend_from_slice(&[b, b, 0, 0, 1, 0, 32, 0]);
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(&(offset as u32).to_le_bytes());
            offset += p.len();
        }
        for p in pngs {
            out.extend_from_slice(&p);
        }
        out
    }

    #[test]
    fn ico_lists_its_best_size() {
        let bytes = ico(&[16, 48, 32]);
        assert_eq!(ico_best(&bytes), Some((48, 48)));
        let f = facts(&bytes);
        assert_eq!(
            f.map(|f| (f.format, f.width, f.height)),
            Some((ImageFormat::Ico, 48, 48))
        );
        assert_eq!(ico_best(&ico(&[256, 16])), Some((256, 256)), "0 means 256");
        assert_eq!(ico_best(b"\0\0\x02\0"), None, "a cursor is not an icon");
    }

    #[test]
    fn svg_size_comes_from_the_viewbox() {
        assert_eq!(
            svg_size(r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"/>"#),
            Some((120, 40))
        );
        assert_eq!(
            svg_size(r#"<svg width="64px" height="32"></svg>"#),
            Some((64, 32))
        );
        assert_eq!(
            svg_size(r#"<svg viewBox="0,0,24.4,24.6" width="10" height="10"/>"#),
            Some((24, 25))
        );
        assert_eq!(svg_size("<svg></svg>"), None);
    }

    #[test]
    fn svg_background_reads_fills() {
        let dark = r##"<svg viewBox="0 0 10 10"><path fill="#111827" d="M0 0h5v5z"/></svg>"##;
        assert_eq!(svg_background(dark), ImageBackground::Light);
        let light =
            r##"<svg viewBox="0 0 10 10"><path style="fill:#ffffff" d="M0 0h5v5z"/></svg>"##;
        assert_eq!(svg_background(light), ImageBackground::Dark);
        let default_black = r#"<svg viewBox="0 0 10 10"><path d="M0 0h5v5z"/></svg>"#;
        assert_eq!(svg_background(default_black), ImageBackground::Light);
        let follows = r#"<svg viewBox="0 0 10 10"><path fill="currentColor" d="M0 0h5v5z"/></svg>"#;
        assert_eq!(svg_background(follows), ImageBackground::Any);
        let opaque = r##"<svg viewBox="0 0 10 10"><rect width="10" height="10" fill="#2563eb"/><path fill="#fff" d="M0 0h5v5z"/></svg>"##;
        assert_eq!(svg_background(opaque), ImageBackground::Any);
    }

    #[test]
    fn sniffs_formats() {
        assert_eq!(sniff(b"\x89PNG\r\n"), Some(ImageFormat::Png));
        assert_eq!(sniff(b"GIF89a"), Some(ImageFormat::Gif));
        assert_eq!(sniff(b"RIFF\0\0\0\0WEBPVP8L"), Some(ImageFormat::Webp));
        assert_eq!(sniff(b"\0\0\0\x1cftypavif"), Some(ImageFormat::Avif));
        assert_eq!(
            sniff(b"<?xml version=\"1.0\"?>\n<svg/>"),
            Some(ImageFormat::Svg)
        );
        assert_eq!(sniff(b"<html>"), None);
    }
}
