//! The browser tier: render the page, then the same content pipeline,
//! quality checks and billing as a fetched page.

use std::time::Duration;

use tokio::time::Instant;
use webdata_core::types::{Format, QualityIssue, ScrapeRequest};
use webdata_core::ErrorCode;

use super::Scraped;
use crate::fetch::FetchResponse;
use crate::{Engine, EngineError};

impl Engine {
    /// Renders the page in the browser and runs it through the same content
    /// pipeline, quality checks and billing as a fetched page.
    pub(super) async fn render(
        &self,
        req: &ScrapeRequest,
        formats: &[Format],
        url: &url::Url,
        deadline: Instant,
        escalations: Vec<String>,
        why: &str,
    ) -> Result<Scraped, EngineError> {
        use crate::render::{RenderError, RenderRequest};
        let Some(pool) = &self.browser else {
            return Err(EngineError::new(
                ErrorCode::NotConfigured,
                "no browser is configured on this deployment",
            ));
        };
        let opts = &req.options;
        let rr = RenderRequest {
            url: url.clone(),
            headers: opts
                .headers
                .as_ref()
                .map(|h| h.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
            languages: opts
                .location
                .as_ref()
                .and_then(|l| l.languages.clone())
                .unwrap_or_default(),
            actions: opts.actions.clone().unwrap_or_default(),
            wait_for: opts
                .wait_for
                .map(|ms| Duration::from_millis(ms.max(0) as u64)),
            deadline,
            screenshot: if formats.contains(&Format::ScreenshotFull) {
                Some(crate::render::ScreenshotKind::FullPage)
            } else if formats.contains(&Format::Screenshot) {
                Some(crate::render::ScreenshotKind::Viewport)
            } else {
                None
            },
            script: None,
        };
        let rendered = pool.render(&rr).await.map_err(|e| match e {
            RenderError::NotAvailable(m) => EngineError::new(ErrorCode::NotConfigured, m),
            RenderError::Capacity { retry_after_ms } => EngineError {
                code: ErrorCode::CapacityExceeded,
                message: format!("all browser sessions are busy; retry after {retry_after_ms} ms (the site did not block you)"),
                retry_after_ms: Some(retry_after_ms as i64),
            },
            RenderError::Timeout => EngineError::new(ErrorCode::Timeout, format!("timed out rendering {url}")),
            RenderError::Blocked(m) => EngineError::new(ErrorCode::BlockedUrl, m),
            RenderError::ActionFailed { index, message } => {
                EngineError::new(ErrorCode::FetchFailed, format!("`actions[{index}]` failed: {message}"))
            }
            RenderError::Browser(m) => EngineError::new(ErrorCode::FetchFailed, format!("the browser failed: {m}")),
        })?;
        let settled = rendered.settled;
        let png = rendered.screenshot_png;
        let html = rendered.html;
        let resp = FetchResponse {
            final_url: rendered.final_url,
            status: rendered.status.unwrap_or(200),
            headers: Default::default(),
            content_type: Some("text/html".into()),
            body: html.clone().into_bytes(),
            text: Some(html),
            encoding: Some("UTF-8"),
            truncated: false,
            elapsed: rendered.elapsed,
        };
        let mut scraped = self.build(req, formats, resp).await?;
        scraped.document.tier = Some("render".into());
        scraped.screenshot = png;
        if let Some(q) = scraped.document.quality.as_mut() {
            q.escalations = escalations;
            // The rendered page's own verdict stands: a shell that stays
            // empty in the browser keeps `js_required`.
            if q.issues.contains(&QualityIssue::JsRequired)
                || q.issues.contains(&QualityIssue::ThinContent)
            {
                q.reason = Some(format!("{why}; the rendered page still has little content"));
            } else if scraped.billable {
                q.reason = Some(why.to_string());
            }
            if !settled {
                let cut = "the page was still changing when the timeout allowed reading it (it may be incomplete; a larger `timeout` waits longer)";
                q.reason = Some(match q.reason.take() {
                    Some(r) => format!("{r}; {cut}"),
                    None => cut.to_string(),
                });
            }
        }
        Ok(scraped)
    }
}
