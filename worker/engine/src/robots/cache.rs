//! The per-origin cache: each origin's robots.txt fetched once per TTL,
//! however many callers ask at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;
use url::Url;

use super::http::fetch_robots;
use super::{Robots, RobotsSource, ROBOTS_FETCH_TIMEOUT, ROBOTS_TTL, UNREACHABLE_TTL};
use crate::fetch::Fetcher;

/// One cache slot; the `OnceCell` makes concurrent first callers share a fetch.
#[derive(Default)]
struct Slot {
    cell: OnceCell<(Arc<Robots>, Instant)>,
}

/// A robots.txt lookup: the rules, and whether this call fetched them.
#[derive(Debug, Clone)]
pub struct RobotsLookup {
    /// The rules for the URL's origin.
    pub robots: Arc<Robots>,
    /// True when this call made the robots.txt request (for fetch billing).
    pub fetched: bool,
}

/// robots.txt per scheme+host+port, fetched once per TTL however many callers ask.
pub struct RobotsCache {
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    ttl: Duration,
    unreachable_ttl: Duration,
    fetch_timeout: Duration,
    capacity: usize,
}

impl Default for RobotsCache {
    fn default() -> Self {
        Self::new(ROBOTS_TTL)
    }
}

impl RobotsCache {
    /// A cache keeping parsed robots.txt for `ttl` (unreachable ones for at most [`UNREACHABLE_TTL`]).
    pub fn new(ttl: Duration) -> Self {
        Self {
            slots: Mutex::new(HashMap::new()),
            ttl,
            unreachable_ttl: ttl.min(UNREACHABLE_TTL),
            fetch_timeout: ROBOTS_FETCH_TIMEOUT,
            capacity: 10_000,
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
        let slot = self.slot(key);
        let fetched = AtomicBool::new(false);
        let (robots, _) = slot
            .cell
            .get_or_init(|| async {
                fetched.store(true, Ordering::Relaxed);
                let robots = fetch_robots(fetcher, url, self.fetch_timeout).await;
                (Arc::new(robots), Instant::now())
            })
            .await;
        RobotsLookup {
            robots: Arc::clone(robots),
            fetched: fetched.into_inner(),
        }
    }

    /// Whether `url` may be fetched, per its origin's robots.txt.
    pub async fn is_allowed(&self, fetcher: &Fetcher, url: &Url) -> bool {
        self.get(fetcher, url).await.robots.is_allowed_url(url)
    }

    fn slot(&self, key: String) -> Arc<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = slots.get(&key) {
            if !self.expired(slot) {
                return Arc::clone(slot);
            }
        }
        if slots.len() >= self.capacity {
            slots.retain(|_, slot| !self.expired(slot));
            if slots.len() >= self.capacity {
                slots.clear();
            }
        }
        let slot = Arc::new(Slot::default());
        slots.insert(key, Arc::clone(&slot));
        slot
    }

    fn expired(&self, slot: &Slot) -> bool {
        slot.cell.get().is_some_and(|(robots, at)| {
            let ttl = match robots.source() {
                RobotsSource::Unreachable => self.unreachable_ttl,
                _ => self.ttl,
            };
            at.elapsed() >= ttl
        })
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
