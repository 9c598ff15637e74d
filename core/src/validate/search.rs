//! Search and extract requests: queries, languages, URLs, prompts and schemas.

use super::invalid::{range, Invalid};
use super::scrape::{check_scrape_options, check_url};

/// Search and extract bounds from the spec's Limits table.
pub mod search_limits {
    pub const QUERY_MAX: usize = 500;
    pub const LIMIT_MAX: i64 = 50;
    pub const URLS_MAX: usize = 25;
    pub const PROMPT_MAX: usize = super::super::scrape::limits::PROMPT_MAX;
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
