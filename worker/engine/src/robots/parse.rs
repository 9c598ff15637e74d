//! Reading robots.txt (RFC 9309 and Google's parser): lines, keys with
//! Google's accepted typos, groups by product token, `Crawl-delay` and
//! `Sitemap:`.

use std::time::Duration;

use url::Url;

use super::matching::normalize;
use super::{Robots, RobotsSource, Rule, MAX_ROBOTS_BYTES};
use crate::fetch::PRODUCT_TOKEN;

/// Google truncates longer lines.
pub(super) const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

/// What a line's key is (Google accepts some common typos).
#[derive(Debug, PartialEq)]
enum Key {
    UserAgent,
    Allow,
    Disallow,
    Sitemap,
    CrawlDelay,
    Unknown,
}

impl Key {
    fn of(key: &[u8]) -> Self {
        let key = key.to_ascii_lowercase();
        let starts = |prefixes: &[&str]| prefixes.iter().any(|p| key.starts_with(p.as_bytes()));
        if starts(&["user-agent", "useragent", "user agent"]) {
            Self::UserAgent
        } else if starts(&["allow"]) {
            Self::Allow
        } else if starts(&[
            "disallow",
            "dissallow",
            "dissalow",
            "disalow",
            "diasllow",
            "disallaw",
        ]) {
            Self::Disallow
        } else if starts(&["sitemap", "site-map"]) {
            Self::Sitemap
        } else if matches!(
            key.as_slice(),
            b"crawl-delay" | b"crawldelay" | b"crawl delay"
        ) {
            Self::CrawlDelay
        } else {
            Self::Unknown
        }
    }
}

#[derive(Default)]
struct Collected {
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

impl Robots {
    /// Parses robots.txt for our product token ([`PRODUCT_TOKEN`]).
    pub fn parse(body: &[u8]) -> Self {
        Self::parse_for(body, PRODUCT_TOKEN)
    }

    /// Parses robots.txt for the product token `agent`.
    pub fn parse_for(body: &[u8], agent: &str) -> Self {
        let body = &body[..body.len().min(MAX_ROBOTS_BYTES)];
        let body = skip_bom(body);
        let mut specific = Collected::default();
        let mut global = Collected::default();
        let mut sitemaps: Vec<String> = Vec::new();
        let (mut in_global, mut in_specific, mut seen_rule, mut ever_specific) =
            (false, false, false, false);

        for line in lines(body) {
            let Some((key, value)) = key_and_value(line) else {
                continue;
            };
            match Key::of(key) {
                Key::UserAgent => {
                    // A rule line closes the previous group's user-agent list.
                    if seen_rule {
                        (in_global, in_specific, seen_rule) = (false, false, false);
                    }
                    if value.first() == Some(&b'*')
                        && value.get(1).is_none_or(|b| b.is_ascii_whitespace())
                    {
                        in_global = true;
                    } else if product_token(value).eq_ignore_ascii_case(agent.as_bytes()) {
                        (in_specific, ever_specific) = (true, true);
                    }
                }
                key @ (Key::Allow | Key::Disallow) => {
                    if !(in_global || in_specific) {
                        continue;
                    }
                    seen_rule = true;
                    let rules = rules_for(key == Key::Allow, value);
                    for (active, into) in [(in_specific, &mut specific), (in_global, &mut global)] {
                        if active {
                            into.rules.extend(rules.iter().cloned());
                        }
                    }
                }
                Key::CrawlDelay => {
                    let delay = std::str::from_utf8(value)
                        .ok()
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .and_then(|secs| Duration::try_from_secs_f64(secs).ok());
                    for (active, into) in [(in_specific, &mut specific), (in_global, &mut global)] {
                        if active {
                            into.crawl_delay = into.crawl_delay.max(delay);
                        }
                    }
                }
                Key::Sitemap => {
                    let absolute = std::str::from_utf8(value)
                        .ok()
                        .and_then(|v| Url::parse(v).ok())
                        .filter(|u| matches!(u.scheme(), "http" | "https"))
                        .map(String::from);
                    if let Some(url) = absolute {
                        if !sitemaps.contains(&url) {
                            sitemaps.push(url);
                        }
                    }
                }
                Key::Unknown => {}
            }
        }

        // Any group naming us replaces the `*` groups, even an empty one.
        let chosen = if ever_specific { specific } else { global };
        Self {
            source: RobotsSource::Parsed,
            rules: chosen.rules,
            crawl_delay: chosen.crawl_delay,
            sitemaps,
        }
    }

    /// Allows everything (no robots.txt).
    pub fn allow_all() -> Self {
        Self::with_source(RobotsSource::Unavailable)
    }

    /// Disallows everything (robots.txt unreachable).
    pub fn disallow_all() -> Self {
        Self::with_source(RobotsSource::Unreachable)
    }

    fn with_source(source: RobotsSource) -> Self {
        Self {
            source,
            rules: Vec::new(),
            crawl_delay: None,
            sitemaps: Vec::new(),
        }
    }
}
/// Skips a UTF-8 BOM, or the part of one a file starts with (as Google does).
fn skip_bom(body: &[u8]) -> &[u8] {
    let bom = b"\xEF\xBB\xBF";
    let n = body.iter().zip(bom).take_while(|(a, b)| a == b).count();
    &body[n..]
}

/// Lines split at `\n`, `\r` or `\r\n`, each cut at Google's line limit.
fn lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|b| *b == b'\n' || *b == b'\r')
        .map(|line| &line[..line.len().min(MAX_LINE_BYTES)])
}

/// `key: value` without comments and surrounding space; Google also accepts
/// `key value` when the line has exactly two words.
fn key_and_value(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let line = line
        .split(|b| *b == b'#')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    if line.is_empty() {
        return None;
    }
    let (key, value) = match line.iter().position(|b| *b == b':') {
        Some(colon) => (&line[..colon], &line[colon + 1..]),
        None => {
            let space = line.iter().position(|b| *b == b' ' || *b == b'\t')?;
            let value = line[space..].trim_ascii();
            if value.iter().any(|b| *b == b' ' || *b == b'\t') {
                return None;
            }
            (&line[..space], value)
        }
    };
    let key = key.trim_ascii();
    (!key.is_empty()).then_some((key, value.trim_ascii()))
}

/// The product token at the start of a user-agent value (`Googlebot/2.1` → `Googlebot`).
fn product_token(value: &[u8]) -> &[u8] {
    let end = value
        .iter()
        .position(|b| !(b.is_ascii_alphabetic() || *b == b'-' || *b == b'_'))
        .unwrap_or(value.len());
    &value[..end]
}

fn rules_for(allow: bool, value: &[u8]) -> Vec<Rule> {
    let pattern = normalize(value);
    let mut rules = Vec::with_capacity(2);
    // Google: an allowed `/dir/index.htm(l)` also allows `/dir/` itself.
    if allow {
        if let Some(slash) = pattern.iter().rposition(|b| *b == b'/') {
            if pattern[slash..].starts_with(b"/index.htm") {
                let mut dir = pattern[..=slash].to_vec();
                dir.push(b'$');
                rules.push(Rule {
                    allow,
                    pattern: dir,
                });
            }
        }
    }
    rules.push(Rule { allow, pattern });
    rules
}
