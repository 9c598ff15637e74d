//! URL, host name and address checks against the allow-list.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

use super::cidr::{classify, is_mapped_or_compatible, BlockReason, Blocked};
use super::error::GuardError;
use super::{normalize_host, AllowList, NetworkGuard};

/// Host names that are cloud metadata services whatever DNS says.
const METADATA_HOSTS: &[&str] = &[
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
];

impl NetworkGuard {
    /// Parses `url` and refuses bad schemes, credentials, missing hosts,
    /// refused host names and refused IP literals (host names are checked
    /// again when they are resolved).
    pub fn check_url(&self, url: &str) -> Result<Url, GuardError> {
        let parsed = Url::parse(url).map_err(|e| GuardError::InvalidUrl {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        self.check_parsed(&parsed)?;
        Ok(parsed)
    }

    /// [`check_url`](Self::check_url) for an already parsed URL (redirect targets).
    pub fn check_parsed(&self, url: &Url) -> Result<(), GuardError> {
        let shown = || url.as_str().to_owned();
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(GuardError::Scheme {
                url: shown(),
                scheme: scheme.to_owned(),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(GuardError::Credentials { url: shown() });
        }
        match url.host() {
            None => Err(GuardError::MissingHost { url: shown() }),
            Some(Host::Ipv4(ip)) => self.check_literal(IpAddr::V4(ip), &shown()),
            Some(Host::Ipv6(ip)) => self.check_literal(IpAddr::V6(ip), &shown()),
            Some(Host::Domain(name)) => {
                // The WHATWG parser turns every IPv4 notation into Host::Ipv4;
                // this catches anything that slips through as a "domain".
                if let Ok(ip) = normalize_host(name).parse::<IpAddr>() {
                    return self.check_literal(ip, &shown());
                }
                self.check_host_name(name)?;
                self.egress.check_host(&shown(), name).map(|_| ())
            }
        }
    }

    /// An IP literal in a URL: the private-network rules, then the egress policy.
    fn check_literal(&self, ip: IpAddr, target: &str) -> Result<(), GuardError> {
        self.check_ip_for(ip, target, "points at")?;
        self.egress.check_ip(target, ip, false)
    }

    /// Refuses `ip` unless it is public or inside the allow-list.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), GuardError> {
        self.check_ip_for(ip, "the address", "is")
    }

    /// For a refused-by-name host: an error, or (for an allowed localhost
    /// name) the loopback addresses to use. `Ok(None)` means "ask DNS".
    pub(super) fn check_host_name(&self, host: &str) -> Result<Option<Vec<IpAddr>>, GuardError> {
        let name = normalize_host(host);
        let refused = |what| GuardError::HostName {
            host: host.to_owned(),
            what,
        };
        if name == "localhost" || name.ends_with(".localhost") {
            let loopback: Vec<IpAddr> = [Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()]
                .into_iter()
                .filter(|ip| self.allows(*ip, false))
                .collect();
            return if loopback.is_empty() {
                Err(refused("a local host name"))
            } else {
                Ok(Some(loopback))
            };
        }
        if METADATA_HOSTS.contains(&name.as_str()) && !matches!(*self.allow, AllowList::Everything)
        {
            return Err(refused("a cloud metadata host name"));
        }
        Ok(None)
    }

    pub(super) fn check_ip_for(
        &self,
        ip: IpAddr,
        target: &str,
        verb: &'static str,
    ) -> Result<(), GuardError> {
        match classify(ip) {
            Some(blocked) if !self.allows_blocked(ip, blocked) => Err(GuardError::Address {
                target: target.to_owned(),
                verb,
                ip,
                blocked,
            }),
            _ => Ok(()),
        }
    }

    fn allows_blocked(&self, ip: IpAddr, blocked: Blocked) -> bool {
        let exact = blocked.reason == BlockReason::CloudMetadata;
        self.allows(ip, exact)
            || blocked
                .embedded
                .is_some_and(|v4| is_mapped_or_compatible(ip) && self.allows(v4.into(), exact))
    }

    fn allows(&self, ip: IpAddr, exact_only: bool) -> bool {
        match &*self.allow {
            AllowList::Nothing => false,
            AllowList::Everything => true,
            AllowList::Nets(nets) => nets.iter().any(|net| {
                net.contains(&ip) && (!exact_only || net.prefix_len() == net.max_prefix_len())
            }),
        }
    }
}
