//! Headers and redirects: the request headers sent (caller headers less
//! the transport's own), the response headers kept, the redirect Location,
//! and the headers not carried to another origin.

use std::collections::BTreeMap;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, ACCEPT_LANGUAGE, LOCATION};

use super::{FetchError, FetchRequest};

const DEFAULT_ACCEPT: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

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
pub(super) const ORIGIN_BOUND_HEADERS: &[&str] =
    &["authorization", "cookie", "proxy-authorization"];
pub(super) fn request_headers(req: &FetchRequest) -> Result<HeaderMap, FetchError> {
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

pub(super) fn redirect_location(response: &reqwest::Response) -> Option<String> {
    if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let raw = response.headers().get(LOCATION)?.as_bytes();
    Some(String::from_utf8_lossy(raw).trim().to_owned())
}

pub(super) fn collect_headers(map: &HeaderMap) -> BTreeMap<String, String> {
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
