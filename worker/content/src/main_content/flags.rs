//! Readability's passes as flags an attempt may drop, and the thresholds the passes share.

/// Readability's passes, as flags an attempt may drop when its result is short.
pub(super) const STRIP_UNLIKELYS: u8 = 1;
pub(super) const WEIGHT_CLASSES: u8 = 2;
pub(super) const CLEAN_CONDITIONALLY: u8 = 4;
/// See the climb in `grab`.
pub(super) const EXPAND_SCORE: f32 = 0.25;
pub(super) const EXPAND_LINK_DENSITY: f32 = 0.15;
/// See `doc_page_wins`.
pub(super) const DOC_MORE_TEXT: f32 = 1.25;
pub(super) const DOC_LINK_DENSITY: f32 = 0.25;
pub(super) const ALL_FLAGS: u8 = STRIP_UNLIKELYS | WEIGHT_CLASSES | CLEAN_CONDITIONALLY;
/// A selection shorter than this (a heading or two) says nothing: an index
/// page whose content is its lists of links takes the body minus chrome.
pub(super) const NEARLY_EMPTY: u32 = 100;
/// A result shorter than this (rendered characters) is retried with fewer flags.
pub(super) const CHAR_THRESHOLD: u32 = 500;
