//! webdata's content pipeline, pure (no network, no store): one parse of a
//! page, then main content, markdown, text, cleaned HTML, links, metadata,
//! chunks and quality signals from it; PDF text and crawl boilerplate too.
//!
//! Everything walks a flat pre-order copy of the DOM ([`dom`]) with explicit
//! stacks, so deep or hostile pages cost linear time and no native stack.

pub mod boilerplate;
mod chunks;
mod dom;
pub mod fastparse;
mod html;
pub mod llmstxt;
mod main_content;
mod markdown;
mod metadata;
mod parse;
pub mod pdf;
mod quality;
mod serialize;
mod tables;
#[cfg(test)]
mod tests;

use scraper::Selector;
use url::Url;
use webdata_core::types::{Chunk, Format, Metadata, ScrapeOptions};

pub use chunks::{chunk_markdown, count_tokens, truncate_to_tokens, CHUNK_SIZE_RANGE};
/// html5ever behind the depth guard: what every html5ever parse of a page
/// goes through (`includeTags`/`excludeTags` here, brand in the engine).
pub use parse::parse_document as parse_html;
pub use quality::{assess, bot_wall, needs_render, QualitySignals, THIN_WORDS};

use dom::{count_text, Dom, Resolver};
use main_content::{select, Rules};
use markdown::{render, Mode};

/// What to produce from a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentOptions {
    /// Keep only the main content (the spec's `onlyMainContent`, default true).
    pub only_main_content: bool,
    /// CSS selectors: keep only matching elements (overrides main content).
    pub include_tags: Vec<String>,
    /// CSS selectors: drop matching elements.
    pub exclude_tags: Vec<String>,
    /// Produce `markdown`.
    pub want_markdown: bool,
    /// Produce cleaned `html` of the kept content.
    pub want_html: bool,
    /// Produce plain `text`.
    pub want_text: bool,
    /// Produce every link of the page.
    pub want_links: bool,
    /// Keep parsed JSON-LD in the metadata.
    pub want_json_ld: bool,
    /// Produce chunks of at most this many tokens.
    pub chunk_size: Option<usize>,
}

impl Default for ContentOptions {
    fn default() -> Self {
        ContentOptions {
            only_main_content: true,
            include_tags: Vec::new(),
            exclude_tags: Vec::new(),
            want_markdown: true,
            want_html: false,
            want_text: false,
            want_links: false,
            want_json_ld: false,
            chunk_size: None,
        }
    }
}

impl ContentOptions {
    /// The content-related part of a scrape request.
    pub fn from_scrape_options(o: &ScrapeOptions) -> ContentOptions {
        let formats = o.formats();
        let has = |f: Format| formats.contains(&f);
        ContentOptions {
            only_main_content: o.only_main_content(),
            include_tags: o.include_tags.clone().unwrap_or_default(),
            exclude_tags: o.exclude_tags.clone().unwrap_or_default(),
            want_markdown: has(Format::Markdown),
            want_html: has(Format::Html),
            want_text: has(Format::Text),
            want_links: has(Format::Links),
            want_json_ld: has(Format::Metadata),
            chunk_size: has(Format::Chunks).then(|| {
                o.chunk_size()
                    .clamp(CHUNK_SIZE_RANGE.0 as i64, CHUNK_SIZE_RANGE.1 as i64)
                    as usize
            }),
        }
    }
}

/// Everything extracted from one page.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// GitHub-flavoured markdown of the kept content.
    pub markdown: Option<String>,
    /// Cleaned HTML of the kept content, URLs absolute.
    pub html: Option<String>,
    /// Plain text of the kept content.
    pub text: Option<String>,
    /// Every http(s) link of the page, absolute, without fragment, de-duplicated.
    pub links: Option<Vec<String>>,
    /// Token-bounded chunks of the markdown.
    pub chunks: Option<Vec<Chunk>>,
    /// Page metadata (`statusCode`/`contentType` are the caller's to fill).
    pub metadata: Metadata,
    /// Measurements for [`assess`] and [`needs_render`].
    pub quality_signals: QualitySignals,
}

/// Errors of the content pipeline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContentError {
    /// An `includeTags`/`excludeTags` entry is not a valid CSS selector.
    #[error("invalid CSS selector in includeTags/excludeTags: {0:?}")]
    InvalidSelector(String),
}

fn selectors(list: &[String]) -> Result<Vec<Selector>, ContentError> {
    list.iter()
        .map(|s| Selector::parse(s).map_err(|_| ContentError::InvalidSelector(s.clone())))
        .collect()
}

/// Extracts the requested formats from decoded HTML fetched from `page_url`
/// (its final URL, the base for relative links unless the page sets `<base href>`).
pub fn extract(
    html: &str,
    page_url: &Url,
    opts: &ContentOptions,
) -> Result<Extracted, ContentError> {
    let include = selectors(&opts.include_tags)?;
    let exclude = selectors(&opts.exclude_tags)?;
    // CSS selectors need html5ever's tree; every other page is read by the
    // fast parser (several times quicker, linear on hostile markup).
    let (tree, fast);
    let dom = if include.is_empty() && exclude.is_empty() {
        fast = fastparse::parse(html);
        Dom::from_fast(&fast)
    } else {
        tree = parse::parse_document(html);
        Dom::build(&tree)
    };
    let resolver = Resolver::new(&dom, page_url);

    let slug = main_content::url_slug(page_url.path());
    let (main, page_stats) = main_content::main_with_page_stats(&dom, slug);
    let custom = !opts.only_main_content || !include.is_empty() || !exclude.is_empty();
    let chosen = custom.then(|| {
        select(
            &dom,
            &Rules {
                only_main: opts.only_main_content,
                include: &include,
                exclude: &exclude,
                slug,
            },
        )
    });
    let sel = chosen.as_ref().unwrap_or(&main);

    let markdown = (opts.want_markdown || opts.chunk_size.is_some())
        .then(|| nfc(render(&dom, sel, &resolver, Mode::Markdown)));
    let chunks = match (&markdown, opts.chunk_size) {
        (Some(md), Some(size)) => Some(chunk_markdown(md, size, sel.title.as_deref())),
        _ => None,
    };
    let metadata = metadata::extract(&dom, &resolver, opts.want_json_ld);
    Ok(Extracted {
        markdown: markdown.filter(|_| opts.want_markdown),
        html: opts
            .want_html
            .then(|| serialize::html(&dom, sel, &resolver)),
        text: opts
            .want_text
            .then(|| nfc(render(&dom, sel, &resolver, Mode::Text))),
        links: opts.want_links.then(|| serialize::links(&dom, &resolver)),
        chunks,
        quality_signals: quality::signals(&dom, &main, &page_stats, metadata.title.as_deref()),
        metadata,
    })
}

/// Composed Unicode (NFC), the form most text on the web is written in and
/// the one tokenizers and search indexes expect: a page that writes "ü" as
/// "u" + combining diaeresis gives "ü". ASCII and already-composed text
/// (nearly every page) are returned as they are after a quick check
/// (1.7% of the instructions on postgresql-doc-15).
fn nfc(s: String) -> String {
    use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};
    if s.is_ascii() || is_nfc_quick(s.chars()) == IsNormalized::Yes {
        s
    } else {
        s.nfc().collect()
    }
}

/// A page's `<title>` and its links, for URL discovery (map).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// The `<title>` text, whitespace collapsed, when not empty.
    pub title: Option<String>,
    /// Every `<a href>` (and `<area href>`) as an absolute http(s) URL without
    /// fragment, first occurrence first, with the first non-empty text of a
    /// link to it (anchor text, else `title` or `aria-label`, else an image's `alt`).
    pub links: Vec<(Url, Option<String>)>,
    /// The page asks robots not to follow its links (`<meta name="robots" content="nofollow">`).
    pub nofollow: bool,
}

/// Longest link text kept as a title.
const LINK_TEXT_MAX: usize = 200;

/// Reads the title and links of decoded HTML fetched from `page_url`.
pub fn page_links(html: &str, page_url: &Url) -> PageLinks {
    let doc = fastparse::parse(html);
    let dom = Dom::from_fast(&doc);
    let resolver = Resolver::new(&dom, page_url);
    let mut out = PageLinks {
        title: dom
            .find(dom::Tag::Title)
            .map(|i| dom.text_of(i, None))
            .filter(|t| !t.is_empty()),
        ..Default::default()
    };
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for i in 0..dom.len() {
        match dom.tag(i) {
            Some(dom::Tag::Meta) => {
                let robots = dom
                    .attr(i, "name")
                    .is_some_and(|n| n.eq_ignore_ascii_case("robots"));
                if robots
                    && dom.attr(i, "content").is_some_and(|c| {
                        c.split(',').any(|d| {
                            matches!(d.trim().to_ascii_lowercase().as_str(), "nofollow" | "none")
                        })
                    })
                {
                    out.nofollow = true;
                }
                continue;
            }
            Some(dom::Tag::A) => {}
            _ if dom.name(i) == "area" => {}
            _ => continue,
        }
        let Some(mut url) = dom.attr(i, "href").and_then(|h| resolver.http(h)) else {
            continue;
        };
        url.set_fragment(None);
        let text = link_text(&dom, i);
        match index.entry(url.to_string()) {
            std::collections::hash_map::Entry::Occupied(e) => {
                let slot = &mut out.links[*e.get()].1;
                if slot.is_none() {
                    *slot = text;
                }
            }
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(out.links.len());
                out.links.push((url, text));
            }
        }
    }
    out
}

fn link_text(dom: &Dom<'_>, i: usize) -> Option<String> {
    let mut text = dom.text_of(i, None);
    if text.is_empty() {
        text = ["title", "aria-label"]
            .iter()
            .find_map(|a| dom.attr(i, a).map(str::trim).filter(|t| !t.is_empty()))
            .map(str::to_string)
            .or_else(|| {
                let end = dom.nodes[i].end as usize;
                (i..end)
                    .filter(|&j| dom.tag(j) == Some(dom::Tag::Img))
                    .find_map(|j| dom.attr(j, "alt").map(str::trim).filter(|t| !t.is_empty()))
                    .map(str::to_string)
            })
            .unwrap_or_default();
    }
    if text.is_empty() {
        return None;
    }
    if text.len() > LINK_TEXT_MAX {
        let mut cut = LINK_TEXT_MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text = text.trim_end().to_string();
    }
    Some(text)
}

/// Content of a non-HTML response (plain text, markdown, JSON, XML): markdown
/// is the text itself, JSON pretty-printed in a fenced block, XML fenced. The
/// caller reports the `non_html` issue and fills status and content type.
pub fn text_document(body: &str, content_type: &str) -> Extracted {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let is_json = mime == "application/json" || mime.ends_with("+json") || mime == "text/json";
    let is_xml = mime.ends_with("/xml") || mime.ends_with("+xml");
    let fenced = |lang: &str, code: &str| {
        let run = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(run.max(2) + 1);
        format!("{fence}{lang}\n{}\n{fence}", code.trim_end())
    };
    let (markdown, text) = if is_json {
        let pretty = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| body.to_string());
        (fenced("json", &pretty), pretty)
    } else if is_xml {
        (fenced("xml", body), body.to_string())
    } else {
        (body.trim().to_string(), body.to_string())
    };
    let title = (mime == "text/markdown")
        .then(|| {
            body.lines()
                .find_map(|l| l.strip_prefix("# ").map(|t| t.trim().to_string()))
        })
        .flatten();
    let (chars, words) = count_text(&text);
    Extracted {
        markdown: Some(markdown),
        text: Some(text),
        metadata: Metadata {
            title,
            ..Metadata::default()
        },
        quality_signals: QualitySignals {
            main_chars: chars,
            main_words: words,
            body_chars: chars,
            body_words: words,
            ..QualitySignals::default()
        },
        ..Extracted::default()
    }
}
