//! The bounds of one sitemap read: entry, byte and field caps, and the
//! reader that enforces the byte cap and the markup-gap cap.

use std::cell::Cell;
use std::io::{self, Read};

/// Most entries kept from one sitemap file (the sitemap protocol's limit).
pub const MAX_ENTRIES_PER_FILE: usize = 50_000;

/// Most bytes read from one sitemap after gzip decompression.
pub const MAX_DECOMPRESSED_BYTES: u64 = 50 * 1024 * 1024;

/// Longest text kept for one `<loc>`, `<lastmod>` or title, or one text line.
pub const MAX_FIELD_BYTES: usize = 8 * 1024;

/// Most bytes an XML sitemap may run without `<` or `>`; past that the rest is
/// treated as cut, so the XML parser never buffers a runaway text or tag.
pub const MAX_MARKUP_GAP: usize = 1024 * 1024;

/// Reads at most [`MAX_DECOMPRESSED_BYTES`], then reports end of input and
/// records whether more was there; once told the input is XML, fails on a run
/// of more than [`MAX_MARKUP_GAP`] bytes without `<` or `>`.
pub(super) struct Capped<'a, R> {
    inner: R,
    remaining: u64,
    exceeded: &'a Cell<bool>,
    /// Bytes since the last `<` or `>`, when guarding XML.
    markup_gap: Option<usize>,
}

impl<'a, R: Read> Capped<'a, R> {
    pub(super) fn new(inner: R, exceeded: &'a Cell<bool>) -> Self {
        Capped {
            inner,
            remaining: MAX_DECOMPRESSED_BYTES,
            exceeded,
            markup_gap: None,
        }
    }

    pub(super) fn guard_markup(&mut self) {
        self.markup_gap = Some(0);
    }
}

impl<R: Read> Read for Capped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 {
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? > 0 {
                self.exceeded.set(true);
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.remaining -= n as u64;
        if let Some(gap) = self.markup_gap.as_mut() {
            let chunk = &buf[..n];
            let is_markup = |b: &u8| *b == b'<' || *b == b'>';
            let first = chunk.iter().position(is_markup).unwrap_or(n);
            if *gap + first > MAX_MARKUP_GAP {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "over 1 MiB of XML without markup",
                ));
            }
            *gap = match chunk.iter().rposition(is_markup) {
                Some(last) => n - 1 - last,
                None => *gap + n,
            };
        }
        Ok(n)
    }
}
