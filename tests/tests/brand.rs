//! Issue 7, black-box: GET /v1/brand and the `brand` scrape format against
//! fixture home pages (tests/fixtures/brand/<site>/) written like real
//! sites, served on loopback. Images are generated here, deterministically.
//!
//! Long by design: a test suite (one area of the spec per file).
//! Each test stands alone; splitting the file would only add test
//! binaries to link.

mod support;

use axum::body::Body;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use image::{Rgba, RgbaImage};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Cursor;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{Db, Server, ServerOptions, Site};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;
const CLEAR: [u8; 4] = [0, 0, 0, 0];

// ---------- generated images ----------

/// `w`×`h`: `art` in the middle third, `bg` around it.
fn picture(w: u32, h: u32, art: [u8; 4], bg: [u8; 4]) -> RgbaImage {
    RgbaImage::from_fn(w, h, |x, y| {
        if x >= w / 3 && x < 2 * w / 3 && y >= h / 3 && y < 2 * h / 3 {
            Rgba(art)
        } else {
            Rgba(bg)
        }
    })
}

fn encode(img: &RgbaImage, f: image::ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    if f == image::ImageFormat::Jpeg || f == image::ImageFormat::Gif {
        let rgb = image::DynamicImage::ImageRgba8(img.clone()).to_rgb8();
        rgb.write_to(&mut out, f).expect("encode");
    } else {
        img.write_to(&mut out, f).expect("encode");
    }
    out.into_inner()
}

fn png(w: u32, h: u32, art: [u8; 4], bg: [u8; 4]) -> Vec<u8> {
    encode(&picture(w, h, art, bg), image::ImageFormat::Png)
}

/// An ICO holding PNG entries of the given sizes.
fn ico(sizes: &[u32]) -> Vec<u8> {
    let pngs: Vec<Vec<u8>> = sizes
        .iter()
        .map(|&s| png(s, s, [200, 30, 30, 255], [255, 255, 255, 255]))
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

const TEAL_DARK: [u8; 4] = [0x13, 0x4e, 0x4a, 255];
const WHITE: [u8; 4] = [255, 255, 255, 255];
const OPAQUE_RED: [u8; 4] = [0xc4, 0x1e, 0x3a, 255];

/// The images each fixture site serves (path → bytes).
fn images(site: &str) -> Vec<(&'static str, Vec<u8>)> {
    match site {
        "wordpress" => vec![
            (
                "/wp-content/uploads/2024/01/logo.png",
                png(300, 80, TEAL_DARK, CLEAR),
            ),
            (
                "/wp-content/uploads/2024/01/cropped-icon-32x32.png",
                png(32, 32, WHITE, OPAQUE_RED),
            ),
            (
                "/wp-content/uploads/2024/01/cropped-icon-192x192.png",
                png(192, 192, WHITE, OPAQUE_RED),
            ),
            (
                "/wp-content/uploads/2024/01/cropped-icon-180x180.png",
                png(180, 180, WHITE, OPAQUE_RED),
            ),
            (
                "/wp-content/uploads/2024/01/og-banner.jpg",
                encode(
                    &picture(1200, 630, WHITE, OPAQUE_RED),
                    image::ImageFormat::Jpeg,
                ),
            ),
        ],
        "shopify" => vec![
            (
                "/cdn/shop/files/logo.jpg",
                encode(
                    &picture(600, 180, OPAQUE_RED, WHITE),
                    image::ImageFormat::Jpeg,
                ),
            ),
            (
                "/cdn/shop/files/favicon.png",
                png(32, 32, WHITE, OPAQUE_RED),
            ),
        ],
        "nextjs" => vec![
            ("/favicon.ico", ico(&[16, 32, 48])),
            (
                "/apple-icon.png",
                png(180, 180, WHITE, [0x25, 0x63, 0xeb, 255]),
            ),
            (
                "/icon-192.png",
                png(192, 192, WHITE, [0x25, 0x63, 0xeb, 255]),
            ),
            (
                "/icon-512.png",
                png(512, 512, WHITE, [0x25, 0x63, 0xeb, 255]),
            ),
        ],
        "webflow" => vec![
            ("/images/logo-white.png", png(280, 64, WHITE, CLEAR)),
            (
                "/images/favicon.png",
                png(32, 32, WHITE, [0x6d, 0x28, 0xd9, 255]),
            ),
            (
                "/images/webclip.png",
                png(256, 256, WHITE, [0x6d, 0x28, 0xd9, 255]),
            ),
        ],
        "squarespace" => vec![
            (
                "/static/images/logo.webp",
                encode(
                    &picture(400, 120, [0x1e, 0x3a, 0x5f, 255], CLEAR),
                    image::ImageFormat::WebP,
                ),
            ),
            ("/favicon.ico", ico(&[16, 32, 64])),
        ],
        "static" => vec![
            (
                "/img/logo.gif",
                encode(
                    &picture(240, 60, [0xe1, 0x1d, 0x48, 255], [0xff, 0xfb, 0xeb, 255]),
                    image::ImageFormat::Gif,
                ),
            ),
            (
                "/img/mark-512.png",
                png(512, 512, WHITE, [0xe1, 0x1d, 0x48, 255]),
            ),
            ("/favicon.png", png(64, 64, WHITE, [0xe1, 0x1d, 0x48, 255])),
        ],
        "favicon-only" => vec![("/favicon.ico", ico(&[16, 32]))],
        "svg-touch" => vec![
            ("/favicon.ico", ico(&[16, 32])),
            (
                "/apple-touch-icon.png",
                png(180, 180, WHITE, [0x0e, 0x74, 0x90, 255]),
            ),
        ],
        "dark-mode" => vec![
            (
                "/assets/logo-light.png",
                png(320, 80, [0x1c, 0x19, 0x17, 255], CLEAR),
            ),
            (
                "/assets/logo-dark.png",
                png(320, 80, [0xfa, 0xfa, 0xf9, 255], CLEAR),
            ),
            (
                "/favicon-48.png",
                png(48, 48, WHITE, [0xf9, 0x73, 0x16, 255]),
            ),
        ],
        "spa" => vec![
            (
                "/static/vela-logo.png",
                png(240, 60, [0x0e, 0x74, 0x90, 255], CLEAR),
            ),
            (
                "/static/touch-icon.png",
                png(180, 180, WHITE, [0x0e, 0x74, 0x90, 255]),
            ),
        ],
        "imports" => vec![
            (
                "/img/logo.png",
                png(200, 50, [0x03, 0x69, 0xa1, 255], CLEAR),
            ),
            ("/favicon.png", png(64, 64, WHITE, [0x03, 0x69, 0xa1, 255])),
        ],
        "outside" => vec![("/favicon.png", png(32, 32, WHITE, OPAQUE_RED))],
        _ => vec![],
    }
}

// ---------- the fixture server ----------

/// How the home page answers.
const OK: u8 = 0;
const FAIL_500: u8 = 1;
const FAIL_403: u8 = 2;
const SLOW: u8 = 3;

struct Fixture {
    site: Site,
    mode: Arc<AtomicU8>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    files: Arc<Files>,
}

/// Path → (content type, bytes).
type Files = HashMap<String, (String, Vec<u8>)>;

impl Fixture {
    fn home_hits(&self) -> usize {
        self.hits
            .lock()
            .map(|h| h.get("/").copied().unwrap_or(0))
            .unwrap_or(0)
    }
    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }
    fn bytes(&self, path: &str) -> Vec<u8> {
        self.files
            .get(path)
            .map(|f| f.1.clone())
            .unwrap_or_default()
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css",
        "js" => "text/javascript",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        _ => "application/octet-stream",
    }
}

fn walk(dir: &std::path::Path, root: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
    for e in std::fs::read_dir(dir).expect("fixture dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, root, out);
        } else {
            let rel = p
                .strip_prefix(root)
                .expect("prefix")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((format!("/{rel}"), std::fs::read(&p).expect("read fixture")));
        }
    }
}

/// Serves tests/fixtures/brand/<site> (`{{BASE}}`/`{{HOST}}` filled in)
/// plus the site's generated images; `/` is index.html.
async fn serve(site: &str) -> Fixture {
    serve_with(site, &[]).await
}

/// [`serve`] with more `{{NAME}}` placeholders filled in.
async fn serve_with(site: &str, fill: &[(&str, String)]) -> Fixture {
    // The base URL is known only once Site::serve has bound, so the files
    // are filled in afterwards through a shared slot.
    let slot: Arc<Mutex<Option<Arc<Files>>>> = Arc::new(Mutex::new(None));
    let mode = Arc::new(AtomicU8::new(OK));
    let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let (slot2, mode2, hits2) = (slot.clone(), mode.clone(), hits.clone());
    let router = axum::Router::new().fallback(move |uri: Uri| {
        let (slot, mode, hits) = (slot2.clone(), mode2.clone(), hits2.clone());
        async move {
            let path = uri.path().to_string();
            if let Ok(mut h) = hits.lock() {
                *h.entry(path.clone()).or_default() += 1;
            }
            if path == "/robots.txt" {
                return (StatusCode::NOT_FOUND, "").into_response();
            }
            if path == "/" {
                match mode.load(Ordering::SeqCst) {
                    FAIL_500 => return (StatusCode::INTERNAL_SERVER_ERROR, "down").into_response(),
                    FAIL_403 => return (StatusCode::FORBIDDEN, "go away").into_response(),
                    SLOW => tokio::time::sleep(Duration::from_secs(5)).await,
                    _ => {}
                }
            }
            let files = slot.lock().ok().and_then(|s| s.clone());
            let key = if path == "/" {
                "/index.html".to_string()
            } else {
                path
            };
            match files.as_ref().and_then(|f| f.get(&key)) {
                Some((ct, bytes)) => Response::builder()
                    .header(header::CONTENT_TYPE, ct.as_str())
                    .body(Body::from(bytes.clone()))
                    .unwrap_or_default(),
                None => (StatusCode::NOT_FOUND, "not found").into_response(),
            }
        }
    });
    let served = Site::serve(router).await;
    let base = served.base.clone();
    let host = base.trim_start_matches("http://").to_string();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/brand")
        .join(site);
    let mut raw = Vec::new();
    if root.exists() {
        walk(&root, &root, &mut raw);
    }
    let mut files = HashMap::new();
    for (path, bytes) in raw {
        let ct = content_type(&path).to_string();
        let bytes = match String::from_utf8(bytes) {
            Ok(t) if !ct.starts_with("image/png") => fill
                .iter()
                .fold(
                    t.replace("{{BASE}}", &base).replace("{{HOST}}", &host),
                    |t, (k, v)| t.replace(&format!("{{{{{k}}}}}"), v),
                )
                .into_bytes(),
            Ok(t) => t.into_bytes(),
            Err(e) => e.into_bytes(),
        };
        files.insert(path, (ct, bytes));
    }
    for (path, bytes) in images(site) {
        files.insert(path.to_string(), (content_type(path).to_string(), bytes));
    }
    let files = Arc::new(files);
    if let Ok(mut s) = slot.lock() {
        *s = Some(files.clone());
    }
    Fixture {
        site: served,
        mode,
        hits,
        files,
    }
}

// ---------- helpers ----------

async fn brand(server: &Server, domain: &str, extra: &str) -> support::Resp {
    let q = format!("/v1/brand?domain={}{extra}", urlencode(domain));
    server.get_as(&server.key.clone(), &q).await
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// WCAG 2 contrast, computed independently of the service.
fn wcag(a: &str, b: &str) -> f64 {
    fn lum(hex: &str) -> f64 {
        let h = hex.trim_start_matches('#');
        let c = |i: usize| {
            let v = u8::from_str_radix(&h[i..i + 2], 16).expect("hex") as f64 / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * c(0) + 0.7152 * c(2) + 0.0722 * c(4)
    }
    let (x, y) = (lum(a), lum(b));
    let (hi, lo) = if x > y { (x, y) } else { (y, x) };
    ((hi + 0.05) / (lo + 0.05) * 100.0).round() / 100.0
}

/// Every colour's contrast matches the WCAG formula to 2 decimals.
fn check_contrasts(data: &Value) {
    for c in data["colors"].as_array().expect("colors") {
        let hex = c["hex"].as_str().expect("hex");
        let text = c["textColor"].as_str().expect("textColor");
        let got = c["contrast"].as_f64().expect("contrast");
        assert_eq!(got, wcag(hex, text), "{c}");
        // textColor is the more readable of white and black.
        let other = if text == "#ffffff" {
            "#000000"
        } else {
            "#ffffff"
        };
        assert!(wcag(hex, other) <= got, "{c}");
    }
}

fn color(data: &Value, role: &str) -> Option<String> {
    data["colors"]
        .as_array()?
        .iter()
        .find(|c| c["role"] == role)
        .and_then(|c| c["hex"].as_str().map(str::to_string))
}

fn font(data: &Value, role: &str) -> Option<String> {
    data["fonts"]
        .as_array()?
        .iter()
        .find(|c| c["role"] == role)
        .and_then(|c| c["family"].as_str().map(str::to_string))
}

fn socials(data: &Value) -> Vec<(String, String)> {
    data["socials"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        s["network"].as_str().unwrap_or("").to_string(),
                        s["url"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// (type, format, width, height, background, source) of an image.
fn shape(img: &Value) -> (String, String, i64, i64, String, String) {
    (
        img["type"].as_str().unwrap_or("").into(),
        img["format"].as_str().unwrap_or("").into(),
        img["width"].as_i64().unwrap_or(-1),
        img["height"].as_i64().unwrap_or(-1),
        img["background"].as_str().unwrap_or("").into(),
        img["source"].as_str().unwrap_or("").into(),
    )
}

fn s6(
    t: &str,
    f: &str,
    w: i64,
    h: i64,
    bg: &str,
    src: &str,
) -> (String, String, i64, i64, String, String) {
    (t.into(), f.into(), w, h, bg.into(), src.into())
}

/// Looks a fixture site up fresh and checks the parts every site shares.
async fn fresh_brand(site: &str) -> (Server, Fixture, Value) {
    let server = Server::start(Db::Sqlite).await;
    let fx = serve(site).await;
    let r = brand(&server, &fx.site.url("/"), "").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["success"], true);
    assert_eq!(r.json["cached"], false);
    assert_eq!(r.json["credits_used"], 5);
    r.assert_request_id();
    let data = r.json["data"].clone();
    assert_eq!(data["domain"], fx.site.base.trim_start_matches("http://"));
    check_contrasts(&data);
    // Every image is hosted by the service, its original URL kept.
    for img in data["logos"].as_array().expect("logos") {
        let url = img["url"].as_str().expect("url");
        assert!(
            url.starts_with(&server.base) && url.contains("/v1/blobs/"),
            "{img}"
        );
    }
    (server, fx, data)
}

// ---------- one test per fixture site ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wordpress_theme_gives_custom_logo_site_icon_and_theme_json_colours() {
    let (server, fx, d) = fresh_brand("wordpress").await;
    assert_eq!(d["name"], "Bright Bakery");
    assert_eq!(
        d["description"],
        "Sourdough, rye and pastries baked every morning in Leeds."
    );
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "png", 300, 80, "light", "header")
    );
    assert_eq!(
        d["logo"]["sourceUrl"],
        fx.site.url("/wp-content/uploads/2024/01/logo.png")
    );
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "png", 192, 192, "any", "favicon")
    );
    let logos: Vec<_> = d["logos"]
        .as_array()
        .expect("logos")
        .iter()
        .map(shape)
        .collect();
    assert_eq!(
        logos.len(),
        4,
        "og:image is not used when a real logo exists: {logos:?}"
    );
    assert!(logos.contains(&s6("icon", "png", 180, 180, "any", "apple-touch-icon")));
    assert_eq!(color(&d, "primary").as_deref(), Some("#0f766e"));
    assert_eq!(color(&d, "accent").as_deref(), Some("#f59e0b"));
    assert_eq!(color(&d, "background").as_deref(), Some("#fffdf7"));
    assert_eq!(color(&d, "text").as_deref(), Some("#1f2937"));
    let primary = &d["colors"][0];
    assert_eq!(primary["textColor"], "#ffffff");
    assert_eq!(primary["contrast"], 5.47);
    assert_eq!(font(&d, "heading").as_deref(), Some("Playfair Display"));
    assert_eq!(font(&d, "body").as_deref(), Some("Lato"));
    assert_eq!(
        socials(&d),
        vec![
            (
                "facebook".into(),
                "https://www.facebook.com/brightbakery".into()
            ),
            ("x".into(), "https://x.com/brightbakery".into()),
        ],
        "share buttons and a post link are not profiles"
    );
    assert_eq!(d["confidence"], 1.0);
    // The hosted copy serves the same bytes.
    let logo = server
        .http
        .get(d["logo"]["url"].as_str().expect("url"))
        .send()
        .await
        .expect("get");
    assert_eq!(logo.status(), 200);
    assert_eq!(logo.headers()[header::CONTENT_TYPE], "image/png");
    assert_eq!(
        logo.bytes().await.expect("bytes").to_vec(),
        fx.bytes("/wp-content/uploads/2024/01/logo.png")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shopify_theme_gives_jpeg_logo_and_dawn_colour_variables() {
    let (_server, _fx, d) = fresh_brand("shopify").await;
    // The checked expected Brand's summary: confidence (icon under 64 px: 0.10),
    // description, and the primary colour's text colour and WCAG contrast.
    assert_eq!(d["confidence"], 0.95);
    assert_eq!(
        d["description"].as_str(),
        Some("Everyday carry, made to last. Free shipping over $50.")
    );
    assert_eq!(d["colors"][0]["role"], "primary");
    assert_eq!(d["colors"][0]["textColor"], "#ffffff");
    assert_eq!(d["colors"][0]["contrast"], 5.84);
    assert_eq!(d["name"], "Northwind Goods");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "jpeg", 600, 180, "any", "header")
    );
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "png", 32, 32, "any", "favicon")
    );
    assert_eq!(
        d["logos"].as_array().map(Vec::len),
        Some(2),
        "the JSON-LD logo is the header logo"
    );
    assert_eq!(
        color(&d, "primary").as_deref(),
        Some("#c41e3a"),
        "button background"
    );
    assert_eq!(color(&d, "accent").as_deref(), Some("#334fb4"));
    assert_eq!(color(&d, "background").as_deref(), Some("#ffffff"));
    assert_eq!(color(&d, "text").as_deref(), Some("#121212"));
    assert_eq!(font(&d, "heading").as_deref(), Some("Playfair Display"));
    assert_eq!(font(&d, "body").as_deref(), Some("Assistant"));
    let nets: Vec<String> = socials(&d).into_iter().map(|s| s.0).collect();
    assert_eq!(nets, vec!["instagram", "tiktok", "pinterest"]);
    assert_eq!(socials(&d)[0].1, "https://www.instagram.com/northwindgoods");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nextjs_app_gives_svg_logo_manifest_icon_and_shadcn_colours() {
    let (_server, _fx, d) = fresh_brand("nextjs").await;
    // The checked expected Brand's summary: confidence (every part strong),
    // description, and the primary colour's text colour and WCAG contrast.
    assert_eq!(d["confidence"], 1.0);
    assert_eq!(
        d["description"].as_str(),
        Some("The platform for frontend developers: preview, ship and scale.")
    );
    assert_eq!(d["colors"][0]["role"], "primary");
    assert_eq!(d["colors"][0]["textColor"], "#ffffff");
    assert_eq!(d["colors"][0]["contrast"], 5.17);
    assert_eq!(d["name"], "Acme Cloud", "from the web manifest");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "svg", 140, 32, "light", "header")
    );
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "png", 512, 512, "any", "manifest")
    );
    let logos: Vec<_> = d["logos"]
        .as_array()
        .expect("logos")
        .iter()
        .map(shape)
        .collect();
    assert!(
        logos.contains(&s6("icon", "ico", 48, 48, "any", "favicon")),
        "{logos:?}"
    );
    assert!(
        logos.contains(&s6("icon", "png", 180, 180, "any", "apple-touch-icon")),
        "{logos:?}"
    );
    assert_eq!(
        color(&d, "primary").as_deref(),
        Some("#2563eb"),
        "hsl(221.2 83.2% 53.3%)"
    );
    assert_eq!(color(&d, "background").as_deref(), Some("#ffffff"));
    assert_eq!(color(&d, "text").as_deref(), Some("#020817"));
    assert_eq!(d["colors"][0]["textColor"], "#ffffff");
    assert_eq!(d["colors"][0]["contrast"], 5.17);
    assert_eq!(
        font(&d, "body").as_deref(),
        Some("Inter"),
        "next/font's mangled name, via the body class"
    );
    assert_eq!(font(&d, "mono").as_deref(), Some("JetBrains Mono"));
    assert_eq!(
        socials(&d),
        vec![
            ("x".into(), "https://x.com/acmecloud".into()),
            ("github".into(), "https://github.com/acme-cloud".into())
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webflow_site_gives_white_logo_for_dark_backgrounds_and_webclip_icon() {
    let (_server, _fx, d) = fresh_brand("webflow").await;
    // The checked expected Brand's summary: confidence (name from the title: 0.10),
    // description, and the primary colour's text colour and WCAG contrast.
    assert_eq!(d["confidence"], 0.9);
    assert_eq!(
        d["description"].as_str(),
        Some("We design brands, websites and products for startups.")
    );
    assert_eq!(d["colors"][0]["role"], "primary");
    assert_eq!(d["colors"][0]["textColor"], "#ffffff");
    assert_eq!(d["colors"][0]["contrast"], 7.1);
    assert_eq!(d["name"], "Studio Nine", "the title without its tagline");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "png", 280, 64, "dark", "header")
    );
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "png", 256, 256, "any", "apple-touch-icon")
    );
    assert_eq!(color(&d, "primary").as_deref(), Some("#6d28d9"));
    assert_eq!(color(&d, "text").as_deref(), Some("#333333"));
    assert_eq!(
        color(&d, "background"),
        None,
        "a dark navbar is not the page background"
    );
    assert_eq!(font(&d, "heading").as_deref(), Some("DM Serif Display"));
    assert_eq!(font(&d, "body").as_deref(), Some("Inter"));
    assert_eq!(
        socials(&d),
        vec![
            (
                "linkedin".into(),
                "https://www.linkedin.com/company/studio-nine-design".into()
            ),
            (
                "instagram".into(),
                "https://www.instagram.com/studionine.design".into()
            ),
            ("dribbble".into(), "https://dribbble.com/studionine".into()),
        ],
        "a person's LinkedIn is not the brand's"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn squarespace_like_site_gives_webp_logo_and_ico_with_best_size() {
    let (_server, _fx, d) = fresh_brand("squarespace").await;
    // The checked expected Brand's summary: confidence (every part strong),
    // description, and the primary colour's text colour and WCAG contrast.
    assert_eq!(d["confidence"], 1.0);
    assert_eq!(
        d["description"].as_str(),
        Some("Coastal furniture, handmade in Maine.")
    );
    assert_eq!(d["colors"][0]["role"], "primary");
    assert_eq!(d["colors"][0]["textColor"], "#ffffff");
    assert_eq!(d["colors"][0]["contrast"], 5.18);
    assert_eq!(d["name"], "Harbor & Pine");
    assert_eq!(d["description"], "Coastal furniture, handmade in Maine.");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "webp", 400, 120, "light", "header")
    );
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "ico", 64, 64, "any", "favicon")
    );
    assert_eq!(color(&d, "primary").as_deref(), Some("#c2410c"));
    assert_eq!(color(&d, "accent").as_deref(), Some("#1e3a5f"));
    assert_eq!(color(&d, "background").as_deref(), Some("#f7f4ef"));
    assert_eq!(font(&d, "heading").as_deref(), Some("freight-big-pro"));
    assert_eq!(font(&d, "body").as_deref(), Some("proxima-nova"));
    let nets: Vec<String> = socials(&d).into_iter().map(|s| s.0).collect();
    assert_eq!(nets, vec!["facebook", "instagram"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hand_written_static_site_gives_gif_logo_theme_colour_and_font_faces() {
    let (_server, _fx, d) = fresh_brand("static").await;
    assert_eq!(d["name"], "Pixel Forge");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "gif", 240, 60, "any", "header")
    );
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "png", 512, 512, "any", "json-ld")
    );
    assert_eq!(color(&d, "primary").as_deref(), Some("#e11d48"));
    assert_eq!(color(&d, "accent").as_deref(), Some("#f59e0b"));
    assert_eq!(color(&d, "background").as_deref(), Some("#fffbeb"));
    assert_eq!(color(&d, "text").as_deref(), Some("#1c1917"));
    assert_eq!(d["colors"][0]["contrast"], 4.7);
    assert_eq!(font(&d, "heading").as_deref(), Some("Fraunces"));
    assert_eq!(font(&d, "body").as_deref(), Some("Source Sans 3"));
    let nets: Vec<String> = socials(&d).into_iter().map(|s| s.0).collect();
    assert_eq!(
        nets,
        vec!["bluesky", "github", "youtube", "discord"],
        "JSON-LD sameAs first; no tweet button"
    );
    // Name from the title (0.10), no description (0).
    assert_eq!(d["confidence"], 0.8);
}

/// Issue 27: `/favicon.ico` is found where browsers look for it even when
/// the page declares an SVG logo and an apple-touch-icon, and every image
/// found is listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn undeclared_favicon_ico_is_listed_beside_declared_icons() {
    let (_server, fx, d) = fresh_brand("svg-touch").await;
    let logos: Vec<_> = d["logos"]
        .as_array()
        .expect("logos")
        .iter()
        .map(shape)
        .collect();
    assert!(
        logos.contains(&s6("icon", "ico", 32, 32, "any", "favicon")),
        "{logos:?}"
    );
    assert!(
        logos.contains(&s6("icon", "png", 180, 180, "any", "apple-touch-icon")),
        "{logos:?}"
    );
    assert!(
        logos.iter().any(|l| l.1 == "svg"),
        "the SVG logo: {logos:?}"
    );
    assert_eq!(
        fx.hits
            .lock()
            .map(|h| h.get("/favicon.ico").copied())
            .unwrap_or(None),
        Some(1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn favicon_only_site_gives_an_icon_no_logo_and_low_confidence() {
    let (_server, _fx, d) = fresh_brand("favicon-only").await;
    assert_eq!(d["name"], "Quiet Site");
    assert!(d.get("logo").is_none(), "{d}");
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "ico", 32, 32, "any", "favicon")
    );
    assert_eq!(d["colors"], json!([]));
    assert_eq!(d["fonts"], json!([]));
    assert_eq!(d["socials"], json!([]));
    assert_eq!(d["confidence"], 0.2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn inline_svg_logo_and_wordmark_are_hosted_without_a_source_url() {
    let (server, _fx, d) = fresh_brand("inline-svg").await;
    // The checked expected Brand's summary: confidence (every part strong),
    // description, and the primary colour's text colour and WCAG contrast.
    assert_eq!(d["confidence"], 1.0);
    assert_eq!(
        d["description"].as_str(),
        Some("Orbit tracks every satellite launch, live.")
    );
    assert_eq!(d["colors"][0]["role"], "primary");
    assert_eq!(d["colors"][0]["textColor"], "#ffffff");
    assert_eq!(d["colors"][0]["contrast"], 6.29);
    assert_eq!(d["name"], "Orbit");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "svg", 160, 40, "light", "inline-svg")
    );
    assert!(d["logo"].get("sourceUrl").is_none(), "{}", d["logo"]);
    let logos: Vec<_> = d["logos"]
        .as_array()
        .expect("logos")
        .iter()
        .map(shape)
        .collect();
    assert!(
        logos.contains(&s6("wordmark", "svg", 90, 20, "light", "inline-svg")),
        "{logos:?}"
    );
    assert_eq!(
        logos.len(),
        3,
        "the menu button's icon is not a logo: {logos:?}"
    );
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "svg", 32, 32, "light", "favicon")
    );
    let svg = server
        .http
        .get(d["logo"]["url"].as_str().expect("url"))
        .send()
        .await
        .expect("get");
    assert_eq!(svg.headers()[header::CONTENT_TYPE], "image/svg+xml");
    assert!(svg.text().await.unwrap_or_default().contains("<circle"));
    assert_eq!(color(&d, "primary").as_deref(), Some("#4f46e5"));
    assert_eq!(font(&d, "heading").as_deref(), Some("Space Grotesk"));
    assert_eq!(font(&d, "body").as_deref(), Some("IBM Plex Sans"));
    assert_eq!(
        socials(&d),
        vec![
            (
                "linkedin".into(),
                "https://www.linkedin.com/company/orbit-launches".into()
            ),
            ("x".into(), "https://x.com/orbitlaunches".into()),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dark_mode_variant_is_listed_and_the_light_page_logo_is_chosen() {
    let (_server, _fx, d) = fresh_brand("dark-mode").await;
    // The checked expected Brand's summary: confidence (a 48 px icon 0.10, no description),
    // description, and the primary colour's text colour and WCAG contrast.
    assert_eq!(d["confidence"], 0.85);
    assert_eq!(d["description"].as_str(), None);
    assert_eq!(d["colors"][0]["role"], "primary");
    assert_eq!(d["colors"][0]["textColor"], "#000000");
    assert_eq!(d["colors"][0]["contrast"], 7.49);
    assert_eq!(d["name"], "Lumen");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "png", 320, 80, "light", "header")
    );
    let logos: Vec<_> = d["logos"]
        .as_array()
        .expect("logos")
        .iter()
        .map(shape)
        .collect();
    assert!(
        logos.contains(&s6("logo", "png", 320, 80, "dark", "header-dark")),
        "{logos:?}"
    );
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "png", 48, 48, "any", "favicon")
    );
    assert_eq!(
        color(&d, "primary").as_deref(),
        Some("#f97316"),
        "the dark-scheme theme colour is not the brand's"
    );
    assert_eq!(color(&d, "background").as_deref(), Some("#ffffff"));
    assert_eq!(font(&d, "body").as_deref(), Some("Geist"));
    assert_eq!(
        socials(&d),
        vec![(
            "threads".into(),
            "https://www.threads.net/@lumen.notes".into()
        )]
    );
}

// ---------- cache, cost and failures (both stores) ----------

async fn age_brand(server: &Server, domain: &str, by_ms: i64) {
    let store = server.store().await;
    sqlx::query("UPDATE brand_cache SET fetched_at = fetched_at - $1 WHERE host = $2")
        .bind(by_ms)
        .bind(domain)
        .execute(store.pool())
        .await
        .expect("age the cached brand");
}

async fn fetched_at(server: &Server, domain: &str) -> i64 {
    let store = server.store().await;
    store
        .brand_cache_get(domain)
        .await
        .expect("read")
        .map(|c| c.fetched_at)
        .unwrap_or(0)
}

async fn fresh_then_cached_then_forced(db: Db) {
    let server = Server::start(db).await;
    let fx = serve("favicon-only").await;
    let domain = fx.site.base.trim_start_matches("http://").to_string();
    let first = brand(&server, &fx.site.url("/"), "").await;
    assert_eq!(
        (
            first.json["cached"].clone(),
            first.json["credits_used"].clone()
        ),
        (json!(false), json!(5)),
        "{}",
        first.text
    );
    // The same host through another path: cached, 1 credit, no fetch.
    let second = brand(&server, &fx.site.url("/pricing?plan=pro"), "").await;
    assert_eq!(
        (
            second.json["cached"].clone(),
            second.json["credits_used"].clone()
        ),
        (json!(true), json!(1)),
        "{}",
        second.text
    );
    assert_eq!(second.json["stale"], false);
    assert_eq!(
        second.json["data"], first.json["data"],
        "the cached brand is the same brand"
    );
    assert_eq!(fx.home_hits(), 1);
    // A cached image link still works.
    let icon = server
        .http
        .get(second.json["data"]["icon"]["url"].as_str().expect("url"))
        .send()
        .await
        .expect("get");
    assert_eq!(icon.status(), 200);
    // maxAge=0 forces a fresh lookup.
    let forced = brand(&server, &domain, "&maxAge=0").await;
    assert_eq!(
        (
            forced.json["cached"].clone(),
            forced.json["credits_used"].clone()
        ),
        (json!(false), json!(5)),
        "{}",
        forced.text
    );
    assert_eq!(fx.home_hits(), 2);
    // A maxAge shorter than the cached brand's age also reads fresh.
    age_brand(&server, &domain, 10_000).await;
    let short = brand(&server, &domain, "&maxAge=5000").await;
    assert_eq!(short.json["credits_used"], 5);
    assert_eq!(server.credits().await, 1000 - 5 - 1 - 5 - 5);
}

async fn brand_older_than_a_week_is_served_and_refreshed_in_background(db: Db) {
    let server = Server::start(db).await;
    let fx = serve("favicon-only").await;
    let domain = fx.site.base.trim_start_matches("http://").to_string();
    assert_eq!(brand(&server, &domain, "").await.json["credits_used"], 5);
    age_brand(&server, &domain, 8 * DAY_MS).await;
    let aged = fetched_at(&server, &domain).await;
    let r = brand(&server, &domain, "").await;
    assert_eq!(
        (r.json["cached"].clone(), r.json["credits_used"].clone()),
        (json!(true), json!(1)),
        "{}",
        r.text
    );
    let mut refreshed = false;
    for _ in 0..100 {
        if fetched_at(&server, &domain).await > aged + DAY_MS {
            refreshed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        refreshed,
        "the background refresh did not store a new brand"
    );
    assert_eq!(fx.home_hits(), 2);
    assert_eq!(server.credits().await, 1000 - 5 - 1, "the refresh is free");
    // Between 1 and 7 days old: served, not refreshed.
    age_brand(&server, &domain, 2 * DAY_MS).await;
    assert_eq!(brand(&server, &domain, "").await.json["cached"], true);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fx.home_hits(), 2);
}

async fn transient_failure_serves_the_old_brand_as_stale(db: Db) {
    let server = Server::start(db).await;
    let fx = serve("favicon-only").await;
    let domain = fx.site.base.trim_start_matches("http://").to_string();
    let first = brand(&server, &domain, "").await;
    assert_eq!(first.json["credits_used"], 5);
    age_brand(&server, &domain, 31 * DAY_MS).await;
    fx.set(FAIL_500);
    let r = brand(&server, &domain, "").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (
            r.json["cached"].clone(),
            r.json["stale"].clone(),
            r.json["credits_used"].clone()
        ),
        (json!(true), json!(true), json!(1))
    );
    assert_eq!(r.json["data"]["name"], "Quiet Site");
    fx.set(FAIL_403);
    let r = brand(&server, &domain, "&maxAge=0").await;
    assert_eq!(
        r.json["stale"], true,
        "a bot block is transient too: {}",
        r.text
    );
    assert_eq!(server.credits().await, 1000 - 5 - 1 - 1);
}

async fn failure_with_nothing_cached_costs_nothing_and_names_the_cause(db: Db) {
    let server =
        Server::start_with(ServerOptions::new(db).env("WEBDATA_BRAND_TIMEOUT_MS", "1000")).await;
    let fx = serve("favicon-only").await;
    fx.set(FAIL_500);
    brand(&server, &fx.site.url("/"), "")
        .await
        .assert_error(502, "fetch_failed");
    fx.set(FAIL_403);
    brand(&server, &fx.site.url("/"), "")
        .await
        .assert_error(502, "blocked_by_site");
    fx.set(SLOW);
    brand(&server, &fx.site.url("/"), "")
        .await
        .assert_error(504, "timeout");
    // Nothing listens on port 9 of 127.0.0.2.
    brand(&server, "http://127.0.0.2:9/", "")
        .await
        .assert_error(502, "fetch_failed");
    assert_eq!(server.credits().await, 1000);
}

on_both!(
    fresh_then_cached_then_forced,
    brand_older_than_a_week_is_served_and_refreshed_in_background,
    transient_failure_serves_the_old_brand_as_stale,
    failure_with_nothing_cached_costs_nothing_and_names_the_cause,
);

// ---------- input ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_input_is_refused_naming_the_field_and_costs_nothing() {
    let server = Server::start(Db::Sqlite).await;
    for (q, field) in [
        ("/v1/brand", "`domain`"),
        ("/v1/brand?domain=", "`domain`"),
        ("/v1/brand?domain=acme", "`domain`"),
        ("/v1/brand?domain=ftp%3A%2F%2Facme.com", "`domain`"),
        ("/v1/brand?domain=acme.com&maxAge=-5", "`maxAge`"),
        ("/v1/brand?domain=acme.com&maxAge=1e9", "`maxAge`"),
        ("/v1/brand?domain=acme.com&max_age=5", "`max_age`"),
    ] {
        let r = server.get_as(&server.key.clone(), q).await;
        r.assert_error(400, "invalid_request");
        assert!(r.message().contains(field), "{q}: {}", r.message());
    }
    server
        .get_as(&server.key.clone(), "/v1/brand?domain=10.0.0.1")
        .await
        .assert_error(400, "blocked_url");
    let r = server
        .get_as("wd_not_a_key", "/v1/brand?domain=acme.com")
        .await;
    r.assert_error(401, "unauthorized");
    assert_eq!(server.credits().await, 1000);
}

// ---------- the scrape format ----------

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scrape_brand_format_reads_the_fetched_page_once_and_fills_the_cache() {
    let server = Server::start(Db::Sqlite).await;
    let fx = serve("dark-mode").await;
    let r = server
        .post(
            "/v1/scrape",
            json!({"url": fx.site.url("/"), "formats": ["brand", "markdown"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["credits_used"], 1);
    let b = &r.json["data"]["brand"];
    assert_eq!(b["name"], "Lumen");
    assert_eq!(
        shape(&b["logo"]),
        s6("logo", "png", 320, 80, "light", "header")
    );
    assert_eq!(
        fx.home_hits(),
        1,
        "the page is not fetched a second time for its brand"
    );
    // The home page's brand is now the host's cached brand.
    let cached = brand(&server, &fx.site.url("/"), "").await;
    assert_eq!(cached.json["cached"], true, "{}", cached.text);
    assert_eq!(
        cached.json["data"]["logo"]["sourceUrl"],
        b["logo"]["sourceUrl"]
    );
    assert_eq!(fx.home_hits(), 1);
}

// ---------- the render tier (real Chromium) ----------

/// A log line without its terminal colours.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A client-rendered home page: the name, logo, icon, socials, colours
/// and fonts exist only once its script ran (the theme is a constructed
/// style sheet, which no serialised DOM shows), so the brand is read from
/// a browser render and its colours and fonts from computed styles.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn script_built_home_page_is_rendered_and_colours_come_from_computed_styles() {
    assert!(
        std::path::Path::new("/usr/bin/chromedriver").exists(),
        "chromedriver is missing: run `make test`, which installs chromium and chromium-driver"
    );
    let (server, fx, d) = fresh_brand("spa").await;
    assert!(
        fx.hits
            .lock()
            .map(|h| h.get("/static/app.js").copied().unwrap_or(0))
            .unwrap_or(0)
            >= 1,
        "the browser ran the app"
    );
    let rendered_line = server
        .log_line(
            "read the home page from a browser render",
            std::time::Duration::from_secs(5),
        )
        .await
        .map(|l| plain(&l));
    assert!(
        rendered_line.as_deref().is_some_and(
            |l| l.contains("reason=\"spa_shell\"") && l.contains("computed_styles=true")
        ),
        "the lookup says it rendered and read computed styles: {rendered_line:?}"
    );
    assert_eq!(d["name"], "Vela", "og:site_name written by the script");
    assert_eq!(d["description"], "Sailing schedules for every harbour.");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "png", 240, 60, "light", "header")
    );
    assert_eq!(d["logo"]["sourceUrl"], fx.site.url("/static/vela-logo.png"));
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "png", 180, 180, "any", "apple-touch-icon")
    );
    // #0e7490 is only in app.js, in a constructed style sheet: it can only
    // have come from the browser's computed style of the button.
    assert_eq!(color(&d, "primary").as_deref(), Some("#0e7490"));
    assert_eq!(d["colors"][0]["role"], "primary");
    assert_eq!(d["colors"][0]["textColor"], "#ffffff");
    assert_eq!(d["colors"][0]["contrast"], 5.36);
    assert_eq!(color(&d, "accent").as_deref(), Some("#c2410c"));
    assert_eq!(color(&d, "background").as_deref(), Some("#f8fafc"));
    assert_eq!(color(&d, "text").as_deref(), Some("#0f172a"));
    assert_eq!(font(&d, "heading").as_deref(), Some("Fraunces"));
    assert_eq!(font(&d, "body").as_deref(), Some("Manrope"));
    assert_eq!(font(&d, "mono").as_deref(), Some("Fira Code"));
    assert_eq!(
        socials(&d),
        vec![
            ("x".into(), "https://x.com/velasail".into()),
            ("github".into(), "https://github.com/vela-sail".into()),
        ]
    );
    assert_eq!(d["confidence"], 1.0);
    // Rendering costs what a fresh lookup costs.
    assert_eq!(server.credits().await, 1000 - 5);
}

/// The same site without a browser: the fetched shell is all there is,
/// answered as before (no name, no logo, no colours), still 5 credits.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn script_built_home_page_without_a_browser_gives_the_fetched_shell() {
    let server =
        Server::start_with(ServerOptions::new(Db::Sqlite).env("WEBDATA_BROWSER", "off")).await;
    let fx = serve("spa").await;
    let r = brand(&server, &fx.site.url("/"), "").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["credits_used"], 5);
    let d = &r.json["data"];
    assert!(d.get("name").is_none(), "{d}");
    assert!(d.get("logo").is_none(), "{d}");
    assert_eq!(d["colors"], json!([]));
    assert_eq!(d["socials"], json!([]));
    assert_eq!(
        fx.hits
            .lock()
            .map(|h| h.get("/static/app.js").copied().unwrap_or(0))
            .unwrap_or(1),
        0,
        "no browser ran the script"
    );
}

// ---------- @import and the network guard ----------

/// Linked sheets' `@import`s are followed two levels deep (same site,
/// each file once, print-only skipped); a third level is not read;
/// font-service imports are read from their URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn css_imports_are_followed_two_levels_on_the_same_site() {
    let (_server, fx, d) = fresh_brand("imports").await;
    // The checked expected Brand's summary: confidence (name from the title 0.10, no description, no socials),
    // description, and the primary colour's text colour and WCAG contrast.
    assert_eq!(d["confidence"], 0.75);
    assert_eq!(d["description"].as_str(), None);
    assert_eq!(d["colors"][0]["role"], "primary");
    assert_eq!(d["colors"][0]["textColor"], "#ffffff");
    assert_eq!(d["colors"][0]["contrast"], 5.93);
    assert_eq!(d["name"], "Tidewater");
    assert_eq!(
        shape(&d["logo"]),
        s6("logo", "png", 200, 50, "light", "header")
    );
    assert_eq!(
        color(&d, "primary").as_deref(),
        Some("#0369a1"),
        "from the second-level import, not the third"
    );
    assert_eq!(color(&d, "background").as_deref(), Some("#f0f9ff"));
    assert_eq!(color(&d, "text").as_deref(), Some("#1e293b"));
    assert_eq!(
        color(&d, "accent").as_deref(),
        Some("#ea580c"),
        "imported from a <style> block"
    );
    assert_eq!(font(&d, "heading").as_deref(), Some("Fraunces"));
    assert_eq!(font(&d, "body").as_deref(), Some("Nunito Sans"));
    assert_eq!(font(&d, "mono"), None, "the third level is not read");
    let hits = fx.hits.lock().map(|h| h.clone()).unwrap_or_default();
    let n = |p: &str| hits.get(p).copied().unwrap_or(0);
    assert_eq!(n("/css/main.css"), 1);
    assert_eq!(n("/css/base/tokens.css"), 1, "imported twice, read once");
    assert_eq!(n("/css/base/colors.css"), 1);
    assert_eq!(n("/css/theme/inline-import.css"), 1);
    assert_eq!(n("/css/base/too-deep.css"), 0);
    assert_eq!(n("/css/print.css"), 0);
}

/// Every asset request passes the network guard: style sheets, their
/// imports, the manifest, icons and logos on a refused address are never
/// requested, and the brand is read from what is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn assets_on_refused_addresses_are_never_requested() {
    // 127.0.0.1 is loopback the test server does not allow (only 127.0.0.2).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1");
    let outside = format!("http://{}", listener.local_addr().expect("addr"));
    let outside_hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h2 = outside_hits.clone();
    let router = axum::Router::new().fallback(move || {
        let h = h2.clone();
        async move {
            h.fetch_add(1, Ordering::SeqCst);
            (StatusCode::OK, "body{color:#ff0000}")
        }
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let server = Server::start(Db::Sqlite).await;
    let fx = serve_with("outside", &[("OUTSIDE", outside)]).await;
    let r = brand(&server, &fx.site.url("/"), "").await;
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.json["data"];
    assert_eq!(d["name"], "Fenced In");
    assert!(d.get("logo").is_none(), "{d}");
    assert_eq!(
        shape(&d["icon"]),
        s6("icon", "png", 32, 32, "any", "favicon")
    );
    assert_eq!(
        d["logos"].as_array().map(Vec::len),
        Some(1),
        "only the same-site favicon: {d}"
    );
    assert_eq!(color(d, "text").as_deref(), Some("#27272a"));
    assert_eq!(
        outside_hits.load(Ordering::SeqCst),
        0,
        "nothing was requested from the refused address"
    );
    assert_eq!(server.credits().await, 1000 - 5);
}
