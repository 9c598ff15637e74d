//! The webdata engine: everything that touches the web (fetch, network guard,
//! robots.txt) and turns a page into the formats the API returns.
pub mod fetch;
pub mod guard;
pub mod robots;
pub mod scrape;
pub mod glob;
pub mod urlnorm;
pub mod sitemap;
pub mod content;
