//! Reading a fetched home page: fetching the style sheets (with their
//! same-site `@import`s), web manifest and images it declares, each through
//! the fetcher and so the guard.

use base64::Engine as _;
use tokio::time::Instant;
use url::Url;
use webdata_core::brand::BrandImage;

use super::choose::{self, image_type, read_manifest};
use super::fonts;
use super::page::{self, Candidate, ImageRef};
use super::{computed, css, images};
use super::{
    Found, ImageCopy, ASSET_BUDGET, MAX_CSS_BYTES, MAX_IMAGE_BYTES, MAX_IMPORTS, MAX_IMPORT_BYTES,
    MAX_IMPORT_DEPTH, MAX_MANIFEST_BYTES, MAX_STYLESHEETS,
};
use crate::fetch::{FetchRequest, FetchResponse, Fetcher};

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
    choose::add_page_evidence(
        &facts,
        &manifest,
        &imported_fonts,
        &mut colour_ev,
        &mut font_ev,
    );

    let candidates = choose::image_candidates(&facts, &manifest, page_url);

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
    let brand = choose::assemble(domain, &facts, &manifest, &colour_ev, &font_ev, logos);
    Found {
        brand,
        copies,
        rendered: None,
    }
}
