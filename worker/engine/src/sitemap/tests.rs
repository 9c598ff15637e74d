//! Tests of sitemap parsing (XML, text, gzip, limits) and discovery.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use flate2::write::GzEncoder;
use flate2::Compression;
use url::Url;

use super::*;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn urlset(locs: &[&str]) -> String {
    let body: String = locs
        .iter()
        .map(|l| format!("<url><loc>{l}</loc></url>\n"))
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
{body}</urlset>"#
    )
}

fn index(locs: &[&str]) -> String {
    let body: String = locs
        .iter()
        .map(|l| format!("<sitemap><loc>{l}</loc></sitemap>"))
        .collect();
    format!(
        r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{body}</sitemapindex>"#
    )
}

fn page_locs(sitemap: &Sitemap) -> Vec<&str> {
    match sitemap {
        Sitemap::UrlSet { urls, .. } => urls.iter().map(|u| u.loc.as_str()).collect(),
        Sitemap::Index { .. } => panic!("expected a urlset, got {sitemap:?}"),
    }
}

#[test]
fn urlset_with_namespaces_extensions_cdata_and_entities() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- generated -->
<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <sm:url>
<sm:loc>
  https://a.com/one?x=1&amp;y=2
</sm:loc>
<sm:lastmod>2024-05-01</sm:lastmod>
<image:image><image:loc>https://a.com/img.png</image:loc><image:title>Pic</image:title></image:image>
  </sm:url>
  <sm:url>
<sm:loc><![CDATA[https://a.com/two?a=1&b=2]]></sm:loc>
<news:news><news:title>Tom &amp; Jerry &#x2014; &quot;live&quot;</news:title></news:news>
  </sm:url>
  <sm:url><sm:loc>https://a.com/three?a=1&b=2</sm:loc></sm:url>
  <sm:url><sm:lastmod>2024-01-01</sm:lastmod></sm:url>
  <sm:url><sm:loc/></sm:url>
</sm:urlset>"#;
    let parsed = parse_sitemap(xml.as_bytes()).unwrap();
    let Sitemap::UrlSet { urls, truncated } = parsed else {
        panic!("not a urlset")
    };
    assert!(!truncated);
    assert_eq!(
        urls,
        vec![
            SitemapUrl {
                loc: "https://a.com/one?x=1&y=2".into(),
                lastmod: Some("2024-05-01".into()),
                title: Some("Pic".into()),
            },
            SitemapUrl {
                loc: "https://a.com/two?a=1&b=2".into(),
                lastmod: None,
                title: Some("Tom & Jerry \u{2014} \"live\"".into()),
            },
            SitemapUrl {
                loc: "https://a.com/three?a=1&b=2".into(),
                lastmod: None,
                title: None,
            },
        ]
    );
}

#[test]
fn bom_and_whitespace_before_the_xml_declaration_are_accepted() {
    let xml = format!("\u{feff}\n  {}", urlset(&["https://a.com/x"]));
    assert_eq!(
        page_locs(&parse_sitemap(xml.as_bytes()).unwrap()),
        ["https://a.com/x"]
    );
}

#[test]
fn runaway_text_without_markup_is_cut() {
    let head = urlset(&["https://a.com/1"]).replace("</urlset>", "<url><loc>");
    let mut xml = head.into_bytes();
    xml.resize(3 * MAX_MARKUP_GAP, b'a');
    xml.extend_from_slice(b"</loc></url></urlset>");
    let parsed = parse_sitemap(&xml).unwrap();
    assert_eq!(page_locs(&parsed), ["https://a.com/1"]);
    assert!(parsed.truncated());
    let mut tag = b"<".to_vec();
    tag.resize(2 * MAX_MARKUP_GAP, b'a');
    let err = parse_sitemap(&tag).unwrap_err();
    assert!(matches!(err, SitemapError::Read(_)), "{err}");
}

#[test]
fn sitemap_index_lists_child_sitemaps() {
    let xml = index(&["https://a.com/s1.xml", "https://a.com/s2.xml.gz"]);
    let parsed = parse_sitemap(xml.as_bytes()).unwrap();
    assert_eq!(
        parsed,
        Sitemap::Index {
            sitemaps: vec![
                "https://a.com/s1.xml".into(),
                "https://a.com/s2.xml.gz".into()
            ],
            truncated: false,
        }
    );
}

#[test]
fn gzip_urlset_and_gzip_index_are_decompressed() {
    let set = gzip(urlset(&["https://a.com/x"]).as_bytes());
    assert_eq!(
        page_locs(&parse_sitemap(&set).unwrap()),
        ["https://a.com/x"]
    );
    let idx = gzip(index(&["https://a.com/s.xml"]).as_bytes());
    assert!(
        matches!(parse_sitemap(&idx).unwrap(), Sitemap::Index { sitemaps, .. } if sitemaps.len() == 1)
    );
}

#[test]
fn corrupt_gzip_is_an_error() {
    let mut bytes = gzip(urlset(&["https://a.com/x"]).as_bytes());
    bytes.truncate(12);
    bytes.extend_from_slice(&[0xff; 40]);
    assert!(matches!(parse_sitemap(&bytes), Err(SitemapError::Read(_))));
}

#[test]
fn text_sitemap_skips_blank_comment_and_non_url_lines() {
    let text = "\u{feff}https://a.com/1\r\n\n   \n# comment\nhttps://a.com/2  \nnot a url\nftp://a.com/f\nhttps://a.com/3";
    assert_eq!(
        page_locs(&parse_sitemap(text.as_bytes()).unwrap()),
        ["https://a.com/1", "https://a.com/2", "https://a.com/3"]
    );
    let long = format!(
        "https://a.com/{}\nhttps://a.com/ok\n",
        "x".repeat(MAX_FIELD_BYTES)
    );
    assert_eq!(
        page_locs(&parse_sitemap(long.as_bytes()).unwrap()),
        ["https://a.com/ok"]
    );
}

#[test]
fn broken_or_foreign_documents_are_errors() {
    let cases: &[(&[u8], &str)] = &[
        (b"", "empty"),
        (b"  \n\t ", "empty"),
        (
            b"<urlset><url><loc>https://a.com/</lo></url></urlset>",
            "malformed",
        ),
        (
            b"<urlset><url><loc>https://a.com/</loc></url><!-- unclosed",
            "malformed",
        ),
        (b"<urlset></url></urlset>", "malformed"),
        (
            b"<urlset><url><loc a=\"1>https://a.com/</loc></url></urlset>",
            "malformed",
        ),
        (b"<?xml version=\"1.0\"?><!-- only a comment -->", "no root"),
        (
            b"<!DOCTYPE html><html><body>Not found</body></html>",
            "root element is <html>",
        ),
        (b"<rss><channel></channel></rss>", "root element is <rss>"),
        (b"\x00\x01\x02binary", "neither XML"),
    ];
    for (input, want) in cases {
        let err = parse_sitemap(input).unwrap_err().to_string();
        assert!(
            err.contains(want),
            "{:?}: {err}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn document_cut_short_keeps_complete_entries_and_says_truncated() {
    let xml = "<urlset><url><loc>https://a.com/1</loc></url><url><loc>https://a.com/2";
    let parsed = parse_sitemap(xml.as_bytes()).unwrap();
    assert_eq!(page_locs(&parsed), ["https://a.com/1"]);
    assert!(parsed.truncated());
}

#[test]
fn over_long_loc_is_dropped() {
    let long = format!("https://a.com/{}", "x".repeat(MAX_FIELD_BYTES));
    let xml = urlset(&[&long, "https://a.com/ok"]);
    assert_eq!(
        page_locs(&parse_sitemap(xml.as_bytes()).unwrap()),
        ["https://a.com/ok"]
    );
}

#[test]
fn file_with_60000_urls_is_truncated_at_50000() {
    let locs: Vec<String> = (0..60_000)
        .map(|i| format!("https://a.com/p/{i}"))
        .collect();
    let refs: Vec<&str> = locs.iter().map(String::as_str).collect();
    let xml = urlset(&refs);
    let parsed = parse_sitemap(xml.as_bytes()).unwrap();
    assert!(parsed.truncated());
    let got = page_locs(&parsed);
    assert_eq!(got.len(), MAX_ENTRIES_PER_FILE);
    assert_eq!(got[MAX_ENTRIES_PER_FILE - 1], "https://a.com/p/49999");

    let text = locs.join("\n");
    let parsed = parse_sitemap(text.as_bytes()).unwrap();
    assert!(parsed.truncated());
    assert_eq!(page_locs(&parsed).len(), MAX_ENTRIES_PER_FILE);

    let exact = urlset(&refs[..MAX_ENTRIES_PER_FILE]);
    assert!(!parse_sitemap(exact.as_bytes()).unwrap().truncated());
}

/// 200 MiB after decompression, as 200 concatenated gzip members of 1 MiB.
fn bomb(head: &[u8], fill: u8) -> Vec<u8> {
    let mut first = head.to_vec();
    first.resize(1 << 20, fill);
    let mut out = gzip(&first);
    let member = gzip(&vec![fill; 1 << 20]);
    for _ in 1..200 {
        out.extend_from_slice(&member);
    }
    out
}

#[test]
fn gzip_bomb_of_zeros_is_rejected() {
    let err = parse_sitemap(&bomb(b"", 0)).unwrap_err();
    assert!(matches!(err, SitemapError::Unrecognised), "{err}");
}

#[test]
fn gzip_bomb_inside_a_urlset_stops_at_the_cap() {
    let head = urlset(&["https://a.com/1"]).replace("</urlset>", "");
    let parsed = parse_sitemap(&bomb(head.as_bytes(), b' ')).unwrap();
    assert!(parsed.truncated());
    assert_eq!(page_locs(&parsed), ["https://a.com/1"]);
}

#[test]
fn gzip_bomb_as_text_stops_at_the_cap() {
    let parsed = parse_sitemap(&bomb(b"https://a.com/1\n", b'x')).unwrap();
    assert!(parsed.truncated());
    assert_eq!(page_locs(&parsed), ["https://a.com/1"]);
}

/// A site of sitemap files served from memory, recording every fetch.
#[derive(Clone, Default)]
struct Site {
    files: Arc<HashMap<String, Vec<u8>>>,
    calls: Arc<Mutex<Vec<String>>>,
}

impl Site {
    fn new(files: &[(&str, Vec<u8>)]) -> Self {
        Site {
            files: Arc::new(
                files
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.clone()))
                    .collect(),
            ),
            calls: Arc::default(),
        }
    }

    fn fetcher(&self) -> impl Fn(Url) -> futures::future::Ready<Option<Vec<u8>>> + Send + Sync {
        let site = self.clone();
        move |url: Url| {
            site.calls.lock().unwrap().push(url.to_string());
            futures::future::ready(site.files.get(url.as_str()).cloned())
        }
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

fn start(urls: &[&str]) -> Vec<Url> {
    urls.iter().map(|u| Url::parse(u).unwrap()).collect()
}

fn found(d: &SitemapDiscovery) -> Vec<&str> {
    d.urls.iter().map(|u| u.loc.as_str()).collect()
}

#[tokio::test]
async fn discover_follows_index_to_children_and_dedups() {
    let site = Site::new(&[
        (
            "https://a.com/sitemap.xml",
            index(&[
                "https://a.com/s1.xml",
                "/s2.xml.gz",
                "https://a.com/s1.xml#dup",
            ])
            .into_bytes(),
        ),
        (
            "https://a.com/s1.xml",
            urlset(&["https://a.com/x", "https://a.com/y/"]).into_bytes(),
        ),
        (
            "https://a.com/s2.xml.gz",
            gzip(
                urlset(&[
                    "https://a.com/y",
                    "https://A.com/z#f",
                    "/rel",
                    "mailto:x@a.com",
                ])
                .as_bytes(),
            ),
        ),
    ]);
    let d = discover(
        start(&["https://a.com/sitemap.xml"]),
        &SitemapFetchPolicy::default(),
        site.fetcher(),
    )
    .await;
    assert_eq!(
        found(&d),
        [
            "https://a.com/x",
            "https://a.com/y/",
            "https://a.com/z",
            "https://a.com/rel"
        ]
    );
    assert_eq!(d.files_fetched, 3);
    assert_eq!(site.calls().len(), 3);
    assert!(!d.truncated);
}

#[tokio::test]
async fn discover_ends_index_cycles_fetching_each_file_once() {
    let site = Site::new(&[
        (
            "https://a.com/a.xml",
            index(&["https://a.com/b.xml"]).into_bytes(),
        ),
        (
            "https://a.com/b.xml",
            index(&["https://a.com/a.xml", "https://a.com/b.xml"]).into_bytes(),
        ),
    ]);
    let policy = SitemapFetchPolicy {
        max_depth: 100,
        ..Default::default()
    };
    let d = discover(start(&["https://a.com/a.xml"]), &policy, site.fetcher()).await;
    assert!(d.urls.is_empty());
    assert_eq!(site.calls(), ["https://a.com/a.xml", "https://a.com/b.xml"]);
}

#[tokio::test]
async fn discover_honours_max_files_counting_fetch_calls() {
    let children: Vec<String> = (0..20).map(|i| format!("https://a.com/s{i}.xml")).collect();
    let refs: Vec<&str> = children.iter().map(String::as_str).collect();
    let mut files = vec![("https://a.com/index.xml", index(&refs).into_bytes())];
    let bodies: Vec<(String, Vec<u8>)> = children
        .iter()
        .map(|c| (c.clone(), urlset(&[&format!("{c}/page")]).into_bytes()))
        .collect();
    files.extend(bodies.iter().map(|(k, v)| (k.as_str(), v.clone())));
    let site = Site::new(&files);
    let policy = SitemapFetchPolicy {
        max_files: 5,
        ..Default::default()
    };
    let d = discover(
        start(&["https://a.com/index.xml", "https://a.com/missing.xml"]),
        &policy,
        site.fetcher(),
    )
    .await;
    assert_eq!(site.calls().len(), 5);
    assert_eq!(d.files_fetched, 5);
    assert_eq!(d.urls.len(), 3);
    assert!(d.truncated);
}

#[tokio::test]
async fn discover_honours_max_depth() {
    let site = Site::new(&[
        (
            "https://a.com/0.xml",
            index(&["https://a.com/1.xml"]).into_bytes(),
        ),
        (
            "https://a.com/1.xml",
            index(&["https://a.com/2.xml"]).into_bytes(),
        ),
        (
            "https://a.com/2.xml",
            urlset(&["https://a.com/deep"]).into_bytes(),
        ),
    ]);
    let policy = SitemapFetchPolicy {
        max_depth: 1,
        ..Default::default()
    };
    let d = discover(start(&["https://a.com/0.xml"]), &policy, site.fetcher()).await;
    assert_eq!(site.calls(), ["https://a.com/0.xml", "https://a.com/1.xml"]);
    assert!(d.urls.is_empty());
    assert!(d.truncated);

    let policy = SitemapFetchPolicy {
        max_depth: 2,
        ..Default::default()
    };
    let d = discover(start(&["https://a.com/0.xml"]), &policy, site.fetcher()).await;
    assert_eq!(found(&d), ["https://a.com/deep"]);
    assert!(!d.truncated);
}

#[tokio::test]
async fn discover_stops_at_max_urls_and_skips_failures() {
    let site = Site::new(&[
        ("https://a.com/bad.xml", b"<html></html>".to_vec()),
        (
            "https://a.com/s.xml",
            urlset(&["https://a.com/1", "https://a.com/2", "https://a.com/3"]).into_bytes(),
        ),
        (
            "https://a.com/t.xml",
            urlset(&["https://a.com/4"]).into_bytes(),
        ),
    ]);
    let policy = SitemapFetchPolicy {
        max_urls: 2,
        ..Default::default()
    };
    let urls = start(&[
        "https://a.com/gone.xml",
        "https://a.com/bad.xml",
        "https://a.com/s.xml",
        "https://a.com/t.xml",
    ]);
    let d = discover(urls, &policy, site.fetcher()).await;
    assert_eq!(found(&d), ["https://a.com/1", "https://a.com/2"]);
    assert!(d.truncated);
    assert!(
        d.files_fetched >= 3 && d.files_fetched <= 4,
        "{}",
        d.files_fetched
    );
}

#[test]
fn discover_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let site = Site::default();
    let policy = SitemapFetchPolicy::default();
    let fut = discover(Vec::new(), &policy, site.fetcher());
    assert_send(&fut);
}

#[test]
fn default_sitemap_urls_puts_robots_first_then_origin_sitemap() {
    let site = Url::parse("https://a.com/docs/page?x=1").unwrap();
    let robots = [
        " https://a.com/sm-index.xml ".to_string(),
        "/relative.xml".to_string(),
        "ftp://a.com/s.xml".to_string(),
        "https://A.com:443/sitemap.xml".to_string(),
        "https://cdn.a.com/s.xml#x".to_string(),
    ];
    let got: Vec<String> = default_sitemap_urls(&site, &robots)
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(
        got,
        [
            "https://a.com/sm-index.xml",
            "https://a.com/sitemap.xml",
            "https://cdn.a.com/s.xml"
        ]
    );
    let got: Vec<String> = default_sitemap_urls(&site, &[])
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(got, ["https://a.com/sitemap.xml"]);
}
