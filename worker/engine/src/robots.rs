//! robots.txt per RFC 9309 and Google's parser: groups by product token,
//! longest match with allow winning ties, `*` and `$`, plus `Crawl-delay`
//! and `Sitemap:`; and a per-origin cache so each host is fetched once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;
use url::Url;

use crate::fetch::{FetchError, FetchRequest, Fetcher, PRODUCT_TOKEN};

/// Bytes of robots.txt parsed; the rest is ignored (Google's limit).
pub const MAX_ROBOTS_BYTES: usize = 500 * 1024;

/// How long a fetched robots.txt is trusted.
pub const ROBOTS_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How long an unreachable robots.txt (disallow all) is remembered.
pub const UNREACHABLE_TTL: Duration = Duration::from_secs(10 * 60);

/// Time allowed for one robots.txt fetch.
pub const ROBOTS_FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Google truncates longer lines.
const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

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

/// RFC 9309 §2.2.2: percent-encode non-ASCII and control bytes, decode
/// escaped unreserved characters, upper-case the remaining escapes.
fn normalize(raw: &[u8]) -> Vec<u8> {
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
fn matches(path: &[u8], pattern: &[u8]) -> bool {
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

fn cache_key(url: &Url) -> Option<String> {
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

    fn allowed(robots: &str, agent: &str, path: &str) -> bool {
        Robots::parse_for(robots.as_bytes(), agent).is_allowed(path)
    }

    #[test]
    fn line_syntax_accepts_missing_colon_only_between_two_words() {
        assert!(!allowed(
            "user-agent: FooBot\ndisallow: /\n",
            "FooBot",
            "/x"
        ));
        assert!(allowed("foo: FooBot\nbar: /\n", "FooBot", "/x"));
        assert!(!allowed("user-agent FooBot\ndisallow /\n", "FooBot", "/x"));
        assert!(allowed(
            "user-agent FooBot\ndisallow / extra\n",
            "FooBot",
            "/x"
        ));
    }

    #[test]
    fn groups_merge_and_rules_before_any_user_agent_are_ignored() {
        let robots = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\n\
                      user-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\n\
                      user-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n";
        assert!(allowed(robots, "FooBot", "/x/b"));
        assert!(allowed(robots, "FooBot", "/z/d"));
        assert!(!allowed(robots, "FooBot", "/y/c"));
        assert!(allowed(robots, "BarBot", "/y/c"));
        assert!(allowed(robots, "BarBot", "/w/a"));
        assert!(!allowed(robots, "BarBot", "/z/d"));
        assert!(allowed(robots, "BazBot", "/z/d"));
        assert!(!allowed(robots, "FooBot", "/foo/bar/"));
    }

    #[test]
    fn sitemap_and_unknown_lines_do_not_close_a_user_agent_list() {
        let robots =
            "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n";
        assert!(!allowed(robots, "FooBot", "/"));
        assert!(!allowed(robots, "BarBot", "/"));
        let robots =
            "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n";
        assert!(!allowed(robots, "FooBot", "/"));
        assert!(!allowed(robots, "BarBot", "/"));
    }

    #[test]
    fn keys_and_user_agents_are_case_insensitive_but_paths_are_not() {
        let robots = "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n";
        assert!(allowed(robots, "FooBot", "/x/y"));
        assert!(!allowed(robots, "FooBot", "/a/b"));
        let robots = "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n";
        assert!(allowed(robots, "foo", "/x/y"));
        assert!(!allowed(robots, "Foo", "/a/b"));
        assert!(!allowed(
            "user-agent: FooBot\ndisallow: /x/\n",
            "FooBot",
            "/x/"
        ));
        assert!(allowed(
            "user-agent: FooBot\ndisallow: /X/\n",
            "FooBot",
            "/x/"
        ));
        assert!(!allowed(
            "User-agent: webdata/1.0\nDisallow: /\n",
            "webdata",
            "/a"
        ));
    }

    #[test]
    fn specific_group_replaces_the_global_one() {
        let robots = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n";
        assert!(!allowed(robots, "FooBot", "/x/y"));
        assert!(allowed(robots, "BarBot", "/x/y"));
        let robots = "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n";
        assert!(allowed(robots, "FooBot", "/x/page"));
        assert!(!allowed(robots, "FooBot", "/y/page"));
        // A group for us with no effective rule still replaces `*`…
        let robots = "user-agent: FooBot\ndisallow:\nuser-agent: *\ndisallow: /\n";
        assert!(allowed(robots, "FooBot", "/a"));
        // …while a blank line does not end a user-agent list.
        let robots = "user-agent: FooBot\n\nuser-agent: *\ndisallow: /\n";
        assert!(!allowed(robots, "FooBot", "/a"));
        let robots = "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\n";
        assert!(allowed(robots, "QuxBot", "/x/y"));
        assert!(allowed("", "FooBot", "/"));
    }

    #[test]
    fn longest_match_wins_and_allow_wins_ties() {
        let ua = "FooBot";
        let group = |rules: &str| format!("user-agent: FooBot\n{rules}");
        assert!(allowed(
            &group("disallow: /x/page.html\nallow: /x/page.html\n"),
            ua,
            "/x/page.html"
        ));
        assert!(allowed(
            &group("allow: /x/page.html\ndisallow: /x/page.html\n"),
            ua,
            "/x/page.html"
        ));
        assert!(!allowed(
            &group("allow: /page\ndisallow: /*.html\n"),
            ua,
            "/page.html"
        ));
        assert!(allowed(
            &group("allow: /page\ndisallow: /*.html\n"),
            ua,
            "/page"
        ));
        assert!(allowed(
            &group("allow: /x/page.\ndisallow: /*.html\n"),
            ua,
            "/x/page.html"
        ));
        assert!(!allowed(
            &group("allow: /x/page.\ndisallow: /*.html\n"),
            ua,
            "/x/y.html"
        ));
        assert!(allowed(&group("allow: /\ndisallow: /\n"), ua, "/"));
        assert!(allowed(&group("disallow: /\nallow: /\n"), ua, "/"));
        assert!(allowed(
            &group("allow: /folder\ndisallow: /folder\n"),
            ua,
            "/folder/page"
        ));
        assert!(!allowed(
            &group("disallow: /folder\nallow: /folde\n"),
            ua,
            "/folder/page"
        ));
    }

    #[test]
    fn allow_root_with_end_anchor() {
        let robots = "user-agent: FooBot\ndisallow: /\nallow: /$\n";
        assert!(allowed(robots, "FooBot", "/"));
        assert!(allowed(robots, "FooBot", ""));
        assert!(!allowed(robots, "FooBot", "/page.html"));
    }

    #[test]
    fn empty_disallow_allows_everything() {
        assert!(allowed("user-agent: *\ndisallow:\n", "FooBot", "/anything"));
        assert!(!allowed(
            "user-agent: *\nallow:\ndisallow: /\n",
            "FooBot",
            "/anything"
        ));
    }

    #[test]
    fn wildcards_and_end_anchors_follow_google_documentation() {
        let check = |rule: &str, yes: &[&str], no: &[&str]| {
            let robots = format!("user-agent: FooBot\ndisallow: /\nallow: {rule}\n");
            for path in yes {
                assert!(
                    allowed(&robots, "FooBot", path),
                    "{rule} should allow {path}"
                );
            }
            for path in no {
                assert!(
                    !allowed(&robots, "FooBot", path),
                    "{rule} should not allow {path}"
                );
            }
        };
        let fish_yes = [
            "/fish",
            "/fish.html",
            "/fish/salmon.html",
            "/fishheads",
            "/fishheads/yummy.html",
            "/fish.html?id=anything",
        ];
        let fish_no = ["/Fish.asp", "/catfish", "/?id=fish", "/bar"];
        check("/fish", &fish_yes, &fish_no);
        check("/fish*", &fish_yes, &fish_no);
        check(
            "/fish/",
            &["/fish/", "/fish/?id=anything", "/fish/salmon.htm"],
            &["/fish", "/fish.html", "/Fish/Salmon.asp"],
        );
        check(
            "/*.php",
            &[
                "/filename.php",
                "/folder/filename.php",
                "/folder/filename.php?parameters",
                "/folder/any.php.file.html",
                "/filename.php/",
                "/index?f=filename.php/",
            ],
            &["/php/", "/index?php", "/windows.PHP"],
        );
        check(
            "/*.php$",
            &["/filename.php", "/folder/filename.php"],
            &[
                "/filename.php?parameters",
                "/filename.php/",
                "/filename.php5",
                "/php/",
                "/windows.PHP",
            ],
        );
        check(
            "/fish*.php",
            &["/fish.php", "/fishheads/catfish.php?parameters"],
            &["/Fish.PHP"],
        );
    }

    #[test]
    fn special_characters_and_fragments() {
        let robots = "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n";
        assert!(!allowed(robots, "FooBot", "/foo/bar/quz"));
        assert!(allowed(robots, "FooBot", "/foo/quz"));
        assert!(allowed(robots, "FooBot", "/foo//quz"));
        assert!(allowed(robots, "FooBot", "/foo/bax/quz"));
        let robots = "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n";
        assert!(!allowed(robots, "FooBot", "/foo/bar"));
        assert!(allowed(robots, "FooBot", "/foo/bar/qux"));
        assert!(allowed(robots, "FooBot", "/foo/bar/"));
        assert!(allowed(robots, "FooBot", "/foo/bar/baz"));
        let robots = "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n";
        assert!(allowed(robots, "FooBot", "/foo/bar"));
        assert!(!allowed(robots, "FooBot", "/foo/quz"));
        // The fragment is not part of the path: `/a#x` is `/a`.
        assert!(!allowed("User-agent: *\nDisallow: /a$\n", "FooBot", "/a#x"));
        assert!(allowed("User-agent: *\nDisallow: /a$\n", "FooBot", "/a?x"));
    }

    #[test]
    fn percent_encoding_is_normalised_on_both_sides() {
        let robots =
            "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n";
        assert!(allowed(
            robots,
            "FooBot",
            "/foo/bar?qux=taz&baz=http://foo.bar?tar&par"
        ));
        let robots = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n";
        assert!(allowed(robots, "FooBot", "/foo/bar/%E3%83%84"));
        assert!(allowed(robots, "FooBot", "/foo/bar/ツ"));
        let robots = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%e3%83%84\n";
        assert!(allowed(robots, "FooBot", "/foo/bar/%E3%83%84"));
        // RFC 9309: escaped unreserved characters compare unescaped; reserved ones do not.
        let robots = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n";
        assert!(allowed(robots, "FooBot", "/foo/bar/baz"));
        let robots = "User-agent: *\nDisallow: /a%2Fb\n";
        assert!(!allowed(robots, "x", "/a%2fb"));
        assert!(allowed(robots, "x", "/a/b"));
    }

    #[test]
    fn index_html_allows_its_directory() {
        let robots = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n";
        assert!(allowed(robots, "foobot", "/allowed-slash/"));
        assert!(!allowed(robots, "foobot", "/allowed-slash/index.htm"));
        assert!(allowed(robots, "foobot", "/allowed-slash/index.html"));
        assert!(!allowed(robots, "foobot", "/anyother-url"));
    }

    #[test]
    fn byte_order_marks_are_skipped_even_partial_ones() {
        let tail = "User-agent: FooBot\nDisallow: /\n";
        for bom in [&b"\xEF\xBB\xBF"[..], b"\xEF\xBB", b"\xEF"] {
            let body = [bom, tail.as_bytes()].concat();
            assert!(!Robots::parse_for(&body, "FooBot").is_allowed("/x"));
        }
        let broken = [&b"\xEF\x11\xBF"[..], tail.as_bytes()].concat();
        assert!(Robots::parse_for(&broken, "FooBot").is_allowed("/x"));
    }

    #[test]
    fn line_endings_of_every_kind_split_lines() {
        for sep in ["\n", "\r", "\r\n"] {
            let robots = ["User-agent: FooBot", "Disallow: /x", "Allow: /x/y"].join(sep);
            assert!(!allowed(&robots, "FooBot", "/x/a"), "{sep:?}");
            assert!(allowed(&robots, "FooBot", "/x/y"), "{sep:?}");
        }
    }

    #[test]
    fn overlong_lines_are_cut_like_google() {
        let prefix = "disallow: ";
        let mut long = String::from("/x/");
        while long.len() < MAX_LINE_BYTES + 1 - prefix.len() {
            long.push('a');
        }
        let robots = format!("user-agent: FooBot\n{prefix}{long}/qux\n");
        assert!(allowed(&robots, "FooBot", "/fux"));
        assert!(!allowed(&robots, "FooBot", &format!("{long}/fux")));
    }

    #[test]
    fn crawl_delay_and_sitemaps() {
        let robots = Robots::parse_for(
            b"Sitemap: https://example.com/a.xml\nUser-agent: *\nCrawl-delay: 9\n\
              User-agent: webdata\nCrawl-delay: 2.5\nDisallow: /private\n\
              Sitemap: /relative.xml\nsitemap: http://example.com/b.xml\n",
            "webdata",
        );
        assert_eq!(robots.crawl_delay(), Some(Duration::from_millis(2500)));
        assert_eq!(
            robots.sitemaps(),
            ["https://example.com/a.xml", "http://example.com/b.xml"]
        );
        let global = Robots::parse_for(b"User-agent: *\nCrawl-delay: 9\n", "webdata");
        assert_eq!(global.crawl_delay(), Some(Duration::from_secs(9)));
        let bad = Robots::parse_for(b"User-agent: *\nCrawl-delay: -1\n", "webdata");
        assert_eq!(bad.crawl_delay(), None);
    }

    #[test]
    fn robots_txt_itself_is_always_allowed_and_sources_decide_the_rest() {
        assert!(allowed("User-agent: *\nDisallow: /\n", "x", "/robots.txt"));
        assert!(Robots::allow_all().is_allowed("/a"));
        assert!(!Robots::disallow_all().is_allowed("/a"));
        assert_eq!(Robots::disallow_all().source(), RobotsSource::Unreachable);
    }

    #[test]
    fn oversized_files_are_cut_at_500_kib() {
        let mut body = b"User-agent: *\n".to_vec();
        body.resize(MAX_ROBOTS_BYTES, b'\n');
        body.extend_from_slice(b"Disallow: /\n");
        assert!(Robots::parse(&body).is_allowed("/a"));
    }

    #[test]
    fn robots_url_and_cache_key_use_the_origin() {
        let url = Url::parse("https://Example.com:8443/a/b?c#d").unwrap();
        assert_eq!(
            robots_url(&url).unwrap().as_str(),
            "https://example.com:8443/robots.txt"
        );
        assert_eq!(cache_key(&url).unwrap(), "https://example.com:8443");
        let url = Url::parse("http://example.com/x").unwrap();
        assert_eq!(cache_key(&url).unwrap(), "http://example.com:80");
    }
}
