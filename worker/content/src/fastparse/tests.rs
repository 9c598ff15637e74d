//! Tests of the parser: the trees it builds, and that hostile pages stay linear.

use std::borrow::Cow;

use super::*;
use crate::html::MAX_OPEN;

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
