//! Tests of the brand choices: logo and icon ranking, image types, render reasons, manifests.

use super::choose::*;
use super::page::{Candidate, ImageRef};
use super::*;
use url::Url;
use webdata_core::brand::{BrandImage, BrandImageType, ImageBackground};

fn img(
    kind: BrandImageType,
    source: &str,
    format: ImageFormat,
    w: u32,
    h: u32,
    bg: ImageBackground,
) -> BrandImage {
    BrandImage {
        url: format!("https://a.test/{source}-{w}.{}", format.ext()),
        source_url: None,
        kind,
        format,
        width: w,
        height: h,
        background: bg,
        source: source.into(),
    }
}

#[test]
fn the_light_page_logo_beats_its_dark_mode_variant() {
    let logos = [
        img(
            BrandImageType::Logo,
            "header-dark",
            ImageFormat::Png,
            400,
            100,
            ImageBackground::Dark,
        ),
        img(
            BrandImageType::Logo,
            "header",
            ImageFormat::Png,
            200,
            50,
            ImageBackground::Light,
        ),
        img(
            BrandImageType::Logo,
            "og:image",
            ImageFormat::Jpeg,
            1200,
            630,
            ImageBackground::Any,
        ),
    ];
    assert_eq!(best_logo(&logos).map(|l| l.source.as_str()), Some("header"));
}

#[test]
fn the_largest_icon_wins_and_svg_counts_as_large() {
    let icons = [
        img(
            BrandImageType::Icon,
            "favicon",
            ImageFormat::Ico,
            48,
            48,
            ImageBackground::Any,
        ),
        img(
            BrandImageType::Icon,
            "apple-touch-icon",
            ImageFormat::Png,
            180,
            180,
            ImageBackground::Any,
        ),
        img(
            BrandImageType::Icon,
            "manifest",
            ImageFormat::Png,
            180,
            180,
            ImageBackground::Any,
        ),
    ];
    assert_eq!(
        best_icon(&icons).map(|l| l.source.as_str()),
        Some("apple-touch-icon")
    );
    let with_svg = [
        icons[0].clone(),
        img(
            BrandImageType::Icon,
            "favicon",
            ImageFormat::Svg,
            32,
            32,
            ImageBackground::Light,
        ),
    ];
    assert_eq!(
        best_icon(&with_svg).map(|l| l.format),
        Some(ImageFormat::Svg)
    );
}

#[test]
fn square_header_images_are_icons_and_wide_ones_logos() {
    let c = Candidate {
        image: ImageRef::Inline(String::new()),
        source: "header",
        wordmark: false,
    };
    assert_eq!(image_type(&c, 100, 100), BrandImageType::Icon);
    assert_eq!(image_type(&c, 300, 80), BrandImageType::Logo);
    let w = Candidate {
        wordmark: true,
        ..c.clone()
    };
    assert_eq!(image_type(&w, 300, 80), BrandImageType::Wordmark);
    let f = Candidate {
        source: "favicon",
        ..c
    };
    assert_eq!(image_type(&f, 300, 80), BrandImageType::Icon);
}

fn fixture_reason(site: &str) -> Option<&'static str> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/brand")
        .join(site)
        .join("index.html");
    let html = std::fs::read_to_string(&path).expect("fixture");
    let url = Url::parse("https://fixture.test/").expect("url");
    let opts = webdata_content::ContentOptions {
        want_markdown: false,
        ..Default::default()
    };
    let signals = webdata_content::extract(&html, &url, &opts)
        .expect("extract")
        .quality_signals;
    render_reason(Some(&signals), &page::read(&html, &url), "fixture.test")
}

#[test]
fn only_script_built_home_pages_are_rendered() {
    for site in [
        "wordpress",
        "shopify",
        "nextjs",
        "webflow",
        "squarespace",
        "static",
        "favicon-only",
        "inline-svg",
        "dark-mode",
        "imports",
        "outside",
    ] {
        assert_eq!(fixture_reason(site), None, "{site}");
    }
    assert_eq!(fixture_reason("spa"), Some("spa_shell"));
    // Scripts, no app root, but neither a name nor a logo.
    let url = Url::parse("https://x.test/").expect("url");
    let html = "<html><head><script src=/a.js></script></head><body><p>Loading the experience, please wait a moment while everything is prepared for you today.</p></body></html>";
    let signals = webdata_content::extract(html, &url, &Default::default())
        .expect("extract")
        .quality_signals;
    assert_eq!(
        render_reason(Some(&signals), &page::read(html, &url), "x.test"),
        Some("script_shell_without_brand")
    );
    let named = html.replace("<head>", "<head><title>Xylo</title>");
    assert_eq!(
        render_reason(Some(&signals), &page::read(&named, &url), "x.test"),
        None
    );
}

#[test]
fn manifest_icons_are_read_largest_first() {
    let base = Url::parse("https://a.test/static/site.webmanifest").expect("url");
    let m = read_manifest(
        r##"{"name":"Acme","theme_color":"#0f766e","icons":[{"src":"i-192.png","sizes":"192x192"},{"src":"/i-512.png","sizes":"512x512"}]}"##,
        &base,
    );
    assert_eq!(m.name.as_deref(), Some("Acme"));
    assert_eq!(
        m.icons.iter().map(|u| u.path()).collect::<Vec<_>>(),
        vec!["/i-512.png", "/static/i-192.png"]
    );
}
