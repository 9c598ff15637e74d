//! Matching a path against the rules: RFC 9309 path normalisation, the
//! longest match with allow winning ties, `*` and a final `$`.

use std::time::Duration;

use url::Url;

use super::{Robots, RobotsSource};

impl Robots {
    /// Where these rules came from.
    pub fn source(&self) -> RobotsSource {
        self.source
    }

    /// Whether we may fetch `path_and_query` (a fragment is ignored).
    pub fn is_allowed(&self, path_and_query: &str) -> bool {
        let path = path_and_query
            .split_once('#')
            .map_or(path_and_query, |(p, _)| p);
        let mut path = normalize(path.as_bytes());
        if path.first() != Some(&b'/') {
            path.insert(0, b'/');
        }
        if path == b"/robots.txt" {
            return true;
        }
        match self.source {
            RobotsSource::Unavailable => return true,
            RobotsSource::Unreachable => return false,
            RobotsSource::Parsed => {}
        }
        let best = |allow: bool| {
            self.rules
                .iter()
                .filter(|r| r.allow == allow && matches(&path, &r.pattern))
                .map(|r| r.pattern.len())
                .max()
                .unwrap_or(0)
        };
        // An empty pattern matches with priority 0, i.e. it says nothing.
        let (allow, disallow) = (best(true), best(false));
        disallow <= allow
    }

    /// Whether we may fetch `url` (its path and query).
    pub fn is_allowed_url(&self, url: &Url) -> bool {
        match url.query() {
            Some(q) => self.is_allowed(&format!("{}?{q}", url.path())),
            None => self.is_allowed(url.path()),
        }
    }

    /// `Crawl-delay` of the group that applies to us, if any.
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }

    /// Absolute `Sitemap:` URLs, from anywhere in the file.
    pub fn sitemaps(&self) -> &[String] {
        &self.sitemaps
    }
}

/// RFC 9309 §2.2.2: percent-encode non-ASCII and control bytes, decode
/// escaped unreserved characters, upper-case the remaining escapes.
pub(super) fn normalize(raw: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == b'%' {
            if let (Some(hi), Some(lo)) = (
                raw.get(i + 1).copied().and_then(hex),
                raw.get(i + 2).copied().and_then(hex),
            ) {
                let decoded = hi << 4 | lo;
                if decoded.is_ascii_alphanumeric() || b"-._~".contains(&decoded) {
                    out.push(decoded);
                } else {
                    out.extend_from_slice(&[b'%', HEX[hi as usize], HEX[lo as usize]]);
                }
                i += 3;
                continue;
            }
        }
        if b >= 0x80 || b <= 0x20 || b == 0x7f {
            out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        } else {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// Google's matcher: the pattern is a prefix match where `*` matches any
/// run of bytes and a final `$` anchors the end.
pub(super) fn matches(path: &[u8], pattern: &[u8]) -> bool {
    // `positions` holds every path offset the pattern so far can end at.
    let mut positions: Vec<usize> = vec![0];
    for (k, &p) in pattern.iter().enumerate() {
        if p == b'$' && k + 1 == pattern.len() {
            return positions.last() == Some(&path.len());
        }
        if p == b'*' {
            let first = positions[0];
            positions = (first..=path.len()).collect();
        } else {
            positions.retain_mut(|pos| {
                let hit = path.get(*pos) == Some(&p);
                *pos += 1;
                hit
            });
            if positions.is_empty() {
                return false;
            }
        }
    }
    true
}
