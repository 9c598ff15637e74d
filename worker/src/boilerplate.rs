//! Boilerplate across a crawl: markdown blocks (paragraphs, list runs,
//! table rows…) that repeat on many of the crawl's pages — navigation,
//! footers, cookie text, newsletter boxes — are removed from its documents.
//!
//! Each stored page records the hashes of its distinct blocks; a block is
//! boilerplate when it appears on at least [`MIN_PAGES`] pages and on at
//! least half of the pages crawled so far. The verdict is made when
//! documents are read, so it improves as the crawl goes on.

use sha2::{Digest, Sha256};
use std::collections::HashSet;

/// A block must repeat on at least this many pages to count.
pub const MIN_PAGES: i64 = 3;

fn blocks(markdown: &str) -> impl Iterator<Item = &str> {
    markdown
        .split("\n\n")
        .map(str::trim)
        .filter(|b| !b.is_empty())
}

/// Stable short hash of a block (whitespace-normalised).
pub fn block_hash(block: &str) -> String {
    let norm: Vec<&str> = block.split_whitespace().collect();
    let digest = Sha256::digest(norm.join(" ").as_bytes());
    hex::encode(&digest[..12])
}

/// The distinct block hashes of a page's markdown.
pub fn page_hashes(markdown: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    blocks(markdown)
        .map(block_hash)
        .filter(|h| seen.insert(h.clone()))
        .collect()
}

/// The page-count threshold for a crawl with `pages` stored pages.
pub fn threshold(pages: i64) -> i64 {
    MIN_PAGES.max((pages + 1) / 2)
}

/// Markdown without the boilerplate blocks.
pub fn strip(markdown: &str, boilerplate: &HashSet<String>) -> String {
    if boilerplate.is_empty() {
        return markdown.to_string();
    }
    blocks(markdown)
        .filter(|b| !boilerplate.contains(&block_hash(b)))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Strips boilerplate from a Document's `markdown` (and `text`, whose
/// paragraphs are blocks too).
pub fn strip_document(doc: &mut serde_json::Value, boilerplate: &HashSet<String>) {
    for field in ["markdown", "text"] {
        if let Some(s) = doc.get(field).and_then(|v| v.as_str()) {
            let stripped = strip(s, boilerplate);
            doc[field] = serde_json::Value::String(stripped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_blocks_are_removed_and_unique_ones_kept() {
        let nav = "[Home](/) · [About](/about)";
        let pages: Vec<String> = (0..4)
            .map(|i| format!("{nav}\n\n# Page {i}\n\nUnique text {i}.\n\n  Subscribe   now!  "))
            .collect();
        let mut counts = std::collections::HashMap::new();
        for p in &pages {
            for h in page_hashes(p) {
                *counts.entry(h).or_insert(0i64) += 1;
            }
        }
        let bp: HashSet<String> = counts
            .into_iter()
            .filter(|(_, n)| *n >= threshold(4))
            .map(|(h, _)| h)
            .collect();
        assert_eq!(
            bp.len(),
            2,
            "nav and the newsletter line (whitespace-normalised)"
        );
        assert_eq!(strip(&pages[2], &bp), "# Page 2\n\nUnique text 2.");
    }

    #[test]
    fn small_crawls_keep_everything() {
        assert_eq!(threshold(1), 3);
        assert_eq!(threshold(2), 3);
        assert_eq!(threshold(10), 5);
        assert_eq!(strip("a\n\nb", &HashSet::new()), "a\n\nb");
    }
}
