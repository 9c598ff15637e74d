//! A fast, forgiving HTML parser for the content pipeline.
//!
//! html5ever builds a spec-exact tree but costs ~25 ns a byte here (tokenizer
//! over tendrils, a tree builder behind `Rc`/`RefCell` handles, then a copy
//! into our flat [`super::dom::Dom`]). This parser reads the page once,
//! borrows names, attribute values and text from the input wherever no
//! character reference needs decoding, and emits the flat pre-order array the
//! pipeline walks (a node's subtree is `i..end`), so there is no tree to copy.
//!
//! It follows the parts of the HTML tree-construction rules that change what
//! a reader sees: implied `<html>`/`<head>`/`<body>`, head elements kept in
//! the head, raw-text and RCDATA elements (`script`, `style`, `title`,
//! `textarea`, ...), implied end tags (`p` closed by blocks, `li`, `dt`/`dd`,
//! `option`, table cells, rows and sections, nested headings and links),
//! implied `tbody`/`tr`, end tags that match nothing ignored, scope
//! boundaries (a `</div>` inside a cell does not close the cell's table),
//! foreign `svg`/`math` content, character references (named, decimal, hex,
//! with the legacy no-semicolon forms), comments and doctypes skipped. It
//! does not re-create formatting elements across blocks (the adoption
//! agency) or foster-parent text out of tables; those rarely change the text
//! and are where html5ever turns quadratic on hostile pages.
//!
//! Time is linear in the input: at most [`MAX_OPEN`] elements are open at
//! once (deeper start tags are dropped with their end tags, as the html5ever
//! guard does), and every end tag searches at most that many.

use std::borrow::Cow;

use super::html::{is_void, MAX_OPEN};

/// An element of the parsed page.
#[derive(Debug, Clone)]
pub struct Element<'h> {
    /// Lower-case local name.
    pub name: Cow<'h, str>,
    /// Attributes in source order, first occurrence of a name only; names lower-case.
    pub attrs: Vec<(Cow<'h, str>, Cow<'h, str>)>,
    /// Inside (or is) `<svg>` or `<math>`.
    pub foreign: bool,
}

impl<'h> Element<'h> {
    /// The value of attribute `name`.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_ref())
    }
}

/// What a node is.
#[derive(Debug, Clone)]
pub enum PKind<'h> {
    /// The document (index 0).
    Document,
    /// An element.
    Element(Element<'h>),
    /// Text, character references decoded.
    Text(Cow<'h, str>),
}

/// A node in document (pre-)order.
#[derive(Debug, Clone)]
pub struct PNode<'h> {
    pub kind: PKind<'h>,
    /// Index of the parent (`u32::MAX` for the document).
    pub parent: u32,
    /// One past the last node of this subtree.
    pub end: u32,
}

/// A parsed page: nodes in pre-order, index 0 the document.
#[derive(Debug, Clone)]
pub struct Parsed<'h> {
    pub nodes: Vec<PNode<'h>>,
}

/// Where the builder is in the page's implied structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing but the optional `<html>` yet.
    BeforeHead,
    /// In `<head>` (explicit or implied).
    InHead,
    /// `</head>` seen, no body yet.
    AfterHead,
    /// In `<body>`.
    InBody,
}

struct Builder<'h> {
    nodes: Vec<PNode<'h>>,
    /// Open elements as node indices; `open[0]` is the document.
    open: Vec<u32>,
    mode: Mode,
    html: Option<u32>,
    head: Option<u32>,
    body: Option<u32>,
    /// Dropped start tags (too deep) per name, whose end tags are dropped too.
    swallow: Vec<(String, u32)>,
    /// Drop one leading newline of the next text (after `<pre>`, `<textarea>`).
    skip_newline: bool,
    /// Open elements per name slot, so that a search for a name that is not
    /// open costs nothing (100,000 `<div>`s would otherwise each scan the
    /// stack for an open `<p>`, and 100,000 stray end tags the whole stack).
    /// A hash collision only costs a scan, never a wrong answer.
    counts: [u32; 256],
}

/// A counter slot for a tag name (FNV-1a, folded to 8 bits).
fn name_hash(name: &str) -> usize {
    let h = name.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    ((h >> 24) ^ (h >> 16) ^ (h >> 8) ^ h) as usize & 0xff
}

/// Parses a whole page.
pub fn parse(html: &str) -> Parsed<'_> {
    let mut b = Builder {
        nodes: Vec::with_capacity(html.len() / 24 + 8),
        open: vec![0],
        mode: Mode::BeforeHead,
        html: None,
        head: None,
        body: None,
        swallow: Vec::new(),
        skip_newline: false,
        counts: [0; 256],
    };
    b.nodes.push(PNode {
        kind: PKind::Document,
        parent: u32::MAX,
        end: 1,
    });
    let bytes = html.as_bytes();
    let mut i = 0;
    let n = bytes.len();
    while i < n {
        let Some(lt) = memchr(b'<', &bytes[i..]).map(|p| i + p) else {
            b.text(decode(&html[i..], false));
            break;
        };
        if lt > i {
            b.text(decode(&html[i..lt], false));
        }
        i = lt;
        let next = bytes.get(i + 1).copied().unwrap_or(0);
        if next == b'!' {
            if bytes[i..].starts_with(b"<!--") {
                i = match find(bytes, i + 4, b"-->") {
                    Some(p) => p + 3,
                    None => n,
                };
            } else if bytes[i..].starts_with(b"<![CDATA[") {
                // CDATA is only meaningful in foreign content: keep its text.
                let end = find(bytes, i + 9, b"]]>").unwrap_or(n);
                if b.in_foreign() {
                    b.text(Cow::Borrowed(&html[i + 9..end]));
                }
                i = (end + 3).min(n);
            } else {
                i = skip_to_gt(bytes, i + 2);
            }
        } else if next == b'?' {
            i = skip_to_gt(bytes, i + 2);
        } else if next == b'/' {
            let c = bytes.get(i + 2).copied().unwrap_or(0);
            if c.is_ascii_alphabetic() {
                let (name, after) = read_name(html, i + 2);
                i = skip_to_gt(bytes, after);
                b.end_tag(&name);
            } else if c == b'>' {
                i += 3;
            } else if i + 2 >= n {
                b.text(Cow::Borrowed(&html[i..]));
                i = n;
            } else {
                // `</` + non-letter: a bogus comment.
                i = skip_to_gt(bytes, i + 2);
            }
        } else if next.is_ascii_alphabetic() {
            let (name, after) = read_name(html, i + 1);
            let (attrs, self_closing, after) = read_attrs(html, after);
            i = after;
            let raw = b.start_tag(name, attrs, self_closing);
            if let Some(kind) = raw {
                let name = b.current_name().to_string();
                let end = find_end_tag(bytes, i, name.as_bytes()).unwrap_or(n);
                let body = &html[i..end];
                if !body.is_empty() {
                    match kind {
                        Raw::Text => b.text_raw(Cow::Borrowed(body)),
                        Raw::Rcdata => b.text_raw(decode(body, false)),
                    }
                }
                b.pop_current();
                i = if end < n {
                    skip_to_gt(bytes, end + 2 + name.len())
                } else {
                    n
                };
            }
        } else {
            b.text(Cow::Borrowed("<"));
            i += 1;
        }
    }
    b.finish()
}

/// How a raw-text element's content is read.
#[derive(Clone, Copy)]
enum Raw {
    /// Verbatim (`script`, `style`, ...).
    Text,
    /// Character references decoded (`title`, `textarea`).
    Rcdata,
}

fn raw_kind(name: &str) -> Option<Raw> {
    match name {
        "script" | "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
            Some(Raw::Text)
        }
        "title" | "textarea" => Some(Raw::Rcdata),
        _ => None,
    }
}

/// Elements that belong in `<head>` when they come before any content.
fn is_head_element(name: &str) -> bool {
    matches!(
        name,
        "title"
            | "meta"
            | "link"
            | "base"
            | "style"
            | "script"
            | "noscript"
            | "template"
            | "basefont"
            | "bgsound"
            | "noframes"
    )
}

/// Start tags that close an open `<p>`.
fn closes_p(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "center"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "listing"
            | "section"
            | "summary"
            | "table"
            | "ul"
            | "li"
            | "dd"
            | "dt"
            | "search"
            | "xmp"
            | "plaintext"
    )
}

fn is_heading(name: &str) -> bool {
    matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// Elements an end tag's search does not cross (the spec's default scope).
fn is_scope_boundary(name: &str) -> bool {
    matches!(
        name,
        "html" | "table" | "td" | "th" | "caption" | "template" | "marquee" | "object" | "applet"
    )
}

/// "Special" elements that stop the search for an open `li`/`dd`/`dt`
/// (all but `address`, `div` and `p`).
fn stops_item_search(name: &str) -> bool {
    matches!(
        name,
        "applet"
            | "area"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "button"
            | "caption"
            | "center"
            | "dir"
            | "dl"
            | "fieldset"
            | "figure"
            | "footer"
            | "form"
            | "header"
            | "html"
            | "main"
            | "marquee"
            | "menu"
            | "nav"
            | "object"
            | "ol"
            | "section"
            | "select"
            | "table"
            | "td"
            | "template"
            | "th"
            | "tr"
            | "ul"
    )
}

impl<'h> Builder<'h> {
    fn name_of(&self, idx: u32) -> &str {
        match &self.nodes[idx as usize].kind {
            PKind::Element(e) => &e.name,
            _ => "",
        }
    }

    /// Whether an element named `name` may be open (exact when no hash collides).
    fn is_open(&self, name: &str) -> bool {
        self.counts[name_hash(name)] > 0
    }

    fn current(&self) -> u32 {
        *self.open.last().unwrap_or(&0)
    }

    fn current_name(&self) -> &str {
        self.name_of(self.current())
    }

    fn in_foreign(&self) -> bool {
        match &self.nodes[self.current() as usize].kind {
            PKind::Element(e) => e.foreign,
            _ => false,
        }
    }

    fn push_element(
        &mut self,
        name: Cow<'h, str>,
        attrs: Vec<(Cow<'h, str>, Cow<'h, str>)>,
        foreign: bool,
        void: bool,
    ) -> u32 {
        let idx = self.nodes.len() as u32;
        self.nodes.push(PNode {
            kind: PKind::Element(Element {
                name,
                attrs,
                foreign,
            }),
            parent: self.current(),
            end: idx + 1,
        });
        if !void {
            self.open.push(idx);
            let h = name_hash(self.name_of(idx));
            self.counts[h] += 1;
        }
        idx
    }

    fn pop_current(&mut self) {
        if self.open.len() > 1 {
            let idx = self.open.pop().unwrap_or(0);
            self.nodes[idx as usize].end = self.nodes.len() as u32;
            let h = name_hash(self.name_of(idx));
            self.counts[h] = self.counts[h].saturating_sub(1);
        }
    }

    /// Pops up to and including the open element at stack position `pos`.
    fn pop_to(&mut self, pos: usize) {
        while self.open.len() > pos.max(1) {
            self.pop_current();
        }
    }

    /// Stack position of the nearest open `name`, not crossing `stop` elements.
    fn find_open(&self, name: &str, stop: impl Fn(&str) -> bool) -> Option<usize> {
        if !self.is_open(name) {
            return None;
        }
        for pos in (1..self.open.len()).rev() {
            let n = self.name_of(self.open[pos]);
            if n == name {
                return Some(pos);
            }
            if stop(n) {
                return None;
            }
        }
        None
    }

    fn ensure_html(&mut self) {
        if self.html.is_none() {
            self.html = Some(self.push_element(Cow::Borrowed("html"), Vec::new(), false, false));
        }
    }

    fn ensure_head(&mut self) {
        self.ensure_html();
        if self.head.is_none() {
            self.head = Some(self.push_element(Cow::Borrowed("head"), Vec::new(), false, false));
            self.mode = Mode::InHead;
        }
    }

    /// Leaves the head (implied `</head>`, an empty head when there was
    /// none, as browsers build it) and opens the body.
    fn ensure_body(&mut self) {
        if self.mode == Mode::InBody {
            return;
        }
        self.ensure_html();
        self.close_head();
        if self.body.is_none() {
            self.body = Some(self.push_element(Cow::Borrowed("body"), Vec::new(), false, false));
        }
        self.mode = Mode::InBody;
    }

    fn text(&mut self, t: Cow<'h, str>) {
        if t.is_empty() {
            return;
        }
        if self.mode != Mode::InBody {
            if t.bytes()
                .all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'))
            {
                return;
            }
            if self.mode == Mode::InHead && self.current() != self.head.unwrap_or(0) {
                // Inside a head element (noscript, template): keep it there.
                self.text_raw(t);
                return;
            }
            self.ensure_body();
        }
        self.text_raw(t);
    }

    fn text_raw(&mut self, mut t: Cow<'h, str>) {
        if std::mem::take(&mut self.skip_newline) {
            if let Some(rest) = t.strip_prefix('\n') {
                t = match t {
                    Cow::Borrowed(b) => Cow::Borrowed(&b[1..]),
                    Cow::Owned(_) => Cow::Owned(rest.to_string()),
                };
            }
            if t.is_empty() {
                return;
            }
        }
        let cur = self.current();
        // Adjacent text (split by a comment or a dropped tag) is one node.
        if let Some(last) = self.nodes.last_mut() {
            if last.parent == cur {
                if let PKind::Text(prev) = &mut last.kind {
                    prev.to_mut().push_str(&t);
                    return;
                }
            }
        }
        let idx = self.nodes.len() as u32;
        self.nodes.push(PNode {
            kind: PKind::Text(t),
            parent: cur,
            end: idx + 1,
        });
    }

    /// Handles a start tag; returns how to read its content when it is a
    /// raw-text element that was opened.
    fn start_tag(
        &mut self,
        name: Cow<'h, str>,
        attrs: Vec<(Cow<'h, str>, Cow<'h, str>)>,
        self_closing: bool,
    ) -> Option<Raw> {
        self.skip_newline = false;
        let foreign_parent = self.in_foreign();
        if foreign_parent {
            let void = self_closing;
            if self.open.len() >= MAX_OPEN && !void {
                self.swallow_start(&name);
                return None;
            }
            self.push_element(name, attrs, true, void);
            return None;
        }
        match name.as_ref() {
            "html" => {
                if self.html.is_none() {
                    self.html = Some(self.push_element(name, attrs, false, false));
                }
                return None;
            }
            "head" => {
                if self.head.is_none() && self.mode == Mode::BeforeHead {
                    self.ensure_html();
                    self.head = Some(self.push_element(name, attrs, false, false));
                    self.mode = Mode::InHead;
                }
                return None;
            }
            "body" => {
                if self.body.is_none() {
                    self.ensure_html();
                    self.close_head();
                    self.body = Some(self.push_element(name, attrs, false, false));
                    self.mode = Mode::InBody;
                }
                return None;
            }
            _ => {}
        }
        if self.mode != Mode::InBody {
            if is_head_element(&name) && self.mode != Mode::AfterHead {
                self.ensure_head();
            } else if is_head_element(&name) && self.mode == Mode::AfterHead {
                // Head content after `</head>` goes back into the head.
                self.ensure_html();
                if let Some(h) = self.head {
                    self.open.push(h);
                    self.mode = Mode::InHead;
                    let raw = self.open_element(name, attrs, self_closing);
                    if raw.is_none() {
                        // Void: back out of the head again.
                        self.open.pop();
                        self.mode = Mode::AfterHead;
                    }
                    return raw;
                }
            } else if !(self.mode == Mode::InHead && self.current() != self.head.unwrap_or(0)) {
                self.ensure_body();
            }
        }
        // Too deep: dropped before it can imply anything (as the html5ever
        // guard drops it before the tree builder sees it).
        if self.open.len() >= MAX_OPEN && !is_void(&name) {
            self.swallow_start(&name);
            return None;
        }
        self.implied_ends(&name);
        self.open_element(name, attrs, self_closing)
    }

    /// Closes the head (creating an empty one first when there is none).
    fn close_head(&mut self) {
        if self.head.is_none() {
            self.ensure_head();
        }
        if let Some(h) = self.head {
            if let Some(pos) = self.open.iter().rposition(|&x| x == h) {
                self.pop_to(pos);
            }
        }
        self.mode = Mode::AfterHead;
    }

    fn open_element(
        &mut self,
        name: Cow<'h, str>,
        attrs: Vec<(Cow<'h, str>, Cow<'h, str>)>,
        _self_closing: bool,
    ) -> Option<Raw> {
        let void = is_void(&name);
        let foreign = matches!(name.as_ref(), "svg" | "math");
        let raw = if void { None } else { raw_kind(&name) };
        let newline = matches!(name.as_ref(), "pre" | "listing" | "textarea");
        self.push_element(name, attrs, foreign, void);
        self.skip_newline = newline;
        raw
    }

    fn swallow_start(&mut self, name: &str) {
        match self.swallow.iter_mut().find(|(n, _)| n == name) {
            Some((_, c)) => *c += 1,
            None => self.swallow.push((name.to_string(), 1)),
        }
    }

    /// End tags the start of `name` implies.
    fn implied_ends(&mut self, name: &str) {
        if closes_p(name) {
            if let Some(pos) = self.find_open("p", |n| is_scope_boundary(n) || n == "button") {
                self.pop_to(pos);
            }
        }
        match name {
            "li" => self.close_item(&["li"], stops_item_search),
            "dd" | "dt" => self.close_item(&["dd", "dt"], stops_item_search),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" if is_heading(self.current_name()) => {
                self.pop_current();
            }
            "a" => {
                if let Some(pos) = self.find_open("a", is_scope_boundary) {
                    self.pop_to(pos);
                }
            }
            "option" if self.current_name() == "option" => self.pop_current(),
            "optgroup" => {
                if self.current_name() == "option" {
                    self.pop_current();
                }
                if self.current_name() == "optgroup" {
                    self.pop_current();
                }
            }
            "button" => {
                if let Some(pos) = self.find_open("button", is_scope_boundary) {
                    self.pop_to(pos);
                }
            }
            "td" | "th" => {
                for cell in ["td", "th"] {
                    if let Some(pos) =
                        self.find_open(cell, |n| n == "table" || n == "tr" || n == "template")
                    {
                        self.pop_to(pos);
                    }
                }
                if matches!(self.current_name(), "table" | "thead" | "tbody" | "tfoot") {
                    self.implied_ends("tr");
                    if self.current_name() == "table" {
                        self.push_element(Cow::Borrowed("tbody"), Vec::new(), false, false);
                    }
                    self.push_element(Cow::Borrowed("tr"), Vec::new(), false, false);
                }
            }
            "tr" => {
                for inner in ["td", "th", "tr"] {
                    if let Some(pos) = self.find_open(inner, |n| n == "table" || n == "template") {
                        self.pop_to(pos);
                    }
                }
                if self.current_name() == "table" {
                    self.push_element(Cow::Borrowed("tbody"), Vec::new(), false, false);
                }
            }
            "thead" | "tbody" | "tfoot" | "caption" | "colgroup" => {
                for inner in [
                    "td", "th", "tr", "thead", "tbody", "tfoot", "caption", "colgroup",
                ] {
                    if let Some(pos) = self.find_open(inner, |n| n == "table" || n == "template") {
                        self.pop_to(pos);
                    }
                }
            }
            _ => {}
        }
    }

    fn close_item(&mut self, names: &[&str], stop: impl Fn(&str) -> bool) {
        if !names.iter().any(|n| self.is_open(n)) {
            return;
        }
        for pos in (1..self.open.len()).rev() {
            let n = self.name_of(self.open[pos]);
            if names.contains(&n) {
                self.pop_to(pos);
                return;
            }
            if stop(n) {
                return;
            }
        }
    }

    fn end_tag(&mut self, name: &str) {
        self.skip_newline = false;
        if let Some((_, c)) = self.swallow.iter_mut().find(|(n, _)| n == name) {
            if *c > 0 {
                *c -= 1;
                return;
            }
        }
        match name {
            "html" | "body" => {
                // Content after `</body>` still belongs to the body.
                return;
            }
            "head" => {
                if self.mode == Mode::InHead {
                    self.close_head();
                }
                return;
            }
            "br" => {
                // `</br>` is read as `<br>`.
                self.start_tag(Cow::Borrowed("br"), Vec::new(), false);
                return;
            }
            "p" => {
                if self
                    .find_open("p", |n| is_scope_boundary(n) || n == "button")
                    .is_none()
                {
                    // `</p>` with no open p: an empty paragraph.
                    self.start_tag(Cow::Borrowed("p"), Vec::new(), false);
                }
                if let Some(pos) = self.find_open("p", |n| is_scope_boundary(n) || n == "button") {
                    self.pop_to(pos);
                }
                return;
            }
            _ => {}
        }
        let stop: fn(&str) -> bool = match name {
            "td" | "th" | "tr" | "thead" | "tbody" | "tfoot" | "caption" => {
                |n| n == "table" || n == "template" || n == "html"
            }
            "table" => |n| n == "template" || n == "html",
            "li" => |n| is_scope_boundary(n) || n == "ul" || n == "ol",
            _ => is_scope_boundary,
        };
        if self.in_foreign() {
            // Foreign content: close the nearest match, whatever it is.
            if let Some(pos) = self.find_open(name, |_| false) {
                self.pop_to(pos);
            }
            return;
        }
        if let Some(pos) = self.find_open(name, stop) {
            self.pop_to(pos);
        }
    }

    fn finish(mut self) -> Parsed<'h> {
        if self.html.is_none() {
            // An empty page still has html/head/body, as browsers build it.
            self.ensure_body();
        }
        while self.open.len() > 1 {
            self.pop_current();
        }
        let len = self.nodes.len() as u32;
        self.nodes[0].end = len;
        Parsed { nodes: self.nodes }
    }
}

fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    memchr::memchr(needle, hay)
}

/// First position of `pat` in `bytes` at or after `from`.
fn find(bytes: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    let first = pat[0];
    let mut i = from;
    while i + pat.len() <= bytes.len() {
        let p = memchr(first, &bytes[i..])? + i;
        if bytes[p..].starts_with(pat) {
            return Some(p);
        }
        i = p + 1;
    }
    None
}

/// Position after the next `>` (or the end).
fn skip_to_gt(bytes: &[u8], from: usize) -> usize {
    match memchr(b'>', bytes.get(from..).unwrap_or(&[])) {
        Some(p) => from + p + 1,
        None => bytes.len(),
    }
}

/// Position of `</name` (any case) followed by a space, `/` or `>`.
fn find_end_tag(bytes: &[u8], from: usize, name: &[u8]) -> Option<usize> {
    let mut i = from;
    loop {
        let p = find(bytes, i, b"</")?;
        let after = p + 2 + name.len();
        if after <= bytes.len()
            && bytes[p + 2..after].eq_ignore_ascii_case(name)
            && matches!(
                bytes.get(after).copied(),
                None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>')
            )
        {
            return Some(p);
        }
        i = p + 2;
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// A tag name from `from`, lower-cased; and the position after it.
fn read_name(html: &str, from: usize) -> (Cow<'_, str>, usize) {
    let bytes = html.as_bytes();
    let mut end = from;
    let mut upper = false;
    while end < bytes.len() && !is_space(bytes[end]) && bytes[end] != b'/' && bytes[end] != b'>' {
        upper |= bytes[end].is_ascii_uppercase();
        end += 1;
    }
    // `end` stops at ASCII bytes, so it is a char boundary.
    let name = &html[from..end];
    let name = if upper {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    };
    (name, end)
}

type Attrs<'h> = Vec<(Cow<'h, str>, Cow<'h, str>)>;

/// Attributes up to the tag's `>`: (attributes, self-closing, position after `>`).
fn read_attrs(html: &str, from: usize) -> (Attrs<'_>, bool, usize) {
    let bytes = html.as_bytes();
    let n = bytes.len();
    let mut attrs: Attrs<'_> = Vec::new();
    let mut i = from;
    let mut self_closing = false;
    loop {
        while i < n && is_space(bytes[i]) {
            i += 1;
        }
        if i >= n {
            return (attrs, self_closing, n);
        }
        match bytes[i] {
            b'>' => return (attrs, self_closing, i + 1),
            b'/' => {
                self_closing = bytes.get(i + 1) == Some(&b'>');
                i += 1;
                continue;
            }
            _ => {}
        }
        self_closing = false;
        // Name: up to space, `/`, `>` or `=` (a leading `=` belongs to it).
        let start = i;
        i += 1;
        let mut upper = bytes[start].is_ascii_uppercase();
        while i < n && !is_space(bytes[i]) && !matches!(bytes[i], b'/' | b'>' | b'=') {
            upper |= bytes[i].is_ascii_uppercase();
            i += 1;
        }
        let name = &html[start..i];
        let name = if upper {
            Cow::Owned(name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(name)
        };
        let mut j = i;
        while j < n && is_space(bytes[j]) {
            j += 1;
        }
        let mut value = Cow::Borrowed("");
        if j < n && bytes[j] == b'=' {
            j += 1;
            while j < n && is_space(bytes[j]) {
                j += 1;
            }
            if j < n && (bytes[j] == b'"' || bytes[j] == b'\'') {
                let q = bytes[j];
                let vstart = j + 1;
                let vend = memchr(q, &bytes[vstart..]).map_or(n, |p| vstart + p);
                value = decode(&html[vstart..vend], true);
                i = (vend + 1).min(n);
            } else {
                let vstart = j;
                while j < n && !is_space(bytes[j]) && bytes[j] != b'>' {
                    j += 1;
                }
                value = decode(&html[vstart..j], true);
                i = j;
            }
        }
        if !attrs.iter().any(|(k, _)| *k == name) {
            attrs.push((name, value));
        }
    }
}

/// Decodes character references; borrows when there are none.
pub fn decode(s: &str, in_attr: bool) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    let Some(first) = memchr(b'&', bytes) else {
        return if memchr(0, bytes).is_some() {
            Cow::Owned(s.replace('\0', "\u{fffd}"))
        } else {
            Cow::Borrowed(s)
        };
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..first]);
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] != b'&' {
            let next = memchr(b'&', &bytes[i..]).map_or(bytes.len(), |p| i + p);
            out.push_str(&s[i..next]);
            i = next;
            continue;
        }
        match reference(s, i, in_attr) {
            Some((ch, len)) => {
                out.push_str(ch.as_str());
                i += len;
            }
            None => {
                out.push('&');
                i += 1;
            }
        }
    }
    if out.contains('\0') {
        out = out.replace('\0', "\u{fffd}");
    }
    Cow::Owned(out)
}

/// Up to two characters a reference stands for.
struct Chars {
    buf: [u8; 8],
    len: usize,
}

impl Chars {
    fn new(a: char, b: Option<char>) -> Chars {
        let mut buf = [0u8; 8];
        let mut len = a.encode_utf8(&mut buf).len();
        if let Some(b) = b {
            len += b.encode_utf8(&mut buf[len..]).len();
        }
        Chars { buf, len }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

/// The reference at `s[at]` (an `&`): its characters and byte length.
fn reference(s: &str, at: usize, in_attr: bool) -> Option<(Chars, usize)> {
    let bytes = s.as_bytes();
    let mut i = at + 1;
    if bytes.get(i) == Some(&b'#') {
        i += 1;
        let hex = matches!(bytes.get(i), Some(b'x' | b'X'));
        if hex {
            i += 1;
        }
        let start = i;
        let mut v: u32 = 0;
        while i < bytes.len() {
            let d = match bytes[i] {
                c @ b'0'..=b'9' => (c - b'0') as u32,
                c @ b'a'..=b'f' if hex => (c - b'a' + 10) as u32,
                c @ b'A'..=b'F' if hex => (c - b'A' + 10) as u32,
                _ => break,
            };
            v = v
                .saturating_mul(if hex { 16 } else { 10 })
                .saturating_add(d);
            i += 1;
        }
        if i == start {
            return None;
        }
        if bytes.get(i) == Some(&b';') {
            i += 1;
        }
        let ch = match v {
            0 => '\u{fffd}',
            0x80..=0x9f => windows_1252(v),
            _ => char::from_u32(v).unwrap_or('\u{fffd}'),
        };
        return Some((Chars::new(ch, None), i - at));
    }
    // Named: the longest entity name that matches.
    let start = i;
    while i < bytes.len() && i - start < 32 && bytes[i].is_ascii_alphanumeric() {
        i += 1;
    }
    if i == start {
        return None;
    }
    let entities = &html5ever::data::NAMED_ENTITIES;
    if bytes.get(i) == Some(&b';') {
        // The table also lists every prefix of a name, as (0, 0).
        if let Some(&(a, b)) = entities.get(&s[start..=i]).filter(|e| e.0 != 0) {
            return Some((to_chars(a, b), i + 1 - at));
        }
    }
    // Legacy references without `;` (`&amp`, `&copy`): longest prefix.
    for end in (start + 2..=i).rev() {
        if let Some(&(a, b)) = entities.get(&s[start..end]).filter(|e| e.0 != 0) {
            if in_attr
                && end < bytes.len()
                && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'=')
            {
                return None;
            }
            return Some((to_chars(a, b), end - at));
        }
    }
    None
}

fn to_chars(a: u32, b: u32) -> Chars {
    Chars::new(
        char::from_u32(a).unwrap_or('\u{fffd}'),
        (b != 0).then(|| char::from_u32(b).unwrap_or('\u{fffd}')),
    )
}

/// Numeric references in 0x80..0x9F mean windows-1252 characters.
fn windows_1252(v: u32) -> char {
    const TABLE: [u32; 32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
        0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ];
    char::from_u32(TABLE[(v - 0x80) as usize]).unwrap_or('\u{fffd}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree as an indented outline: `name` for elements, `"text"` for text.
    fn outline(html: &str) -> String {
        let p = parse(html);
        let mut depth = vec![0usize; p.nodes.len()];
        let mut out = String::new();
        for (i, n) in p.nodes.iter().enumerate().skip(1) {
            depth[i] = if n.parent == 0 {
                0
            } else {
                depth[n.parent as usize] + 1
            };
            out.push_str(&"  ".repeat(depth[i]));
            match &n.kind {
                PKind::Element(e) => {
                    out.push_str(&e.name);
                    for (k, v) in &e.attrs {
                        out.push_str(&format!(" {k}={v:?}"));
                    }
                }
                PKind::Text(t) => out.push_str(&format!("{t:?}")),
                PKind::Document => {}
            }
            out.push('\n');
        }
        // Subtree ends are consistent with parents.
        for (i, n) in p.nodes.iter().enumerate().skip(1) {
            let parent = &p.nodes[n.parent as usize];
            assert!(n.parent < i as u32 && n.end <= parent.end && n.end > i as u32);
        }
        out
    }

    #[test]
    fn implied_structure() {
        assert_eq!(
            outline("<title>T</title><p>Hi"),
            "html\n  head\n    title\n      \"T\"\n  body\n    p\n      \"Hi\"\n"
        );
        assert_eq!(outline(""), "html\n  head\n  body\n");
        // Head elements after the content start stay in the body.
        assert_eq!(
            outline("<p>a</p><script>x<y</script>"),
            "html\n  head\n  body\n    p\n      \"a\"\n    script\n      \"x<y\"\n"
        );
    }

    #[test]
    fn implied_end_tags() {
        assert_eq!(
            outline("<body><p>one<p>two<div>three</div>"),
            "html\n  head\n  body\n    p\n      \"one\"\n    p\n      \"two\"\n    div\n      \"three\"\n"
        );
        assert_eq!(
            outline("<body><ul><li>a<li>b<ul><li>c</ul></ul>"),
            "html\n  head\n  body\n    ul\n      li\n        \"a\"\n      li\n        \"b\"\n        ul\n          li\n            \"c\"\n"
        );
        assert_eq!(
            outline("<body><table><tr><td>1<td>2<tr><td>3</table>"),
            "html\n  head\n  body\n    table\n      tbody\n        tr\n          td\n            \"1\"\n          td\n            \"2\"\n        tr\n          td\n            \"3\"\n"
        );
        assert_eq!(
            outline("<body><a href=x>1<a href=y>2</a>"),
            "html\n  head\n  body\n    a href=\"x\"\n      \"1\"\n    a href=\"y\"\n      \"2\"\n"
        );
    }

    #[test]
    fn end_tags_respect_scope() {
        // `</div>` inside a cell does not close the div around the table.
        assert_eq!(
            outline("<body><div><table><tr><td>x</div>y</td></tr></table>z</div>w"),
            "html\n  head\n  body\n    div\n      table\n        tbody\n          tr\n            td\n              \"xy\"\n      \"z\"\n    \"w\"\n"
        );
        // An end tag matching nothing is ignored.
        assert_eq!(
            outline("<body><b>x</i>y</b>"),
            "html\n  head\n  body\n    b\n      \"xy\"\n"
        );
    }

    #[test]
    fn attributes_and_references() {
        assert_eq!(
            outline("<body><a HREF='/a?x=1&amp;y=2' title=\"&lt;b&gt;\" data-x=&copy=1 hidden>&amp; &copy 2024 &#x41;&#66; &notit; &#150;</a>"),
            "html\n  head\n  body\n    a href=\"/a?x=1&y=2\" title=\"<b>\" data-x=\"&copy=1\" hidden=\"\"\n      \"& © 2024 AB ¬it; –\"\n"
        );
        assert_eq!(decode("a &unknown; b", false), "a &unknown; b");
        assert!(matches!(decode("plain", false), Cow::Borrowed(_)));
    }

    #[test]
    fn raw_text_comments_and_foreign() {
        assert_eq!(
            outline("<body><!-- c --><style>p>a{}</style><textarea>\n&lt;x</textarea><svg><path d='M0'/><text>t</text></svg>"),
            "html\n  head\n  body\n    style\n      \"p>a{}\"\n    textarea\n      \"<x\"\n    svg\n      path d=\"M0\"\n      text\n        \"t\"\n"
        );
        // An unterminated script runs to the end.
        assert_eq!(
            outline("<body><script>if (a</b) x"),
            "html\n  head\n  body\n    script\n      \"if (a</b) x\"\n"
        );
    }

    #[test]
    fn hostile_nesting_stays_bounded() {
        let deep = "<div>".repeat(100_000) + "x" + &"</div>".repeat(100_000) + "<p>after</p>";
        let p = parse(&deep);
        let max_depth = {
            let mut d = vec![0u32; p.nodes.len()];
            for i in 1..p.nodes.len() {
                d[i] = d[p.nodes[i].parent as usize] + 1;
            }
            d.into_iter().max().unwrap_or(0)
        };
        assert!(max_depth as usize <= MAX_OPEN + 1, "{max_depth}");
        // The page climbs back out: the paragraph is a child of the body.
        let last = p
            .nodes
            .iter()
            .rposition(|n| matches!(&n.kind, PKind::Element(e) if e.name == "p"))
            .unwrap();
        let parent = p.nodes[last].parent as usize;
        assert!(matches!(&p.nodes[parent].kind, PKind::Element(e) if e.name == "body"));
        let unclosed = "<b>".repeat(50_000) + "text";
        assert!(parse(&unclosed).nodes.len() < 1_000);
    }

    #[test]
    fn searches_for_elements_that_are_not_open_cost_nothing() {
        // 100k divs (each would look for an open <p>) and 100k stray end
        // tags under a 500-deep stack: linear, so quick even unoptimised.
        let page = "<span>".repeat(500) + &"<div>".repeat(100_000) + &"</i>".repeat(100_000) + "x";
        let started = std::time::Instant::now();
        let p = parse(&page);
        assert!(p.nodes.len() < 2_000);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }
}
