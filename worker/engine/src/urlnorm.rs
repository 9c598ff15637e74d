//! URL normalisation for de-duplication, site scoping and link resolution.
//!
//! What [`normalize`] does, and why:
//! - scheme and host are lowercased, IDNs become punycode, `.`/`..` segments
//!   are removed and an empty path becomes `/` (the `url` crate's parser);
//! - default ports are dropped (the parser again; `:443` on https is noise);
//! - a trailing dot on the host is dropped (`a.com.` is the same DNS name);
//! - the fragment is dropped (it never reaches the server);
//! - percent-escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`) are
//!   decoded and the remaining escapes uppercased (RFC 3986 §6.2.2: these are
//!   equivalent spellings of one URL);
//! - tracking parameters (`utm_*`, `gclid`, `fbclid`, `mc_cid`, `mc_eid`) are
//!   removed, the rest of the query keeps its order and spelling (servers may
//!   care about both), and a query left empty (or a lone `?`) is dropped;
//! - duplicate slashes are kept (`/a//b` may be a different resource), as
//!   are userinfo, `www.` and the scheme (different hosts and origins);
//! - the trailing slash is kept: `/x` and `/x/` may differ on the server, so
//!   it is only ignored in [`dedup_key`].

use std::net::IpAddr;

use url::{Host, Url};

/// Longest `href` [`resolve_link`] accepts; longer ones are not links a crawler wants.
pub const MAX_LINK_LEN: usize = 8 * 1024;

/// Query parameter names dropped by [`normalize`] (plus any `utm_*`).
const TRACKING_PARAMS: &[&str] = &["gclid", "fbclid", "mc_cid", "mc_eid"];

/// The normal form of `url` used for storage, comparison and glob matching.
pub fn normalize(url: &Url) -> Url {
    let mut out = url.clone();
    out.set_fragment(None);

    if let Some(Host::Domain(host)) = out.host() {
        if host.len() > 1 && host.ends_with('.') {
            let trimmed = host.trim_end_matches('.').to_owned();
            // Keep the original if the parser refuses the name, or reads it
            // as another host: `0xa..` is a name, `0xa` the IPv4 0.0.0.10.
            let mut cut = out.clone();
            if cut.set_host(Some(&trimmed)).is_ok() && matches!(cut.host(), Some(Host::Domain(_))) {
                out = cut;
            }
        }
    }

    if !out.cannot_be_a_base() {
        let path = normalize_percent_escapes(out.path());
        if path != out.path() {
            out.set_path(&path);
        }
        if out.path().is_empty() {
            out.set_path("/");
        }
    }

    if let Some(query) = out.query() {
        let kept: Vec<String> = query
            .split('&')
            .filter(|pair| !is_tracking_param(pair))
            .map(normalize_percent_escapes)
            .collect();
        let query = kept.join("&");
        if query.is_empty() {
            out.set_query(None);
        } else if Some(query.as_str()) != out.query() {
            out.set_query(Some(&query));
        }
    }
    out
}

/// The string under which two URLs count as the same page: the normal form
/// with the trailing slash of a non-root path removed (`/x/` = `/x`).
pub fn dedup_key(url: &Url) -> String {
    dedup_key_of_normalized(&normalize(url))
}

/// [`dedup_key`] of a URL already in [`normalize`]d form (no second
/// normalisation): the string with a non-root path's trailing `/` cut.
pub fn dedup_key_of_normalized(url: &Url) -> String {
    use url::Position;
    let path = url.path();
    if path.len() > 1 && path.ends_with('/') && !url.cannot_be_a_base() {
        let s = url.as_str();
        let cut = url[..Position::AfterPath].len() - 1;
        let mut key = String::with_capacity(s.len() - 1);
        key.push_str(&s[..cut]);
        key.push_str(&s[cut + 1..]);
        key
    } else {
        url.as_str().to_string()
    }
}

/// Decodes percent-escapes of unreserved characters and uppercases the others;
/// malformed escapes (`%zz`, a `%` at the end) are left as they are, and so
/// is an escape whose decoding would make one of them a valid escape.
pub fn normalize_percent_escapes(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut plain_start = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(hi), Some(lo)) = (hex_value(bytes[i + 1]), hex_value(bytes[i + 2])) {
                out.push_str(&s[plain_start..i]);
                let byte = hi * 16 + lo;
                // A decoded hex digit right after a stray `%` (`%e%38`) would
                // spell a new escape (`%e8`): another URL, and not a fixed point.
                let tail = out.as_bytes();
                let joins_stray = byte.is_ascii_hexdigit()
                    && (tail.last() == Some(&b'%') || tail.iter().rev().nth(1) == Some(&b'%'));
                if is_unreserved(byte) && !joins_stray {
                    out.push(char::from(byte));
                } else {
                    out.push('%');
                    out.push(char::from(bytes[i + 1].to_ascii_uppercase()));
                    out.push(char::from(bytes[i + 2].to_ascii_uppercase()));
                }
                i += 3;
                plain_start = i;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&s[plain_start..]);
    out
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_tracking_param(pair: &str) -> bool {
    let name = pair.split('=').next().unwrap_or(pair);
    let name = normalize_percent_escapes(name).to_ascii_lowercase();
    name.starts_with("utm_") || TRACKING_PARAMS.contains(&name.as_str())
}

/// The registrable domain ("eTLD+1") of `host` per the Public Suffix List,
/// private section included (`user.github.io` is its own site); `None` for IP
/// addresses (an IP is its own site) and for names that are public suffixes.
pub fn registrable_domain(host: &str) -> Option<String> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() || host.starts_with('[') || host.parse::<IpAddr>().is_ok() {
        return None;
    }
    psl::domain_str(&host).map(str::to_owned)
}

/// Whether `b` belongs to the same site as `a` for crawling and mapping.
///
/// Scheme is ignored (an http → https move stays on site) but an explicit
/// non-default port must match (`a.com:8080` is another server). Without
/// `allow_subdomains` the hosts must be equal ignoring a leading `www.`; with
/// it the registrable domains must be equal. IP hosts and hosts that are
/// themselves public suffixes only ever match the same host.
pub fn same_site(a: &Url, b: &Url, allow_subdomains: bool) -> bool {
    if a.port() != b.port() {
        return false;
    }
    let (Some(ha), Some(hb)) = (site_host(a), site_host(b)) else {
        return false;
    };
    if strip_www(&ha) == strip_www(&hb) {
        return true;
    }
    if !allow_subdomains {
        return false;
    }
    match (registrable_domain(&ha), registrable_domain(&hb)) {
        (Some(da), Some(db)) => da == db,
        _ => false,
    }
}

/// The lowercase host without a trailing dot, for http(s) URLs only.
fn site_host(url: &Url) -> Option<String> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?.trim_end_matches('.');
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

fn strip_www(host: &str) -> &str {
    host.strip_prefix("www.").unwrap_or(host)
}

/// Resolves a link found on the page at `base` to an absolute http(s) URL
/// without fragment; `None` for other schemes (`javascript:`, `mailto:`,
/// `data:` …), empty or fragment-only links (they point at `base` itself),
/// links longer than [`MAX_LINK_LEN`] and anything that does not parse.
pub fn resolve_link(base: &Url, href: &str) -> Option<Url> {
    let href = href.trim_matches(|c: char| c.is_ascii_whitespace() || c.is_ascii_control());
    if href.is_empty() || href.starts_with('#') || href.len() > MAX_LINK_LEN {
        return None;
    }
    let mut url = base.join(href).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return None;
    }
    url.set_fragment(None);
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn norm(s: &str) -> String {
        normalize(&u(s)).to_string()
    }

    /// Fuzzing found it (fuzz/seeds/urlnorm/crash_stray_percent.txt): `%e%38`
    /// decoded `%38` to `8` and so spelled `%e8`, an escape of another byte;
    /// a second normalisation then gave `%E8`, another dedup key.
    /// Fuzzing found it (fuzz/seeds/urlnorm/crash_dotted_numeric_host.txt):
    /// dropping the dots of the name `0xa..` made it the IPv4 `0.0.0.10`,
    /// another site than the URL's own.
    #[test]
    fn dropping_trailing_dots_never_turns_a_name_into_an_ip() {
        for raw in ["https://0xa../x", "http://1.2.3.4../", "http://012../"] {
            let url = u(raw);
            let n = normalize(&url);
            assert!(matches!(n.host(), Some(Host::Domain(_))), "{raw} -> {n}");
            assert!(same_site(&url, &n, false), "{raw} -> {n}");
            assert_eq!(normalize(&n), n);
        }
        assert_eq!(norm("https://Example.COM../a"), "https://example.com/a");
    }

    #[test]
    fn decoding_never_joins_a_stray_percent_into_a_new_escape() {
        for (raw, want) in [
            ("/%e%38", "/%e%38"),
            ("/%%41%42", "/%%41B"),
            ("/%4%31", "/%4%31"),
            ("/%zz%41", "/%zzA"),
            ("/100%%7e", "/100%~"),
        ] {
            let once = normalize_percent_escapes(raw);
            assert_eq!(once, want, "{raw}");
            assert_eq!(normalize_percent_escapes(&once), once, "{raw}");
        }
        let url = u("http://example.com/Euser/%e%38:%a?x=%e%37");
        let n = normalize(&url);
        assert_eq!(n.as_str(), "http://example.com/Euser/%e%38:%a?x=%e%37");
        assert_eq!(normalize(&n), n);
    }

    #[test]
    fn normalize_applies_each_rule() {
        let cases = [
            // scheme and host lowercased, default port dropped, fragment dropped
            ("HTTPS://Example.COM:443/a#frag", "https://example.com/a"),
            ("http://example.com:80/", "http://example.com/"),
            // non-default port kept
            ("http://example.com:8080/", "http://example.com:8080/"),
            // empty path becomes /
            ("https://example.com", "https://example.com/"),
            // dot segments removed
            ("https://example.com/a/./b/../c", "https://example.com/a/c"),
            // trailing host dot dropped
            ("https://example.com./x", "https://example.com/x"),
            // duplicate slashes kept
            ("https://example.com/a//b", "https://example.com/a//b"),
            // lone ? dropped
            ("https://example.com/a?", "https://example.com/a"),
            // unreserved escapes decoded, others uppercased
            (
                "https://example.com/%7Euser/%41%2d",
                "https://example.com/~user/A-",
            ),
            (
                "https://example.com/a%2fb%c3%a9",
                "https://example.com/a%2Fb%C3%A9",
            ),
            (
                "https://example.com/?q=%7e%2f",
                "https://example.com/?q=~%2F",
            ),
            // malformed escapes untouched
            ("https://example.com/a%zz%4", "https://example.com/a%zz%4"),
            // tracking params dropped, order and others kept
            (
                "https://example.com/p?b=2&utm_source=x&a=1&gclid=9&UTM_Medium=y",
                "https://example.com/p?b=2&a=1",
            ),
            (
                "https://example.com/p?fbclid=1&mc_cid=2&mc_eid=3",
                "https://example.com/p",
            ),
            ("https://example.com/p?utm=1", "https://example.com/p?utm=1"),
            // trailing slash and www kept
            ("https://www.example.com/x/", "https://www.example.com/x/"),
            // IDN host to punycode
            ("https://bücher.de/", "https://xn--bcher-kva.de/"),
        ];
        for (input, want) in cases {
            assert_eq!(norm(input), want, "normalize({input})");
        }
    }

    #[test]
    fn normalize_is_idempotent() {
        for s in [
            "https://Ex.com:443/%7ea/b/?utm_x=1&q=%2f#f",
            "http://ex.com./a//b?",
            "https://ex.com/a%zz",
        ] {
            let once = normalize(&u(s));
            assert_eq!(normalize(&once), once, "{s}");
        }
    }

    #[test]
    fn dedup_key_merges_slash_port_case_and_fragment_variants() {
        let want = "https://a.com/x";
        for s in [
            "https://a.com/x/",
            "https://a.com/x",
            "https://A.com:443/x#frag",
        ] {
            assert_eq!(dedup_key(&u(s)), want, "{s}");
        }
        assert_eq!(dedup_key(&u("https://a.com/x/?q=1")), "https://a.com/x?q=1");
        assert_eq!(dedup_key(&u("https://a.com/")), "https://a.com/");
        assert_eq!(dedup_key(&u("https://a.com")), "https://a.com/");
    }

    #[test]
    fn dedup_key_keeps_www_and_scheme_apart() {
        assert_ne!(
            dedup_key(&u("https://www.a.com/x")),
            dedup_key(&u("https://a.com/x"))
        );
        assert_ne!(
            dedup_key(&u("http://a.com/x")),
            dedup_key(&u("https://a.com/x"))
        );
    }

    #[test]
    fn registrable_domain_uses_public_suffix_list() {
        let cases = [
            ("docs.example.co.uk", Some("example.co.uk")),
            ("example.co.uk", Some("example.co.uk")),
            ("a.b.example.com", Some("example.com")),
            ("Example.COM.", Some("example.com")),
            ("user.github.io", Some("user.github.io")),
            ("co.uk", None),
            ("127.0.0.1", None),
            ("::1", None),
            ("[::1]", None),
            ("", None),
        ];
        for (host, want) in cases {
            assert_eq!(registrable_domain(host).as_deref(), want, "{host}");
        }
    }

    #[test]
    fn same_site_without_subdomains_ignores_only_www() {
        let a = u("https://example.com/");
        assert!(same_site(&a, &u("https://www.example.com/x"), false));
        assert!(same_site(&a, &u("http://EXAMPLE.com/x"), false));
        assert!(same_site(&a, &u("https://example.com:443/x"), false));
        assert!(!same_site(&a, &u("https://docs.example.com/x"), false));
        assert!(!same_site(&a, &u("https://example.org/x"), false));
        assert!(!same_site(&a, &u("https://example.com:8443/x"), false));
        assert!(!same_site(&a, &u("ftp://example.com/x"), false));
    }

    #[test]
    fn same_site_with_subdomains_compares_registrable_domains() {
        let a = u("https://www.example.co.uk/");
        assert!(same_site(&a, &u("https://docs.example.co.uk/"), true));
        assert!(same_site(&a, &u("https://example.co.uk/"), true));
        assert!(!same_site(&a, &u("https://other.co.uk/"), true));
        // private suffixes separate users
        assert!(!same_site(
            &u("https://a.github.io/"),
            &u("https://b.github.io/"),
            true
        ));
        // IPs only match themselves
        let ip = u("http://127.0.0.1:8080/");
        assert!(same_site(&ip, &u("http://127.0.0.1:8080/x"), true));
        assert!(!same_site(&ip, &u("http://127.0.0.2:8080/x"), true));
        assert!(!same_site(&ip, &u("http://127.0.0.1:9090/x"), true));
    }

    #[test]
    fn resolve_link_resolves_relative_and_rejects_other_schemes() {
        let base = u("https://a.com/dir/page?x=1#top");
        let cases = [
            ("other", Some("https://a.com/dir/other")),
            ("  ../up#frag \n", Some("https://a.com/up")),
            ("/abs", Some("https://a.com/abs")),
            ("?y=2", Some("https://a.com/dir/page?y=2")),
            ("//b.com/x", Some("https://b.com/x")),
            ("HTTP://C.com/", Some("http://c.com/")),
            ("javascript:alert(1)", None),
            (" JavaScript:void(0)", None),
            ("mailto:a@b.com", None),
            ("tel:123", None),
            ("data:text/html,hi", None),
            ("ftp://a.com/f", None),
            ("#section", None),
            ("", None),
            ("   ", None),
            ("http://", None),
        ];
        for (href, want) in cases {
            assert_eq!(
                resolve_link(&base, href).map(String::from).as_deref(),
                want,
                "{href:?}"
            );
        }
        let long = format!("/{}", "a".repeat(MAX_LINK_LEN));
        assert_eq!(resolve_link(&base, &long), None);
    }
}
