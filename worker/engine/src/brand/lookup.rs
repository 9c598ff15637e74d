//! The lookup's I/O: fetching (or rendering) the home page, and why a
//! home page cannot give a brand.

use std::time::Duration;

use tokio::time::Instant;
use url::Url;
use webdata_core::ErrorCode;

use super::assets::from_page;
use super::choose::render_reason;
use super::{computed, page, Found, Target};
use crate::fetch::{FetchError, FetchRequest, FetchResponse, Fetcher};
use crate::EngineError;

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
