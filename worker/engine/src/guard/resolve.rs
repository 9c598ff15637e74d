//! DNS resolvers the guard asks: the system's, a fixed map for tests, and
//! `WEBDATA_RESOLVE` overrides.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};

use futures::future::BoxFuture;

use super::normalize_host;

/// Resolves host names to socket addresses; injectable so tests never need DNS.
pub trait Resolve: Send + Sync {
    /// Every address `host` resolves to, with `port` set.
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'_, io::Result<Vec<SocketAddr>>>;
}

/// The operating system's resolver (`tokio::net::lookup_host`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'_, io::Result<Vec<SocketAddr>>> {
        let host = host.to_owned();
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), port))
                .await?
                .collect())
        })
    }
}

/// A fixed host → addresses map, for tests; unknown hosts fail to resolve.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    hosts: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the answer for `host`.
    pub fn with(mut self, host: &str, ips: impl IntoIterator<Item = IpAddr>) -> Self {
        self.hosts
            .insert(normalize_host(host), ips.into_iter().collect());
        self
    }
}

impl Resolve for StaticResolver {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'_, io::Result<Vec<SocketAddr>>> {
        let answer = match self.hosts.get(&normalize_host(host)) {
            Some(ips) => Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect()),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("no static DNS entry for {host}"),
            )),
        };
        Box::pin(async move { answer })
    }
}

/// Fixed answers for some names (`WEBDATA_RESOLVE`, like curl's
/// `--resolve`), the system resolver for the rest. The guard still checks
/// every address, so a fixed answer cannot reach a blocked network.
#[derive(Debug, Clone, Default)]
pub struct OverrideResolver {
    fixed: StaticResolver,
    names: std::collections::HashSet<String>,
}

impl OverrideResolver {
    /// Parses `host=ip[,host=ip…]` (a host may repeat for several addresses).
    pub fn parse(setting: &str) -> Result<Self, String> {
        let mut out = OverrideResolver::default();
        let mut answers: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for item in setting.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (host, ip) = item
                .split_once('=')
                .ok_or_else(|| format!("`{item}` is not `host=ip`"))?;
            let ip: IpAddr = ip
                .trim()
                .trim_matches(|c| c == '[' || c == ']')
                .parse()
                .map_err(|_| format!("`{ip}` in `{item}` is not an IP address"))?;
            let host = normalize_host(host.trim());
            if host.is_empty() {
                return Err(format!("`{item}` has no host"));
            }
            answers.entry(host).or_default().push(ip);
        }
        for (host, ips) in answers {
            out.fixed = out.fixed.with(&host, ips);
            out.names.insert(host);
        }
        Ok(out)
    }

    /// True when no name is fixed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

impl Resolve for OverrideResolver {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'_, io::Result<Vec<SocketAddr>>> {
        if self.names.contains(&normalize_host(host)) {
            self.fixed.resolve(host, port)
        } else {
            SystemResolver.resolve(host, port)
        }
    }
}
