//! robots.txt per RFC 9309 and Google's parser: groups by product token,
//! longest match with allow winning ties, `*` and `$`, plus `Crawl-delay`
//! and `Sitemap:`; and a per-origin cache so each host is fetched once.

mod cache;
mod http;
mod matching;
mod parse;

use std::time::Duration;

pub use cache::{RobotsCache, RobotsLookup};
pub use http::{fetch_robots, robots_url};

/// Bytes of robots.txt parsed; the rest is ignored (Google's limit).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// How long a fetched robots.txt is trusted.
pub const ROBOTS_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How long an unreachable robots.txt (disallow all) is remembered.
pub const UNREACHABLE_TTL: Duration = Duration::from_secs(10 * 60);

/// Time allowed for one robots.txt fetch.
pub const ROBOTS_FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a [`Robots`] came from, which decides what it allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RobotsSource {
    /// A robots.txt was fetched (2xx) and parsed.
    Parsed,
    /// There is none (4xx other than 429, too many redirects): everything is allowed.
    Unavailable,
    /// The server failed (5xx, 429, network error, timeout): everything is disallowed.
    Unreachable,
}

#[derive(Debug, Clone)]
struct Rule {
    allow: bool,
    pattern: Vec<u8>,
}

/// The rules of one robots.txt that apply to one user agent.
#[derive(Debug, Clone)]
pub struct Robots {
    source: RobotsSource,
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
    sitemaps: Vec<String>,
}

#[cfg(test)]
mod tests;
