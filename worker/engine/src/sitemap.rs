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

use std::cell::Cell;
use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicUsize, Ordering};

use flate2::read::MultiGzDecoder;
use futures::StreamExt;
use quick_xml::events::{BytesRef, Event};
use quick_xml::Reader;
use url::Url;

use crate::urlnorm;

/// Most entries kept from one sitemap file (the sitemap protocol's limit).
pub const MAX_ENTRIES_PER_FILE: usize = 50_000;

/// Most bytes read from one sitemap after gzip decompression.
pub const MAX_DECOMPRESSED_BYTES: u64 = 50 * 1024 * 1024;

/// Longest text kept for one `<loc>`, `<lastmod>` or title, or one text line.
pub const MAX_FIELD_BYTES: usize = 8 * 1024;

/// Most bytes an XML sitemap may run without `<` or `>`; past that the rest is
/// treated as cut, so the XML parser never buffers a runaway text or tag.
pub const MAX_MARKUP_GAP: usize = 1024 * 1024;

/// How many sitemap fetches [`discover`] keeps in flight.
const FETCH_CONCURRENCY: usize = 4;

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

/// Reads at most [`MAX_DECOMPRESSED_BYTES`], then reports end of input and
/// records whether more was there; once told the input is XML, fails on a run
/// of more than [`MAX_MARKUP_GAP`] bytes without `<` or `>`.
struct Capped<'a, R> {
    inner: R,
    remaining: u64,
    exceeded: &'a Cell<bool>,
    /// Bytes since the last `<` or `>`, when guarding XML.
    markup_gap: Option<usize>,
}

impl<'a, R: Read> Capped<'a, R> {
    fn new(inner: R, exceeded: &'a Cell<bool>) -> Self {
        Capped {
            inner,
            remaining: MAX_DECOMPRESSED_BYTES,
            exceeded,
            markup_gap: None,
        }
    }

    fn guard_markup(&mut self) {
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

/// A plain-text sitemap: one absolute http(s) URL per line; blank lines,
/// `#` comments and lines that are not such URLs are skipped.
fn parse_text<R: BufRead>(mut reader: R) -> Result<Sitemap, SitemapError> {
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

#[derive(Clone, Copy, PartialEq)]
enum Root {
    UrlSet,
    Index,
}

#[derive(Clone, Copy, PartialEq)]
enum Field {
    Loc,
    Lastmod,
    Title,
}

/// Text collected for the field being read, bounded by [`MAX_FIELD_BYTES`].
struct FieldText {
    field: Field,
    depth: usize,
    text: String,
    overflowed: bool,
}

impl FieldText {
    fn push(&mut self, s: &str) {
        if self.text.len() + s.len() > MAX_FIELD_BYTES {
            self.overflowed = true;
        } else {
            self.text.push_str(s);
        }
    }

    fn push_ref(&mut self, r: &BytesRef<'_>) {
        if let Ok(Some(ch)) = r.resolve_char_ref() {
            self.push(ch.encode_utf8(&mut [0u8; 4]));
            return;
        }
        let name = String::from_utf8_lossy(r);
        match quick_xml::escape::resolve_predefined_entity(&name) {
            Some(s) => self.push(s),
            // An HTML entity or a dangling `&`: keep it as written.
            None => self.push(&format!("&{name};")),
        }
    }

    fn finish(self) -> Option<String> {
        let text = self.text.trim();
        (!self.overflowed && !text.is_empty()).then(|| text.to_owned())
    }
}

fn local_is(name: &[u8], want: &str) -> bool {
    name.eq_ignore_ascii_case(want.as_bytes())
}

fn parse_xml<R: BufRead>(input: R, exceeded: &Cell<bool>) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_reader(input);
    {
        let config = reader.config_mut();
        // Unescaped `&` in query strings is the commonest sitemap mistake.
        config.allow_dangling_amp = true;
        // Skip whitespace between elements without buffering it (see the field switch below).
        config.trim_text_start = true;
    }
    let mut buf = Vec::with_capacity(4096);
    let mut root = None;
    let mut depth = 0usize;
    let mut entry: Option<SitemapUrl> = None;
    let mut field: Option<FieldText> = None;
    let mut urls = Vec::new();
    let mut sitemaps = Vec::new();
    let mut truncated = false;

    loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            // Cut by the size cap, or a corrupt or cut gzip stream: keep what was read.
            Err(_) if exceeded.get() && root.is_some() => {
                truncated = true;
                break;
            }
            Err(quick_xml::Error::Io(e)) if root.is_some() => {
                tracing::debug!(error = %e, "sitemap stream ended early");
                truncated = true;
                break;
            }
            Err(quick_xml::Error::Io(e)) => {
                return Err(SitemapError::Read(io::Error::new(e.kind(), e.to_string())))
            }
            Err(e) => {
                return Err(SitemapError::Xml {
                    position: reader.error_position(),
                    message: e.to_string(),
                })
            }
        };
        match event {
            Event::Start(e) => {
                depth += 1;
                let name = e.local_name();
                let name = name.as_ref();
                match (depth, root) {
                    (1, _) => {
                        root = Some(if local_is(name, "urlset") {
                            Root::UrlSet
                        } else if local_is(name, "sitemapindex") {
                            Root::Index
                        } else {
                            return Err(SitemapError::NotASitemap(
                                String::from_utf8_lossy(name).into_owned(),
                            ));
                        });
                    }
                    (2, Some(kind)) => {
                        let entry_name = if kind == Root::UrlSet {
                            "url"
                        } else {
                            "sitemap"
                        };
                        if local_is(name, entry_name) {
                            if urls.len() + sitemaps.len() >= MAX_ENTRIES_PER_FILE {
                                truncated = true;
                                break;
                            }
                            entry = Some(SitemapUrl {
                                loc: String::new(),
                                lastmod: None,
                                title: None,
                            });
                        }
                    }
                    (d, Some(kind)) if entry.is_some() && field.is_none() => {
                        let which = if d == 3 && local_is(name, "loc") {
                            Some(Field::Loc)
                        } else if d == 3 && local_is(name, "lastmod") {
                            Some(Field::Lastmod)
                        } else if kind == Root::UrlSet
                            && local_is(name, "title")
                            && entry.as_ref().is_some_and(|u| u.title.is_none())
                        {
                            Some(Field::Title)
                        } else {
                            None
                        };
                        if let Some(which) = which {
                            field = Some(FieldText {
                                field: which,
                                depth: d,
                                text: String::new(),
                                overflowed: false,
                            });
                            reader.config_mut().trim_text_start = false;
                        }
                    }
                    _ => {}
                }
            }
            Event::End(_) => {
                if field.as_ref().is_some_and(|f| f.depth == depth) {
                    if let (Some(done), Some(current)) = (field.take(), entry.as_mut()) {
                        let which = done.field;
                        let value = done.finish();
                        match which {
                            Field::Loc => current.loc = value.unwrap_or_default(),
                            Field::Lastmod => current.lastmod = value,
                            Field::Title => current.title = value,
                        }
                    }
                    reader.config_mut().trim_text_start = true;
                }
                if depth == 2 {
                    if let Some(done) = entry.take() {
                        if !done.loc.is_empty() {
                            match root {
                                Some(Root::Index) => sitemaps.push(done.loc),
                                _ => urls.push(done),
                            }
                        }
                    }
                }
                depth = depth.saturating_sub(1);
                if depth == 0 && root.is_some() {
                    break;
                }
            }
            Event::Text(t) => {
                if let Some(f) = field.as_mut() {
                    f.push(&String::from_utf8_lossy(&t));
                }
            }
            Event::CData(t) => {
                if let Some(f) = field.as_mut() {
                    f.push(&String::from_utf8_lossy(&t));
                }
            }
            Event::GeneralRef(r) => {
                if let Some(f) = field.as_mut() {
                    f.push_ref(&r);
                }
            }
            Event::Eof => {
                if root.is_none() {
                    return Err(SitemapError::Xml {
                        position: reader.buffer_position(),
                        message: "the document has no root element".to_owned(),
                    });
                }
                // Ended before the root closed: a cut download or the size cap.
                truncated = true;
                break;
            }
            Event::Empty(_)
            | Event::Comment(_)
            | Event::Decl(_)
            | Event::PI(_)
            | Event::DocType(_) => {}
        }
    }
    Ok(match root {
        Some(Root::Index) => Sitemap::Index {
            sitemaps,
            truncated,
        },
        _ => Sitemap::UrlSet { urls, truncated },
    })
}

/// Limits for [`discover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitemapFetchPolicy {
    /// Most sitemap files fetched (each is one billed fetch).
    pub max_files: usize,
    /// How deep indexes are followed: the start files are depth 0, their children depth 1 …
    pub max_depth: usize,
    /// Most page URLs collected.
    pub max_urls: usize,
}

impl Default for SitemapFetchPolicy {
    fn default() -> Self {
        SitemapFetchPolicy {
            max_files: 50,
            max_depth: 3,
            max_urls: 100_000,
        }
    }
}

/// What [`discover`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SitemapDiscovery {
    /// Distinct page URLs (absolute, fragment removed), in discovery order.
    pub urls: Vec<SitemapUrl>,
    /// How many times `fetch` was called (failed fetches included).
    pub files_fetched: usize,
    /// Whether a limit (files, depth, URLs, or a file's own) left something unread.
    pub truncated: bool,
}

/// Fetches sitemaps from `start` and follows indexes breadth-first within
/// `policy`. Files are fetched once each (cycles end), page URLs are
/// de-duplicated by [`urlnorm::dedup_key`], and relative `<loc>`s are
/// resolved against their file. `fetch` returns the body of a successful
/// fetch, `None` otherwise (it also decides which hosts may be fetched);
/// failed and unparsable files are skipped. Parsing runs on tokio's blocking pool.
pub async fn discover<F, Fut>(
    start: Vec<Url>,
    policy: &SitemapFetchPolicy,
    fetch: F,
) -> SitemapDiscovery
where
    F: Fn(Url) -> Fut,
    Fut: Future<Output = Option<Vec<u8>>>,
{
    let mut out = SitemapDiscovery::default();
    let mut seen_files = HashSet::new();
    let mut seen_urls = HashSet::new();
    let mut level: VecDeque<Url> = start
        .into_iter()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .filter(|u| seen_files.insert(urlnorm::dedup_key(u)))
        .collect();
    let mut depth = 0;

    'levels: while !level.is_empty() {
        let room = policy.max_files.saturating_sub(out.files_fetched);
        if level.len() > room {
            out.truncated = true;
            level.truncate(room);
        }
        if level.is_empty() {
            break;
        }
        let calls = AtomicUsize::new(0);
        let mut next = VecDeque::new();
        let mut results = futures::stream::iter(level.drain(..))
            .map(|url| {
                calls.fetch_add(1, Ordering::Relaxed);
                let body = fetch(url.clone());
                async move { (url, body.await) }
            })
            .buffered(FETCH_CONCURRENCY);

        while let Some((file, body)) = results.next().await {
            let Some(body) = body else {
                tracing::debug!(%file, "sitemap fetch failed");
                continue;
            };
            let parsed = tokio::task::spawn_blocking(move || parse_sitemap(&body)).await;
            let sitemap = match parsed {
                Ok(Ok(sitemap)) => sitemap,
                Ok(Err(error)) => {
                    tracing::debug!(%file, %error, "sitemap skipped");
                    continue;
                }
                Err(error) => {
                    tracing::warn!(%file, %error, "sitemap parser failed");
                    continue;
                }
            };
            out.truncated |= sitemap.truncated();
            match sitemap {
                Sitemap::Index { sitemaps, .. } => {
                    for loc in sitemaps {
                        let Some(child) = urlnorm::resolve_link(&file, &loc) else {
                            continue;
                        };
                        if !seen_files.insert(urlnorm::dedup_key(&child)) {
                            continue;
                        }
                        if depth + 1 > policy.max_depth {
                            out.truncated = true;
                        } else {
                            next.push_back(child);
                        }
                    }
                }
                Sitemap::UrlSet { urls, .. } => {
                    for entry in urls {
                        let Some(page) = urlnorm::resolve_link(&file, &entry.loc) else {
                            continue;
                        };
                        if !seen_urls.insert(urlnorm::dedup_key(&page)) {
                            continue;
                        }
                        if out.urls.len() >= policy.max_urls {
                            out.truncated = true;
                            drop(results);
                            out.files_fetched += calls.load(Ordering::Relaxed);
                            break 'levels;
                        }
                        out.urls.push(SitemapUrl {
                            loc: page.into(),
                            ..entry
                        });
                    }
                }
            }
        }
        drop(results);
        out.files_fetched += calls.load(Ordering::Relaxed);
        level = next;
        depth += 1;
    }
    out
}

/// Where to look for sitemaps: the robots.txt `Sitemap:` lines (absolute
/// http(s) URLs only, as robots.txt requires), then `/sitemap.xml` at the
/// site's origin; de-duplicated, in that order.
pub fn default_sitemap_urls(site: &Url, robots_sitemaps: &[String]) -> Vec<Url> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let candidates = robots_sitemaps
        .iter()
        .filter_map(|s| Url::parse(s.trim()).ok())
        .chain(site.join("/sitemap.xml").ok());
    for mut url in candidates {
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            continue;
        }
        url.set_fragment(None);
        if seen.insert(urlnorm::dedup_key(&url)) {
            out.push(url);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    fn urlset(locs: &[&str]) -> String {
        let body: String = locs
            .iter()
            .map(|l| format!("<url><loc>{l}</loc></url>\n"))
            .collect();
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
{body}</urlset>"#
        )
    }

    fn index(locs: &[&str]) -> String {
        let body: String = locs
            .iter()
            .map(|l| format!("<sitemap><loc>{l}</loc></sitemap>"))
            .collect();
        format!(
            r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</sitemapindex>"#
        )
    }

    fn page_locs(sitemap: &Sitemap) -> Vec<&str> {
        match sitemap {
            Sitemap::UrlSet { urls, .. } => urls.iter().map(|u| u.loc.as_str()).collect(),
            Sitemap::Index { .. } => panic!("expected a urlset, got {sitemap:?}"),
        }
    }

    #[test]
    fn urlset_with_namespaces_extensions_cdata_and_entities() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- generated -->
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
    xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <sm:url>
    <sm:loc>
      https://a.com/one?x=1&amp;y=2
    </sm:loc>
    <sm:lastmod>2024-05-01</sm:lastmod>
    <image:image><image:loc>https://a.com/img.png</image:loc><image:title>Pic</image:title></image:image>
  </sm:url>
  <sm:url>
    <sm:loc><![CDATA[https://a.com/two?a=1&b=2]]></sm:loc>
    <news:news><news:title>Tom &amp; Jerry &#x2014; &quot;live&quot;</news:title></news:news>
  </sm:url>
  <sm:url><sm:loc>https://a.com/three?a=1&b=2</sm:loc></sm:url>
  <sm:url><sm:lastmod>2024-01-01</sm:lastmod></sm:url>
  <sm:url><sm:loc/></sm:url>
</sm:urlset>"#;
        let parsed = parse_sitemap(xml.as_bytes()).unwrap();
        let Sitemap::UrlSet { urls, truncated } = parsed else {
            panic!("not a urlset")
        };
        assert!(!truncated);
        assert_eq!(
            urls,
            vec![
                SitemapUrl {
                    loc: "https://a.com/one?x=1&y=2".into(),
                    lastmod: Some("2024-05-01".into()),
                    title: Some("Pic".into()),
                },
                SitemapUrl {
                    loc: "https://a.com/two?a=1&b=2".into(),
                    lastmod: None,
                    title: Some("Tom & Jerry \u{2014} \"live\"".into()),
                },
                SitemapUrl {
                    loc: "https://a.com/three?a=1&b=2".into(),
                    lastmod: None,
                    title: None,
                },
            ]
        );
    }

    #[test]
    fn bom_and_whitespace_before_the_xml_declaration_are_accepted() {
        let xml = format!("\u{feff}\n  {}", urlset(&["https://a.com/x"]));
        assert_eq!(
            page_locs(&parse_sitemap(xml.as_bytes()).unwrap()),
            ["https://a.com/x"]
        );
    }

    #[test]
    fn runaway_text_without_markup_is_cut() {
        let head = urlset(&["https://a.com/1"]).replace("</urlset>", "<url><loc>");
        let mut xml = head.into_bytes();
        xml.resize(3 * MAX_MARKUP_GAP, b'a');
        xml.extend_from_slice(b"</loc></url></urlset>");
        let parsed = parse_sitemap(&xml).unwrap();
        assert_eq!(page_locs(&parsed), ["https://a.com/1"]);
        assert!(parsed.truncated());
        let mut tag = b"<".to_vec();
        tag.resize(2 * MAX_MARKUP_GAP, b'a');
        let err = parse_sitemap(&tag).unwrap_err();
        assert!(matches!(err, SitemapError::Read(_)), "{err}");
    }

    #[test]
    fn sitemap_index_lists_child_sitemaps() {
        let xml = index(&["https://a.com/s1.xml", "https://a.com/s2.xml.gz"]);
        let parsed = parse_sitemap(xml.as_bytes()).unwrap();
        assert_eq!(
            parsed,
            Sitemap::Index {
                sitemaps: vec![
                    "https://a.com/s1.xml".into(),
                    "https://a.com/s2.xml.gz".into()
                ],
                truncated: false,
            }
        );
    }

    #[test]
    fn gzip_urlset_and_gzip_index_are_decompressed() {
        let set = gzip(urlset(&["https://a.com/x"]).as_bytes());
        assert_eq!(
            page_locs(&parse_sitemap(&set).unwrap()),
            ["https://a.com/x"]
        );
        let idx = gzip(index(&["https://a.com/s.xml"]).as_bytes());
        assert!(
            matches!(parse_sitemap(&idx).unwrap(), Sitemap::Index { sitemaps, .. } if sitemaps.len() == 1)
        );
    }

    #[test]
    fn corrupt_gzip_is_an_error() {
        let mut bytes = gzip(urlset(&["https://a.com/x"]).as_bytes());
        bytes.truncate(12);
        bytes.extend_from_slice(&[0xff; 40]);
        assert!(matches!(parse_sitemap(&bytes), Err(SitemapError::Read(_))));
    }

    #[test]
    fn text_sitemap_skips_blank_comment_and_non_url_lines() {
        let text = "\u{feff}https://a.com/1\r\n\n   \n# comment\nhttps://a.com/2  \nnot a url\nftp://a.com/f\nhttps://a.com/3";
        assert_eq!(
            page_locs(&parse_sitemap(text.as_bytes()).unwrap()),
            ["https://a.com/1", "https://a.com/2", "https://a.com/3"]
        );
        let long = format!(
            "https://a.com/{}\nhttps://a.com/ok\n",
            "x".repeat(MAX_FIELD_BYTES)
        );
        assert_eq!(
            page_locs(&parse_sitemap(long.as_bytes()).unwrap()),
            ["https://a.com/ok"]
        );
    }

    #[test]
    fn broken_or_foreign_documents_are_errors() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "empty"),
            (b"  \n\t ", "empty"),
            (
                b"<urlset><url><loc>https://a.com/</lo></url></urlset>",
                "malformed",
            ),
            (
                b"<urlset><url><loc>https://a.com/</loc></url><!-- unclosed",
                "malformed",
            ),
            (b"<urlset></url></urlset>", "malformed"),
            (
                b"<urlset><url><loc a=\"1>https://a.com/</loc></url></urlset>",
                "malformed",
            ),
            (b"<?xml version=\"1.0\"?><!-- only a comment -->", "no root"),
            (
                b"<!DOCTYPE html><html><body>Not found</body></html>",
                "root element is <html>",
            ),
            (b"<rss><channel></channel></rss>", "root element is <rss>"),
            (b"\x00\x01\x02binary", "neither XML"),
        ];
        for (input, want) in cases {
            let err = parse_sitemap(input).unwrap_err().to_string();
            assert!(
                err.contains(want),
                "{:?}: {err}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn document_cut_short_keeps_complete_entries_and_says_truncated() {
        let xml = "<urlset><url><loc>https://a.com/1</loc></url><url><loc>https://a.com/2";
        let parsed = parse_sitemap(xml.as_bytes()).unwrap();
        assert_eq!(page_locs(&parsed), ["https://a.com/1"]);
        assert!(parsed.truncated());
    }

    #[test]
    fn over_long_loc_is_dropped() {
        let long = format!("https://a.com/{}", "x".repeat(MAX_FIELD_BYTES));
        let xml = urlset(&[&long, "https://a.com/ok"]);
        assert_eq!(
            page_locs(&parse_sitemap(xml.as_bytes()).unwrap()),
            ["https://a.com/ok"]
        );
    }

    #[test]
    fn file_with_60000_urls_is_truncated_at_50000() {
        let locs: Vec<String> = (0..60_000)
            .map(|i| format!("https://a.com/p/{i}"))
            .collect();
        let refs: Vec<&str> = locs.iter().map(String::as_str).collect();
        let xml = urlset(&refs);
        let parsed = parse_sitemap(xml.as_bytes()).unwrap();
        assert!(parsed.truncated());
        let got = page_locs(&parsed);
        assert_eq!(got.len(), MAX_ENTRIES_PER_FILE);
        assert_eq!(got[MAX_ENTRIES_PER_FILE - 1], "https://a.com/p/49999");

        let text = locs.join("\n");
        let parsed = parse_sitemap(text.as_bytes()).unwrap();
        assert!(parsed.truncated());
        assert_eq!(page_locs(&parsed).len(), MAX_ENTRIES_PER_FILE);

        let exact = urlset(&refs[..MAX_ENTRIES_PER_FILE]);
        assert!(!parse_sitemap(exact.as_bytes()).unwrap().truncated());
    }

    /// 200 MiB after decompression, as 200 concatenated gzip members of 1 MiB.
    fn bomb(head: &[u8], fill: u8) -> Vec<u8> {
        let mut first = head.to_vec();
        first.resize(1 << 20, fill);
        let mut out = gzip(&first);
        let member = gzip(&vec![fill; 1 << 20]);
        for _ in 1..200 {
            out.extend_from_slice(&member);
        }
        out
    }

    #[test]
    fn gzip_bomb_of_zeros_is_rejected() {
        let err = parse_sitemap(&bomb(b"", 0)).unwrap_err();
        assert!(matches!(err, SitemapError::Unrecognised), "{err}");
    }

    #[test]
    fn gzip_bomb_inside_a_urlset_stops_at_the_cap() {
        let head = urlset(&["https://a.com/1"]).replace("</urlset>", "");
        let parsed = parse_sitemap(&bomb(head.as_bytes(), b' ')).unwrap();
        assert!(parsed.truncated());
        assert_eq!(page_locs(&parsed), ["https://a.com/1"]);
    }

    #[test]
    fn gzip_bomb_as_text_stops_at_the_cap() {
        let parsed = parse_sitemap(&bomb(b"https://a.com/1\n", b'x')).unwrap();
        assert!(parsed.truncated());
        assert_eq!(page_locs(&parsed), ["https://a.com/1"]);
    }

    /// A site of sitemap files served from memory, recording every fetch.
    #[derive(Clone, Default)]
    struct Site {
        files: Arc<HashMap<String, Vec<u8>>>,
        calls: Arc<Mutex<Vec<String>>>,
    }

    impl Site {
        fn new(files: &[(&str, Vec<u8>)]) -> Self {
            Site {
                files: Arc::new(
                    files
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.clone()))
                        .collect(),
                ),
                calls: Arc::default(),
            }
        }

        fn fetcher(&self) -> impl Fn(Url) -> futures::future::Ready<Option<Vec<u8>>> + Send + Sync {
            let site = self.clone();
            move |url: Url| {
                site.calls.lock().unwrap().push(url.to_string());
                futures::future::ready(site.files.get(url.as_str()).cloned())
            }
        }

        fn calls(&self) -> Vec<String> {
            self.calls.lock().unwrap().clone()
        }
    }

    fn start(urls: &[&str]) -> Vec<Url> {
        urls.iter().map(|u| Url::parse(u).unwrap()).collect()
    }

    fn found(d: &SitemapDiscovery) -> Vec<&str> {
        d.urls.iter().map(|u| u.loc.as_str()).collect()
    }

    #[tokio::test]
    async fn discover_follows_index_to_children_and_dedups() {
        let site = Site::new(&[
            (
                "https://a.com/sitemap.xml",
                index(&[
                    "https://a.com/s1.xml",
                    "/s2.xml.gz",
                    "https://a.com/s1.xml#dup",
                ])
                .into_bytes(),
            ),
            (
                "https://a.com/s1.xml",
                urlset(&["https://a.com/x", "https://a.com/y/"]).into_bytes(),
            ),
            (
                "https://a.com/s2.xml.gz",
                gzip(
                    urlset(&[
                        "https://a.com/y",
                        "https://A.com/z#f",
                        "/rel",
                        "mailto:x@a.com",
                    ])
                    .as_bytes(),
                ),
            ),
        ]);
        let d = discover(
            start(&["https://a.com/sitemap.xml"]),
            &SitemapFetchPolicy::default(),
            site.fetcher(),
        )
        .await;
        assert_eq!(
            found(&d),
            [
                "https://a.com/x",
                "https://a.com/y/",
                "https://a.com/z",
                "https://a.com/rel"
            ]
        );
        assert_eq!(d.files_fetched, 3);
        assert_eq!(site.calls().len(), 3);
        assert!(!d.truncated);
    }

    #[tokio::test]
    async fn discover_ends_index_cycles_fetching_each_file_once() {
        let site = Site::new(&[
            (
                "https://a.com/a.xml",
                index(&["https://a.com/b.xml"]).into_bytes(),
            ),
            (
                "https://a.com/b.xml",
                index(&["https://a.com/a.xml", "https://a.com/b.xml"]).into_bytes(),
            ),
        ]);
        let policy = SitemapFetchPolicy {
            max_depth: 100,
            ..Default::default()
        };
        let d = discover(start(&["https://a.com/a.xml"]), &policy, site.fetcher()).await;
        assert!(d.urls.is_empty());
        assert_eq!(site.calls(), ["https://a.com/a.xml", "https://a.com/b.xml"]);
    }

    #[tokio::test]
    async fn discover_honours_max_files_counting_fetch_calls() {
        let children: Vec<String> = (0..20).map(|i| format!("https://a.com/s{i}.xml")).collect();
        let refs: Vec<&str> = children.iter().map(String::as_str).collect();
        let mut files = vec![("https://a.com/index.xml", index(&refs).into_bytes())];
        let bodies: Vec<(String, Vec<u8>)> = children
            .iter()
            .map(|c| (c.clone(), urlset(&[&format!("{c}/page")]).into_bytes()))
            .collect();
        files.extend(bodies.iter().map(|(k, v)| (k.as_str(), v.clone())));
        let site = Site::new(&files);
        let policy = SitemapFetchPolicy {
            max_files: 5,
            ..Default::default()
        };
        let d = discover(
            start(&["https://a.com/index.xml", "https://a.com/missing.xml"]),
            &policy,
            site.fetcher(),
        )
        .await;
        assert_eq!(site.calls().len(), 5);
        assert_eq!(d.files_fetched, 5);
        assert_eq!(d.urls.len(), 3);
        assert!(d.truncated);
    }

    #[tokio::test]
    async fn discover_honours_max_depth() {
        let site = Site::new(&[
            (
                "https://a.com/0.xml",
                index(&["https://a.com/1.xml"]).into_bytes(),
            ),
            (
                "https://a.com/1.xml",
                index(&["https://a.com/2.xml"]).into_bytes(),
            ),
            (
                "https://a.com/2.xml",
                urlset(&["https://a.com/deep"]).into_bytes(),
            ),
        ]);
        let policy = SitemapFetchPolicy {
            max_depth: 1,
            ..Default::default()
        };
        let d = discover(start(&["https://a.com/0.xml"]), &policy, site.fetcher()).await;
        assert_eq!(site.calls(), ["https://a.com/0.xml", "https://a.com/1.xml"]);
        assert!(d.urls.is_empty());
        assert!(d.truncated);

        let policy = SitemapFetchPolicy {
            max_depth: 2,
            ..Default::default()
        };
        let d = discover(start(&["https://a.com/0.xml"]), &policy, site.fetcher()).await;
        assert_eq!(found(&d), ["https://a.com/deep"]);
        assert!(!d.truncated);
    }

    #[tokio::test]
    async fn discover_stops_at_max_urls_and_skips_failures() {
        let site = Site::new(&[
            ("https://a.com/bad.xml", b"<html></html>".to_vec()),
            (
                "https://a.com/s.xml",
                urlset(&["https://a.com/1", "https://a.com/2", "https://a.com/3"]).into_bytes(),
            ),
            (
                "https://a.com/t.xml",
                urlset(&["https://a.com/4"]).into_bytes(),
            ),
        ]);
        let policy = SitemapFetchPolicy {
            max_urls: 2,
            ..Default::default()
        };
        let urls = start(&[
            "https://a.com/gone.xml",
            "https://a.com/bad.xml",
            "https://a.com/s.xml",
            "https://a.com/t.xml",
        ]);
        let d = discover(urls, &policy, site.fetcher()).await;
        assert_eq!(found(&d), ["https://a.com/1", "https://a.com/2"]);
        assert!(d.truncated);
        assert!(
            d.files_fetched >= 3 && d.files_fetched <= 4,
            "{}",
            d.files_fetched
        );
    }

    #[test]
    fn discover_future_is_send() {
        fn assert_send<T: Send>(_: &T) {}
        let site = Site::default();
        let policy = SitemapFetchPolicy::default();
        let fut = discover(Vec::new(), &policy, site.fetcher());
        assert_send(&fut);
    }

    #[test]
    fn default_sitemap_urls_puts_robots_first_then_origin_sitemap() {
        let site = Url::parse("https://a.com/docs/page?x=1").unwrap();
        let robots = [
            " https://a.com/sm-index.xml ".to_string(),
            "/relative.xml".to_string(),
            "ftp://a.com/s.xml".to_string(),
            "https://A.com:443/sitemap.xml".to_string(),
            "https://cdn.a.com/s.xml#x".to_string(),
        ];
        let got: Vec<String> = default_sitemap_urls(&site, &robots)
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            got,
            [
                "https://a.com/sm-index.xml",
                "https://a.com/sitemap.xml",
                "https://cdn.a.com/s.xml"
            ]
        );
        let got: Vec<String> = default_sitemap_urls(&site, &[])
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(got, ["https://a.com/sitemap.xml"]);
    }
}
