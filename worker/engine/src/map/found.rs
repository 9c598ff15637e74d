//! The URLs accepted so far, by dedup key: each with its best title and
//! the earliest discovery phase that found it.

use std::collections::HashMap;

use url::Url;
use webdata_core::types::LinkSource;

use super::MAX_COLLECTED;
use crate::urlnorm;

/// Discovery phases, in the order results are listed when not ranked.
pub(super) const PHASE_START: u8 = 0;
pub(super) const PHASE_SITEMAP: u8 = 1;
pub(super) const PHASE_LINK: u8 = 2;
pub(super) const PHASE_RENDER: u8 = 3;

/// How good a title is: a page's own `<title>` beats a sitemap title, which
/// beats the text of a link to the page.
pub(super) const TITLE_PAGE: u8 = 3;
pub(super) const TITLE_SITEMAP: u8 = 2;
pub(super) const TITLE_LINK_TEXT: u8 = 1;

pub(super) struct Entry {
    pub(super) url: Url,
    pub(super) title: Option<String>,
    pub(super) title_rank: u8,
    pub(super) source: LinkSource,
    pub(super) phase: u8,
    pub(super) seq: usize,
}

/// Accepted URLs by dedup key.
#[derive(Default)]
pub(super) struct Found {
    pub(super) entries: Vec<Entry>,
    pub(super) index: HashMap<String, usize, rustc_hash::FxBuildHasher>,
    pub(super) seq: usize,
}

impl Found {
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Adds `url` (already normalised) or improves its entry.
    pub(super) fn add(&mut self, url: &Url, phase: u8, title: Option<String>, title_rank: u8) {
        let source = match phase {
            PHASE_SITEMAP => LinkSource::Sitemap,
            PHASE_RENDER => LinkSource::Render,
            _ => LinkSource::Link,
        };
        let title = title.filter(|t| !t.trim().is_empty());
        self.seq += 1;
        let key = urlnorm::dedup_key_of_normalized(url);
        if let Some(&i) = self.index.get(&key) {
            let e = &mut self.entries[i];
            if phase < e.phase {
                e.phase = phase;
                e.seq = self.seq;
                e.source = source;
            }
            if title.is_some() && title_rank > e.title_rank {
                e.title = title;
                e.title_rank = title_rank;
            }
            return;
        }
        if self.entries.len() >= MAX_COLLECTED {
            return;
        }
        self.index.insert(key, self.entries.len());
        self.entries.push(Entry {
            url: url.clone(),
            title_rank: if title.is_some() { title_rank } else { 0 },
            title,
            source,
            phase,
            seq: self.seq,
        });
    }
}
