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
//! Time is linear in the input: at most [`MAX_OPEN`](crate::html::MAX_OPEN)
//! elements are open at once (deeper start tags are dropped with their end
//! tags, as the html5ever guard does), and every end tag searches at most that
//! many.

mod builder;
mod entities;
mod nodes;
mod rules;
#[cfg(test)]
mod tests;
mod tokenizer;

pub use entities::decode;
pub use nodes::{Element, PKind, PNode, Parsed};
pub use tokenizer::parse;
