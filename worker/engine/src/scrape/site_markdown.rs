//! A site's own markdown (`siteMarkdown`): the quality check it must pass,
//! and the document made from it.

use webdata_content as content;
use webdata_core::types::{Document, Format, Metadata, QualityIssue, ScrapeRequest};

use super::Scraped;
use crate::fetch::FetchResponse;

/// Least words a site's own markdown needs to be used.
pub const SITE_MARKDOWN_MIN_WORDS: usize = 50;

/// The quality check for a site's own markdown: enough words, not HTML in
/// disguise, not an error page, and some structure (a heading or several
/// paragraphs).
pub fn site_markdown_passes(status: u16, md: &str) -> bool {
    let trimmed = md.trim_start();
    let words = md.split_whitespace().count();
    let looks_html = trimmed.starts_with('<')
        && trimmed
            .get(..64)
            .unwrap_or(trimmed)
            .to_ascii_lowercase()
            .contains("html");
    let structured =
        md.lines().any(|l| l.trim_start().starts_with('#')) || md.matches("\n\n").count() >= 2;
    status < 400 && words >= SITE_MARKDOWN_MIN_WORDS && !looks_html && structured
}

pub(super) fn site_markdown_document(
    req: &ScrapeRequest,
    formats: &[Format],
    resp: &FetchResponse,
) -> Option<Scraped> {
    let md = resp.text.as_deref()?;
    if !site_markdown_passes(resp.status, md) {
        return None;
    }
    let want = |f: Format| formats.contains(&f);
    let title = md
        .lines()
        .find_map(|l| l.trim().strip_prefix("# ").map(|t| t.trim().to_string()));
    let metadata = Metadata {
        title,
        status_code: Some(resp.status as i64),
        content_type: resp.content_type.clone(),
        ..Default::default()
    };
    let text = want(Format::Text).then(|| md.to_string());
    let chunks = want(Format::Chunks)
        .then(|| content::chunk_markdown(md, req.options.chunk_size() as usize, None));
    let document = Document {
        url: req.url.clone(),
        final_url: Some(resp.final_url.to_string()),
        markdown: want(Format::Markdown).then(|| md.to_string()),
        text,
        chunks,
        metadata: Some(metadata),
        tier: Some("fetch".into()),
        cached: Some(false),
        quality: Some(webdata_core::types::Quality {
            score: 0.9,
            issues: if resp.truncated {
                vec![QualityIssue::Truncated]
            } else {
                vec![]
            },
            escalations: vec![],
            reason: Some("the site served its own markdown, which passed the quality check".into()),
        }),
        ..Default::default()
    };
    Some(Scraped {
        document,
        billable: true,
        screenshot: None,
        brand_page: None,
    })
}
