//! Page metadata: title, description, language, canonical URL, publish date,
//! author, Open Graph image, and (on request) every JSON-LD block.

use serde_json::Value;
use webdata_core::types::Metadata;

use super::dom::{push_collapsed, Dom, Kind, Resolver, Tag};

/// Values of interest found in one pass over the page.
#[derive(Default)]
struct Found {
    title: Option<String>,
    metas: Vec<(String, String)>,
    canonical: Option<String>,
    rel_author: Option<String>,
    lang: Option<String>,
    time_in_article: Option<String>,
    json_ld: Vec<Value>,
}

/// Reads the metadata of a page; `with_json_ld` keeps the parsed JSON-LD blocks.
pub fn extract(dom: &Dom<'_>, resolver: &Resolver, with_json_ld: bool) -> Metadata {
    let f = scan(dom);
    let meta = |keys: &[&str]| -> Option<String> {
        keys.iter().find_map(|k| {
            f.metas
                .iter()
                .find(|(name, v)| name == k && !v.is_empty())
                .map(|(_, v)| v.clone())
        })
    };
    let from_ld = |key: &str| f.json_ld.iter().find_map(|v| find_key(v, key));
    let title = f
        .title
        .clone()
        .or_else(|| meta(&["og:title", "twitter:title"]));
    let description = meta(&["description", "og:description", "twitter:description"]);
    let language = f
        .lang
        .clone()
        .or_else(|| meta(&["content-language", "og:locale"]));
    let canonical_url = f
        .canonical
        .as_deref()
        .and_then(|c| resolver.http(c))
        .map(|u| u.to_string());
    let published_at = meta(&[
        "article:published_time",
        "datepublished",
        "og:published_time",
        "date",
        "pubdate",
        "publish-date",
        "dc.date",
    ])
    .or_else(|| from_ld("datePublished").and_then(|v| v.as_str().map(str::to_string)))
    .or(f.time_in_article.clone());
    let author = meta(&["author", "article:author", "dc.creator", "twitter:creator"])
        .filter(|a| !a.starts_with("http"))
        .or_else(|| from_ld("author").and_then(|v| author_name(&v)))
        .or(f.rel_author.clone());
    let og_image = meta(&[
        "og:image",
        "og:image:url",
        "og:image:secure_url",
        "twitter:image",
    ])
    .and_then(|src| resolver.resolve(&src))
    .map(|u| u.to_string());
    Metadata {
        title,
        description,
        language,
        canonical_url,
        published_at,
        author,
        og_image,
        json_ld: (with_json_ld && !f.json_ld.is_empty()).then_some(f.json_ld),
        ..Metadata::default()
    }
}

fn scan(dom: &Dom<'_>) -> Found {
    let mut f = Found::default();
    let mut in_article = vec![false; dom.len()];
    for i in 0..dom.len() {
        let Kind::Element(er, tag) = dom.nodes[i].kind else {
            continue;
        };
        let p = dom.nodes[i].parent as usize;
        if p < dom.len() {
            in_article[i] = in_article[p] || matches!(dom.tag(p), Some(Tag::Article | Tag::Main));
        }
        let el = er;
        match tag {
            Tag::Html if f.lang.is_none() => f.lang = clean(dom.attr(i, "lang")),
            Tag::Title if f.title.is_none() => f.title = clean(Some(&dom.text_of(i, None))),
            Tag::Meta => {
                let key = el
                    .attr("property")
                    .or_else(|| dom.attr(i, "name"))
                    .or_else(|| dom.attr(i, "itemprop"))
                    .or_else(|| dom.attr(i, "http-equiv"));
                if let (Some(key), Some(content)) = (key, clean(dom.attr(i, "content"))) {
                    f.metas.push((key.trim().to_ascii_lowercase(), content));
                }
            }
            Tag::Link => {
                let rel = dom.attr(i, "rel").unwrap_or("").to_ascii_lowercase();
                let rels: Vec<&str> = rel.split_whitespace().collect();
                if rels.contains(&"canonical") && f.canonical.is_none() {
                    f.canonical = clean(dom.attr(i, "href"));
                }
            }
            Tag::A if f.rel_author.is_none() => {
                let rel = dom.attr(i, "rel").unwrap_or("").to_ascii_lowercase();
                if rel.split_whitespace().any(|r| r == "author") {
                    f.rel_author = clean(Some(&dom.text_of(i, None)));
                }
            }
            Tag::Time if f.time_in_article.is_none() && in_article[i] => {
                f.time_in_article = clean(dom.attr(i, "datetime"));
            }
            Tag::Script => {
                let ty = dom
                    .attr(i, "type")
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                if ty == "application/ld+json" {
                    let raw = dom.text_of_raw(i);
                    if let Ok(v) = serde_json::from_str::<Value>(raw.trim()) {
                        f.json_ld.push(v);
                    }
                }
            }
            _ => {}
        }
    }
    f
}

/// Trimmed, whitespace-collapsed, non-empty.
fn clean(s: Option<&str>) -> Option<String> {
    let mut out = String::new();
    push_collapsed(&mut out, s?);
    let t = out.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// First value stored under `key` anywhere in a JSON-LD tree (iterative, bounded).
fn find_key(root: &Value, key: &str) -> Option<Value> {
    let mut stack = vec![root];
    let mut visited = 0;
    while let Some(v) = stack.pop() {
        visited += 1;
        if visited > 10_000 {
            return None;
        }
        match v {
            Value::Object(map) => {
                if let Some(found) = map.get(key) {
                    return Some(found.clone());
                }
                // Keep document order: push in reverse.
                let children: Vec<&Value> = map.values().collect();
                stack.extend(children.into_iter().rev());
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    None
}

/// A JSON-LD author: a string, a Person/Organization, or a list of them.
fn author_name(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => clean(Some(s)),
        Value::Object(o) => o
            .get("name")
            .and_then(|n| n.as_str())
            .and_then(|s| clean(Some(s))),
        Value::Array(items) => {
            let names: Vec<String> = items.iter().filter_map(author_name).collect();
            (!names.is_empty()).then(|| names.join(", "))
        }
        _ => None,
    }
}
