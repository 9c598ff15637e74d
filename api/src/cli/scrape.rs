//! `webdata scrape URL`: one scrape through the engine, no server, no
//! store; the document is printed as JSON.

use super::{print_json, ScrapeArgs};

/// `webdata scrape URL`: the scrape engine, once, printing to stdout.
pub async fn scrape_once(args: ScrapeArgs) -> anyhow::Result<()> {
    use webdata_core::types::{Format, ScrapeOptions, ScrapeRequest};
    let formats: Vec<Format> = if args.formats.is_empty() {
        vec![Format::Markdown, Format::Metadata]
    } else {
        args.formats
            .iter()
            .map(|f| {
                serde_json::from_value(serde_json::Value::String(f.trim().to_string()))
                    .map_err(|_| anyhow::anyhow!("unknown format `{f}`"))
            })
            .collect::<anyhow::Result<_>>()?
    };
    let req = ScrapeRequest {
        url: args.url.clone(),
        options: ScrapeOptions {
            formats: Some(formats.clone()),
            only_main_content: Some(!args.full_page),
            ignore_robots: Some(args.ignore_robots),
            timeout: Some(args.timeout),
            ..Default::default()
        },
    };
    webdata_core::validate::check_url("url", &req.url).map_err(|e| anyhow::anyhow!(e.message))?;
    webdata_core::validate::check_scrape_options("", &req.options)
        .map_err(|e| anyhow::anyhow!(e.message))?;
    let guard = webdata_engine::guard::NetworkGuard::from_setting(
        args.connect.allow_private_networks.as_deref(),
    )
    .map_err(|e| anyhow::anyhow!("WEBDATA_ALLOW_PRIVATE_NETWORKS: {e}"))?
    .with_egress_settings(
        std::env::var("WEBDATA_EGRESS_ALLOW").ok().as_deref(),
        std::env::var("WEBDATA_EGRESS_DENY").ok().as_deref(),
    )?;
    let engine = webdata_engine::Engine::new(guard).map_err(|e| anyhow::anyhow!("{e}"))?;
    let scraped = engine
        .scrape(&req)
        .await
        .map_err(|f| anyhow::anyhow!("{}: {}", f.code, f.message))?;
    let doc = scraped.document;
    if args.json {
        return print_json(&doc);
    }
    let text = formats.iter().find_map(|f| match f {
        Format::Markdown => doc.markdown.clone(),
        Format::Html => doc.html.clone(),
        Format::RawHtml => doc.raw_html.clone(),
        Format::Text => doc.text.clone(),
        Format::Links => doc.links.as_ref().map(|l| l.join("\n")),
        _ => None,
    });
    match text {
        Some(t) => println!("{t}"),
        None => print_json(&doc)?,
    }
    Ok(())
}
