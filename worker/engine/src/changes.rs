//! Change tracking: a scraped page compared with the organization's previous
//! snapshot of it (per tag). The comparison is over the main-content
//! markdown with whitespace normalised, so re-indented or re-wrapped text
//! and chrome that main-content extraction drops (navigation, footers) are
//! `same`; the diff is a unified line diff computed by `similar`.

use crate::urlnorm;
use url::Url;
use webdata_core::store::{rfc3339, NewSnapshot};
use webdata_core::types::{
    ChangeDiff, ChangeStatus, ChangeTracking, Document, ScrapeOptions, Visibility,
};
use webdata_core::{Store, StoreError};

/// Lines of context around each change in the diff.
const CONTEXT: usize = 3;

/// `markdown` with every line trimmed, runs of whitespace made one space and
/// blank lines dropped: what the comparison sees.
pub fn normalize(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    for line in markdown.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        out.push_str(first);
        for w in words {
            out.push(' ');
            out.push_str(w);
        }
        out.push('\n');
    }
    out
}

/// The status and, when changed, the unified diff of `previous` → `current`.
pub fn compare(previous: Option<&str>, current: &str) -> (ChangeStatus, Option<String>) {
    let Some(previous) = previous else {
        return (ChangeStatus::New, None);
    };
    let (old, new) = (normalize(previous), normalize(current));
    if old == new {
        return (ChangeStatus::Same, None);
    }
    let diff = similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header("previous", "current")
        .to_string();
    (ChangeStatus::Changed, Some(diff))
}

/// The snapshot key of a URL: the crawl frontier's dedup key, so the same
/// page scraped alone and found by a crawl shares one history.
pub fn snapshot_key(url: &Url) -> String {
    urlnorm::dedup_key(&urlnorm::normalize(url))
}

/// The page's site for snapshots: scheme, host and port.
pub fn site_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Adds the `markdown` format the comparison needs to a change-tracked
/// request; returns whether the caller asked for markdown itself.
pub fn ensure_markdown(options: &mut ScrapeOptions) -> bool {
    use webdata_core::types::Format;
    let mut formats = options.formats();
    if formats.contains(&Format::Markdown) {
        return true;
    }
    if options.tracks_changes() {
        formats.push(Format::Markdown);
        options.formats = Some(formats);
    }
    false
}

/// Where a tracked page was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Asked for by URL, or reached through links or a sitemap.
    Visible,
    /// Known only from a previous snapshot: no longer linked.
    Hidden,
}

/// Compares `doc` with the organization's previous snapshot under the
/// request's tag, sets `doc.changeTracking` and stores the new snapshot.
/// A page that now answers 404 or 410 after a snapshot is `removed` (and
/// its snapshot forgotten, so a page that comes back is `new`). The
/// `markdown` the comparison needed is removed again when it was not asked
/// for.
pub async fn track(
    store: &Store,
    org_id: &str,
    options: &ScrapeOptions,
    doc: &mut Document,
    found: Found,
    crawl_id: Option<&str>,
    markdown_asked: bool,
) -> Result<(), StoreError> {
    let Ok(url) = Url::parse(&doc.url) else {
        return Ok(());
    };
    let tag = options.change_tag();
    let key = snapshot_key(&url);
    let previous = store.change_snapshot(org_id, tag, &key).await?;
    let current = doc.markdown.clone().unwrap_or_default();
    let gone = doc
        .metadata
        .as_ref()
        .and_then(|m| m.status_code)
        .is_some_and(|s| s == 404 || s == 410);
    let now = webdata_core::store::now_ms();
    let (status, diff) = if gone && previous.is_some() {
        store.delete_change_snapshot(org_id, tag, &key).await?;
        (ChangeStatus::Removed, None)
    } else {
        let (status, diff) = compare(previous.as_ref().map(|p| p.markdown.as_str()), &current);
        if !gone {
            store
                .put_change_snapshot(&NewSnapshot {
                    org_id,
                    tag,
                    url_key: &key,
                    url: url.as_str(),
                    site: &site_of(&url),
                    markdown: &current,
                    scraped_at: now,
                    crawl_id,
                })
                .await?;
        }
        (status, diff)
    };
    doc.change_tracking = Some(ChangeTracking {
        previous_scrape_at: previous.as_ref().map(|p| rfc3339(p.scraped_at)),
        change_status: status,
        visibility: match found {
            Found::Visible => Visibility::Visible,
            Found::Hidden => Visibility::Hidden,
        },
        diff: diff
            .filter(|_| options.change_diff_wanted())
            .map(|text| ChangeDiff { text }),
    });
    if !markdown_asked {
        doc.markdown = None;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_only_changes_are_the_same() {
        let (s, d) = compare(
            Some("# Title\n\nSome  text here.\n\n\n- a\n"),
            "#   Title\n  Some text here.  \n- a",
        );
        assert_eq!((s, d), (ChangeStatus::Same, None));
    }

    #[test]
    fn a_changed_line_is_a_unified_diff() {
        let (s, d) = compare(
            Some("# Prices\n\nStarter: $9\nPro: $29\n"),
            "# Prices\n\nStarter: $9\nPro: $39\n",
        );
        assert_eq!(s, ChangeStatus::Changed);
        let d = d.expect("diff");
        assert!(d.starts_with("--- previous\n+++ current\n@@"), "{d}");
        assert!(d.contains("\n-Pro: $29\n+Pro: $39\n"), "{d}");
        assert!(d.contains("\n Starter: $9\n"), "{d}");
    }

    #[test]
    fn first_scrape_is_new() {
        assert_eq!(compare(None, "x"), (ChangeStatus::New, None));
    }

    #[test]
    fn one_page_has_one_key_however_it_is_written() {
        let a = Url::parse("HTTP://Example.com:80/a/./b?").expect("a");
        let b = Url::parse("http://example.com/a/b").expect("b");
        assert_eq!(snapshot_key(&a), snapshot_key(&b));
        assert_eq!(site_of(&b), "http://example.com");
    }
}
