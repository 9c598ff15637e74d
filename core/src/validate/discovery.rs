//! Crawl and map requests: bounds, path globs and the webhook.

use super::invalid::{range, Invalid};
use super::scrape::{check_scrape_options, check_url};

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

/// Checks an llms.txt request: `url`, `limit` 1 to 5000, and the crawl it
/// runs (depth, path lists).
pub fn check_llmstxt_request(r: &crate::types::LlmsTxtRequest) -> Result<(), Invalid> {
    check_url("url", &r.url)?;
    range("limit", r.limit, 1, crate::types::LLMSTXT_LIMIT_MAX)?;
    check_crawl_request(&r.as_crawl())
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
