//! llms.txt (<https://llmstxt.org>) from a crawl's pages, pure: an H1 with
//! the site's title, a one-line blockquote summary, then one H2 section per
//! first URL path segment listing `- [title](url): description`; and
//! llms-full.txt, every page's markdown under a heading with its title and
//! URL, in the same order.
//!
//! Sections: pages directly at the root (`/`, `/about`) come first under
//! [`ROOT_SECTION`]; a page deeper than that (`/guide/`, `/guide/intro`)
//! goes under its first path segment (`Guide`), a page of another host under
//! that host. Sections after the root one are in alphabetical order, pages
//! within a section in URL order, so the same site gives the same file.
//!
//! A page's description is its `metadata.description`, else the first
//! paragraph of its markdown as plain text (links, emphasis, code marks and
//! images removed), one line, at most [`DESCRIPTION_MAX`] characters.
//! Titles escape `\`, `[` and `]`; nothing can break a line.

use std::collections::{BTreeMap, HashSet};
use url::Url;

/// Longest description of a page line, in characters.
pub const DESCRIPTION_MAX: usize = 200;
/// Longest site summary (the blockquote), in characters.
pub const SUMMARY_MAX: usize = 300;
/// Longest page title, in characters.
pub const TITLE_MAX: usize = 200;
/// The section of the pages directly at the site's root.
pub const ROOT_SECTION: &str = "Pages";

/// One crawled page.
#[derive(Debug, Clone, Copy, Default)]
pub struct Page<'a> {
    /// Where the page is (its link in llms.txt).
    pub url: &'a str,
    /// The URL that was asked for, when it redirected to `url`.
    pub requested_url: Option<&'a str>,
    /// `metadata.title`.
    pub title: Option<&'a str>,
    /// `metadata.description`.
    pub description: Option<&'a str>,
    /// Main-content markdown.
    pub markdown: &'a str,
}

/// Both files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmsTxt {
    /// llms.txt.
    pub llms_txt: String,
    /// llms-full.txt.
    pub llms_full_txt: String,
}

/// Builds llms.txt and llms-full.txt for the site crawled from `start_url`.
/// A page listed twice (same URL without its fragment) is kept once.
pub fn build(start_url: &str, pages: &[Page<'_>]) -> LlmsTxt {
    let start = Url::parse(start_url.trim()).ok();
    let host = start
        .as_ref()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| start_url.trim().to_string());
    let mut seen = HashSet::new();
    let pages: Vec<&Page<'_>> = pages
        .iter()
        .filter(|p| seen.insert(page_key(p.url)))
        .collect();
    let home = start.as_ref().and_then(|s| {
        pages
            .iter()
            .find(|p| same_page(s, p.url) || p.requested_url.is_some_and(|r| same_page(s, r)))
    });
    let title = home
        .and_then(|p| p.title)
        .map(|t| truncate(&one_line(t), TITLE_MAX))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| host.clone());
    let summary = home
        .and_then(|p| describe(p, SUMMARY_MAX))
        .unwrap_or_else(|| format!("The pages of {host}."));

    // Sections: the root one first, then by name; pages by URL.
    let mut root: Vec<&Page<'_>> = Vec::new();
    let mut sections: BTreeMap<String, (String, Vec<&Page<'_>>)> = BTreeMap::new();
    for p in &pages {
        match section_of(start.as_ref(), p.url) {
            None => root.push(p),
            Some(name) => {
                sections
                    .entry(name.to_lowercase())
                    .or_insert_with(|| (name.clone(), Vec::new()))
                    .1
                    .push(p);
            }
        }
    }
    let mut ordered: Vec<(String, Vec<&Page<'_>>)> = Vec::new();
    if !root.is_empty() {
        ordered.push((ROOT_SECTION.to_string(), root));
    }
    ordered.extend(sections.into_values());
    for (_, list) in &mut ordered {
        list.sort_by(|a, b| a.url.cmp(b.url));
    }

    let mut txt = format!("# {title}\n\n> {summary}\n");
    let mut full = String::new();
    for (name, list) in &ordered {
        txt.push_str(&format!("\n## {name}\n\n"));
        for p in list {
            let t = page_title(p);
            txt.push_str(&format!(
                "- [{}]({})",
                escape_link_text(&t),
                link_url(p.url)
            ));
            if let Some(d) = describe(p, DESCRIPTION_MAX) {
                txt.push_str(": ");
                txt.push_str(&d);
            }
            txt.push('\n');
            if !full.is_empty() {
                full.push('\n');
            }
            full.push_str(&format!("# {t}\n\nSource: {}\n", p.url));
            let md = p.markdown.trim();
            if !md.is_empty() {
                full.push('\n');
                full.push_str(md);
                full.push('\n');
            }
        }
    }
    LlmsTxt {
        llms_txt: txt,
        llms_full_txt: full,
    }
}

/// The page's URL without its fragment (what makes two entries one page).
fn page_key(url: &str) -> String {
    match Url::parse(url.trim()) {
        Ok(mut u) => {
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.trim().to_string(),
    }
}

/// Whether `url` is the start page (fragment and a trailing `/` ignored).
fn same_page(start: &Url, url: &str) -> bool {
    let Ok(u) = Url::parse(url.trim()) else {
        return false;
    };
    u.host_str() == start.host_str()
        && u.port_or_known_default() == start.port_or_known_default()
        && u.path().trim_end_matches('/') == start.path().trim_end_matches('/')
        && u.query() == start.query()
}

/// The section of a page: `None` for a page directly at the root, else its
/// first path segment made readable (`getting-started` → `Getting started`);
/// a page of another host than the start page's goes under that host.
pub fn section_of(start: Option<&Url>, url: &str) -> Option<String> {
    let u = Url::parse(url.trim()).ok()?;
    if let (Some(s), Some(h)) = (start.and_then(Url::host_str), u.host_str()) {
        if s != h {
            return Some(h.to_string());
        }
    }
    let path = u.path().trim_start_matches('/');
    // `/about` is at the root; `/guide/` and `/guide/intro` are in `guide`.
    let (first, _) = path.split_once('/')?;
    let name = readable_segment(first);
    if name.is_empty() {
        None
    } else {
        Some(name)
    }
}

/// A path segment as a heading: percent-decoded, `-` and `_` as spaces, the
/// first letter upper case.
fn readable_segment(seg: &str) -> String {
    let decoded = percent_decode(seg);
    let spaced: String = decoded
        .chars()
        .map(|c| if c == '-' || c == '_' { ' ' } else { c })
        .collect();
    let line = one_line(&spaced);
    let mut chars = line.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The page's title on one line, else its last path segment, else its URL.
fn page_title(p: &Page<'_>) -> String {
    let t = p
        .title
        .map(|t| truncate(&one_line(t), TITLE_MAX))
        .unwrap_or_default();
    if !t.is_empty() {
        return t;
    }
    Url::parse(p.url.trim())
        .ok()
        .and_then(|u| {
            u.path_segments()
                .and_then(|mut s| s.rfind(|s| !s.is_empty()).map(readable_segment))
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| p.url.trim().to_string())
}

/// The page's description (its own, else its markdown's first paragraph)
/// on one line, at most `max` characters.
fn describe(p: &Page<'_>, max: usize) -> Option<String> {
    p.description
        .map(one_line)
        .filter(|d| !d.is_empty())
        .map(|d| truncate(&d, max))
        .or_else(|| first_paragraph(p.markdown).map(|d| truncate(&d, max)))
}

/// Link text with `\`, `[` and `]` escaped (CommonMark backslash escapes).
pub fn escape_link_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A link destination that cannot end early or span lines: spaces,
/// parentheses and angle brackets percent-encoded.
fn link_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.trim().chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            c if c.is_control() || c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

/// `s` on one line: every run of whitespace or control characters is one
/// space, ends trimmed.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        if c.is_whitespace() || c.is_control() {
            space = true;
        } else {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.push(c);
        }
    }
    out
}

/// At most `max` characters: cut after the last sentence that fits when one
/// ends past a fifth of `max`, else at the last space with `…`.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    let sentence_end = head
        .char_indices()
        .rev()
        .find(|&(i, c)| {
            matches!(c, '.' | '!' | '?')
                && head[i + c.len_utf8()..].starts_with(' ')
                && head[..i].chars().count() >= max / 5
        })
        .map(|(i, c)| i + c.len_utf8());
    if let Some(end) = sentence_end {
        return head[..end].to_string();
    }
    let cut: String = s.chars().take(max - 1).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > 0 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// The first paragraph of `markdown` as plain text on one line: headings,
/// code blocks, tables, images, rules and HTML are skipped; the first list
/// item or quote is used only when there is no paragraph.
pub fn first_paragraph(markdown: &str) -> Option<String> {
    #[derive(PartialEq)]
    enum Kind {
        Para,
        Item,
        Quote,
    }
    let mut fallback: Option<String> = None;
    let mut in_code = false;
    let mut block: Vec<&str> = Vec::new();
    let mut kind = Kind::Para;
    // Ends the open block: a paragraph is the answer, anything else only
    // the fallback.
    macro_rules! flush {
        () => {
            if !block.is_empty() {
                let text = plain(&block.join(" "));
                block.clear();
                if !text.is_empty() {
                    if kind == Kind::Para {
                        return Some(text);
                    }
                    fallback.get_or_insert(text);
                }
            }
        };
    }
    for raw in markdown.lines().chain(std::iter::once("")) {
        let line = raw.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            flush!();
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        let skip = line.is_empty()
            || line.starts_with('#')
            || line.starts_with('|')
            || line.starts_with('<')
            || is_rule(line)
            || (line.starts_with("![") && plain(line).is_empty());
        if skip {
            flush!();
            continue;
        }
        if let Some(item) = list_item(line) {
            flush!();
            kind = Kind::Item;
            block.push(item);
        } else if let Some(q) = line.strip_prefix('>') {
            if kind != Kind::Quote || block.is_empty() {
                flush!();
                kind = Kind::Quote;
            }
            block.push(q.trim_start_matches('>').trim());
        } else {
            if block.is_empty() {
                kind = Kind::Para;
            }
            block.push(line);
        }
    }
    fallback
}

fn is_rule(line: &str) -> bool {
    let l: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    l.len() >= 3
        && (l.chars().all(|c| c == '-')
            || l.chars().all(|c| c == '*')
            || l.chars().all(|c| c == '_'))
}

/// The text of a list item line (`- x`, `* x`, `+ x`, `1. x`, `1) x`).
fn list_item(line: &str) -> Option<&str> {
    for m in ["- ", "* ", "+ "] {
        if let Some(r) = line.strip_prefix(m) {
            return Some(r.trim());
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && digits < 10 {
        let rest = &line[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return Some(r.trim());
        }
    }
    None
}

/// Inline markdown as plain text on one line: images dropped, links and
/// autolinks as their text, emphasis and code marks removed, backslash
/// escapes resolved.
pub fn plain(md: &str) -> String {
    let chars: Vec<char> = md.chars().collect();
    let mut out = String::with_capacity(md.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() && chars[i + 1].is_ascii_punctuation() => {
                out.push(chars[i + 1]);
                i += 2;
            }
            '!' if chars.get(i + 1) == Some(&'[') => match link_end(&chars, i + 1) {
                Some((_, end)) => i = end,
                None => {
                    out.push(c);
                    i += 1;
                }
            },
            '[' => match link_end(&chars, i) {
                Some((text, end)) => {
                    out.push_str(&plain(&text));
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            },
            '<' => {
                // An autolink `<https://…>` keeps its address; a tag goes.
                let close = chars[i..].iter().position(|&c| c == '>');
                match close {
                    Some(n) => {
                        let inner: String = chars[i + 1..i + n].iter().collect();
                        if inner.contains("://") || inner.starts_with("mailto:") {
                            out.push_str(&inner);
                        }
                        i += n + 1;
                    }
                    None => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
            '*' | '`' | '~' => i += 1,
            '_' => {
                let before = i > 0 && chars[i - 1].is_alphanumeric();
                let after = chars.get(i + 1).is_some_and(|c| c.is_alphanumeric());
                if before && after {
                    out.push(c);
                }
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    one_line(&out)
}

/// A link or image starting at `open` (`[`): its text and the index after
/// its destination (`(…)` or `[…]`); `None` when it is not a link.
fn link_end(chars: &[char], open: usize) -> Option<(String, usize)> {
    let mut depth = 0;
    let mut i = open;
    let mut close = None;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    let close = close?;
    let text: String = chars[open + 1..close].iter().collect();
    let (o, c) = match chars.get(close + 1) {
        Some('(') => ('(', ')'),
        Some('[') => ('[', ']'),
        _ => return None,
    };
    let mut depth = 0;
    let mut j = close + 1;
    while j < chars.len() {
        if chars[j] == o {
            depth += 1;
        } else if chars[j] == c {
            depth -= 1;
            if depth == 0 {
                return Some((text, j + 1));
            }
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page<'a>(url: &'a str, title: &'a str, desc: Option<&'a str>, md: &'a str) -> Page<'a> {
        Page {
            url,
            requested_url: None,
            title: (!title.is_empty()).then_some(title),
            description: desc,
            markdown: md,
        }
    }

    #[test]
    fn builds_sections_in_a_stable_order_with_the_home_page_as_title() {
        let pages = [
            page(
                "https://d.test/guide/install",
                "Install",
                None,
                "Run **cargo** [install](/x) now.\n\nMore.",
            ),
            page("https://d.test/blog/post", "Post", Some("A post."), "Body"),
            page(
                "https://d.test/",
                "Docs",
                Some("Docs of\nthe tool."),
                "Welcome.",
            ),
            page(
                "https://d.test/guide/",
                "Guide",
                None,
                "# Guide\n\nThe guide.",
            ),
            page(
                "https://d.test/about",
                "About [us]",
                Some("Who\twe are"),
                "",
            ),
            page(
                "https://d.test/guide/install#top",
                "Install again",
                None,
                "",
            ),
        ];
        let out = build("https://d.test", &pages);
        assert_eq!(
            out.llms_txt,
            "# Docs\n\n> Docs of the tool.\n\n\
             ## Pages\n\n\
             - [Docs](https://d.test/): Docs of the tool.\n\
             - [About \\[us\\]](https://d.test/about): Who we are\n\
             \n## Blog\n\n\
             - [Post](https://d.test/blog/post): A post.\n\
             \n## Guide\n\n\
             - [Guide](https://d.test/guide/): The guide.\n\
             - [Install](https://d.test/guide/install): Run cargo install now.\n"
        );
        // Same order in the full text, each page under its title and URL.
        let full = &out.llms_full_txt;
        let order: Vec<usize> = [
            "Source: https://d.test/\n",
            "Source: https://d.test/about",
            "Source: https://d.test/blog/post",
            "Source: https://d.test/guide/\n",
            "Source: https://d.test/guide/install",
        ]
        .iter()
        .map(|s| full.find(s).unwrap_or_else(|| panic!("{s} in {full}")))
        .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{full}");
        assert!(full.starts_with("# Docs\n\nSource: https://d.test/\n\nWelcome.\n"));
        assert!(full.contains("# About [us]\n\nSource: https://d.test/about\n\n# Post"));
        assert!(!full.contains("Install again"));
    }

    #[test]
    fn without_a_home_page_the_host_titles_it() {
        let pages = [page("https://d.test/a/b", "", None, "")];
        let out = build("https://d.test/", &pages);
        assert_eq!(
            out.llms_txt,
            "# d.test\n\n> The pages of d.test.\n\n## A\n\n- [B](https://d.test/a/b)\n"
        );
        // The home page found through the URL that redirected to it.
        let home = Page {
            requested_url: Some("https://d.test/"),
            ..page("https://d.test/docs/", "Home", None, "Hello there.")
        };
        let out = build("https://d.test/", &[home]);
        assert!(
            out.llms_txt
                .starts_with("# Home\n\n> Hello there.\n\n## Docs\n"),
            "{}",
            out.llms_txt
        );
    }

    #[test]
    fn sections_by_first_segment_root_pages_and_other_hosts() {
        let s = Url::parse("https://d.test/").ok();
        let s = s.as_ref();
        assert_eq!(section_of(s, "https://d.test/"), None);
        assert_eq!(section_of(s, "https://d.test/about"), None);
        assert_eq!(section_of(s, "https://d.test/about?x=1"), None);
        assert_eq!(
            section_of(s, "https://d.test/guide/").as_deref(),
            Some("Guide")
        );
        assert_eq!(
            section_of(s, "https://d.test/guide/a/b").as_deref(),
            Some("Guide")
        );
        assert_eq!(
            section_of(s, "https://d.test/getting-started/x").as_deref(),
            Some("Getting started")
        );
        assert_eq!(
            section_of(s, "https://d.test/caf%C3%A9/x").as_deref(),
            Some("Café")
        );
        assert_eq!(
            section_of(s, "https://api.d.test/x").as_deref(),
            Some("api.d.test")
        );
        // `Getting-started` and `getting_started` are one section.
        let pages = [
            page("https://d.test/Getting-started/a", "A", None, ""),
            page("https://d.test/getting_started/b", "B", None, ""),
        ];
        let out = build("https://d.test/", &pages);
        assert_eq!(out.llms_txt.matches("\n## ").count(), 1, "{}", out.llms_txt);
    }

    #[test]
    fn titles_and_urls_cannot_break_the_line() {
        let pages = [page(
            "https://d.test/x/a(b)",
            "A ] tricky\n[title] \\ here",
            Some("line one\r\nline two\u{0}"),
            "",
        )];
        let out = build("https://d.test/", &pages);
        let line = out
            .llms_txt
            .lines()
            .find(|l| l.starts_with("- "))
            .expect("line");
        assert_eq!(
            line,
            "- [A \\] tricky \\[title\\] \\\\ here](https://d.test/x/a%28b%29): line one line two"
        );
    }

    #[test]
    fn descriptions_come_from_the_first_paragraph_as_plain_text() {
        let md = "# Title\n\n![logo](/l.png)\n\n```\ncode here\n```\n\n| a | b |\n|---|---|\n\n\
                  Read the **[guide](https://x.test/g)** and `cargo_install` it, _now_ \\*really\\*.\nSecond line.\n\nNext paragraph.";
        assert_eq!(
            first_paragraph(md).as_deref(),
            Some("Read the guide and cargo_install it, now *really*. Second line.")
        );
        // A list or quote only when nothing else.
        assert_eq!(
            first_paragraph("- one\n- two\n\nText.").as_deref(),
            Some("Text.")
        );
        assert_eq!(
            first_paragraph("## H\n- one\n- two").as_deref(),
            Some("one")
        );
        assert_eq!(
            first_paragraph("> quoted\n> more").as_deref(),
            Some("quoted more")
        );
        assert_eq!(first_paragraph("# Only a heading\n\n---\n"), None);
        assert_eq!(first_paragraph(""), None);
        // A heading directly above its paragraph.
        assert_eq!(
            first_paragraph("## Intro\nThe intro.").as_deref(),
            Some("The intro.")
        );
        assert_eq!(
            plain("see <https://a.test/x> and <b>bold</b>"),
            "see https://a.test/x and bold"
        );
        assert_eq!(
            plain("[a [nested] link](u) [ref][1] [not a link]"),
            "a [nested] link ref [not a link]"
        );
        assert_eq!(plain("snake_case and __strong__"), "snake_case and strong");
    }

    #[test]
    fn long_descriptions_end_at_a_sentence_or_a_word() {
        let sentences = "Short one. ".repeat(10) + &"word ".repeat(40);
        let t = truncate(&one_line(&sentences), 200);
        assert!(t.ends_with("Short one."), "{t}");
        assert!(t.chars().count() <= 200);
        let words = "abcdefghi ".repeat(40);
        let t = truncate(words.trim(), 200);
        assert!(t.ends_with("abcdefghi…"), "{t}");
        assert!(t.chars().count() <= 200, "{}", t.chars().count());
        let long_word = "x".repeat(500);
        let t = truncate(&long_word, 200);
        assert_eq!(t.chars().count(), 200);
        assert_eq!(truncate("é".repeat(10).as_str(), 200), "é".repeat(10));
        let d = Page {
            description: Some(&sentences),
            ..Page::default()
        };
        assert!(describe(&d, DESCRIPTION_MAX).is_some_and(|d| d.chars().count() <= DESCRIPTION_MAX));
    }
}
