//! The `domain` input: a domain or URL, IDNs accepted, reduced to the host
//! a brand belongs to (path ignored, a leading `www.` dropped).

use url::{Host, Url};

/// What a brand lookup is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The brand's key and its `domain`: the host in Unicode, lower case,
    /// without `www.`, with `:port` when the port is not the default.
    pub domain: String,
    /// The home page to read: the given scheme and host, path `/`.
    pub home: Url,
    /// True when the input named a scheme; otherwise https is tried first
    /// and plain http when https cannot connect.
    pub explicit_scheme: bool,
}

/// Why an input is not a domain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidDomain(pub String);

fn bad(msg: impl Into<String>) -> InvalidDomain {
    InvalidDomain(msg.into())
}

/// Parses `input` (e.g. `acme.com`, `https://www.acme.com/pricing`,
/// `bücher.de`, `xn--bcher-kva.de`).
pub fn parse(input: &str) -> Result<Target, InvalidDomain> {
    let s = input.trim();
    if s.is_empty() {
        return Err(bad(
            "`domain` is required: a domain such as `acme.com` or a URL",
        ));
    }
    if s.len() > 2048 {
        return Err(bad("`domain` is longer than 2048 characters"));
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("`domain` must not contain spaces"));
    }
    let explicit_scheme = s.contains("://");
    let candidate = if explicit_scheme {
        s.to_string()
    } else {
        format!("https://{s}")
    };
    let mut url = Url::parse(&candidate)
        .map_err(|e| bad(format!("`domain` is not a domain or URL ({e}): {s:?}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad(format!(
            "`domain` must be a domain or an http(s) URL, not a {}: URL",
            url.scheme()
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("`domain` must not contain a user name or password"));
    }
    let host = match url.host() {
        Some(Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if !d.contains('.') || d.split('.').any(|l| l.is_empty()) {
                return Err(bad(format!(
                    "`domain` must be a full domain name such as `acme.com` (got {d:?})"
                )));
            }
            d
        }
        Some(Host::Ipv4(ip)) => ip.to_string(),
        Some(Host::Ipv6(ip)) => format!("[{ip}]"),
        None => return Err(bad("`domain` has no host")),
    };
    let bare = host
        .strip_prefix("www.")
        .filter(|h| h.contains('.'))
        .unwrap_or(&host);
    let (unicode, errors) = idna::domain_to_unicode(bare);
    let mut domain = if errors.is_ok() {
        unicode
    } else {
        bare.to_string()
    };
    if let Some(port) = url.port() {
        domain.push_str(&format!(":{port}"));
    }
    url.set_path("/");
    url.set_query(None);
    url.set_fragment(None);
    Ok(Target {
        domain,
        home: url,
        explicit_scheme,
    })
}

/// The brand key of a page URL's host (used by the scrape `brand` format).
pub fn domain_of(url: &Url) -> Option<String> {
    parse(url.as_str()).ok().map(|t| t.domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> String {
        parse(s)
            .map(|t| t.domain)
            .unwrap_or_else(|e| format!("ERR {e}"))
    }

    #[test]
    fn path_query_and_www_are_dropped() {
        assert_eq!(d("acme.com"), "acme.com");
        assert_eq!(d("www.acme.com"), "acme.com");
        assert_eq!(d("https://www.Acme.com/pricing?x=1#top"), "acme.com");
        assert_eq!(d("http://acme.com:8080/a"), "acme.com:8080");
        assert_eq!(
            d("https://acme.com:443/"),
            "acme.com",
            "default port dropped"
        );
        assert_eq!(d("shop.acme.com"), "shop.acme.com", "other subdomains stay");
        assert_eq!(d("acme.com."), "acme.com");
        let t = parse("https://www.acme.com/pricing").map(|t| t.home.to_string());
        assert_eq!(
            t.as_deref(),
            Ok("https://www.acme.com/"),
            "the given host is read"
        );
    }

    #[test]
    fn idns_are_answered_in_unicode_whichever_form_came_in() {
        assert_eq!(d("bücher.de"), "bücher.de");
        assert_eq!(d("xn--bcher-kva.de"), "bücher.de");
        assert_eq!(d("https://www.BÜCHER.de/x"), "bücher.de");
        let t = parse("bücher.de").map(|t| t.home.host_str().map(str::to_string));
        assert_eq!(
            t,
            Ok(Some("xn--bcher-kva.de".to_string())),
            "fetched as punycode"
        );
    }

    #[test]
    fn scheme_defaults_to_https() {
        let t = parse("acme.com").ok();
        assert_eq!(t.as_ref().map(|t| t.home.scheme()), Some("https"));
        assert_eq!(t.map(|t| t.explicit_scheme), Some(false));
        assert_eq!(
            parse("http://acme.com").map(|t| t.explicit_scheme),
            Ok(true)
        );
    }

    #[test]
    fn ip_hosts_are_kept() {
        assert_eq!(d("http://127.0.0.2:4000/"), "127.0.0.2:4000");
    }

    #[test]
    fn invalid_inputs_are_refused() {
        for bad in [
            "",
            "   ",
            "acme",
            "ftp://acme.com",
            "http://",
            "acme .com",
            "a..com",
            "mailto:x@acme.com",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
