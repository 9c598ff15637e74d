//! Throughput of the content pipeline: converts an HTML file N times.
//!
//! `cargo run --release -p webdata-worker --example content_speed -- PAGE.html [N] [--all]`
//! or `-- --synthetic [N] [--all]` for a generated ~40 KB documentation page.
//! `--all` asks for every format (markdown, html, text, links, JSON-LD, chunks).

use std::time::Instant;

use webdata_worker::content::{extract, ContentOptions};

/// A documentation page of about 40 KB: sidebar navigation, headings,
/// paragraphs with inline code and links, code blocks, a table, lists.
fn synthetic_docs_page() -> String {
    let mut nav = String::new();
    for i in 0..60 {
        nav.push_str(&format!(
            "<li><a href=\"/docs/topic-{i}\">Topic number {i}</a></li>"
        ));
    }
    let mut body = String::new();
    for s in 0..30 {
        body.push_str(&format!(
            "<h2 id=\"s{s}\">Section {s}: configuring the thing</h2>"
        ));
        for p in 0..3 {
            body.push_str(&format!(
                "<p>Paragraph {p} explains how <code>option_{s}_{p}</code> changes the \
                 behaviour of the <a href=\"../api/{s}.html\">API</a>. When the value is \
                 <strong>true</strong>, requests are retried; otherwise they fail fast, \
                 which is <em>usually</em> what you want in batch jobs.</p>"
            ));
        }
        body.push_str(&format!(
            "<pre><code class=\"language-rust\">fn example_{s}() {{\n    let client = Client::new();\n    \
             client.retry({s}).send()?;\n}}\n</code></pre>"
        ));
        body.push_str(
            "<ul><li>First point with <code>inline</code></li><li>Second point<ul>\
            <li>Nested detail</li></ul></li></ul>",
        );
        if s % 3 == 0 {
            body.push_str(
                "<table><thead><tr><th>Name</th><th>Type</th><th>Default</th></tr></thead><tbody>",
            );
            for r in 0..6 {
                body.push_str(&format!(
                    "<tr><td><code>field_{r}</code></td><td>string</td><td>none | auto</td></tr>"
                ));
            }
            body.push_str("</tbody></table>");
        }
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><title>Docs</title>\
         <meta name=\"description\" content=\"Synthetic docs\"><script src=\"/app.js\"></script>\
         <style>body{{margin:0}}</style></head><body><header><a href=\"/\">Product</a>\
         <nav><a href=\"/docs\">Docs</a><a href=\"/blog\">Blog</a></nav></header>\
         <div class=\"layout\"><aside class=\"sidebar\"><ul>{nav}</ul></aside>\
         <main><article><h1>Configuration guide</h1>{body}</article></main></div>\
         <footer>© Product Inc.</footer></body></html>"
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.iter().any(|a| a == "--all");
    let rest: Vec<&String> = args.iter().filter(|a| *a != "--all").collect();
    let Some(source) = rest.first() else {
        eprintln!("usage: content_speed (PAGE.html | --synthetic) [N] [--all]");
        std::process::exit(2);
    };
    let html = if source.as_str() == "--synthetic" {
        synthetic_docs_page()
    } else {
        match std::fs::read_to_string(source.as_str()) {
            Ok(h) => h,
            Err(e) => {
                eprintln!("cannot read {source}: {e}");
                std::process::exit(1);
            }
        }
    };
    let n: usize = rest.get(1).and_then(|s| s.parse().ok()).unwrap_or(200);
    let url = url::Url::parse("https://example.com/docs/page").expect("static URL");
    let opts = ContentOptions {
        want_html: all,
        want_text: all,
        want_links: all,
        want_json_ld: all,
        chunk_size: all.then_some(1500),
        ..ContentOptions::default()
    };
    let mut out_bytes = 0;
    // One warm-up run (tokenizer tables load lazily).
    let _ = extract(&html, &url, &opts);
    let started = Instant::now();
    for _ in 0..n {
        match extract(&html, &url, &opts) {
            Ok(x) => out_bytes += x.markdown.map_or(0, |m| m.len()),
            Err(e) => {
                eprintln!("extract failed: {e}");
                std::process::exit(1);
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    let mb = (html.len() * n) as f64 / 1e6;
    println!(
        "{} bytes x {n}: {:.1} MB/s, {:.2} ms/page, markdown {} bytes/page",
        html.len(),
        mb / secs,
        secs * 1000.0 / n as f64,
        out_bytes / n.max(1)
    );
}
