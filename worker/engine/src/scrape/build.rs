//! From a response to a [`Scraped`]: PDF, markdown or HTML through the
//! content pipeline, the quality verdict, and whether the page is billed.

use webdata_content::pdf::PdfError;
use webdata_content::{self as content, ContentOptions, Extracted};
use webdata_core::types::{Document, Format, Metadata, QualityIssue, ScrapeRequest};
use webdata_core::ErrorCode;

use super::kind::{is_html, is_pdf, is_textual};
use super::{BrandPage, Scraped};
use crate::fetch::FetchResponse;
use crate::{Engine, EngineError};

impl Engine {
    pub(super) async fn build(
        &self,
        req: &ScrapeRequest,
        formats: &[Format],
        resp: FetchResponse,
    ) -> Result<Scraped, EngineError> {
        let opts = &req.options;
        let want = |f: Format| formats.contains(&f);
        let mime = resp.content_type.clone().unwrap_or_default();
        let html = is_html(&resp);
        let mut issues = Vec::new();
        let extracted: Extracted = if html {
            let text = resp.text.as_deref().unwrap_or("");
            let copts = ContentOptions {
                only_main_content: opts.only_main_content(),
                include_tags: opts.include_tags.clone().unwrap_or_default(),
                exclude_tags: opts.exclude_tags.clone().unwrap_or_default(),
                want_markdown: want(Format::Markdown) || want(Format::Chunks),
                want_html: want(Format::Html),
                want_text: want(Format::Text),
                want_links: want(Format::Links),
                want_json_ld: want(Format::Metadata),
                chunk_size: want(Format::Chunks).then(|| opts.chunk_size() as usize),
            };
            content::extract(text, &resp.final_url, &copts)
                .map_err(|e| EngineError::new(ErrorCode::InvalidRequest, e.to_string()))?
        } else if is_textual(&mime) {
            issues.push(QualityIssue::NonHtml);
            content::text_document(resp.text.as_deref().unwrap_or(""), &mime)
        } else if is_pdf(&resp) {
            issues.push(QualityIssue::NonHtml);
            let body = resp.body.clone();
            let text =
                tokio::task::spawn_blocking(move || webdata_content::pdf::pdf_to_text(&body))
                    .await
                    .unwrap_or_else(|e| Err(PdfError::Unreadable(e.to_string())))
                    .map_err(|e| {
                        EngineError::new(
                            ErrorCode::UnsupportedContent,
                            format!("{}: {e}", resp.final_url),
                        )
                    })?;
            let mut doc = content::text_document(&text, "text/plain");
            doc.metadata.title = text.lines().next().map(|l| l.chars().take(200).collect());
            doc
        } else {
            return Err(EngineError::new(
                ErrorCode::UnsupportedContent,
                format!(
                    "{} is `{mime}`, which webdata cannot turn into text",
                    resp.final_url
                ),
            ));
        };
        if resp.truncated {
            issues.push(QualityIssue::Truncated);
        }
        let mut quality = content::assess(&extracted.quality_signals, resp.status);
        for i in issues {
            if !quality.issues.contains(&i) {
                quality.issues.push(i);
            }
        }
        if quality.issues.contains(&QualityIssue::BotWall) {
            return Err(EngineError::new(
                ErrorCode::BlockedBySite,
                format!(
                    "{} answered with a bot challenge instead of the page",
                    resp.final_url
                ),
            ));
        }
        let walled = quality
            .issues
            .iter()
            .any(|i| matches!(i, QualityIssue::LoginWall | QualityIssue::CookieWall));
        let billable = resp.status < 400 && !walled;
        if resp.status >= 400 {
            quality.reason = Some(format!(
                "the site answered HTTP {}; not charged",
                resp.status
            ));
        } else if walled {
            quality.reason = Some("the page is behind a wall; not charged".to_string());
        } else if quality.reason.is_none() {
            quality.reason =
                Some("fetched without a browser; the page did not need one".to_string());
        }
        let mut metadata: Metadata = extracted.metadata;
        metadata.status_code = Some(resp.status as i64);
        metadata.content_type = resp.content_type.clone();
        if !want(Format::Metadata) {
            metadata.json_ld = None;
        }
        let brand_page = (want(Format::Brand) && html).then(|| BrandPage {
            html: resp.text.clone().unwrap_or_default(),
            url: resp.final_url.clone(),
        });
        let final_url = resp.final_url.to_string();
        let document = Document {
            url: req.url.clone(),
            final_url: Some(final_url),
            markdown: if want(Format::Markdown) {
                extracted.markdown
            } else {
                None
            },
            html: if want(Format::Html) {
                extracted.html
            } else {
                None
            },
            raw_html: if want(Format::RawHtml) {
                resp.text.clone()
            } else {
                None
            },
            text: if want(Format::Text) {
                extracted.text
            } else {
                None
            },
            links: if want(Format::Links) {
                extracted.links
            } else {
                None
            },
            chunks: if want(Format::Chunks) {
                extracted.chunks
            } else {
                None
            },
            metadata: Some(metadata),
            tier: Some("fetch".to_string()),
            cached: Some(false),
            quality: Some(quality),
            ..Default::default()
        };
        Ok(Scraped {
            document,
            billable,
            screenshot: None,
            brand_page,
        })
    }
}
