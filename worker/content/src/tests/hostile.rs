//! Hostile pages: deep nesting, unclosed tags, huge inline runs, big tables.
//! Each runs every output on a 2 MiB thread (tokio's worker stack size); a
//! stack overflow would abort the test binary, not just fail the test.

use std::time::{Duration, Instant};

use super::*;

/// Every format, so that every walk sees the page.
fn all_formats() -> ContentOptions {
    ContentOptions {
        want_html: true,
        want_text: true,
        want_links: true,
        want_json_ld: true,
        chunk_size: Some(1500),
        ..ContentOptions::default()
    }
}

/// Runs `extract` on a small-stack thread; returns the markdown and the time taken.
fn on_small_stack(page: String, only_main: bool) -> (String, Duration) {
    let started = Instant::now();
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let opts = ContentOptions {
                only_main_content: only_main,
                ..all_formats()
            };
            let out = run(&page, &opts);
            assert!(out.html.is_some() && out.text.is_some() && out.chunks.is_some());
            out.markdown.unwrap_or_default()
        })
        .expect("spawn");
    let md = handle.join().expect("extract panicked");
    (md, started.elapsed())
}

#[test]
fn hostile_pages_finish_on_a_small_stack() {
    let rows = format!("<tr>{}</tr>", "<td>cell</td>".repeat(20));
    let inline = "<span><i>word</i> <a href=\"/x\">link</a></span> ";
    let cases: Vec<(&str, String, &str, u64)> = vec![
        (
            "100k nested divs",
            format!(
                "<body>{}deep text{}</body>",
                "<div>".repeat(100_000),
                "</div>".repeat(100_000)
            ),
            "deep text",
            10,
        ),
        (
            "50k unclosed b",
            format!("<body><p>start {}end</p></body>", "<b>x ".repeat(50_000)),
            "end",
            10,
        ),
        (
            "5 MB of inline tags",
            format!(
                "<body><p>{}</p></body>",
                inline.repeat(5_000_000 / inline.len())
            ),
            "*word* [link](https://example.com/x)",
            60,
        ),
        (
            "2000x20 table",
            format!(
                "<table><tr>{}</tr>{}</table>",
                "<th>h</th>".repeat(20),
                rows.repeat(2000)
            ),
            "| cell | cell |",
            10,
        ),
        (
            "5000 nested lists",
            format!("<body>{}leaf</body>", "<ul><li>item ".repeat(5000)),
            "leaf",
            10,
        ),
        (
            "500 nested tables",
            format!("<body>{}inner</body>", "<table><tr><td>".repeat(500)),
            "inner",
            10,
        ),
        (
            "distinct unclosed formatting re-created per block",
            format!(
                "<body><p>{}</p>{}</body>",
                (0..200)
                    .map(|i| format!("<em class=\"c{i}\">"))
                    .collect::<String>(),
                "<p>para</p>".repeat(20_000)
            ),
            "para",
            20,
        ),
        (
            "100k nested blockquotes",
            format!("<body>{}quoted</body>", "<blockquote>".repeat(100_000)),
            "quoted",
            10,
        ),
    ];
    for (name, page, expect, limit_s) in cases {
        for only_main in [true, false] {
            let (md, took) = on_small_stack(page.clone(), only_main);
            eprintln!("TIMING {name} main={only_main}: {took:?}");
            assert!(md.contains(expect), "{name}: {expect:?} missing");
            assert!(
                took < Duration::from_secs(limit_s),
                "{name} (main {only_main}) took {took:?}"
            );
        }
    }
}

#[test]
fn deep_nesting_is_flattened_beyond_the_cap() {
    let page = format!(
        "<body>{}<p>para</p>{}</body>",
        "<blockquote>".repeat(2_000),
        "x"
    );
    let md = md_all(&page);
    let prefix = md.lines().find(|l| l.contains("para")).unwrap_or("");
    // Quote prefixes stop growing at the frame cap.
    assert!(prefix.matches('>').count() <= 32, "{prefix}");
}

/// Tag soup from a fixed seed: every walk must survive it and keep its invariants.
#[test]
fn random_tag_soup_keeps_the_output_invariants() {
    const PIECES: &[&str] = &[
        "<b>",
        "</b>",
        "<i>",
        "</i>",
        "<p>",
        "</p>",
        "<div>",
        "</div>",
        "<ul>",
        "<li>",
        "</ul>",
        "<ol start=9>",
        "</ol>",
        "<table>",
        "<tr>",
        "<td>",
        "<th>",
        "</table>",
        "<pre>",
        "</pre>",
        "<code>",
        "</code>",
        "<a href='/x'>",
        "</a>",
        "<img src=y.png alt='a|b'>",
        "<br>",
        "<hr>",
        "<h2>",
        "</h2>",
        "<blockquote>",
        "</blockquote>",
        "<script>x()</script>",
        "<!-- c -->",
        "<svg><title>t</title></svg>",
        "word ",
        "more words. ",
        "* _ ` [ ] | # > - + 1. ",
        "&amp;&lt;&nbsp;",
        "\n\n",
        "日本語の文。",
        "<span hidden>h</span>",
        "<nav>n</nav>",
        "<select><option>o</select>",
        "<caption>cap</caption>",
        "<dl><dt>t<dd>d</dl>",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..300 {
        let len = 1 + (next() % 120) as usize;
        let page: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        for only_main in [true, false] {
            let opts = ContentOptions {
                only_main_content: only_main,
                chunk_size: Some(200),
                ..all_formats()
            };
            let out = run(&page, &opts);
            let md = out.markdown.unwrap_or_default();
            assert!(
                !md.contains("\n\n\n") || md.contains("```"),
                "blank lines in {page:?}:\n{md}"
            );
            assert_eq!(md, md.trim(), "untrimmed output for {page:?}");
            for c in out.chunks.unwrap_or_default() {
                assert!(c.tokens.unwrap_or(0) <= 200);
            }
        }
    }
}
