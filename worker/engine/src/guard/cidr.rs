//! The address policy: which IPv4 and IPv6 ranges are refused and why
//! (loopback, private, metadata …), IPv6 forms judged by their IPv4 address.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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

pub(super) fn is_mapped_or_compatible(ip: IpAddr) -> bool {
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
