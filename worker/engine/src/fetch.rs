//! The fetch tier: plain HTTP(S) GETs through reqwest (rustls), with redirects
//! followed by hand so every hop passes the network guard, one deadline for
//! the whole fetch, a cap on decompressed bytes, and browser-style decoding.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, ACCEPT_LANGUAGE, LOCATION};
use tokio::time::Instant;
use url::Url;

use crate::guard::{GuardError, NetworkGuard, Resolve};

/// The robots.txt product token and first word of our User-Agent.
pub const PRODUCT_TOKEN: &str = "webdata";

/// The User-Agent sent unless configured otherwise.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "webdata/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/webdata)"
);

/// Largest body kept per page, counted after decompression (10 MiB); the
/// rest is dropped and the response marked `truncated`.
pub const MAX_PAGE_BYTES: usize = 10 * 1024 * 1024;

/// Most redirects followed for one fetch.
pub const MAX_REDIRECTS: usize = 10;

const DEFAULT_ACCEPT: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/// Bytes of the body searched for `<meta charset>`, as browsers do.
const META_PRESCAN_BYTES: usize = 1024;

/// Bytes fed to the charset detector.
const DETECT_BYTES: usize = 1024 * 1024;

/// Caller headers we never forward: reqwest or the transport own them.
const DROPPED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "accept-encoding",
    "te",
    "upgrade",
    "keep-alive",
    "proxy-connection",
];

/// Headers not carried to another origin on a redirect.
const ORIGIN_BOUND_HEADERS: &[&str] = &["authorization", "cookie", "proxy-authorization"];

/// One page to fetch.
#[derive(Debug, Clone)]
pub struct FetchRequest {
    /// The URL as the caller gave it.
    pub url: String,
    /// Caller headers, sent on every hop (credentials only to the first origin).
    pub headers: Vec<(String, String)>,
    /// `Accept-Language`, when the caller set a language.
    pub accept_language: Option<String>,
    /// `Accept` (e.g. `text/markdown`); a browser-like default otherwise.
    pub accept: Option<String>,
    /// When the whole fetch (every hop and the body) must be done.
    pub deadline: Instant,
    /// Body cap in decompressed bytes.
    pub max_bytes: usize,
}

impl FetchRequest {
    /// A GET of `url` with default headers, [`MAX_PAGE_BYTES`] and `timeout` from now.
    pub fn new(url: impl Into<String>, timeout: Duration) -> Self {
        Self {
            url: url.into(),
            headers: Vec::new(),
            accept_language: None,
            accept: None,
            deadline: Instant::now() + timeout,
            max_bytes: MAX_PAGE_BYTES,
        }
    }
}

/// What a fetch brought back.
#[derive(Debug, Clone)]
pub struct FetchResponse {
    /// The URL after redirects.
    pub final_url: Url,
    /// The final HTTP status.
    pub status: u16,
    /// Response headers, lower-cased names; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
    /// The MIME type without parameters, lower-cased.
    pub content_type: Option<String>,
    /// The (decompressed) body bytes, at most `max_bytes`.
    pub body: Vec<u8>,
    /// The body decoded to text, for textual types.
    pub text: Option<String>,
    /// The encoding `text` was decoded with.
    pub encoding: Option<&'static str>,
    /// True when the body was cut at `max_bytes`.
    pub truncated: bool,
    /// Time from the first request to the end of the body.
    pub elapsed: Duration,
}

/// Why a fetch failed; the API maps `Blocked` to `blocked_url`, `Timeout` to
/// `timeout` and the rest to `fetch_failed` (`InvalidHeader` to `invalid_request`).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The URL, a redirect target or a DNS answer was refused by the guard.
    #[error(transparent)]
    Blocked(GuardError),
    /// The deadline passed.
    #[error("timed out fetching {url}")]
    Timeout { url: String },
    /// The host name did not resolve.
    #[error("could not resolve {host}: {message}")]
    Dns { host: String, message: String },
    /// The connection (TCP or TLS) failed.
    #[error("could not connect to {url}: {message}")]
    Connect { url: String, message: String },
    /// More than [`MAX_REDIRECTS`] redirects.
    #[error("{url} redirected more than {max} times")]
    TooManyRedirects { url: String, max: usize },
    /// A redirect whose Location is not a URL.
    #[error("{url} redirected to an invalid location {location:?}")]
    InvalidRedirect { url: String, location: String },
    /// A caller header that is not valid HTTP.
    #[error("request header {name:?} is not a valid HTTP header")]
    InvalidHeader { name: String },
    /// The HTTP client could not be built (a configuration problem).
    #[error("could not build the HTTP client: {0}")]
    Client(String),
    /// Any other failure while sending or reading.
    #[error("fetching {url} failed: {message}")]
    Io { url: String, message: String },
}

impl From<GuardError> for FetchError {
    fn from(err: GuardError) -> Self {
        match err {
            GuardError::Resolve { host, message } => Self::Dns { host, message },
            other => Self::Blocked(other),
        }
    }
}

/// The HTTP client every plain fetch goes through; cheap to clone.
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    guard: NetworkGuard,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("guard", &self.guard)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    /// A fetcher whose every connection goes through `guard` and `resolver`.
    pub fn new(
        guard: NetworkGuard,
        resolver: Arc<dyn Resolve>,
        user_agent: &str,
    ) -> Result<Self, FetchError> {
        let guard = guard.with_resolver(resolver);
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy() // a proxy would resolve names the guard never saw
            .dns_resolver(guard.reqwest_resolver())
            .user_agent(user_agent)
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            .build()
            .map_err(|e| FetchError::Client(error_chain(&e)))?;
        Ok(Self { client, guard })
    }

    /// The guard this fetcher checks with.
    pub fn guard(&self) -> &NetworkGuard {
        &self.guard
    }

    /// GETs `req.url`, following redirects by hand, within `req.deadline`.
    pub async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse, FetchError> {
        match tokio::time::timeout_at(req.deadline, self.fetch_until_done(req)).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout {
                url: req.url.clone(),
            }),
        }
    }

    async fn fetch_until_done(&self, req: &FetchRequest) -> Result<FetchResponse, FetchError> {
        let started = Instant::now();
        let mut url = self.guard.check_url(&req.url)?;
        let mut headers = request_headers(req)?;
        let mut hops = 0;
        let response = loop {
            let response = self
                .client
                .get(url.clone())
                .headers(headers.clone())
                .send()
                .await
                .map_err(|e| classify_reqwest(e, &url))?;
            let Some(location) = redirect_location(&response) else {
                break response;
            };
            if hops == MAX_REDIRECTS {
                return Err(FetchError::TooManyRedirects {
                    url: req.url.clone(),
                    max: MAX_REDIRECTS,
                });
            }
            hops += 1;
            let next = url
                .join(&location)
                .map_err(|_| FetchError::InvalidRedirect {
                    url: url.to_string(),
                    location: location.clone(),
                })?;
            self.guard.check_parsed(&next)?;
            if next.origin() != url.origin() {
                for name in ORIGIN_BOUND_HEADERS {
                    headers.remove(*name);
                }
            }
            url = next;
        };

        let status = response.status().as_u16();
        let response_headers = collect_headers(response.headers());
        let content_type_header = response_headers.get("content-type").cloned();
        let content_type = content_type_header.as_deref().and_then(mime_of);
        let (body, truncated) = read_capped(response, req.max_bytes, &url).await?;
        let decoded = if is_textual(content_type.as_deref(), &body) {
            Some(decode_body(&body, content_type_header.as_deref()))
        } else {
            None
        };
        let (text, encoding) = match decoded {
            Some((text, encoding)) => (Some(text), Some(encoding.name())),
            None => (None, None),
        };
        Ok(FetchResponse {
            final_url: url,
            status,
            headers: response_headers,
            content_type,
            body,
            text,
            encoding,
            truncated,
            elapsed: started.elapsed(),
        })
    }
}

fn request_headers(req: &FetchRequest) -> Result<HeaderMap, FetchError> {
    let mut headers = HeaderMap::new();
    let value = |name: &str, v: &str| {
        HeaderValue::from_str(v).map_err(|_| FetchError::InvalidHeader {
            name: name.to_owned(),
        })
    };
    headers.insert(
        ACCEPT,
        value("accept", req.accept.as_deref().unwrap_or(DEFAULT_ACCEPT))?,
    );
    if let Some(language) = &req.accept_language {
        headers.insert(ACCEPT_LANGUAGE, value("accept-language", language)?);
    }
    for (name, v) in &req.headers {
        let header = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| FetchError::InvalidHeader { name: name.clone() })?;
        if DROPPED_HEADERS.contains(&header.as_str()) {
            continue;
        }
        headers.insert(header, value(name, v.trim())?);
    }
    Ok(headers)
}

fn redirect_location(response: &reqwest::Response) -> Option<String> {
    if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let raw = response.headers().get(LOCATION)?.as_bytes();
    Some(String::from_utf8_lossy(raw).trim().to_owned())
}

fn collect_headers(map: &HeaderMap) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in map {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        out.entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    out
}

async fn read_capped(
    mut response: reqwest::Response,
    max_bytes: usize,
    url: &Url,
) -> Result<(Vec<u8>, bool), FetchError> {
    let hint = response.content_length().unwrap_or(0) as usize;
    let mut body = Vec::with_capacity(hint.min(max_bytes).min(1024 * 1024));
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| classify_reqwest(e, url))?
    {
        let room = max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

fn classify_reqwest(err: reqwest::Error, url: &Url) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    while let Some(e) = source {
        if let Some(guard) = e.downcast_ref::<GuardError>() {
            return guard.clone().into();
        }
        source = e.source();
    }
    let url = url.to_string();
    if err.is_timeout() {
        FetchError::Timeout { url }
    } else if err.is_connect() {
        FetchError::Connect {
            url,
            message: error_chain(&err),
        }
    } else {
        FetchError::Io {
            url,
            message: error_chain(&err),
        }
    }
}

/// The causes of `err`, innermost last, without reqwest's own URL-bearing prefix.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut source = err.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    if parts.is_empty() {
        err.to_string()
    } else {
        parts.join(": ")
    }
}

/// The MIME type of a Content-Type value, lower-cased, without parameters.
pub fn mime_of(content_type: &str) -> Option<String> {
    let mime = content_type.split(';').next()?.trim().to_ascii_lowercase();
    (!mime.is_empty()).then_some(mime)
}

fn is_textual(mime: Option<&str>, body: &[u8]) -> bool {
    match mime {
        Some(m) => {
            m.starts_with("text/")
                || m.ends_with("+xml")
                || m.ends_with("+json")
                || matches!(
                    m,
                    "application/xml"
                        | "application/json"
                        | "application/javascript"
                        | "application/ecmascript"
                        | "application/x-javascript"
                        | "application/ld+json"
                )
        }
        // No type: text unless it looks binary.
        None => !body[..body.len().min(META_PRESCAN_BYTES)].contains(&0),
    }
}

/// Decodes a body the way browsers do: BOM, then the Content-Type charset,
/// then `<meta charset>` (or an XML declaration) in the first 1024 bytes,
/// then detection (UTF-8 when the bytes are valid UTF-8).
pub fn decode_body(body: &[u8], content_type: Option<&str>) -> (String, &'static Encoding) {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return (decode_with(encoding, &body[bom_len..]), encoding);
    }
    let mime = content_type.and_then(mime_of);
    let encoding = content_type
        .and_then(charset_param)
        .or_else(|| prescan(body, mime.as_deref()))
        .or_else(|| {
            mime.as_deref()
                .is_some_and(|m| m == "application/json" || m.ends_with("+json"))
                .then_some(UTF_8)
        })
        .unwrap_or_else(|| detect(body));
    (decode_with(encoding, body), encoding)
}

fn decode_with(encoding: &'static Encoding, bytes: &[u8]) -> String {
    encoding.decode_without_bom_handling(bytes).0.into_owned()
}

fn detect(body: &[u8]) -> &'static Encoding {
    let sample = &body[..body.len().min(DETECT_BYTES)];
    match std::str::from_utf8(sample) {
        Ok(_) => return UTF_8,
        // Valid UTF-8 cut off mid-character by the sample or the size cap.
        Err(e) if e.error_len().is_none() => return UTF_8,
        Err(_) => {}
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(sample, sample.len() == body.len());
    detector.guess(None, true)
}

/// The encoding named by a Content-Type's `charset` parameter.
fn charset_param(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        Encoding::for_label(value.trim().trim_matches(['"', '\'']).as_bytes())
    })
}

/// WHATWG's "prescan a byte stream" for `<meta>` (simplified), plus the XML
/// declaration for XML types.
fn prescan(body: &[u8], mime: Option<&str>) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(META_PRESCAN_BYTES)];
    let is_xml = mime.is_some_and(|m| m.ends_with("xml") && m != "application/xhtml+xml");
    if is_xml || head.starts_with(b"<?xml") {
        if let Some(found) = xml_declaration_encoding(head) {
            return Some(found);
        }
        if is_xml {
            return None;
        }
    }
    let mut i = 0;
    while i < head.len() {
        let rest = &head[i..];
        if rest.starts_with(b"<!--") {
            i += find(&rest[4..], b"-->").map_or(head.len(), |p| p + 7);
        } else if starts_with_ci(rest, b"<meta")
            && rest
                .get(5)
                .is_some_and(|b| b.is_ascii_whitespace() || *b == b'/')
        {
            i += 5;
            if let Some(found) = meta_charset(head, &mut i) {
                return Some(html_fixup(found));
            }
        } else if rest.starts_with(b"<")
            && rest
                .get(1)
                .is_some_and(|b| b.is_ascii_alphabetic() || matches!(b, b'/' | b'!' | b'?'))
        {
            i += find(rest, b">").map_or(head.len(), |p| p + 1);
        } else {
            i += 1;
        }
    }
    None
}

/// Encodings a `<meta>` may not pick: UTF-16 means UTF-8 there.
fn html_fixup(encoding: &'static Encoding) -> &'static Encoding {
    if encoding == encoding_rs::UTF_16LE || encoding == encoding_rs::UTF_16BE {
        UTF_8
    } else if encoding == encoding_rs::X_USER_DEFINED {
        WINDOWS_1252
    } else {
        encoding
    }
}

fn meta_charset(head: &[u8], i: &mut usize) -> Option<&'static Encoding> {
    let mut got_pragma = false;
    let mut need_pragma = None;
    let mut charset = None;
    while let Some((name, value)) = next_attribute(head, i) {
        match name.as_str() {
            "http-equiv" if value.eq_ignore_ascii_case(b"content-type") => got_pragma = true,
            "content" if charset.is_none() => {
                if let Some(found) = charset_in_content(&value) {
                    charset = Some(found);
                    need_pragma = Some(true);
                }
            }
            "charset" if charset.is_none() => {
                charset = Encoding::for_label(&value);
                need_pragma = Some(false);
            }
            _ => {}
        }
    }
    match need_pragma {
        Some(true) if !got_pragma => None,
        Some(_) => charset,
        None => None,
    }
}

/// One attribute of a tag (name lower-cased), advancing `i`; `None` at `>`.
fn next_attribute(head: &[u8], i: &mut usize) -> Option<(String, Vec<u8>)> {
    let at = |i: usize| head.get(i).copied();
    while at(*i).is_some_and(|b| b.is_ascii_whitespace() || b == b'/') {
        *i += 1;
    }
    if at(*i).is_none_or(|b| b == b'>') {
        return None;
    }
    let start = *i;
    while at(*i).is_some_and(|b| !b.is_ascii_whitespace() && !matches!(b, b'=' | b'>' | b'/')) {
        *i += 1;
    }
    let name = String::from_utf8_lossy(&head[start..*i]).to_ascii_lowercase();
    while at(*i).is_some_and(|b| b.is_ascii_whitespace()) {
        *i += 1;
    }
    if at(*i) != Some(b'=') {
        return Some((name, Vec::new()));
    }
    *i += 1;
    while at(*i).is_some_and(|b| b.is_ascii_whitespace()) {
        *i += 1;
    }
    let value = match at(*i) {
        Some(q @ (b'"' | b'\'')) => {
            let from = *i + 1;
            let len = head[from..]
                .iter()
                .position(|b| *b == q)
                .unwrap_or(head.len() - from);
            *i = (from + len + 1).min(head.len());
            head[from..from + len].to_vec()
        }
        _ => {
            let from = *i;
            while at(*i).is_some_and(|b| !b.is_ascii_whitespace() && b != b'>') {
                *i += 1;
            }
            head[from..*i].to_vec()
        }
    };
    Some((name, value))
}

/// `charset=...` inside a `<meta http-equiv content>` value.
fn charset_in_content(content: &[u8]) -> Option<&'static Encoding> {
    let lower = content.to_ascii_lowercase();
    let mut from = 0;
    while let Some(pos) = find(&lower[from..], b"charset") {
        let mut j = from + pos + 7;
        while lower.get(j).is_some_and(|b| b.is_ascii_whitespace()) {
            j += 1;
        }
        if lower.get(j) != Some(&b'=') {
            from = j;
            continue;
        }
        j += 1;
        while lower.get(j).is_some_and(|b| b.is_ascii_whitespace()) {
            j += 1;
        }
        let rest = &content[j..];
        let label = match rest.first() {
            Some(q @ (b'"' | b'\'')) => {
                let body = &rest[1..];
                &body[..body.iter().position(|b| b == q)?]
            }
            _ => {
                let end = rest
                    .iter()
                    .position(|b| b.is_ascii_whitespace() || *b == b';')
                    .unwrap_or(rest.len());
                &rest[..end]
            }
        };
        return Encoding::for_label(label);
    }
    None
}

fn xml_declaration_encoding(head: &[u8]) -> Option<&'static Encoding> {
    let decl_end = find(head, b"?>")?;
    let decl = &head[..decl_end];
    if !decl.starts_with(b"<?xml") {
        return None;
    }
    let pos = find(decl, b"encoding")? + 8;
    let rest = decl[pos..]
        .trim_ascii_start()
        .strip_prefix(b"=")?
        .trim_ascii_start();
    let quote = *rest.first()?;
    let body = &rest[1..];
    let label = &body[..body.iter().position(|b| *b == quote)?];
    Encoding::for_label(label).map(html_fixup)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn starts_with_ci(haystack: &[u8], prefix: &[u8]) -> bool {
    haystack.len() >= prefix.len() && haystack[..prefix.len()].eq_ignore_ascii_case(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(body: &[u8], content_type: Option<&str>) -> (String, &'static str) {
        let (text, encoding) = decode_body(body, content_type);
        (text, encoding.name())
    }

    #[test]
    fn bom_wins_over_a_wrong_header_charset() {
        let body = b"\xEF\xBB\xBF<p>caf\xC3\xA9</p>";
        assert_eq!(
            decode(body, Some("text/html; charset=iso-8859-1")),
            ("<p>café</p>".to_owned(), "UTF-8")
        );
        let utf16: Vec<u8> = [0xFF, 0xFE, b'h', 0, b'i', 0].to_vec();
        assert_eq!(
            decode(&utf16, Some("text/plain")),
            ("hi".to_owned(), "UTF-16LE")
        );
    }

    #[test]
    fn header_charset_decodes_shift_jis() {
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode("<p>日本語のページ</p>");
        assert_eq!(
            decode(&bytes, Some("text/html; charset=\"Shift_JIS\"")),
            ("<p>日本語のページ</p>".to_owned(), "Shift_JIS")
        );
    }

    #[test]
    fn meta_charset_decodes_latin1() {
        let body = b"<html><head><meta charset=\"iso-8859-1\"><title>Caf\xE9</title>";
        let (text, encoding) = decode(body, Some("text/html"));
        assert_eq!(encoding, "windows-1252");
        assert!(text.contains("Café"));
    }

    #[test]
    fn meta_http_equiv_content_type_is_honoured() {
        let body = b"<!-- <meta charset=utf-8> --><META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=koi8-r'>\xF0\xD2\xC9\xD7\xC5\xD4";
        let (text, encoding) = decode(body, None);
        assert_eq!(encoding, "KOI8-R");
        assert!(text.ends_with("Привет"), "{text}");
    }

    #[test]
    fn meta_content_without_http_equiv_is_ignored() {
        let body = "<meta content='text/html; charset=koi8-r'><p>naïve</p>".as_bytes();
        assert_eq!(decode(body, Some("text/html")).1, "UTF-8");
    }

    #[test]
    fn meta_utf16_means_utf8() {
        let body = "<meta charset=utf-16><p>é</p>".as_bytes();
        assert_eq!(decode(body, Some("text/html")).1, "UTF-8");
    }

    #[test]
    fn detection_finds_unlabelled_shift_jis_and_latin1() {
        let text = "<html><body><p>これは日本語で書かれたページです。文字コードの指定がありません。</p></body></html>";
        let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(text);
        assert_eq!(
            decode(&bytes, Some("text/html")),
            (text.to_owned(), "Shift_JIS")
        );
        let latin1 = b"<p>Le caf\xE9 est tr\xE8s bon, d\xE9j\xE0 pr\xEAt.</p>";
        assert_eq!(decode(latin1, Some("text/html")).1, "windows-1252");
        assert_eq!(decode("<p>déjà</p>".as_bytes(), None).1, "UTF-8");
    }

    #[test]
    fn xml_declaration_encoding_is_honoured() {
        let body = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>\xE9</a>";
        assert_eq!(
            decode(body, Some("application/xml")).0,
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>é</a>"
        );
    }

    #[test]
    fn textual_types_are_recognised() {
        assert!(is_textual(Some("text/html"), b""));
        assert!(is_textual(Some("application/rss+xml"), b""));
        assert!(is_textual(Some("application/json"), b""));
        assert!(!is_textual(Some("application/pdf"), b"%PDF"));
        assert!(!is_textual(None, b"\x89PNG\0\0"));
        assert_eq!(
            mime_of("Text/HTML; charset=utf-8").as_deref(),
            Some("text/html")
        );
    }

    #[test]
    fn caller_headers_override_defaults_and_transport_headers_are_dropped() {
        let mut req = FetchRequest::new("http://example.com/", Duration::from_secs(1));
        req.accept = Some("text/markdown".into());
        req.accept_language = Some("de-DE".into());
        req.headers = vec![
            ("X-Test".into(), "1".into()),
            ("Host".into(), "evil.example".into()),
            ("Accept-Encoding".into(), "identity".into()),
        ];
        let headers = request_headers(&req).unwrap();
        assert_eq!(headers["accept"], "text/markdown");
        assert_eq!(headers["accept-language"], "de-DE");
        assert_eq!(headers["x-test"], "1");
        assert!(!headers.contains_key("host") && !headers.contains_key("accept-encoding"));
        req.headers = vec![("Bad Name".into(), "x".into())];
        assert!(matches!(
            request_headers(&req),
            Err(FetchError::InvalidHeader { .. })
        ));
    }
}
