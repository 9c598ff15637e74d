//! Multilingual phrase lists (lead-ins, photo credits, ad labels) and the tests that match them.

use std::sync::LazyLock;

use super::facts::Page;
use super::stats::Stats;
use crate::dom::{push_collapsed, Dom, Kind, Tag};

/// What introduces a list of other stories ("Related", "You might also
/// like", "Auch interessant", "À lire aussi"), lower case, at the start of
/// a short heading or paragraph.
const LEAD_INS: &[&str] = &[
    "related",
    "you might also like",
    "you may also like",
    "you might be interested",
    "you may be interested",
    "recommended for you",
    "more from",
    "more stories",
    "read more",
    "read also",
    "also read",
    "continue reading",
    "auch interessant",
    "das könnte sie auch interessieren",
    "das könnte dich auch interessieren",
    "das thema könnte dich auch interessieren",
    "dies könnte sie auch interessieren",
    "sie könnten auch",
    "lesen sie auch",
    "lesen sie hier",
    "lies auch",
    "mehr zum thema",
    "weiterführende links",
    "weiterführender link",
    "weitere artikel",
    "ähnliche artikel",
    "ähnliche beiträge",
    "verwandte artikel",
    "à lire aussi",
    "a lire aussi",
    "lire aussi",
    "sur le même sujet",
    "articles similaires",
    "vous aimerez aussi",
    "te puede interesar",
    "lee también",
    "noticias relacionadas",
    "leggi anche",
    "potrebbe interessarti",
    "articoli correlati",
    "leia também",
    "veja também",
    "notícias relacionadas",
    "lees ook",
    "gerelateerde artikelen",
    "читайте также",
    "похожие статьи",
    "اقرأ أيضا",
    "اقرأ أيضاً",
    "مواضيع ذات صلة",
    "เรื่องที่เกี่ยวข้อง",
    "関連記事",
    "相关新闻",
    "相关阅读",
    "相關新聞",
    "관련기사",
];

/// What introduces a list of tags, lower case.
const TAG_LEAD_INS: &[&str] = &[
    "tags",
    "schlagwörter",
    "schlagworte",
    "stichwörter",
    "mots-clés",
    "étiquettes",
    "etiquetas",
    "filed under",
];

/// How a photo credit line starts, lower case.
const CREDITS: &[&str] = &[
    "credit:",
    "credits:",
    "photo credit",
    "image credit",
    "photo:",
    "photos:",
    "photograph:",
    "photograph by",
    "image:",
    "foto:",
    "fotos:",
    "bild:",
    "bildquelle",
    "beitragsbild",
    "titelbild:",
    "crédit photo",
    "crédits photo",
    "image illustrative",
    "photo d'illustration",
    "photo d’illustration",
    // What an image viewer's caption says.
    "click to enlarge",
    "zum vergrößern",
    "klicken zum vergrößern",
    "bild vergrößern",
    "cliquez pour agrandir",
    // What WordPress (Jetpack) writes where a slideshow would be.
    "this slideshow requires javascript",
    // A blog's notice about its affiliate links (a sponsorship disclosure
    // is the post's own and stays).
    "this post may contain affiliate",
    "this post contains affiliate",
    "this article may contain affiliate",
    "this article contains affiliate",
    "this page may contain affiliate",
];

/// Stock photo agencies, as a credit names them (lower case).
const STOCK_AGENCIES: &[&str] = &[
    "shutterstock",
    "getty images",
    "gettyimages",
    "istock",
    "imago images",
    "picture alliance",
    "picture-alliance",
    "adobe stock",
    "adobestock",
    "unsplash",
    "pixabay",
    "depositphotos",
    "dreamstime",
    "fotolia",
    "123rf",
    "alamy",
];

/// A short link or span in a figure that credits a stock photo agency
/// ("TebNad/Shutterstock.com"); the caption around it stays.
pub(super) fn is_stock_credit(
    dom: &Dom<'_>,
    before: &Stats,
    page: &Page,
    j: usize,
    buf: &mut String,
) -> bool {
    if !page.in_figure[j]
        || !matches!(dom.tag(j), Some(Tag::A | Tag::Inline | Tag::Italic))
        || !(3..=80).contains(&before.chars[j])
    {
        return false;
    }
    let t = lower_text(dom, j, buf);
    STOCK_AGENCIES.iter().any(|a| t.contains(a))
}

/// First words of `LEAD_INS`, `TAG_LEAD_INS`, `CREDITS` and `AD_WORDS`.
static FIRST_WORDS: LazyLock<rustc_hash::FxHashSet<&'static str>> = LazyLock::new(|| {
    LEAD_INS
        .iter()
        .chain(TAG_LEAD_INS)
        .chain(CREDITS)
        .chain(AD_WORDS)
        .filter_map(|p| p.split(|c: char| !is_word_char(c)).find(|w| !w.is_empty()))
        .collect()
});

/// Per ASCII first letter, the lengths (in bytes, under 32) of the
/// `FIRST_WORDS` that start with it, as a bit mask: a word whose letter and
/// length match no phrase is ruled out without hashing it.
static FIRST_FILTER: LazyLock<[u32; 128]> = LazyLock::new(|| {
    let mut lengths = [0u32; 128];
    for w in FIRST_WORDS.iter() {
        let b = w.as_bytes()[0];
        if b.is_ascii() && w.len() < 32 {
            lengths[b as usize] |= 1u32 << w.len();
        }
    }
    lengths
});

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '-'
}

/// Whether the element's text starts (after an opening bracket) with the
/// first word of a phrase the boilerplate rules look for. Reads only the
/// first text node with a word in it.
pub(super) fn first_word_is_known(dom: &Dom<'_>, j: usize) -> bool {
    let end = dom.nodes[j].end as usize;
    for k in j..end {
        let Kind::Text(t) = dom.nodes[k].kind else {
            continue;
        };
        let bytes = t.as_bytes();
        let Some(start) = bytes
            .iter()
            .position(|&b| !(b.is_ascii_whitespace() || b == b'(' || b == b'['))
        else {
            continue;
        };
        let rest = &bytes[start..];
        // The common case, an ASCII word: no char decoding.
        let len = rest
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'-'))
            .unwrap_or(rest.len());
        if len > 0 && rest.get(len).is_none_or(|b| b.is_ascii()) {
            if len >= 32 {
                return false;
            }
            // Most words are ruled out by first letter and length.
            if FIRST_FILTER[rest[0].to_ascii_lowercase() as usize] & (1u32 << len) == 0 {
                return false;
            }
            let mut lower = [0u8; 32];
            let lower = &mut lower[..len];
            lower.copy_from_slice(&rest[..len]);
            lower.make_ascii_lowercase();
            return std::str::from_utf8(lower).is_ok_and(|w| FIRST_WORDS.contains(w));
        }
        // A word with letters beyond ASCII ("À", "ähnliche", "广告"), or
        // space that is not ASCII before it.
        let t = t.trim_start_matches(|c: char| c.is_whitespace() || c == '(' || c == '[');
        let word = t.split(|c: char| !is_word_char(c)).next().unwrap_or("");
        if word.is_empty() {
            continue;
        }
        return word.len() <= 32 && FIRST_WORDS.contains(word.to_lowercase().as_str());
    }
    false
}

/// A short line that is only an advertisement label or a photo credit
/// ("Anzeige", "(Credit: Clayton Aldern / Grist)", "Beitragsbild: ...").
pub(super) fn is_ad_or_credit_line(
    dom: &Dom<'_>,
    before: &Stats,
    page: &Page,
    j: usize,
    buf: &mut String,
) -> bool {
    if before.chars[j] < 2 || before.chars[j] > 150 {
        return false;
    }
    // A line of its own: a paragraph or block, or an inline element that is
    // all of its block or sits in a figure ("AD" inside a sentence or a
    // table is text).
    let alone = match dom.tag(j) {
        Some(Tag::P | Tag::Div | Tag::Block) => true,
        Some(Tag::Inline | Tag::Italic) => {
            page.in_figure[j] || before.chars[dom.nodes[j].parent as usize] <= before.chars[j] + 2
        }
        _ => false,
    };
    if !alone {
        return false;
    }
    let t = lower_text(dom, j, buf).trim_start_matches(['(', '[', ' ']);
    if before.chars[j] <= 24 && is_ad_or_loading(t.trim_end_matches([':', ' ', ')'])) {
        return true;
    }
    CREDITS.iter().any(|c| t.starts_with(c))
}

/// The text of a small subtree, whitespace collapsed and lower-cased, in
/// `buf` (reused: this runs on many short elements of every page).
fn lower_text<'b>(dom: &Dom<'_>, j: usize, buf: &'b mut String) -> &'b str {
    buf.clear();
    let end = dom.nodes[j].end as usize;
    for k in j..end {
        if let Kind::Text(t) = dom.nodes[k].kind {
            push_collapsed(buf, t);
        } else if dom.tag(k).is_some_and(Tag::is_block) && !buf.ends_with(' ') {
            buf.push(' ');
        }
    }
    if buf.is_ascii() {
        buf.make_ascii_lowercase();
    } else {
        // Soft hyphens ("illus&shy;tra&shy;tive") do not show.
        *buf = buf.replace('\u{ad}', "").to_lowercase();
    }
    buf.trim()
}

/// A short heading or paragraph that says only "related stories follow".
pub(super) fn is_lead_in(dom: &Dom<'_>, before: &Stats, j: usize, buf: &mut String) -> bool {
    if before.chars[j] < 4 || before.chars[j] > 80 {
        return false;
    }
    let ok_tag = match dom.tag(j) {
        Some(Tag::H(2..=6) | Tag::P | Tag::Div | Tag::Dt) => true,
        // "<span>Tags:</span> <a>..</a>": in a short line only.
        Some(Tag::Inline | Tag::Bold) => before.chars[dom.nodes[j].parent as usize] <= 200,
        _ => false,
    };
    if !ok_tag {
        return false;
    }
    let t = lower_text(dom, j, buf).trim_end_matches([':', '…', '.', ' ', '!']);
    // The phrase alone, or with a word or two ("Related Coverage"); a
    // sentence after it ("Related: Chicago is ...", "Read more about ad
    // blocking here") is a link inside the article, which stays.
    LEAD_INS.iter().chain(TAG_LEAD_INS).any(|p| {
        t.strip_prefix(p)
            .is_some_and(|rest| rest.split_whitespace().count() <= 2 && !rest.contains(':'))
    })
}

/// A paragraph that is only a link to another story and says so ("Lesen
/// Sie hier einen weiteren spannenden Beitrag …", "Read more about this").
pub(super) fn is_promo_link(dom: &Dom<'_>, before: &Stats, j: usize, buf: &mut String) -> bool {
    let c = before.chars[j];
    if !(8..=150).contains(&c)
        || before.link_chars[j] + 2 < c
        || !matches!(dom.tag(j), Some(Tag::P | Tag::Div))
    {
        return false;
    }
    // "Related: <headline>" names the story, as a link in the text would
    // (Readability keeps those): only the generic ones go.
    let t = lower_text(dom, j, buf);
    LEAD_INS.iter().any(|p| {
        t.strip_prefix(p)
            .is_some_and(|rest| !rest.trim_start().starts_with(':'))
    })
}

/// Readability's `adWords`/`loadingWords`: a block saying only "Advertisement".
pub(super) fn is_ad_or_loading(text: &str) -> bool {
    let t = text.trim().trim_end_matches(['…', '.']).to_lowercase();
    AD_WORDS.contains(&t.as_str())
}

/// Readability's ad and loading words, plus advertisement labels in other
/// languages and the button labels of image viewers.
const AD_WORDS: &[&str] = &[
    "ad",
    "advert",
    "advertising",
    "advertisement",
    "pub",
    "publicité",
    "werb",
    "werbung",
    "广告",
    "реклама",
    "anuncio",
    "anzeige",
    "publicidad",
    "pubblicità",
    "publicidade",
    "anúncio",
    "advertentie",
    "reklama",
    "reklam",
    "iklan",
    "広告",
    "광고",
    "loading",
    "正在加载",
    "загрузка",
    "chargement",
    "cargando",
    // Labels of buttons: an image viewer's, rustdoc's description toggle.
    "expand description",
    "hide caption",
    "show caption",
    "toggle caption",
    "enlarge image",
    "bild vergrößern",
    "agrandir l'image",
];
