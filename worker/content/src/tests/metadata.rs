//! Metadata fields, JSON-LD, and the non-HTML helper.

use super::*;
use crate::text_document;

const EN: &str = include_str!("../../tests/fixtures/content/article_en.html");

#[test]
fn metadata_fields_come_from_head_and_json_ld() {
    let opts = ContentOptions {
        want_json_ld: true,
        ..ContentOptions::default()
    };
    let m = run(EN, &opts).metadata;
    assert_eq!(
        m.title.as_deref(),
        Some("How Rivers Shape Valleys | Example Blog")
    );
    assert_eq!(
        m.description.as_deref(),
        Some("A field guide to erosion, meanders and floodplains.")
    );
    assert_eq!(m.language.as_deref(), Some("en-US"));
    assert_eq!(
        m.canonical_url.as_deref(),
        Some("https://example.com/blog/rivers")
    );
    assert_eq!(m.published_at.as_deref(), Some("2024-03-05T08:00:00Z"));
    assert_eq!(m.author.as_deref(), Some("Dana Brook"));
    assert_eq!(
        m.og_image.as_deref(),
        Some("https://example.com/images/river.jpg")
    );
    assert_eq!(m.status_code, None, "the caller fills the status");
    let ld = m.json_ld.unwrap_or_default();
    assert_eq!(ld.len(), 1, "the invalid block is skipped");
    let graph = ld[0]["@graph"].as_array().map(Vec::len);
    assert_eq!(graph, Some(2), "@graph is kept as given");
}

#[test]
fn json_ld_is_only_kept_on_request() {
    let m = run(EN, &ContentOptions::default()).metadata;
    assert_eq!(m.json_ld, None);
}

#[test]
fn metadata_fallbacks_apply_in_order() {
    // (page, title, language, publishedAt, author)
    type Case = (
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
    );
    let cases: &[Case] = &[
        (
            "<head><meta property=\"og:title\" content=\"OG\"><meta http-equiv=\"content-language\" content=\"fr\"></head>",
            Some("OG"),
            Some("fr"),
            None,
            None,
        ),
        (
            "<script type=\"application/ld+json\">[{\"@type\":\"NewsArticle\",\"datePublished\":\"2023-01-02\",\
             \"author\":[{\"name\":\"A\"},{\"name\":\"B\"}]}]</script><title> Spaced \n Title </title>",
            Some("Spaced Title"),
            None,
            Some("2023-01-02"),
            Some("A, B"),
        ),
        (
            "<article><p>x</p><time datetime=\"2022-12-31\">yesterday</time></article>\
             <a rel=\"author\" href=\"/me\">Kim</a>",
            None,
            None,
            Some("2022-12-31"),
            Some("Kim"),
        ),
        (
            "<time datetime=\"2020-01-01\">outside any article</time><svg><title>icon</title></svg>",
            None,
            None,
            None,
            None,
        ),
    ];
    for (page, title, lang, published, author) in cases {
        let m = run(page, &ContentOptions::default()).metadata;
        assert_eq!(m.title.as_deref(), *title, "{page}");
        assert_eq!(m.language.as_deref(), *lang, "{page}");
        assert_eq!(m.published_at.as_deref(), *published, "{page}");
        assert_eq!(m.author.as_deref(), *author, "{page}");
    }
}

#[test]
fn non_html_bodies_become_markdown() {
    let json = text_document("{\"a\":[1,2]}", "application/json; charset=utf-8");
    assert_eq!(
        json.markdown.as_deref(),
        Some("```json\n{\n  \"a\": [\n    1,\n    2\n  ]\n}\n```")
    );
    let md = text_document("# Readme\n\nHello *there*.\n", "text/markdown");
    assert_eq!(md.markdown.as_deref(), Some("# Readme\n\nHello *there*."));
    assert_eq!(md.metadata.title.as_deref(), Some("Readme"));
    let xml = text_document("<a>```</a>", "application/xml");
    assert_eq!(xml.markdown.as_deref(), Some("````xml\n<a>```</a>\n````"));
    let plain = text_document("just words here", "text/plain");
    assert_eq!(plain.markdown.as_deref(), Some("just words here"));
    assert_eq!(plain.quality_signals.main_words, 3);
}
