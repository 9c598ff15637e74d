//! Main-content selection and include/exclude selectors.
//!
//! Long by design, a test table: one short test per selection rule, each a
//! small HTML fixture and what the content must or must not hold.

use super::*;
use crate::ContentError;

const EN: &str = include_str!("../../tests/fixtures/content/article_en.html");
const DE: &str = include_str!("../../tests/fixtures/content/article_de.html");
const JA: &str = include_str!("../../tests/fixtures/content/article_ja.html");

#[test]
fn main_content_keeps_the_article_and_drops_the_chrome() {
    // (page, text that must be kept, boilerplate that must be gone)
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "english blog without landmarks",
            EN,
            &[
                "Rivers are patient sculptors.",
                "## Meanders and floodplains",
                "farmers have prized since the first harvests.",
            ],
            &[
                "Home",
                "About us",
                "We use cookies",
                "Accept all",
                "Popular posts",
                "Glaciers explained",
                "Share on Twitter",
                // The title heading: it is `metadata.title`.
                "# How Rivers Shape Valleys",
                "Great post!",
                "Deltas of the world",
                "All rights reserved",
                "color:red",
            ],
        ),
        (
            "german news article",
            DE,
            &[
                "Nach vier Jahren Bauzeit",
                "„historischen Tag für die Region“",
                "## Umleitungen enden",
                "abgerissen, wie die Stadtverwaltung mitteilte.",
            ],
            &[
                "Startseite",
                "Wirtschaft",
                "Wir verwenden Cookies",
                "Alle akzeptieren",
                "Meistgelesen",
                "Stau auf der A3",
                "Impressum",
                "# Neue Brücke über den Rhein eröffnet",
            ],
        ),
        (
            "japanese article without english class names",
            JA,
            &[
                "気象庁は二十日、東京都心で桜（ソメイヨシノ）が開花したと発表した。",
                "週末に家族でまた来たい」と話した。",
            ],
            &[
                "トップ",
                "国際",
                "アクセスランキング",
                "円相場が急変動",
                "利用規約",
                "# 桜の開花、平年より早く 東京で観測",
                "Copyright",
            ],
        ),
    ];
    for (name, page, kept, gone) in cases {
        let md = md_main(page);
        for k in *kept {
            assert!(md.contains(k), "{name}: missing {k:?} in\n{md}");
        }
        for g in *gone {
            assert!(!md.contains(g), "{name}: boilerplate {g:?} left in\n{md}");
        }
    }
}

#[test]
fn whole_body_is_kept_when_main_content_is_off() {
    let md = md_all(EN);
    for k in [
        "Popular posts",
        "Rivers are patient sculptors.",
        "All rights reserved",
    ] {
        assert!(md.contains(k), "missing {k:?}");
    }
    assert!(!md.contains("color:red") && !md.contains("app.js"));
}

#[test]
fn hidden_elements_are_not_content() {
    let page = "<main><p>Visible paragraph with enough words to be the main content of this page, surely.</p>\
        <p hidden>secret one</p><div style=\"display: none\">secret two</div>\
        <span aria-hidden=\"true\">secret three</span></main>";
    let md = md_main(page);
    assert!(md.contains("Visible paragraph"));
    assert!(!md.contains("secret"), "{md}");
}

#[test]
fn include_and_exclude_selectors_pick_elements() {
    let page = "<div class=\"a\"><p>alpha</p><p class=\"drop\">dropped</p></div>\
        <div id=\"b\"><p>beta</p></div><p>gamma</p>";
    let cases: &[(&[&str], &[&str], &str)] = &[
        (&["div.a", "#b"], &[], "alpha\n\ndropped\n\nbeta"),
        (&["div.a"], &[".drop"], "alpha"),
        (&[], &["div"], "gamma"),
        (&["article"], &[], ""),
    ];
    for (include, exclude, want) in cases {
        let opts = ContentOptions {
            include_tags: include.iter().map(|s| s.to_string()).collect(),
            exclude_tags: exclude.iter().map(|s| s.to_string()).collect(),
            only_main_content: false,
            ..ContentOptions::default()
        };
        let md = run(page, &opts).markdown.unwrap_or_default();
        assert_eq!(md, *want, "include {include:?} exclude {exclude:?}");
    }
}

#[test]
fn include_overrides_main_content() {
    let opts = ContentOptions {
        include_tags: vec!["aside".into()],
        ..ContentOptions::default()
    };
    let md = run(EN, &opts).markdown.unwrap_or_default();
    assert!(md.contains("Popular posts") && !md.contains("Rivers are patient"));
}

#[test]
fn invalid_selector_is_reported_by_name() {
    for (include, exclude, bad) in [
        (vec!["div[".to_string()], vec![], "div["),
        (
            vec![],
            vec!["p".to_string(), "::nope(".to_string()],
            "::nope(",
        ),
    ] {
        let opts = ContentOptions {
            include_tags: include,
            exclude_tags: exclude,
            ..ContentOptions::default()
        };
        let err = extract("<p>x</p>", &page_url(), &opts).err();
        assert_eq!(err, Some(ContentError::InvalidSelector(bad.to_string())));
    }
}

#[test]
fn scrape_options_map_to_content_options() {
    use webdata_core::types::{Format, ScrapeOptions};
    let defaults = ContentOptions::from_scrape_options(&ScrapeOptions::default());
    assert_eq!(
        defaults,
        ContentOptions {
            want_json_ld: true,
            ..ContentOptions::default()
        }
    );
    let o = ScrapeOptions {
        formats: Some(vec![
            Format::Html,
            Format::Links,
            Format::Chunks,
            Format::Text,
        ]),
        only_main_content: Some(false),
        exclude_tags: Some(vec!["nav".into()]),
        chunk_size: Some(50),
        ..ScrapeOptions::default()
    };
    let c = ContentOptions::from_scrape_options(&o);
    assert!(!c.only_main_content && !c.want_markdown && c.want_html && c.want_links && c.want_text);
    assert!(!c.want_json_ld);
    assert_eq!(c.exclude_tags, vec!["nav".to_string()]);
    assert_eq!(c.chunk_size, Some(200), "clamped to the spec's minimum");
}

#[test]
fn a_page_header_h1_names_the_chunks_only_when_the_title_names_it() {
    let body = "<div class=\"entry\"><p>First paragraph of the story, with enough words, commas, \
        and detail to be chosen as the main content of the page.</p><p>Second paragraph, which \
        continues the story with more words, more commas, and more detail.</p></div>";
    let page = |title: &str, h1: &str| {
        format!(
            "<html><head><title>{title}</title></head><body><header><h1>{h1}</h1>\
             <nav><a href=\"/\">Home</a></nav></header>{body}</body></html>"
        )
    };
    // The header's h1 is not put in front of the content; it heads the chunks.
    let named = page("Story of the year – Daily", "Story of the year");
    let md = md_main(&named);
    assert!(md.starts_with("First paragraph"), "{md}");
    let (path, text) = chunks_main(&named);
    assert_eq!(path, ["Story of the year"]);
    assert!(text.starts_with("First paragraph"), "{text}");
    let logo = page("Story of the year – Daily", "Daily Planet");
    let md = md_main(&logo);
    assert!(md.starts_with("First paragraph"), "{md}");
    assert!(!md.contains("Home"));
    assert!(chunks_main(&logo).0.is_empty());
}

#[test]
fn chrome_inside_the_main_element_is_dropped_by_class_and_role() {
    let page =
        "<main><h1>Title</h1><p>The real story starts here, with words, commas, and a point \
        that makes it worth reading.</p>\
        <div class=\"share-buttons\">Share this</div><div class=\"ad-slot\">Buy now</div>\
        <div id=\"newsletter\">Subscribe today</div><div role=\"complementary\">Aside box</div>\
        <div class=\"article-body\"><p>More of the real story follows, and it ends well.</p></div>\
        <section id=\"comments\"><p>First comment!</p></section></main>";
    let md = md_main(page);
    assert!(md.contains("The real story starts here") && md.contains("More of the real story"));
    for gone in [
        "Share this",
        "Buy now",
        "Subscribe today",
        "Aside box",
        "First comment",
    ] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

/// A paragraph long enough to count as content (about 150 characters).
const PARA: &str = "<p>Rivers carve valleys over thousands of years, moving sediment, cutting \
    rock, and shaping the land that farmers, towns, and roads later depend on.</p>";

#[test]
fn link_heavy_blocks_inside_the_article_are_cleaned_but_data_tables_stay() {
    let page = format!(
        "<body><div id=\"story\">{PARA}{PARA}<div><ul><li><a href=\"/a\">Another story \
         one</a></li><li><a href=\"/b\">Another story two</a></li></ul><p><a href=\"/c\">More \
         stories from the desk</a></p></div>{PARA}<table><thead><tr><th>River</th>\
         <th>Length</th></tr></thead><tbody><tr><td><a href=\"/nile\">Nile</a></td>\
         <td><a href=\"/km\">6650 km</a></td></tr></tbody></table>{PARA}</div></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("Rivers carve valleys"), "{md}");
    assert!(!md.contains("Another story one"), "{md}");
    assert!(!md.contains("More stories"), "{md}");
    assert!(md.contains("Nile") && md.contains("6650 km"), "{md}");
}

#[test]
fn unlikely_and_negative_class_names_are_dropped() {
    let page = format!(
        "<body><div class=\"sidebar\"><p>Sidebar text that is long enough, with commas, to \
         score as a paragraph of its own.</p></div><div class=\"entry\">{PARA}{PARA}{PARA}\
         <div class=\"share-tools\"><span>Share on Twitter</span></div>\
         <ul class=\"tags\"><li><a href=\"/t/r\">Tagged rivers</a></li>\
         <li><a href=\"/t/v\">Tagged valleys</a></li></ul>{PARA}</div>\
         <div id=\"comments\"><p>First comment, with enough words and commas to be a \
         paragraph.</p></div></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("Rivers carve valleys"), "{md}");
    for gone in [
        "Sidebar text",
        "Share on Twitter",
        "Tagged",
        "First comment",
    ] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn a_short_result_is_retried_without_the_class_filters() {
    // All the text sits in a block whose class looks like chrome: the first
    // attempt finds nothing, the retry without class filters keeps it.
    let page = format!(
        "<body><div class=\"sidebar-wrapper\">{PARA}{PARA}{PARA}{PARA}</div>\
         <nav><a href=\"/\">Home</a></nav></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("Rivers carve valleys"), "{md}");
}

#[test]
fn siblings_of_the_best_container_join_when_they_read_like_the_article() {
    let page = format!(
        "<body><div><div class=\"part\">{PARA}{PARA}{PARA}</div>\
         <p>A closing paragraph that sits outside the container but clearly continues the \
         article text.</p><div class=\"part\">{PARA}{PARA}</div>\
         <div><a href=\"/x\">Next story</a> <a href=\"/y\">Previous story</a></div></div></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("A closing paragraph"), "{md}");
    assert_eq!(md.matches("Rivers carve valleys").count(), 5, "{md}");
    assert!(!md.contains("Next story"), "{md}");
}

#[test]
fn teasers_bylines_and_consent_banners_are_dropped_by_class_words() {
    let page = format!(
        "<body><div class=\"cookie-consent\"><p>We use cookies to improve the site, \
         to measure traffic, and to show you relevant offers.</p></div>\
         <div class=\"entry\"><div class=\"byline\">By Jane Doe, river desk</div>\
         {PARA}{PARA}{PARA}<div class=\"teaser\"><p>Read next: deltas of the world, \
         explained in pictures, maps, and charts.</p></div>{PARA}</div></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("Rivers carve valleys"), "{md}");
    for gone in ["We use cookies", "By Jane Doe", "Read next"] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn a_documentation_page_keeps_its_synopsis_and_examples_beside_a_long_parameter_list() {
    // DocBook's reference page: no <article> or <main>, a synopsis, a long
    // parameter list that outscores everything else, and examples (one in a
    // section whose id holds an unlikely word: "EXTRACT" has "extra").
    let mut params = String::new();
    for k in 0..14 {
        params.push_str(&format!(
            "<dt><span class=\"term\"><code>PARAM_{k}</code></span></dt><dd><p>When this \
             parameter is given, the table is created with option {k}, which changes how \
             rows are stored, how indexes are built, and how the planner reads them; see \
             the storage chapter for details, caveats, and defaults.</p></dd>"
        ));
    }
    let page = format!(
        "<body><div class=\"navheader\"><table width=\"100%\"><tr><td><a href=\"/prev\">Prev</a>\
         </td><td><a href=\"/up\">Up</a></td><td><a href=\"/next\">Next</a></td></tr></table></div>\
         <div class=\"refentry\" id=\"SQL-CREATETHING\"><div class=\"refnamediv\"><h2>CREATE THING\
         </h2><p>CREATE THING — define a new thing</p></div>\
         <div class=\"refsynopsisdiv\"><h2>Synopsis</h2><pre class=\"synopsis\">CREATE THING \
         name ( option [, ...] )</pre></div>\
         <div class=\"refsect1\" id=\"id-1\"><h2>Description</h2><p>CREATE THING makes a new \
         thing in the current database, owned by the user who runs the command.</p></div>\
         <div class=\"refsect1\" id=\"id-2\"><h2>Parameters</h2><div class=\"variablelist\">\
         <dl class=\"variablelist\">{params}</dl></div></div>\
         <div class=\"refsect1\" id=\"SQL-CREATETHING-EXAMPLES\"><h2>Examples</h2><p>Make a \
         thing:</p><pre class=\"programlisting\">CREATE THING films (code char(5));</pre>\
         <div class=\"sect2\" id=\"FUNCTIONS-EXTRACT\"><h3>EXTRACT</h3>\
         <pre class=\"programlisting\">SELECT EXTRACT(DAY FROM thing);</pre></div></div></div>\
         <div class=\"navfooter\"><table width=\"100%\"><tr><td><a href=\"/prev\">Prev</a></td>\
         <td><a href=\"/next\">Next</a></td></tr></table></div></body>"
    );
    let md = md_main(&page);
    for kept in [
        "CREATE THING name ( option [, ...] )",
        "CREATE THING films (code char(5));",
        "SELECT EXTRACT(DAY FROM thing);",
        "PARAM_0",
        "PARAM_13",
    ] {
        assert!(md.contains(kept), "{kept:?} lost in\n{md}");
    }
    assert_eq!(md.matches("```").count(), 6, "{md}");
    assert!(!md.contains("Prev"), "{md}");
}

#[test]
fn a_short_article_in_main_leaves_the_cookie_banner_outside() {
    // Under 500 characters of article: the short-result retry and fallback
    // must not bring back chrome from outside `<main>`.
    let page = include_str!("../../tests/fixtures/content/article_short_de.html");
    let md = md_main(page);
    assert!(
        !md.contains("# Gärten im Herbst"),
        "the title is metadata.title\n{md}"
    );
    assert!(md.contains("Kompost umsetzen"), "{md}");
    for gone in [
        "Wir verwenden Cookies",
        "Ähnliche Artikel",
        "Datenschutz",
        "Kontakt",
    ] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn boxes_inside_the_article_that_name_themselves_boilerplate_are_dropped() {
    // Class words Readability lets through when the class also says
    // "article" or "content": related stories, share bars, author boxes,
    // comment links, photo credits, meta lines.
    let page = format!(
        "<body><article class=\"post\">{PARA}\
         <figure><img src=\"/r.jpg\" alt=\"\"><figcaption>A river bend at dusk \
         <span class=\"img-credit\">Jane Roe/Agency</span></figcaption></figure>{PARA}\
         <div class=\"RelatedCoverage-container ArticleBody\"><p>Related Coverage</p>\
         <p><a href=\"/x\">Deltas of the world explained</a></p></div>{PARA}\
         <div class=\"entry-meta\">Posted in Rivers</div>\
         <div class=\"article-footer\"><a class=\"comments-link\" href=\"#c\">71 comments</a></div>\
         <div class=\"TestReport__AuthorBox\"><p>Jane Doe writes about rivers, lakes, and the \
         sea for the science desk.</p></div>{PARA}\
         <div class=\"post-author\"><h5><a href=\"/author/regan\">Regan</a></h5><p>Regan is a \
         native of the coast who now lives inland with two sons and two cats.</p></div>\
         </article></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
    assert!(
        md.contains("A river bend at dusk"),
        "the caption stays\n{md}"
    );
    for gone in [
        "Jane Roe",
        "Related Coverage",
        "Deltas of the world",
        "Posted in Rivers",
        "71 comments",
        "two cats",
        "Jane Doe writes",
    ] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn lead_ins_go_with_the_links_they_introduce_but_sentences_stay() {
    let page = format!(
        "<body><div class=\"entry-content\">{PARA}\
         <p>Related: <a href=\"/s\">Chicago is a city of many bridges, old and new</a></p>{PARA}\
         <p><strong>Auch interessant:</strong></p><ul><li><a href=\"/a\">Zehn Flüsse</a></li>\
         <li><a href=\"/b\">Sieben Seen</a></li></ul>{PARA}\
         <h2>Tags</h2><p>Tags on a river gauge record the flood marks of a century, and the \
         town keeps them.</p>{PARA}\
         <div><span>Tags: </span><a href=\"/t/1\">rivers</a>, <a href=\"/t/2\">valleys</a></div>\
         <p>(Credit: Clayton Aldern / Grist)</p><p>Anzeige</p></div></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
    // A sentence after the phrase is a link of the article; a heading
    // followed by prose is a section.
    assert!(md.contains("Chicago is a city of many bridges"), "{md}");
    assert!(md.contains("## Tags") && md.contains("flood marks"), "{md}");
    for gone in [
        "Auch interessant",
        "Zehn Flüsse",
        "Sieben Seen",
        "[rivers]",
        "Clayton Aldern",
        "Anzeige",
    ] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn documentation_words_that_look_like_boilerplate_stay() {
    // Sphinx ids name the API ("...SharedMemory", "credits"), DocBook marks
    // a bibliography's authors with class `author`, and code or a table
    // cell may say "AD", "related" or "Tags".
    let page = "<body><div class=\"body\" role=\"main\">\
        <section id=\"credits\"><h2>Credits</h2><p>BLAKE2 was designed by Jean-Philippe \
        Aumasson, Samuel Neves, and Zooko Wilcox-O'Hearn, based on SHA-3 finalist BLAKE.</p></section>\
        <dl id=\"multiprocessing.shared_memory.SharedMemory\"><dt>class SharedMemory(name)</dt>\
        <dd><p>Creates a new shared memory block, or attaches to an existing one, by name.</p></dd></dl>\
        <p>[date04] An Introduction to Database Systems. <span class=\"author\">C. J. Date</span>. \
        Addison-Wesley, 2003, eighth edition, with exercises.</p>\
        <p>The set holds <code><span class=\"pre\">related</span></code>, and the product of \
        ABCD is <code><span class=\"pre\">AD</span></code> among others, in order.</p>\
        <table><tr><th>Option</th><th>Meaning</th></tr><tr><td><span>tags</span></td>\
        <td>A list of tags associated with this item, shown in the tree.</td></tr>\
        <tr><td>text</td><td>The text to display for the item, in the first column.</td></tr></table>\
        <pre>SELECT 'AD' AS era;</pre></div></body>";
    let md = md_main(page);
    for kept in [
        "Jean-Philippe",
        "class SharedMemory(name)",
        "C. J. Date",
        "`related`",
        "`AD`",
        "| tags |",
        "SELECT 'AD' AS era;",
    ] {
        assert!(md.contains(kept), "{kept:?} lost\n{md}");
    }
}

#[test]
fn page_builder_wrappers_do_not_count_against_their_text() {
    // Elementor wraps every text block in `elementor-widget-*` classes;
    // with Readability's negative word "widget" the first attempt cleans
    // them all away, and the retry without class filters brings back the
    // box beside them.
    let widget = |text: &str| {
        format!(
            "<div class=\"elementor-element elementor-widget elementor-widget-text-editor\">\
             <div class=\"elementor-widget-container\"><div class=\"elementor-text-editor\">\
             <p>{text}</p></div></div></div>"
        )
    };
    let page = format!(
        "<body><div class=\"entry\"><section class=\"elementor-section\">\
         <div class=\"elementor-container\"><div class=\"elementor-widget-wrap\">{}{}{}{}</div>\
         <div class=\"sidebar-box\"><p>Final summer sale: grab the hottest bargains of the \
         season, before the summer is over, while they last.</p></div></div></section></div></body>",
        widget(
            "Summer is here, short dresses come out again, and hair is worn up: the perfect \
             time to show your earrings, even without pierced ears, in silver or gold."
        ),
        widget(
            "Earcuff: Zoeca, with longer earrings, in rose gold and silver, for every day, \
             and a small hoop, the Stella, for the evening, when it gets late."
        ),
        widget(
            "Lui Lu designed charms, such as this small lightning bolt, that you can combine \
             with any of their earrings, one by one, or all of them together."
        ),
        widget(
            "Subtle, and never loud: the small hoops by Zoeca, called bling hug, go with a \
             more striking ear cuff, the Daisy, on the other ear."
        ),
    );
    let md = md_main(&page);
    for kept in ["Summer is here", "Earcuff: Zoeca", "Lui Lu designed charms"] {
        assert!(md.contains(kept), "{kept:?} lost\n{md}");
    }
    assert!(!md.contains("Final summer sale"), "{md}");
}

#[test]
fn a_stock_agency_credit_goes_but_the_caption_stays() {
    let page = format!(
        "<body><div class=\"article\">{PARA}<figure>\
         <img src=\"/oil.jpg\" alt=\"\"><figcaption><p>Oil pumps at sunset. Image: \
         <a href=\"https://stock.example/123\">TebNad/Shutterstock.com</a></p></figcaption>\
         </figure>{PARA}{PARA}</div></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("Oil pumps at sunset"), "{md}");
    assert!(!md.contains("Shutterstock"), "{md}");
}

#[test]
fn a_block_marked_as_holding_ads_is_not_an_ad() {
    // `o-section--has-ads` says the section has ad slots in it; the
    // article is in it all the same. Taking the class for an ad dropped the
    // article, and only the list of other stories was left.
    let more: String = (1..=6)
        .map(|i| {
            format!(
                "<p><a href=\"/s/{i}\">Story {i}: a town on the river and its bridges</a> \
                 The town rebuilt its bridges after the flood of the century with money from \
                 the state and the help of its neighbours.</p>"
            )
        })
        .collect();
    let page = format!(
        "<body><section class=\"o-section o-section--has-ads js-section--has-ads\">\
         <div class=\"c-article-body\">{PARA}{PARA}{PARA}{PARA}</div></section>\
         <div class=\"c-more\">{more}</div></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
}

#[test]
fn a_short_post_does_not_get_the_site_menu_back() {
    // A news item under 500 characters: Readability's retries come back
    // short, and the body minus the chrome says more only by its menu.
    let menu: String = (1..=40)
        .map(|i| format!("<li><a href=\"/m/{i}\">Menu entry {i}</a></li>"))
        .collect();
    let page = format!(
        "<body><div id=\"layout\"><div id=\"container\"><div id=\"content\">\
         <h1>River news</h1><div><h2>Site update: chapter 121</h2>\
         <p>Chapter 121 is online now. As always, the pictures are for signed-in readers. \
         Chapter 122 follows on Friday.</p></div></div>\
         <div id=\"leftnav\"><ul id=\"navigation\">{menu}</ul>\
         <div>1 reader online</div></div></div></div></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("Chapter 121 is online now"), "{md}");
    assert!(!md.contains("Menu entry"), "{md}");
}

#[test]
fn a_comment_forum_longer_than_the_article_is_not_the_article() {
    // SPIP's comments: `ul.forum`, a `forum-message` per comment.
    let comment = |i: usize| {
        format!(
            "<li class=\"forum-fil\"><div class=\"forum-message\"><p>Reader {i} wrote: I read this with great interest, and I think, on the \
             whole, that the author is right about the rivers, the towns, the roads, and the \
             farms, although I would add a word about the bridges, which matter too.</p></div></li>"
        )
    };
    let comments: String = (1..=10).map(comment).collect();
    let page = format!(
        "<body><div id=\"page\"><div id=\"contenu\"><div class=\"texte\">{PARA}{PARA}{PARA}{PARA}{PARA}</div></div>\
         <div id=\"navigation\"><div class=\"divforum\"><ul class=\"forum\">{comments}</ul></div>\
         </div></div></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 5, "{md}");
    assert!(!md.contains("wrote: I read this"), "{md}");
}

#[test]
fn the_heading_of_a_box_whose_content_went_goes_too() {
    let teaser = "<div class=\"teaser\"><h2><a href=\"/s.pdf\">(16) We need shortcuts in \
        vaccine approval</a></h2><p>Topics: criticism from the internet, new forecasts on the \
        virus from London, vaccine approvals, and what they mean for us.</p></div>";
    let page = format!(
        "<body><article>{PARA}{PARA}{PARA}<div class=\"contentbox list\">\
         <div class=\"boxhead\">Download this script as a PDF</div>{teaser}</div>{PARA}\
         <dl><dt>close(fd)</dt><dd><p>Close file descriptor fd.</p>{teaser}</dd></dl>\
         </article></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
    assert!(!md.contains("Download this script"), "{md}");
    // What is left in a definition is its text, not a label.
    assert!(md.contains("Close file descriptor fd."), "{md}");
    assert!(md.contains("close(fd)"), "{md}");
}

#[test]
fn an_id_that_says_meta_marks_a_meta_line_but_not_a_section() {
    let page = format!(
        "<body><article><div id=\"meta\"><p>Friday | 14 June 2019 | 15:49 BY Sina Giebel IN \
         <a href=\"/c/fashion\">Fashion</a> | 0 COMMENTS</p></div>{PARA}{PARA}\
         <section id=\"tags\"><h2>Tags</h2><p>Tags on a river gauge mark the floods.</p></section>\
         {PARA}{PARA}</article></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
    assert!(!md.contains("Sina Giebel"), "{md}");
    assert!(md.contains("Tags on a river gauge"), "{md}");
}

#[test]
fn a_paragraph_that_only_points_to_another_story_goes() {
    let page = format!(
        "<body><div class=\"entry-content\">{PARA}{PARA}\
         <p><a href=\"/other\">Lesen Sie hier einen weiteren spannenden Beitrag …</a></p>\
         <p><a href=\"/bridges\">Read more: The bridges of the river town</a></p>\
         {PARA}{PARA}</div></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
    assert!(!md.contains("Lesen Sie hier"), "{md}");
    // A link that names its story is kept, as Readability keeps it.
    assert!(md.contains("The bridges of the river town"), "{md}");
}

#[test]
fn a_comment_form_laid_out_in_a_table_is_not_a_data_table() {
    let row = |label: &str, field: &str| format!("<tr><td>{label}</td><td>{field}</td></tr>");
    let form = [
        row("Name*", "<input type=\"text\" name=\"username\">"),
        row("Email", "<input type=\"text\" name=\"email\">"),
        row("Comment*", "<textarea name=\"comment\"></textarea>"),
        row(" ", "<img src=\"/code.php\">"),
        row("Code", "<input type=\"text\" name=\"code\">"),
        row(" ", "<input type=\"submit\" value=\"Send\">"),
    ]
    .concat();
    let page = format!(
        "<body><div id=\"content\">{PARA}{PARA}{PARA}<div class=\"noprint\">\
         <div class=\"titlebar\">Write a comment</div><div><form action=\"/c\" method=\"post\">\
         <table>{form}</table></form></div></div></div></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 3, "{md}");
    assert!(!md.contains("Write a comment"), "{md}");
    assert!(!md.contains("Name*"), "{md}");
}

#[test]
fn text_written_with_line_breaks_between_two_pictures_is_not_a_gallery() {
    // An old table layout: the post is one cell of text and `<br>`s with
    // pictures, no `<p>`. Readability's gallery rule (fewer `<p>`s than
    // half the images) dropped it, and the retry without cleaning brought
    // back the archive beside it.
    let archive: String = (1..=8)
        .map(|i| format!("<tr><td><a href=\"/blog/2010-{i:02}\">2010 month {i}</a></td></tr>"))
        .collect();
    // Side boxes with a line of text each, as the site's widgets have.
    let boxes: String = [
        "Online in total: 1, guests: 1, users: 0, and the rest of them asleep.",
        "Our poll: which season do you like best, spring, summer, or autumn?",
        "Friends of this blog: the clan, the shop, the radio, and the forum.",
        "Find it fast: search the blog, the photo albums, and the imprint.",
    ]
    .iter()
    .map(|t| format!("<table><tr><td><div>{t}</div></td></tr></table>"))
    .collect();
    // (Fewer than ten commas: Readability keeps a block with ten.)
    let lines = "It was said that when you are angry you should write a letter to the one who \
        hurt you.<br>Today I will start. I have so many letters to write now.<br>\
        Can you walk on high walls? Are you fed up and tired and done?<br>When were you in love \
        head over heels the last time?<br>And many more questions small and large.<br>\
        Every girl dreams of someone near or far and so did I for years.<br>\
        We wear fine clothes now and we eat the best food in the best places.<br>\
        When I was ten years old I saw my future and it was bright.";
    let page = format!(
        "<body><table><tr><td><table><tr><td><b>Archive</b></td></tr>{archive}</table>{boxes}</td><td><table class=\"eBlock\"><tr><td>\
         <div class=\"eTitle\">Letters</div></td></tr><tr><td class=\"eMessage\">\
         <img src=\"/a.jpg\" align=\"left\">{lines}<img src=\"/b.jpg\"></td></tr></table></td></tr>\
         </table></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("I saw my future and it was bright"), "{md}");
    assert!(!md.contains("2010 month"), "{md}");
}

#[test]
fn a_credit_line_with_soft_hyphens_is_still_a_credit_line() {
    let page = format!(
        "<body><article>{PARA}{PARA}{PARA}<hr><p>Image illus&shy;tra&shy;tive&nbsp;: \
         <a href=\"https://photos.example/1\">Lots of Lego Mini&shy;fi&shy;gures</a> by \
         <a href=\"https://photos.example/u\">Nin&shy;ja Brick,</a> en licence \
         <a href=\"https://cc.example/by\">Crea&shy;tive Com&shy;mons by</a></p></article></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 3, "{md}");
    assert!(!md.contains("Lego"), "{md}");
}

#[test]
fn a_section_heading_whose_class_says_header_stays() {
    // CNN marks its section headings `h2.subheader`; Readability's unlikely
    // word "header" dropped every one of them.
    let page = format!(
        "<body><div class=\"article__content\">{PARA}{PARA}\
         <h2 class=\"subheader\" id=\"the-campaign\">The campaign comes to the courtroom</h2>\
         {PARA}{PARA}<div class=\"header\"><h3 class=\"site-header__title\">River Times</h3>\
         <a href=\"/\">Home</a> <a href=\"/about\">About</a></div></div></body>"
    );
    let md = md_main(&page);
    assert!(
        md.contains("## The campaign comes to the courtroom"),
        "{md}"
    );
    assert!(!md.contains("River Times"), "{md}");
}

#[test]
fn text_for_screen_readers_only_is_not_content() {
    let page = format!(
        "<body><article><a class=\"sr-only\" href=\"#story\">Continue reading the main story</a>\
         <figure><img src=\"/r.jpg\" alt=\"\"><span class=\"off-screen\">Image copyright</span>\
         <span class=\"story-image-copyright\">Jane Roe (River Agency)</span>\
         <figcaption><span class=\"off-screen\">Image caption</span>\
         <span class=\"media-caption__text\">A river bend at dusk</span></figcaption></figure>\
         {PARA}{PARA}{PARA}<p>See the <a href=\"https://river.example\">river site\
         <span class=\"visually-hidden\">(opens in a new tab)</span></a> for more.</p>\
         </article></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 3, "{md}");
    assert!(md.contains("A river bend at dusk"), "{md}");
    assert!(md.contains("river site"), "{md}");
    for gone in [
        "Continue reading",
        "Image copyright",
        "Image caption",
        "Jane Roe",
        "new tab",
    ] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn lead_ins_in_other_languages_go_with_their_links() {
    let list = |n: &str| {
        format!(
            "<ul><li><a href=\"/{n}/1\">{n} 1</a></li><li><a href=\"/{n}/2\">{n} 2</a></li></ul>"
        )
    };
    let page = format!(
        "<body><div class=\"entry-content\">{PARA}{PARA}<h3>เรื่องที่เกี่ยวข้อง</h3>{}{PARA}\
         <p><strong>相关新闻：</strong></p>{}<p>Leia também</p>{}{PARA}</div></body>",
        list("thai"),
        list("zh"),
        list("pt"),
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
    for gone in ["เรื่องที่", "thai 1", "相关新闻", "zh 2", "Leia", "pt 1"] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn the_article_the_url_names_is_read_when_the_next_stories_are_loaded_below() {
    // A news page that loads the following stories under the one asked
    // for; the longest is not the one the URL names.
    let story = |id: &str, text: &str, n: usize| {
        format!(
            "<article id=\"{id}\"><h2>{id}</h2>{}</article>",
            format!("<p>{text} It has its own paragraphs, with commas, names, and dates.</p>")
                .repeat(n)
        )
    };
    let page = format!(
        "<body><main><div class=\"list\">{}{}{}</div></main></body>",
        story(
            "we-have-the-promise-already",
            "The promise was given in writing.",
            4
        ),
        story(
            "the-party-and-the-paper",
            "The paper is printed by a friend.",
            9
        ),
        story("a-fine-for-the-party", "The fine was paid in May.", 3),
    );
    let md_at = |url: &str| {
        super::extract(&page, &Url::parse(url).unwrap(), &ContentOptions::default())
            .unwrap()
            .markdown
            .unwrap()
    };
    let md = md_at("https://news.example/2019/05/14/we-have-the-promise-already");
    assert!(md.contains("The promise was given in writing."), "{md}");
    assert!(!md.contains("The paper is printed"), "{md}");
    assert!(!md.contains("The fine was paid"), "{md}");
    // A URL that names none of them: Readability's pick, with the longest.
    let md = md_at("https://news.example/list/");
    assert!(md.contains("The paper is printed"), "{md}");
}

#[test]
fn a_slug_is_the_last_path_segment_that_reads_like_one() {
    use crate::main_content::url_slug;
    assert_eq!(
        url_slug("/aktuelles/2019/05/14/wir-haben-bereits-die-zusage"),
        Some("wir-haben-bereits-die-zusage")
    );
    assert_eq!(
        url_slug("/blog/turpitude-et-architecture.html"),
        Some("turpitude-et-architecture")
    );
    assert_eq!(url_slug("/news/some_story_name/"), Some("some_story_name"));
    for none in ["/", "/index.html", "/1927", "/blog/post.html", "/a/short-x"] {
        assert_eq!(url_slug(none), None, "{none}");
    }
}

#[test]
fn a_section_h1_that_the_title_does_not_name_does_not_head_the_chunks() {
    let page = |title: &str| {
        format!(
            "<html><head><title>{title}</title></head><body><section><h1>Current articles</h1>\
             </section><div class=\"list\"><article>{PARA}{PARA}{PARA}{PARA}</article></div>\
             </body></html>"
        )
    };
    let md = md_main(&page("“We already have the promise” – River Times"));
    assert!(!md.contains("Current articles"), "{md}");
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
    assert!(
        chunks_main(&page("“We already have the promise” – River Times"))
            .0
            .is_empty()
    );
    // The same h1 under a title that names it is the page's title: it
    // heads the chunks, and the markdown is the body.
    let named = page("Current articles – River Times");
    assert!(md_main(&named).starts_with("Rivers carve valleys"));
    assert_eq!(chunks_main(&named).0, ["Current articles"]);
}

#[test]
fn an_image_viewers_button_label_is_not_text() {
    let page = format!(
        "<body><article>{PARA}<div class=\"gallery\"><img src=\"/a.jpg\" alt=\"\">\
         <div class=\"cnnArticleGalleryCaptionControlText\">HIDE CAPTION</div></div>\
         {PARA}<p>Hide captions of the river maps when you print them.</p>{PARA}</article></body>"
    );
    let md = md_main(&page);
    assert!(!md.contains("HIDE CAPTION"), "{md}");
    assert!(md.contains("Hide captions of the river maps"), "{md}");
}

#[test]
fn links_in_code_signatures_do_not_make_an_api_section_link_heavy() {
    // rustdoc: every type in an impl's or a method's signature is a link.
    let method = |name: &str, doc: &str| {
        format!(
            "<details class=\"toggle method-toggle\" open><summary><section class=\"method\">\
             <a class=\"src\" href=\"/src/error.rs.html#9\">Source</a>\
             <h4 class=\"code-header\">fn <a href=\"/clone/trait.Clone.html#{name}\">{name}</a>\
             (&amp;self) -&gt; <a href=\"struct.RiverError.html\">RiverError</a></h4></section>\
             </summary><div class=\"docblock\">{doc} <a href=\"/clone/trait.Clone.html\">Read \
             more</a></div></details>"
        )
    };
    let imp = |tr: &str, doc: &str| {
        format!(
            "<details class=\"toggle implementors-toggle\" open><summary><section class=\"impl\">\
             <h3 class=\"code-header\">impl <a href=\"/{tr}/trait.{tr}.html\">{tr}</a> for \
             <a href=\"struct.RiverError.html\">RiverError</a></h3></section></summary>\
             <div class=\"impl-items\">{}</div></details>",
            method(&tr.to_lowercase(), doc)
        )
    };
    let page = format!(
        "<body><nav class=\"sidebar\"><ul><li><a href=\"/a\">Clone</a></li></ul></nav><main>\
         <section id=\"main-content\"><h1>Struct RiverError</h1>\
         <pre class=\"rust item-decl\"><code>pub struct RiverError(/* private fields */);</code>\
         </pre><details class=\"toggle top-doc\" open><summary class=\"hideme\">\
         <span>Expand description</span></summary><div class=\"docblock\"><p>The error \
         returned when a river cannot be mapped, with the reason and the stretch of the river \
         that failed.</p>{PARA}{PARA}{PARA}</div></details>\
         <h2 id=\"trait-implementations\">Trait Implementations</h2>\
         <div id=\"trait-implementations-list\">{}{}{}</div></section></main></body>",
        imp(
            "Clone",
            "Returns a copy of the value, made field by field, so that changing the copy leaves \
             the original as it was.",
        ),
        imp(
            "Debug",
            "Formats the value using the given formatter, with the reason and the stretch of \
             the river, for logs and for tests.",
        ),
        imp(
            "Display",
            "Formats the value for people: one sentence that names the river, the stretch and \
             what went wrong there.",
        ),
    );
    let md = md_main(&page);
    assert!(md.contains("The error returned when a river"), "{md}");
    // The toggle's label is a button, not text.
    assert!(!md.contains("Expand description"), "{md}");
    for kept in [
        "impl [Clone]",
        "impl [Debug]",
        "impl [Display]",
        "Returns a copy of the value, made field by field",
        "Formats the value for people: one sentence",
    ] {
        assert!(md.contains(kept), "{kept:?} missing from\n{md}");
    }
}

#[test]
fn a_directory_pages_link_heavy_data_table_is_its_content() {
    // An old directory page: a short intro, then the teams, one row of
    // links (coordinator, list, site, archive) each.
    let row = |code: &str, name: &str| {
        format!(
            "<tr><td>{code}</td><td>{name} team</td></tr><tr><td></td><td>coordinator: \
             <a href=\"mailto:{code}@teams.example\">{name} Coordinator</a> mailing list: send an \
             empty mail to <a href=\"mailto:{code}-subscribe@teams.example\">{code}-subscribe</a> \
             web site: <a href=\"https://{code}.teams.example/\">{code}.teams.example</a></td>\
             </tr>"
        )
    };
    let rows: String = [
        ("af", "Afrikaans"),
        ("ar", "Arabic"),
        ("bg", "Bulgarian"),
        ("ca", "Catalan"),
        ("cs", "Czech"),
        ("da", "Danish"),
        ("de", "German"),
        ("el", "Greek"),
        ("es", "Spanish"),
        ("fi", "Finnish"),
    ]
    .iter()
    .map(|(c, n)| row(c, n))
    .collect();
    let page = format!(
        "<body><center><table><tr><td><h1>The River Translation Teams</h1>\
         <p>Many river guides have been translated into more than fifty languages, and the \
         number grows every year. Almost every team is looking for more translators.</p>\
         <p>The table below lists every team with its coordinator, its mailing list and its \
         site, sorted by language code.</p></td></tr></table>\
         <table width=\"100%\">{rows}</table></center>\
         <center>Page maintained by the river team.</center></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("Many river guides"), "{md}");
    for kept in ["Afrikaans team", "Finnish Coordinator", "de.teams.example"] {
        assert!(md.contains(kept), "{kept:?} missing from\n{md}");
    }
}

#[test]
fn an_index_page_of_links_keeps_its_lists() {
    // Nothing reads like an article: two headings, then the index itself
    // (lists of links) beside the site menu.
    let list = |module: &str| {
        let items: String = (1..=8)
            .map(|i| format!("<a href=\"/api/{module}{i}.html\">riverApi{module}{i}</a><br>"))
            .collect();
        format!("<h3>Module {module}:</h3><p>{items}</p>")
    };
    let page = format!(
        "<body><table><tr><td><h1>The River Library</h1><h2>List of symbols per module</h2>\
         </td></tr></table><table><tr><td width=\"200\"><ul><li><a href=\"/\">Home</a></li>\
         <li><a href=\"/docs\">Documentation</a></li></ul></td><td>{}{}{}</td></tr></table></body>",
        list("banks"),
        list("bridges"),
        list("fords"),
    );
    let md = md_main(&page);
    for kept in ["Module banks:", "riverApibanks1", "riverApifords8"] {
        assert!(md.contains(kept), "{kept:?} missing from\n{md}");
    }
}

#[test]
fn docbooks_navigation_tables_are_not_content() {
    // DocBook's HTML (PostgreSQL's, Valgrind's manuals): a Prev / Up /
    // Home / Next bar above and below, as tables with a `summary`.
    let bar = |which: &str| {
        format!(
            "<div><table class=\"nav\" width=\"100%\" summary=\"Navigation {which}\"><tr>\
             <td><a accesskey=\"p\" href=\"intro.html\"><img src=\"prev.png\" alt=\"Prev\"></a></td>\
             <td><a accesskey=\"u\" href=\"manual.html\"><img src=\"up.png\" alt=\"Up\"></a></td>\
             <th>River Tools Manual</th>\
             <td><a accesskey=\"n\" href=\"next.html\">Next: Using the river core</a></td>\
             </tr></table></div>"
        )
    };
    let page = format!(
        "<body>{}<div class=\"chapter\"><h1>2. Reading the river</h1><p>Short chapters \
         explain one tool each.</p><pre class=\"programlisting\">river --read basin.toml</pre>\
         </div>{}</body>",
        bar("header"),
        bar("footer"),
    );
    let md = md_main(&page);
    assert!(md.contains("Short chapters explain one tool each."), "{md}");
    assert!(md.contains("river --read basin.toml"), "{md}");
    for gone in ["River Tools Manual", "Next: Using", "prev.png"] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn links_in_a_synopsis_do_not_make_a_reference_page_link_heavy() {
    // gtk-doc: the synopsis and every entry link the names (`<pre>` with
    // `<a href>`). Those are code, not ways off the page.
    let names = [
        "RIVER_PUBLIC",
        "RIVER_CALL",
        "RIVER_PUBFUN",
        "RIVER_PUBVAR",
        "RIVER_LOCAL",
    ];
    let synopsis: String = names
        .iter()
        .map(|n| format!("#define <a href=\"#{n}\">{n}</a>;\n"))
        .collect();
    let entries: String = names
        .iter()
        .map(|n| {
            format!(
                "<div class=\"refsect2\"><h3><a name=\"{n}\">Macro </a>{n}</h3>\
                 <pre class=\"programlisting\">#define <a href=\"#{n}\">{n}</a>;</pre><p/></div><hr/>"
            )
        })
        .collect();
    let page = format!(
        "<body><table class=\"navigation\" width=\"100%\" summary=\"Navigation header\"><tr>\
         <td><a accesskey=\"p\" href=\"prev.html\"><img src=\"left.png\" alt=\"Prev\"/></a></td>\
         <td><a accesskey=\"h\" href=\"index.html\"><img src=\"home.png\" alt=\"Home\"/></a></td>\
         <th>River Reference Manual</th></tr></table><h2>riverexports</h2><p>riverexports - \
         macros for marking symbols as exportable. </p><p/><p>Author(s): Jane Roe</p>\
         <div class=\"refsynopsisdiv\"><h2>Synopsis</h2><pre class=\"synopsis\">{synopsis}</pre>\
         </div><div class=\"refsect1\"><h2>Description</h2></div><div class=\"refsect1\">\
         <h2>Details</h2><div class=\"refsect2\">{entries}</div></div></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("macros for marking symbols"), "{md}");
    for kept in ["Macro RIVER_CALL", "#define RIVER_LOCAL;"] {
        assert!(md.contains(kept), "{kept:?} missing from\n{md}");
    }
}

#[test]
fn heading_permalinks_are_not_kept() {
    let page = format!(
        "<body><div class=\"body\" role=\"main\"><section id=\"rivers\"><h1>Rivers<a class=\"headerlink\" \
         href=\"#rivers\" title=\"Permalink to this heading\">¶</a></h1>{PARA}\
         <h2 id=\"banks\"><a href=\"#banks\" class=\"anchor\">§</a>Banks</h2>{PARA}\
         <h3><span><a class=\"mark\" href=\"#fords\" id=\"fords\">#</a></span>Fords</h3>{PARA}\
         <p>Fixed a crash when a river has no source (Jane Roe) \
         <a href=\"https://git.example/c/5fe0ab420\">§</a></p>\
         <p>Rivers meet the sea<a href=\"#fn1\">1</a>.</p></section></div></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("# Rivers\n"), "{md}");
    assert!(md.contains("## Banks\n"), "{md}");
    assert!(md.contains("### Fords\n"), "{md}");
    for gone in ["¶", "#rivers", "#banks", "#fords"] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
    // A mark that links elsewhere (a commit) and a footnote stay.
    assert!(md.contains("[§](https://git.example/c/5fe0ab420)"), "{md}");
    assert!(md.contains("#fn1"), "{md}");
}

#[test]
fn wikipedia_hatnotes_are_not_content() {
    let page = format!(
        "<body><div id=\"content\"><h1>River</h1><div id=\"bodyContent\">\
         <div role=\"note\" class=\"hatnote navigation-not-searchable\">For other uses, see \
         <a href=\"/wiki/River_(disambiguation)\">River (disambiguation)</a>.</div>{PARA}\
         <h2>Geography</h2><div role=\"note\" class=\"hatnote\">Main article: \
         <a href=\"/wiki/Geography_of_rivers\">Geography of rivers</a></div>{PARA}{PARA}\
         </div></div></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 3, "{md}");
    assert!(md.contains("## Geography"), "{md}");
    for gone in ["For other uses", "Main article"] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn figure_captions_leave_the_text_and_become_the_image_title() {
    let page = format!(
        "<body><article>{PARA}\
         <figure><img src=\"/r.jpg\" alt=\"River\"><figcaption>A river bend at dusk, \
         \"low water\"</figcaption></figure>{PARA}\
         <div class=\"wp-caption\"><img src=\"/d.jpg\" alt=\"\">\
         <p class=\"wp-caption-text\">The delta (seen from above)</p></div>{PARA}\
         <figure class=\"lazy\"><div class=\"placeholder\" data-src=\"/l.jpg\"></div>\
         <figcaption>A ford in spring</figcaption></figure>\
         <figure class=\"listing\"><pre>flow(river)</pre><figcaption>Listing 1: a river \
         flows</figcaption></figure>{PARA}\
         <figure><span class=\"image-and-copyright-container\">\
         <div class=\"js-delayed-image-load\" data-src=\"/w.jpg\"></div>\
         <span class=\"off-screen\">Image copyright</span>\
         <span class=\"story-image-copyright\">Getty Images</span></span>\
         <figcaption><span class=\"off-screen\">Image caption</span>\
         <span class=\"media-caption__text\">The weir at night</span></figcaption></figure>\
         </article></body>"
    );
    let (md, text) = md_and_text_main(&page);
    assert!(
        md.contains(
            "![River](https://example.com/r.jpg \"A river bend at dusk, \\\"low water\\\"\")"
        ),
        "{md}"
    );
    assert!(
        md.contains("![](https://example.com/d.jpg \"The delta (seen from above)\")"),
        "{md}"
    );
    for gone in [
        "A river bend",
        "The delta",
        "A ford in spring",
        "The weir at night",
    ] {
        assert_eq!(
            md.matches(gone).count(),
            md.matches(&format!("\"{gone}")).count(),
            "{md}"
        );
        assert!(!text.contains(gone), "{gone:?} left in the text\n{text}");
    }
    // A listing's caption is the listing's: it stays in the text.
    assert!(text.contains("Listing 1: a river flows"), "{text}");
    assert_eq!(text.matches("Rivers carve valleys").count(), 4, "{text}");
}

#[test]
fn a_line_of_links_right_above_the_title_is_a_kicker() {
    let page = format!(
        "<body><article><header><div class=\"category\"><a href=\"/space\">SPACE</a></div>\
         <div class=\"title\"><h1>Rivers of Titan</h1></div>\
         <div class=\"tags\"><a href=\"/a\">News</a> <a href=\"/b\">Video</a></div></header>\
         {PARA}{PARA}</article></body>"
    );
    let md = md_main(&page);
    assert!(md.starts_with("# Rivers of Titan\n"), "{md}");
    assert!(!md.contains("SPACE"), "{md}");
    // A line that is not links ends the walk, and stays.
    let page = format!(
        "<body><article><header><p>Review</p><div class=\"section\"><a href=\"/s\">Space</a></div>\
         <h1>Rivers of Titan</h1></header>{PARA}{PARA}</article></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("Review"), "{md}");
    assert!(!md.contains("[Space]"), "{md}");
    let page = format!(
        "<body><article><header><div class=\"section\"><a href=\"/s\">Space</a></div><p>Review</p>\
         <h1>Rivers of Titan</h1></header>{PARA}{PARA}</article></body>"
    );
    let md = md_main(&page);
    assert!(md.contains("[Space]"), "{md}");
}

#[test]
fn ad_labels_widget_notices_and_trending_lists_go() {
    let page = format!(
        "<body><div class=\"story\">{PARA}<div class=\"x1\"><span>Advert</span></div>{PARA}\
         <p>This slideshow requires JavaScript.</p>{PARA}\
         <p>This river carries silt to the sea.</p>{PARA}\
         <section class=\"block block-hosted-article-hosted-trending-articles\">\
         <div class=\"trending\"><h3>Trending</h3><ol class=\"rounded-list\">\
         <li><a href=\"/t/1\">'Tarzan' actor Ron Ely's wife killed; son shot by deputies</a></li>\
         <li><a href=\"/t/2\">Iowa man finds 5 inches of animal blood flooding basement</a></li>\
         <li><a href=\"/t/3\">Airline went into records after Max crash, engineer says</a></li>\
         </ol></div></section></div></body>"
    );
    let md = md_main(&page);
    assert_eq!(md.matches("Rivers carve valleys").count(), 4, "{md}");
    assert!(md.contains("This river carries silt"), "{md}");
    for gone in ["Advert", "slideshow", "Trending", "basement"] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
}

#[test]
fn a_top_heading_linking_the_home_page_is_the_site_name() {
    let page = |h1: &str| {
        format!(
            "<body><div id=\"page\"><div id=\"pagetitle\"><h1>{h1}</h1></div>\
             <div class=\"post\"><h2>Do not hate a people too much</h2>{PARA}{PARA}{PARA}</div>\
             </div></body>"
        )
    };
    for home in [
        "https://example.com/",
        "/",
        "https://example.com",
        "//example.com/",
        "/index.php",
    ] {
        let md = md_main(&page(&format!("<a href=\"{home}\">River News</a>")));
        assert!(!md.contains("River News"), "{home}: {md}");
        assert!(md.contains("Do not hate"), "{md}");
    }
    // A title that links to its own page is the page's title: it heads the chunks.
    let own = page("<a href=\"/2015/03/rivers.html\">River News</a>");
    assert_eq!(
        chunks_main(&own).0,
        ["River News", "Do not hate a people too much"]
    );
    assert!(chunks_main(&page("<a href=\"/\">River News</a>")).0 != ["River News"]);
}

#[test]
fn the_title_heading_leaves_the_content_and_heads_the_chunks() {
    let page = |title: &str, heads: &str| {
        format!(
            "<html><head><title>{title}</title></head><body><main>{heads}\
             <p>First words of the story.</p>{PARA}{PARA}{PARA}<h2>Later</h2>{PARA}</main></body></html>"
        )
    };
    // (title, headings, the chunks' headingPath): the title heading is out
    // of the markdown and the top of every headingPath.
    let cases = [
        // An h1 the title names.
        (
            "Three Cases of Plague Diagnosed | Smart News",
            "<h1>Three cases of plague diagnosed</h1>",
            "Three cases of plague diagnosed",
        ),
        // A site name over the headline, both in the title: both go.
        (
            "September open thread - The River Blog",
            "<h1>The River Blog</h1><h1>September open thread</h1>",
            "September open thread",
        ),
        // A no-break space in it is a space, as in the markdown.
        ("F.2. amcheck", "<h1>F.2.&nbsp;amcheck</h1>", "F.2. amcheck"),
        // With no h1, a post title in an h2 the title names.
        (
            "Do not hate a people too much | River News",
            "<h2><a href=\"/2015/03/hate.html\">Do not hate a people too much</a></h2>",
            "Do not hate a people too much",
        ),
    ];
    for (title, heads, path) in cases {
        let p = page(title, heads);
        let md = md_main(&p);
        assert!(md.starts_with("First words"), "{heads}: {md}");
        assert!(md.contains("## Later"), "{md}");
        assert!(!md.contains("River Blog"), "{md}");
        assert_eq!(chunks_main(&p).0, [path]);
    }
    // An h1 the title does not name is a heading of the content.
    let p = page("River News", "<h1>Rivers carve valleys slowly</h1>");
    assert!(md_main(&p).starts_with("# Rivers carve valleys slowly"));
    assert_eq!(chunks_main(&p).0, ["Rivers carve valleys slowly"]);
}

#[test]
fn a_caption_box_around_its_picture_gives_the_picture_its_title() {
    let page = format!(
        "<body><article>{PARA}<p><span class=\"wf_caption\"><a href=\"/big.jpg\">\
         <img src=\"/t.jpg\" alt=\"map\"></a><span>The first map of Titan. (NASA)</span>\
         </span></p>{PARA}</article></body>"
    );
    let (md, text) = md_and_text_main(&page);
    assert!(
        md.contains("![map](https://example.com/t.jpg \"The first map of Titan. (NASA)\")"),
        "{md}"
    );
    assert_eq!(md.matches("first map").count(), 1, "{md}");
    assert!(!text.contains("first map"), "{text}");
}

#[test]
fn bylines_in_the_article_header_go_and_its_dek_stays() {
    let page = format!(
        "<html><head><title>Power shutoff begins | Times</title></head><body><article>\
         <header><div class=\"crumbs\"><a href=\"/news/\">News</a></div>\
         <h1>Power shutoff begins</h1>\
         <p class=\"dek\">The utility cut power to half a million people to prevent wildfires.</p>\
         <div class=\"subhead\"><span>JANE HAR</span><time datetime=\"2019-11-20\">Nov. 20, \
         2019</time><time>Updated: Nov. 20, 2019 1:35 a.m.</time></div>\
         <figure><img src=\"/p.jpg\" alt=\"lines\"></figure></header>{PARA}{PARA}</article></body></html>"
    );
    let md = md_main(&page);
    for gone in ["JANE HAR", "Nov. 20", "News"] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
    assert!(md.starts_with("The utility cut power"), "{md}");
    assert!(md.contains("![lines](https://example.com/p.jpg)"), "{md}");
    // Without a title heading in it, a header is left alone.
    let page = page.replace("<h1>Power shutoff begins</h1>", "");
    assert!(md_main(&page).contains("JANE HAR"));
}

#[test]
fn share_links_signup_boxes_affiliate_notices_and_ad_labels_go() {
    let page = format!(
        "<body><article>\
         <div class=\"code-block\"><em>This post may contain affiliate links. Please see my \
         <a href=\"/disclosure/\">disclosure page</a>.</em></div>\
         <div class=\"postinfo\">Posted on March 30, 2015 by Admin</div>{PARA}\
         <div class=\"wabtn_container\"><a href=\"whatsapp://send?text=x\">Share this on WhatsApp</a></div>\
         <div class=\"wpa\"><span class=\"wpa-about\">Iklan</span></div>\
         <p><a href=\"https://twitter.com/share?text=Rivers+carve+valleys\">Rivers carve valleys \
         over thousands of years, and we should let them. Click To Tweet</a></p>\
         <p><a href=\"https://www.pinterest.com/pin/create/button/?url=x\"><img src=\"/pin.jpg\" \
         alt=\"A pinned river\"></a></p>{PARA}\
         <div id=\"emailSignup\"><div>Let our news meet your inbox.</div>\
         <form><input name=\"emailAddress\" placeholder=\"Your Email Address\"><button>Sign up</button></form></div>\
         {PARA}</article></body>"
    );
    let md = md_main(&page);
    for gone in [
        "affiliate",
        "Posted on",
        "WhatsApp",
        "Iklan",
        "meet your inbox",
        "Sign up",
    ] {
        assert!(!md.contains(gone), "{gone:?} left in\n{md}");
    }
    // A quotation to tweet and a picture to pin are the article's own.
    assert!(md.contains("we should let them. Click To Tweet"), "{md}");
    assert!(md.contains("![A pinned river]"), "{md}");
    assert_eq!(
        md.matches("Rivers carve valleys over thousands").count(),
        4,
        "{md}"
    );
}
