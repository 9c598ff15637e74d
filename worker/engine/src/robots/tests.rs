//! Tests of robots.txt parsing and matching (RFC 9309 and Google's examples).

use super::cache::cache_key;
use super::parse::MAX_LINE_BYTES;
use super::*;
use url::Url;

fn allowed(robots: &str, agent: &str, path: &str) -> bool {
    Robots::parse_for(robots.as_bytes(), agent).is_allowed(path)
}

#[test]
fn line_syntax_accepts_missing_colon_only_between_two_words() {
    assert!(!allowed(
        "user-agent: FooBot\ndisallow: /\n",
        "FooBot",
        "/x"
    ));
    assert!(allowed("foo: FooBot\nbar: /\n", "FooBot", "/x"));
    assert!(!allowed("user-agent FooBot\ndisallow /\n", "FooBot", "/x"));
    assert!(allowed(
        "user-agent FooBot\ndisallow / extra\n",
        "FooBot",
        "/x"
    ));
}

#[test]
fn groups_merge_and_rules_before_any_user_agent_are_ignored() {
    let robots = "allow: /foo/bar/\n\nuser-agent: FooBot\ndisallow: /\nallow: /x/\n\
                  user-agent: BarBot\ndisallow: /\nallow: /y/\n\n\nallow: /w/\n\
                  user-agent: BazBot\n\nuser-agent: FooBot\nallow: /z/\ndisallow: /\n";
    assert!(allowed(robots, "FooBot", "/x/b"));
    assert!(allowed(robots, "FooBot", "/z/d"));
    assert!(!allowed(robots, "FooBot", "/y/c"));
    assert!(allowed(robots, "BarBot", "/y/c"));
    assert!(allowed(robots, "BarBot", "/w/a"));
    assert!(!allowed(robots, "BarBot", "/z/d"));
    assert!(allowed(robots, "BazBot", "/z/d"));
    assert!(!allowed(robots, "FooBot", "/foo/bar/"));
}

#[test]
fn sitemap_and_unknown_lines_do_not_close_a_user_agent_list() {
    let robots =
        "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n";
    assert!(!allowed(robots, "FooBot", "/"));
    assert!(!allowed(robots, "BarBot", "/"));
    let robots = "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n";
    assert!(!allowed(robots, "FooBot", "/"));
    assert!(!allowed(robots, "BarBot", "/"));
}

#[test]
fn keys_and_user_agents_are_case_insensitive_but_paths_are_not() {
    let robots = "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n";
    assert!(allowed(robots, "FooBot", "/x/y"));
    assert!(!allowed(robots, "FooBot", "/a/b"));
    let robots = "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n";
    assert!(allowed(robots, "foo", "/x/y"));
    assert!(!allowed(robots, "Foo", "/a/b"));
    assert!(!allowed(
        "user-agent: FooBot\ndisallow: /x/\n",
        "FooBot",
        "/x/"
    ));
    assert!(allowed(
        "user-agent: FooBot\ndisallow: /X/\n",
        "FooBot",
        "/x/"
    ));
    assert!(!allowed(
        "User-agent: webdata/1.0\nDisallow: /\n",
        "webdata",
        "/a"
    ));
}

#[test]
fn specific_group_replaces_the_global_one() {
    let robots = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n";
    assert!(!allowed(robots, "FooBot", "/x/y"));
    assert!(allowed(robots, "BarBot", "/x/y"));
    let robots = "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n";
    assert!(allowed(robots, "FooBot", "/x/page"));
    assert!(!allowed(robots, "FooBot", "/y/page"));
    // A group for us with no effective rule still replaces `*`…
    let robots = "user-agent: FooBot\ndisallow:\nuser-agent: *\ndisallow: /\n";
    assert!(allowed(robots, "FooBot", "/a"));
    // …while a blank line does not end a user-agent list.
    let robots = "user-agent: FooBot\n\nuser-agent: *\ndisallow: /\n";
    assert!(!allowed(robots, "FooBot", "/a"));
    let robots = "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\n";
    assert!(allowed(robots, "QuxBot", "/x/y"));
    assert!(allowed("", "FooBot", "/"));
}

#[test]
fn longest_match_wins_and_allow_wins_ties() {
    let ua = "FooBot";
    let group = |rules: &str| format!("user-agent: FooBot\n{rules}");
    assert!(allowed(
        &group("disallow: /x/page.html\nallow: /x/page.html\n"),
        ua,
        "/x/page.html"
    ));
    assert!(allowed(
        &group("allow: /x/page.html\ndisallow: /x/page.html\n"),
        ua,
        "/x/page.html"
    ));
    assert!(!allowed(
        &group("allow: /page\ndisallow: /*.html\n"),
        ua,
        "/page.html"
    ));
    assert!(allowed(
        &group("allow: /page\ndisallow: /*.html\n"),
        ua,
        "/page"
    ));
    assert!(allowed(
        &group("allow: /x/page.\ndisallow: /*.html\n"),
        ua,
        "/x/page.html"
    ));
    assert!(!allowed(
        &group("allow: /x/page.\ndisallow: /*.html\n"),
        ua,
        "/x/y.html"
    ));
    assert!(allowed(&group("allow: /\ndisallow: /\n"), ua, "/"));
    assert!(allowed(&group("disallow: /\nallow: /\n"), ua, "/"));
    assert!(allowed(
        &group("allow: /folder\ndisallow: /folder\n"),
        ua,
        "/folder/page"
    ));
    assert!(!allowed(
        &group("disallow: /folder\nallow: /folde\n"),
        ua,
        "/folder/page"
    ));
}

#[test]
fn allow_root_with_end_anchor() {
    let robots = "user-agent: FooBot\ndisallow: /\nallow: /$\n";
    assert!(allowed(robots, "FooBot", "/"));
    assert!(allowed(robots, "FooBot", ""));
    assert!(!allowed(robots, "FooBot", "/page.html"));
}

#[test]
fn empty_disallow_allows_everything() {
    assert!(allowed("user-agent: *\ndisallow:\n", "FooBot", "/anything"));
    assert!(!allowed(
        "user-agent: *\nallow:\ndisallow: /\n",
        "FooBot",
        "/anything"
    ));
}

#[test]
fn wildcards_and_end_anchors_follow_google_documentation() {
    let check = |rule: &str, yes: &[&str], no: &[&str]| {
        let robots = format!("user-agent: FooBot\ndisallow: /\nallow: {rule}\n");
        for path in yes {
            assert!(
                allowed(&robots, "FooBot", path),
                "{rule} should allow {path}"
            );
        }
        for path in no {
            assert!(
                !allowed(&robots, "FooBot", path),
                "{rule} should not allow {path}"
            );
        }
    };
    let fish_yes = [
        "/fish",
        "/fish.html",
        "/fish/salmon.html",
        "/fishheads",
        "/fishheads/yummy.html",
        "/fish.html?id=anything",
    ];
    let fish_no = ["/Fish.asp", "/catfish", "/?id=fish", "/bar"];
    check("/fish", &fish_yes, &fish_no);
    check("/fish*", &fish_yes, &fish_no);
    check(
        "/fish/",
        &["/fish/", "/fish/?id=anything", "/fish/salmon.htm"],
        &["/fish", "/fish.html", "/Fish/Salmon.asp"],
    );
    check(
        "/*.php",
        &[
            "/filename.php",
            "/folder/filename.php",
            "/folder/filename.php?parameters",
            "/folder/any.php.file.html",
            "/filename.php/",
            "/index?f=filename.php/",
        ],
        &["/php/", "/index?php", "/windows.PHP"],
    );
    check(
        "/*.php$",
        &["/filename.php", "/folder/filename.php"],
        &[
            "/filename.php?parameters",
            "/filename.php/",
            "/filename.php5",
            "/php/",
            "/windows.PHP",
        ],
    );
    check(
        "/fish*.php",
        &["/fish.php", "/fishheads/catfish.php?parameters"],
        &["/Fish.PHP"],
    );
}

#[test]
fn special_characters_and_fragments() {
    let robots = "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n";
    assert!(!allowed(robots, "FooBot", "/foo/bar/quz"));
    assert!(allowed(robots, "FooBot", "/foo/quz"));
    assert!(allowed(robots, "FooBot", "/foo//quz"));
    assert!(allowed(robots, "FooBot", "/foo/bax/quz"));
    let robots = "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n";
    assert!(!allowed(robots, "FooBot", "/foo/bar"));
    assert!(allowed(robots, "FooBot", "/foo/bar/qux"));
    assert!(allowed(robots, "FooBot", "/foo/bar/"));
    assert!(allowed(robots, "FooBot", "/foo/bar/baz"));
    let robots = "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n";
    assert!(allowed(robots, "FooBot", "/foo/bar"));
    assert!(!allowed(robots, "FooBot", "/foo/quz"));
    // The fragment is not part of the path: `/a#x` is `/a`.
    assert!(!allowed("User-agent: *\nDisallow: /a$\n", "FooBot", "/a#x"));
    assert!(allowed("User-agent: *\nDisallow: /a$\n", "FooBot", "/a?x"));
}

#[test]
fn percent_encoding_is_normalised_on_both_sides() {
    let robots =
        "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n";
    assert!(allowed(
        robots,
        "FooBot",
        "/foo/bar?qux=taz&baz=http://foo.bar?tar&par"
    ));
    let robots = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n";
    assert!(allowed(robots, "FooBot", "/foo/bar/%E3%83%84"));
    assert!(allowed(robots, "FooBot", "/foo/bar/ツ"));
    let robots = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%e3%83%84\n";
    assert!(allowed(robots, "FooBot", "/foo/bar/%E3%83%84"));
    // RFC 9309: escaped unreserved characters compare unescaped; reserved ones do not.
    let robots = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n";
    assert!(allowed(robots, "FooBot", "/foo/bar/baz"));
    let robots = "User-agent: *\nDisallow: /a%2Fb\n";
    assert!(!allowed(robots, "x", "/a%2fb"));
    assert!(allowed(robots, "x", "/a/b"));
}

#[test]
fn index_html_allows_its_directory() {
    let robots = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n";
    assert!(allowed(robots, "foobot", "/allowed-slash/"));
    assert!(!allowed(robots, "foobot", "/allowed-slash/index.htm"));
    assert!(allowed(robots, "foobot", "/allowed-slash/index.html"));
    assert!(!allowed(robots, "foobot", "/anyother-url"));
}

#[test]
fn byte_order_marks_are_skipped_even_partial_ones() {
    let tail = "User-agent: FooBot\nDisallow: /\n";
    for bom in [&b"\xEF\xBB\xBF"[..], b"\xEF\xBB", b"\xEF"] {
        let body = [bom, tail.as_bytes()].concat();
        assert!(!Robots::parse_for(&body, "FooBot").is_allowed("/x"));
    }
    let broken = [&b"\xEF\x11\xBF"[..], tail.as_bytes()].concat();
    assert!(Robots::parse_for(&broken, "FooBot").is_allowed("/x"));
}

#[test]
fn line_endings_of_every_kind_split_lines() {
    for sep in ["\n", "\r", "\r\n"] {
        let robots = ["User-agent: FooBot", "Disallow: /x", "Allow: /x/y"].join(sep);
        assert!(!allowed(&robots, "FooBot", "/x/a"), "{sep:?}");
        assert!(allowed(&robots, "FooBot", "/x/y"), "{sep:?}");
    }
}

#[test]
fn overlong_lines_are_cut_like_google() {
    let prefix = "disallow: ";
    let mut long = String::from("/x/");
    while long.len() < MAX_LINE_BYTES + 1 - prefix.len() {
        long.push('a');
    }
    let robots = format!("user-agent: FooBot\n{prefix}{long}/qux\n");
    assert!(allowed(&robots, "FooBot", "/fux"));
    assert!(!allowed(&robots, "FooBot", &format!("{long}/fux")));
}

#[test]
fn crawl_delay_and_sitemaps() {
    let robots = Robots::parse_for(
        b"Sitemap: https://example.com/a.xml\nUser-agent: *\nCrawl-delay: 9\n\
          User-agent: webdata\nCrawl-delay: 2.5\nDisallow: /private\n\
          Sitemap: /relative.xml\nsitemap: http://example.com/b.xml\n",
        "webdata",
    );
    assert_eq!(robots.crawl_delay(), Some(Duration::from_millis(2500)));
    assert_eq!(
        robots.sitemaps(),
        ["https://example.com/a.xml", "http://example.com/b.xml"]
    );
    let global = Robots::parse_for(b"User-agent: *\nCrawl-delay: 9\n", "webdata");
    assert_eq!(global.crawl_delay(), Some(Duration::from_secs(9)));
    let bad = Robots::parse_for(b"User-agent: *\nCrawl-delay: -1\n", "webdata");
    assert_eq!(bad.crawl_delay(), None);
}

#[test]
fn robots_txt_itself_is_always_allowed_and_sources_decide_the_rest() {
    assert!(allowed("User-agent: *\nDisallow: /\n", "x", "/robots.txt"));
    assert!(Robots::allow_all().is_allowed("/a"));
    assert!(!Robots::disallow_all().is_allowed("/a"));
    assert_eq!(Robots::disallow_all().source(), RobotsSource::Unreachable);
}

#[test]
fn oversized_files_are_cut_at_500_kib() {
    let mut body = b"User-agent: *\n".to_vec();
    body.resize(MAX_ROBOTS_BYTES, b'\n');
    body.extend_from_slice(b"Disallow: /\n");
    assert!(Robots::parse(&body).is_allowed("/a"));
}

#[test]
fn robots_url_and_cache_key_use_the_origin() {
    let url = Url::parse("https://Example.com:8443/a/b?c#d").unwrap();
    assert_eq!(
        robots_url(&url).unwrap().as_str(),
        "https://example.com:8443/robots.txt"
    );
    assert_eq!(cache_key(&url).unwrap(), "https://example.com:8443");
    let url = Url::parse("http://example.com/x").unwrap();
    assert_eq!(cache_key(&url).unwrap(), "http://example.com:80");
}
