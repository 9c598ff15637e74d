//! The network guard (SSRF protection): every URL, redirect and DNS answer
//! passes here, so nothing reaches a loopback, private, link-local or cloud
//! metadata address unless `WEBDATA_ALLOW_PRIVATE_NETWORKS` allows it.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;
use ipnet::IpNet;
use url::{Host, Url};

/// The environment variable (and flag) that opens private networks.
pub const ALLOW_PRIVATE_NETWORKS_ENV: &str = "WEBDATA_ALLOW_PRIVATE_NETWORKS";

/// Host names that are cloud metadata services whatever DNS says.
const METADATA_HOSTS: &[&str] = &[
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
];

/// Cloud metadata endpoints: opened only by `true` or an exact allow-list entry.
const METADATA_V4: &[Ipv4Addr] = &[
    Ipv4Addr::new(169, 254, 169, 254), // AWS, GCP, Azure, OpenStack, …
    Ipv4Addr::new(169, 254, 170, 2),   // AWS ECS task metadata
    Ipv4Addr::new(100, 100, 100, 200), // Alibaba Cloud
    Ipv4Addr::new(168, 63, 129, 16),   // Azure wire server (a public address)
];
const METADATA_V6: &[Ipv6Addr] = &[Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x254)];

/// Why an address is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockReason {
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10, 64:ff9b:1::/48.
    Private,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// 100.64/10 (carrier-grade NAT).
    SharedAddressSpace,
    /// 0.0.0.0/8, ::.
    Unspecified,
    /// 224/4, ff00::/8.
    Multicast,
    /// 240/4, 100::/64, 2001::/23 and other special-purpose ranges.
    Reserved,
    /// 255.255.255.255.
    Broadcast,
    /// 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18/15.
    Benchmarking,
    /// A cloud metadata endpoint such as 169.254.169.254.
    CloudMetadata,
}

impl BlockReason {
    fn noun(self) -> &'static str {
        match self {
            Self::Loopback => "a loopback address",
            Self::Private => "a private address",
            Self::LinkLocal => "a link-local address",
            Self::SharedAddressSpace => "a carrier-grade NAT address",
            Self::Unspecified => "an unspecified (this-network) address",
            Self::Multicast => "a multicast address",
            Self::Reserved => "a reserved address",
            Self::Broadcast => "the broadcast address",
            Self::Documentation => "a documentation address",
            Self::Benchmarking => "a benchmarking address",
            Self::CloudMetadata => "a cloud metadata address",
        }
    }
}

/// A refused address: the rule, and the IPv4 address an IPv6 form carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blocked {
    /// The rule that refuses the address.
    pub reason: BlockReason,
    /// The IPv4 address embedded in an IPv6 address (mapped, NAT64, 6to4, …).
    pub embedded: Option<Ipv4Addr>,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.embedded {
            Some(v4) => write!(f, "an IPv6 form of {v4}, {}", self.reason.noun()),
            None => f.write_str(self.reason.noun()),
        }
    }
}

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
    resolver: Arc<dyn Resolve>,
}

impl fmt::Debug for NetworkGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NetworkGuard")
            .field("allow", &self.allow)
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
            resolver: Arc::new(SystemResolver),
        })
    }

    /// A guard that allows nothing private (the production default).
    pub fn deny_private() -> Self {
        Self {
            allow: Arc::new(AllowList::Nothing),
            resolver: Arc::new(SystemResolver),
        }
    }

    /// Replaces the DNS resolver (tests use [`StaticResolver`]).
    pub fn with_resolver(mut self, resolver: Arc<dyn Resolve>) -> Self {
        self.resolver = resolver;
        self
    }

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
            Some(Host::Ipv4(ip)) => self.check_ip_for(IpAddr::V4(ip), &shown(), "points at"),
            Some(Host::Ipv6(ip)) => self.check_ip_for(IpAddr::V6(ip), &shown(), "points at"),
            Some(Host::Domain(name)) => {
                // The WHATWG parser turns every IPv4 notation into Host::Ipv4;
                // this catches anything that slips through as a "domain".
                if let Ok(ip) = normalize_host(name).parse::<IpAddr>() {
                    return self.check_ip_for(ip, &shown(), "points at");
                }
                self.check_host_name(name).map(|_| ())
            }
        }
    }

    /// Refuses `ip` unless it is public or inside the allow-list.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), GuardError> {
        self.check_ip_for(ip, "the address", "is")
    }

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
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        if let Some(loopback) = self.check_host_name(host)? {
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
        }
        Ok(addrs)
    }

    /// A `reqwest` DNS resolver that only ever hands out checked addresses,
    /// so there is no window between the check and the connection.
    pub fn reqwest_resolver(&self) -> Arc<GuardedDns> {
        Arc::new(GuardedDns(self.clone()))
    }

    /// For a refused-by-name host: an error, or (for an allowed localhost
    /// name) the loopback addresses to use. `Ok(None)` means "ask DNS".
    fn check_host_name(&self, host: &str) -> Result<Option<Vec<IpAddr>>, GuardError> {
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

    fn check_ip_for(&self, ip: IpAddr, target: &str, verb: &'static str) -> Result<(), GuardError> {
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

/// Lower-cases and drops trailing dots (`LOCALHOST.` is `localhost`).
fn normalize_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

fn is_mapped_or_compatible(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(_) => false,
        IpAddr::V6(v6) => {
            let s = v6.segments();
            s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff)
        }
    }
}

/// The rule that refuses `ip`, or `None` for a public address.
pub fn classify(ip: IpAddr) -> Option<Blocked> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4).map(|reason| Blocked {
            reason,
            embedded: None,
        }),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: u32, net: [u8; 4], len: u32) -> bool {
    let net = u32::from_be_bytes(net);
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    ip & mask == net & mask
}

fn classify_v4(ip: Ipv4Addr) -> Option<BlockReason> {
    use BlockReason::*;
    if METADATA_V4.contains(&ip) {
        return Some(CloudMetadata);
    }
    let n = u32::from(ip);
    let table: &[([u8; 4], u32, BlockReason)] = &[
        ([255, 255, 255, 255], 32, Broadcast),
        ([0, 0, 0, 0], 8, Unspecified),
        ([10, 0, 0, 0], 8, Private),
        ([100, 64, 0, 0], 10, SharedAddressSpace),
        ([127, 0, 0, 0], 8, Loopback),
        ([169, 254, 0, 0], 16, LinkLocal),
        ([172, 16, 0, 0], 12, Private),
        ([192, 0, 0, 0], 24, Reserved),
        ([192, 0, 2, 0], 24, Documentation),
        ([192, 88, 99, 0], 24, Reserved),
        ([192, 168, 0, 0], 16, Private),
        ([198, 18, 0, 0], 15, Benchmarking),
        ([198, 51, 100, 0], 24, Documentation),
        ([203, 0, 113, 0], 24, Documentation),
        ([224, 0, 0, 0], 4, Multicast),
        ([240, 0, 0, 0], 4, Reserved),
    ];
    table
        .iter()
        .find(|(net, len, _)| in_v4(n, *net, *len))
        .map(|(_, _, reason)| *reason)
}

fn in_v6(ip: u128, net: [u16; 8], len: u32) -> bool {
    let net = u128::from(Ipv6Addr::from(net));
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - len)
    };
    ip & mask == net & mask
}

fn classify_v6(ip: Ipv6Addr) -> Option<Blocked> {
    use BlockReason::*;
    let plain = |reason| {
        Some(Blocked {
            reason,
            embedded: None,
        })
    };
    let embedded = |v4: u32| {
        let v4 = Ipv4Addr::from(v4);
        classify_v4(v4).map(|reason| Blocked {
            reason,
            embedded: Some(v4),
        })
    };
    if METADATA_V6.contains(&ip) {
        return plain(CloudMetadata);
    }
    let n = u128::from(ip);
    let low32 = n as u32;
    if ip.is_unspecified() {
        return plain(Unspecified);
    }
    if ip.is_loopback() {
        return plain(Loopback);
    }
    // IPv6 forms that carry an IPv4 address: judge the IPv4 address.
    if in_v6(n, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96) // IPv4-mapped
        || in_v6(n, [0; 8], 96) // IPv4-compatible (deprecated)
        || in_v6(n, [0, 0, 0, 0, 0xffff, 0, 0, 0], 96) // SIIT IPv4-translated
        || in_v6(n, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96)
    // NAT64 well-known prefix
    {
        return embedded(low32);
    }
    if in_v6(n, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        return embedded((n >> 80) as u32); // 6to4: 2002:AABB:CCDD::/48
    }
    if in_v6(n, [0x2001, 0, 0, 0, 0, 0, 0, 0], 32) {
        return embedded(!low32); // Teredo: the client address, bit-inverted
    }
    let table: &[([u16; 8], u32, BlockReason)] = &[
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, Private), // local-use NAT64
        ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, Reserved),    // discard-only
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, Documentation),
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, Reserved), // IETF protocol assignments
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, Documentation),
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, Private),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, LinkLocal),
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, Private), // site-local (deprecated)
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, Multicast),
    ];
    table
        .iter()
        .find(|(net, len, _)| in_v6(n, *net, *len))
        .and_then(|(_, _, reason)| plain(*reason))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn deny() -> NetworkGuard {
        NetworkGuard::deny_private()
    }

    fn guard(setting: &str) -> NetworkGuard {
        NetworkGuard::from_setting(Some(setting)).unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn every_blocked_notation_is_refused() {
        let urls = [
            "http://127.0.0.1/",
            "http://127.1/",
            "http://127.0.1/",
            "http://2130706433/",
            "http://017700000001/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://0x7f.1/",
            "http://0x7F.0X0.0.01/",
            "http://127.0.0.1./",
            "http://127.0.0.1%2e/",
            "http://%31%32%37.0.0.1/",
            "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}/",
            "http://127.0.0.1:22/",
            "https://127.255.255.254/",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://api.localhost:8080/",
            "http://\u{24db}\u{24de}\u{24d2}\u{24d0}\u{24db}\u{24d7}\u{24de}\u{24e2}\u{24e3}/",
            "http://[::1]/",
            "http://[0:0:0:0:0:0:0:1]/",
            "http://[::]/",
            "http://0.0.0.0/",
            "http://0/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:7f00:1]/",
            "http://[::127.0.0.1]/",
            "http://[::ffff:0:a00:1]/",
            "http://[64:ff9b::10.0.0.1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[64:ff9b:1::1]/",
            "http://[2002:7f00:1::]/",
            "http://[2002:a00:1::1]/",
            "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
            "http://10.0.0.1/",
            "http://10.1/",
            "http://012.1/",
            "http://0x0a.0x00.0x00.0x01/",
            "http://172.16.0.1/",
            "http://172.31.255.255/",
            "http://192.168.1.1/",
            "http://3232235777/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[::ffff:169.254.169.254]/",
            "http://[fd00:ec2::254]/",
            "http://100.100.100.200/",
            "http://100.64.0.1/",
            "http://[fc00::1]/",
            "http://[fdff:ffff::1]/",
            "http://[fe80::1]/",
            "http://[fec0::1]/",
            "http://224.0.0.1/",
            "http://239.255.255.250/",
            "http://[ff02::1]/",
            "http://240.0.0.1/",
            "http://255.255.255.255/",
            "http://192.0.0.8/",
            "http://192.0.2.1/",
            "http://198.18.0.1/",
            "http://198.51.100.7/",
            "http://203.0.113.9/",
            "http://[2001:db8::1]/",
            "http://[100::1]/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://METADATA.google.internal./",
            "http://instance-data/",
        ];
        assert!(urls.len() >= 40);
        for url in urls {
            let result = deny().check_url(url);
            assert!(
                matches!(
                    result,
                    Err(GuardError::Address { .. } | GuardError::HostName { .. })
                ),
                "{url} was not refused by address or name: {result:?}"
            );
        }
    }

    #[test]
    fn ipv6_forms_are_judged_by_their_embedded_ipv4() {
        for (addr, v4) in [
            ("::ffff:10.0.0.1", "10.0.0.1"),
            ("::127.0.0.1", "127.0.0.1"),
            ("64:ff9b::a9fe:a9fe", "169.254.169.254"),
            ("2002:c0a8:101::1", "192.168.1.1"),
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1"),
        ] {
            let blocked = classify(ip(addr)).unwrap();
            assert_eq!(blocked.embedded, Some(v4.parse().unwrap()), "{addr}");
        }
        assert_eq!(classify(ip("64:ff9b::8.8.8.8")), None);
    }

    #[test]
    fn url_parser_normalises_ipv4_notations_to_one_address() {
        for url in [
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.1/",
            "http://127.1/",
            "http://127.0.0.1./",
            "http://%31%32%37.0.0.1/",
            "http://\u{ff11}\u{ff12}\u{ff17}.\u{ff10}.\u{ff10}.\u{ff11}/",
        ] {
            let parsed = Url::parse(url).unwrap();
            assert_eq!(
                parsed.host(),
                Some(Host::Ipv4(Ipv4Addr::LOCALHOST)),
                "{url}"
            );
        }
    }

    #[test]
    fn non_http_schemes_and_credentials_are_refused() {
        for url in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://example.com/",
            "javascript:alert(1)",
            "data:text/html,hi",
        ] {
            assert!(
                matches!(deny().check_url(url), Err(GuardError::Scheme { .. })),
                "{url}"
            );
        }
        for url in [
            "http://user:pass@example.com/",
            "http://user@example.com/",
            "http://example.com@127.0.0.1/",
        ] {
            assert!(matches!(
                deny().check_url(url),
                Err(GuardError::Credentials { .. })
            ));
        }
        assert!(matches!(
            deny().check_url("not a url"),
            Err(GuardError::InvalidUrl { .. })
        ));
    }

    #[test]
    fn public_addresses_and_names_are_allowed() {
        for url in [
            "http://example.com/",
            "https://93.184.216.34/path",
            "http://[2606:2800:220:1:248:1893:25c8:1946]/",
            "http://172.32.0.1/",
            "http://100.128.0.1/",
            "http://192.169.0.1/",
            "http://notlocalhost.example/",
        ] {
            assert!(deny().check_url(url).is_ok(), "{url} was refused");
        }
        for addr in [
            "93.184.216.34",
            "8.8.8.8",
            "1.1.1.1",
            "2001:4860:4860::8888",
            "::ffff:93.184.216.34",
            "2002:5db8:d822::1",
        ] {
            assert!(deny().check_ip(ip(addr)).is_ok(), "{addr} was refused");
        }
    }

    #[test]
    fn messages_name_the_address_and_the_rule() {
        let err = deny().check_url("http://10.0.0.5/x").unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("10.0.0.5") && msg.contains("a private address"),
            "{msg}"
        );
        let msg = deny()
            .check_url("http://[::ffff:127.0.0.1]/")
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("IPv6 form of 127.0.0.1, a loopback address"),
            "{msg}"
        );
        let msg = deny()
            .check_ip(ip("169.254.169.254"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("cloud metadata"), "{msg}");
    }

    #[test]
    fn allow_list_opens_only_the_listed_address() {
        let g = guard("127.0.0.2");
        assert!(g.check_ip(ip("127.0.0.2")).is_ok());
        assert!(g.check_url("http://127.0.0.2:8080/").is_ok());
        assert!(g.check_url("http://[::ffff:127.0.0.2]/").is_ok());
        assert!(g.check_ip(ip("127.0.0.1")).is_err());
        assert!(g.check_ip(ip("10.0.0.1")).is_err());
        assert!(g.check_url("http://localhost/").is_err());
    }

    #[test]
    fn allow_list_parses_cidrs_and_true() {
        let g = guard(" 10.0.0.0/8 , ::1, 192.168.1.0/24 ");
        assert!(g.check_ip(ip("10.200.0.1")).is_ok());
        assert!(g.check_ip(ip("::1")).is_ok());
        assert!(g.check_ip(ip("192.168.1.77")).is_ok());
        assert!(g.check_ip(ip("192.168.2.1")).is_err());
        assert!(g.check_ip(ip("127.0.0.1")).is_err());
        let all = guard("TRUE");
        assert!(all.check_url("http://10.0.0.1/").is_ok());
        assert!(all.check_url("http://169.254.169.254/").is_ok());
        assert!(all.check_url("http://metadata.google.internal/").is_ok());
        assert!(NetworkGuard::from_setting(Some(""))
            .unwrap()
            .check_ip(ip("10.0.0.1"))
            .is_err());
        assert!(NetworkGuard::from_setting(Some("10.0.0.0/33")).is_err());
        assert!(NetworkGuard::from_setting(Some("yes")).is_err());
    }

    #[test]
    fn metadata_addresses_need_an_exact_entry() {
        let wide = guard("169.254.0.0/16,100.64.0.0/10");
        assert!(wide.check_ip(ip("169.254.1.1")).is_ok());
        assert!(wide.check_ip(ip("169.254.169.254")).is_err());
        assert!(wide.check_ip(ip("100.100.100.200")).is_err());
        assert!(guard("169.254.169.254")
            .check_ip(ip("169.254.169.254"))
            .is_ok());
    }

    #[tokio::test]
    async fn host_resolving_to_a_private_address_is_refused() {
        let dns = StaticResolver::new()
            .with("intranet.test", [ip("10.0.0.5")])
            .with("public.test", [ip("93.184.216.34")])
            .with("mixed.test", [ip("93.184.216.34"), ip("127.0.0.1")]);
        let g = deny().with_resolver(Arc::new(dns));
        let err = g.resolve_checked("intranet.test", 80).await.unwrap_err();
        assert!(err
            .to_string()
            .contains("intranet.test resolves to 10.0.0.5, a private address"));
        let err = g.resolve_checked("mixed.test", 443).await.unwrap_err();
        assert!(err.to_string().contains("127.0.0.1"), "{err}");
        let ok = g.resolve_checked("public.test", 443).await.unwrap();
        assert_eq!(ok, vec!["93.184.216.34:443".parse().unwrap()]);
        let err = g.resolve_checked("unknown.test", 80).await.unwrap_err();
        assert!(err.is_dns_failure());
    }

    #[tokio::test]
    async fn localhost_is_never_asked_of_dns() {
        let dns = StaticResolver::new().with("localhost", [ip("93.184.216.34")]);
        let refused = deny().with_resolver(Arc::new(dns.clone()));
        assert!(refused.resolve_checked("localhost", 80).await.is_err());
        let allowed = guard("127.0.0.1").with_resolver(Arc::new(dns));
        let addrs = allowed.resolve_checked("app.localhost.", 80).await.unwrap();
        assert_eq!(addrs, vec!["127.0.0.1:80".parse().unwrap()]);
        assert!(allowed.check_url("http://localhost:3000/").is_ok());
    }

    #[tokio::test]
    async fn ip_literal_hosts_are_checked_without_dns() {
        let g = guard("127.0.0.1");
        assert!(g.resolve_checked("127.0.0.1", 80).await.is_ok());
        assert!(g.resolve_checked("[::1]", 80).await.is_err());
        assert!(g.resolve_checked("10.0.0.1", 80).await.is_err());
    }
}
