//! Tests of the network guard: refused notations, allow-lists, DNS answers.

use super::*;
use std::net::Ipv4Addr;
use url::{Host, Url};

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
