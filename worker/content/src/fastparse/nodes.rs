//! What the parser emits: a page's nodes in pre-order, elements with their attributes.

use std::borrow::Cow;

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
