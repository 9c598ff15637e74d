//! Chunk bounds, word integrity and heading paths.

use crate::{chunk_markdown, count_tokens};

/// Deterministic prose: numbered sentences of varied words.
fn prose(seed: usize, sentences: usize) -> String {
    const WORDS: &[&str] = &[
        "river",
        "valley",
        "stone",
        "current",
        "meander",
        "sediment",
        "floodplain",
        "erosion",
        "canyon",
        "delta",
        "estuary",
        "tributary",
        "watershed",
        "gravel",
        "boulder",
    ];
    (0..sentences)
        .map(|s| {
            let n = 6 + (seed + s) % 9;
            let words: Vec<&str> = (0..n)
                .map(|k| WORDS[(seed * 7 + s * 3 + k * 5) % WORDS.len()])
                .collect();
            format!("Sentence {} {}.", seed + s, words.join(" "))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn document() -> String {
    let mut md = String::from("# Guide\n\nIntro paragraph about rivers.\n\n");
    md.push_str("## Small one\n\nTiny section.\n\n## Small two\n\nAnother tiny section.\n\n");
    md.push_str("## Big section\n\n");
    for p in 0..12 {
        md.push_str(&prose(p * 40, 14));
        md.push_str("\n\n");
    }
    md.push_str("### Deeper\n\n");
    md.push_str(&prose(999, 80)); // one paragraph far over the limit
    md.push_str("\n\n## Code\n\n```rust\n");
    for l in 0..400 {
        md.push_str(&format!("let value_{l} = compute({l}) + offset;\n"));
    }
    md.push_str("```\n\n- item one\n- item two\n");
    md
}

/// Words of `text`, ignoring fence lines added when a code block was cut.
fn words(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

#[test]
fn chunks_respect_the_size_and_never_cut_words() {
    let md = document();
    for size in [200, 500, 1500] {
        let chunks = chunk_markdown(&md, size, None);
        assert!(chunks.len() > 1, "size {size} should split");
        for (k, c) in chunks.iter().enumerate() {
            assert_eq!(c.index, k as i64);
            let real = count_tokens(&c.text);
            assert_eq!(c.tokens, Some(real as i64), "tokens field is the recount");
            assert!(real <= size, "chunk {k} has {real} > {size} tokens");
        }
        let joined: Vec<String> = chunks.iter().flat_map(|c| words(&c.text)).collect();
        assert_eq!(joined, words(&md), "size {size}: words were cut or lost");
    }
}

#[test]
fn heading_paths_name_the_enclosing_sections() {
    let md = document();
    let chunks = chunk_markdown(&md, 300, None);
    let path_of = |needle: &str| {
        chunks
            .iter()
            .find(|c| c.text.contains(needle))
            .map(|c| c.heading_path.clone())
            .unwrap_or_default()
    };
    // The two small sections fit together: only "Guide" encloses both.
    let small = chunks
        .iter()
        .find(|c| c.text.contains("Tiny section."))
        .map(|c| c.text.clone());
    assert!(small.is_some_and(|t| t.contains("Another tiny section.")));
    assert_eq!(path_of("Another tiny section."), vec!["Guide"]);
    assert_eq!(path_of("Sentence 160 "), vec!["Guide", "Big section"]);
    assert_eq!(
        path_of("Sentence 1040 "),
        vec!["Guide", "Big section", "Deeper"]
    );
    assert_eq!(path_of("let value_399"), vec!["Guide", "Code"]);
    // A chunk cut from inside a section starts without its heading but keeps the path.
    let deeper: Vec<_> = chunks
        .iter()
        .filter(|c| c.text.contains("Sentence 10"))
        .collect();
    assert!(deeper.len() > 1);
}

#[test]
fn a_cut_code_block_is_closed_and_reopened() {
    let md = document();
    let chunks = chunk_markdown(&md, 200, None);
    let code: Vec<_> = chunks
        .iter()
        .filter(|c| c.text.contains("let value_"))
        .collect();
    assert!(code.len() > 2);
    for c in code {
        let fences = c
            .text
            .lines()
            .filter(|l| l.trim_start().starts_with("```"))
            .count();
        assert_eq!(fences % 2, 0, "unbalanced fence in:\n{}", c.text);
        assert!(c.text.contains("```rust"), "fence language kept");
    }
}

#[test]
fn cjk_text_is_split_at_sentence_ends() {
    let sentence = "気象庁は東京都心で桜が開花したと発表した。";
    let md = format!("# 桜\n\n{}", sentence.repeat(300));
    let chunks = chunk_markdown(&md, 200, None);
    assert!(chunks.len() > 1);
    for c in &chunks {
        assert!(count_tokens(&c.text) <= 200);
        assert!(c.text.ends_with('。'), "cut mid-sentence: {}", c.text);
        assert_eq!(c.heading_path, vec!["桜"]);
    }
}

#[test]
fn heading_paths_strip_markdown() {
    let md = "# A [link](https://x.y/z) and `code` \\*star\\*\n\ntext";
    let chunks = chunk_markdown(md, 200, None);
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0].heading_path, vec!["A link and code *star*"]);
}

#[test]
fn empty_markdown_has_no_chunks() {
    assert!(chunk_markdown("", 1500, None).is_empty());
    assert!(chunk_markdown(" \n\n ", 1500, None).is_empty());
}

#[test]
fn extract_makes_chunks_even_without_the_markdown_format() {
    use super::*;
    let para =
        "<p>Rivers carve valleys over thousands of years, moving sand and gravel downstream.</p>";
    let page = format!(
        "<article><h1>Rivers</h1>{}<h2>Meanders</h2>{}</article>",
        para.repeat(30),
        para.repeat(30)
    );
    let opts = ContentOptions {
        want_markdown: false,
        chunk_size: Some(200),
        ..ContentOptions::default()
    };
    let out = run(&page, &opts);
    assert_eq!(out.markdown, None);
    let chunks = out.chunks.unwrap_or_default();
    assert!(chunks.len() >= 4, "{} chunks", chunks.len());
    assert_eq!(chunks[0].heading_path, vec!["Rivers"]);
    let last = chunks.last().map(|c| c.heading_path.clone());
    assert_eq!(
        last,
        Some(vec!["Rivers".to_string(), "Meanders".to_string()])
    );
}
