//! robots.txt: parsing for our product token (or one named in the file),
//! then matching paths (RFC 9309 and Google's matcher: longest match, allow
//! wins ties, `*` and `$`). The input is the robots.txt itself; the paths
//! matched are a fixed few plus every rule value of the file (so patterns
//! meet the paths they were written for, and their mutations).
#![no_main]

use libfuzzer_sys::fuzz_target;
use url::Url;
use webdata_engine::robots::Robots;

const PATHS: [&str; 6] = [
    "/",
    "/index.html",
    "/a/b?c=d",
    "/%7Euser/caf%C3%A9",
    "/private/",
    "",
];

fuzz_target!(|data: &[u8]| {
    let robots = Robots::parse(data);
    // A group for another product token, named by the first user-agent line.
    let text = String::from_utf8_lossy(data);
    let agent = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("User-agent:"))
        .map(str::trim)
        .unwrap_or("otherbot");
    let other = Robots::parse_for(data, agent);

    for r in [&robots, &other] {
        if let Some(delay) = r.crawl_delay() {
            assert!(delay.as_secs_f64().is_finite());
        }
        for s in r.sitemaps() {
            let u = Url::parse(s).expect("sitemaps are absolute URLs");
            assert!(matches!(u.scheme(), "http" | "https"), "{s}");
        }
        // robots.txt itself is always allowed.
        assert!(r.is_allowed("/robots.txt"));
    }
    let values = text
        .lines()
        .filter_map(|l| l.split_once(':').map(|(_, v)| v.trim()))
        .take(16);
    let base = Url::parse("https://example.com/").expect("static URL");
    for path in PATHS.into_iter().chain(values) {
        for r in [&robots, &other] {
            let allowed = r.is_allowed(path);
            // A fragment never reaches the server, so it never changes the answer.
            if !path.contains('#') {
                assert_eq!(allowed, r.is_allowed(&format!("{path}#frag")), "{path:?}");
            }
            if let Ok(url) = base.join(path) {
                let _ = r.is_allowed_url(&url);
            }
        }
    }
});
