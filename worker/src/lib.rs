//! The webdata engine: everything that touches the web (fetch, network guard,
//! robots.txt) and turns a page into the formats the API returns.
pub mod boilerplate;
pub mod brand;
pub mod content;
pub mod crawl;
pub mod fetch;
pub mod glob;
pub mod guard;
pub mod map;
pub mod pdf;
pub mod render;
pub mod robots;
pub mod scrape;
pub use webdata_core::shutdown;
pub mod sitemap;
pub mod urlnorm;
