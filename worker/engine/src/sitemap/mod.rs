//! Sitemaps: parsing (`<urlset>`, `<sitemapindex>`, gzip, plain-text lists)
//! and breadth-first discovery through indexes. Fetching stays with the
//! caller, so the network guard and billing stay in the caller's hands.
//!
//! Parsing is streaming and bounded: at most [`MAX_DECOMPRESSED_BYTES`] are
//! read (gzip bombs stop there), at most [`MAX_ENTRIES_PER_FILE`] entries are
//! kept (the protocol's limit), and text of one field is capped at
//! [`MAX_FIELD_BYTES`]. Hitting a limit, or a document that ends before its
//! elements are closed (a cut download), gives what was read with
//! `truncated: true`; a syntax error gives [`SitemapError`].

mod discover;
mod limits;
mod parse;
mod text;
mod xml;

use std::io;

pub use discover::{default_sitemap_urls, discover, SitemapDiscovery, SitemapFetchPolicy};
pub use limits::{MAX_DECOMPRESSED_BYTES, MAX_ENTRIES_PER_FILE, MAX_FIELD_BYTES, MAX_MARKUP_GAP};
pub use parse::parse_sitemap;

/// One page listed by a sitemap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitemapUrl {
    /// The page's URL as written (absolute after [`discover`]).
    pub loc: String,
    /// `<lastmod>` as written, when present.
    pub lastmod: Option<String>,
    /// The first `<news:title>`, `<image:title>` or similar title, when present.
    pub title: Option<String>,
}

/// A parsed sitemap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    /// A `<urlset>` or a text sitemap: pages.
    UrlSet {
        /// The pages, in document order.
        urls: Vec<SitemapUrl>,
        /// Whether entries were left unread because a limit was hit or the file was cut.
        truncated: bool,
    },
    /// A `<sitemapindex>`: the `<loc>` of each child sitemap.
    Index {
        /// The child sitemaps, in document order.
        sitemaps: Vec<String>,
        /// Whether entries were left unread because a limit was hit or the file was cut.
        truncated: bool,
    },
}

impl Sitemap {
    /// Whether entries were left unread because a limit was hit or the file was cut.
    pub fn truncated(&self) -> bool {
        match self {
            Sitemap::UrlSet { truncated, .. } | Sitemap::Index { truncated, .. } => *truncated,
        }
    }
}

/// Why a sitemap file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SitemapError {
    /// Nothing but whitespace.
    #[error("sitemap is empty")]
    Empty,
    /// The bytes could not be read: corrupt gzip, or XML with a runaway text or tag.
    #[error("sitemap could not be read: {0}")]
    Read(io::Error),
    /// Not XML, nor a text list of URLs (binary content).
    #[error("sitemap is neither XML nor a text list of URLs")]
    Unrecognised,
    /// XML whose root is not `<urlset>` or `<sitemapindex>` (an HTML page, a feed …).
    #[error("not a sitemap: the root element is <{0}>, expected <urlset> or <sitemapindex>")]
    NotASitemap(String),
    /// Malformed XML.
    #[error("sitemap XML is malformed near byte {position}: {message}")]
    Xml {
        /// Offset in the (decompressed) document.
        position: u64,
        /// What the XML parser reported.
        message: String,
    },
}

#[cfg(test)]
mod tests;
