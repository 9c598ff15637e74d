//! HTTP handlers, one module per area.

pub mod admin;
pub mod batch;
pub mod blobs;
pub mod brand;
pub mod crawl;
pub mod extract;
pub mod llmstxt;
pub mod map;
pub mod ops;
pub mod schedules;
pub mod scrape;
pub mod search;
pub mod team;
