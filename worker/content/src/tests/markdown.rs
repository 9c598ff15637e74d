//! Each markdown construct, exact where the output is short.

use super::*;

#[test]
fn markdown_constructs_render_as_gfm() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "heading levels",
            "<h1>Title</h1><h3>Sub <em>part</em></h3>",
            "# Title\n\n### Sub *part*",
        ),
        (
            "paragraphs and collapsed whitespace",
            "<p>one\n   two</p>\n\n<p>  three  </p>",
            "one two\n\nthree",
        ),
        (
            "bold italic strike",
            "<p><b>b</b> <strong> s </strong><i>i</i> <del>d</del></p>",
            "**b** **s** *i* ~~d~~",
        ),
        (
            "empty emphasis vanishes",
            "<p>a<b> </b>b<i></i>c</p>",
            "a bc",
        ),
        (
            "inline code with backtick",
            "<p>run <code>a`b</code> now</p>",
            "run ``a`b`` now",
        ),
        (
            "inline code keeps specials",
            "<p><code>*x* [y]</code></p>",
            "`*x* [y]`",
        ),
        (
            "fenced code with language",
            "<pre><code class=\"language-rust\">fn main() {\n    x();\n}\n</code></pre>",
            "```rust\nfn main() {\n    x();\n}\n```",
        ),
        (
            "pre without language",
            "<pre>a  b\n  c</pre>",
            "```\na  b\n  c\n```",
        ),
        (
            "sphinx names the language on a wrapper",
            "<div class=\"highlight-python3 notranslate\"><div class=\"highlight\"><pre>x = 1</pre></div></div>",
            "```python\nx = 1\n```",
        ),
        (
            "sphinx's default lexer names none",
            "<div class=\"highlight-default notranslate\"><div class=\"highlight\"><pre>x = 1</pre></div></div>",
            "```\nx = 1\n```",
        ),
        (
            "github names it on the wrapper",
            "<div class=\"highlight highlight-source-js\"><pre>let x = 1;</pre></div>",
            "```js\nlet x = 1;\n```",
        ),
        (
            "a bare language class on pre (rustdoc), lower-cased",
            "<pre class=\"rust rust-example-rendered\"><code>let x = 1;</code></pre>",
            "```rust\nlet x = 1;\n```",
        ),
        (
            "mdbook's capitalised language",
            "<pre><code class=\"language-Rust\">let x = 1;</code></pre>",
            "```rust\nlet x = 1;\n```",
        ),
        (
            "code containing fences",
            "<pre>```\nx\n```</pre>",
            "````\n```\nx\n```\n````",
        ),
        (
            "unordered list",
            "<ul><li>a</li><li>b</li></ul>",
            "- a\n- b",
        ),
        (
            "ordered list with start",
            "<ol start=\"3\"><li>c</li><li>d</li></ol>",
            "3. c\n4. d",
        ),
        (
            "nested list",
            "<ul><li>a<ul><li>b<ol><li>c</li></ol></li></ul></li><li>d</li></ul>",
            "- a\n  - b\n    1. c\n- d",
        ),
        (
            "list item with paragraphs",
            "<ol><li><p>x</p><p>y</p></li></ol>",
            "1. x\n\n   y",
        ),
        (
            "blockquote",
            "<blockquote><p>q1</p><p>q2</p></blockquote>",
            "> q1\n>\n> q2",
        ),
        (
            "quote in list",
            "<ul><li>a<blockquote>q</blockquote></li></ul>",
            "- a\n\n  > q",
        ),
        (
            "relative link made absolute",
            "<p><a href=\"../docs/x.html\">Docs</a></p>",
            "[Docs](https://example.com/docs/x.html)",
        ),
        (
            "link with parentheses",
            "<a href=\"/wiki/A_(b)\">A</a>",
            "[A](https://example.com/wiki/A_%28b%29)",
        ),
        (
            "javascript link is text",
            "<a href=\"javascript:void(0)\">x</a>",
            "x",
        ),
        (
            "image absolute",
            "<img src=\"img/a.png\" alt=\"An [image]\">",
            "![An \\[image\\]](https://example.com/blog/img/a.png)",
        ),
        (
            "lazy image",
            "<img data-src=\"/l.png\" src=\"data:image/gif;base64,R0l\">",
            "![](https://example.com/l.png)",
        ),
        (
            "lazy image over a placeholder",
            "<img class=\"lazy\" src=\"/holder.png\" data-original=\"/real.jpg\" alt=\"r\">",
            "![r](https://example.com/real.jpg)",
        ),
        (
            "linked image",
            "<a href=\"/big\"><img src=\"/s.png\" alt=\"s\"></a>",
            "[![s](https://example.com/s.png)](https://example.com/big)",
        ),
        ("br is a hard break", "<p>a<br>b</p>", "a  \nb"),
        (
            "a paragraph that starts with code after a heading",
            "<h3>Using X</h3><p>\n <code>x</code> works.</p><p><code></code>y</p>",
            "### Using X\n\n`x` works.\n\ny",
        ),
        ("hr", "<p>a</p><hr><p>b</p>", "a\n\n---\n\nb"),
        (
            "escapes",
            "<p>*not em* _x_ [y] a*b 2 * 3 snake_case</p>",
            "\\*not em\\* \\_x\\_ \\[y\\] a\\*b 2 * 3 snake_case",
        ),
        (
            "line-start escapes",
            "<p># no</p><p>- no</p><p>1. no</p><p>+ no</p><p>> no</p>",
            "\\# no\n\n\\- no\n\n1\\. no\n\n\\+ no\n\n\\> no",
        ),
        (
            "html-looking text",
            "<p>&lt;div&gt; a &lt; b</p>",
            "\\<div> a < b",
        ),
        (
            "emphasis across paragraphs",
            "<b><p>x</p><p>y</p></b>",
            "**x**\n\n**y**",
        ),
        (
            "no runaway blank lines",
            "<div><div><p>a</p></div></div>\n\n\n<div></div><div><p>b</p></div>",
            "a\n\nb",
        ),
        ("definition list", "<dl><dt>T</dt><dd>D</dd></dl>", "T\nD"),
    ];
    for (name, html, want) in cases {
        assert_eq!(md_all(html), *want, "case {name}");
    }
}

#[test]
fn tables_become_pipe_tables_with_escaped_pipes() {
    let html = "<table><thead><tr><th>Name</th><th>Value</th></tr></thead>\
        <tbody><tr><td>a|b</td><td><code>x|y</code></td></tr>\
        <tr><td colspan=\"2\">wide</td></tr><tr><td>line<br>two</td><td><p>p1</p><p>p2</p></td></tr></tbody></table>";
    let want = "| Name | Value |\n| --- | --- |\n| a\\|b | `x\\|y` |\n| wide |  |\n| line<br>two | p1 p2 |";
    assert_eq!(md_all(html), want);
}

#[test]
fn layout_tables_are_read_as_blocks() {
    let html =
        "<table role=\"presentation\"><tr><td><p>left</p></td><td><p>right</p></td></tr></table>";
    assert_eq!(md_all(html), "left\n\nright");
    let single = "<table><tr><td>only one column</td></tr><tr><td>second row</td></tr></table>";
    assert_eq!(md_all(single), "only one column\n\nsecond row");
}

#[test]
fn table_inside_list_keeps_the_indent() {
    let html = "<ul><li>x<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table></li></ul>";
    assert_eq!(
        md_all(html),
        "- x\n\n  | a | b |\n  | --- | --- |\n  | 1 | 2 |"
    );
}

#[test]
fn text_format_has_paragraphs_and_no_markup() {
    let html = "<h2>Head</h2><p>Some <b>bold</b> and <a href=\"/x\">link</a>.</p>\
        <ul><li>one</li><li>two</li></ul><pre>code  here</pre>\
        <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>";
    let opts = ContentOptions {
        only_main_content: false,
        want_markdown: false,
        want_text: true,
        ..ContentOptions::default()
    };
    let out = run(html, &opts);
    assert_eq!(out.markdown, None);
    assert_eq!(
        out.text.as_deref(),
        Some("Head\n\nSome bold and link.\n\n- one\n- two\n\ncode  here\n\na\tb\n1\t2")
    );
}

#[test]
fn markdown_text_and_chunks_are_composed_unicode() {
    // "Babyschalen sollte geprüft werden" written with "u" + U+0308.
    let html = "<h2>Tipps zum Kauf</h2><p>Besonders bei Babyschalen sollte gepru\u{308}ft \
        werden, ob die Gurtla\u{308}nge reicht.</p>";
    let opts = ContentOptions {
        only_main_content: false,
        want_text: true,
        chunk_size: Some(200),
        ..ContentOptions::default()
    };
    let out = run(html, &opts);
    let composed = "sollte geprüft werden, ob die Gurtlänge reicht.";
    let md = out.markdown.unwrap_or_default();
    assert!(md.contains(composed), "{md:?}");
    assert!(!md.contains('\u{308}'), "{md:?}");
    assert!(out.text.unwrap_or_default().contains(composed));
    let chunks = out.chunks.unwrap_or_default();
    assert!(
        chunks.iter().any(|c| c.text.contains(composed)),
        "{chunks:?}"
    );
}

#[test]
fn html_format_is_cleaned_with_absolute_urls() {
    let html =
        "<body><div onclick=\"x()\" style=\"color:red\" class=\"c\"><a href=\"/a\">A &amp; B</a>\
        <img src=\"i.png\" srcset=\"i.png 1x, /j.png 2x\"><script>bad()</script></div></body>";
    let opts = ContentOptions {
        only_main_content: false,
        want_html: true,
        ..ContentOptions::default()
    };
    let out = run(html, &opts).html.unwrap_or_default();
    assert_eq!(
        out,
        "<div class=\"c\"><a href=\"https://example.com/a\">A &amp; B</a>\
         <img src=\"https://example.com/blog/i.png\" \
         srcset=\"https://example.com/blog/i.png 1x, https://example.com/j.png 2x\"></div>"
    );
}

#[test]
fn links_are_absolute_http_deduplicated_without_fragments() {
    let html = "<nav><a href=\"/a\">A</a></nav><main><p>x</p><a href=\"/a#top\">A again</a>\
        <a href=\"https://other.org/p?q=1#f\">o</a><a href=\"mailto:x@y.z\">m</a>\
        <a href=\"javascript:go()\">j</a><a href=\"b\">b</a><a href=\"#only\">self</a></main>";
    let opts = ContentOptions {
        want_links: true,
        ..ContentOptions::default()
    };
    let links = run(html, &opts).links.unwrap_or_default();
    assert_eq!(
        links,
        vec![
            "https://example.com/a",
            "https://other.org/p?q=1",
            "https://example.com/blog/b",
            "https://example.com/blog/post.html",
        ]
    );
}

#[test]
fn base_href_is_the_base_for_links_and_images() {
    let html = "<html><head><base href=\"https://cdn.example.org/root/\"></head><body>\
        <p><a href=\"x.html\">x</a> <img src=\"i.png\" alt=\"i\"></p></body></html>";
    assert_eq!(
        md_all(html),
        "[x](https://cdn.example.org/root/x.html) ![i](https://cdn.example.org/root/i.png)"
    );
}

#[test]
fn main_content_html_has_no_chrome() {
    let page = include_str!("../../tests/fixtures/content/article_de.html");
    let opts = ContentOptions {
        want_html: true,
        ..ContentOptions::default()
    };
    let html = run(page, &opts).html.unwrap_or_default();
    assert!(html.starts_with("<main>"), "{html}");
    // The title heading is `metadata.title`, in every format of the content.
    assert!(!html.contains("<h1>"), "{html}");
    assert!(html.contains("<h2>Umleitungen enden</h2>"), "{html}");
    assert!(!html.contains("Impressum") && !html.contains("Cookies"));
}
