//! Request validation: every range and rule of the spec, as pure functions
//! that name the field and the rule in their message.

use crate::types::{ActionType, Format, ScrapeOptions, Tier};

/// A rule a request broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// What the API answers with: `invalid_request` or `not_configured`.
    pub code: crate::ErrorCode,
    pub message: String,
}

impl Invalid {
    fn req(message: impl Into<String>) -> Self {
        Invalid {
            code: crate::ErrorCode::InvalidRequest,
            message: message.into(),
        }
    }
}

/// Limits from the spec's Limits table.
pub mod limits {
    pub const TIMEOUT_MIN: i64 = 1000;
    pub const TIMEOUT_MAX: i64 = 60_000;
    pub const WAIT_MAX: i64 = 30_000;
    pub const ACTIONS_MAX: usize = 20;
    pub const CHUNK_MIN: i64 = 200;
    pub const CHUNK_MAX: i64 = 8000;
    pub const IDEMPOTENCY_KEY_MAX: usize = 255;
    /// Longest URL accepted (browsers and most servers stop near here).
    pub const URL_MAX: usize = 8192;
    pub const HEADERS_MAX: usize = 50;
}

fn range(field: &str, v: Option<i64>, min: i64, max: i64) -> Result<(), Invalid> {
    match v {
        Some(x) if x < min || x > max => Err(Invalid::req(format!(
            "`{field}` must be between {min} and {max} (got {x})"
        ))),
        _ => Ok(()),
    }
}

/// Checks that `url` is an absolute http(s) URI. The network guard checks
/// where it points later.
pub fn check_url(field: &str, url: &str) -> Result<url::Url, Invalid> {
    if url.len() > limits::URL_MAX {
        return Err(Invalid::req(format!(
            "`{field}` is longer than {} characters",
            limits::URL_MAX
        )));
    }
    let parsed = url::Url::parse(url.trim())
        .map_err(|e| Invalid::req(format!("`{field}` is not an absolute URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Invalid::req(format!(
            "`{field}` must be an http or https URL (got scheme `{}`)",
            parsed.scheme()
        )));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(Invalid::req(format!("`{field}` has no host")));
    }
    Ok(parsed)
}

/// Checks every ScrapeOptions field; `prefix` is prepended to field names
/// (e.g. `scrapeOptions.`).
pub fn check_scrape_options(prefix: &str, o: &ScrapeOptions) -> Result<(), Invalid> {
    let f = |name: &str| format!("{prefix}{name}");
    range(
        &f("timeout"),
        o.timeout,
        limits::TIMEOUT_MIN,
        limits::TIMEOUT_MAX,
    )?;
    range(&f("waitFor"), o.wait_for, 0, limits::WAIT_MAX)?;
    range(
        &f("chunkSize"),
        o.chunk_size,
        limits::CHUNK_MIN,
        limits::CHUNK_MAX,
    )?;
    if let Some(age) = o.max_age {
        if age < 0 {
            return Err(Invalid::req(format!(
                "`{}` must be 0 or more (got {age})",
                f("maxAge")
            )));
        }
    }
    if let Some(formats) = &o.formats {
        if formats.is_empty() {
            return Err(Invalid::req(format!(
                "`{}` must name at least one format",
                f("formats")
            )));
        }
    }
    if o.tier == Some(Tier::Premium) {
        return Err(Invalid {
            code: crate::ErrorCode::NotConfigured,
            message: format!(
                "`{}`: the premium tier is not available on this deployment",
                f("tier")
            ),
        });
    }
    if o.allow_premium == Some(true) {
        return Err(Invalid {
            code: crate::ErrorCode::NotConfigured,
            message: format!(
                "`{}`: premium fetching is not available on this deployment",
                f("allowPremium")
            ),
        });
    }
    let wants_browser = o.formats.as_ref().is_some_and(|fs| {
        fs.iter()
            .any(|x| matches!(x, Format::Screenshot | Format::ScreenshotFull))
    });
    if o.tier == Some(Tier::Fetch) && wants_browser {
        return Err(Invalid::req(format!(
            "`{}`: screenshots need a browser, so they cannot be combined with tier `fetch`",
            f("formats")
        )));
    }
    if let Some(actions) = &o.actions {
        if actions.len() > limits::ACTIONS_MAX {
            return Err(Invalid::req(format!(
                "`{}` has {} items; at most {} are allowed",
                f("actions"),
                actions.len(),
                limits::ACTIONS_MAX
            )));
        }
        if o.tier == Some(Tier::Fetch) && !actions.is_empty() {
            return Err(Invalid::req(format!(
                "`{}`: actions need a browser, so they cannot be combined with tier `fetch`",
                f("actions")
            )));
        }
        for (i, a) in actions.iter().enumerate() {
            let at = format!("{}[{i}]", f("actions"));
            range(&format!("{at}.ms"), a.ms, 0, limits::WAIT_MAX)?;
            let has_sel = a.selector.as_deref().is_some_and(|s| !s.trim().is_empty());
            match a.kind {
                ActionType::Wait => {
                    if a.ms.is_none() && !has_sel {
                        return Err(Invalid::req(format!(
                            "`{at}`: a wait action needs `ms` or `selector`"
                        )));
                    }
                    if a.text.is_some() || a.key.is_some() {
                        return Err(Invalid::req(format!(
                            "`{at}`: a wait action takes only `ms` and `selector`"
                        )));
                    }
                }
                ActionType::Click => {
                    if !has_sel {
                        return Err(Invalid::req(format!(
                            "`{at}`: a click action needs `selector`"
                        )));
                    }
                    if a.text.is_some() || a.key.is_some() || a.ms.is_some() {
                        return Err(Invalid::req(format!(
                            "`{at}`: a click action takes only `selector`"
                        )));
                    }
                }
                ActionType::Scroll => {
                    if a.key.is_some() || a.ms.is_some() {
                        return Err(Invalid::req(format!("`{at}`: a scroll action takes only `selector` and `text` (`up` or `down`)")));
                    }
                    if let Some(dir) = &a.text {
                        if dir != "up" && dir != "down" {
                            return Err(Invalid::req(format!("`{at}.text` must be `up` or `down` for a scroll action (got `{dir}`)")));
                        }
                    }
                }
                ActionType::Type => {
                    if !has_sel || a.text.is_none() {
                        return Err(Invalid::req(format!(
                            "`{at}`: a type action needs `selector` and `text`"
                        )));
                    }
                    if a.key.is_some() || a.ms.is_some() {
                        return Err(Invalid::req(format!(
                            "`{at}`: a type action takes only `selector` and `text`"
                        )));
                    }
                }
                ActionType::Press => {
                    if a.key.as_deref().is_none_or(|k| k.is_empty()) {
                        return Err(Invalid::req(format!("`{at}`: a press action needs `key`")));
                    }
                    if a.text.is_some() || a.ms.is_some() {
                        return Err(Invalid::req(format!(
                            "`{at}`: a press action takes only `key` and `selector`"
                        )));
                    }
                }
            }
        }
    }
    if let Some(h) = &o.headers {
        if h.len() > limits::HEADERS_MAX {
            return Err(Invalid::req(format!(
                "`{}` has more than {} entries",
                f("headers"),
                limits::HEADERS_MAX
            )));
        }
        for (k, v) in h {
            let name_ok = !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !name_ok {
                return Err(Invalid::req(format!(
                    "`{}`: `{k}` is not a valid header name",
                    f("headers")
                )));
            }
            if v.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                return Err(Invalid::req(format!(
                    "`{}.{k}` contains a line break",
                    f("headers")
                )));
            }
            let lower = k.to_ascii_lowercase();
            if matches!(
                lower.as_str(),
                "host" | "content-length" | "transfer-encoding" | "connection"
            ) {
                return Err(Invalid::req(format!(
                    "`{}`: the `{k}` header is set by the service and cannot be overridden",
                    f("headers")
                )));
            }
        }
    }
    Ok(())
}

/// Checks an `Idempotency-Key` header value.
pub fn check_idempotency_key(key: &str) -> Result<(), Invalid> {
    if key.is_empty() {
        return Err(Invalid::req("`Idempotency-Key` must not be empty"));
    }
    if key.chars().count() > limits::IDEMPOTENCY_KEY_MAX {
        return Err(Invalid::req(format!(
            "`Idempotency-Key` is {} characters; at most {} are allowed",
            key.chars().count(),
            limits::IDEMPOTENCY_KEY_MAX
        )));
    }
    Ok(())
}

/// Webhook event short names.
pub const WEBHOOK_EVENTS: [&str; 5] = ["started", "page", "completed", "failed", "cancelled"];

/// Checks every CrawlRequest field and range (globs are compiled by the
/// worker, which names a bad pattern).
pub fn check_crawl_request(r: &crate::types::CrawlRequest) -> Result<(), Invalid> {
    check_url("url", &r.url)?;
    range("limit", r.limit, 1, 100_000)?;
    range("maxDepth", r.max_depth, 0, 20)?;
    if let Some(o) = &r.scrape_options {
        check_scrape_options("scrapeOptions.", o)?;
    }
    for (field, list) in [
        ("includePaths", &r.include_paths),
        ("excludePaths", &r.exclude_paths),
    ] {
        if let Some(l) = list {
            if l.len() > 100 {
                return Err(Invalid::req(format!(
                    "`{field}` has more than 100 patterns"
                )));
            }
        }
    }
    if let Some(w) = &r.webhook {
        check_url("webhook.url", &w.url)?;
        if let Some(events) = &w.events {
            for (i, e) in events.iter().enumerate() {
                if !WEBHOOK_EVENTS.contains(&e.as_str()) {
                    return Err(Invalid::req(format!(
                        "`webhook.events[{i}]` is `{e}`; use one of {}",
                        WEBHOOK_EVENTS.join(", ")
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Longest map `search` text (the same bound as a search query).
pub const MAP_SEARCH_MAX: usize = 500;

/// Checks every MapRequest field and range (globs are compiled by the
/// worker, which names a bad pattern).
pub fn check_map_request(r: &crate::types::MapRequest) -> Result<(), Invalid> {
    check_url("url", &r.url)?;
    range("limit", r.limit, 1, 100_000)?;
    if let Some(s) = &r.search {
        if s.chars().count() > MAP_SEARCH_MAX {
            return Err(Invalid::req(format!(
                "`search` is longer than {MAP_SEARCH_MAX} characters"
            )));
        }
    }
    for (field, list) in [
        ("includePaths", &r.include_paths),
        ("excludePaths", &r.exclude_paths),
    ] {
        if let Some(l) = list {
            if l.len() > 100 {
                return Err(Invalid::req(format!(
                    "`{field}` has more than 100 patterns"
                )));
            }
        }
    }
    Ok(())
}

/// Search and extract bounds from the spec's Limits table.
pub mod search_limits {
    pub const QUERY_MAX: usize = 500;
    pub const LIMIT_MAX: i64 = 50;
    pub const URLS_MAX: usize = 25;
    pub const PROMPT_MAX: usize = 4000;
}

/// Checks every SearchRequest field: `query` 1–500 characters, `limit`
/// 1–50, `country` two letters, `language` a language tag, scrapeOptions.
pub fn check_search_request(r: &crate::types::SearchRequest) -> Result<(), Invalid> {
    if r.query.trim().is_empty() {
        return Err(Invalid::req("`query` must not be empty"));
    }
    let n = r.query.chars().count();
    if n > search_limits::QUERY_MAX {
        return Err(Invalid::req(format!(
            "`query` is {n} characters; at most {} are allowed",
            search_limits::QUERY_MAX
        )));
    }
    range("limit", r.limit, 1, search_limits::LIMIT_MAX)?;
    if let Some(c) = &r.country {
        if c.len() != 2 || !c.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(Invalid::req(format!(
                "`country` must be a two-letter ISO 3166-1 code such as `us` (got `{c}`)"
            )));
        }
    }
    if let Some(l) = &r.language {
        if !is_language_tag(l) {
            return Err(Invalid::req(format!(
                "`language` must be a language code such as `en` or `pt-BR` (got `{l}`)"
            )));
        }
    }
    if let Some(o) = &r.scrape_options {
        check_scrape_options("scrapeOptions.", o)?;
    }
    Ok(())
}

/// A 2–3 letter language, optionally followed by `-` subtags of 2–8
/// letters or digits (`en`, `pt-BR`, `zh-Hant-TW`).
fn is_language_tag(s: &str) -> bool {
    let mut parts = s.split('-');
    let lang_ok = parts
        .next()
        .is_some_and(|p| (2..=3).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphabetic()));
    lang_ok
        && s.len() <= 35
        && parts.all(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Checks every ExtractRequest field except the schema's own validity
/// (the API compiles it): `urls` 1–25 http(s) URLs, `prompt` at most 4000
/// characters, `prompt` or `schema` present, `schema` an object.
pub fn check_extract_request(r: &crate::types::ExtractRequest) -> Result<(), Invalid> {
    if r.urls.is_empty() || r.urls.len() > search_limits::URLS_MAX {
        return Err(Invalid::req(format!(
            "`urls` must have 1 to {} items (got {})",
            search_limits::URLS_MAX,
            r.urls.len()
        )));
    }
    for (i, u) in r.urls.iter().enumerate() {
        check_url(&format!("urls[{i}]"), u)?;
    }
    if let Some(p) = &r.prompt {
        let n = p.chars().count();
        if n > search_limits::PROMPT_MAX {
            return Err(Invalid::req(format!(
                "`prompt` is {n} characters; at most {} are allowed",
                search_limits::PROMPT_MAX
            )));
        }
    }
    match &r.schema {
        Some(serde_json::Value::Object(_)) | None => {}
        Some(_) => return Err(Invalid::req("`schema` must be a JSON Schema object")),
    }
    let no_prompt = r.prompt.as_deref().is_none_or(|p| p.trim().is_empty());
    if no_prompt && r.schema.is_none() {
        return Err(Invalid::req(
            "`prompt` or `schema` is required: say what to extract",
        ));
    }
    if let Some(o) = &r.scrape_options {
        check_scrape_options("scrapeOptions.", o)?;
    }
    Ok(())
}

#[cfg(test)]
mod search_tests {
    use super::*;
    use crate::types::{ExtractRequest, SearchRequest};

    fn search(v: serde_json::Value) -> SearchRequest {
        serde_json::from_value(v).unwrap_or_default()
    }

    #[test]
    fn search_fields_are_bounded_and_named() {
        assert!(check_search_request(&search(serde_json::json!({"query": "rust"}))).is_ok());
        let e = check_search_request(&search(serde_json::json!({"query": "  "}))).unwrap_err();
        assert!(e.message.contains("`query`"));
        let long = "q".repeat(501);
        let e = check_search_request(&search(serde_json::json!({ "query": long }))).unwrap_err();
        assert!(e.message.contains("`query`") && e.message.contains("500"));
        for bad in [0, 51] {
            let e = check_search_request(&search(serde_json::json!({"query": "a", "limit": bad})))
                .unwrap_err();
            assert_eq!(
                e.message,
                format!("`limit` must be between 1 and 50 (got {bad})")
            );
        }
        assert!(
            check_search_request(&search(serde_json::json!({"query": "a", "limit": 50}))).is_ok()
        );
        assert!(
            check_search_request(&search(serde_json::json!({"query": "a", "country": "usa"})))
                .unwrap_err()
                .message
                .contains("`country`")
        );
        assert!(check_search_request(&search(
            serde_json::json!({"query": "a", "language": "en_US"})
        ))
        .unwrap_err()
        .message
        .contains("`language`"));
        assert!(check_search_request(&search(
            serde_json::json!({"query": "a", "language": "pt-BR", "country": "br"})
        ))
        .is_ok());
        let e = check_search_request(&search(
            serde_json::json!({"query": "a", "scrapeOptions": {"timeout": 5}}),
        ))
        .unwrap_err();
        assert!(e.message.contains("scrapeOptions.timeout"));
    }

    #[test]
    fn extract_fields_are_bounded_and_named() {
        let ok = |v: serde_json::Value| -> ExtractRequest {
            serde_json::from_value(v).unwrap_or_default()
        };
        assert!(check_extract_request(&ok(
            serde_json::json!({"urls": ["https://a.example/"], "prompt": "x"})
        ))
        .is_ok());
        assert!(
            check_extract_request(&ok(serde_json::json!({"urls": [], "prompt": "x"})))
                .unwrap_err()
                .message
                .contains("`urls`")
        );
        let many: Vec<String> = (0..26).map(|i| format!("https://a.example/{i}")).collect();
        assert!(
            check_extract_request(&ok(serde_json::json!({"urls": many, "prompt": "x"})))
                .unwrap_err()
                .message
                .contains("1 to 25")
        );
        assert!(check_extract_request(&ok(
            serde_json::json!({"urls": ["https://a.example/", "ftp://b/"], "prompt": "x"})
        ))
        .unwrap_err()
        .message
        .contains("`urls[1]`"));
        let long = "p".repeat(4001);
        assert!(check_extract_request(&ok(
            serde_json::json!({"urls": ["https://a.example/"], "prompt": long})
        ))
        .unwrap_err()
        .message
        .contains("`prompt`"));
        assert!(
            check_extract_request(&ok(serde_json::json!({"urls": ["https://a.example/"]})))
                .unwrap_err()
                .message
                .contains("`prompt` or `schema`")
        );
        assert!(check_extract_request(&ok(
            serde_json::json!({"urls": ["https://a.example/"], "schema": 3})
        ))
        .unwrap_err()
        .message
        .contains("`schema`"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Action;

    fn opts(v: serde_json::Value) -> ScrapeOptions {
        serde_json::from_value(v).unwrap_or_default()
    }

    #[test]
    fn ranges_name_field_and_bounds() {
        let e = check_scrape_options("", &opts(serde_json::json!({"timeout": 999}))).unwrap_err();
        assert_eq!(
            e.message,
            "`timeout` must be between 1000 and 60000 (got 999)"
        );
        assert!(check_scrape_options("", &opts(serde_json::json!({"timeout": 1000}))).is_ok());
        assert!(check_scrape_options("", &opts(serde_json::json!({"timeout": 60001}))).is_err());
        assert!(check_scrape_options("", &opts(serde_json::json!({"waitFor": 30001}))).is_err());
        assert!(check_scrape_options("", &opts(serde_json::json!({"chunkSize": 199}))).is_err());
        assert!(check_scrape_options("", &opts(serde_json::json!({"chunkSize": 8000}))).is_ok());
        let e = check_scrape_options("scrapeOptions.", &opts(serde_json::json!({"maxAge": -1})))
            .unwrap_err();
        assert!(e.message.contains("scrapeOptions.maxAge"));
    }

    #[test]
    fn premium_is_not_configured() {
        let e =
            check_scrape_options("", &opts(serde_json::json!({"tier": "premium"}))).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::NotConfigured);
        let e =
            check_scrape_options("", &opts(serde_json::json!({"allowPremium": true}))).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::NotConfigured);
        assert!(
            check_scrape_options("", &opts(serde_json::json!({"allowPremium": false}))).is_ok()
        );
    }

    #[test]
    fn actions_are_checked_per_type_and_named_by_index() {
        let many: Vec<Action> = (0..21)
            .map(|_| Action {
                kind: ActionType::Wait,
                selector: None,
                text: None,
                ms: Some(1),
                key: None,
            })
            .collect();
        let o = ScrapeOptions {
            actions: Some(many),
            ..Default::default()
        };
        assert!(check_scrape_options("", &o)
            .unwrap_err()
            .message
            .contains("at most 20"));
        let bad =
            opts(serde_json::json!({"actions": [{"type": "wait", "ms": 5}, {"type": "click"}]}));
        assert_eq!(
            check_scrape_options("", &bad).unwrap_err().message,
            "`actions[1]`: a click action needs `selector`"
        );
        let bad = opts(serde_json::json!({"actions": [{"type": "wait", "ms": 30001}]}));
        assert!(check_scrape_options("", &bad)
            .unwrap_err()
            .message
            .contains("actions[0].ms"));
        let ok = opts(serde_json::json!({"actions": [
            {"type": "wait", "selector": "#x"}, {"type": "click", "selector": "a"},
            {"type": "scroll", "text": "down"}, {"type": "type", "selector": "input", "text": "hi"},
            {"type": "press", "key": "Enter"}]}));
        assert!(check_scrape_options("", &ok).is_ok());
        let fetch = opts(
            serde_json::json!({"tier": "fetch", "actions": [{"type": "press", "key": "Enter"}]}),
        );
        assert!(check_scrape_options("", &fetch).is_err());
    }

    #[test]
    fn urls_must_be_absolute_http() {
        assert!(check_url("url", "https://example.com/a").is_ok());
        assert!(check_url("url", "/relative").is_err());
        assert!(check_url("url", "ftp://example.com/")
            .unwrap_err()
            .message
            .contains("ftp"));
        assert!(check_url("url", "javascript:alert(1)").is_err());
        assert!(check_url("url", &format!("https://e.com/{}", "a".repeat(9000))).is_err());
    }

    #[test]
    fn idempotency_keys_are_bounded() {
        assert!(check_idempotency_key(&"k".repeat(255)).is_ok());
        assert!(check_idempotency_key(&"k".repeat(256))
            .unwrap_err()
            .message
            .contains("256"));
        assert!(check_idempotency_key("").is_err());
    }

    #[test]
    fn header_overrides_are_sane() {
        let bad = opts(serde_json::json!({"headers": {"Host": "x"}}));
        assert!(check_scrape_options("", &bad).is_err());
        let bad = opts(serde_json::json!({"headers": {"X-A": "a\r\nb: c"}}));
        assert!(check_scrape_options("", &bad).is_err());
        let ok = opts(serde_json::json!({"headers": {"X-A": "b"}}));
        assert!(check_scrape_options("", &ok).is_ok());
    }
}
