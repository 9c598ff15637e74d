//! Request validation: every range and rule of the spec, as pure functions
//! that name the field and the rule in their message.

mod discovery;
mod invalid;
mod scrape;
mod search;

pub use discovery::{
    check_crawl_request, check_llmstxt_request, check_map_request, MAP_SEARCH_MAX, WEBHOOK_EVENTS,
};
pub use invalid::Invalid;
pub use scrape::{check_idempotency_key, check_scrape_options, check_url, limits};
pub use search::{check_extract_request, check_search_request, search_limits};
