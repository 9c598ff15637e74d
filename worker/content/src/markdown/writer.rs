//! The markdown/text writer: line prefixes, lazy inline markers, pending
//! breaks, escaping, and table collection. Driven by the walk in the parent.
//!
//! Over 600 lines as one file: the methods of `Writer` share its state
//! (pending breaks, open marks, line prefixes) and escaping and tables are
//! already apart (`writer/`); no seam is left that would not split that state.

use url::Url;

use super::super::dom::push_collapsed;
use super::Mode;

mod escape;
mod table;

/// Nested quotes/list items that still indent; deeper ones reuse the last indent.
const MAX_FRAMES: usize = 32;
/// Widest table written (extra cells are dropped).
pub(super) const MAX_COLUMNS: usize = 64;

/// What to do when an open element closes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Close {
    Nothing,
    Block(Brk),
    Mark(MarkKind),
    Link,
    Code,
    Heading { real: bool },
    List { pushed: bool },
    Item { pushed: bool },
    Quote { pushed: bool },
    Table,
    Row,
    Cell { colspan: usize },
    Caption,
}

/// Breaks between pieces of output, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Brk {
    None,
    Space,
    Hard,
    Line,
    Para,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MarkKind {
    Bold,
    Italic,
    Strike,
    Link,
    Code,
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
            MarkKind::Code => "`",
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
pub(super) struct TableCtx {
    pub(super) idx: usize,
    rows: Vec<Vec<String>>,
    caption: String,
    saved_out: String,
    saved_open: Vec<Mark>,
    saved_pend: Vec<Mark>,
    saved_started: bool,
    cell_start: usize,
}

/// Output and state of one rendering.
pub(super) struct Writer {
    md: bool,
    out: String,
    pending: Brk,
    /// A break raised before a heading or a code span opened, written
    /// before its text (inside them, breaks are spaces).
    held: Brk,
    /// `held` was taken by the open code span.
    code_held: bool,
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
    pub(super) cell: u32,
    pub(super) table: Option<TableCtx>,
}

impl Writer {
    pub(super) fn new(mode: Mode) -> Writer {
        Writer {
            md: mode == Mode::Markdown,
            out: String::new(),
            pending: Brk::None,
            held: Brk::None,
            code_held: false,
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

    pub(super) fn finish(self) -> String {
        self.out.trim().to_string()
    }

    pub(super) fn raise(&mut self, b: Brk) {
        self.pending = self.pending.max(b);
    }

    /// Inside a heading, table cell or code span line breaks become spaces.
    pub(super) fn inline_only(&self) -> bool {
        self.cell > 0 || self.heading > 0 || self.code > 0
    }

    pub(super) fn write_prefix(&mut self) {
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
    pub(super) fn suspend_marks(&mut self) {
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
    pub(super) fn flush_break(&mut self) {
        let held = std::mem::replace(&mut self.held, Brk::None);
        let brk = std::mem::replace(&mut self.pending, Brk::None);
        if !self.started || self.out.is_empty() {
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

    pub(super) fn write_break(&mut self, brk: Brk) {
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
    pub(super) fn flush(&mut self) {
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
                if m.kind == MarkKind::Code {
                    self.code_start = self.out.len();
                }
                self.open.push(m);
            }
            self.line_start = false;
            self.line_digits = None;
        }
    }

    pub(super) fn open_mark(&mut self, kind: MarkKind) -> Close {
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

    pub(super) fn close_mark(&mut self, kind: MarkKind) {
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

    pub(super) fn open_link(&mut self, url: Option<Url>) -> Close {
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

    pub(super) fn open_code(&mut self) -> Close {
        // A paragraph that starts with code: its break is no space.
        if self.code == 0 && !self.inline_only() && self.held == Brk::None {
            self.held = std::mem::replace(&mut self.pending, Brk::None);
            self.code_held = self.held != Brk::None;
        }
        // Like emphasis, the span opens lazily: an empty `<code></code>` writes nothing.
        if self.md && self.code == 0 {
            self.pend.push(Mark {
                kind: MarkKind::Code,
                url: String::new(),
            });
        }
        self.code += 1;
        Close::Code
    }

    pub(super) fn close_code(&mut self) {
        if self.code == 0 {
            return;
        }
        self.code -= 1;
        if self.code == 0 && self.code_held {
            // An empty span: the break waits for the next text.
            self.code_held = false;
            let held = std::mem::replace(&mut self.held, Brk::None);
            self.raise(held);
        }
        if !self.md || self.code > 0 {
            return;
        }
        if let Some(pos) = self.pend.iter().rposition(|m| m.kind == MarkKind::Code) {
            self.pend.remove(pos);
            return;
        }
        let Some(pos) = self.open.iter().rposition(|m| m.kind == MarkKind::Code) else {
            return;
        };
        let above: Vec<Mark> = self.open.drain(pos + 1..).collect();
        for m in above.iter().rev() {
            self.out.push_str(&closing(m));
        }
        self.open.pop();
        self.pend.splice(0..0, above);
        let start = self.code_start;
        if start == 0 || !self.out.is_char_boundary(start) {
            self.out.push('`');
            return;
        }
        // The fence must be longer than any backtick run inside.
        let content = self.out.split_off(start);
        self.out.pop();
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

    pub(super) fn open_heading(&mut self, level: u8) -> Close {
        // Headings inside table cells, code spans or other headings are just text.
        let real = !self.inline_only();
        if real {
            self.raise(Brk::Para);
            self.held = std::mem::replace(&mut self.pending, Brk::None);
            self.heading_marker = Some(level);
        }
        self.heading += 1;
        Close::Heading { real }
    }

    pub(super) fn open_list(&mut self, start: Option<u64>) -> Close {
        let nested = self.frames.iter().any(|f| f.marker != "> ");
        self.raise(if nested { Brk::Line } else { Brk::Para });
        self.lists.push(start);
        Close::List { pushed: true }
    }

    pub(super) fn open_item(&mut self, value: Option<u64>) -> Close {
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

    pub(super) fn open_quote(&mut self) -> Close {
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

    pub(super) fn rule(&mut self) {
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

    /// `![alt](src "title")`: the title is the figure's caption, if any.
    pub(super) fn image(&mut self, alt: &str, src: &Url, title: Option<&str>) {
        if !self.md {
            return;
        }
        if self.code > 0 {
            self.text(alt);
            return;
        }
        self.flush();
        let mut alt_text = String::new();
        push_collapsed(&mut alt_text, alt);
        self.out.push_str("![");
        for c in alt_text.trim().chars() {
            if matches!(c, '[' | ']' | '\\') {
                self.out.push('\\');
            }
            self.out.push(c);
        }
        self.out.push_str("](");
        self.out.push_str(&md_url(src));
        // The caption comes collapsed and trimmed (`Dom::text_of`).
        if let Some(t) = title.filter(|t| !t.is_empty()) {
            self.out.push_str(" \"");
            for c in t.chars() {
                if matches!(c, '"' | '\\') {
                    self.out.push('\\');
                }
                self.out.push(c);
            }
            self.out.push('"');
        }
        self.out.push(')');
        self.line_start = false;
    }

    pub(super) fn code_block(&mut self, code: &str, lang: Option<&str>) {
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
    pub(super) fn text_raw(&mut self, t: &str) {
        if t.is_empty() {
            return;
        }
        self.flush();
        self.out.push_str(t);
        self.line_start = false;
    }

    pub(super) fn close(&mut self, close: Close) {
        match close {
            Close::Nothing => {}
            Close::Block(b) => self.raise(b),
            Close::Mark(kind) => self.close_mark(kind),
            Close::Link => self.close_mark(MarkKind::Link),
            Close::Code => self.close_code(),
            Close::Heading { real } => {
                self.heading = self.heading.saturating_sub(1);
                if real {
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
