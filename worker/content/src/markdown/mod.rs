//! HTML → GitHub-flavoured markdown, or plain text, in one iterative walk.
//!
//! The walk keeps an explicit stack of open elements; the writer keeps the
//! line prefixes (quotes, list items), emphasis/link markers that open lazily
//! (so empty `<b></b>` writes nothing and spaces move outside the markers) and
//! the pending break between blocks (so blank lines never pile up). Elements
//! deeper than `MAX_DEPTH` are read as inline text, list/quote prefixes stop
//! growing at `MAX_FRAMES`, and nothing is re-scanned, so time is linear.

mod writer;

use super::dom::{Dom, Kind, Resolver, Tag, MAX_DEPTH};
use super::main_content::Selection;
use super::tables::Tables;
use writer::{Brk, Close, MarkKind, Writer, MAX_COLUMNS};

/// Output flavour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// GitHub-flavoured markdown.
    Markdown,
    /// Plain text with paragraph breaks and list markers.
    Text,
}

/// Renders the selected part of `dom`.
pub fn render(dom: &Dom<'_>, sel: &Selection, resolver: &Resolver, mode: Mode) -> String {
    let tables = Tables::compute(dom);
    let mut w = Writer::new(mode);
    for &root in &sel.roots {
        walk(dom, sel, resolver, &tables, &mut w, root);
        w.raise(Brk::Para);
    }
    w.finish()
}

fn walk(
    dom: &Dom<'_>,
    sel: &Selection,
    resolver: &Resolver,
    tables: &Tables,
    w: &mut Writer,
    root: usize,
) {
    let end = dom.nodes[root].end as usize;
    let mut stack: Vec<(usize, Close)> = Vec::new();
    let mut i = root;
    while i < end {
        while let Some(&(top, close)) = stack.last() {
            if dom.nodes[top].end as usize > i {
                break;
            }
            stack.pop();
            w.close(close);
        }
        if sel.dead[i] {
            i = dom.nodes[i].end as usize;
            continue;
        }
        match dom.nodes[i].kind {
            Kind::Text(t) => w.text(t),
            Kind::Element(_, tag) if dom.nodes[i].depth <= MAX_DEPTH => {
                let (close, skip) = open(dom, sel, resolver, tables, w, i, tag);
                stack.push((i, close));
                if skip {
                    i = dom.nodes[i].end as usize;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    while let Some((_, close)) = stack.pop() {
        w.close(close);
    }
}

/// Handles an opening element; returns its close action and whether to skip its subtree.
fn open(
    dom: &Dom<'_>,
    sel: &Selection,
    resolver: &Resolver,
    tables: &Tables,
    w: &mut Writer,
    i: usize,
    tag: Tag,
) -> (Close, bool) {
    let in_table = |w: &Writer| w.table.as_ref().map(|t| t.idx) == Some(tables.table_of(i));
    match tag {
        Tag::Bold => (w.open_mark(MarkKind::Bold), false),
        Tag::Italic => (w.open_mark(MarkKind::Italic), false),
        Tag::Strike => (w.open_mark(MarkKind::Strike), false),
        Tag::A => {
            let url = dom.attr(i, "href").and_then(|h| resolver.resolve(h));
            (w.open_link(url), false)
        }
        Tag::Code => (w.open_code(), false),
        Tag::Br => {
            w.raise(Brk::Hard);
            (Close::Nothing, true)
        }
        Tag::Hr => {
            w.rule();
            (Close::Nothing, true)
        }
        Tag::Img => {
            let src = image_source(dom, i).and_then(|s| resolver.resolve(s));
            if let Some(src) = src {
                let caption = sel
                    .captions
                    .binary_search_by_key(&i, |c| c.0)
                    .ok()
                    .map(|k| sel.captions[k].1.as_str());
                w.image(dom.attr(i, "alt").unwrap_or(""), &src, caption);
            }
            (Close::Nothing, true)
        }
        Tag::Pre => {
            let (code, lang) = preformatted(dom, sel, i);
            w.code_block(&code, lang.as_deref());
            (Close::Nothing, true)
        }
        Tag::H(level) => (w.open_heading(level), false),
        Tag::Ul | Tag::Ol => {
            let start = if tag == Tag::Ol {
                Some(
                    dom.attr(i, "start")
                        .and_then(|s| s.trim().parse().ok())
                        .unwrap_or(1),
                )
            } else {
                None
            };
            (w.open_list(start), false)
        }
        Tag::Li => {
            let value = dom.attr(i, "value").and_then(|s| s.trim().parse().ok());
            (w.open_item(value), false)
        }
        Tag::Blockquote => (w.open_quote(), false),
        Tag::Table if w.table.is_none() && !w.inline_only() && tables.is_data(dom, i) => {
            w.open_table(i);
            (Close::Table, false)
        }
        Tag::Tr if in_table(w) => {
            w.open_row();
            (Close::Row, false)
        }
        Tag::Td | Tag::Th if in_table(w) => {
            let colspan = dom
                .attr(i, "colspan")
                .and_then(|s| s.trim().parse::<usize>().ok())
                .unwrap_or(1)
                .clamp(1, MAX_COLUMNS);
            w.open_cell();
            (Close::Cell { colspan }, false)
        }
        Tag::Caption if in_table(w) => {
            w.open_cell();
            (Close::Caption, false)
        }
        Tag::Dt | Tag::Dd => {
            w.raise(Brk::Line);
            (Close::Block(Brk::Line), false)
        }
        t if t.is_block() => {
            w.raise(Brk::Para);
            (Close::Block(Brk::Para), false)
        }
        _ => (Close::Nothing, false),
    }
}

/// The URL an image shows: a lazy-loading attribute (its script puts it in
/// `src`, which holds a placeholder until then: "penci2-holder.png",
/// "1x1-white.jpg"), else `src`, else the first `srcset` entry.
fn image_source<'a>(dom: &Dom<'a>, i: usize) -> Option<&'a str> {
    let plain = ["data-src", "data-lazy-src", "data-original", "src"]
        .iter()
        .filter_map(|a| dom.attr(i, a))
        .map(str::trim)
        .find(|s| !s.is_empty() && !s.starts_with("data:"));
    plain.or_else(|| {
        dom.attr(i, "srcset")
            .and_then(|s| s.split(',').next())
            .and_then(|c| c.split_whitespace().next())
    })
}

/// Text of a `<pre>` block (line breaks kept) and its language from class names.
fn preformatted(dom: &Dom<'_>, sel: &Selection, pre: usize) -> (String, Option<String>) {
    let end = dom.nodes[pre].end as usize;
    let mut code = String::new();
    let mut lang = language(dom, pre);
    let mut j = pre + 1;
    while j < end {
        if sel.dead[j] {
            j = dom.nodes[j].end as usize;
            continue;
        }
        match dom.nodes[j].kind {
            Kind::Text(t) => code.push_str(t),
            Kind::Element(_, Tag::Br) => code.push('\n'),
            Kind::Element(_, Tag::Code) if lang.is_none() => lang = language(dom, j),
            _ => {}
        }
        j += 1;
    }
    let code = code.trim_end_matches([' ', '\n', '\r', '\t']).to_string();
    let lang = lang
        .or_else(|| bare_language(dom, pre))
        .or_else(|| {
            // Sphinx (`div.highlight-python3 > div.highlight > pre`) and
            // GitHub (`div.highlight-source-js > pre`) name it on a wrapper.
            let parent = dom.nodes[pre].parent as usize;
            [parent, dom.nodes[parent].parent as usize]
                .into_iter()
                .filter(|&a| a > 0 && dom.tag(a).is_some())
                .find_map(|a| language(dom, a).or_else(|| sphinx_language(dom, a)))
        })
        .map(|l| match l.to_ascii_lowercase().as_str() {
            "python3" | "py3" | "py" => "python".to_string(),
            other => other.to_string(),
        });
    (code, lang)
}

/// A `<pre>` whose class is a language's bare name (rustdoc's `pre.rust`,
/// pandoc's `pre.sourceCode.python`).
fn bare_language(dom: &Dom<'_>, pre: usize) -> Option<String> {
    const KNOWN: &[&str] = &[
        "rust",
        "python",
        "javascript",
        "js",
        "typescript",
        "ts",
        "json",
        "bash",
        "sh",
        "shell",
        "console",
        "c",
        "cpp",
        "go",
        "java",
        "kotlin",
        "ruby",
        "php",
        "sql",
        "yaml",
        "toml",
        "html",
        "css",
        "xml",
        "haskell",
        "scala",
        "swift",
        "lua",
        "perl",
        "r",
    ];
    dom.attr(pre, "class")?
        .split_whitespace()
        .find(|t| KNOWN.iter().any(|k| k.eq_ignore_ascii_case(t)))
        .map(str::to_string)
}

/// Sphinx's `highlight-<lexer>` wrapper class (`highlight-python3`,
/// `highlight-pycon`, `highlight-c`); `default`, `none` and `text` name none.
fn sphinx_language(dom: &Dom<'_>, i: usize) -> Option<String> {
    dom.attr(i, "class")?
        .split_whitespace()
        .filter_map(|t| t.strip_prefix("highlight-"))
        .find(|l| {
            !l.is_empty()
                && !matches!(*l, "default" | "none" | "text")
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-'))
        })
        .map(str::to_string)
}

/// `language-x`, `lang-x`, `highlight-source-x` classes or `data-lang`.
fn language(dom: &Dom<'_>, i: usize) -> Option<String> {
    let from_class = dom.attr(i, "class").and_then(|c| {
        c.split_whitespace().find_map(|t| {
            ["language-", "lang-", "highlight-source-"]
                .iter()
                .find_map(|p| t.strip_prefix(p))
                .filter(|l| !l.is_empty())
        })
    });
    from_class
        .or_else(|| dom.attr(i, "data-lang"))
        .or_else(|| dom.attr(i, "data-language"))
        .map(|l| {
            l.chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '#' | '.' | '-'))
                .take(32)
                .collect::<String>()
        })
        .filter(|l| !l.is_empty())
}
