//! Brands the API serves: the `brand_cache` table (a fresh lookup, hosted
//! image copies as blobs, background refresh of old entries) and the
//! `brand` format of a scraped page. The cost rules live in the handler.

use crate::error::ApiResult;
use crate::services::blobs;
use crate::state::AppState;
use axum::http::HeaderMap;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Mutex, OnceLock};
use webdata_core::brand::Brand;
use webdata_core::store::now_ms;
use webdata_engine::brand::{self, Found, Target};
use webdata_engine::scrape::BrandPage;
use webdata_engine::EngineError;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// Default accepted cache age.
pub const DEFAULT_MAX_AGE_MS: i64 = 30 * DAY_MS;

/// A served lookup older than this is refreshed in the background.
pub const REFRESH_AFTER_MS: i64 = 7 * DAY_MS;

/// Hosted image copies live this long after the lookup that stored them
/// (a refresh extends them); cached lookups are swept at the same age.
pub const IMAGE_TTL_MS: i64 = 90 * DAY_MS;

/// A fresh lookup.
pub const FRESH_COST: i64 = 5;

/// A lookup served from the cache (also when stale).
pub const CACHED_COST: i64 = 1;

/// The owner recorded on hosted brand images (shared by every
/// organization, like the cache).
const BLOB_OWNER: &str = "brand";

/// The cached form of a lookup: the Brand with the site's own image URLs,
/// and the hosted copy of each image by that URL.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredBrand {
    pub brand: Brand,
    #[serde(default)]
    pub hosted: BTreeMap<String, HostedImage>,
}

/// A hosted copy of one image.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostedImage {
    pub id: String,
    pub ext: String,
    #[serde(rename = "expiresAt")]
    pub expires_at: i64,
}

fn blob_id(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let h = hex::encode(Sha256::digest(bytes));
    format!("blob_brand{}", &h[..32])
}

/// Stores the image copies and returns the lookup in its cached form.
async fn host(app: &AppState, found: Found) -> StoredBrand {
    let mut hosted = BTreeMap::new();
    let expires = now_ms() + IMAGE_TTL_MS;
    for c in found.copies {
        if hosted.contains_key(&c.key) {
            continue;
        }
        let id = blob_id(&c.bytes);
        match app
            .store
            .put_blob_at(&id, BLOB_OWNER, c.format.mime(), &c.bytes, expires)
            .await
        {
            Ok(expires_at) => {
                hosted.insert(
                    c.key,
                    HostedImage {
                        id,
                        ext: c.format.ext().to_string(),
                        expires_at,
                    },
                );
            }
            Err(e) => {
                tracing::warn!(error = %e, "hosting a brand image failed; the site's URL is kept")
            }
        }
    }
    StoredBrand {
        brand: found.brand,
        hosted,
    }
}

async fn save(app: &AppState, domain: &str, stored: &StoredBrand, fetched_at: i64) {
    match serde_json::to_string(stored) {
        Ok(json) => {
            if let Err(e) = app.store.brand_cache_put(domain, &json, fetched_at).await {
                tracing::warn!(error = %e, "caching the brand failed");
            }
        }
        Err(e) => tracing::warn!(error = %e, "serialising the brand failed"),
    }
}

/// A fresh lookup, hosted and cached.
pub async fn fresh(app: &AppState, target: &Target) -> Result<StoredBrand, EngineError> {
    let started = now_ms();
    let found = app.engine.brand(target, app.config.brand_timeout).await?;
    if found.rendered.is_some() {
        app.metrics.add("brand_renders", 1);
    }
    let stored = host(app, found).await;
    save(app, &target.domain, &stored, started).await;
    Ok(stored)
}

/// The cached lookup of `domain` and when it was read.
pub async fn load(app: &AppState, domain: &str) -> ApiResult<Option<(StoredBrand, i64)>> {
    let Some(row) = app.store.brand_cache_get(domain).await? else {
        return Ok(None);
    };
    Ok(serde_json::from_str::<StoredBrand>(&row.brand)
        .ok()
        .map(|s| (s, row.fetched_at)))
}

/// The Brand as answered: each image whose hosted copy is still valid
/// points at it through a signed link that lasts as long as the copy.
pub fn render(app: &AppState, headers: &HeaderMap, stored: &StoredBrand) -> Brand {
    let now = now_ms();
    let mut brand = stored.brand.clone();
    let swap = |img: &mut webdata_core::brand::BrandImage| {
        if let Some(h) = stored.hosted.get(&img.url) {
            if h.expires_at > now + 60_000 {
                img.url = blobs::signed_url_ext(app, headers, &h.id, &h.ext, h.expires_at);
            }
        }
    };
    brand.logo.iter_mut().for_each(swap);
    brand.icon.iter_mut().for_each(swap);
    brand.logos.iter_mut().for_each(swap);
    brand
}

fn refreshing() -> &'static Mutex<HashSet<String>> {
    static SET: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    SET.get_or_init(Default::default)
}

/// Removes the host from the in-flight set however the refresh ends.
struct RefreshSlot(String);

impl Drop for RefreshSlot {
    fn drop(&mut self) {
        refreshing()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.0);
    }
}

/// Refreshes `target` in the background, once at a time per host on this
/// replica; not charged.
pub fn spawn_refresh(app: AppState, target: Target) {
    let fresh_slot = refreshing()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(target.domain.clone());
    if !fresh_slot {
        return;
    }
    tokio::spawn(async move {
        let _slot = RefreshSlot(target.domain.clone());
        match fresh(&app, &target).await {
            Ok(_) => app.metrics.add("brand_background_refreshes", 1),
            Err(e) => {
                tracing::info!(domain = %target.domain, error = %e, "background brand refresh failed; the cached brand stays")
            }
        }
    });
}

/// The `brand` format of a scrape: the host's cached brand when one is
/// younger than 30 days, else the brand read from the scraped page itself
/// (no second fetch of it), cached for the host when that page is its
/// home page.
pub async fn for_scraped_page(
    app: &AppState,
    headers: &HeaderMap,
    page: &BrandPage,
) -> Option<Brand> {
    let domain = brand::domain_of(&page.url)?;
    if let Ok(Some((stored, fetched_at))) = load(app, &domain).await {
        if now_ms() - fetched_at <= DEFAULT_MAX_AGE_MS {
            return Some(render(app, headers, &stored));
        }
    }
    let started = now_ms();
    let deadline = tokio::time::Instant::now() + app.config.brand_timeout;
    let found = app
        .engine
        .brand_from_page(&domain, &page.html, &page.url, deadline)
        .await;
    let stored = host(app, found).await;
    if page.url.path() == "/" {
        save(app, &domain, &stored, started).await;
    }
    Some(render(app, headers, &stored))
}

/// A Brand as a short markdown summary.
pub fn brand_markdown(b: &serde_json::Value) -> String {
    let mut s = format!(
        "# {}\n\n",
        b["name"]
            .as_str()
            .or(b["domain"].as_str())
            .unwrap_or("Brand")
    );
    if let Some(d) = b["description"].as_str() {
        s.push_str(&format!("{d}\n\n"));
    }
    let list = |title: &str, items: Vec<String>, s: &mut String| {
        if !items.is_empty() {
            s.push_str(&format!("## {title}\n\n"));
            for i in items {
                s.push_str(&format!("- {i}\n"));
            }
            s.push('\n');
        }
    };
    let each = |k: &str, f: &dyn Fn(&serde_json::Value) -> Option<String>| -> Vec<String> {
        match &b[k] {
            serde_json::Value::Array(a) => a.iter().filter_map(f).collect(),
            serde_json::Value::Object(o) => o
                .iter()
                .filter_map(|(name, v)| f(v).map(|x| format!("{name}: {x}")))
                .collect(),
            _ => Vec::new(),
        }
    };
    let text = |v: &serde_json::Value| -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Object(o) => Some(
                o.iter()
                    .filter_map(|(k, v)| v.as_str().map(|x| format!("{k}: {x}")))
                    .collect::<Vec<_>>()
                    .join(", "),
            )
            .filter(|x| !x.is_empty()),
            _ => None,
        }
    };
    list("Logos", each("logos", &text), &mut s);
    list("Colours", each("colors", &text), &mut s);
    list("Fonts", each("fonts", &text), &mut s);
    list("Links", each("socialLinks", &text), &mut s);
    s
}
