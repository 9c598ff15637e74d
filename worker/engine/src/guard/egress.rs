//! The operator's egress policy: `WEBDATA_EGRESS_DENY` refuses targets and
//! `WEBDATA_EGRESS_ALLOW` (when set) admits only the targets it lists, on
//! top of the private-network rules. Entries are host names
//! (`example.com`: that host; `*.example.com`: its subdomains;
//! `.example.com`: both) or addresses and CIDRs (`203.0.113.7`,
//! `198.51.100.0/24`, checked against every address a name resolves to).
//! Deny wins over allow. The guard applies it to every URL, redirect, DNS
//! answer, browser request and webhook target, and a refusal names the
//! entry (or the list) that refused it.

use std::net::IpAddr;

use ipnet::IpNet;

use super::error::GuardError;
use super::normalize_host;

/// The setting names, for messages.
pub const EGRESS_ALLOW_ENV: &str = "WEBDATA_EGRESS_ALLOW";
pub const EGRESS_DENY_ENV: &str = "WEBDATA_EGRESS_DENY";

#[derive(Debug, Clone, PartialEq)]
enum Rule {
    /// `example.com`
    Exact(String),
    /// `*.example.com` (subdomains only)
    Subdomains(String),
    /// `.example.com` (the host and its subdomains)
    Domain(String),
    Net(IpNet),
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    text: String,
    rule: Rule,
}

impl Entry {
    fn parse(setting: &'static str, text: &str) -> Result<Entry, EgressConfigError> {
        let bad = |why: &str| EgressConfigError {
            setting,
            entry: text.to_owned(),
            why: why.to_owned(),
        };
        let t = text.trim();
        let rule = if let Ok(net) = t.parse::<IpNet>() {
            Rule::Net(net)
        } else if let Ok(ip) = t
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            Rule::Net(IpNet::from(ip))
        } else {
            let (kind, name): (fn(String) -> Rule, &str) = if let Some(n) = t.strip_prefix("*.") {
                (Rule::Subdomains, n)
            } else if let Some(n) = t.strip_prefix('.') {
                (Rule::Domain, n)
            } else {
                (Rule::Exact, t)
            };
            let name = normalize_host(name);
            let ok = !name.is_empty()
                && name.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && label
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                });
            if !ok {
                return Err(bad(
                    "expected a host name (example.com, *.example.com, .example.com), an address or a CIDR",
                ));
            }
            kind(name)
        };
        Ok(Entry {
            text: t.to_owned(),
            rule,
        })
    }

    fn matches_host(&self, host: &str) -> bool {
        match &self.rule {
            Rule::Exact(n) => host == n,
            Rule::Subdomains(n) => host.len() > n.len() + 1 && host.ends_with(&format!(".{n}")),
            Rule::Domain(n) => host == n || host.ends_with(&format!(".{n}")),
            Rule::Net(_) => false,
        }
    }

    fn matches_ip(&self, ip: IpAddr) -> bool {
        match &self.rule {
            Rule::Net(net) => {
                net.contains(&ip)
                    || matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some_and(|v4| net.contains(&IpAddr::V4(v4))))
            }
            _ => false,
        }
    }
}

/// An egress setting could not be read.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{setting}: {entry:?}: {why}")]
pub struct EgressConfigError {
    pub setting: &'static str,
    pub entry: String,
    pub why: String,
}

/// The policy; empty (no rules) unless configured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Egress {
    allow: Option<Vec<Entry>>,
    deny: Vec<Entry>,
}

fn entries(setting: &'static str, value: Option<&str>) -> Result<Vec<Entry>, EgressConfigError> {
    value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| Entry::parse(setting, e))
        .collect()
}

impl Egress {
    /// Parses the two settings (comma-separated entries; unset or empty
    /// allow means no allow-list).
    pub fn parse(allow: Option<&str>, deny: Option<&str>) -> Result<Egress, EgressConfigError> {
        let allow = entries(EGRESS_ALLOW_ENV, allow)?;
        Ok(Egress {
            allow: (!allow.is_empty()).then_some(allow),
            deny: entries(EGRESS_DENY_ENV, deny)?,
        })
    }

    /// Whether any rule is set.
    pub fn is_empty(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty()
    }

    fn refused(target: &str, why: String) -> GuardError {
        GuardError::Egress {
            target: target.to_owned(),
            rule: why,
        }
    }

    /// A host name, before it is resolved. `Ok(true)` when an allow entry
    /// names it (its addresses then need no allow entry of their own).
    pub(super) fn check_host(&self, target: &str, host: &str) -> Result<bool, GuardError> {
        let host = normalize_host(host);
        if let Some(e) = self.deny.iter().find(|e| e.matches_host(&host)) {
            return Err(Self::refused(
                target,
                format!("{EGRESS_DENY_ENV} lists `{}`", e.text),
            ));
        }
        let Some(allow) = &self.allow else {
            return Ok(false);
        };
        if allow.iter().any(|e| e.matches_host(&host)) {
            return Ok(true);
        }
        if allow.iter().any(|e| matches!(e.rule, Rule::Net(_))) {
            // Decided by its addresses, when it is resolved.
            return Ok(false);
        }
        Err(Self::refused(
            target,
            format!("{EGRESS_ALLOW_ENV} does not list {host}"),
        ))
    }

    /// An address: an IP literal, or one a name resolved to (`named_ok`:
    /// the name itself is on the allow-list).
    pub(super) fn check_ip(
        &self,
        target: &str,
        ip: IpAddr,
        named_ok: bool,
    ) -> Result<(), GuardError> {
        if let Some(e) = self.deny.iter().find(|e| e.matches_ip(ip)) {
            return Err(Self::refused(
                target,
                format!("{ip} is in `{}` of {EGRESS_DENY_ENV}", e.text),
            ));
        }
        match &self.allow {
            Some(allow) if !named_ok && !allow.iter().any(|e| e.matches_ip(ip)) => Err(
                Self::refused(target, format!("{EGRESS_ALLOW_ENV} does not list {ip}")),
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn entries_parse_and_bad_ones_are_named() {
        let e = Egress::parse(
            Some("example.com, *.cdn.example, .docs.org, 198.51.100.0/24"),
            Some("203.0.113.7"),
        )
        .expect("parse");
        assert!(!e.is_empty());
        let err = Egress::parse(Some("exa mple.com"), None).expect_err("bad");
        assert_eq!(err.setting, EGRESS_ALLOW_ENV);
        assert!(err.to_string().contains("exa mple.com"), "{err}");
        assert!(Egress::parse(None, Some("")).expect("empty").is_empty());
    }

    #[test]
    fn deny_refuses_by_name_and_address_naming_the_entry() {
        let e = Egress::parse(None, Some(".ads.example, 203.0.113.0/24")).expect("parse");
        let m = e
            .check_host("u", "x.ads.example")
            .expect_err("denied")
            .to_string();
        assert!(
            m.contains("WEBDATA_EGRESS_DENY lists `.ads.example`"),
            "{m}"
        );
        assert!(e.check_host("u", "ads.example").is_err());
        assert_eq!(e.check_host("u", "example.org").ok(), Some(false));
        let m = e
            .check_ip("u", ip("203.0.113.9"), false)
            .expect_err("denied")
            .to_string();
        assert!(m.contains("`203.0.113.0/24`"), "{m}");
        assert!(
            e.check_ip("u", ip("::ffff:203.0.113.9"), false).is_err(),
            "v4-mapped"
        );
        assert!(e.check_ip("u", ip("198.51.100.1"), false).is_ok());
    }

    #[test]
    fn allow_admits_only_what_it_lists_and_deny_wins() {
        let e = Egress::parse(
            Some("example.com, *.example.org, 198.51.100.0/24"),
            Some("bad.example.org"),
        )
        .expect("parse");
        assert_eq!(e.check_host("u", "EXAMPLE.com.").ok(), Some(true));
        assert_eq!(e.check_host("u", "a.example.org").ok(), Some(true));
        assert!(e.check_host("u", "bad.example.org").is_err(), "deny wins");
        // Not named: decided by its addresses.
        assert_eq!(e.check_host("u", "other.net").ok(), Some(false));
        assert!(e.check_ip("u", ip("198.51.100.4"), false).is_ok());
        let m = e
            .check_ip("u", ip("192.0.2.1"), false)
            .expect_err("not listed")
            .to_string();
        assert!(
            m.contains("WEBDATA_EGRESS_ALLOW does not list 192.0.2.1"),
            "{m}"
        );
        assert!(
            e.check_ip("u", ip("192.0.2.1"), true).is_ok(),
            "a listed name's address"
        );
        // With names only, an unlisted name is refused before DNS.
        let names = Egress::parse(Some("example.com"), None).expect("parse");
        let m = names
            .check_host("u", "example.org")
            .expect_err("refused")
            .to_string();
        assert!(m.contains("does not list example.org"), "{m}");
        assert!(
            names.check_host("u", "sub.example.com").is_err(),
            "exact name only"
        );
    }
}
