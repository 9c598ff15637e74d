//! Tests of map's credits, budget, found URLs and page detection.

use super::ctx::looks_like_page;
use super::found::TITLE_LINK_TEXT;
use super::*;
use webdata_core::types::LinkSource;

#[test]
fn credit_table() {
    assert_eq!(credits_for(0), 3);
    assert_eq!(credits_for(1), 3);
    assert_eq!(credits_for(10), 3);
    assert_eq!(credits_for(11), 6);
    assert_eq!(credits_for(139), 42);
    assert_eq!(credits_for(140), 42);
    assert_eq!(fetches_for(42), 140);
    assert_eq!(fetches_for(45), 140);
    assert_eq!(fetches_for(41), 130);
    assert_eq!(fetches_for(5), 10);
    assert_eq!(fetches_for(3), 10);
    assert_eq!(fetches_for(2), 0);
    // Never more credits than the budget that was reserved.
    for credits in (3..=42).step_by(3) {
        assert_eq!(credits_for(fetches_for(credits)), credits);
    }
}

#[test]
fn budget_refuses_past_max_and_remembers() {
    let b = Budget {
        used: AtomicUsize::new(0),
        max: 2,
        refused: AtomicBool::new(false),
    };
    assert!(b.take() && b.take());
    assert!(!b.refused.load(Ordering::Acquire));
    assert!(!b.take());
    assert!(b.refused.load(Ordering::Acquire));
    b.give_back();
    assert_eq!(b.used(), 1);
}

#[test]
fn found_keeps_the_earliest_phase_and_the_best_title() {
    let mut f = Found::default();
    let u = Url::parse("https://a.test/x/").unwrap();
    f.add(&u, PHASE_LINK, Some("link text".into()), TITLE_LINK_TEXT);
    f.add(
        &Url::parse("https://a.test/x").unwrap(),
        PHASE_SITEMAP,
        None,
        TITLE_SITEMAP,
    );
    assert_eq!(f.len(), 1);
    assert_eq!(f.entries[0].source, LinkSource::Sitemap);
    assert_eq!(f.entries[0].title.as_deref(), Some("link text"));
    f.add(&u, PHASE_LINK, Some("Page title".into()), TITLE_PAGE);
    assert_eq!(f.entries[0].title.as_deref(), Some("Page title"));
    f.add(&u, PHASE_LINK, Some("other text".into()), TITLE_LINK_TEXT);
    assert_eq!(f.entries[0].title.as_deref(), Some("Page title"));
}

#[test]
fn key_of_normalized_matches_dedup_key() {
    for u in [
        "https://a.test/",
        "https://a.test/x/",
        "https://a.test/x/?q=1",
        "https://a.test/x/y?q=1&r=/",
        "https://a.test/%7euser/",
        "https://a.test:8080/a/b/",
    ] {
        // Normalising a normalised URL changes nothing, so the map's one
        // normalisation per URL gives the same key as the crawl's.
        let raw = Url::parse(u).unwrap();
        let n = urlnorm::normalize(&raw);
        assert_eq!(
            urlnorm::dedup_key_of_normalized(&n),
            urlnorm::dedup_key(&raw),
            "{u}"
        );
    }
    let key =
        |u: &str| urlnorm::dedup_key_of_normalized(&urlnorm::normalize(&Url::parse(u).unwrap()));
    assert_eq!(key("https://a.test/x/?q=1"), "https://a.test/x?q=1");
    assert_eq!(key("https://a.test/"), "https://a.test/");
    assert_eq!(key("https://a.test:8080/a/b/"), "https://a.test:8080/a/b");
}

#[test]
fn pages_are_told_from_files_by_extension() {
    for page in [
        "https://a.test/",
        "https://a.test/docs",
        "https://a.test/a.html",
        "https://a.test/v1.2/x",
    ] {
        assert!(looks_like_page(&Url::parse(page).unwrap()), "{page}");
    }
    for file in [
        "https://a.test/a.PDF",
        "https://a.test/i/logo.png",
        "https://a.test/feed.xml",
    ] {
        assert!(!looks_like_page(&Url::parse(file).unwrap()), "{file}");
    }
}
