//! `webdata watch URL --every 1h`: a local schedule in the foreground. At
//! every interval the page is scraped with change tracking (through the
//! embedded store, or `--server`), and one line says whether it is new,
//! the same, changed (followed by the unified diff) or removed. Ctrl-C
//! stops it; `--count N` stops after N checks.

use super::commands::explain;
use super::connect::{ConnectArgs, Connection};
use anyhow::Context;
use serde_json::json;
use std::io::Write;
use std::time::Duration;

/// Shortest interval (the target site's sake; the API's schedules start at a minute).
const WATCH_MIN_MS: i64 = 1_000;

/// `webdata watch URL`.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// The page to watch (`example.com/pricing` means https://example.com/pricing).
    #[arg(value_parser = super::page_url)]
    pub url: String,
    /// How often: `30s`, `15m`, `1h`, `1d` (at least 1 second).
    #[arg(long, default_value = "1h")]
    pub every: String,
    /// Separate history (default `watch`; the same tag continues where the
    /// last watch of the page stopped).
    #[arg(long, default_value = "watch")]
    pub tag: String,
    /// Stop after this many checks.
    #[arg(long)]
    pub count: Option<u64>,
    /// Keep the whole page, not only the main content.
    #[arg(long)]
    pub full_page: bool,
    /// Print each check's `changeTracking` object as one JSON line.
    #[arg(long)]
    pub json: bool,
    /// Also watch fields read by the extract model (`WEBDATA_LLM_*` on the
    /// embedded store, or the server's): what to read, e.g. "the Pro
    /// plan's monthly price". Changed fields print as `field: old → new`.
    #[arg(long)]
    pub prompt: Option<String>,
    /// With or without --prompt: a JSON Schema (of an object) for those
    /// fields, inline or `@file.json`.
    #[arg(long)]
    pub schema: Option<String>,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

/// `webdata watch`.
pub async fn watch(args: WatchArgs) -> anyhow::Result<()> {
    let every = webdata_core::schedule::parse_interval(&args.every)
        .map_err(|e| anyhow::anyhow!("--every: {e}"))?;
    if every < WATCH_MIN_MS {
        anyhow::bail!("--every: `{}` is shorter than 1 second", args.every);
    }
    let schema = match args.schema.as_deref() {
        None => None,
        Some(s) => Some(read_schema(s)?),
    };
    let mut options = json!({"tag": args.tag});
    if args.prompt.is_some() || schema.is_some() {
        options["modes"] = json!(["git-diff", "json"]);
        if let Some(p) = &args.prompt {
            options["prompt"] = json!(p);
        }
        if let Some(s) = schema {
            options["schema"] = s;
        }
    }
    let conn = Connection::open(&args.connect).await?;
    let client = conn.client.clone();
    let body = json!({
        "url": args.url,
        "formats": ["markdown", "changeTracking"],
        "onlyMainContent": !args.full_page,
        "changeTrackingOptions": options,
    });
    let mut checks = 0u64;
    let mut tick = tokio::time::interval(Duration::from_millis(every as u64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let result = loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = &mut ctrl_c => break Ok(()),
        }
        let answer = match client.post("/v1/scrape", body.clone()).await {
            Ok(a) => a,
            // A failed check is reported and the watch goes on (the site
            // may be down for a moment); a refusal of the request stops it.
            Err(e)
                if [
                    "fetch_failed",
                    "timeout",
                    "blocked_by_site",
                    "rate_limited",
                    "capacity_exceeded",
                    "internal",
                ]
                .contains(&e.code.as_str()) =>
            {
                eprintln!("{}  check failed: {}: {}", now(), e.code, e.message);
                checks += 1;
                if args.count.is_some_and(|n| checks >= n) {
                    break Ok(());
                }
                continue;
            }
            Err(e) => break Err(explain(e)),
        };
        let ct = &answer["data"]["changeTracking"];
        if args.json {
            println!("{}", serde_json::to_string(ct)?);
        } else {
            let status = ct["changeStatus"].as_str().unwrap_or("?");
            let since = ct["previousScrapeAt"]
                .as_str()
                .map(|p| format!(" since {p}"))
                .unwrap_or_default();
            println!("{}  {status:<7} {}{since}", now(), args.url);
            if let Some(fields) = ct["json"].as_object() {
                for (k, v) in fields {
                    println!("  {k}: {} → {}", v["previous"], v["current"]);
                }
            }
            if let Some(diff) = ct["diff"]["text"].as_str() {
                print!("{diff}");
                if !diff.ends_with('\n') {
                    println!();
                }
            }
        }
        std::io::stdout()
            .flush()
            .context("writing to standard output")?;
        checks += 1;
        if args.count.is_some_and(|n| checks >= n) {
            break Ok(());
        }
    };
    conn.close();
    result
}

fn now() -> String {
    webdata_core::store::rfc3339(webdata_core::store::now_ms())
}

/// `--schema`: inline JSON, or `@path` to a file of it.
fn read_schema(arg: &str) -> anyhow::Result<serde_json::Value> {
    let text = match arg.strip_prefix('@') {
        Some(path) => {
            std::fs::read_to_string(path).with_context(|| format!("--schema: reading {path}"))?
        }
        None => arg.to_string(),
    };
    serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("--schema: not JSON: {e}"))
}
