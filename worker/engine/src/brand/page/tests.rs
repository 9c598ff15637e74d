//! Tests of reading a home page's brand facts.

use super::*;

#[test]
fn titles_are_cleaned_to_the_brand() {
    assert_eq!(
        name_from_title("Home | Acme", "acme.com").as_deref(),
        Some("Acme")
    );
    assert_eq!(
        name_from_title("Acme — Project management for busy teams", "acme.com").as_deref(),
        Some("Acme")
    );
    assert_eq!(
        name_from_title("Project management for busy teams | Acme Co", "acmeco.io").as_deref(),
        Some("Acme Co")
    );
    assert_eq!(
        name_from_title(
            "Welcome - Bright Bakery - Fresh bread daily",
            "brightbakery.test"
        )
        .as_deref(),
        Some("Bright Bakery")
    );
    assert_eq!(
        name_from_title("Northwind Traders", "127.0.0.2:80").as_deref(),
        Some("Northwind Traders")
    );
    assert_eq!(name_from_title("Home", "acme.com"), None);
}

#[test]
fn reads_logo_candidates_and_links() {
    let page = Url::parse("https://acme.test/").expect("url");
    let html = r##"<html><head><title>Home | Acme</title>
        <link rel="icon" href="/favicon.ico"><link rel="apple-touch-icon" href="/apple.png">
        <link rel="manifest" href="/site.webmanifest"><link rel="stylesheet" href="/main.css">
        <link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter&display=swap">
        <meta name="theme-color" content="#2563eb"><meta name="theme-color" media="(prefers-color-scheme: dark)" content="#000">
        </head><body><header><a href="/" class="brand"><img src="/logo.png" alt="Acme"></a>
        <nav><img src="/team.jpg" alt="team"><a href="/"><svg viewBox="0 0 10 10"><path d="M0 0h1"/></svg></a></nav></header>
        <footer><a href="/"><img src="/footer-logo.png"></a><a href="https://twitter.com/intent/tweet?url=x">share</a><a href="https://x.com/acme">X</a></footer></body></html>"##;
    let f = read(html, &page);
    let srcs: Vec<(&str, String)> = f
        .candidates
        .iter()
        .map(|c| {
            (
                c.source,
                match &c.image {
                    ImageRef::Url(u) => u.path().to_string(),
                    ImageRef::Inline(_) => "svg".into(),
                },
            )
        })
        .collect();
    assert_eq!(
        srcs,
        vec![
            ("favicon", "/favicon.ico".to_string()),
            ("apple-touch-icon", "/apple.png".to_string()),
            ("header", "/logo.png".to_string()),
            ("inline-svg", "svg".to_string()),
        ]
    );
    assert_eq!(
        f.stylesheets.len(),
        1,
        "the font service is read, not fetched"
    );
    assert_eq!(f.font_families, vec!["Inter".to_string()]);
    assert_eq!(f.theme_colors, vec!["#2563eb".to_string()]);
    assert!(f.manifest.is_some());
    assert!(f.social_links.contains(&"https://x.com/acme".to_string()));
}
