//! Change tracking: a scraped page compared with the organization's previous
//! snapshot of it (per tag). The comparison is over the main-content
//! markdown with whitespace normalised, so re-indented or re-wrapped text
//! and chrome that main-content extraction drops (navigation, footers) are
//! `same`; the diff is a unified line diff computed by `similar`.

use crate::urlnorm;
use serde_json::{json, Map, Value};
use url::Url;
use webdata_core::store::{rfc3339, NewSnapshot, SnapshotWrite};
use webdata_core::types::{
    ChangeDiff, ChangeStatus, ChangeTracking, Document, ScrapeOptions, Visibility,
};
use webdata_core::{ErrorCode, Store, StoreError};

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

/// Reads the `json` mode's fields from a page's main-content markdown: the
/// extract model, which the API holds (the engine has none).
pub trait FieldReader {
    fn read(
        &self,
        url: &str,
        markdown: &str,
    ) -> impl std::future::Future<Output = Result<Value, (ErrorCode, String)>> + Send;
}

/// No model: tracking without the `json` mode.
pub struct NoFields;

impl FieldReader for NoFields {
    async fn read(&self, _url: &str, _markdown: &str) -> Result<Value, (ErrorCode, String)> {
        Err((
            ErrorCode::NotConfigured,
            "no extract model is configured".into(),
        ))
    }
}

/// Why tracking failed: the store, or reading the fields.
#[derive(Debug)]
pub enum TrackError {
    Store(StoreError),
    Fields(ErrorCode, String),
}

impl From<StoreError> for TrackError {
    fn from(e: StoreError) -> Self {
        TrackError::Store(e)
    }
}

/// What tracking did beyond the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tracked {
    /// The model read the page's fields (the `json` mode; billed).
    pub fields_read: bool,
    /// With [`Tracking::defer_write`]: the snapshot change for the caller
    /// to write (with the scrape's charge).
    pub write: Option<SnapshotWrite>,
}

/// The top-level fields whose values differ between two readings, as
/// `{"field": {"previous": …, "current": …}}`, in the current reading's
/// order, then fields only the previous one had. A reading that is not an
/// object counts as having no fields.
pub fn field_changes(previous: Option<&Value>, current: &Value) -> Map<String, Value> {
    let empty = Map::new();
    let prev = previous.and_then(Value::as_object).unwrap_or(&empty);
    let cur = current.as_object().unwrap_or(&empty);
    let mut out = Map::new();
    let keys = cur
        .keys()
        .chain(prev.keys().filter(|k| !cur.contains_key(*k)));
    for k in keys {
        let (p, c) = (prev.get(k), cur.get(k));
        if p != c {
            out.insert(
                k.clone(),
                json!({ "previous": p.cloned().unwrap_or(Value::Null), "current": c.cloned().unwrap_or(Value::Null) }),
            );
        }
    }
    out
}

/// One tracked page's context.
pub struct Tracking<'a> {
    pub store: &'a Store,
    pub org_id: &'a str,
    pub options: &'a ScrapeOptions,
    pub found: Found,
    pub crawl_id: Option<&'a str>,
    pub markdown_asked: bool,
    /// The scrape is billed (a page, not an error answer or a bot wall):
    /// only such a page becomes the baseline, and only it is read.
    pub billable: bool,
    /// Leave the snapshot change in [`Tracked::write`] instead of writing
    /// it: a scrape writes it in the transaction of its charge.
    pub defer_write: bool,
}

/// The history the `json` mode keeps under a tag: its own, per schema and
/// prompt, so crawls and `git-diff` scrapes of the page (which store no
/// reading) never replace its baseline, and a changed schema starts anew.
pub fn json_history_tag(options: &ScrapeOptions) -> String {
    use sha2::{Digest, Sha256};
    let ct = options.change_tracking_options.as_ref();
    let asked = json!([
        ct.and_then(|c| c.schema.as_ref()),
        ct.and_then(|c| c.prompt.as_deref())
    ]);
    let digest = Sha256::digest(asked.to_string().as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}\u{1f}json:{hex}", options.change_tag())
}

impl Tracking<'_> {
    /// Compares `doc` with the organization's previous snapshot under the
    /// request's tag, sets `doc.changeTracking` and stores the new snapshot
    /// (crawls and batches: no `json` mode). A page that now answers 404 or
    /// 410 after a snapshot is `removed` (and its snapshot forgotten, so a
    /// page that comes back is `new`). A page that is not billable (another
    /// error status, a bot wall) is compared but does not become the
    /// baseline. The `markdown` the comparison needed is removed again when
    /// it was not asked for.
    pub async fn run_plain(&self, doc: &mut Document) -> Result<Tracked, StoreError> {
        match self.run(doc, None::<&NoFields>).await {
            Ok(tracked) => Ok(tracked),
            Err(TrackError::Store(e)) => Err(e),
            // No reader, no reading.
            Err(TrackError::Fields(_, m)) => Err(StoreError::Invalid(m)),
        }
    }

    /// [`Tracking::run_plain`], and with the `json` mode (`reader` given and the mode
    /// asked for) the page's fields, in the mode's own history
    /// ([`json_history_tag`]): read by the model when the page is new or
    /// changed, carried over when it is the same, compared with the
    /// previous reading when it changed. A page with no text is not sent
    /// (its reading is `{}`). A failed reading fails the whole tracking
    /// and stores nothing, so a retry compares with the same baseline.
    pub async fn run<R: FieldReader>(
        &self,
        doc: &mut Document,
        reader: Option<&R>,
    ) -> Result<Tracked, TrackError> {
        let (store, org_id, options) = (self.store, self.org_id, self.options);
        let mut tracked = Tracked::default();
        let Ok(url) = Url::parse(&doc.url) else {
            return Ok(tracked);
        };
        let reader = reader.filter(|_| options.change_json_wanted());
        let json_tag = reader.map(|_| json_history_tag(options));
        let tag = json_tag.as_deref().unwrap_or(options.change_tag());
        let key = snapshot_key(&url);
        let previous = store.change_snapshot(org_id, tag, &key).await?;
        let current = doc.markdown.clone().unwrap_or_default();
        let gone = doc
            .metadata
            .as_ref()
            .and_then(|m| m.status_code)
            .is_some_and(|s| s == 404 || s == 410);
        let now = webdata_core::store::now_ms();
        let previous_fields: Option<Value> = previous
            .as_ref()
            .and_then(|p| p.fields.as_deref())
            .and_then(|f| serde_json::from_str(f).ok());
        let mut json_changes = None;
        let (status, diff) = if gone && previous.is_some() {
            tracked.write = Some(SnapshotWrite::Delete {
                org_id: org_id.into(),
                tag: tag.into(),
                url_key: key.clone(),
            });
            (ChangeStatus::Removed, None)
        } else {
            let (status, diff) = compare(previous.as_ref().map(|p| p.markdown.as_str()), &current);
            // Only a billed page becomes the baseline (an error answer or a
            // bot wall would make the next good scrape `changed`).
            if self.billable && !gone {
                // The same text keeps its reading; new text is read again.
                let fields = match (reader, status, &previous_fields) {
                    (Some(_), ChangeStatus::Same, Some(f)) => Some(f.clone()),
                    (Some(_), _, _) if normalize(&current).is_empty() => {
                        Some(Value::Object(Map::new()))
                    }
                    (Some(r), _, _) => {
                        let v = r
                            .read(url.as_str(), &current)
                            .await
                            .map_err(|(code, m)| TrackError::Fields(code, m))?;
                        tracked.fields_read = true;
                        Some(v)
                    }
                    (None, _, _) => None,
                };
                if status == ChangeStatus::Changed {
                    if let (Some(prev), Some(f)) = (&previous_fields, &fields) {
                        json_changes = Some(field_changes(Some(prev), f));
                    }
                }
                let fields_text = fields.as_ref().map(Value::to_string);
                tracked.write = Some(SnapshotWrite::put(&NewSnapshot {
                    org_id,
                    tag,
                    url_key: &key,
                    url: url.as_str(),
                    site: &site_of(&url),
                    markdown: &current,
                    scraped_at: now,
                    crawl_id: self.crawl_id,
                    fields: fields_text.as_deref(),
                }));
            }
            (status, diff)
        };
        if !self.defer_write {
            if let Some(w) = tracked.write.take() {
                store.write_change_snapshot(&w).await?;
            }
        }
        doc.change_tracking = Some(ChangeTracking {
            previous_scrape_at: previous.as_ref().map(|p| rfc3339(p.scraped_at)),
            change_status: status,
            visibility: match self.found {
                Found::Visible => Visibility::Visible,
                Found::Hidden => Visibility::Hidden,
            },
            diff: diff
                .filter(|_| options.change_diff_wanted())
                .map(|text| ChangeDiff { text }),
            json: json_changes,
        });
        if !self.markdown_asked {
            doc.markdown = None;
        }
        Ok(tracked)
    }
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
    fn only_differing_fields_are_listed() {
        let prev = json!({"price": 9, "plan": "Pro", "old": true});
        let cur = json!({"price": 39, "plan": "Pro", "new": [1]});
        let got = field_changes(Some(&prev), &cur);
        assert_eq!(
            Value::Object(got),
            json!({
                "price": {"previous": 9, "current": 39},
                "new": {"previous": null, "current": [1]},
                "old": {"previous": true, "current": null},
            })
        );
        assert!(field_changes(Some(&cur), &cur).is_empty());
        assert_eq!(field_changes(None, &json!({"a": 1})).len(), 1);
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
