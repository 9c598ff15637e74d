//! XML sitemaps: `<urlset>` and `<sitemapindex>` read as a stream of events.

use std::cell::Cell;
use std::io::{self, BufRead};

use quick_xml::events::{BytesRef, Event};
use quick_xml::Reader;

use super::limits::{MAX_ENTRIES_PER_FILE, MAX_FIELD_BYTES};
use super::{Sitemap, SitemapError, SitemapUrl};

#[derive(Clone, Copy, PartialEq)]
enum Root {
    UrlSet,
    Index,
}

#[derive(Clone, Copy, PartialEq)]
enum Field {
    Loc,
    Lastmod,
    Title,
}

/// Text collected for the field being read, bounded by [`MAX_FIELD_BYTES`].
struct FieldText {
    field: Field,
    depth: usize,
    text: String,
    overflowed: bool,
}

impl FieldText {
    fn push(&mut self, s: &str) {
        if self.text.len() + s.len() > MAX_FIELD_BYTES {
            self.overflowed = true;
        } else {
            self.text.push_str(s);
        }
    }

    fn push_ref(&mut self, r: &BytesRef<'_>) {
        if let Ok(Some(ch)) = r.resolve_char_ref() {
            self.push(ch.encode_utf8(&mut [0u8; 4]));
            return;
        }
        let name = String::from_utf8_lossy(r);
        match quick_xml::escape::resolve_predefined_entity(&name) {
            Some(s) => self.push(s),
            // An HTML entity or a dangling `&`: keep it as written.
            None => self.push(&format!("&{name};")),
        }
    }

    fn finish(self) -> Option<String> {
        let text = self.text.trim();
        (!self.overflowed && !text.is_empty()).then(|| text.to_owned())
    }
}

fn local_is(name: &[u8], want: &str) -> bool {
    name.eq_ignore_ascii_case(want.as_bytes())
}

pub(super) fn parse_xml<R: BufRead>(
    input: R,
    exceeded: &Cell<bool>,
) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_reader(input);
    {
        let config = reader.config_mut();
        // Unescaped `&` in query strings is the commonest sitemap mistake.
        config.allow_dangling_amp = true;
        // Skip whitespace between elements without buffering it (see the field switch below).
        config.trim_text_start = true;
    }
    let mut buf = Vec::with_capacity(4096);
    let mut root = None;
    let mut depth = 0usize;
    let mut entry: Option<SitemapUrl> = None;
    let mut field: Option<FieldText> = None;
    let mut urls = Vec::new();
    let mut sitemaps = Vec::new();
    let mut truncated = false;

    loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            // Cut by the size cap, or a corrupt or cut gzip stream: keep what was read.
            Err(_) if exceeded.get() && root.is_some() => {
                truncated = true;
                break;
            }
            Err(quick_xml::Error::Io(e)) if root.is_some() => {
                tracing::debug!(error = %e, "sitemap stream ended early");
                truncated = true;
                break;
            }
            Err(quick_xml::Error::Io(e)) => {
                return Err(SitemapError::Read(io::Error::new(e.kind(), e.to_string())))
            }
            Err(e) => {
                return Err(SitemapError::Xml {
                    position: reader.error_position(),
                    message: e.to_string(),
                })
            }
        };
        match event {
            Event::Start(e) => {
                depth += 1;
                let name = e.local_name();
                let name = name.as_ref();
                match (depth, root) {
                    (1, _) => {
                        root = Some(if local_is(name, "urlset") {
                            Root::UrlSet
                        } else if local_is(name, "sitemapindex") {
                            Root::Index
                        } else {
                            return Err(SitemapError::NotASitemap(
                                String::from_utf8_lossy(name).into_owned(),
                            ));
                        });
                    }
                    (2, Some(kind)) => {
                        let entry_name = if kind == Root::UrlSet {
                            "url"
                        } else {
                            "sitemap"
                        };
                        if local_is(name, entry_name) {
                            if urls.len() + sitemaps.len() >= MAX_ENTRIES_PER_FILE {
                                truncated = true;
                                break;
                            }
                            entry = Some(SitemapUrl {
                                loc: String::new(),
                                lastmod: None,
                                title: None,
                            });
                        }
                    }
                    (d, Some(kind)) if entry.is_some() && field.is_none() => {
                        let which = if d == 3 && local_is(name, "loc") {
                            Some(Field::Loc)
                        } else if d == 3 && local_is(name, "lastmod") {
                            Some(Field::Lastmod)
                        } else if kind == Root::UrlSet
                            && local_is(name, "title")
                            && entry.as_ref().is_some_and(|u| u.title.is_none())
                        {
                            Some(Field::Title)
                        } else {
                            None
                        };
                        if let Some(which) = which {
                            field = Some(FieldText {
                                field: which,
                                depth: d,
                                text: String::new(),
                                overflowed: false,
                            });
                            reader.config_mut().trim_text_start = false;
                        }
                    }
                    _ => {}
                }
            }
            Event::End(_) => {
                if field.as_ref().is_some_and(|f| f.depth == depth) {
                    if let (Some(done), Some(current)) = (field.take(), entry.as_mut()) {
                        let which = done.field;
                        let value = done.finish();
                        match which {
                            Field::Loc => current.loc = value.unwrap_or_default(),
                            Field::Lastmod => current.lastmod = value,
                            Field::Title => current.title = value,
                        }
                    }
                    reader.config_mut().trim_text_start = true;
                }
                if depth == 2 {
                    if let Some(done) = entry.take() {
                        if !done.loc.is_empty() {
                            match root {
                                Some(Root::Index) => sitemaps.push(done.loc),
                                _ => urls.push(done),
                            }
                        }
                    }
                }
                depth = depth.saturating_sub(1);
                if depth == 0 && root.is_some() {
                    break;
                }
            }
            Event::Text(t) => {
                if let Some(f) = field.as_mut() {
                    f.push(&String::from_utf8_lossy(&t));
                }
            }
            Event::CData(t) => {
                if let Some(f) = field.as_mut() {
                    f.push(&String::from_utf8_lossy(&t));
                }
            }
            Event::GeneralRef(r) => {
                if let Some(f) = field.as_mut() {
                    f.push_ref(&r);
                }
            }
            Event::Eof => {
                if root.is_none() {
                    return Err(SitemapError::Xml {
                        position: reader.buffer_position(),
                        message: "the document has no root element".to_owned(),
                    });
                }
                // Ended before the root closed: a cut download or the size cap.
                truncated = true;
                break;
            }
            Event::Empty(_)
            | Event::Comment(_)
            | Event::Decl(_)
            | Event::PI(_)
            | Event::DocType(_) => {}
        }
    }
    Ok(match root {
        Some(Root::Index) => Sitemap::Index {
            sitemaps,
            truncated,
        },
        _ => Sitemap::UrlSet { urls, truncated },
    })
}
