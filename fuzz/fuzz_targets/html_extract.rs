//! HTML → main content, markdown, text, cleaned HTML, links, metadata and
//! chunks (`webdata_content::extract`), with the options a scrape can ask
//! for. The first byte picks the options; the rest is the page.
#![no_main]

use libfuzzer_sys::fuzz_target;
use url::Url;
use webdata_content::{extract, ContentOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, page)) = data.split_first() else {
        return;
    };
    let html = String::from_utf8_lossy(page);
    // CSS selectors switch to the html5ever tree; keep them to a fixed few
    // (selector parsing is not what is fuzzed here).
    let (include_tags, exclude_tags) = match flags >> 5 {
        1 => (vec!["article".to_string(), "main p".to_string()], vec![]),
        2 => (vec![], vec!["nav".to_string(), ".ad, #footer".to_string()]),
        3 => (vec!["div > p".to_string()], vec!["script".to_string()]),
        _ => (vec![], vec![]),
    };
    let opts = ContentOptions {
        only_main_content: flags & 1 == 0,
        include_tags,
        exclude_tags,
        want_markdown: true,
        want_html: flags & 2 != 0,
        want_text: flags & 4 != 0,
        want_links: flags & 8 != 0,
        want_json_ld: flags & 8 != 0,
        chunk_size: (flags & 16 != 0).then_some(64),
    };
    let page_url = Url::parse("https://example.com/blog/post.html").expect("static URL");
    let out = extract(&html, &page_url, &opts).expect("the fixed selectors are valid");

    assert!(out.markdown.is_some(), "markdown was asked for");
    if let Some(links) = &out.links {
        for l in links {
            let u = Url::parse(l).expect("links are absolute URLs");
            assert!(matches!(u.scheme(), "http" | "https"), "{l}");
            assert!(u.fragment().is_none(), "{l}");
        }
    }
    if let Some(chunks) = &out.chunks {
        for (i, c) in chunks.iter().enumerate() {
            assert_eq!(c.index, i as i64);
            assert!(!c.text.trim().is_empty(), "empty chunk {i}");
        }
    }
});
