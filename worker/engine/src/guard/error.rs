//! Why the guard refused something, and why its setting could not be read.

use std::net::IpAddr;

use super::cidr::Blocked;
use super::ALLOW_PRIVATE_NETWORKS_ENV;

/// Why a URL, host or address is refused (API code `blocked_url`), or why
/// its host could not be resolved (API code `fetch_failed`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum GuardError {
    /// The text is not a URL at all.
    #[error("{url:?} is not a valid URL: {reason}")]
    InvalidUrl { url: String, reason: String },
    /// Only http and https are fetched.
    #[error("{url} uses the {scheme}: scheme; only http and https URLs can be fetched")]
    Scheme { url: String, scheme: String },
    /// `user:pass@` in a URL.
    #[error("{url} contains a username or password; credentials in URLs are not allowed")]
    Credentials { url: String },
    /// A URL without a host.
    #[error("{url} has no host")]
    MissingHost { url: String },
    /// The URL's IP literal, or an address its host resolves to, is refused.
    #[error(
        "{target} {verb} {ip}, {blocked}; private, local and metadata addresses are not fetched"
    )]
    Address {
        target: String,
        verb: &'static str,
        ip: IpAddr,
        blocked: Blocked,
    },
    /// A host name that is refused by name (`localhost`, metadata names).
    #[error("{host} is {what}; private, local and metadata hosts are not fetched")]
    HostName { host: String, what: &'static str },
    /// The operator's egress policy refuses the target (`rule` says which entry or list).
    #[error("{target} is refused by this deployment's egress policy: {rule}")]
    Egress { target: String, rule: String },
    /// DNS failed (not a refusal).
    #[error("could not resolve {host}: {message}")]
    Resolve { host: String, message: String },
}

impl GuardError {
    /// True when DNS failed rather than the guard refusing (maps to `fetch_failed`).
    pub fn is_dns_failure(&self) -> bool {
        matches!(self, Self::Resolve { .. })
    }
}

/// `WEBDATA_ALLOW_PRIVATE_NETWORKS` could not be parsed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{ALLOW_PRIVATE_NETWORKS_ENV}: {entry:?} is not an IP address or CIDR (expected a comma-separated list such as \"127.0.0.1,10.0.0.0/8,::1\", or \"true\")")]
pub struct GuardConfigError {
    /// The entry that failed to parse.
    pub entry: String,
}
