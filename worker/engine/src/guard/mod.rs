//! The network guard (SSRF protection): every URL, redirect and DNS answer
//! passes here, so nothing reaches a loopback, private, link-local or cloud
//! metadata address unless `WEBDATA_ALLOW_PRIVATE_NETWORKS` allows it.

mod check;
mod cidr;
mod dns;
mod egress;
mod error;
mod resolve;

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use ipnet::IpNet;

pub use cidr::{classify, BlockReason, Blocked};
pub use dns::GuardedDns;
pub use egress::{Egress, EgressConfigError, EGRESS_ALLOW_ENV, EGRESS_DENY_ENV};
pub use error::{GuardConfigError, GuardError};
pub use resolve::{OverrideResolver, Resolve, StaticResolver, SystemResolver};

/// The environment variable (and flag) that opens private networks.
pub const ALLOW_PRIVATE_NETWORKS_ENV: &str = "WEBDATA_ALLOW_PRIVATE_NETWORKS";

#[derive(Debug, Clone)]
enum AllowList {
    Nothing,
    Everything,
    Nets(Vec<IpNet>),
}

/// The SSRF guard; cheap to clone. Build it once from configuration.
#[derive(Clone)]
pub struct NetworkGuard {
    allow: Arc<AllowList>,
    egress: Arc<Egress>,
    resolver: Arc<dyn Resolve>,
}

impl fmt::Debug for NetworkGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetworkGuard")
            .field("allow", &self.allow)
            .field("egress", &self.egress)
            .finish_non_exhaustive()
    }
}

impl Default for NetworkGuard {
    fn default() -> Self {
        Self::deny_private()
    }
}

impl NetworkGuard {
    /// Parses `WEBDATA_ALLOW_PRIVATE_NETWORKS`: unset or empty allows nothing
    /// private, `true` allows everything, otherwise comma-separated CIDRs
    /// (a bare address is a /32 or /128). Cloud metadata addresses are opened
    /// only by `true` or an entry naming that exact address.
    pub fn from_setting(setting: Option<&str>) -> Result<Self, GuardConfigError> {
        let setting = setting.map(str::trim).unwrap_or("");
        let allow = if setting.is_empty() || setting.eq_ignore_ascii_case("false") {
            AllowList::Nothing
        } else if setting.eq_ignore_ascii_case("true") {
            AllowList::Everything
        } else {
            let mut nets = Vec::new();
            for entry in setting.split(',').map(str::trim).filter(|e| !e.is_empty()) {
                let net = entry
                    .parse::<IpNet>()
                    .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| GuardConfigError {
                        entry: entry.to_owned(),
                    })?;
                nets.push(net);
            }
            AllowList::Nets(nets)
        };
        Ok(Self {
            allow: Arc::new(allow),
            egress: Arc::default(),
            resolver: Arc::new(SystemResolver),
        })
    }

    /// A guard that allows nothing private (the production default).
    pub fn deny_private() -> Self {
        Self {
            allow: Arc::new(AllowList::Nothing),
            egress: Arc::default(),
            resolver: Arc::new(SystemResolver),
        }
    }

    /// Adds the operator's egress policy (`WEBDATA_EGRESS_ALLOW`,
    /// `WEBDATA_EGRESS_DENY`; see [`Egress`]).
    pub fn with_egress(mut self, egress: Egress) -> Self {
        self.egress = Arc::new(egress);
        self
    }

    /// [`with_egress`](Self::with_egress) from the two settings' text.
    pub fn with_egress_settings(
        self,
        allow: Option<&str>,
        deny: Option<&str>,
    ) -> Result<Self, EgressConfigError> {
        Ok(self.with_egress(Egress::parse(allow, deny)?))
    }

    /// Replaces the DNS resolver (tests use [`StaticResolver`]).
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolve>) -> Self {
        self.resolver = resolver;
        self
    }
}

/// Lower-cases and drops trailing dots (`LOCALHOST.` is `localhost`).
fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests;
