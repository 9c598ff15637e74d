//! `GET /v1/brand`: the brand of a host, from the cache when it is young
//! enough (1 credit), else read fresh (5 credits); image copies are hosted
//! as blobs behind signed links. Also the `brand` format of scrape.
//!
//! Cache rules (docs/brand.md): `maxAge` (default 30 days, 0 = fresh)
//! decides whether the cached lookup is served; a served lookup older than
//! 7 days is refreshed in the background (free); when a fresh lookup fails
//! transiently and any cached lookup exists, that one is served with
//! `stale: true` (1 credit); a failure with nothing cached costs 0.

use crate::app::AppState;
use crate::context::{request_id, Caller};
use crate::credits::CreditHold;
use crate::error::{ApiError, ApiResult};
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
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

/// The query of `GET /v1/brand`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrandQuery {
    pub domain: String,
    pub max_age_ms: i64,
}

/// Parses the query, naming the parameter at fault.
pub fn parse_query(raw: Option<&str>) -> ApiResult<BrandQuery> {
    let (mut domain, mut max_age) = (None, None);
    for (k, v) in url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()) {
        let slot = match k.as_ref() {
            "domain" => &mut domain,
            "maxAge" => &mut max_age,
            other => {
                return Err(ApiError::invalid(format!(
                    "unknown query parameter `{other}`; expected `domain` or `maxAge`"
                )))
            }
        };
        if slot.is_some() {
            return Err(ApiError::invalid(format!(
                "query parameter `{k}` is given twice"
            )));
        }
        *slot = Some(v.into_owned());
    }
    let domain = domain.ok_or_else(|| {
        ApiError::invalid("`domain` is required: a domain such as `acme.com` or a URL")
    })?;
    let max_age_ms = match max_age {
        None => DEFAULT_MAX_AGE_MS,
        Some(v) => v
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| {
                ApiError::invalid(format!(
                    "`maxAge` must be a whole number of milliseconds, 0 or more (got {v:?})"
                ))
            })?,
    };
    Ok(BrandQuery { domain, max_age_ms })
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
async fn fresh(app: &AppState, target: &Target) -> Result<StoredBrand, EngineError> {
    let started = now_ms();
    let found = brand::lookup(
        app.engine.fetcher(),
        app.engine.browser(),
        target,
        app.config.brand_timeout,
    )
    .await?;
    if found.rendered.is_some() {
        app.metrics.add("brand_renders", 1);
    }
    let stored = host(app, found).await;
    save(app, &target.domain, &stored, started).await;
    Ok(stored)
}

/// The cached lookup of `domain` and when it was read.
async fn load(app: &AppState, domain: &str) -> ApiResult<Option<(StoredBrand, i64)>> {
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
                img.url =
                    crate::routes::blobs::signed_url_ext(app, headers, &h.id, &h.ext, h.expires_at);
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
fn spawn_refresh(app: AppState, target: Target) {
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

fn answer(brand: Brand, cached: bool, stale: bool, charged: i64) -> Response {
    let body = serde_json::json!({
        "success": true,
        "data": brand,
        "cached": cached,
        "stale": stale,
        "credits_used": charged,
        "request_id": request_id(),
    });
    (StatusCode::OK, axum::Json(body)).into_response()
}

/// The handler.
pub async fn brand(
    State(app): State<AppState>,
    Extension(caller): Extension<Caller>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let q = parse_query(raw.as_deref())?;
    let target = brand::parse_domain(&q.domain).map_err(|e| ApiError::invalid(e.to_string()))?;
    app.engine.check_url(target.home.as_str())?;
    let now = now_ms();
    let cached = load(&app, &target.domain).await?;
    if let Some((stored, fetched_at)) = &cached {
        let age = (now - fetched_at).max(0);
        if q.max_age_ms > 0 && age <= q.max_age_ms {
            let hold = CreditHold::reserve(&app, &caller, "brand", CACHED_COST).await?;
            if age > REFRESH_AFTER_MS {
                spawn_refresh(app.clone(), target.clone());
            }
            app.metrics.add("brand_cache_hits", 1);
            let brand = render(&app, &headers, stored);
            let charged = hold.settle(CACHED_COST).await?;
            return Ok(answer(brand, true, false, charged));
        }
    }
    let hold = CreditHold::reserve(&app, &caller, "brand", FRESH_COST).await?;
    match fresh(&app, &target).await {
        Ok(stored) => {
            let brand = render(&app, &headers, &stored);
            let charged = hold.settle(FRESH_COST).await?;
            Ok(answer(brand, false, false, charged))
        }
        Err(f) => match cached {
            Some((stored, _)) if brand::is_transient(f.code) => {
                tracing::info!(domain = %target.domain, error = %f, "fresh brand lookup failed; serving the cached one as stale");
                let brand = render(&app, &headers, &stored);
                let charged = hold.settle(CACHED_COST).await?;
                Ok(answer(brand, true, true, charged))
            }
            _ => {
                hold.settle(0).await?;
                Err(f.into())
            }
        },
    }
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
    let found = brand::from_page(
        app.engine.fetcher(),
        &domain,
        &page.html,
        &page.url,
        deadline,
        None,
    )
    .await;
    let stored = host(app, found).await;
    if page.url.path() == "/" {
        save(app, &domain, &stored, started).await;
    }
    Some(render(app, headers, &stored))
}

#[cfg(test)]
mod tests {
    use super::*;
    use webdata_core::ErrorCode;

    #[test]
    fn query_defaults_and_errors_name_the_parameter() {
        assert_eq!(
            parse_query(Some("domain=acme.com")).ok(),
            Some(BrandQuery {
                domain: "acme.com".into(),
                max_age_ms: DEFAULT_MAX_AGE_MS
            })
        );
        assert_eq!(
            parse_query(Some("domain=a.com&maxAge=0"))
                .map(|q| q.max_age_ms)
                .ok(),
            Some(0)
        );
        for (q, word) in [
            (None, "`domain`"),
            (Some("maxAge=5"), "`domain`"),
            (Some("domain=a.com&maxAge=-1"), "`maxAge`"),
            (Some("domain=a.com&maxAge=soon"), "`maxAge`"),
            (Some("domain=a.com&max_age=1"), "`max_age`"),
            (Some("domain=a.com&domain=b.com"), "`domain`"),
        ] {
            let e = parse_query(q).err().map(|e| (e.code, e.message));
            assert!(
                e.as_ref()
                    .is_some_and(|(c, m)| *c == ErrorCode::InvalidRequest && m.contains(word)),
                "{q:?}: {e:?}"
            );
        }
    }
}
