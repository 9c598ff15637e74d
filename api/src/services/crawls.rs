//! Crawl reads: a caller's own crawl, and its documents a page at a time
//! with the crawl's boilerplate blocks stripped (getCrawl; SSE and
//! webhooks read one document through the engine's `page_document`).

use crate::context::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use webdata_core::store::CrawlRow;

/// The crawl `id` when the caller's organization owns it; `not_found`
/// otherwise (another organization's crawl does not exist for the caller).
pub async fn owned_crawl(app: &AppState, caller: &Caller, id: &str) -> ApiResult<CrawlRow> {
    match app.store.get_crawl(id).await? {
        Some(c) if c.org_id == caller.org.id => Ok(c),
        _ => Err(ApiError::not_found(format!("crawl `{id}` does not exist"))),
    }
}

/// Up to `limit` documents numbered after `after`, boilerplate stripped,
/// and the number of the last one returned (`after` when none).
pub async fn documents_after(
    app: &AppState,
    crawl: &CrawlRow,
    after: i64,
    limit: i64,
) -> ApiResult<(Vec<serde_json::Value>, i64)> {
    let docs = app.store.crawl_documents(&crawl.id, after, limit).await?;
    let last = docs.last().map(|d| d.0).unwrap_or(after);
    let boilerplate = webdata_engine::crawl::boilerplate_for(&app.store, crawl).await;
    let data = docs
        .iter()
        .map(|(_, _, json)| {
            let mut d = serde_json::from_str(json).unwrap_or(serde_json::Value::Null);
            webdata_content::boilerplate::strip_document(&mut d, &boilerplate);
            d
        })
        .collect();
    Ok((data, last))
}
