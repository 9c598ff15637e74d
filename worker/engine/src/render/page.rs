//! One render inside a prepared page: navigate, run the actions, settle,
//! read the DOM, take the screenshot.

use base64::Engine as _;
use fantoccini::Client;
use serde_json::{json, Value};
use tokio::time::Instant;
use url::Url;

use super::failure::{is_fatal, Failure, FINISH_MARGIN};
use super::proxy::GuardProxy;
use super::{
    actions, cdp, RenderError, RenderRequest, Rendered, ScreenshotKind, MAX_SCREENSHOT_HEIGHT,
    VIEWPORT_WIDTH,
};

/// Serializes the document and reads what the render reports.
const SNAPSHOT_JS: &str = r#"
const d = document;
const doctype = d.doctype ? new XMLSerializer().serializeToString(d.doctype) : "";
const nav = performance.getEntriesByType("navigation")[0];
return {
  url: location.href,
  html: doctype + (d.documentElement ? d.documentElement.outerHTML : ""),
  status: nav && nav.responseStatus ? nav.responseStatus : null,
};
"#;

/// Waits until the page settles: the document loaded, no DOM mutation and
/// no resource finishing for `quiet` ms, or until `cap` ms passed. Answers
/// `{settled, ms}`. Single-page apps fill themselves in after load; the DOM
/// is read only once this returns.
const SETTLE_JS: &str = r#"
const quiet = arguments[0], cap = arguments[1], done = arguments[arguments.length - 1];
const start = performance.now();
let last = start;
const seen = () => { last = performance.now(); };
const mo = new MutationObserver(seen);
mo.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
let po = null;
try {
  po = new PerformanceObserver(seen);
  po.observe({ type: "resource", buffered: false });
} catch (e) {}
const finish = (settled) => {
  mo.disconnect();
  if (po) po.disconnect();
  done({ settled: settled, ms: Math.round(performance.now() - start) });
};
const tick = () => {
  const now = performance.now();
  if (document.readyState === "complete" && now - last >= quiet) return finish(true);
  if (now - start >= cap) return finish(false);
  setTimeout(tick, 50);
};
tick();
"#;

/// The quiet window the page must keep to count as settled.
const SETTLE_QUIET: std::time::Duration = std::time::Duration::from_millis(500);
/// The longest the settle wait takes when the deadline allows it.
const SETTLE_CAP: std::time::Duration = std::time::Duration::from_secs(10);

/// What the settle wait leaves of the deadline for reading the page (its
/// source, links, a screenshot, over WebDriver): a page that never settles
/// (a ticking clock, rotating ads) is still read in time. With only
/// `FINISH_MARGIN` left, a loaded machine answered `timeout` instead.
const READ_RESERVE: std::time::Duration = std::time::Duration::from_millis(1500);

/// Waits for the page to settle within the deadline; false when the cap or
/// the deadline cut the wait short (or the page would not run the script).
async fn settle(client: &Client, deadline: Instant) -> Result<bool, Failure> {
    let left = deadline
        .checked_duration_since(Instant::now() + READ_RESERVE.max(FINISH_MARGIN))
        .unwrap_or_default();
    let cap = left.min(SETTLE_CAP);
    if cap < SETTLE_QUIET {
        return Ok(false);
    }
    let args = vec![
        json!(SETTLE_QUIET.as_millis() as u64),
        json!(cap.as_millis() as u64),
    ];
    match client.execute_async(SETTLE_JS, args).await {
        Ok(v) => Ok(v.get("settled").and_then(Value::as_bool).unwrap_or(false)),
        Err(e) if is_fatal(&e) => Err(Failure::from_cmd("waiting for the page to settle")(e)),
        Err(e) => {
            tracing::debug!(error = %e, "the settle wait failed; reading the page as it is");
            Ok(false)
        }
    }
}

/// Navigates the current page and returns what it shows.
pub(crate) async fn render(
    client: &Client,
    proxy: &GuardProxy,
    req: &RenderRequest,
) -> Result<Rendered, Failure> {
    let started = Instant::now();
    if let Err(e) = client.goto(req.url.as_str()).await {
        if let Some(refusal) = proxy.refusal_for(&req.url) {
            return Err(refused(&refusal));
        }
        let session_ok = !is_fatal(&e);
        let message = format!("loading {}: {e}", req.url);
        return Err(Failure {
            error: RenderError::Browser(message),
            session_ok,
        });
    }
    actions::run(client, &req.actions, req.deadline).await?;
    let settled = settle(client, req.deadline).await?;
    if let Some(wait) = req.wait_for {
        let latest = req.deadline.checked_sub(FINISH_MARGIN).unwrap_or(started);
        tokio::time::sleep_until((Instant::now() + wait).min(latest)).await;
    }
    let script_result = match req.script.as_deref() {
        None => None,
        Some(js) => match client.execute(js, vec![]).await {
            Ok(v) => Some(v),
            Err(e) if is_fatal(&e) => return Err(Failure::from_cmd("running the page script")(e)),
            Err(e) => {
                tracing::debug!(error = %e, url = %req.url, "the render's page script failed");
                None
            }
        },
    };
    let snapshot = client
        .execute(SNAPSHOT_JS, vec![])
        .await
        .map_err(Failure::from_cmd("reading the page"))?;
    let url_text = snapshot.get("url").and_then(Value::as_str).unwrap_or("");
    let final_url = Url::parse(url_text).unwrap_or_else(|_| req.url.clone());
    if let Some(refusal) = proxy.refusal_for(&final_url) {
        return Err(refused(&refusal));
    }
    if final_url.scheme() == "chrome-error" {
        let refusal = proxy.refusal_for(&req.url);
        return Err(match refusal {
            Some(r) => refused(&r),
            None => Failure::page(RenderError::Browser(format!(
                "{} could not be loaded",
                req.url
            ))),
        });
    }
    let html = snapshot
        .get("html")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let status = snapshot
        .get("status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    let screenshot_png = match req.screenshot {
        None => None,
        Some(kind) => Some(screenshot(client, kind).await?),
    };
    Ok(Rendered {
        final_url,
        html,
        status,
        screenshot_png,
        script_result,
        settled,
        elapsed: started.elapsed(),
    })
}

fn refused(refusal: &super::proxy::Refusal) -> Failure {
    let error = if refusal.dns_failure {
        RenderError::Browser(refusal.message.clone())
    } else {
        RenderError::Blocked(refusal.message.clone())
    };
    Failure::page(error)
}

/// A PNG of the viewport, or of the whole document (height capped).
async fn screenshot(client: &Client, kind: ScreenshotKind) -> Result<Vec<u8>, Failure> {
    match kind {
        ScreenshotKind::Viewport => client
            .screenshot()
            .await
            .map_err(Failure::from_cmd("taking the screenshot")),
        ScreenshotKind::FullPage => {
            let metrics = cdp::page_command(client, "Page.getLayoutMetrics", json!({}))
                .await
                .map_err(Failure::from_cmd("measuring the page"))?;
            let size = metrics
                .get("cssContentSize")
                .or_else(|| metrics.get("contentSize"));
            let dimension = |name: &str| {
                size.and_then(|s| s.get(name))
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
                    .ceil()
            };
            let width = dimension("width").clamp(1.0, f64::from(VIEWPORT_WIDTH) * 4.0);
            let height = dimension("height").clamp(1.0, f64::from(MAX_SCREENSHOT_HEIGHT));
            let shot = cdp::page_command(
                client,
                "Page.captureScreenshot",
                json!({
                    "format": "png",
                    "captureBeyondViewport": true,
                    "clip": { "x": 0, "y": 0, "width": width, "height": height, "scale": 1 },
                }),
            )
            .await
            .map_err(Failure::from_cmd("taking the full-page screenshot"))?;
            let data = shot.get("data").and_then(Value::as_str).unwrap_or("");
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| Failure::page(RenderError::Browser(format!("screenshot data: {e}"))))
        }
    }
}
