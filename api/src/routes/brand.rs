//! `GET /v1/brand`: the brand of a host, from the cache when it is young
//! enough (1 credit), else read fresh (5 credits); image copies are hosted
//! as blobs behind signed links (`services::brand`).
//!
//! Cache rules (docs/brand.md): `maxAge` (default 30 days, 0 = fresh)
//! decides whether the cached lookup is served; a served lookup older than
//! 7 days is refreshed in the background (free); when a fresh lookup fails
//! transiently and any cached lookup exists, that one is served with
//! `stale: true` (1 credit); a failure with nothing cached costs 0.

use crate::context::{request_id, Caller};
use crate::credits::CreditHold;
use crate::error::{ApiError, ApiResult};
use crate::services::brand::{
    fresh, load, render, spawn_refresh, CACHED_COST, DEFAULT_MAX_AGE_MS, FRESH_COST,
    REFRESH_AFTER_MS,
};
use crate::state::AppState;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use webdata_core::brand::Brand;
use webdata_core::store::now_ms;
use webdata_engine::brand;

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
