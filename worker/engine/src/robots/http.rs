//! Fetching robots.txt for an origin, and what each status code means.

use std::time::Duration;

use url::Url;

use super::{Robots, MAX_ROBOTS_BYTES};
use crate::fetch::{FetchError, FetchRequest, Fetcher};

/// The robots.txt URL for `url`'s origin.
pub fn robots_url(url: &Url) -> Option<Url> {
    url.host_str()?;
    let mut robots = url.clone();
    robots.set_path("/robots.txt");
    robots.set_query(None);
    robots.set_fragment(None);
    Some(robots)
}

/// Fetches and interprets `url`'s robots.txt: 2xx is parsed, 4xx (but 429)
/// allows everything, and 5xx, 429, timeouts and network errors disallow
/// everything (RFC 9309 §2.3.1.4). Redirects are followed by the fetcher.
pub async fn fetch_robots(fetcher: &Fetcher, url: &Url, timeout: Duration) -> Robots {
    let Some(robots_url) = robots_url(url) else {
        return Robots::allow_all();
    };
    let mut req = FetchRequest::new(robots_url.as_str(), timeout);
    req.accept = Some("text/plain".to_owned());
    req.max_bytes = MAX_ROBOTS_BYTES;
    match fetcher.fetch(&req).await {
        Ok(resp) => match resp.status {
            200..=299 => Robots::parse(&resp.body),
            429 => Robots::disallow_all(),
            300..=499 => Robots::allow_all(),
            _ => Robots::disallow_all(),
        },
        // RFC 9309 §2.3.1.2: too many redirects means "unavailable".
        Err(
            FetchError::TooManyRedirects { .. }
            | FetchError::InvalidRedirect { .. }
            | FetchError::Blocked(_),
        ) => Robots::allow_all(),
        Err(err) => {
            tracing::debug!(url = %robots_url, error = %err, "robots.txt unreachable");
            Robots::disallow_all()
        }
    }
}
