//! A crawl's stored documents, read back in order. A document is stored as
//! an LZ4 block of its JSON (`document_lz4`, migration 0019); rows written
//! before that keep the JSON itself in `document`.

use crate::store::{Store, StoreError, StoreResult};
use sqlx::Row;

/// A document's JSON as stored: an LZ4 block with its length first. LZ4
/// because the crawl is CPU-bound and LZ4 is the cheapest common codec to
/// pack with: on the 2,469-page docs crawl it cut the store from 27.8 to
/// 20.4 KB a page with no measurable change in pages/s (docs/benchmarks.md,
/// "Issue 24, session 20").
pub(super) fn pack(json: &str) -> Vec<u8> {
    lz4_flex::block::compress_prepend_size(json.as_bytes())
}

/// The JSON of a stored document. The recorded length is checked against
/// what the block can hold (LZ4 expands at most 255 times) before anything
/// is allocated, and against what it decodes to: a damaged row is an error,
/// not a 4 GB allocation or a truncated page.
fn unpack(packed: &[u8]) -> StoreResult<String> {
    let damaged =
        |why: String| StoreError::Invalid(format!("stored document does not unpack: {why}"));
    let (len, block) = match packed.split_first_chunk::<4>() {
        Some((len, block)) => (u32::from_le_bytes(*len) as usize, block),
        None => return Err(damaged("shorter than its length".into())),
    };
    if len > block.len().saturating_mul(255) {
        return Err(damaged(format!(
            "{len} bytes recorded in a block of {}",
            block.len()
        )));
    }
    let bytes = lz4_flex::block::decompress(block, len).map_err(|e| damaged(e.to_string()))?;
    if bytes.len() != len {
        return Err(damaged(format!(
            "{} bytes where {len} were recorded",
            bytes.len()
        )));
    }
    String::from_utf8(bytes)
        .map_err(|e| StoreError::Invalid(format!("stored document is not UTF-8: {e}")))
}

impl Store {
    /// Documents after `after_seq`, oldest first: `(seq, url, json)`.
    pub async fn crawl_documents(
        &self,
        crawl_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> StoreResult<Vec<(i64, String, String)>> {
        let rows = sqlx::query(
            "SELECT seq, url, document, document_lz4 FROM crawl_documents \
             WHERE crawl_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        )
        .bind(crawl_id)
        .bind(after_seq)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                let packed: Option<Vec<u8>> = r.try_get("document_lz4")?;
                let json = match packed {
                    Some(p) => unpack(&p)?,
                    None => r.try_get("document")?,
                };
                Ok((r.try_get("seq")?, r.try_get("url")?, json))
            })
            .collect()
    }
}
