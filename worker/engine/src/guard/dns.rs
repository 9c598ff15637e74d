//! Checked DNS resolution: every answer is checked before a connection may
//! use it, and the `reqwest` resolver that hands out only those answers.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use super::error::GuardError;
use super::NetworkGuard;

impl NetworkGuard {
    /// Resolves `host` and refuses it if ANY answer is refused; the returned
    /// addresses are the only ones a connection may use.
    pub async fn resolve_checked(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, GuardError> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            self.check_ip(ip)?;
            self.egress.check_ip(host, ip, false)?;
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        let named_ok = self.egress.check_host(host, host)?;
        if let Some(loopback) = self.check_host_name(host)? {
            for ip in &loopback {
                self.egress.check_ip(host, *ip, named_ok)?;
            }
            // RFC 6761: localhost names are loopback, never asked of DNS.
            return Ok(loopback
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect());
        }
        let addrs = self
            .resolver
            .resolve(host, port)
            .await
            .map_err(|e| GuardError::Resolve {
                host: host.to_owned(),
                message: e.to_string(),
            })?;
        if addrs.is_empty() {
            return Err(GuardError::Resolve {
                host: host.to_owned(),
                message: "no addresses".to_owned(),
            });
        }
        for addr in &addrs {
            self.check_ip_for(addr.ip(), host, "resolves to")?;
            self.egress.check_ip(host, addr.ip(), named_ok)?;
        }
        Ok(addrs)
    }

    /// A `reqwest` DNS resolver that only ever hands out checked addresses,
    /// so there is no window between the check and the connection.
    pub fn reqwest_resolver(&self) -> Arc<GuardedDns> {
        Arc::new(GuardedDns(self.clone()))
    }
}

/// A `reqwest` DNS resolver that hands out only addresses the guard checked.
pub struct GuardedDns(NetworkGuard);

impl reqwest::dns::Resolve for GuardedDns {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: reqwest fills in the URL's (or the scheme's) port.
            let addrs = guard
                .resolve_checked(&host, 0)
                .await
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}
