//! Scrape options, URLs and idempotency keys: the rules every endpoint shares.

use super::invalid::{range, Invalid};
use crate::types::{ActionType, Format, ScrapeOptions, Tier};

/// Limits from the spec's Limits table.
pub mod limits {
    pub const TIMEOUT_MIN: i64 = 1000;
    pub const TIMEOUT_MAX: i64 = 60_000;
    pub const WAIT_MAX: i64 = 30_000;
    pub const ACTIONS_MAX: usize = 20;
    /// `changeTrackingOptions.tag`, in characters.
    pub const CHANGE_TAG_MAX: usize = 128;
    /// A prompt for the extract model (extract, change tracking's `json`
    /// mode), in characters.
    pub const PROMPT_MAX: usize = 4000;
    pub const CHUNK_MIN: i64 = 200;
    pub const CHUNK_MAX: i64 = 8000;
    pub const IDEMPOTENCY_KEY_MAX: usize = 255;
    /// Longest URL accepted (browsers and most servers stop near here).
    pub const URL_MAX: usize = 8192;
    pub const HEADERS_MAX: usize = 50;
}

/// Change tracking's `json` mode: only on a single scrape (a crawl's or a
/// batch's pages would each need a model call), with `schema` (an object
/// schema) or `prompt`; `schema` and `prompt` only with that mode.
fn check_change_json(
    prefix: &str,
    o: &ScrapeOptions,
    ct: &crate::types::ChangeTrackingOptions,
) -> Result<(), Invalid> {
    let f = |name: &str| format!("{prefix}{name}");
    let json = o.change_json_wanted();
    if !json {
        for (name, given) in [
            ("schema", ct.schema.is_some()),
            ("prompt", ct.prompt.is_some()),
        ] {
            if given {
                return Err(Invalid::req(format!(
                    "`{}` needs the `json` mode in `{}`",
                    f(&format!("changeTrackingOptions.{name}")),
                    f("changeTrackingOptions.modes")
                )));
            }
        }
        return Ok(());
    }
    if !prefix.is_empty() {
        return Err(Invalid::req(format!(
            "`{}`: the `json` mode is available on single scrapes (`POST /v1/scrape`); crawls, batches and schedules compare with `git-diff`",
            f("changeTrackingOptions.modes")
        )));
    }
    if let Some(p) = &ct.prompt {
        let n = p.chars().count();
        if n > limits::PROMPT_MAX {
            return Err(Invalid::req(format!(
                "`{}` is {n} characters; at most {} are allowed",
                f("changeTrackingOptions.prompt"),
                limits::PROMPT_MAX
            )));
        }
    }
    let no_prompt = ct.prompt.as_deref().is_none_or(|p| p.trim().is_empty());
    match &ct.schema {
        None if no_prompt => Err(Invalid::req(format!(
            "the `json` mode needs `{}` or `{}`",
            f("changeTrackingOptions.schema"),
            f("changeTrackingOptions.prompt")
        ))),
        Some(s) if !s.is_object() || s.get("type").is_some_and(|t| t != "object") => {
            Err(Invalid::req(format!(
                "`{}` must be a JSON Schema of an object (`\"type\": \"object\"`): its fields are what is compared",
                f("changeTrackingOptions.schema")
            )))
        }
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
    if let Some(ct) = &o.change_tracking_options {
        if !o.tracks_changes() {
            return Err(Invalid::req(format!(
                "`{}` needs the `changeTracking` format in `{}`",
                f("changeTrackingOptions"),
                f("formats")
            )));
        }
        if let Some(tag) = &ct.tag {
            if tag.chars().count() > limits::CHANGE_TAG_MAX || tag.chars().any(char::is_control) {
                return Err(Invalid::req(format!(
                    "`{}` must be at most {} characters, without control characters",
                    f("changeTrackingOptions.tag"),
                    limits::CHANGE_TAG_MAX
                )));
            }
        }
        if ct.modes.as_ref().is_some_and(|m| m.is_empty()) {
            return Err(Invalid::req(format!(
                "`{}` must name at least one mode (`git-diff`, `json`) or be left out",
                f("changeTrackingOptions.modes")
            )));
        }
        check_change_json(prefix, o, ct)?;
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
