//! llms.txt through the real binary, on SQLite and PostgreSQL: a small docs
//! site crawled into llms.txt (parsed here as the format: H1, blockquote,
//! `##` sections of `- [title](url): description` lines, every page once,
//! grouped by first path segment) and llms-full.txt (every page's
//! markdown); status progression, billing per page, cancel, refusals that
//! charge nothing, and ids kept apart from crawls, batches and other
//! organizations.

#[macro_use]
mod support;

use axum::extract::Path;
use axum::response::Html;
use axum::routing::get;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::{Db, Resp, Server, ServerOptions, Site};

/// The site's pages: path, `<title>`, meta description, body paragraph.
const PAGES: [(&str, &str, Option<&str>, &str); 6] = [
    (
        "/",
        "Acme Docs",
        Some("Everything about Acme, the tool."),
        "Welcome to the documentation of Acme, a small tool that does one thing well for its many users.",
    ),
    (
        "/guide/intro",
        "Introduction",
        Some("Start here to learn Acme."),
        "The introduction walks through what Acme is for and how its parts fit together in practice.",
    ),
    (
        "/guide/install",
        "Install",
        None,
        "<strong>Install</strong> Acme with the <a href=\"/guide/intro\">package manager</a> in one command.",
    ),
    (
        "/api/reference",
        "API reference",
        None,
        "Every endpoint of Acme is listed here, with its parameters and the answers it gives back.",
    ),
    (
        "/blog/post",
        "Release notes",
        Some("What changed in Acme 2.0."),
        "Acme 2.0 brings faster builds, a new configuration format and many small fixes to old bugs.",
    ),
    (
        "/about",
        "Weird ] [title",
        Some("First line&#10;second line"),
        "The people behind Acme are a small team of volunteers who maintain it in their spare time.",
    ),
];

fn html(title: &str, description: Option<&str>, paragraph: &str) -> String {
    let meta = description
        .map(|d| format!("<meta name=\"description\" content=\"{d}\">"))
        .unwrap_or_default();
    let nav: String = PAGES
        .iter()
        .map(|(p, ..)| format!("<a href=\"{p}\">{p}</a> "))
        .collect();
    let title = title.replace('<', "&lt;");
    format!(
        "<!doctype html><html lang=\"en\"><head><title>{title}</title>{meta}</head><body>\
         <nav>{nav}</nav><main><article><h1>{title}</h1><p>{paragraph}</p>\
         <p>A second paragraph adds a few more words so that the page reads as real content.</p>\
         </article></main></body></html>"
    )
}

/// The docs site of [`PAGES`]; `/blog/post` answers after `slow_ms`.
async fn docs_site(slow_ms: u64) -> Site {
    let mut router =
        axum::Router::new().route("/robots.txt", get(|| async { "User-agent: *\nAllow: /\n" }));
    for (path, title, desc, para) in PAGES {
        let body = html(title, desc, para);
        let slow = if path == "/blog/post" { slow_ms } else { 0 };
        router = router.route(
            path,
            get(move || {
                let body = body.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(slow)).await;
                    Html(body)
                }
            }),
        );
    }
    Site::serve(router).await
}

/// A chain of slow pages: /slow/{n} links to /slow/{n+1}.
async fn slow_site() -> Site {
    Site::serve(axum::Router::new().route(
        "/slow/{n}",
        get(|Path(n): Path<u32>| async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Html(format!(
                "<html><head><title>Slow {n}</title></head><body><main><p>Slow page {n} of the chain, \
                 with enough words in it to count as a page.</p><a href=\"/slow/{}\">next</a></main></body></html>",
                n + 1
            ))
        }),
    ))
    .await
}

async fn start(s: &Server, body: serde_json::Value) -> String {
    let r = s.post("/v1/llmstxt", body).await;
    assert_eq!(r.status, 202, "{}", r.text);
    assert_eq!(r.json["success"], true);
    assert_eq!(r.json["status"], "queued", "{}", r.text);
    assert_eq!(r.json["credits_used"], 0);
    assert!(r.json["data"].is_null(), "{}", r.text);
    r.assert_request_id();
    let id = r.json["id"].as_str().expect("id").to_string();
    assert!(id.starts_with("llmstxt_"), "{id}");
    id
}

/// Polls until the job ends; returns the last answer and every status seen.
async fn wait_done(s: &Server, id: &str) -> (Resp, Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen: Vec<String> = Vec::new();
    loop {
        let r = s.get_as(&s.key, &format!("/v1/llmstxt/{id}")).await;
        assert_eq!(r.status, 200, "{}", r.text);
        let st = r.json["status"].as_str().unwrap_or("").to_string();
        if seen.last() != Some(&st) {
            seen.push(st.clone());
        }
        if ["completed", "failed", "cancelled"].contains(&st.as_str()) {
            return (r, seen);
        }
        assert!(
            r.json["data"].is_null(),
            "no data before completed: {}",
            r.text
        );
        assert!(
            Instant::now() < deadline,
            "the job did not finish: {}\n{}",
            r.text,
            s.logs()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One `- [name](url): description` line.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    name: String,
    url: String,
    description: Option<String>,
}

/// llms.txt as read by a strict reader of the format.
#[derive(Debug)]
struct LlmsTxt {
    title: String,
    summary: String,
    sections: Vec<(String, Vec<Entry>)>,
}

/// Parses llms.txt: `# title`, `> summary`, then `## section` headings each
/// followed by one or more entry lines and nothing else (blank lines aside).
fn parse(txt: &str) -> Result<LlmsTxt, String> {
    let mut lines = txt.lines().filter(|l| !l.trim().is_empty());
    let title = lines
        .next()
        .and_then(|l| l.strip_prefix("# "))
        .ok_or("the first line is not an H1")?
        .to_string();
    let summary = lines
        .next()
        .and_then(|l| l.strip_prefix("> "))
        .ok_or("the second line is not a blockquote")?
        .to_string();
    let mut sections: Vec<(String, Vec<Entry>)> = Vec::new();
    for line in lines {
        if let Some(h) = line.strip_prefix("## ") {
            if sections.last().is_some_and(|(_, e)| e.is_empty()) {
                return Err(format!("an empty section before `{line}`"));
            }
            sections.push((h.to_string(), Vec::new()));
        } else if line.starts_with("- [") {
            let e = entry(line)?;
            sections
                .last_mut()
                .ok_or(format!("an entry before any section: `{line}`"))?
                .1
                .push(e);
        } else {
            return Err(format!("not a section or an entry: `{line}`"));
        }
    }
    if sections.last().is_some_and(|(_, e)| e.is_empty()) {
        return Err("the last section is empty".into());
    }
    Ok(LlmsTxt {
        title,
        summary,
        sections,
    })
}

fn entry(line: &str) -> Result<Entry, String> {
    let mut chars = line["- [".len()..].chars();
    let mut name = String::new();
    loop {
        match chars.next() {
            Some('\\') => name.push(chars.next().ok_or("a dangling escape")?),
            Some(']') => break,
            Some('[') => return Err(format!("an unescaped `[` in `{line}`")),
            Some(c) => name.push(c),
            None => return Err(format!("the link text never ends: `{line}`")),
        }
    }
    let rest: String = chars.collect();
    let rest = rest
        .strip_prefix('(')
        .ok_or(format!("no `(url)` in `{line}`"))?;
    let close = rest
        .find(')')
        .ok_or(format!("the URL never ends: `{line}`"))?;
    let url = rest[..close].to_string();
    if url.is_empty() || url.contains(char::is_whitespace) || url.contains('(') {
        return Err(format!("a bad URL in `{line}`"));
    }
    let tail = &rest[close + 1..];
    let description = match tail {
        "" => None,
        t => Some(
            t.strip_prefix(": ")
                .filter(|d| !d.trim().is_empty())
                .ok_or(format!("not `: description` after the link: `{line}`"))?
                .to_string(),
        ),
    };
    if name.trim().is_empty() {
        return Err(format!("an empty name: `{line}`"));
    }
    Ok(Entry {
        name,
        url,
        description,
    })
}

#[test]
fn the_parser_refuses_what_breaks_the_format() {
    assert!(parse("# T\n> S\n## A\n- [x](http://a/)\n").is_ok());
    for bad in [
        "> S\n# T\n",
        "# T\n## A\n- [x](http://a/)\n",
        "# T\n> S\n- [x](http://a/)\n",
        "# T\n> S\n## A\n## B\n- [x](http://a/)\n",
        "# T\n> S\n## A\n- [x] y](http://a/)\n",
        "# T\n> S\n## A\n- [x](http://a/) trailing\n",
        "# T\n> S\n## A\n- [x](http://a/)\nfree text\n",
        "# T\n> S\n## A\n",
    ] {
        assert!(parse(bad).is_err(), "{bad:?}");
    }
    let p = parse("# T\n> S\n## A\n- [a \\] b](http://a/x): d: e\n").expect("parse");
    assert_eq!(p.sections[0].1[0].name, "a ] b");
    assert_eq!(p.sections[0].1[0].description.as_deref(), Some("d: e"));
}

/// A second organization's key.
async fn other_key(s: &Server) -> String {
    let org = s
        .admin(
            reqwest::Method::POST,
            "/admin/v1/organizations",
            Some(json!({"name": "other", "credits": 5})),
        )
        .await;
    let org = org.json["data"]["id"].as_str().expect("org").to_string();
    let k = s
        .admin(
            reqwest::Method::POST,
            &format!("/admin/v1/organizations/{org}/keys"),
            Some(json!({"name": "k"})),
        )
        .await;
    k.json["data"]["secret"]
        .as_str()
        .expect("secret")
        .to_string()
}

async fn delete(s: &Server, key: &str, path: &str) -> Resp {
    Resp::from(
        s.http
            .delete(s.url(path))
            .bearer_auth(key)
            .send()
            .await
            .expect("delete"),
    )
    .await
}

on_both!(
    llms_txt_lists_every_page_once_by_section_and_full_text_holds_every_page,
    cancel_stops_the_job_and_keeps_its_pages_charged,
    bad_requests_are_refused_naming_the_field_and_charge_nothing,
);

async fn llms_txt_lists_every_page_once_by_section_and_full_text_holds_every_page(db: Db) {
    let s = Server::start_with(ServerOptions::new(db).env("WEBDATA_BROWSER", "off")).await;
    let site = docs_site(600).await;
    let id = start(&s, json!({"url": site.url("/"), "limit": 50})).await;
    let (done, seen) = wait_done(&s, &id).await;
    assert_eq!(done.json["status"], "completed", "{}", done.text);
    // Statuses only move forward: queued, scraping, completed.
    let rank = |st: &str| {
        ["queued", "scraping", "completed"]
            .iter()
            .position(|x| *x == st)
    };
    let ranks: Vec<usize> = seen
        .iter()
        .map(|st| rank(st).unwrap_or_else(|| panic!("unexpected status {st} in {seen:?}")))
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    assert!(seen.iter().any(|s| s == "scraping"), "{seen:?}");

    // Billed as the crawl: 1 credit per page.
    let n = PAGES.len() as i64;
    assert_eq!(done.json["completed"], n, "{}", done.text);
    assert_eq!(done.json["credits_used"], n, "{}", done.text);
    assert_eq!(s.credits().await, 1000 - n);
    assert_eq!(done.json["url"], site.url("/"));
    done.assert_request_id();

    let txt = done.json["data"]["llmsTxt"].as_str().expect("llmsTxt");
    let parsed = parse(txt).unwrap_or_else(|e| panic!("{e}:\n{txt}"));
    assert_eq!(parsed.title, "Acme Docs", "{txt}");
    assert_eq!(parsed.summary, "Everything about Acme, the tool.", "{txt}");
    // Every page exactly once, absolute and on the site.
    let mut urls: Vec<String> = parsed
        .sections
        .iter()
        .flat_map(|(_, e)| e.iter().map(|e| e.url.clone()))
        .collect();
    assert!(
        urls.iter()
            .all(|u| u.starts_with(&format!("{}/", site.base))),
        "{txt}"
    );
    urls.sort();
    let mut want: Vec<String> = PAGES.iter().map(|(p, ..)| site.url(p)).collect();
    want.sort();
    assert_eq!(urls, want, "{txt}");
    // Sections: root pages first, then by first path segment.
    let grouped: Vec<(String, Vec<String>)> = parsed
        .sections
        .iter()
        .map(|(name, e)| {
            (
                name.clone(),
                e.iter()
                    .map(|e| e.url.trim_start_matches(&site.base).to_string())
                    .collect(),
            )
        })
        .collect();
    let expect = |v: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
        v.iter()
            .map(|(n, u)| (n.to_string(), u.iter().map(|u| u.to_string()).collect()))
            .collect()
    };
    assert_eq!(
        grouped,
        expect(&[
            ("Pages", &["/", "/about"]),
            ("Api", &["/api/reference"]),
            ("Blog", &["/blog/post"]),
            ("Guide", &["/guide/install", "/guide/intro"]),
        ]),
        "{txt}"
    );
    // Names and descriptions: the page's own, else its first paragraph as
    // plain text; a `]` in a title and a newline in a description do not
    // break the line.
    let entries: BTreeMap<String, Entry> = parsed
        .sections
        .iter()
        .flat_map(|(_, e)| e.iter().cloned())
        .map(|e| (e.url.trim_start_matches(&site.base).to_string(), e))
        .collect();
    let check = |path: &str, name: &str, desc: &str| {
        let e = &entries[path];
        assert_eq!(e.name, name, "{txt}");
        assert_eq!(e.description.as_deref(), Some(desc), "{txt}");
    };
    check("/", "Acme Docs", "Everything about Acme, the tool.");
    check("/guide/intro", "Introduction", "Start here to learn Acme.");
    check(
        "/guide/install",
        "Install",
        "Install Acme with the package manager in one command.",
    );
    check(
        "/api/reference",
        "API reference",
        "Every endpoint of Acme is listed here, with its parameters and the answers it gives back.",
    );
    check("/blog/post", "Release notes", "What changed in Acme 2.0.");
    check("/about", "Weird ] [title", "First line second line");
    assert!(
        txt.contains("- [Weird \\] \\[title]("),
        "brackets are escaped: {txt}"
    );

    // llms-full.txt: every page's markdown under its title and URL, in the
    // same order.
    let full = done.json["data"]["llmsFullTxt"]
        .as_str()
        .expect("llmsFullTxt");
    let mut at = 0;
    for (_, list) in &parsed.sections {
        for e in list {
            let head = format!("Source: {}\n", e.url);
            let i = full[at..]
                .find(&head)
                .unwrap_or_else(|| panic!("{head} after {at} in\n{full}"));
            at += i + head.len();
        }
    }
    for (path, title, _, _) in PAGES {
        assert!(
            full.contains(&format!("# {title}\n\nSource: {}\n", site.url(path))),
            "{path}:\n{full}"
        );
    }
    for sentence in [
        "Welcome to the documentation of Acme",
        "walks through what Acme is for",
        "in one command",
        "Every endpoint of Acme is listed here",
        "Acme 2.0 brings faster builds",
        "a small team of volunteers",
    ] {
        assert!(full.contains(sentence), "{sentence}:\n{full}");
    }

    // The same answer again (built from the stored pages), at no cost.
    let again = s.get_as(&s.key, &format!("/v1/llmstxt/{id}")).await;
    assert_eq!(again.json["data"], done.json["data"]);
    assert_eq!(s.credits().await, 1000 - n);
    // The job is a crawl underneath: its pages are readable there too.
    let c = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
    assert_eq!(c.status, 200, "{}", c.text);
    assert_eq!(c.json["completed"], n);

    // Ids are kept apart: another organization's job, a crawl id, a batch
    // id and an unknown id are all not_found here.
    let k2 = other_key(&s).await;
    s.get_as(&k2, &format!("/v1/llmstxt/{id}"))
        .await
        .assert_error(404, "not_found");
    delete(&s, &k2, &format!("/v1/llmstxt/{id}"))
        .await
        .assert_error(404, "not_found");
    let crawl = s
        .post(
            "/v1/crawl",
            json!({"url": site.url("/guide/intro"), "limit": 1}),
        )
        .await;
    assert_eq!(crawl.status, 202, "{}", crawl.text);
    let cid = crawl.json["id"].as_str().expect("crawl id").to_string();
    s.get_as(&s.key, &format!("/v1/llmstxt/{cid}"))
        .await
        .assert_error(404, "not_found");
    delete(&s, &s.key, &format!("/v1/llmstxt/{cid}"))
        .await
        .assert_error(404, "not_found");
    let batch = s
        .post(
            "/v1/batch/scrape",
            json!({"urls": [site.url("/guide/intro")]}),
        )
        .await;
    assert_eq!(batch.status, 202, "{}", batch.text);
    let bid = batch.json["id"].as_str().expect("batch id").to_string();
    s.get_as(&s.key, &format!("/v1/llmstxt/{bid}"))
        .await
        .assert_error(404, "not_found");
    s.get_as(&s.key, "/v1/llmstxt/llmstxt_nope")
        .await
        .assert_error(404, "not_found");
    // The ledger names the operation it is billed as.
    let ledger = s
        .admin(
            reqwest::Method::GET,
            &format!("/admin/v1/organizations/{}/ledger", s.org_id().await),
            None,
        )
        .await;
    assert!(ledger.text.contains(&id), "{}", ledger.text);
}

async fn cancel_stops_the_job_and_keeps_its_pages_charged(db: Db) {
    let s = Server::start_with(
        ServerOptions::new(db)
            .env("WEBDATA_WORKER_CONCURRENCY", "1")
            .env("WEBDATA_BROWSER", "off"),
    )
    .await;
    let site = slow_site().await;
    let id = start(
        &s,
        json!({"url": site.url("/slow/1"), "limit": 40, "sitemap": "skip"}),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = s.get_as(&s.key, &format!("/v1/llmstxt/{id}")).await;
        assert_eq!(r.status, 200, "{}", r.text);
        if r.json["completed"].as_i64().unwrap_or(0) >= 2 {
            assert_eq!(r.json["status"], "scraping", "{}", r.text);
            break;
        }
        assert!(Instant::now() < deadline, "{}", r.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let c = delete(&s, &s.key, &format!("/v1/llmstxt/{id}")).await;
    assert_eq!(c.status, 200, "{}", c.text);
    assert_eq!(c.json["status"], "cancelled", "{}", c.text);
    assert!(c.json["data"].is_null(), "{}", c.text);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let r = s.get_as(&s.key, &format!("/v1/llmstxt/{id}")).await;
    assert_eq!(r.json["status"], "cancelled", "{}", r.text);
    assert!(r.json["data"].is_null(), "no files for a cancelled job");
    let kept = r.json["completed"].as_i64().expect("completed");
    assert!((2..=6).contains(&kept), "{kept}");
    assert_eq!(r.json["credits_used"], kept, "scraped pages are charged");
    tokio::time::sleep(Duration::from_millis(600)).await;
    let later = s.get_as(&s.key, &format!("/v1/llmstxt/{id}")).await;
    assert_eq!(later.json["completed"], kept, "{}", later.text);
    assert_eq!(s.credits().await, 1000 - kept);
    // A second cancel changes nothing.
    let again = delete(&s, &s.key, &format!("/v1/llmstxt/{id}")).await;
    assert_eq!(again.status, 200, "{}", again.text);
    assert_eq!(again.json["status"], "cancelled");
}

async fn bad_requests_are_refused_naming_the_field_and_charge_nothing(db: Db) {
    let s = Server::start(db).await;
    let site = docs_site(0).await;
    let u = site.url("/");
    for (body, field) in [
        (json!({}), "url"),
        (json!({"limit": 5}), "url"),
        (json!({"url": u, "limit": 0}), "limit"),
        (json!({"url": u, "limit": 5001}), "limit"),
        (json!({"url": u, "limit": "ten"}), "limit"),
        (json!({"url": u, "maxUrls": 10}), "maxUrls"),
        (json!({"url": "ftp://example.com/"}), "url"),
        (json!({"url": "not a url"}), "url"),
        (json!({"url": u, "maxDepth": 21}), "maxDepth"),
        (json!({"url": u, "sitemap": "sometimes"}), "sitemap"),
        (
            json!({"url": u, "includePaths": ["/a$b"]}),
            "includePaths[0]",
        ),
    ] {
        let r = s.post("/v1/llmstxt", body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(
            r.message().contains(field),
            "{body}: the message names `{field}`: {}",
            r.message()
        );
    }
    // Not JSON at all.
    let r = Resp::from(
        s.http
            .post(s.url("/v1/llmstxt"))
            .bearer_auth(&s.key)
            .body("url=x")
            .send()
            .await
            .expect("send"),
    )
    .await;
    r.assert_error(415, "invalid_request");
    // A loopback address the network guard refuses.
    let r = s
        .post("/v1/llmstxt", json!({"url": "http://127.0.0.1:9/"}))
        .await;
    assert!(
        (400..500).contains(&r.status) && r.json["credits_used"] == 0,
        "{}",
        r.text
    );
    assert_eq!(s.credits().await, 1000, "refusals charge nothing");
    // Nothing was started.
    let crawls = s
        .store()
        .await
        .crawls_of(&s.org_id().await, i64::MAX, 10)
        .await
        .expect("crawls");
    assert!(crawls.is_empty(), "{crawls:?}");
    // With no credits, 402 before anything starts.
    s.set_org(json!({"credits": 0})).await;
    s.post("/v1/llmstxt", json!({"url": u}))
        .await
        .assert_error(402, "insufficient_credits");
}
