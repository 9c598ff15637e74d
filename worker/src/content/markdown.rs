//! HTML → GitHub-flavoured markdown, or plain text, in one iterative walk.
//!
//! The walk keeps an explicit stack of open elements; the writer keeps the
//! line prefixes (quotes, list items), emphasis/link markers that open lazily
//! (so empty `<b></b>` writes nothing and spaces move outside the markers) and
//! the pending break between blocks (so blank lines never pile up). Elements
//! deeper than `MAX_DEPTH` are read as inline text, list/quote prefixes stop
//! growing at `MAX_FRAMES`, and nothing is re-scanned, so time is linear.

use url::Url;

use super::dom::{is_html_space, Dom, Kind, Resolver, Tag, MAX_DEPTH};
use super::main_content::Selection;
use super::tables::Tables;

/// Nested quotes/list items that still indent; deeper ones reuse the last indent.
const MAX_FRAMES: usize = 32;
/// Widest table written (extra cells are dropped).
const MAX_COLUMNS: usize = 64;

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

/// What to do when an open element closes.
#[derive(Debug, Clone, Copy)]
enum Close {
    Nothing,
    Block(Brk),
    Mark(MarkKind),
    Link,
    Code,
    Heading,
    List { pushed: bool },
    Item { pushed: bool },
    Quote { pushed: bool },
    Table,
    Row,
    Cell { colspan: usize },
    Caption,
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
                w.image(dom.attr(i, "alt").unwrap_or(""), &src);
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
                Some(dom.attr(i, "start").and_then(|s| s.trim().parse().ok()).unwrap_or(1))
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
        Tag::Table if w.table.is_none() && w.cell == 0 && tables.is_data(dom, i) => {
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

/// The URL an image shows: `src`, lazy-loading attributes, else the first `srcset` entry.
fn image_source<'a>(dom: &Dom<'a>, i: usize) -> Option<&'a str> {
    let plain = ["src", "data-src", "data-lazy-src", "data-original"]
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
    (code, lang)
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

/// Breaks between pieces of output, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Brk {
    None,
    Space,
    Hard,
    Line,
    Para,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MarkKind {
    Bold,
    Italic,
    Strike,
    Link,
}

/// An inline marker pair; links carry their URL.
#[derive(Debug, Clone)]
struct Mark {
    kind: MarkKind,
    url: String,
}

impl Mark {
    fn opening(&self) -> &'static str {
        match self.kind {
            MarkKind::Bold => "**",
            MarkKind::Italic => "*",
            MarkKind::Strike => "~~",
            MarkKind::Link => "[",
        }
    }
}

/// A line prefix: blockquote `> ` or a list item marker and its indent.
struct Frame {
    marker: String,
    rest: String,
    marker_pending: bool,
}

/// A markdown table being collected cell by cell.
struct TableCtx {
    idx: usize,
    rows: Vec<Vec<String>>,
    caption: String,
    saved_out: String,
    saved_open: Vec<Mark>,
    saved_pend: Vec<Mark>,
    saved_started: bool,
    cell_start: usize,
}

struct Writer {
    md: bool,
    out: String,
    pending: Brk,
    /// A break raised before a heading opened, written before its text.
    held: Brk,
    started: bool,
    line_start: bool,
    /// Digits written since the line started, while nothing else was.
    line_digits: Option<u8>,
    frames: Vec<Frame>,
    lists: Vec<Option<u64>>,
    open: Vec<Mark>,
    pend: Vec<Mark>,
    depth: [u32; 4],
    code: u32,
    code_start: usize,
    heading: u32,
    heading_marker: Option<u8>,
    cell: u32,
    table: Option<TableCtx>,
}

impl Writer {
    fn new(mode: Mode) -> Writer {
        Writer {
            md: mode == Mode::Markdown,
            out: String::new(),
            pending: Brk::None,
            held: Brk::None,
            started: false,
            line_start: true,
            line_digits: Some(0),
            frames: Vec::new(),
            lists: Vec::new(),
            open: Vec::new(),
            pend: Vec::new(),
            depth: [0; 4],
            code: 0,
            code_start: 0,
            heading: 0,
            heading_marker: None,
            cell: 0,
            table: None,
        }
    }

    fn finish(self) -> String {
        self.out.trim_end().to_string()
    }

    fn raise(&mut self, b: Brk) {
        self.pending = self.pending.max(b);
    }

    /// Inside a heading, table cell or code span line breaks become spaces.
    fn inline_only(&self) -> bool {
        self.cell > 0 || self.heading > 0 || self.code > 0
    }

    fn write_prefix(&mut self) {
        for f in &mut self.frames {
            if f.marker_pending {
                self.out.push_str(&f.marker);
                f.marker_pending = false;
            } else {
                self.out.push_str(&f.rest);
            }
        }
        self.line_start = true;
        self.line_digits = Some(0);
    }

    /// Closes written markers before a line break; they reopen after it.
    fn suspend_marks(&mut self) {
        if self.open.is_empty() {
            return;
        }
        for m in self.open.iter().rev() {
            self.out.push_str(&closing(m));
        }
        let mut reopened = std::mem::take(&mut self.open);
        reopened.append(&mut self.pend);
        self.pend = reopened;
    }

    /// Writes the pending break (and line prefix) before new output.
    fn flush_break(&mut self) {
        let held = std::mem::replace(&mut self.held, Brk::None);
        let brk = std::mem::replace(&mut self.pending, Brk::None);
        if !self.started {
            self.started = true;
            self.write_prefix();
            return;
        }
        if held != Brk::None {
            // A break from before the heading opened: a real one.
            self.write_break(held);
            return;
        }
        let brk = match brk {
            Brk::Hard if self.cell > 0 => {
                self.out.push_str(if self.md { "<br>" } else { " " });
                return;
            }
            Brk::Hard | Brk::Line | Brk::Para if self.inline_only() => Brk::Space,
            b => b,
        };
        self.write_break(brk);
    }

    fn write_break(&mut self, brk: Brk) {
        match brk {
            Brk::None => {}
            Brk::Space => {
                if !self.line_start {
                    self.out.push(' ');
                }
            }
            Brk::Hard => {
                self.suspend_marks();
                self.out.push_str(if self.md { "  \n" } else { "\n" });
                self.write_prefix();
            }
            Brk::Line => {
                self.suspend_marks();
                self.out.push('\n');
                self.write_prefix();
            }
            Brk::Para => {
                self.suspend_marks();
                self.out.push('\n');
                // Frames opened since the last line do not prefix the blank line.
                let blank: String = self
                    .frames
                    .iter()
                    .take_while(|f| !f.marker_pending)
                    .map(|f| f.rest.as_str())
                    .collect();
                self.out.push_str(blank.trim_end());
                self.out.push('\n');
                self.write_prefix();
            }
        }
    }

    /// Everything that must precede visible inline content.
    fn flush(&mut self) {
        if self.pending != Brk::None || self.held != Brk::None || !self.started {
            self.flush_break();
        }
        if let Some(level) = self.heading_marker.take() {
            if self.md {
                for _ in 0..level {
                    self.out.push('#');
                }
                self.out.push(' ');
            }
            self.line_start = true;
            self.line_digits = Some(0);
        }
        if !self.pend.is_empty() {
            for m in std::mem::take(&mut self.pend) {
                self.out.push_str(m.opening());
                self.open.push(m);
            }
            self.line_start = false;
            self.line_digits = None;
        }
    }

    fn text(&mut self, t: &str) {
        let mut chars = t.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if is_html_space(c) || c == '\u{a0}' {
                self.raise(Brk::Space);
                continue;
            }
            if matches!(c, '\u{200b}' | '\u{feff}' | '\u{ad}') {
                continue;
            }
            self.flush();
            let next = chars.peek().map(|&(_, n)| n);
            if self.md && self.code == 0 {
                self.escaped(c, next, &t[at..]);
            } else {
                self.out.push(c);
                self.line_digits = None;
            }
            self.line_start = false;
        }
    }

    /// Writes `c` with a backslash where markdown would read it as syntax.
    fn escaped(&mut self, c: char, next: Option<char>, rest: &str) {
        let prev = self.out.chars().next_back();
        let space_or_none = |x: Option<char>| x.is_none_or(char::is_whitespace);
        let alnum = |x: Option<char>| x.is_some_and(char::is_alphanumeric);
        let escape = match c {
            '\\' => next.is_some_and(|n| n.is_ascii_punctuation()),
            '*' => !(space_or_none(prev) && space_or_none(next)) || self.line_start,
            '_' => !(alnum(prev) && alnum(next)),
            '`' | '[' | ']' | '~' => true,
            '<' => next.is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')),
            '&' => {
                next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#')
                    && rest.get(1..).is_some_and(|r| {
                        r.bytes().take(32).position(|b| b == b';').is_some_and(|p| {
                            r.as_bytes()[..p]
                                .iter()
                                .all(|b| b.is_ascii_alphanumeric() || *b == b'#')
                        })
                    })
            }
            '#' | '>' | '=' => self.line_start,
            '-' | '+' => self.line_start && (space_or_none(next) || next == Some('-')),
            _ => false,
        };
        // "1. text" or "2) text" at the start of a line would become a list item.
        let ordered = matches!(c, '.' | ')')
            && matches!(self.line_digits, Some(1..=9))
            && space_or_none(next);
        if escape || ordered {
            self.out.push('\\');
        }
        self.out.push(c);
        self.line_digits = match self.line_digits {
            Some(n) if c.is_ascii_digit() => Some(n.saturating_add(1)),
            _ => None,
        };
    }

    fn open_mark(&mut self, kind: MarkKind) -> Close {
        let slot = kind as usize;
        self.depth[slot] += 1;
        if self.md && self.code == 0 && self.depth[slot] == 1 {
            self.pend.push(Mark {
                kind,
                url: String::new(),
            });
        }
        Close::Mark(kind)
    }

    fn close_mark(&mut self, kind: MarkKind) {
        let slot = kind as usize;
        self.depth[slot] = self.depth[slot].saturating_sub(1);
        if self.depth[slot] > 0 {
            return;
        }
        if let Some(pos) = self.pend.iter().rposition(|m| m.kind == kind) {
            self.pend.remove(pos);
            return;
        }
        if let Some(pos) = self.open.iter().rposition(|m| m.kind == kind) {
            let above: Vec<Mark> = self.open.drain(pos + 1..).collect();
            for m in above.iter().rev() {
                self.out.push_str(&closing(m));
            }
            if let Some(m) = self.open.pop() {
                self.out.push_str(&closing(&m));
            }
            self.pend.splice(0..0, above);
        }
    }

    fn open_link(&mut self, url: Option<Url>) -> Close {
        let slot = MarkKind::Link as usize;
        self.depth[slot] += 1;
        match url {
            Some(url) if self.md && self.code == 0 && self.depth[slot] == 1 => {
                self.pend.push(Mark {
                    kind: MarkKind::Link,
                    url: md_url(&url),
                });
            }
            _ => {}
        }
        Close::Link
    }

    fn open_code(&mut self) -> Close {
        self.code += 1;
        if self.md && self.code == 1 {
            self.flush();
            self.out.push('`');
            self.code_start = self.out.len();
            self.line_start = false;
        }
        Close::Code
    }

    fn close_code(&mut self) {
        self.code = self.code.saturating_sub(1);
        if !self.md || self.code > 0 || self.code_start == 0 {
            return;
        }
        let content = self.out.split_off(self.code_start);
        self.out.pop();
        if content.trim().is_empty() {
            return;
        }
        let run = longest_run(&content, '`');
        let fence = "`".repeat(run + 1);
        let pad = content.starts_with('`') || content.ends_with('`');
        self.out.push_str(&fence);
        if pad {
            self.out.push(' ');
        }
        self.out.push_str(&content);
        if pad {
            self.out.push(' ');
        }
        self.out.push_str(&fence);
    }

    fn open_heading(&mut self, level: u8) -> Close {
        if self.heading == 0 && self.cell == 0 {
            self.raise(Brk::Para);
            self.held = std::mem::replace(&mut self.pending, Brk::None);
            self.heading_marker = Some(level);
        }
        self.heading += 1;
        Close::Heading
    }

    fn open_list(&mut self, start: Option<u64>) -> Close {
        let nested = self.frames.iter().any(|f| f.marker != "> ");
        self.raise(if nested { Brk::Line } else { Brk::Para });
        self.lists.push(start);
        Close::List { pushed: true }
    }

    fn open_item(&mut self, value: Option<u64>) -> Close {
        self.raise(Brk::Line);
        if self.inline_only() {
            return Close::Item { pushed: false };
        }
        let marker = match self.lists.last_mut() {
            Some(Some(next)) => {
                let n = value.unwrap_or(*next);
                *next = n.saturating_add(1);
                format!("{n}. ")
            }
            _ => "- ".to_string(),
        };
        if self.frames.len() >= MAX_FRAMES {
            return Close::Item { pushed: false };
        }
        self.frames.push(Frame {
            rest: " ".repeat(marker.len()),
            marker,
            marker_pending: true,
        });
        Close::Item { pushed: true }
    }

    fn open_quote(&mut self) -> Close {
        self.raise(Brk::Para);
        if !self.md || self.inline_only() || self.frames.len() >= MAX_FRAMES {
            return Close::Quote { pushed: false };
        }
        self.frames.push(Frame {
            marker: "> ".to_string(),
            rest: "> ".to_string(),
            marker_pending: true,
        });
        Close::Quote { pushed: true }
    }

    fn rule(&mut self) {
        if self.inline_only() {
            self.raise(Brk::Space);
            return;
        }
        self.raise(Brk::Para);
        if self.md {
            self.flush_break();
            self.out.push_str("---");
            self.line_start = false;
            self.raise(Brk::Para);
        }
    }

    fn image(&mut self, alt: &str, src: &Url) {
        if !self.md {
            return;
        }
        self.flush();
        let mut alt_text = String::new();
        super::dom::push_collapsed(&mut alt_text, alt);
        self.out.push_str("![");
        for c in alt_text.trim().chars() {
            if matches!(c, '[' | ']' | '\\') {
                self.out.push('\\');
            }
            self.out.push(c);
        }
        self.out.push_str("](");
        self.out.push_str(&md_url(src));
        self.out.push(')');
        self.line_start = false;
    }

    fn code_block(&mut self, code: &str, lang: Option<&str>) {
        if code.trim().is_empty() {
            return;
        }
        if self.inline_only() {
            // Tables and headings cannot hold blocks: write an inline code span.
            let one_line: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
            self.open_code();
            self.text_raw(&one_line);
            self.close_code();
            return;
        }
        self.raise(Brk::Para);
        self.flush_break();
        if self.md {
            let fence = "`".repeat(longest_run(code, '`').max(2) + 1);
            self.out.push_str(&fence);
            self.out.push_str(lang.unwrap_or(""));
            for line in code.lines() {
                self.out.push('\n');
                self.write_prefix();
                self.out.push_str(line);
            }
            self.out.push('\n');
            self.write_prefix();
            self.out.push_str(&fence);
        } else {
            for (k, line) in code.lines().enumerate() {
                if k > 0 {
                    self.out.push('\n');
                    self.write_prefix();
                }
                self.out.push_str(line);
            }
        }
        self.line_start = false;
        self.raise(Brk::Para);
    }

    /// Writes text as is (inside a code span).
    fn text_raw(&mut self, t: &str) {
        if t.is_empty() {
            return;
        }
        self.flush();
        self.out.push_str(t);
        self.line_start = false;
    }

    fn open_table(&mut self, idx: usize) {
        self.raise(Brk::Para);
        let saved_out = std::mem::take(&mut self.out);
        self.table = Some(TableCtx {
            idx,
            rows: Vec::new(),
            caption: String::new(),
            saved_out,
            saved_open: std::mem::take(&mut self.open),
            saved_pend: std::mem::take(&mut self.pend),
            saved_started: self.started,
            cell_start: 0,
        });
    }

    fn open_row(&mut self) {
        if let Some(t) = self.table.as_mut() {
            t.rows.push(Vec::new());
        }
    }

    fn open_cell(&mut self) {
        self.cell += 1;
        self.pending = Brk::None;
        self.line_start = true;
        if let Some(t) = self.table.as_mut() {
            t.cell_start = self.out.len();
        }
    }

    /// Ends a cell and returns its text.
    fn take_cell(&mut self) -> String {
        for m in std::mem::take(&mut self.open).iter().rev() {
            self.out.push_str(&closing(m));
        }
        self.pend.clear();
        self.cell = self.cell.saturating_sub(1);
        self.pending = Brk::None;
        let start = self.table.as_ref().map_or(self.out.len(), |t| t.cell_start);
        let start = if self.out.is_char_boundary(start) { start } else { self.out.len() };
        let text = self.out.split_off(start);
        let text = text.trim();
        if self.md {
            text.replace('|', "\\|")
        } else {
            text.replace('\t', " ")
        }
    }

    fn close_table(&mut self) {
        let Some(mut t) = self.table.take() else { return };
        self.out = std::mem::take(&mut t.saved_out);
        self.open = t.saved_open;
        self.pend = t.saved_pend;
        self.started = t.saved_started;
        t.rows.retain(|r| !r.is_empty());
        let cols = t.rows.iter().map(Vec::len).max().unwrap_or(0).min(MAX_COLUMNS);
        if !t.caption.is_empty() {
            self.raise(Brk::Para);
            self.flush_break();
            self.out.push_str(&t.caption);
            self.line_start = false;
        }
        if cols == 0 {
            self.raise(Brk::Para);
            return;
        }
        self.raise(Brk::Para);
        self.flush_break();
        for (k, row) in t.rows.iter().enumerate() {
            if k > 0 {
                self.out.push('\n');
                self.write_prefix();
            }
            if self.md {
                self.out.push('|');
                for c in 0..cols {
                    self.out.push(' ');
                    self.out.push_str(row.get(c).map_or("", String::as_str));
                    self.out.push_str(" |");
                }
                if k == 0 {
                    self.out.push('\n');
                    self.write_prefix();
                    self.out.push('|');
                    for _ in 0..cols {
                        self.out.push_str(" --- |");
                    }
                }
            } else {
                let cells: Vec<&str> = row.iter().take(cols).map(String::as_str).collect();
                self.out.push_str(&cells.join("\t"));
            }
        }
        self.line_start = false;
        self.raise(Brk::Para);
    }

    fn close(&mut self, close: Close) {
        match close {
            Close::Nothing => {}
            Close::Block(b) => self.raise(b),
            Close::Mark(kind) => self.close_mark(kind),
            Close::Link => self.close_mark(MarkKind::Link),
            Close::Code => self.close_code(),
            Close::Heading => {
                self.heading = self.heading.saturating_sub(1);
                if self.heading == 0 && self.cell == 0 {
                    self.heading_marker = None;
                    let held = std::mem::replace(&mut self.held, Brk::None);
                    self.raise(held);
                    self.raise(Brk::Para);
                }
            }
            Close::List { pushed } => {
                if pushed {
                    self.lists.pop();
                }
                let nested = self.frames.iter().any(|f| f.marker != "> ");
                self.raise(if nested { Brk::Line } else { Brk::Para });
            }
            Close::Item { pushed } => {
                if pushed {
                    self.frames.pop();
                }
                self.raise(Brk::Line);
            }
            Close::Quote { pushed } => {
                if pushed {
                    self.frames.pop();
                }
                self.raise(Brk::Para);
            }
            Close::Table => self.close_table(),
            Close::Row => {}
            Close::Cell { colspan } => {
                let text = self.take_cell();
                if let Some(t) = self.table.as_mut() {
                    if t.rows.is_empty() {
                        t.rows.push(Vec::new());
                    }
                    if let Some(row) = t.rows.last_mut() {
                        if row.len() < MAX_COLUMNS {
                            row.push(text);
                            for _ in 1..colspan {
                                row.push(String::new());
                            }
                        }
                    }
                }
            }
            Close::Caption => {
                let text = self.take_cell();
                if let Some(t) = self.table.as_mut() {
                    t.caption = text;
                }
            }
        }
    }
}

/// The closing marker of `m` (links carry their target).
fn closing(m: &Mark) -> String {
    match m.kind {
        MarkKind::Link => format!("]({})", m.url),
        _ => m.opening().to_string(),
    }
}

/// A URL as a markdown link target (parentheses and spaces encoded).
fn md_url(u: &Url) -> String {
    u.as_str()
        .replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

/// Longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    let mut best = 0;
    let mut cur = 0;
    for x in s.chars() {
        if x == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}
