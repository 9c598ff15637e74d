//! What handlers share, named: blob links, the brand cache, the scrape of
//! one page (cache, brand, screenshot), crawl reads, and the search and
//! LLM providers. Services take the state; none of them knows HTTP routes.

pub mod blobs;
pub mod brand;
pub mod crawls;
pub mod llm;
pub mod schedules;
pub mod scrape;
pub mod search;
