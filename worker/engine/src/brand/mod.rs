//! Brand: logo, icon, colours, fonts, name and socials of a host, read
//! from its home page and the style sheets, web manifest and icons the
//! page declares. Every request goes through the engine's fetcher, so the
//! network guard sees each one. The API hosts the image copies and keeps
//! the cache; this module only reads the web.

mod assets;
mod choose;
pub mod colors;
pub mod computed;
pub mod confidence;
pub mod css;
pub mod fonts;
pub mod images;
pub mod input;
mod lookup;
pub mod page;
pub mod socials;

pub use input::{domain_of, parse as parse_domain, InvalidDomain, Target};

pub use assets::from_page;
pub use choose::{best_icon, best_logo, render_reason};
pub use lookup::lookup;

use std::time::Duration;
use webdata_core::brand::{Brand, ImageFormat};
use webdata_core::ErrorCode;

/// Default time for reading the home page (`WEBDATA_BRAND_TIMEOUT_MS`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest the assets (CSS, manifest, images) may take after the page.
const ASSET_BUDGET: Duration = Duration::from_secs(15);
const MAX_STYLESHEETS: usize = 8;
const MAX_IMAGES: usize = 16;
const MAX_CSS_BYTES: usize = 2 * 1024 * 1024;
const MAX_IMAGE_BYTES: usize = 4 * 1024 * 1024;
const MAX_MANIFEST_BYTES: usize = 256 * 1024;
/// `@import`s followed (all levels together), how deep, and their bytes
/// together.
const MAX_IMPORTS: usize = 8;
const MAX_IMPORT_DEPTH: usize = 2;
const MAX_IMPORT_BYTES: usize = 2 * 1024 * 1024;

/// An image's bytes, for the API to host; `key` is the `url` the image
/// carries in the Brand until the hosted copy replaces it.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageCopy {
    pub key: String,
    pub format: ImageFormat,
    pub bytes: Vec<u8>,
}

/// A finished lookup.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub brand: Brand,
    pub copies: Vec<ImageCopy>,
    /// Why the home page was read from a browser render, when it was.
    pub rendered: Option<&'static str>,
}

/// True for failures that a later attempt may not have (a cached brand is
/// then served as stale).
pub fn is_transient(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::FetchFailed
            | ErrorCode::Timeout
            | ErrorCode::BlockedBySite
            | ErrorCode::CapacityExceeded
    )
}

#[cfg(test)]
mod tests;
