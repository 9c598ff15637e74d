//! `webdata crawl URL --out DIR`: a site to a folder of markdown, one file
//! per page at a path mirroring the site's, with front matter; a progress
//! bar on a terminal and plain lines elsewhere; Ctrl-C cancels the crawl
//! and keeps what was written; `--resume` continues where it stopped
//! (the crawl's `resumeFrom`: nothing already scraped is fetched again).
//!
//! Pages arrive over the crawl's event stream (`/v1/crawl/{id}/events`),
//! one request for the whole crawl, so polling never meets a rate limit.

use super::commands::explain;
use super::connect::{ConnectArgs, Connection};
use crate::client::ApiClient;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `webdata crawl`.
#[derive(Debug, clap::Args)]
pub struct CrawlArgs {
    /// The start URL (`example.com/docs` means https://example.com/docs).
    #[arg(value_parser = super::page_url)]
    pub url: Option<String>,
    /// The folder the pages are written to (default: the site's host name).
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// Continue the interrupted crawl recorded in --out (its options are kept).
    #[arg(long)]
    pub resume: bool,
    /// Most pages written (the API's default is 100).
    #[arg(long)]
    pub limit: Option<i64>,
    /// Link hops from the start URL (0 = only the start URL).
    #[arg(long)]
    pub max_depth: Option<i64>,
    /// Only paths matching these globs (repeat or comma-separate), e.g. `/docs/**`.
    #[arg(long = "include", value_delimiter = ',')]
    pub include: Vec<String>,
    /// Never paths matching these globs (repeat or comma-separate).
    #[arg(long = "exclude", value_delimiter = ',')]
    pub exclude: Vec<String>,
    /// Sitemaps: include (default), skip or only.
    #[arg(long)]
    pub sitemap: Option<String>,
    /// Follow links to other subdomains of the same site.
    #[arg(long)]
    pub allow_subdomains: bool,
    /// Crawl what robots.txt disallows.
    #[arg(long)]
    pub ignore_robots: bool,
    /// Keep repeated blocks (navigation, footers) instead of stripping them.
    #[arg(long)]
    pub keep_boilerplate: bool,
    /// Keep the whole page, not only the main content.
    #[arg(long)]
    pub full_page: bool,
    /// Formats besides markdown, each written beside the page's `.md`
    /// (html, rawHtml, text, links; anything else goes into a `.json`).
    #[arg(long = "formats", short = 'f', value_delimiter = ',')]
    pub formats: Vec<String>,
    /// Print a JSON summary at the end instead of a sentence.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// What `--resume` needs, kept in `DIR/.webdata-crawl.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    /// The crawl request (without `limit` and `resumeFrom`).
    request: Value,
    /// The limit asked for, over every crawl of the folder.
    limit: i64,
    /// Every crawl that wrote into the folder, the current one last.
    crawls: Vec<String>,
    /// The last event read from the current crawl's stream.
    last_event: i64,
    written: i64,
    failed: i64,
    /// The pages of the crawls before the current one.
    written_before: i64,
    /// `running`, `interrupted` or `completed`.
    state: String,
    /// How the current crawl ended, once its stream said so.
    #[serde(default)]
    ended: Option<String>,
    /// Where the work ran: `embedded` or the server's URL.
    server: String,
}

const RECORD: &str = ".webdata-crawl.json";

impl Record {
    fn load(dir: &Path) -> anyhow::Result<Option<Record>> {
        let p = dir.join(RECORD);
        match std::fs::read(&p) {
            Ok(b) => Ok(Some(serde_json::from_slice(&b).with_context(|| {
                format!(
                    "{} is not a crawl record; remove it to start over",
                    p.display()
                )
            })?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading {}", p.display())),
        }
    }

    fn save(&self, dir: &Path) -> anyhow::Result<()> {
        let p = dir.join(RECORD);
        let tmp = dir.join(format!("{RECORD}.tmp"));
        std::fs::write(&tmp, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &p).with_context(|| format!("writing {}", p.display()))?;
        Ok(())
    }
}

/// The crawl request the flags describe (limit and resumeFrom aside).
fn request_from(args: &CrawlArgs, url: &str) -> anyhow::Result<Value> {
    let mut formats = vec![json!("markdown")];
    for f in &args.formats {
        let f = f.trim();
        if !f.is_empty() && f != "markdown" {
            formats.push(json!(f));
        }
    }
    let mut r = json!({
        "url": url,
        "scrapeOptions": { "formats": formats, "onlyMainContent": !args.full_page },
    });
    let o = r.as_object_mut().context("request")?;
    if let Some(d) = args.max_depth {
        o.insert("maxDepth".into(), json!(d));
    }
    if !args.include.is_empty() {
        o.insert("includePaths".into(), json!(args.include));
    }
    if !args.exclude.is_empty() {
        o.insert("excludePaths".into(), json!(args.exclude));
    }
    if let Some(s) = &args.sitemap {
        o.insert("sitemap".into(), json!(s));
    }
    if args.allow_subdomains {
        o.insert("allowSubdomains".into(), json!(true));
    }
    if args.ignore_robots {
        o.insert("ignoreRobots".into(), json!(true));
    }
    if args.keep_boilerplate {
        o.insert("removeBoilerplate".into(), json!(false));
    }
    Ok(r)
}

/// The folder a URL's pages go to by default: its host name.
fn default_out(url: &str) -> PathBuf {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("crawl"))
}

/// How a crawl run ended.
enum Ended {
    /// The crawl finished with this status (`completed`, `failed`, `cancelled`).
    Finished(String, Value),
    /// Ctrl-C: the crawl was cancelled here and its finished pages written.
    Interrupted,
}

/// `webdata crawl`.
pub async fn crawl(args: CrawlArgs) -> anyhow::Result<()> {
    let out = match (&args.out, &args.url) {
        (Some(o), _) => o.clone(),
        (None, Some(u)) => default_out(u),
        (None, None) => anyhow::bail!("give a URL to crawl, or --out DIR --resume"),
    };
    let prior = Record::load(&out)?;
    let mut rec = match (args.resume, prior) {
        (true, None) => anyhow::bail!(
            "nothing to resume in {}: it has no {RECORD}; run without --resume to start a crawl",
            out.display()
        ),
        (true, Some(r)) => r,
        (false, Some(r)) if r.state != "completed" => anyhow::bail!(
            "{} holds an unfinished crawl ({}, {} pages written): continue it with --resume, or choose another --out",
            out.display(),
            r.crawls.last().map(String::as_str).unwrap_or("?"),
            r.written
        ),
        (false, _) => {
            let url = args
                .url
                .as_deref()
                .context("give the URL to crawl: webdata crawl URL --out DIR")?;
            Record {
                request: request_from(&args, url)?,
                limit: args.limit.unwrap_or(100),
                crawls: Vec::new(),
                last_event: 0,
                written: 0,
                failed: 0,
                written_before: 0,
                state: "running".into(),
                ended: None,
                server: String::new(),
            }
        }
    };
    if args.resume && rec.state == "completed" {
        eprintln!(
            "{}: the crawl is complete ({} pages); nothing to fetch",
            out.display(),
            rec.written
        );
        return Ok(());
    }
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let conn = Connection::open(&args.connect).await?;
    let server = if conn.is_embedded() {
        "embedded".to_string()
    } else {
        conn.client.describe()
    };
    if args.resume && !rec.server.is_empty() && rec.server != server {
        conn.close();
        anyhow::bail!(
            "{} was crawled on {}, not {server}: resume it there (--server, or none for the embedded store)",
            out.display(),
            rec.server
        );
    }
    rec.server = server;
    let start = url::Url::parse(rec.request["url"].as_str().unwrap_or_default())
        .context("the crawl's URL is not a URL")?;
    let mut progress = Progress::new(rec.written);
    let result = run(&conn.client, &mut rec, &out, &start, &mut progress).await;
    let saved = rec.save(&out);
    conn.close();
    progress.finish();
    let ended = result?;
    saved?;
    let summary = json!({
        "out": out.display().to_string(),
        "crawl": rec.crawls.last(),
        "crawls": rec.crawls,
        "status": rec.state,
        "pages": rec.written,
        "failed": rec.failed,
    });
    match ended {
        Ended::Interrupted => {
            if args.json {
                println!("{summary}");
            }
            eprintln!(
                "cancelled: {} pages kept in {}; continue with `webdata crawl --out {} --resume`",
                rec.written,
                out.display(),
                out.display()
            );
            std::process::exit(130);
        }
        Ended::Finished(status, last) => {
            if args.json {
                println!("{summary}");
            } else {
                let why = if rec.failed > 0 {
                    format!(
                        "; why they failed: GET /v1/crawl/{}/errors",
                        rec.crawls.last().map(String::as_str).unwrap_or("?")
                    )
                } else {
                    String::new()
                };
                eprintln!(
                    "{status}: {} pages written to {}, {} failed{why}",
                    rec.written,
                    out.display(),
                    rec.failed
                );
            }
            if status == "failed" {
                let msg = last["error"]["message"]
                    .as_str()
                    .or(last["error"].as_str())
                    .unwrap_or("the crawl failed");
                anyhow::bail!("{msg}; `--resume` tries again without refetching what was written");
            }
            if status == "cancelled" {
                anyhow::bail!(
                    "the crawl was cancelled elsewhere; `--resume` continues it without refetching"
                );
            }
            Ok(())
        }
    }
}

/// Follows the folder's crawls until one completes, fails or is interrupted.
async fn run(
    client: &ApiClient,
    rec: &mut Record,
    out: &Path,
    start: &url::Url,
    progress: &mut Progress,
) -> anyhow::Result<Ended> {
    let mut follow_existing = rec.state != "completed" && !rec.crawls.is_empty();
    loop {
        let resuming = follow_existing;
        if !follow_existing {
            let remaining = rec.limit - rec.written;
            if remaining <= 0 {
                rec.state = "completed".into();
                return Ok(Ended::Finished("completed".into(), Value::Null));
            }
            let mut body = rec.request.clone();
            body["limit"] = json!(remaining);
            if let Some(prev) = rec.crawls.last() {
                body["resumeFrom"] = json!(prev);
            }
            let job = client.post("/v1/crawl", body).await.map_err(explain)?;
            let id = job["id"].as_str().context("the API gave no crawl id")?;
            rec.crawls.push(id.to_string());
            rec.last_event = 0;
            rec.ended = None;
            rec.written_before = rec.written;
            rec.state = "running".into();
            rec.save(out)?;
        }
        follow_existing = false;
        let id = rec.crawls.last().cloned().context("no crawl")?;
        progress.crawl(&id);
        // A crawl whose end was already read has no more events to wait for.
        let ended = match rec.ended.clone() {
            Some(status) => Ended::Finished(status, Value::Null),
            None => follow(client, rec, &id, out, start, progress).await?,
        };
        match ended {
            Ended::Interrupted => {
                rec.state = "interrupted".into();
                return Ok(Ended::Interrupted);
            }
            Ended::Finished(status, last) => match status.as_str() {
                "completed" => {
                    rec.state = "completed".into();
                    return Ok(Ended::Finished(status, last));
                }
                // Resuming a crawl that was cancelled (by Ctrl-C or
                // elsewhere) or cut short: continue it as a new crawl.
                "cancelled" | "failed" if resuming => {
                    rec.state = "running".into();
                    continue;
                }
                _ => {
                    rec.state = "interrupted".into();
                    return Ok(Ended::Finished(status, last));
                }
            },
        }
    }
}

/// Reads crawl `id`'s event stream from the record's last event, writing
/// each page, until the crawl ends. Ctrl-C cancels the crawl and keeps
/// reading until the stream ends, so every finished page is written.
async fn follow(
    client: &ApiClient,
    rec: &mut Record,
    id: &str,
    out: &Path,
    start: &url::Url,
    progress: &mut Progress,
) -> anyhow::Result<Ended> {
    let path = format!("/v1/crawl/{id}/events");
    let mut cancelled = false;
    let mut retries = 0u32;
    let mut last_save = Instant::now();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    'connect: loop {
        let mut stream = match client.events(&path, Some(rec.last_event)).await {
            Ok(s) => s,
            Err(e) if e.status == 0 && retries < 5 => {
                retries += 1;
                tokio::time::sleep(Duration::from_millis(500 * u64::from(retries))).await;
                continue;
            }
            Err(e) => return Err(explain(e)),
        };
        loop {
            let next = tokio::select! {
                ev = stream.next() => ev,
                _ = &mut ctrl_c, if !cancelled => {
                    cancelled = true;
                    progress.note("Ctrl-C: cancelling the crawl; pages already scraped are kept (Ctrl-C again to quit now)");
                    if let Err(e) = client.delete(&format!("/v1/crawl/{id}")).await {
                        progress.note(&format!("could not cancel: {e}"));
                    }
                    rec.state = "interrupted".into();
                    rec.save(out)?;
                    tokio::spawn(async {
                        if tokio::signal::ctrl_c().await.is_ok() {
                            std::process::exit(130);
                        }
                    });
                    continue;
                }
            };
            let ev = match next {
                Some(Ok(ev)) => ev,
                Some(Err(_)) | None => {
                    // The stream broke before `done`: reconnect after the last event.
                    retries += 1;
                    if retries > 5 {
                        anyhow::bail!(
                            "the event stream of {id} keeps breaking; run again with --resume"
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    continue 'connect;
                }
            };
            retries = 0;
            if let Some(seq) = ev.id.as_deref().and_then(|s| s.parse::<i64>().ok()) {
                rec.last_event = seq;
            }
            let data: Value = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
            match ev.event.as_str() {
                "page" => {
                    write_page(out, start, id, &data)?;
                    rec.written += 1;
                    progress.page(rec);
                }
                "status" => {
                    rec.failed = rec.failed.max(data["failed"].as_i64().unwrap_or(0));
                    progress.status(rec, &data);
                }
                "done" => {
                    rec.ended = Some(data["status"].as_str().unwrap_or("completed").to_string());
                    rec.failed = data["failed"].as_i64().unwrap_or(rec.failed);
                    progress.status(rec, &data);
                    let status = data["status"].as_str().unwrap_or("completed").to_string();
                    if cancelled {
                        return Ok(Ended::Interrupted);
                    }
                    return Ok(Ended::Finished(status, data));
                }
                _ => {}
            }
            if last_save.elapsed() > Duration::from_secs(1) {
                rec.save(out)?;
                last_save = Instant::now();
            }
        }
    }
}

/// Where a page of the crawl goes under `out`: the URL's path, `index.md`
/// for a folder, other hosts under their name, a query as a short hash.
pub fn page_path(start: &url::Url, page: &str) -> PathBuf {
    let Ok(u) = url::Url::parse(page) else {
        return PathBuf::from(format!("_/{}.md", short_hash(page)));
    };
    let mut p = PathBuf::new();
    if u.host_str() != start.host_str()
        || u.port_or_known_default() != start.port_or_known_default()
    {
        let mut host = u.host_str().unwrap_or("_").to_string();
        if let Some(port) = u.port() {
            host = format!("{host}_{port}");
        }
        p.push(clean(&host));
    }
    let segments: Vec<String> = u
        .path_segments()
        .map(|s| s.filter(|x| !x.is_empty()).map(decode).collect())
        .unwrap_or_default();
    let folder = u.path().ends_with('/') || segments.is_empty();
    let (dirs, last) = if folder {
        (&segments[..], "index".to_string())
    } else {
        let last = &segments[segments.len() - 1];
        let stem = match last.rsplit_once('.') {
            Some((stem, ext))
                if !stem.is_empty()
                    && matches!(
                        ext.to_ascii_lowercase().as_str(),
                        "html" | "htm" | "xhtml" | "php" | "asp" | "aspx" | "jsp" | "md"
                    ) =>
            {
                stem.to_string()
            }
            _ => last.clone(),
        };
        (&segments[..segments.len() - 1], stem)
    };
    for d in dirs {
        p.push(clean(d));
    }
    let name = match u.query().filter(|q| !q.is_empty()) {
        Some(q) => format!("{}-{}.md", clean(&last), short_hash(q)),
        None => format!("{}.md", clean(&last)),
    };
    p.push(name);
    p
}

fn decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_string())
}

/// A file-name-safe segment: no separators, no `.`/`..`, at most 120 bytes.
fn clean(s: &str) -> String {
    let mut c: String = s
        .chars()
        .map(|ch| match ch {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    if c == "." || c == ".." || c.is_empty() {
        c = "_".into();
    }
    if c.starts_with('.') {
        c.replace_range(0..1, "_");
    }
    if c.len() > 120 {
        let mut cut = 120;
        while !c.is_char_boundary(cut) {
            cut -= 1;
        }
        c = format!("{}-{}", &c[..cut], short_hash(s));
    }
    c
}

fn short_hash(s: &str) -> String {
    use sha2::Digest;
    hex::encode(&sha2::Sha256::digest(s.as_bytes())[..4])
}

/// Writes a Document: `page.md` with front matter, plus a file per other
/// format asked for.
fn write_page(out: &Path, start: &url::Url, crawl_id: &str, doc: &Value) -> anyhow::Result<()> {
    let url = doc["url"].as_str().unwrap_or_default();
    let rel = page_path(start, url);
    let path = out.join(&rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let meta = &doc["metadata"];
    let mut front = String::from("---\n");
    front.push_str(&format!("url: {}\n", json!(url)));
    if let Some(t) = meta["title"].as_str() {
        front.push_str(&format!("title: {}\n", json!(t)));
    }
    if let Some(s) = meta["statusCode"].as_i64() {
        front.push_str(&format!("statusCode: {s}\n"));
    }
    front.push_str(&format!("crawlId: {}\n", json!(crawl_id)));
    front.push_str("---\n\n");
    front.push_str(doc["markdown"].as_str().unwrap_or_default());
    if !front.ends_with('\n') {
        front.push('\n');
    }
    std::fs::write(&path, front).with_context(|| format!("writing {}", path.display()))?;
    let stem = path.with_extension("");
    let side = |ext: &str, body: &str| -> anyhow::Result<()> {
        let p = PathBuf::from(format!("{}.{ext}", stem.display()));
        std::fs::write(&p, body).with_context(|| format!("writing {}", p.display()))
    };
    if let Some(h) = doc["html"].as_str() {
        side("html", h)?;
    }
    if let Some(h) = doc["rawHtml"].as_str() {
        side("raw.html", h)?;
    }
    if let Some(t) = doc["text"].as_str() {
        side("txt", t)?;
    }
    if let Some(l) = doc["links"].as_array() {
        let lines: Vec<&str> = l.iter().filter_map(Value::as_str).collect();
        side("links.txt", &(lines.join("\n") + "\n"))?;
    }
    let other = ["screenshot", "chunks", "brand"]
        .iter()
        .any(|k| !doc[*k].is_null());
    if other {
        side("json", &serde_json::to_string_pretty(doc)?)?;
    }
    Ok(())
}

/// The progress bar on a terminal, plain lines (at most one a second)
/// elsewhere.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    started: Instant,
    done_at_start: i64,
    known_total: i64,
    last_line: Instant,
    crawl: String,
    failed: i64,
    done: i64,
}

impl Progress {
    fn new(done: i64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::new(0);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{spinner} [{bar:30}] {pos}/{len} pages · {msg} · eta {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b.set_position(done.max(0) as u64);
            b.enable_steady_tick(Duration::from_millis(200));
            b
        });
        Progress {
            bar,
            started: Instant::now(),
            done_at_start: done,
            known_total: done,
            last_line: Instant::now() - Duration::from_secs(10),
            crawl: String::new(),
            failed: 0,
            done,
        }
    }

    fn crawl(&mut self, id: &str) {
        self.crawl = id.to_string();
        self.note(&format!("crawl {id}"));
    }

    fn note(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None => eprintln!("{msg}"),
        }
    }

    fn page(&mut self, rec: &Record) {
        self.done = rec.written;
        self.known_total = self.known_total.max(self.done);
        self.draw(false);
    }

    fn status(&mut self, rec: &Record, status: &Value) {
        self.done = rec.written;
        self.failed = rec.failed;
        let total = rec.written_before + status["total"].as_i64().unwrap_or(0);
        self.known_total = self.known_total.max(total).max(self.done);
        self.draw(false);
    }

    fn rate(&self) -> f64 {
        let secs = self.started.elapsed().as_secs_f64().max(0.001);
        (self.done - self.done_at_start).max(0) as f64 / secs
    }

    fn draw(&mut self, last: bool) {
        if let Some(b) = &self.bar {
            b.set_length(self.known_total.max(0) as u64);
            b.set_position(self.done.max(0) as u64);
            let rate = self.rate();
            b.set_message(format!("{rate:.1} pages/s · {} failed", self.failed));
            return;
        }
        if !last && self.last_line.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last_line = Instant::now();
        let rate = self.rate();
        let left = (self.known_total - self.done).max(0) as f64;
        let eta = if rate > 0.0 {
            format!("{:.0}s", left / rate)
        } else {
            "?".into()
        };
        eprintln!(
            "progress: {}/{} pages, {:.1} pages/s, {} failed, eta {eta}",
            self.done, self.known_total, rate, self.failed
        );
    }

    fn finish(&mut self) {
        match self.bar.take() {
            Some(b) => b.finish_and_clear(),
            None => self.draw(true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_land_at_paths_mirroring_the_site() {
        let start = url::Url::parse("https://docs.example.com/guide/").expect("url");
        let p = |u: &str| page_path(&start, u).display().to_string();
        assert_eq!(p("https://docs.example.com/"), "index.md");
        assert_eq!(p("https://docs.example.com/guide/"), "guide/index.md");
        assert_eq!(
            p("https://docs.example.com/guide/intro.html"),
            "guide/intro.md"
        );
        assert_eq!(p("https://docs.example.com/guide/intro"), "guide/intro.md");
        assert_eq!(p("https://docs.example.com/a/v1.2"), "a/v1.2.md");
        assert_eq!(p("https://api.example.com/x"), "api.example.com/x.md");
        assert_eq!(
            p("https://docs.example.com:8443/x"),
            "docs.example.com_8443/x.md"
        );
        assert_eq!(p("https://docs.example.com/caf%C3%A9/"), "café/index.md");
        // A query keeps pages apart; an escaped slash or dot-segment cannot climb out.
        let q1 = p("https://docs.example.com/s?page=1");
        let q2 = p("https://docs.example.com/s?page=2");
        assert!(
            q1.starts_with("s-") && q1.ends_with(".md") && q1 != q2,
            "{q1} {q2}"
        );
        assert_eq!(
            p("https://docs.example.com/a%2F..%2F..%2Fetc"),
            "a_.._.._etc.md"
        );
        assert_eq!(p("https://docs.example.com/.hidden"), "_hidden.md");
        assert!(!p("https://docs.example.com/%2E%2E/x").contains(".."));
    }
}
