//! Table-driven tests of the content pipeline on small HTML fixtures.

mod chunking;
mod hostile;
mod main_content;
mod markdown;
mod metadata;
mod quality;

use url::Url;

use super::{extract, ContentOptions, Extracted};

/// The page URL every fixture is "fetched" from.
pub fn page_url() -> Url {
    Url::parse("https://example.com/blog/post.html").expect("static URL")
}

/// Extracts with `opts`, panicking on error (tests only).
pub fn run(html: &str, opts: &ContentOptions) -> Extracted {
    extract(html, &page_url(), opts).expect("extract")
}

/// The main content's chunks (1,500 tokens): `headingPath` of the first
/// and the chunks' text.
pub fn chunks_main(html: &str) -> (Vec<String>, String) {
    let opts = ContentOptions {
        chunk_size: Some(1500),
        ..ContentOptions::default()
    };
    let chunks = run(html, &opts).chunks.unwrap_or_default();
    let path = chunks
        .first()
        .map(|c| c.heading_path.clone())
        .unwrap_or_default();
    let text = chunks
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    (path, text)
}

/// The main content's markdown and text.
pub fn md_and_text_main(html: &str) -> (String, String) {
    let opts = ContentOptions {
        want_text: true,
        ..ContentOptions::default()
    };
    let out = run(html, &opts);
    (
        out.markdown.unwrap_or_default(),
        out.text.unwrap_or_default(),
    )
}

/// Markdown of the whole body (no main-content filtering).
pub fn md_all(html: &str) -> String {
    let opts = ContentOptions {
        only_main_content: false,
        ..ContentOptions::default()
    };
    run(html, &opts).markdown.unwrap_or_default()
}

/// Markdown of the main content.
pub fn md_main(html: &str) -> String {
    run(html, &ContentOptions::default())
        .markdown
        .unwrap_or_default()
}
