//! `webdata llmstxt URL`: a site's llms.txt from the terminal. Starts an
//! llms.txt job (through the embedded store, or `--server`), waits for it,
//! then prints llms.txt (or, with `--full`, llms-full.txt) or writes both
//! files into `--out DIR`. Progress goes to standard error.

use super::commands::explain;
use super::connect::{ConnectArgs, Connection};
use anyhow::Context;
use serde_json::json;
use std::io::Write;
use std::time::Duration;

/// `webdata llmstxt URL`.
#[derive(Debug, clap::Args)]
pub struct LlmsTxtArgs {
    /// The site's start page (`example.com` means https://example.com).
    #[arg(value_parser = super::page_url)]
    pub url: String,
    /// Most pages to crawl (1 to 5000; 1 credit each).
    #[arg(long, default_value_t = 100)]
    pub limit: i64,
    /// Only URL paths matching this glob (repeatable), e.g. `/docs/**`.
    #[arg(long = "include")]
    pub include: Vec<String>,
    /// No URL path matching this glob (repeatable).
    #[arg(long = "exclude")]
    pub exclude: Vec<String>,
    /// Print llms-full.txt instead of llms.txt.
    #[arg(long, conflicts_with = "out")]
    pub full: bool,
    /// Write llms.txt and llms-full.txt into this folder instead of printing.
    #[arg(long)]
    pub out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `webdata llmstxt`.
pub async fn llmstxt(args: LlmsTxtArgs) -> anyhow::Result<()> {
    let conn = Connection::open(&args.connect).await?;
    let result = run(&conn, &args).await;
    conn.close();
    result
}

async fn run(conn: &Connection, args: &LlmsTxtArgs) -> anyhow::Result<()> {
    let client = &conn.client;
    let mut body = json!({ "url": args.url, "limit": args.limit });
    if !args.include.is_empty() {
        body["includePaths"] = json!(args.include);
    }
    if !args.exclude.is_empty() {
        body["excludePaths"] = json!(args.exclude);
    }
    let job = client.post("/v1/llmstxt", body).await.map_err(explain)?;
    let id = job["id"].as_str().unwrap_or_default().to_string();
    eprintln!("llms.txt job {id} started");
    let mut last = -1;
    let done = loop {
        let v = client
            .get(&format!("/v1/llmstxt/{id}"))
            .await
            .map_err(explain)?;
        let completed = v["completed"].as_i64().unwrap_or(0);
        if completed != last {
            eprintln!("{completed} pages scraped");
            last = completed;
        }
        match v["status"].as_str() {
            Some("completed") => break v,
            Some("failed") | Some("cancelled") => anyhow::bail!(
                "the llms.txt job {}: {}",
                v["status"].as_str().unwrap_or("stopped"),
                v["error"]["message"].as_str().unwrap_or("no reason given")
            ),
            Some("queued") | Some("scraping") => {
                tokio::time::sleep(Duration::from_millis(300)).await
            }
            other => anyhow::bail!(
                "the llms.txt job answered an unexpected status {:?}",
                other.unwrap_or("(none)")
            ),
        }
    };
    if let Some(m) = done["error"]["message"].as_str() {
        eprintln!("note: {m}");
    }
    let text = |k: &str| done["data"][k].as_str().unwrap_or_default().to_string();
    match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for (name, key) in [("llms.txt", "llmsTxt"), ("llms-full.txt", "llmsFullTxt")] {
                let path = dir.join(name);
                std::fs::write(&path, text(key))
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
        }
        None => {
            let mut out = std::io::stdout();
            out.write_all(text(if args.full { "llmsFullTxt" } else { "llmsTxt" }).as_bytes())
                .context("writing to standard output")?;
            out.flush().context("writing to standard output")?;
        }
    }
    eprintln!(
        "{} pages, {} credits",
        done["completed"], done["credits_used"]
    );
    Ok(())
}
