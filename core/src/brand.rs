//! Wire types of the brand operation (spec: Brand, BrandImage,
//! BrandResponse), with the spec's exact field names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Logo, icon, colours, fonts, name and socials of one host.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Brand {
    /// The host the brand belongs to, in Unicode (IDNs decoded), without
    /// `www.`; a non-default port is kept (`host:port`).
    pub domain: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The best full lockup (`type` `logo`, else a `wordmark`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<BrandImage>,
    /// The best square mark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<BrandImage>,
    /// Every image found, each with its type.
    #[serde(default)]
    pub logos: Vec<BrandImage>,
    #[serde(default)]
    pub colors: Vec<BrandColor>,
    #[serde(default)]
    pub fonts: Vec<BrandFont>,
    #[serde(default)]
    pub socials: Vec<BrandSocial>,
    /// 0 to 1: the weighted share of the brand found from strong evidence
    /// (docs/brand.md).
    pub confidence: f64,
}

/// What an image is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BrandImageType {
    /// Full lockup.
    Logo,
    /// Square mark for avatars.
    Icon,
    /// Text-only logo.
    Wordmark,
}

/// Image file formats a brand image can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    Png,
    Jpeg,
    Gif,
    Webp,
    Ico,
    Svg,
    Avif,
}

impl ImageFormat {
    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
            Self::Ico => "image/x-icon",
            Self::Svg => "image/svg+xml",
            Self::Avif => "image/avif",
        }
    }

    /// The file extension.
    pub fn ext(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpg",
            Self::Gif => "gif",
            Self::Webp => "webp",
            Self::Ico => "ico",
            Self::Svg => "svg",
            Self::Avif => "avif",
        }
    }
}

/// Which background an image is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageBackground {
    /// Dark artwork on transparency: put it on a light background.
    Light,
    /// Light artwork on transparency: put it on a dark background.
    Dark,
    /// Opaque or mixed artwork.
    Any,
}

/// One logo or icon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrandImage {
    /// A copy hosted by this service when the copy succeeded, else the
    /// site's own URL (a `data:` URL for an inline SVG).
    pub url: String,
    /// The original URL on the site; absent for inline SVGs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_url: Option<String>,
    #[serde(rename = "type")]
    pub kind: BrandImageType,
    pub format: ImageFormat,
    pub width: u32,
    pub height: u32,
    pub background: ImageBackground,
    /// Where it was found: `header`, `header-dark`, `inline-svg`,
    /// `json-ld`, `og:image`, `apple-touch-icon`, `manifest`, `favicon`.
    pub source: String,
}

/// The role of a colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColorRole {
    Primary,
    Accent,
    Background,
    Text,
}

/// One brand colour.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrandColor {
    /// `#rrggbb`, lower case.
    pub hex: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<ColorRole>,
    /// Readable text colour on `hex` (`#ffffff` or `#000000`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_color: Option<String>,
    /// WCAG 2 contrast ratio of `textColor` on `hex`, 1 to 21, two decimals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contrast: Option<f64>,
}

/// The role of a font.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FontRole {
    Heading,
    Body,
    Mono,
}

/// One font family the site uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrandFont {
    pub family: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<FontRole>,
}

/// One social profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BrandSocial {
    /// `x`, `facebook`, `linkedin`, `instagram`, `youtube`, `github`, …
    pub network: String,
    pub url: String,
}

/// 200 answer of GET /v1/brand.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BrandResponse {
    pub success: bool,
    pub data: Brand,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached: Option<bool>,
    /// A cached result older than `maxAge`, served because a fresh lookup
    /// failed transiently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    pub credits_used: i64,
    pub request_id: String,
}
