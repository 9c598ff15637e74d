//! `webdata crawl URL --out DIR` end to end, as a person at a terminal runs
//! it: standalone on the embedded store (no server, no key) and against a
//! server with `--server` and `WEBDATA_API_KEY`; files, front matter and
//! the progress lines of a non-TTY run; Ctrl-C (SIGINT) keeps what was
//! written and charges only that; `--resume` fetches nothing twice. Plus
//! `map`, `batch` and `brand` in both modes.

mod support;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{binary, unique, Db, Server, ServerOptions, Site};

/// A site of `pages` pages under `/p/N.html` plus `/`, each linking to a
/// few others; every request is counted by path; `delay` slows each page.
async fn site(pages: usize, delay: Duration) -> (Site, Arc<Mutex<HashMap<String, usize>>>) {
    let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let h = hits.clone();
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let h = h.clone();
        async move {
            let path = uri.path().to_string();
            *h.lock().unwrap().entry(path.clone()).or_default() += 1;
            tokio::time::sleep(delay).await;
            let page = |i: usize| -> String {
                let links: String = [i + 1, i * 2 + 1, i * 3 + 2]
                    .iter()
                    .filter(|j| **j < pages)
                    .map(|j| format!("<a href=\"/p/{j}.html\">page {j}</a> "))
                    .collect();
                format!(
                    "<!doctype html><html><head><title>Page {i}</title></head><body><main><article>\
                     <h1>Page {i}</h1><p>This is page {i} of the test site, a paragraph with enough words \
                     to be the content a reader came for.</p><p>{links}</p></article></main></body></html>"
                )
            };
            if path == "/" {
                return axum::response::Html(
                    "<!doctype html><html><head><title>Home</title></head><body><main><h1>Home</h1>\
                     <p>The home page of the test site, with a few words.</p><a href=\"/p/0.html\">start</a></main></body></html>"
                        .to_string(),
                )
                .into_response();
            }
            match path
                .strip_prefix("/p/")
                .and_then(|r| r.strip_suffix(".html"))
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(i) if i < pages => axum::response::Html(page(i)).into_response(),
                _ => axum::http::StatusCode::NOT_FOUND.into_response(),
            }
        }
    });
    (Site::serve(app).await, hits)
}

use axum::response::IntoResponse;

fn md_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out
}

fn record(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join(".webdata-crawl.json")).expect("record"))
        .expect("record json")
}

/// `webdata ARGS` with a private data folder and no browser; stdout, stderr, exit code.
fn webdata(args: &[&str], env: &[(&str, &str)]) -> (String, String, i32) {
    let mut cmd = Command::new(binary("webdata"));
    cmd.args(args)
        .env("WEBDATA_BROWSER", "off")
        .env("WEBDATA_ALLOW_PRIVATE_NETWORKS", "127.0.0.2")
        .env_remove("WEBDATA_URL")
        .env_remove("WEBDATA_API_KEY")
        .env_remove("WEBDATA_DATABASE_URL");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run webdata");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn page_hits(hits: &Mutex<HashMap<String, usize>>) -> HashMap<String, usize> {
    hits.lock()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("/p/") || k.as_str() == "/")
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn crawl_to_a_folder_standalone_then_resume_fetches_nothing() {
    let (site, hits) = site(300, Duration::ZERO).await;
    let tmp = std::env::temp_dir().join(unique("cli-crawl"));
    let data = tmp.join("data");
    let out = tmp.join("out");
    let xdg = data.display().to_string();
    let env = [("XDG_DATA_HOME", xdg.as_str())];
    let out_s = out.display().to_string();
    let (stdout, stderr, code) = webdata(
        &["crawl", &site.url("/"), "--out", &out_s, "--limit", "500"],
        &env,
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // The embedded store went to $XDG_DATA_HOME/webdata, not the working folder.
    assert!(data.join("webdata/webdata.db").exists());
    // Non-TTY progress: plain lines, and the summary.
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("progress: ") && l.contains(" pages/s, 0 failed")),
        "{stderr}"
    );
    assert!(
        stderr.contains("completed: 301 pages written to"),
        "{stderr}"
    );
    let files = md_files(&out);
    assert_eq!(files.len(), 301, "one file per page");
    let rec = record(&out);
    assert_eq!(rec["state"], "completed");
    let crawl_id = rec["crawls"][0].as_str().expect("crawl id").to_string();
    // Paths mirror the site's; front matter carries url, title, status and crawl id.
    let page = std::fs::read_to_string(out.join("p/17.md")).expect("p/17.md");
    let expected = format!(
        "---\nurl: \"{}\"\ntitle: \"Page 17\"\nstatusCode: 200\ncrawlId: \"{crawl_id}\"\n---\n\n",
        site.url("/p/17.html")
    );
    assert!(page.starts_with(&expected), "{page}");
    assert!(page.contains("This is page 17 of the test site"), "{page}");
    assert!(out.join("index.md").exists());
    // Every page was fetched once.
    let first = page_hits(&hits);
    assert_eq!(first.len(), 301);
    assert!(first.values().all(|n| *n == 1), "{first:?}");

    // --resume of a complete crawl fetches nothing.
    let (_, stderr, code) = webdata(&["crawl", "--out", &out_s, "--resume"], &env);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("nothing to fetch"), "{stderr}");
    assert_eq!(page_hits(&hits), first);
    // A new crawl into a folder holding a complete one starts over; an
    // unfinished one must be resumed explicitly.
    let mut r = record(&out);
    r["state"] = "interrupted".into();
    std::fs::write(out.join(".webdata-crawl.json"), r.to_string()).expect("write");
    let (_, stderr, code) = webdata(&["crawl", &site.url("/"), "--out", &out_s], &env);
    assert_ne!(code, 0);
    assert!(stderr.contains("--resume"), "{stderr}");
    let (_, stderr, code) = webdata(
        &[
            "crawl",
            "--out",
            &tmp.join("none").display().to_string(),
            "--resume",
        ],
        &env,
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("nothing to resume"), "{stderr}");

    // map, batch and brand on the embedded store.
    let (stdout, stderr, code) = webdata(&["map", &site.url("/")], &env);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.lines().any(|l| l == site.url("/p/0.html")),
        "{stdout}"
    );
    let list = tmp.join("urls.txt");
    std::fs::write(
        &list,
        format!(
            "# two pages\n{}\n\n{}\n",
            site.url("/p/3.html"),
            site.url("/p/4.html")
        ),
    )
    .expect("write");
    let (stdout, stderr, code) = webdata(&["batch", &list.display().to_string()], &env);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("This is page 3 of") && stdout.contains("This is page 4 of"),
        "{stdout}"
    );
    let (stdout, stderr, code) = webdata(&["batch", &list.display().to_string(), "--json"], &env);
    assert_eq!(code, 0, "{stderr}");
    let docs: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(docs.as_array().map(Vec::len), Some(2));
    let (stdout, stderr, code) = webdata(&["brand", &site.url("/"), "--json"], &env);
    assert_eq!(code, 0, "{stderr}");
    let brand: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert!(brand["data"].is_object(), "{stdout}");
    // Errors say what to do next.
    let (_, stderr, code) = webdata(&["map", "http://127.0.0.1:9/"], &env);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("blocked_url") && stderr.contains("WEBDATA_ALLOW_PRIVATE_NETWORKS"),
        "{stderr}"
    );
    let (_, stderr, code) = webdata(
        &["map", &site.url("/"), "--server", "http://127.0.0.1:9"],
        &env,
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("WEBDATA_API_KEY"), "{stderr}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Against a server: SIGINT mid-crawl cancels it, keeps and charges exactly
/// the pages written; `--resume` finishes the crawl without fetching any
/// page twice.
async fn sigint_keeps_what_was_written_and_resume_finishes(db: Db) {
    let (site, hits) = site(200, Duration::from_millis(40)).await;
    let server = Server::start_with(
        ServerOptions::new(db)
            .credits(1000)
            .env("WEBDATA_WORKER_CONCURRENCY", "4")
            .env("WEBDATA_BROWSER", "off"),
    )
    .await;
    let tmp = std::env::temp_dir().join(unique("cli-sigint"));
    let out = tmp.join("out");
    let out_s = out.display().to_string();
    let before = server.credits().await;
    let child = Command::new(binary("webdata"))
        .args(["crawl", &site.url("/"), "--out", &out_s, "--limit", "150"])
        .env("WEBDATA_URL", &server.base)
        .env("WEBDATA_API_KEY", &server.key)
        .env_remove("WEBDATA_DATABASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(60);
    while md_files(&out).len() < 20 {
        assert!(Instant::now() < deadline, "no pages were written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let ended = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .expect("join")
        .expect("wait");
    let stderr = String::from_utf8_lossy(&ended.stderr).into_owned();
    assert_eq!(ended.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("Ctrl-C: cancelling the crawl"), "{stderr}");
    assert!(
        stderr.contains("continue with `webdata crawl --out"),
        "{stderr}"
    );
    let kept = md_files(&out).len();
    let rec = record(&out);
    assert_eq!(rec["state"], "interrupted");
    assert_eq!(rec["written"].as_u64(), Some(kept as u64));
    assert!(kept < 150, "the crawl was cut short: {kept}");
    let crawl_id = rec["crawls"][0].as_str().expect("id").to_string();
    let status = server
        .get_as(&server.key, &format!("/v1/crawl/{crawl_id}"))
        .await;
    assert_eq!(status.json["status"], "cancelled");
    // Charged exactly the pages written, and no page starts after the cancel settles.
    assert_eq!(before - server.credits().await, kept as i64);
    assert_eq!(status.json["completed"].as_u64(), Some(kept as u64));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after_cancel = page_hits(&hits);
    let written_first: Vec<String> = md_files(&out)
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).expect("read");
            let url = text
                .lines()
                .nth(1)
                .and_then(|l| l.strip_prefix("url: "))
                .expect("url line");
            let url: String = serde_json::from_str(url).expect("quoted url");
            url::Url::parse(&url).expect("url").path().to_string()
        })
        .collect();
    assert_eq!(written_first.len(), kept);

    // --resume: a new crawl continuing the cancelled one (`resumeFrom`).
    let (_, stderr, code) = webdata(
        &["crawl", "--out", &out_s, "--resume"],
        &[
            ("WEBDATA_URL", &server.base),
            ("WEBDATA_API_KEY", &server.key),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("completed: 150 pages written"), "{stderr}");
    assert_eq!(md_files(&out).len(), 150);
    let rec = record(&out);
    assert_eq!(rec["crawls"].as_array().map(Vec::len), Some(2));
    assert_eq!(before - server.credits().await, 150);
    // Nothing written before was fetched again. Only pages that were in
    // flight at the cancel (fetched, not kept, not charged) are fetched by
    // the resumed crawl.
    let hits_now = page_hits(&hits);
    for path in &written_first {
        assert_eq!(
            hits_now.get(path),
            Some(&1),
            "{path} fetched again by the resumed crawl"
        );
    }
    let twice: Vec<&String> = hits_now
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(p, _)| p)
        .collect();
    // In flight at the cancel: up to 4 pages fetching (the concurrency)
    // and up to 8 scraped and waiting for their commit (twice the
    // concurrency), all dropped uncharged by the cancel.
    assert!(twice.len() <= 12, "{twice:?}");
    assert!(
        twice.iter().all(|p| after_cancel.get(*p) == Some(&1)),
        "{twice:?}"
    );
    assert!(hits_now.values().all(|n| *n <= 2), "{hits_now:?}");
    // Each file names the crawl that wrote it.
    let second = rec["crawls"][1].as_str().expect("id");
    let by_second = md_files(&out)
        .iter()
        .filter(|p| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .contains(&format!("crawlId: \"{second}\""))
        })
        .count();
    assert_eq!(by_second, 150 - kept);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `resumeFrom` refuses what cannot be resumed, by name.
async fn resume_from_is_checked(db: Db) {
    let (site, _) = site(30, Duration::from_millis(30)).await;
    let server = Server::start_with(ServerOptions::new(db).env("WEBDATA_BROWSER", "off")).await;
    let start = server
        .post(
            "/v1/crawl",
            serde_json::json!({"url": site.url("/"), "limit": 30}),
        )
        .await;
    assert_eq!(start.status, 202, "{:?}", start.json);
    let id = start.json["id"].as_str().expect("id").to_string();
    let running = server
        .post(
            "/v1/crawl",
            serde_json::json!({"url": site.url("/"), "resumeFrom": id}),
        )
        .await;
    running.assert_error(400, "invalid_request");
    assert!(
        running.message().contains("resumeFrom"),
        "{}",
        running.message()
    );
    let missing = server
        .post(
            "/v1/crawl",
            serde_json::json!({"url": site.url("/"), "resumeFrom": "crawl_nope"}),
        )
        .await;
    missing.assert_error(404, "not_found");
    assert!(
        missing.message().starts_with("resumeFrom:"),
        "{}",
        missing.message()
    );
    let cancel = server
        .http
        .delete(server.url(&format!("/v1/crawl/{id}")))
        .bearer_auth(&server.key)
        .send()
        .await
        .expect("cancel");
    assert_eq!(cancel.status(), 200);
    let other_url = server
        .post(
            "/v1/crawl",
            serde_json::json!({"url": site.url("/p/1.html"), "resumeFrom": id}),
        )
        .await;
    other_url.assert_error(400, "invalid_request");
    assert!(
        other_url.message().contains("same url"),
        "{}",
        other_url.message()
    );
    let ok = server
        .post(
            "/v1/crawl",
            serde_json::json!({"url": site.url("/"), "resumeFrom": id, "limit": 30}),
        )
        .await;
    assert_eq!(ok.status, 202, "{:?}", ok.json);
}

on_both!(
    sigint_keeps_what_was_written_and_resume_finishes,
    resume_from_is_checked
);

/// `webdata watch URL --every 1s --count 3` on the embedded store: the
/// first check is `new`, the page then changes and the second check prints
/// `changed` with the unified diff, the third is `same`; a second watch with
/// the same tag continues the history, another tag starts its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watch_prints_each_change_with_its_diff() {
    use std::io::{BufRead, BufReader};
    let page: Arc<Mutex<String>> = Arc::new(Mutex::new(String::new()));
    let article = |extra: &str| {
        format!(
            "<!doctype html><html><head><title>Pricing</title></head><body><main><article><h1>Pricing</h1>\
             <p>Our plans are simple and every plan includes the full product with support by email.</p>\
             {extra}</article></main></body></html>"
        )
    };
    *page.lock().unwrap() = article("");
    let p = page.clone();
    let site = Site::serve(axum::Router::new().fallback(move || {
        let p = p.clone();
        async move { axum::response::Html(p.lock().unwrap().clone()) }
    }))
    .await;
    let dir = std::env::temp_dir().join(unique("webdata-watch"));
    std::fs::create_dir_all(&dir).expect("dir");
    let db = format!("sqlite://{}/w.db", dir.display());
    let url = site.url("/pricing");
    let mut child = Command::new(binary("webdata"))
        .args([
            "watch",
            &url,
            "--every",
            "1s",
            "--count",
            "3",
            "--database-url",
            &db,
        ])
        .env("WEBDATA_BROWSER", "off")
        .env("WEBDATA_ALLOW_PRIVATE_NETWORKS", "127.0.0.2")
        .env_remove("WEBDATA_URL")
        .env_remove("WEBDATA_API_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn watch");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let next = |rx: &std::sync::mpsc::Receiver<String>| {
        rx.recv_timeout(Duration::from_secs(30))
            .expect("a line from watch")
    };
    let first = next(&rx);
    assert!(first.contains(&format!("new     {url}")), "{first}");
    *page.lock().unwrap() =
        article("<p>Starting today every plan costs ten percent more than before.</p>");
    let second = next(&rx);
    assert!(
        second.contains(&format!("changed {url} since ")),
        "{second}"
    );
    let mut diff = Vec::new();
    let third = loop {
        let l = next(&rx);
        if l.contains(&url) {
            break l;
        }
        diff.push(l);
    };
    assert_eq!(
        diff.first().map(String::as_str),
        Some("--- previous"),
        "{diff:?}"
    );
    assert!(
        diff.iter()
            .any(|l| l == "+Starting today every plan costs ten percent more than before."),
        "{diff:?}"
    );
    assert!(third.contains(&format!("same    {url}")), "{third}");
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");

    // The same tag continues; another tag starts anew. --json prints the object.
    let (out, err, code) = webdata(
        &[
            "watch",
            &url,
            "--every",
            "1s",
            "--count",
            "1",
            "--json",
            "--database-url",
            &db,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let ct: serde_json::Value = serde_json::from_str(out.trim()).expect("json line");
    assert_eq!(ct["changeStatus"], "same", "{out}");
    let (out, err, code) = webdata(
        &[
            "watch",
            &url,
            "--count",
            "1",
            "--tag",
            "other",
            "--json",
            "--database-url",
            &db,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"changeStatus\":\"new\""), "{out}");
    let (_, err, code) = webdata(
        &["watch", &url, "--every", "10ms", "--database-url", &db],
        &[],
    );
    assert_ne!(code, 0);
    assert!(err.contains("--every"), "{err}");
}

/// `webdata llmstxt URL` on the embedded store: prints llms.txt (parsed
/// here: H1, summary, `- [title](url)` lines), `--full` prints
/// llms-full.txt, `--out DIR` writes both files; a bad URL is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn llmstxt_prints_or_writes_a_sites_files() {
    let (site, _) = site(5, Duration::ZERO).await;
    let dir = std::env::temp_dir().join(unique("webdata-llmstxt"));
    std::fs::create_dir_all(&dir).expect("dir");
    let db = format!("sqlite://{}/w.db", dir.display());
    let start = site.url("/");
    let (out, err, code) = webdata(
        &["llmstxt", &start, "--limit", "4", "--database-url", &db],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first().copied(), Some("# Home"), "{out}");
    assert!(lines.iter().any(|l| l.starts_with("> ")), "{out}");
    let links: Vec<&&str> = lines.iter().filter(|l| l.starts_with("- [")).collect();
    assert_eq!(links.len(), 4, "one line per page crawled: {out}");
    assert!(
        links
            .iter()
            .any(|l| l.starts_with(&format!("- [Page 0]({})", site.url("/p/0.html")))),
        "{out}"
    );
    assert!(err.contains("4 pages, 4 credits"), "{err}");

    let (full, err, code) = webdata(
        &[
            "llmstxt",
            &start,
            "--limit",
            "2",
            "--full",
            "--database-url",
            &db,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        full.contains(&format!("Source: {}", site.url("/p/0.html"))),
        "{full}"
    );
    assert!(full.contains("This is page 0 of the test site"), "{full}");

    let out_dir = dir.join("files");
    let (out, err, code) = webdata(
        &[
            "llmstxt",
            &start,
            "--limit",
            "2",
            "--out",
            out_dir.to_str().expect("utf-8 path"),
            "--database-url",
            &db,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty(), "{out}");
    let txt = std::fs::read_to_string(out_dir.join("llms.txt")).expect("llms.txt");
    let full_txt = std::fs::read_to_string(out_dir.join("llms-full.txt")).expect("llms-full.txt");
    assert!(txt.starts_with("# Home\n"), "{txt}");
    assert!(full_txt.contains("Source: "), "{full_txt}");

    let (_, err, code) = webdata(
        &["llmstxt", "ftp://example.com/", "--database-url", &db],
        &[],
    );
    assert_ne!(code, 0);
    assert!(err.contains("url"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `webdata watch --prompt`: the extract model (an OpenAI-compatible
/// stand-in on loopback: the one third party we cannot run here) reads the
/// page's price; a changed check prints the field that changed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watch_with_a_prompt_prints_the_fields_that_changed() {
    let price = Arc::new(Mutex::new(29u32));
    let p = price.clone();
    let site = Site::serve(axum::Router::new().fallback(move || {
        let p = p.clone();
        async move {
            let n = *p.lock().unwrap();
            axum::response::Html(format!(
                "<!doctype html><html><head><title>Pricing</title></head><body><main><article>\
                 <h1>Pricing</h1><p>Our plans are simple and every plan includes the full product with support by email.</p>\
                 <p>The Pro plan costs {n} dollars a month for teams of any size, billed yearly.</p>\
                 </article></main></body></html>"
            ))
        }
    }))
    .await;
    let calls = Arc::new(Mutex::new(0usize));
    let c = calls.clone();
    let llm = Site::serve(axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<serde_json::Value>| {
            let c = c.clone();
            async move {
                *c.lock().unwrap() += 1;
                let sent = body["messages"].to_string();
                let n: u32 = sent
                    .split("costs ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(0);
                axum::Json(serde_json::json!({
                    "choices": [{"index": 0, "message": {"role": "assistant",
                        "content": format!("{{\"price\": {n}}}")}}]
                }))
            }
        }),
    ))
    .await;
    let dir = std::env::temp_dir().join(unique("webdata-watch-fields"));
    std::fs::create_dir_all(&dir).expect("dir");
    let db = format!("sqlite://{}/w.db", dir.display());
    let url = site.url("/pricing");
    let base = llm.url("/v1");
    let env = [
        ("WEBDATA_LLM_BASE_URL", base.as_str()),
        ("WEBDATA_LLM_MODEL", "test-model"),
    ];
    let args = [
        "watch",
        url.as_str(),
        "--count",
        "1",
        "--prompt",
        "The Pro plan's monthly price.",
        "--schema",
        r#"{"type": "object", "properties": {"price": {"type": "number"}}}"#,
        "--database-url",
        db.as_str(),
    ];
    let (out, err, code) = webdata(&args, &env);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("new     {url}")), "{out}");
    *price.lock().unwrap() = 39;
    let (out, err, code) = webdata(&args, &env);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("changed {url}")), "{out}");
    assert!(out.contains("  price: 29 → 39"), "{out}");
    assert!(out.contains("+The Pro plan costs 39"), "{out}");
    assert_eq!(*calls.lock().unwrap(), 2, "one reading per new text");
    let (_, err, code) = webdata(
        &[
            "watch",
            &url,
            "--count",
            "1",
            "--schema",
            "{not json",
            "--database-url",
            &db,
        ],
        &env,
    );
    assert_ne!(code, 0);
    assert!(err.contains("--schema"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// An address typed without a scheme is read as `https://` by every command
/// that takes a page (no request leaves: 127.0.0.9 is refused by the
/// network guard, whose message shows the URL the command built).
#[test]
fn a_url_without_a_scheme_is_read_as_https() {
    for cmd in ["scrape", "map", "llmstxt", "crawl"] {
        let dir =
            std::env::temp_dir().join(format!("webdata-cli-scheme-{cmd}-{}", std::process::id()));
        let out = dir.to_string_lossy().to_string();
        let mut args = vec![cmd, "127.0.0.9/docs/intro"];
        if cmd == "crawl" {
            args.extend(["--out", out.as_str()]);
        }
        let (stdout, stderr, code) = webdata(&args, &[]);
        assert_ne!(code, 0, "{cmd}: {stdout}");
        assert!(
            stderr.contains("https://127.0.0.9/docs/intro") && stderr.contains("blocked_url"),
            "{cmd}: {stderr}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    let (_, stderr, code) = webdata(&["scrape", " "], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is empty"), "{stderr}");
}
