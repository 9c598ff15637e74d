//! The JSON data of crawl events.

use super::row::CrawlRow;

/// Status JSON of a crawl (CrawlStatus without `data`), for events.
pub fn status_json(c: &CrawlRow) -> serde_json::Value {
    let mut v = serde_json::json!({
        "id": c.id,
        "status": c.status,
        "url": c.url,
        "total": c.total,
        "completed": c.completed,
        "failed": c.failed,
        "credits_used": c.credits_used,
    });
    if let (Some(code), Some(message)) = (&c.error_code, &c.error_message) {
        v["error"] = serde_json::json!({ "code": code, "message": message });
    }
    v
}

/// [`status_json`] as a string: the data of lifecycle events.
pub fn status_data(c: &CrawlRow) -> String {
    status_json(c).to_string()
}

/// The data of a `page` event: the crawl, the document's number and the
/// page's URL.
pub(super) fn page_data(crawl_id: &str, seq: i64, url: &str) -> String {
    serde_json::json!({ "id": crawl_id, "seq": seq, "url": url }).to_string()
}
