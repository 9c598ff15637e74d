//! Boilerplate across a crawl: markdown blocks (paragraphs, list runs,
//! table rows…) that repeat on many of the crawl's pages — navigation,
//! footers, cookie text, newsletter boxes — are removed from its documents.
//!
//! Each stored page records the hashes of its distinct blocks; a block is
//! boilerplate when it appears on at least [`MIN_PAGES`] pages and on at
//! least half of the pages crawled so far. The verdict is made when
//! documents are read, so it improves as the crawl goes on.

use std::collections::HashSet;

/// A block must repeat on at least this many pages to count.
pub const MIN_PAGES: i64 = 3;

fn blocks(markdown: &str) -> impl Iterator<Item = &str> {
    markdown
        .split("\n\n")
        .map(str::trim)
        .filter(|b| !b.is_empty())
}

/// Stable hash of a block, whitespace-normalised: the first 64 bits (16 hex
/// digits) of XXH3-128 (a specified, seedless hash, so the same block hashes
/// the same in every process and release) of its words joined by single
/// spaces. It replaced SHA-256 over `split_whitespace().join(" ")`, which
/// was 14% of a crawl's instructions. It was the whole 128 bits until
/// migration 0018, which cut the stored hashes to these 16 digits: the
/// crawl's count table and its index are keyed by it, and half the key is
/// a third less to write at every fold. 64 bits is plenty: two of a crawl's
/// million distinct blocks collide with odds of about 1 in 37 million.
pub fn block_hash(block: &str) -> String {
    hash_hex(block_hash_u64(block, &mut Vec::with_capacity(block.len())))
}

/// [`block_hash`] as a number (its 16 hex digits are this, zero-padded),
/// normalising through `norm`, a buffer the caller may reuse.
fn block_hash_u64(block: &str, norm: &mut Vec<u8>) -> u64 {
    norm.clear();
    normalise_into(block, norm);
    (xxhash_rust::xxh3::xxh3_128(norm) >> 64) as u64
}

fn hash_hex(h: u64) -> String {
    format!("{h:016x}")
}

/// `block`'s words (split at Unicode whitespace) joined by single spaces,
/// appended to `out`. ASCII bytes take a fast path; only other characters
/// are decoded.
fn normalise_into(block: &str, out: &mut Vec<u8>) {
    let bytes = block.as_bytes();
    // (length, is whitespace) of the character at `i`.
    let at = |i: usize| -> (usize, bool) {
        let b = bytes[i];
        if b < 0x80 {
            (1, matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        } else {
            let c = block[i..].chars().next().unwrap_or(' ');
            (c.len_utf8(), c.is_whitespace())
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        let (len, space) = at(i);
        if space {
            i += len;
            continue;
        }
        // A word: copied whole.
        let start = i;
        i += len;
        while i < bytes.len() {
            let (len, space) = at(i);
            if space {
                break;
            }
            i += len;
        }
        if !out.is_empty() {
            out.push(b' ');
        }
        out.extend_from_slice(&bytes[start..i]);
    }
}

/// The distinct block hashes of a page's markdown.
pub fn page_hashes(markdown: &str) -> Vec<String> {
    // One buffer for every block, and the text form only for distinct ones.
    let mut seen = rustc_hash::FxHashSet::default();
    let mut norm = Vec::new();
    blocks(markdown)
        .map(|b| block_hash_u64(b, &mut norm))
        .filter(|h| seen.insert(*h))
        .map(hash_hex)
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

/// The hashes of the blocks of a Document's `markdown` and `text`: the only
/// ones [`strip_document`] can remove from it.
pub fn document_hashes(doc: &serde_json::Value, out: &mut HashSet<String>) {
    for field in ["markdown", "text"] {
        if let Some(s) = doc.get(field).and_then(|v| v.as_str()) {
            out.extend(blocks(s).map(block_hash));
        }
    }
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
    fn block_hashes_normalise_whitespace_keep_word_bounds_and_are_stable() {
        assert_eq!(block_hash("a  b\n\tc "), block_hash("a b c"));
        assert_ne!(block_hash("ab c"), block_hash("a bc"));
        assert_ne!(block_hash("a b"), block_hash("a b c"));
        // Unicode whitespace separates words like ASCII whitespace does.
        assert_eq!(block_hash("\u{a0}x\u{2003}y\u{3000}"), block_hash("x y"));
        assert_eq!(block_hash("é  ü"), block_hash("é ü"));
        // Stored in the crawl's block table: the same across processes and
        // releases (a change here splits the counts of running crawls).
        assert_eq!(block_hash("Hello,   world"), block_hash("Hello, world"));
        assert_eq!(block_hash("Hello, world"), "61f0632fb079b54d");
        assert_eq!(block_hash("Hello, world").len(), 16);
    }

    #[test]
    fn page_hashes_are_the_distinct_block_hashes_in_order() {
        let md = "Intro  text\n\nHome | Docs\n\n  Intro text \n\nSee also\n\n\u{e9}t\u{e9}\n\nHome | Docs";
        assert_eq!(
            page_hashes(md),
            vec![
                block_hash("Intro text"),
                block_hash("Home | Docs"),
                block_hash("See also"),
                block_hash("\u{e9}t\u{e9}"),
            ]
        );
        assert_eq!(page_hashes("Hello,   world"), vec!["61f0632fb079b54d"]);
    }

    #[test]
    fn small_crawls_keep_everything() {
        assert_eq!(threshold(1), 3);
        assert_eq!(threshold(2), 3);
        assert_eq!(threshold(10), 5);
        assert_eq!(strip("a\n\nb", &HashSet::new()), "a\n\nb");
    }
}
