//! Plain-text sitemaps: one URL per line, each line bounded.

use std::io::BufRead;

use url::Url;

use super::limits::{MAX_ENTRIES_PER_FILE, MAX_FIELD_BYTES};
use super::{Sitemap, SitemapError, SitemapUrl};

/// A plain-text sitemap: one absolute http(s) URL per line; blank lines,
/// `#` comments and lines that are not such URLs are skipped.
pub(super) fn parse_text<R: BufRead>(mut reader: R) -> Result<Sitemap, SitemapError> {
    let mut urls = Vec::new();
    let mut line = Vec::with_capacity(256);
    let mut truncated = false;
    loop {
        let overflowed = match read_capped_line(&mut reader, &mut line) {
            Ok(Some(overflowed)) => overflowed,
            Ok(None) => break,
            // A corrupt or cut gzip stream: keep what was read before it.
            Err(_) if !urls.is_empty() => {
                truncated = true;
                break;
            }
            Err(e) => return Err(e),
        };
        if overflowed {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim().trim_start_matches('\u{feff}');
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let Ok(url) = Url::parse(text) else { continue };
        if !matches!(url.scheme(), "http" | "https") {
            continue;
        }
        if urls.len() == MAX_ENTRIES_PER_FILE {
            truncated = true;
            break;
        }
        urls.push(SitemapUrl {
            loc: text.to_owned(),
            lastmod: None,
            title: None,
        });
    }
    Ok(Sitemap::UrlSet { urls, truncated })
}

/// Reads one line into `line` keeping at most [`MAX_FIELD_BYTES`]; `None` at
/// the end of input, `Some(true)` when the line was longer than that.
fn read_capped_line<R: BufRead>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> Result<Option<bool>, SitemapError> {
    line.clear();
    let mut overflowed = false;
    let mut read_any = false;
    loop {
        let buf = reader.fill_buf().map_err(SitemapError::Read)?;
        if buf.is_empty() {
            return Ok(read_any.then_some(overflowed));
        }
        read_any = true;
        let (chunk, used, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        if line.len() + chunk.len() > MAX_FIELD_BYTES {
            overflowed = true;
        } else {
            line.extend_from_slice(chunk);
        }
        reader.consume(used);
        if done {
            return Ok(Some(overflowed));
        }
    }
}
