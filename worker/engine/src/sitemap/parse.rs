//! The entry point of parsing: gzip or not, then XML or a text list by the
//! first byte, and `truncated` when a byte cap was hit.

use std::cell::Cell;
use std::io::{BufRead, BufReader, Read};

use flate2::read::MultiGzDecoder;

use super::limits::Capped;
use super::text::parse_text;
use super::xml::parse_xml;
use super::{Sitemap, SitemapError};

/// Parses one sitemap file: XML urlset or index, gzip of either, or a text list.
pub fn parse_sitemap(bytes: &[u8]) -> Result<Sitemap, SitemapError> {
    let exceeded = Cell::new(false);
    let mut sitemap = if bytes.starts_with(&[0x1f, 0x8b]) {
        parse_stream(
            Capped::new(MultiGzDecoder::new(bytes), &exceeded),
            &exceeded,
        )?
    } else {
        parse_stream(Capped::new(bytes, &exceeded), &exceeded)?
    };
    if exceeded.get() {
        set_truncated(&mut sitemap);
    }
    Ok(sitemap)
}

fn set_truncated(sitemap: &mut Sitemap) {
    match sitemap {
        Sitemap::UrlSet { truncated, .. } | Sitemap::Index { truncated, .. } => *truncated = true,
    }
}
fn parse_stream<R: Read>(
    input: Capped<'_, R>,
    exceeded: &Cell<bool>,
) -> Result<Sitemap, SitemapError> {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let first = loop {
        let buf = reader.fill_buf().map_err(SitemapError::Read)?;
        if buf.is_empty() {
            return Err(SitemapError::Empty);
        }
        let total = buf.len();
        let rest = buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(buf);
        let bom = total - rest.len();
        match rest.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => {
                let byte = rest[i];
                reader.consume(bom + i);
                break byte;
            }
            None => reader.consume(total),
        }
    };
    match first {
        b'<' => {
            reader.get_mut().guard_markup();
            parse_xml(reader, exceeded)
        }
        b if b.is_ascii_control() => Err(SitemapError::Unrecognised),
        _ => parse_text(reader),
    }
}
