//! Ranking map results against `search`: Okapi BM25 over the words of each
//! URL (path, query and subdomain labels) and its title, so a link scores by
//! how many rare query words it has, with diminishing returns for repeats and
//! a penalty for long documents. Links that match no query word keep their
//! discovery order after every link that does.

use std::collections::HashMap;

use url::Url;
use webdata_core::types::MapLink;

/// Term-frequency saturation.
const K1: f64 = 1.2;
/// Length normalisation.
const B: f64 = 0.75;
/// Weight of a title word relative to a URL word (BM25F-style field weight).
const TITLE_WEIGHT: f64 = 1.0;

/// Lower-case words of `text`: runs of letters and digits, with a plural
/// `s` dropped (`docs` = `doc`) so singular and plural queries meet.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| stem(&w.to_lowercase()))
        .collect()
}

fn stem(w: &str) -> String {
    if w.chars().count() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        w[..w.len() - 1].to_string()
    } else {
        w.to_string()
    }
}

/// The words a link is indexed under: the URL's path and query
/// (percent-decoded), the labels of its host left of the registrable domain,
/// and its title.
fn document(link: &MapLink) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    if let Ok(url) = Url::parse(&link.url) {
        if let Some(host) = url.host_str() {
            let sub = crate::urlnorm::registrable_domain(host)
                .and_then(|d| host.strip_suffix(d.as_str()).map(str::to_string))
                .unwrap_or_default();
            out.extend(words(&sub).into_iter().map(|w| (w, 1.0)));
        }
        let path = percent_encoding::percent_decode_str(url.path()).decode_utf8_lossy();
        out.extend(words(&path).into_iter().map(|w| (w, 1.0)));
        if let Some(q) = url.query() {
            let q = percent_encoding::percent_decode_str(q).decode_utf8_lossy();
            out.extend(words(&q).into_iter().map(|w| (w, 1.0)));
        }
    }
    if let Some(t) = &link.title {
        out.extend(words(t).into_iter().map(|w| (w, TITLE_WEIGHT)));
    }
    out
}

/// BM25 score of every link for `query` (0 for links matching no query word).
pub fn scores(links: &[MapLink], query: &str) -> Vec<f64> {
    let mut terms = words(query);
    terms.sort();
    terms.dedup();
    if terms.is_empty() || links.is_empty() {
        return vec![0.0; links.len()];
    }
    let docs: Vec<Vec<(String, f64)>> = links.iter().map(document).collect();
    let lens: Vec<f64> = docs
        .iter()
        .map(|d| d.iter().map(|(_, w)| w).sum())
        .collect();
    let avg = (lens.iter().sum::<f64>() / lens.len() as f64).max(1.0);
    let n = docs.len() as f64;
    // Document frequency and per-document term frequency of each query term.
    let mut df: HashMap<&str, f64> = HashMap::new();
    let mut tfs: Vec<HashMap<&str, f64>> = Vec::with_capacity(docs.len());
    for d in &docs {
        let mut tf: HashMap<&str, f64> = HashMap::new();
        for (w, weight) in d {
            if let Some(t) = terms.iter().find(|t| *t == w) {
                *tf.entry(t.as_str()).or_default() += weight;
            }
        }
        for t in tf.keys() {
            *df.entry(t).or_default() += 1.0;
        }
        tfs.push(tf);
    }
    tfs.iter()
        .zip(&lens)
        .map(|(tf, &len)| {
            tf.iter()
                .map(|(t, &f)| {
                    let nq = df.get(t).copied().unwrap_or(0.0);
                    let idf = ((n - nq + 0.5) / (nq + 0.5) + 1.0).ln();
                    idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avg))
                })
                .sum()
        })
        .collect()
}

/// Orders `links` by relevance to `query`: best score first, ties and
/// unmatched links in their discovery order.
pub fn rank(links: Vec<MapLink>, query: &str) -> Vec<MapLink> {
    let s = scores(&links, query);
    let mut order: Vec<usize> = (0..links.len()).collect();
    order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
    let mut slots: Vec<Option<MapLink>> = links.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use webdata_core::types::LinkSource;

    fn link(url: &str, title: Option<&str>) -> MapLink {
        MapLink {
            url: url.to_string(),
            title: title.map(str::to_string),
            source: LinkSource::Link,
        }
    }

    fn urls(links: &[MapLink]) -> Vec<&str> {
        links.iter().map(|l| l.url.as_str()).collect()
    }

    #[test]
    fn words_split_lowercase_and_drop_plural_s() {
        assert_eq!(
            words("Docs/API-Reference_v2?q=Pricing Plans"),
            vec!["doc", "api", "reference", "v2", "q", "pricing", "plan"]
        );
        assert_eq!(words("class access"), vec!["class", "access"]);
    }

    #[test]
    fn rarer_and_repeated_terms_rank_higher_and_unmatched_keep_order() {
        let links = vec![
            link("https://a.test/", Some("Home")),
            link("https://a.test/about", Some("About us")),
            link(
                "https://a.test/blog/pricing-update",
                Some("A pricing update"),
            ),
            link("https://a.test/pricing", Some("Pricing plans")),
            link("https://a.test/plans/enterprise", None),
            link("https://a.test/contact", None),
        ];
        let ranked = rank(links, "pricing plans");
        assert_eq!(
            urls(&ranked),
            vec![
                // both words, and "pricing" twice (URL and title) in a short document
                "https://a.test/pricing",
                // one word each: the shorter document wins
                "https://a.test/plans/enterprise",
                "https://a.test/blog/pricing-update",
                // unmatched, in discovery order
                "https://a.test/",
                "https://a.test/about",
                "https://a.test/contact",
            ]
        );
    }

    #[test]
    fn idf_prefers_the_rare_word() {
        // "guide" is on every page, "webhook" on one: the webhook page wins
        // although another page says "guide" twice.
        let links = vec![
            link("https://a.test/guide/guide-intro", Some("Guide")),
            link("https://a.test/guide/webhooks", Some("Guide")),
            link("https://a.test/guide/crawl", Some("Guide")),
        ];
        let ranked = rank(links, "webhook guide");
        assert_eq!(ranked[0].url, "https://a.test/guide/webhooks");
    }

    #[test]
    fn subdomain_labels_count_the_registrable_domain_does_not() {
        let links = vec![
            link("https://example.com/docs-home", None),
            link("https://docs.example.com/start", None),
            link("https://example.com/", None),
        ];
        let s = scores(&links, "example");
        assert!(s.iter().all(|&x| x == 0.0), "{s:?}");
        let s = scores(&links, "docs");
        assert!(s[0] > 0.0 && s[1] > 0.0 && s[2] == 0.0, "{s:?}");
    }

    #[test]
    fn empty_query_keeps_order() {
        let links = vec![
            link("https://a.test/b", None),
            link("https://a.test/a", None),
        ];
        assert_eq!(
            urls(&rank(links, " ?! ")),
            vec!["https://a.test/b", "https://a.test/a"]
        );
    }
}
