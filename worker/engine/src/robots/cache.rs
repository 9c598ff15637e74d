//! The per-origin cache: each origin's robots.txt fetched once per TTL,
//! however many callers ask at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::future::Cache;
use moka::Expiry;
use url::Url;

use super::http::fetch_robots;
use super::{Robots, RobotsSource, ROBOTS_FETCH_TIMEOUT, ROBOTS_TTL, UNREACHABLE_TTL};
use crate::fetch::Fetcher;

/// A robots.txt lookup: the rules, and whether this call fetched them.
#[derive(Debug, Clone)]
pub struct RobotsLookup {
    /// The rules for the URL's origin.
    pub robots: Arc<Robots>,
    /// True when this call made the robots.txt request (for fetch billing).
    pub fetched: bool,
}

/// How long one entry lives: unreachable robots.txt shorter than the rest.
struct RobotsExpiry {
    ttl: Duration,
    unreachable_ttl: Duration,
}

impl RobotsExpiry {
    fn ttl_of(&self, robots: &Robots) -> Duration {
        match robots.source() {
            RobotsSource::Unreachable => self.unreachable_ttl,
            _ => self.ttl,
        }
    }
}

impl Expiry<String, Arc<Robots>> for RobotsExpiry {
    fn expire_after_create(
        &self,
        _key: &String,
        robots: &Arc<Robots>,
        _created_at: Instant,
    ) -> Option<Duration> {
        Some(self.ttl_of(robots))
    }
}

/// robots.txt per scheme+host+port, fetched once per TTL however many callers ask.
pub struct RobotsCache {
    /// Concurrent first callers of a key share one fetch (`or_insert_with`).
    entries: Cache<String, Arc<Robots>>,
    fetch_timeout: Duration,
}

impl Default for RobotsCache {
    fn default() -> Self {
        Self::new(ROBOTS_TTL)
    }
}

impl RobotsCache {
    /// A cache keeping parsed robots.txt for `ttl` (unreachable ones for at most [`UNREACHABLE_TTL`]).
    pub fn new(ttl: Duration) -> Self {
        let expiry = RobotsExpiry {
            ttl,
            unreachable_ttl: ttl.min(UNREACHABLE_TTL),
        };
        Self {
            entries: Cache::builder()
                .max_capacity(10_000)
                .expire_after(expiry)
                .build(),
            fetch_timeout: ROBOTS_FETCH_TIMEOUT,
        }
    }

    /// Sets the time allowed for each robots.txt fetch.
    pub fn with_fetch_timeout(mut self, timeout: Duration) -> Self {
        self.fetch_timeout = timeout;
        self
    }

    /// The robots.txt rules for `url`'s origin, fetching them if needed.
    pub async fn get(&self, fetcher: &Fetcher, url: &Url) -> RobotsLookup {
        let Some(key) = cache_key(url) else {
            return RobotsLookup {
                robots: Arc::new(Robots::allow_all()),
                fetched: false,
            };
        };
        let entry = self
            .entries
            .entry(key)
            .or_insert_with(async {
                Arc::new(fetch_robots(fetcher, url, self.fetch_timeout).await)
            })
            .await;
        RobotsLookup {
            fetched: entry.is_fresh(),
            robots: entry.into_value(),
        }
    }

    /// Whether `url` may be fetched, per its origin's robots.txt.
    pub async fn is_allowed(&self, fetcher: &Fetcher, url: &Url) -> bool {
        self.get(fetcher, url).await.robots.is_allowed_url(url)
    }
}

pub(super) fn cache_key(url: &Url) -> Option<String> {
    Some(format!(
        "{}://{}:{}",
        url.scheme(),
        url.host_str()?,
        url.port_or_known_default()?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_robots_expire_sooner() {
        let expiry = RobotsExpiry {
            ttl: ROBOTS_TTL,
            unreachable_ttl: ROBOTS_TTL.min(UNREACHABLE_TTL),
        };
        let ttl = |robots: Robots| {
            expiry.expire_after_create(&String::new(), &Arc::new(robots), Instant::now())
        };
        assert_eq!(ttl(Robots::disallow_all()), Some(UNREACHABLE_TTL));
        assert_eq!(ttl(Robots::allow_all()), Some(ROBOTS_TTL));
        assert_eq!(
            ttl(Robots::parse(b"User-agent: *\nDisallow: /x\n")),
            Some(ROBOTS_TTL)
        );
    }

    #[tokio::test]
    async fn an_expired_entry_is_fetched_again() {
        let cache: Cache<String, Arc<Robots>> = Cache::builder()
            .expire_after(RobotsExpiry {
                ttl: Duration::from_secs(2),
                unreachable_ttl: Duration::from_millis(20),
            })
            .build();
        let get = |robots: fn() -> Robots| {
            let cache = cache.clone();
            async move {
                cache
                    .entry("k".to_owned())
                    .or_insert_with(async move { Arc::new(robots()) })
                    .await
                    .is_fresh()
            }
        };
        assert!(get(Robots::disallow_all).await);
        assert!(!get(Robots::disallow_all).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
        // The unreachable entry has expired; an allow-all one lives longer.
        assert!(get(Robots::allow_all).await);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!get(Robots::allow_all).await);
    }
}
