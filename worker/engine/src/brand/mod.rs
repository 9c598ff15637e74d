//! Brand: logo, icon, colours, fonts, name and socials of a host, read
//! from its home page and the style sheets, web manifest and icons the
//! page declares. Every request goes through the engine's fetcher, so the
//! network guard sees each one. The API hosts the image copies and keeps
//! the cache; this module only reads the web.

pub mod colors;
pub mod computed;
pub mod confidence;
pub mod css;
pub mod fonts;
pub mod images;
pub mod input;
pub mod page;
pub mod socials;

pub use input::{domain_of, parse as parse_domain, InvalidDomain, Target};

use crate::fetch::{FetchError, FetchRequest, FetchResponse, Fetcher};
use crate::EngineError;
use base64::Engine as _;
use colors::ColorEvidence;
use fonts::FontEvidence;
use page::{Candidate, ImageRef};
use std::time::Duration;
use tokio::time::Instant;
use url::Url;
use webdata_core::brand::{
    Brand, BrandImage, BrandImageType, ColorRole, ImageBackground, ImageFormat,
};
use webdata_core::ErrorCode;

/// Default time for reading the home page (`WEBDATA_BRAND_TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest the assets (CSS, manifest, images) may take after the page.
const ASSET_BUDGET: Duration = Duration::from_secs(15);
const MAX_STYLESHEETS: usize = 8;
const MAX_IMAGES: usize = 16;
const MAX_CSS_BYTES: usize = 2 * 1024 * 1024;
const MAX_IMAGE_BYTES: usize = 4 * 1024 * 1024;
const MAX_MANIFEST_BYTES: usize = 256 * 1024;
/// `@import`s followed (all levels together), how deep, and their bytes
/// together.
const MAX_IMPORTS: usize = 8;
const MAX_IMPORT_DEPTH: usize = 2;
const MAX_IMPORT_BYTES: usize = 2 * 1024 * 1024;

/// An image's bytes, for the API to host; `key` is the `url` the image
/// carries in the Brand until the hosted copy replaces it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageCopy {
    pub key: String,
    pub format: ImageFormat,
    pub bytes: Vec<u8>,
}

/// A finished lookup.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub brand: Brand,
    pub copies: Vec<ImageCopy>,
    /// Why the home page was read from a browser render, when it was.
    pub rendered: Option<&'static str>,
}

/// Longest a home page render may take (within the lookup's timeout).
const RENDER_BUDGET: Duration = Duration::from_secs(20);

fn failure(code: ErrorCode, message: impl Into<String>) -> EngineError {
    EngineError {
        code,
        message: message.into(),
        retry_after_ms: None,
    }
}

/// A fetch failure of the brand lookup (an invalid header is a failed
/// fetch here, not a bad request: brand sends no caller headers).
fn fetch_failure(e: FetchError) -> EngineError {
    let code = match &e {
        FetchError::Blocked(_) => ErrorCode::BlockedUrl,
        FetchError::Timeout { .. } => ErrorCode::Timeout,
        _ => ErrorCode::FetchFailed,
    };
    failure(code, e.to_string())
}

/// True for failures that a later attempt may not have (a cached brand is
/// then served as stale).
pub fn is_transient(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::FetchFailed
            | ErrorCode::Timeout
            | ErrorCode::BlockedBySite
            | ErrorCode::CapacityExceeded
    )
}

/// Reads the brand of `target` from its home page within `timeout`.
///
/// When the fetched page needs JavaScript (the scrape engine's
/// [`webdata_content::needs_render`] signal, or a page with scripts that
/// shows neither a name nor a logo) and a `browser` is configured, the
/// page is rendered and the brand read from the rendered DOM, with the
/// computed styles of the painted page as extra colour and font evidence.
/// A render that fails leaves the fetched page's brand; without a browser
/// the fetched page is all there is.
pub async fn lookup(
    fetcher: &Fetcher,
    browser: Option<&crate::render::BrowserPool>,
    target: &Target,
    timeout: Duration,
) -> Result<Found, EngineError> {
    let deadline = Instant::now() + timeout;
    let get = |url: &Url| {
        let mut req = FetchRequest::new(url.as_str(), timeout);
        req.deadline = deadline;
        req
    };
    let resp = match fetcher.fetch(&get(&target.home)).await {
        Err(FetchError::Connect { .. }) if !target.explicit_scheme => {
            let mut http = target.home.clone();
            let _ = http.set_scheme("http");
            fetcher.fetch(&get(&http)).await
        }
        other => other,
    }
    .map_err(fetch_failure)?;
    let (html, signals) = home_page_html(&resp)?;
    if let Some(pool) = browser {
        let facts = page::read(html, &resp.final_url);
        if let Some(why) = render_reason(signals.as_ref(), &facts, &target.domain) {
            if let Some((rendered, computed)) = render_home(pool, &resp.final_url, deadline).await {
                let mut found = from_page(
                    fetcher,
                    &target.domain,
                    &rendered.html,
                    &rendered.final_url,
                    deadline,
                    computed.as_ref(),
                )
                .await;
                found.rendered = Some(why);
                tracing::info!(
                    domain = %target.domain,
                    reason = why,
                    computed_styles = computed.is_some(),
                    "brand: read the home page from a browser render"
                );
                return Ok(found);
            }
        }
    }
    Ok(from_page(
        fetcher,
        &target.domain,
        html,
        &resp.final_url,
        deadline,
        None,
    )
    .await)
}

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

/// Renders the home page and reads its computed styles; None when the
/// render fails (the fetched page is used then).
async fn render_home(
    pool: &crate::render::BrowserPool,
    url: &Url,
    deadline: Instant,
) -> Option<(crate::render::Rendered, Option<computed::Computed>)> {
    let left = deadline.saturating_duration_since(Instant::now());
    // A third of what is left stays for the assets the rendered page declares.
    let budget = (left * 2 / 3).min(RENDER_BUDGET);
    if budget < Duration::from_secs(1) {
        return None;
    }
    let mut req = crate::render::RenderRequest::new(url.clone(), budget);
    req.script = Some(computed::SCRIPT.to_string());
    match pool.render(&req).await {
        Ok(r) => {
            let c = r
                .script_result
                .as_ref()
                .and_then(computed::Computed::from_json);
            Some((r, c))
        }
        Err(e) => {
            tracing::info!(%url, error = %e, "brand: rendering the home page failed; using the fetched page");
            None
        }
    }
}

/// The home page's HTML and its quality signals, or why it cannot give a
/// brand.
fn home_page_html(
    resp: &FetchResponse,
) -> Result<(&str, Option<webdata_content::QualitySignals>), EngineError> {
    let url = &resp.final_url;
    if matches!(resp.status, 401 | 403 | 429) {
        return Err(failure(
            ErrorCode::BlockedBySite,
            format!("{url} refused the request (HTTP {})", resp.status),
        ));
    }
    if resp.status >= 400 {
        return Err(failure(
            ErrorCode::FetchFailed,
            format!("the home page {url} answered HTTP {}", resp.status),
        ));
    }
    let html = match resp.content_type.as_deref() {
        Some("text/html") | Some("application/xhtml+xml") | None => resp.text.as_deref(),
        _ => None,
    }
    .ok_or_else(|| {
        failure(
            ErrorCode::UnsupportedContent,
            format!(
                "the home page {url} is `{}`, not HTML",
                resp.content_type.as_deref().unwrap_or("unknown")
            ),
        )
    })?;
    let opts = webdata_content::ContentOptions {
        want_markdown: false,
        ..Default::default()
    };
    let mut signals = None;
    if let Ok(x) = webdata_content::extract(html, url, &opts) {
        let q = webdata_content::assess(&x.quality_signals, resp.status);
        if q.issues
            .contains(&webdata_core::types::QualityIssue::BotWall)
        {
            return Err(failure(
                ErrorCode::BlockedBySite,
                format!("{url} answered with a bot challenge instead of its home page"),
            ));
        }
        signals = Some(x.quality_signals);
    }
    Ok((html, signals))
}

async fn fetch_asset(
    fetcher: &Fetcher,
    url: &Url,
    max_bytes: usize,
    accept: &str,
    deadline: Instant,
) -> Option<FetchResponse> {
    let mut req = FetchRequest::new(url.as_str(), ASSET_BUDGET);
    req.deadline = deadline;
    req.max_bytes = max_bytes;
    req.accept = Some(accept.to_string());
    match fetcher.fetch(&req).await {
        Ok(r) if r.status < 400 && !r.truncated => Some(r),
        Ok(r) => {
            tracing::debug!(%url, status = r.status, "brand asset skipped");
            None
        }
        Err(e) => {
            tracing::debug!(%url, error = %e, "brand asset not fetched");
            None
        }
    }
}

async fn fetch_owned(
    fetcher: Fetcher,
    url: Url,
    max_bytes: usize,
    accept: &'static str,
    deadline: Instant,
) -> Option<FetchResponse> {
    fetch_asset(&fetcher, &url, max_bytes, accept, deadline).await
}

/// What following `@import`s may still spend, shared by every sheet of
/// one lookup.
struct ImportBudget {
    /// Hosts an import may be fetched from (the page's and its sheets').
    hosts: Vec<String>,
    /// Imports and bytes left.
    left: std::sync::Mutex<(usize, usize)>,
    seen: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Families named by font-service imports (read, not fetched).
    font_families: std::sync::Mutex<Vec<String>>,
}

impl ImportBudget {
    fn new(hosts: Vec<String>, already: impl IntoIterator<Item = String>) -> Self {
        Self {
            hosts,
            left: std::sync::Mutex::new((MAX_IMPORTS, MAX_IMPORT_BYTES)),
            seen: std::sync::Mutex::new(already.into_iter().collect()),
            font_families: Default::default(),
        }
    }

    /// Takes one import slot for `u` when it is same-site, new and within
    /// the bounds; returns the bytes it may read. Font-service imports
    /// are read from their URL instead.
    fn take(&self, u: &Url) -> Option<usize> {
        if fonts::is_font_service(u) {
            if let Ok(mut f) = self.font_families.lock() {
                f.extend(fonts::families_of_link(u));
            }
            return None;
        }
        if !u
            .host_str()
            .is_some_and(|h| self.hosts.iter().any(|s| s == h))
        {
            tracing::debug!(url = %u, "brand: cross-site @import not followed");
            return None;
        }
        if !self.seen.lock().ok()?.insert(u.as_str().to_string()) {
            return None;
        }
        let mut left = self.left.lock().ok()?;
        if left.0 == 0 || left.1 == 0 {
            return None;
        }
        left.0 -= 1;
        Some(left.1.min(MAX_CSS_BYTES))
    }

    fn spent(&self, bytes: usize) {
        if let Ok(mut left) = self.left.lock() {
            left.1 = left.1.saturating_sub(bytes);
        }
    }
}

/// The sheet `text` (read from `base`) preceded by the sheets it
/// `@import`s, in cascade order, following at most [`MAX_IMPORT_DEPTH`]
/// levels. Every import goes through the fetcher and so the guard.
fn with_imports<'a>(
    fetcher: &'a Fetcher,
    text: String,
    base: Url,
    level: usize,
    budget: &'a ImportBudget,
    deadline: Instant,
) -> futures::future::BoxFuture<'a, Vec<String>> {
    use futures::FutureExt as _;
    async move {
        let mut out = Vec::new();
        if level < MAX_IMPORT_DEPTH {
            let targets: Vec<(Url, usize)> = css::imports(&text, &base)
                .into_iter()
                .filter_map(|u| budget.take(&u).map(|max| (u, max)))
                .collect();
            let resps = futures::future::join_all(
                targets
                    .iter()
                    .map(|(u, max)| fetch_asset(fetcher, u, *max, "text/css,*/*;q=0.1", deadline)),
            )
            .await;
            let children = futures::future::join_all(resps.into_iter().flatten().filter_map(|r| {
                budget.spent(r.body.len());
                let t = r.text?;
                Some(with_imports(
                    fetcher,
                    t,
                    r.final_url,
                    level + 1,
                    budget,
                    deadline,
                ))
            }))
            .await;
            out.extend(children.into_iter().flatten());
        }
        out.push(text);
        out
    }
    .boxed()
}

/// One image loaded and measured.
type Loaded = (
    Candidate,
    images::ImageFacts,
    Vec<u8>,
    String,
    Option<String>,
);

/// Fetches (or takes the inline markup of) one candidate and measures it
/// off the async threads.
async fn load_image(fetcher: Fetcher, c: Candidate, deadline: Instant) -> Option<Loaded> {
    let (bytes, key, source_url) = match &c.image {
        ImageRef::Url(u) => {
            let r = fetch_asset(
                &fetcher,
                u,
                MAX_IMAGE_BYTES,
                "image/avif,image/webp,image/svg+xml,image/*,*/*;q=0.5",
                deadline,
            )
            .await?;
            (r.body, u.to_string(), Some(u.to_string()))
        }
        ImageRef::Inline(m) => {
            let data = format!(
                "data:image/svg+xml;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(m.as_bytes())
            );
            (m.clone().into_bytes(), data, None)
        }
    };
    let (facts, bytes) = tokio::task::spawn_blocking(move || (images::facts(&bytes), bytes))
        .await
        .ok()?;
    Some((c, facts?, bytes, key, source_url))
}

/// The web manifest's fields brand extraction uses.
#[derive(Debug, Default)]
struct Manifest {
    name: Option<String>,
    description: Option<String>,
    theme_color: Option<String>,
    background_color: Option<String>,
    icons: Vec<Url>,
}

fn read_manifest(text: &str, base: &Url) -> Manifest {
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

fn image_type(c: &Candidate, w: u32, h: u32) -> BrandImageType {
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

/// Reads the brand from a home page already fetched (`html` from
/// `page_url`), fetching only the assets it declares.
pub async fn from_page(
    fetcher: &Fetcher,
    domain: &str,
    html: &str,
    page_url: &Url,
    deadline: Instant,
    computed: Option<&computed::Computed>,
) -> Found {
    let facts = page::read(html, page_url);
    let asset_deadline = deadline.min(Instant::now() + ASSET_BUDGET);

    let sheet_urls: Vec<Url> = facts
        .stylesheets
        .iter()
        .take(MAX_STYLESHEETS)
        .cloned()
        .collect();
    let sheets_fut = futures::future::join_all(sheet_urls.into_iter().map(|u| {
        fetch_owned(
            fetcher.clone(),
            u,
            MAX_CSS_BYTES,
            "text/css,*/*;q=0.1",
            asset_deadline,
        )
    }));
    let manifest_fut = async {
        match &facts.manifest {
            Some(u) => fetch_asset(
                fetcher,
                u,
                MAX_MANIFEST_BYTES,
                "application/manifest+json,application/json,*/*;q=0.1",
                asset_deadline,
            )
            .await
            .and_then(|r| r.text.map(|t| read_manifest(&t, &r.final_url))),
            None => None,
        }
    };
    let (sheet_resps, manifest) = futures::join!(sheets_fut, manifest_fut);
    let manifest = manifest.unwrap_or_default();

    // Each sheet after the sheets it imports (same-site, bounded).
    let fetched: Vec<(String, Url)> = sheet_resps
        .into_iter()
        .flatten()
        .filter_map(|r| Some((r.text?, r.final_url)))
        .collect();
    let mut hosts: Vec<String> = page_url
        .host_str()
        .map(str::to_string)
        .into_iter()
        .collect();
    for (_, u) in &fetched {
        if let Some(h) = u.host_str() {
            if !hosts.iter().any(|x| x == h) {
                hosts.push(h.to_string());
            }
        }
    }
    let budget = ImportBudget::new(
        hosts,
        facts.stylesheets.iter().map(|u| u.as_str().to_string()),
    );
    let sources = facts
        .inline_css
        .iter()
        .map(|c| (c.clone(), page_url.clone()))
        .chain(fetched);
    let texts = futures::future::join_all(
        sources.map(|(t, base)| with_imports(fetcher, t, base, 0, &budget, asset_deadline)),
    )
    .await;
    let sheets: Vec<css::Sheet> = texts.iter().flatten().map(|t| css::parse(t)).collect();
    let imported_fonts = budget
        .font_families
        .lock()
        .map(|f| f.clone())
        .unwrap_or_default();
    let (mut colour_ev, mut font_ev) = css::evidence(&sheets, &facts.doc_classes);
    if let Some(c) = computed {
        colour_ev.extend(computed::color_evidence(c));
        font_ev.extend(computed::font_evidence(c));
    }
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
    for f in facts.font_families.iter().chain(&imported_fonts) {
        font_ev.push(FontEvidence {
            family: f.clone(),
            role: None,
            weight: 2,
        });
    }

    // Image candidates, de-duplicated by URL; og:image only when nothing
    // better names a logo; /favicon.ico when no icon is declared.
    let mut candidates: Vec<Candidate> = facts.candidates.clone();
    for u in &manifest.icons {
        candidates.push(Candidate {
            image: ImageRef::Url(u.clone()),
            source: "manifest",
            wordmark: false,
        });
    }
    if !facts.declared_icon {
        if let Ok(u) = page_url.join("/favicon.ico") {
            candidates.push(Candidate {
                image: ImageRef::Url(u),
                source: "favicon",
                wordmark: false,
            });
        }
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

    let loaded = futures::future::join_all(
        candidates
            .into_iter()
            .map(|c| load_image(fetcher.clone(), c, asset_deadline)),
    )
    .await;
    let mut logos = Vec::new();
    let mut copies = Vec::new();
    for (c, f, bytes, key, source_url) in loaded.into_iter().flatten() {
        logos.push(BrandImage {
            url: key.clone(),
            source_url,
            kind: image_type(&c, f.width, f.height),
            format: f.format,
            width: f.width,
            height: f.height,
            background: f.background,
            source: c.source.to_string(),
        });
        copies.push(ImageCopy {
            key,
            format: f.format,
            bytes,
        });
    }
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
    let colors = colors::choose(&colour_ev);
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
    let fonts = fonts::choose(&font_ev);
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
    let brand = Brand {
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
    };
    Found {
        brand,
        copies,
        rendered: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
