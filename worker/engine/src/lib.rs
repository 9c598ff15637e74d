//! The webdata engine: everything that touches the web. The network guard,
//! fetch and render tiers, robots.txt, scrape, map, brand, sitemaps and the
//! crawl loop, behind one front door ([`Engine`]) and one error
//! ([`EngineError`]). Pages become formats in `webdata-content`.
pub mod alloc;
pub mod brand;
pub mod changes;
pub mod crawl;
mod engine;
mod error;
pub mod fetch;
pub mod glob;
pub mod guard;
pub mod map;
pub mod render;
pub mod robots;
pub mod scrape;
pub use webdata_core::shutdown;
pub mod sitemap;
pub mod urlnorm;

pub use engine::Engine;
pub use error::EngineError;
