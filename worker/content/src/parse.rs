//! HTML parsing with html5ever behind a guard that keeps hostile markup linear.
//!
//! html5ever's tree builder walks its stack of open elements on many tokens
//! (scope checks, the adoption agency), so 100,000 nested `<div>`s cost
//! minutes, and distinct unclosed formatting elements are re-created in every
//! block ("reconstruct the active formatting elements"). Browsers cap the
//! depth too (Chromium at 512). The guard sits between the tokenizer and the
//! tree builder: it measures the builder's real stack every few tokens and,
//! past [`MAX_OPEN`], drops start tags (and the end tags that pair with them)
//! until the page climbs back out; when re-created formatting elements
//! multiply the node count, it inserts a marker element so that they stop.

use std::cell::{Cell, Ref, RefCell};
use std::collections::HashMap;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
    TokenizerResult,
};
use html5ever::tree_builder::{
    ElementFlags, NodeOrText, QuirksMode, Tracer, TreeBuilder, TreeBuilderOpts, TreeSink,
};
use html5ever::{Attribute, LocalName, QualName};
use scraper::{Html, HtmlTreeSink};

use super::html::{is_void, MAX_OPEN};

/// Attribute that marks the marker element the guard inserts; readers skip it.
pub const GUARD_ATTR: &str = "data-webdata-guard";
/// The handle type of scraper's tree (an ego_tree node id).
type Handle = <HtmlTreeSink as TreeSink>::Handle;
/// The guard measures the builder's stack once per this many tokens.
const CHECK_EVERY: u32 = 32;
/// Elements created per window beyond which re-creation counts as runaway.
const RUNAWAY_PER_WINDOW: usize = 8 * CHECK_EVERY as usize;

/// Parses a whole document like `scraper::Html::parse_document`, guarded.
pub fn parse_document(html: &str) -> Html {
    let sink = CountingSink {
        inner: HtmlTreeSink::new(Html::new_document()),
        created: Cell::new(0),
    };
    let builder = TreeBuilder::new(sink, TreeBuilderOpts::default());
    let guard = Guard {
        builder,
        tokens: Cell::new(0),
        deep: Cell::new(false),
        swallow: RefCell::new(HashMap::new()),
        last_created: Cell::new(0),
    };
    let tokenizer = Tokenizer::new(guard, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // A `Script` result only pauses for script execution, which we never do.
    while let TokenizerResult::Script(_) = tokenizer.feed(&input) {}
    tokenizer.end();
    tokenizer.sink.builder.sink.inner.finish()
}

/// Start tags that switch the tokenizer to raw text: dropping one would make
/// the tokenizer read script or style source as markup.
fn is_raw_text(name: &str) -> bool {
    matches!(
        name,
        "script"
            | "style"
            | "textarea"
            | "title"
            | "xmp"
            | "iframe"
            | "noembed"
            | "noframes"
            | "noscript"
            | "plaintext"
    )
}

struct Guard {
    builder: TreeBuilder<<CountingSink as TreeSink>::Handle, CountingSink>,
    tokens: Cell<u32>,
    deep: Cell<bool>,
    /// End tags to swallow because their start tags were dropped.
    swallow: RefCell<HashMap<LocalName, u32>>,
    last_created: Cell<usize>,
}

/// Counts every handle the tree builder holds (open elements, formatting list).
struct CountTracer(Cell<usize>);

impl Tracer for CountTracer {
    type Handle = Handle;
    fn trace_handle(&self, _node: &Self::Handle) {
        self.0.set(self.0.get() + 1);
    }
}

impl Guard {
    /// Re-measures the builder every `CHECK_EVERY` tokens.
    fn check(&self) {
        let n = self.tokens.get() + 1;
        if n < CHECK_EVERY {
            self.tokens.set(n);
            return;
        }
        self.tokens.set(0);
        let tracer = CountTracer(Cell::new(0));
        self.builder.trace_handles(&tracer);
        self.deep.set(tracer.0.get() > MAX_OPEN);
        let created = self.builder.sink.created.get();
        let grown = created.saturating_sub(self.last_created.get());
        self.last_created.set(created);
        if grown > RUNAWAY_PER_WINDOW && !self.deep.get() {
            // A marker in the formatting list ends re-creation of what is before it.
            let marker = Tag {
                kind: TagKind::StartTag,
                name: LocalName::from("marquee"),
                self_closing: false,
                attrs: vec![Attribute {
                    name: QualName::new(
                        None,
                        html5ever::Namespace::from(""),
                        LocalName::from(GUARD_ATTR),
                    ),
                    value: StrTendril::new(),
                }],
            };
            let _ = self.builder.process_token(Token::TagToken(marker), 0);
        }
    }

    /// Decides whether a tag reaches the tree builder.
    fn admit(&self, tag: &Tag) -> bool {
        let name: &str = &tag.name;
        match tag.kind {
            TagKind::StartTag => {
                if !self.deep.get() || is_void(name) || is_raw_text(name) || tag.self_closing {
                    return true;
                }
                *self
                    .swallow
                    .borrow_mut()
                    .entry(tag.name.clone())
                    .or_insert(0) += 1;
                false
            }
            TagKind::EndTag => {
                let mut swallow = self.swallow.borrow_mut();
                match swallow.get_mut(&tag.name) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                }
            }
        }
    }
}

impl TokenSink for Guard {
    type Handle = Handle;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<Self::Handle> {
        self.check();
        if let Token::TagToken(tag) = &token {
            if !self.admit(tag) {
                return TokenSinkResult::Continue;
            }
        }
        self.builder.process_token(token, line_number)
    }

    fn end(&self) {
        self.builder.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.builder
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// scraper's sink, counting the elements the builder creates.
struct CountingSink {
    inner: HtmlTreeSink,
    created: Cell<usize>,
}

impl TreeSink for CountingSink {
    type Handle = Handle;
    type Output = Html;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> Html {
        self.inner.finish()
    }
    fn parse_error(&self, _msg: std::borrow::Cow<'static, str>) {
        // Parse errors are not reported; keeping them costs memory on bad pages.
    }
    fn get_document(&self) -> Self::Handle {
        self.inner.get_document()
    }
    fn elem_name<'a>(&'a self, target: &'a Self::Handle) -> Self::ElemName<'a> {
        self.inner.elem_name(target)
    }
    fn create_element(
        &self,
        name: QualName,
        attrs: Vec<Attribute>,
        flags: ElementFlags,
    ) -> Self::Handle {
        self.created.set(self.created.get() + 1);
        self.inner.create_element(name, attrs, flags)
    }
    fn create_comment(&self, text: StrTendril) -> Self::Handle {
        self.inner.create_comment(text)
    }
    fn create_pi(&self, target: StrTendril, data: StrTendril) -> Self::Handle {
        self.inner.create_pi(target, data)
    }
    fn append(&self, parent: &Self::Handle, child: NodeOrText<Self::Handle>) {
        self.inner.append(parent, child)
    }
    fn append_based_on_parent_node(
        &self,
        element: &Self::Handle,
        prev_element: &Self::Handle,
        child: NodeOrText<Self::Handle>,
    ) {
        self.inner
            .append_based_on_parent_node(element, prev_element, child)
    }
    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.inner
            .append_doctype_to_document(name, public_id, system_id)
    }
    fn get_template_contents(&self, target: &Self::Handle) -> Self::Handle {
        self.inner.get_template_contents(target)
    }
    fn same_node(&self, x: &Self::Handle, y: &Self::Handle) -> bool {
        x == y
    }
    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.inner.set_quirks_mode(mode)
    }
    fn append_before_sibling(&self, sibling: &Self::Handle, new_node: NodeOrText<Self::Handle>) {
        self.inner.append_before_sibling(sibling, new_node)
    }
    fn add_attrs_if_missing(&self, target: &Self::Handle, attrs: Vec<Attribute>) {
        self.inner.add_attrs_if_missing(target, attrs)
    }
    fn remove_from_parent(&self, target: &Self::Handle) {
        self.inner.remove_from_parent(target)
    }
    fn reparent_children(&self, node: &Self::Handle, new_parent: &Self::Handle) {
        self.inner.reparent_children(node, new_parent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_of_text(html: &Html, needle: &str) -> Option<usize> {
        html.tree
            .nodes()
            .find(|n| n.value().as_text().is_some_and(|t| t.contains(needle)))
            .map(|n| n.ancestors().count())
    }

    #[test]
    fn nesting_is_capped_and_the_page_climbs_back_out() {
        let page = format!(
            "<body>{}deep{}<p>after</p></body>",
            "<div>".repeat(5_000),
            "</div>".repeat(5_000)
        );
        let html = parse_document(&page);
        let deep = depth_of_text(&html, "deep").unwrap_or(0);
        assert!(
            deep > 400 && deep <= MAX_OPEN + 2 * CHECK_EVERY as usize,
            "{deep}"
        );
        // The dropped start tags swallowed their end tags: "after" is back near the top.
        assert_eq!(depth_of_text(&html, "after"), Some(4));
    }

    #[test]
    fn ordinary_pages_parse_like_scraper() {
        let page = "<table><tr><td>a<td>b</table><p>x<b>y<p>z</b>w";
        let ours = parse_document(page);
        let theirs = Html::parse_document(page);
        assert_eq!(ours.root_element().html(), theirs.root_element().html());
    }

    #[test]
    fn recreated_formatting_elements_stop_multiplying() {
        // Formatting elements closed by `</p>` stay in the active list and are
        // re-opened in every later paragraph.
        let page = format!(
            "<p>{}</p>{}",
            (0..200)
                .map(|i| format!("<i class=\"c{i}\">"))
                .collect::<String>(),
            "<p>para</p>".repeat(5_000)
        );
        let nodes = parse_document(&page).tree.nodes().count();
        // Unguarded, every paragraph would re-create 200 elements (a million nodes).
        assert!(nodes < 100_000, "{nodes} nodes");
        let paras = parse_document(&page)
            .tree
            .nodes()
            .filter(|n| n.value().as_text().is_some_and(|t| t.contains("para")))
            .count();
        assert_eq!(paras, 5_000);
    }
}
