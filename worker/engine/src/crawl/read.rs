//! What the API reads of a crawl: its status JSON, its boilerplate block
//! hashes, and its stored documents with the boilerplate removed.

use webdata_core::store::CrawlRow;
use webdata_core::types::CrawlRequest;
use webdata_core::Store;

pub use webdata_core::store::crawl::status_json;

/// Whether the crawl strips boilerplate (it did not ask for
/// `removeBoilerplate: false`).
fn removes_boilerplate(crawl: &CrawlRow) -> bool {
    serde_json::from_str::<CrawlRequest>(&crawl.request)
        .map(|r| r.remove_boilerplate())
        .unwrap_or(true)
}

/// The boilerplate blocks of `docs` (Documents of the crawl) as of now:
/// what [`boilerplate_for`] would strip from them, found by looking up
/// their own blocks' counts only.
pub async fn boilerplate_among(
    store: &Store,
    crawl: &CrawlRow,
    docs: &[serde_json::Value],
) -> std::collections::HashSet<String> {
    if !removes_boilerplate(crawl) {
        return Default::default();
    }
    let mut hashes = std::collections::HashSet::new();
    for d in docs {
        webdata_content::boilerplate::document_hashes(d, &mut hashes);
    }
    let among: Vec<String> = hashes.into_iter().collect();
    store
        .frequent_blocks_among(
            &crawl.id,
            webdata_content::boilerplate::threshold(crawl.completed),
            &among,
        )
        .await
        .map(|v| v.into_iter().collect())
        .unwrap_or_default()
}

/// The boilerplate block hashes of a crawl as of now (empty when the crawl
/// asked for `removeBoilerplate: false`).
pub async fn boilerplate_for(store: &Store, crawl: &CrawlRow) -> std::collections::HashSet<String> {
    if !removes_boilerplate(crawl) {
        return Default::default();
    }
    store
        .frequent_blocks(
            &crawl.id,
            webdata_content::boilerplate::threshold(crawl.completed),
        )
        .await
        .map(|v| v.into_iter().collect())
        .unwrap_or_default()
}

/// Stored document number `seq` of a crawl, with `boilerplate` blocks
/// removed: `(url, document)`. What getCrawl, SSE and webhooks read.
pub async fn page_document(
    store: &Store,
    crawl_id: &str,
    seq: i64,
    boilerplate: &std::collections::HashSet<String>,
) -> Option<(String, serde_json::Value)> {
    let (_, url, json) = store
        .crawl_documents(crawl_id, seq - 1, 1)
        .await
        .ok()?
        .into_iter()
        .next()?;
    let mut doc: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
    webdata_content::boilerplate::strip_document(&mut doc, boilerplate);
    Some((url, doc))
}
