//! The crawl/map path-glob compiler and matcher (`PathGlob::compile`,
//! `PathFilter`). Input lines: the include pattern, the exclude pattern,
//! then paths to match (raw, and as the normalised subject of a URL).
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use url::Url;
use webdata_engine::glob::{match_subject, GlobProblem, PathFilter, PathGlob, MAX_PATTERN_LEN};

/// `/**` matches every path (compiled once: a regex build is most of an input's cost).
static EVERYTHING: LazyLock<PathGlob> = LazyLock::new(|| PathGlob::compile("/**").expect("valid"));

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let pattern = lines.next().unwrap_or_default();
    let exclude = lines.next().unwrap_or("/private/**");
    let glob = match PathGlob::compile(pattern) {
        Ok(g) => {
            assert_eq!(g.as_str(), pattern);
            Some(g)
        }
        Err(e) => {
            // The module's promise: a pattern under the length limit only
            // fails for one of the listed rules, never by regex size.
            if pattern.len() <= MAX_PATTERN_LEN {
                assert_ne!(e.problem, GlobProblem::TooLong, "{pattern:?}");
            }
            let _ = e.to_string();
            None
        }
    };
    let filter = PathFilter::new(&[pattern.to_owned()], &[exclude.to_owned()]).ok();
    let base = Url::parse("https://example.com/").expect("static URL");
    for path in lines.take(8) {
        if let Some(g) = &glob {
            let _ = g.is_match(path);
        }
        assert!(
            EVERYTHING.is_match(&format!("/{path}")),
            "/** must match /{path:?}"
        );
        if let Ok(url) = base.join(path) {
            let subject = match_subject(&url);
            if let Some(g) = &glob {
                let _ = g.is_match(&subject);
            }
            if let Some(f) = &filter {
                let _ = f.allows(&url);
            }
        }
    }
});
