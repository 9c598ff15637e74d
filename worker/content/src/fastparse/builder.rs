//! The tree builder: the open-element stack, implied html/head/body, implied end tags, scope.

use std::borrow::Cow;

use super::nodes::{Element, PKind, PNode, Parsed};
use super::rules::{
    closes_p, is_head_element, is_heading, is_scope_boundary, raw_kind, stops_item_search, Raw,
};
use crate::html::{is_void, MAX_OPEN};

/// Where the builder is in the page's implied structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Nothing but the optional `<html>` yet.
    BeforeHead,
    /// In `<head>` (explicit or implied).
    InHead,
    /// `</head>` seen, no body yet.
    AfterHead,
    /// In `<body>`.
    InBody,
}

pub(super) struct Builder<'h> {
    pub(super) nodes: Vec<PNode<'h>>,
    /// Open elements as node indices; `open[0]` is the document.
    pub(super) open: Vec<u32>,
    pub(super) mode: Mode,
    pub(super) html: Option<u32>,
    pub(super) head: Option<u32>,
    pub(super) body: Option<u32>,
    /// Dropped start tags (too deep) per name, whose end tags are dropped too.
    pub(super) swallow: Vec<(String, u32)>,
    /// Drop one leading newline of the next text (after `<pre>`, `<textarea>`).
    pub(super) skip_newline: bool,
    /// Open elements per name slot, so that a search for a name that is not
    /// open costs nothing (100,000 `<div>`s would otherwise each scan the
    /// stack for an open `<p>`, and 100,000 stray end tags the whole stack).
    /// A hash collision only costs a scan, never a wrong answer.
    pub(super) counts: [u32; 256],
}

/// A counter slot for a tag name (FNV-1a, folded to 8 bits).
fn name_hash(name: &str) -> usize {
    let h = name.bytes().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    ((h >> 24) ^ (h >> 16) ^ (h >> 8) ^ h) as usize & 0xff
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

    pub(super) fn current_name(&self) -> &str {
        self.name_of(self.current())
    }

    pub(super) fn in_foreign(&self) -> bool {
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

    pub(super) fn pop_current(&mut self) {
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

    pub(super) fn text(&mut self, t: Cow<'h, str>) {
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

    pub(super) fn text_raw(&mut self, mut t: Cow<'h, str>) {
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
    pub(super) fn start_tag(
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

    pub(super) fn end_tag(&mut self, name: &str) {
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

    pub(super) fn finish(mut self) -> Parsed<'h> {
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
