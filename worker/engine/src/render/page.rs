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
