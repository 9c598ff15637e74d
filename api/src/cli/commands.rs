//! `webdata map`, `webdata batch`, `webdata brand`, and `webdata scrape
//! --server`: one API call each (through the embedded store or a server),
//! printing markdown or, with `--json`, the API's answer.

use super::connect::{ConnectArgs, Connection};
use super::print_json;
use crate::client::{ApiClient, ApiFailure};
use anyhow::Context;
use serde_json::{json, Value};
use std::io::Read;
use std::time::Duration;

/// `webdata map URL`.
#[derive(Debug, clap::Args)]
pub struct MapArgs {
    /// The site to map (`example.com` means https://example.com).
    #[arg(value_parser = super::page_url)]
    pub url: String,
    /// Order the URLs by relevance to these words.
    #[arg(long)]
    pub search: Option<String>,
    /// Most URLs (the API's default is 5000).
    #[arg(long)]
    pub limit: Option<i64>,
    /// Include other subdomains of the site.
    #[arg(long)]
    pub include_subdomains: bool,
    /// Sitemaps: include (default), skip or only.
    #[arg(long)]
    pub sitemap: Option<String>,
    /// Print the API's JSON answer.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `webdata batch FILE|-`.
#[derive(Debug, clap::Args)]
pub struct BatchArgs {
    /// A file with one URL per line (`-` reads standard input; `#` starts a comment).
    pub file: String,
    /// Formats (repeat or comma-separate); markdown by default.
    #[arg(long = "format", short = 'f', value_delimiter = ',')]
    pub formats: Vec<String>,
    /// Keep the whole page, not only the main content.
    #[arg(long)]
    pub full_page: bool,
    /// Skip invalid lines (they are listed) instead of refusing the batch.
    #[arg(long)]
    pub ignore_invalid_urls: bool,
    /// Print the documents as a JSON array.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `webdata brand DOMAIN`.
#[derive(Debug, clap::Args)]
pub struct BrandArgs {
    /// A domain or URL.
    pub domain: String,
    /// Accepted cache age in ms (0 forces a fresh lookup).
    #[arg(long)]
    pub max_age: Option<i64>,
    /// Print the API's JSON answer.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// An API failure with a hint at what to do next.
pub fn explain(e: ApiFailure) -> anyhow::Error {
    let hint = match e.code.as_str() {
        "insufficient_credits" => {
            "; add credits to the organization (dashboard, or `webdata orgs update --credits`)"
        }
        "unauthorized" => "; check WEBDATA_API_KEY (or --api-key)",
        "blocked_url" => {
            "; private and loopback addresses are refused unless WEBDATA_ALLOW_PRIVATE_NETWORKS allows them"
        }
        "rate_limited" => "; wait a minute or raise the organization's rate limit",
        "not_configured" => "; the server has no provider for this (see docs/decisions.md)",
        _ => "",
    };
    anyhow::anyhow!("{}: {}{hint}", e.code, e.message)
}

/// Runs `f` with a connection and closes it after.
async fn with_connection<F, Fut, T>(args: &ConnectArgs, f: F) -> anyhow::Result<T>
where
    F: FnOnce(ApiClient) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let conn = Connection::open(args).await?;
    let out = f(conn.client.clone()).await;
    conn.close();
    out
}

/// `webdata map`.
pub async fn map(args: MapArgs) -> anyhow::Result<()> {
    let mut body = json!({ "url": args.url });
    if let Some(s) = &args.search {
        body["search"] = json!(s);
    }
    if let Some(l) = args.limit {
        body["limit"] = json!(l);
    }
    if args.include_subdomains {
        body["includeSubdomains"] = json!(true);
    }
    if let Some(s) = &args.sitemap {
        body["sitemap"] = json!(s);
    }
    let answer = with_connection(&args.connect, |c| async move {
        c.post("/v1/map", body).await.map_err(explain)
    })
    .await?;
    if args.json {
        return print_json(&answer);
    }
    for link in answer["links"].as_array().into_iter().flatten() {
        match link {
            Value::String(s) => println!("{s}"),
            other => println!("{}", other["url"].as_str().unwrap_or_default()),
        }
    }
    Ok(())
}

/// The URLs of a batch file: one per line, blank lines and `#` comments skipped.
pub fn read_urls(file: &str) -> anyhow::Result<Vec<String>> {
    let mut text = String::new();
    if file == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading URLs from standard input")?;
    } else {
        text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
    }
    let urls: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    if urls.is_empty() {
        anyhow::bail!("{file} has no URLs (one per line)");
    }
    Ok(urls)
}

/// `webdata batch`.
pub async fn batch(args: BatchArgs) -> anyhow::Result<()> {
    let urls = read_urls(&args.file)?;
    let formats: Vec<String> = if args.formats.is_empty() {
        vec!["markdown".into()]
    } else {
        args.formats.iter().map(|f| f.trim().to_string()).collect()
    };
    let body = json!({
        "urls": urls,
        "ignoreInvalidURLs": args.ignore_invalid_urls,
        "scrapeOptions": { "formats": formats, "onlyMainContent": !args.full_page },
    });
    let (docs, status, invalid) = with_connection(&args.connect, |c| async move {
        let job = c.post("/v1/batch/scrape", body).await.map_err(explain)?;
        let id = job["id"]
            .as_str()
            .context("the API gave no batch id")?
            .to_string();
        let invalid = job["invalidURLs"].clone();
        let mut docs = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let path = match &cursor {
                Some(c) => format!("/v1/batch/scrape/{id}?cursor={c}"),
                None => format!("/v1/batch/scrape/{id}"),
            };
            let page = c.get(&path).await.map_err(explain)?;
            let got = page["data"].as_array().cloned().unwrap_or_default();
            let n = got.len();
            docs.extend(got);
            let status = page["status"].as_str().unwrap_or("").to_string();
            match page["next"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                // No cursor: the batch ended and every document was read.
                None => return Ok((docs, status, invalid)),
            }
            if n == 0 {
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    })
    .await?;
    if let Some(bad) = invalid.as_array().filter(|a| !a.is_empty()) {
        eprintln!("skipped {} invalid URL(s): {}", bad.len(), json!(bad));
    }
    if args.json {
        print_json(&docs)?;
    } else {
        for d in &docs {
            println!("<!-- {} -->", d["url"].as_str().unwrap_or_default());
            println!("{}\n", d["markdown"].as_str().unwrap_or_default());
        }
    }
    if status != "completed" {
        anyhow::bail!("the batch ended {status} after {} documents", docs.len());
    }
    Ok(())
}

/// `webdata brand`.
pub async fn brand(args: BrandArgs) -> anyhow::Result<()> {
    let mut path = format!(
        "/v1/brand?domain={}",
        url::form_urlencoded::byte_serialize(args.domain.as_bytes()).collect::<String>()
    );
    if let Some(m) = args.max_age {
        path.push_str(&format!("&maxAge={m}"));
    }
    let answer = with_connection(&args.connect, |c| async move {
        c.get(&path).await.map_err(explain)
    })
    .await?;
    if args.json {
        return print_json(&answer);
    }
    print!(
        "{}",
        crate::services::brand::brand_markdown(&answer["data"])
    );
    Ok(())
}

/// `webdata scrape URL --server …`: the same scrape through a server.
pub async fn scrape_remote(args: &super::ScrapeArgs) -> anyhow::Result<()> {
    let formats: Vec<String> = if args.formats.is_empty() {
        vec!["markdown".into(), "metadata".into()]
    } else {
        args.formats.iter().map(|f| f.trim().to_string()).collect()
    };
    let body = json!({
        "url": args.url,
        "formats": formats,
        "onlyMainContent": !args.full_page,
        "ignoreRobots": args.ignore_robots,
        "timeout": args.timeout,
    });
    let answer = with_connection(&args.connect, |c| async move {
        c.post("/v1/scrape", body).await.map_err(explain)
    })
    .await?;
    let doc = &answer["data"];
    if args.json {
        return print_json(doc);
    }
    let text = ["markdown", "html", "rawHtml", "text"]
        .iter()
        .filter(|f| formats_has(&formats, f))
        .find_map(|f| doc[*f].as_str().map(str::to_string))
        .or_else(|| {
            doc["links"].as_array().map(|l| {
                l.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        });
    match text {
        Some(t) => println!("{t}"),
        None => print_json(doc)?,
    }
    Ok(())
}

fn formats_has(formats: &[String], f: &str) -> bool {
    formats.iter().any(|x| x == f)
}
