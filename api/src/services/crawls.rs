//! Crawl reads: a caller's own crawl, and its documents a page at a time
//! with the crawl's boilerplate blocks stripped (getCrawl; SSE and
//! webhooks read one document through the engine's `page_document`).

use crate::context::Caller;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;
use webdata_core::store::crawl::{KIND_BATCH, KIND_CRAWL};
use webdata_core::store::{CrawlRow, CrawlStatus};

/// The cursor (`next`) after document number `seq`.
pub fn encode_cursor(seq: i64) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("wd1:{seq}"))
}

/// The document number a cursor this API issued stands after.
pub fn cursor_seq(cursor: &str) -> Option<i64> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.strip_prefix("wd1:").and_then(|n| n.parse::<i64>().ok()))
        .filter(|n| *n >= 0)
}

/// The crawl `id` when the caller's organization owns it; `not_found`
/// otherwise (another organization's crawl does not exist for the caller).
pub async fn owned_crawl(app: &AppState, caller: &Caller, id: &str) -> ApiResult<CrawlRow> {
    owned(app, caller, id, KIND_CRAWL).await
}

/// The crawl or batch scrape (`kind`) `id` when the caller's organization
/// owns it; `not_found` otherwise (a batch id is not a crawl, nor the
/// reverse).
pub async fn owned(app: &AppState, caller: &Caller, id: &str, kind: &str) -> ApiResult<CrawlRow> {
    match app.store.get_crawl(id).await? {
        Some(c) if c.org_id == caller.org.id && c.kind == kind => Ok(c),
        _ => Err(ApiError::not_found(format!(
            "{} `{id}` does not exist",
            if kind == KIND_BATCH {
                "batch scrape"
            } else {
                "crawl"
            }
        ))),
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
    let mut data: Vec<serde_json::Value> = docs
        .iter()
        .map(|(_, _, json)| serde_json::from_str(json).unwrap_or(serde_json::Value::Null))
        .collect();
    let boilerplate = webdata_engine::crawl::boilerplate_among(&app.store, crawl, &data).await;
    for d in &mut data {
        webdata_content::boilerplate::strip_document(d, &boilerplate);
    }
    Ok((data, last))
}

/// Cancels a crawl that is not finished (queued pages are dropped at no
/// cost) and, in cluster mode, sets `spec.cancel` on its CrawlJob.
pub async fn cancel(app: &AppState, crawl: &CrawlRow) -> ApiResult<()> {
    if !crawl.is_finished() {
        app.store
            .finish_crawl(&crawl.id, CrawlStatus::Cancelled, None)
            .await?;
        if let Some(r) = &app.runner {
            r.wake();
        }
    }
    if let (Some(k), "kube") = (&app.kube, crawl.launcher.as_str()) {
        if let Err(e) = k.cancel(&crawl.id).await {
            // The store says cancelled; the operator mirrors that into the CrawlJob anyway.
            tracing::warn!(crawl = %crawl.id, error = %e, "could not set spec.cancel on the CrawlJob");
        }
    }
    Ok(())
}

/// The documents with sequence numbers `seqs` as JSON text, boilerplate
/// stripped (as of `crawl`, when given), read in one query over their range.
async fn page_documents(
    store: &webdata_core::Store,
    id: &str,
    seqs: &[i64],
    crawl: Option<&webdata_core::store::CrawlRow>,
) -> std::collections::HashMap<i64, String> {
    let (Some(lo), Some(hi)) = (seqs.iter().min(), seqs.iter().max()) else {
        return Default::default();
    };
    let rows = match store.crawl_documents(id, lo - 1, hi - lo + 1).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "reading crawl documents failed");
            return Default::default();
        }
    };
    let Some(crawl) = crawl else {
        return rows.into_iter().map(|(seq, _, json)| (seq, json)).collect();
    };
    let mut values: Vec<serde_json::Value> = rows
        .iter()
        .map(|(_, _, json)| serde_json::from_str(json).unwrap_or_default())
        .collect();
    let boilerplate = webdata_engine::crawl::boilerplate_among(store, crawl, &values).await;
    rows.into_iter()
        .zip(values.iter_mut())
        .map(|((seq, _, json), d)| {
            if boilerplate.is_empty() {
                return (seq, json);
            }
            webdata_content::boilerplate::strip_document(d, &boilerplate);
            (seq, d.to_string())
        })
        .collect()
}

/// The crawl's events as server-sent events after `after`: `page`
/// (Document), `status`, `done`; follows the crawl live, closes after `done`.
pub fn event_stream(app: &AppState, id: String, mut after: i64) -> Response {
    let store = app.store.clone();
    let poll = app.config.sse_poll;
    let stream = async_stream::stream! {
        loop {
            let batch = match store.crawl_events(&id, after, 200).await {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(error = %e, "reading crawl events failed");
                    tokio::time::sleep(poll).await;
                    continue;
                }
            };
            if batch.is_empty() {
                tokio::time::sleep(poll).await;
                continue;
            }
            // The boilerplate verdict is read once per batch, not per page.
            let crawl = if batch.iter().any(|e| e.kind == "page") {
                store.get_crawl(&id).await.ok().flatten()
            } else {
                None
            };
            // The batch's documents are read with one query, not one per page.
            let page_seq = |data: &str| {
                serde_json::from_str::<serde_json::Value>(data)
                    .ok()
                    .and_then(|v| v["seq"].as_i64())
                    .unwrap_or(0)
            };
            let seqs: Vec<i64> = batch
                .iter()
                .filter(|e| e.kind == "page")
                .map(|e| page_seq(&e.data))
                .collect();
            let docs = page_documents(&store, &id, &seqs, crawl.as_ref()).await;
            for ev in batch {
                after = ev.seq;
                let (name, data) = match ev.kind.as_str() {
                    "page" => {
                        let doc = docs
                            .get(&page_seq(&ev.data))
                            .cloned()
                            .unwrap_or_else(|| "{}".into());
                        ("page", doc)
                    }
                    "started" | "status" => ("status", ev.data.clone()),
                    _ => ("done", ev.data.clone()),
                };
                let done = name == "done";
                yield Ok::<Event, Infallible>(Event::default().id(ev.seq.to_string()).event(name).data(data));
                if done {
                    return;
                }
            }
        }
    };
    Sse::new(stream)
        .keep_alive(
            KeepAlive::new()
                .interval(app.config.sse_keepalive)
                .text("keep-alive"),
        )
        .into_response()
}
