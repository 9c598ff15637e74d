//! The fetch tier: plain HTTP(S) GETs through reqwest (rustls), with redirects
//! followed by hand so every hop passes the network guard, one deadline for
//! the whole fetch, a cap on decompressed bytes, and browser-style decoding.

mod body;
mod decode;
mod error;
mod headers;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use url::Url;

use crate::guard::{NetworkGuard, Resolve};
use body::read_capped;
use decode::is_textual;
use error::{classify_reqwest, error_chain};
use headers::{collect_headers, redirect_location, request_headers, ORIGIN_BOUND_HEADERS};

pub use decode::{decode_body, mime_of};
pub use error::FetchError;

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

#[cfg(test)]
mod tests;
