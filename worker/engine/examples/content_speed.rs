//! Throughput of the content pipeline: converts an HTML file N times.
//!
//! `cargo run --release -p webdata-engine --example content_speed -- PAGE.html [N] [--all]`
//! or `-- --synthetic [N] [--all]` for a generated ~40 KB documentation page.
//! `--all` asks for every format (markdown, html, text, links, JSON-LD, chunks).
//! `-- DIR [N]` converts every `*.html` under DIR (a corpus of real pages,
//! e.g. `/usr/share/doc/postgresql-doc-15/html`) N times and reports the
//! aggregate speed and the speed per page-size band (linearity).
//! `--tree` forces the html5ever parser (what CSS `excludeTags` use), for
//! comparison with the default fast parser.

use std::time::Instant;

use webdata_content::{extract, ContentOptions};

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

fn html_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            html_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "html" || x == "htm") {
            out.push(p);
        }
    }
}

fn corpus(dir: &str, n: usize, opts: &ContentOptions) {
    let mut files = Vec::new();
    html_files(std::path::Path::new(dir), &mut files);
    files.sort();
    let pages: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    if pages.is_empty() {
        eprintln!("no .html files under {dir}");
        std::process::exit(1);
    }
    let url = url::Url::parse("https://example.com/docs/page").expect("static URL");
    // The warm-up pass also fingerprints the output, so that a change meant
    // only to be faster can be checked to give the same markdown and metadata.
    let mut digest = std::hash::DefaultHasher::new();
    for p in &pages {
        if let Ok(x) = extract(p, &url, opts) {
            std::hash::Hash::hash(&x.markdown, &mut digest);
            std::hash::Hash::hash(&format!("{:?}", x.metadata), &mut digest);
        }
    }
    println!("output digest: {:016x}", std::hash::Hasher::finish(&digest));
    // Bands by page size: <16 KB, 16-64 KB, 64-256 KB, >=256 KB.
    let bands = [
        (0, 16 << 10),
        (16 << 10, 64 << 10),
        (64 << 10, 256 << 10),
        (256 << 10, usize::MAX),
    ];
    let mut band_bytes = [0usize; 4];
    let mut band_secs = [0f64; 4];
    let mut band_pages = [0usize; 4];
    let mut total_bytes = 0usize;
    let mut slowest = (0f64, 0usize);
    let started = Instant::now();
    for _ in 0..n {
        for p in &pages {
            let t = Instant::now();
            if let Err(e) = extract(p, &url, opts) {
                eprintln!("extract failed: {e}");
                std::process::exit(1);
            }
            let secs = t.elapsed().as_secs_f64();
            let b = bands
                .iter()
                .position(|(lo, hi)| p.len() >= *lo && p.len() < *hi)
                .unwrap_or(0);
            band_bytes[b] += p.len();
            band_secs[b] += secs;
            band_pages[b] += 1;
            total_bytes += p.len();
            if secs * 1e9 / p.len().max(1) as f64 > slowest.0 {
                slowest = (secs * 1e9 / p.len().max(1) as f64, p.len());
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "corpus {dir}: {} pages, {:.1} MB, x{n}: {:.1} MB/s, {:.3} ms/page (one core)",
        pages.len(),
        total_bytes as f64 / n as f64 / 1e6,
        total_bytes as f64 / 1e6 / secs,
        secs * 1000.0 / (pages.len() * n) as f64
    );
    for (i, (lo, _)) in bands.iter().enumerate() {
        if band_pages[i] > 0 {
            println!(
                "  pages >= {:>3} KB: {:>5} runs, {:.1} MB/s",
                lo >> 10,
                band_pages[i],
                band_bytes[i] as f64 / 1e6 / band_secs[i]
            );
        }
    }
    println!(
        "  slowest page per byte: {:.1} ns/byte ({} bytes)",
        slowest.0, slowest.1
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.iter().any(|a| a == "--all");
    let tree = args.iter().any(|a| a == "--tree");
    let rest: Vec<&String> = args
        .iter()
        .filter(|a| *a != "--all" && *a != "--tree")
        .collect();
    let Some(source) = rest.first() else {
        eprintln!("usage: content_speed (PAGE.html | --synthetic) [N] [--all]");
        std::process::exit(2);
    };
    let opts = ContentOptions {
        want_html: all,
        want_text: all,
        want_links: all,
        want_json_ld: all,
        chunk_size: all.then_some(1500),
        // A selector that matches nothing, only to select the html5ever path.
        exclude_tags: if tree {
            vec!["webdata-no-such-element".into()]
        } else {
            Vec::new()
        },
        ..ContentOptions::default()
    };
    if std::path::Path::new(source.as_str()).is_dir() {
        let n: usize = rest.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
        corpus(source, n, &opts);
        return;
    }
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
