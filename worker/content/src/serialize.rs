//! The `html` format: the kept content re-serialised, URLs made absolute,
//! event handlers and inline styles dropped. Iterative, like every walk here.

use super::dom::{Dom, Kind, Resolver, Tag};
use super::html::is_void;
use super::main_content::Selection;
use super::parse::GUARD_ATTR;

/// Attributes that hold a URL.
fn is_url_attr(name: &str) -> bool {
    matches!(
        name,
        "href" | "src" | "poster" | "action" | "cite" | "data-src" | "longdesc"
    )
}

/// Serialises the selected subtrees.
pub fn html(dom: &Dom<'_>, sel: &Selection, resolver: &Resolver) -> String {
    let mut out = String::new();
    for &root in &sel.roots {
        let wrapper = matches!(
            dom.nodes[root].kind,
            Kind::Document | Kind::Element(_, Tag::Html | Tag::Body)
        );
        let start = if wrapper { root + 1 } else { root };
        let end = dom.nodes[root].end as usize;
        let mut stack: Vec<usize> = Vec::new();
        let mut i = start;
        while i < end {
            close_finished(dom, &mut stack, i, &mut out);
            if sel.dead[i] {
                i = dom.nodes[i].end as usize;
                continue;
            }
            match dom.nodes[i].kind {
                Kind::Text(t) => escape_text(t, &mut out),
                Kind::Element(_, Tag::Guard) => {}
                Kind::Element(er, _) => {
                    let name = er.name();
                    out.push('<');
                    out.push_str(name);
                    for (attr, value) in er.attrs() {
                        write_attr(resolver, attr, value, &mut out);
                    }
                    out.push('>');
                    if !is_void(name) {
                        stack.push(i);
                    }
                }
                Kind::Document => {}
            }
            i += 1;
        }
        close_finished(dom, &mut stack, usize::MAX, &mut out);
        out.push('\n');
    }
    out.trim_end().to_string()
}

/// Writes end tags for open elements whose subtree ends before `i`.
fn close_finished(dom: &Dom<'_>, stack: &mut Vec<usize>, i: usize, out: &mut String) {
    while let Some(&top) = stack.last() {
        if (dom.nodes[top].end as usize) > i {
            break;
        }
        stack.pop();
        out.push_str("</");
        out.push_str(dom.name(top));
        out.push('>');
    }
}

fn write_attr(resolver: &Resolver, name: &str, value: &str, out: &mut String) {
    if name.starts_with("on") || name == "style" || name == GUARD_ATTR {
        return;
    }
    let value = if is_url_attr(name) {
        match resolver.resolve(value) {
            Some(u) => u.to_string(),
            None => return,
        }
    } else if name == "srcset" {
        value
            .split(',')
            .filter_map(|c| {
                let mut parts = c.split_whitespace();
                let url = resolver.resolve(parts.next()?)?;
                let rest: Vec<&str> = parts.collect();
                Some(if rest.is_empty() {
                    url.to_string()
                } else {
                    format!("{url} {}", rest.join(" "))
                })
            })
            .collect::<Vec<_>>()
            .join(", ")
    } else {
        value.to_string()
    };
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn escape_text(t: &str, out: &mut String) {
    for c in t.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            c => out.push(c),
        }
    }
}

/// Every `<a href>` of the page as an absolute http(s) URL without fragment,
/// first occurrence first.
pub fn links(dom: &Dom<'_>, resolver: &Resolver) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for i in 0..dom.len() {
        if dom.tag(i) != Some(Tag::A) {
            continue;
        }
        let Some(mut url) = dom.attr(i, "href").and_then(|h| resolver.http(h)) else {
            continue;
        };
        url.set_fragment(None);
        let s = url.to_string();
        if seen.insert(s.clone()) {
            out.push(s);
        }
    }
    out
}
