//! Why a fetch failed, read from reqwest's error chain (a guard refusal
//! inside it stays a guard refusal).

use url::Url;

use crate::guard::GuardError;

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

pub(super) fn classify_reqwest(err: reqwest::Error, url: &Url) -> FetchError {
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
pub(super) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
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
