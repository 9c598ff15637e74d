//! The `webdata` command line: `serve`, `keys …`, `orgs …`, `openapi`.

use crate::app::router;
use crate::config::{Config, ServeArgs, StoreArgs};
use crate::metrics::Metrics;
use crate::state::AppState;
use anyhow::Context;
use clap::{Parser, Subcommand};
use std::sync::Arc;
use webdata_core::store::{NewOrganization, OrgUpdate};
use webdata_core::Store;

/// webdata: scrape pages into LLM-ready formats behind a JSON API.
#[derive(Debug, Parser)]
#[command(name = "webdata", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the API server (single machine: embedded SQLite, in-process workers).
    Serve(Box<ServeArgs>),
    /// Create, list, rotate and revoke API keys.
    Keys {
        #[command(subcommand)]
        cmd: KeysCmd,
    },
    /// Create, list, show and update organizations (credits, caps, limits).
    Orgs {
        #[command(subcommand)]
        cmd: OrgsCmd,
    },
    /// Print the OpenAPI document.
    Openapi,
    /// Scrape one URL with the same engine, without a server, and print it.
    Scrape(ScrapeArgs),
    /// Webhook signing secrets and endpoints.
    Webhooks {
        #[command(subcommand)]
        cmd: WebhooksCmd,
    },
}

/// `webdata webhooks …`
#[derive(Debug, Subcommand)]
pub enum WebhooksCmd {
    /// Print the organization's signing secret(s) for crawl webhooks.
    Secret {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        org: String,
    },
    /// Rotate the signing secret; the old one keeps signing for --overlap-hours.
    RotateSecret {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        org: String,
        #[arg(long, default_value_t = 24)]
        overlap_hours: i64,
    },
    /// Register an endpoint that receives every crawl event of the organization.
    AddEndpoint {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        org: String,
        #[arg(long)]
        url: String,
    },
    /// List dead letters (deliveries that gave up).
    DeadLetters {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        org: String,
    },
}

/// `webdata scrape URL`.
#[derive(Debug, clap::Args)]
pub struct ScrapeArgs {
    /// The page to scrape.
    pub url: String,
    /// Formats to return (repeat or comma-separate): markdown, html, rawHtml, text, links, chunks, metadata.
    #[arg(long = "format", short = 'f', value_delimiter = ',')]
    pub formats: Vec<String>,
    /// Print the whole Document as JSON instead of the first text format.
    #[arg(long)]
    pub json: bool,
    /// Keep the whole page, not only the main content.
    #[arg(long)]
    pub full_page: bool,
    /// Skip the robots.txt check.
    #[arg(long)]
    pub ignore_robots: bool,
    /// Whole-scrape timeout in milliseconds.
    #[arg(long, default_value_t = 30_000)]
    pub timeout: i64,
    /// Private networks the scrape may reach (CIDRs or `true`).
    #[arg(long, env = "WEBDATA_ALLOW_PRIVATE_NETWORKS")]
    pub allow_private_networks: Option<String>,
}

/// `webdata keys …`
#[derive(Debug, Subcommand)]
pub enum KeysCmd {
    /// Create a key for an organization; the key is printed once.
    Create {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        org: String,
        #[arg(long)]
        name: String,
    },
    /// List an organization's keys (prefixes only).
    List {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        org: String,
        /// Include playground keys.
        #[arg(long)]
        all: bool,
    },
    /// Replace a key with a new one of the same name; the old one is revoked.
    Rotate {
        #[command(flatten)]
        store: StoreArgs,
        key_id: String,
    },
    /// Revoke a key.
    Revoke {
        #[command(flatten)]
        store: StoreArgs,
        key_id: String,
    },
    /// Mint a playground key (1 hour, 20 requests/minute, 2 concurrent, 50 credits).
    Playground {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        org: String,
        #[arg(long)]
        person: String,
    },
    /// Print a fresh random key (for WEBDATA_BOOTSTRAP_KEY); stores nothing.
    Generate,
}

/// `webdata orgs …`
#[derive(Debug, Subcommand)]
pub enum OrgsCmd {
    /// Create an organization.
    Create {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        name: String,
        #[arg(long, default_value_t = 0)]
        credits: i64,
        #[arg(long)]
        spend_cap: Option<i64>,
        #[arg(long)]
        rate_limit: Option<i64>,
        #[arg(long)]
        concurrency: Option<i64>,
    },
    /// List organizations.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Show one organization.
    Show {
        #[command(flatten)]
        store: StoreArgs,
        id: String,
    },
    /// Change credits, spend cap or plan limits.
    Update {
        #[command(flatten)]
        store: StoreArgs,
        id: String,
        #[arg(long)]
        credits: Option<i64>,
        #[arg(long, allow_negative_numbers = true)]
        add_credits: Option<i64>,
        #[arg(long)]
        spend_cap: Option<i64>,
        #[arg(long, conflicts_with = "spend_cap")]
        no_spend_cap: bool,
        #[arg(long)]
        rate_limit: Option<i64>,
        #[arg(long)]
        concurrency: Option<i64>,
    },
}

fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

async fn open(store: &StoreArgs) -> anyhow::Result<Store> {
    Store::connect(&store.database_url)
        .await
        .with_context(|| format!("could not open the store at {}", store.database_url))
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve(*args).await,
        Command::Openapi => print_json(&crate::app::openapi_document()),
        Command::Scrape(args) => scrape_once(args).await,
        Command::Webhooks { cmd } => match cmd {
            WebhooksCmd::Secret { store, org } => {
                print_json(&open(&store).await?.signing_secrets(&org).await?)
            }
            WebhooksCmd::RotateSecret {
                store,
                org,
                overlap_hours,
            } => {
                let s = open(&store)
                    .await?
                    .rotate_webhook_secret(&org, overlap_hours * 3_600_000)
                    .await?;
                print_json(
                    &serde_json::json!({ "secret": s, "previousValidForHours": overlap_hours }),
                )
            }
            WebhooksCmd::AddEndpoint { store, org, url } => {
                webdata_core::validate::check_url("url", &url)
                    .map_err(|e| anyhow::anyhow!(e.message))?;
                print_json(
                    &open(&store)
                        .await?
                        .create_webhook_endpoint(&org, &url)
                        .await?,
                )
            }
            WebhooksCmd::DeadLetters { store, org } => print_json(
                &open(&store)
                    .await?
                    .deliveries(&org, Some("dead"), 100)
                    .await?,
            ),
        },
        Command::Keys { cmd } => match cmd {
            KeysCmd::Create { store, org, name } => {
                print_json(&open(&store).await?.create_key(&org, &name).await?)
            }
            KeysCmd::List { store, org, all } => {
                print_json(&open(&store).await?.list_keys(&org, all).await?)
            }
            KeysCmd::Rotate { store, key_id } => {
                print_json(&open(&store).await?.rotate_key(&key_id).await?)
            }
            KeysCmd::Revoke { store, key_id } => {
                print_json(&open(&store).await?.revoke_key(&key_id).await?)
            }
            KeysCmd::Playground { store, org, person } => print_json(
                &open(&store)
                    .await?
                    .create_playground_key(&org, &person)
                    .await?,
            ),
            KeysCmd::Generate => {
                println!("{}", webdata_core::store::generate_key());
                Ok(())
            }
        },
        Command::Orgs { cmd } => match cmd {
            OrgsCmd::Create {
                store,
                name,
                credits,
                spend_cap,
                rate_limit,
                concurrency,
            } => {
                let new = NewOrganization {
                    name,
                    credits,
                    spend_cap,
                    rate_limit_per_minute: rate_limit,
                    concurrency_limit: concurrency,
                };
                print_json(&open(&store).await?.create_org(&new).await?)
            }
            OrgsCmd::List { store } => print_json(&open(&store).await?.list_orgs().await?),
            OrgsCmd::Show { store, id } => print_json(&open(&store).await?.get_org(&id).await?),
            OrgsCmd::Update {
                store,
                id,
                credits,
                add_credits,
                spend_cap,
                no_spend_cap,
                rate_limit,
                concurrency,
            } => {
                let up = OrgUpdate {
                    name: None,
                    credits,
                    add_credits,
                    spend_cap: if no_spend_cap {
                        Some(None)
                    } else {
                        spend_cap.map(Some)
                    },
                    rate_limit_per_minute: rate_limit,
                    concurrency_limit: concurrency,
                };
                print_json(&open(&store).await?.update_org(&id, &up).await?)
            }
        },
    }
}

fn init_logs(format: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if format == "json" {
        let _ = builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init();
    } else {
        let _ = builder.try_init();
    }
}

/// Creates the default organization on an empty store. Returns the key to
/// show when one was generated here.
async fn bootstrap(store: &Store, args: &ServeArgs) -> anyhow::Result<Option<String>> {
    if !store.is_empty().await? {
        return Ok(None);
    }
    let org = store
        .create_org(&NewOrganization {
            name: "default".into(),
            credits: args.bootstrap_credits,
            ..Default::default()
        })
        .await?;
    let (secret, generated) = match &args.bootstrap_key {
        Some(k) if !k.is_empty() => (k.clone(), false),
        _ => (webdata_core::store::generate_key(), true),
    };
    store
        .create_key_with_secret(&org.id, "bootstrap", &secret)
        .await
        .context("WEBDATA_BOOTSTRAP_KEY")?;
    tracing::info!(org = %org.id, credits = args.bootstrap_credits, "created the default organization");
    Ok(generated.then_some(secret))
}

/// `webdata serve`.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_logs(&args.log_format);
    let store = open(&args.store).await?;
    let shown_key = bootstrap(&store, &args).await?;
    let mut config = Config::from_args(&args);
    config.blob_key = store
        .setting_or_init("blob_signing_key", webdata_core::store::generate_key)
        .await?;
    let config = Arc::new(config);
    let guard =
        webdata_engine::guard::NetworkGuard::from_setting(args.allow_private_networks.as_deref())
            .map_err(|e| anyhow::anyhow!("WEBDATA_ALLOW_PRIVATE_NETWORKS: {e}"))?;
    let resolver =
        webdata_engine::guard::OverrideResolver::parse(args.resolve.as_deref().unwrap_or_default())
            .map_err(|e| anyhow::anyhow!("WEBDATA_RESOLVE: {e}"))?;
    let engine = webdata_engine::Engine::with_resolver(guard.clone(), Arc::new(resolver))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let browser =
        webdata_engine::render::start_from_env(guard, args.webdriver_url.as_deref()).await;
    let engine = engine.with_browser(browser);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let kube_mode =
        crate::kube::Mode::parse(&args.kube).map_err(|e| anyhow::anyhow!("WEBDATA_KUBE: {e}"))?;
    let kube = if kube_mode.enabled() {
        let l = crate::kube::Launcher::connect(args.kube_namespace.clone(), args.kube_pool.clone())
            .await?;
        tracing::info!(namespace = %l.namespace, pool = %l.pool, "cluster mode: crawls run as CrawlJobs");
        Some(l)
    } else {
        None
    };
    // In cluster mode the pool's workers run crawls, not this process.
    let runner = if args.worker_concurrency > 0 && kube.is_none() {
        let cfg = webdata_engine::crawl::RunnerConfig {
            concurrency: args.worker_concurrency,
            worker_id: format!(
                "api-{}-{}",
                std::process::id(),
                webdata_core::store::new_id("w")
            ),
            ..Default::default()
        };
        let runner = webdata_engine::crawl::CrawlRunner::new(store.clone(), engine.clone(), cfg);
        tokio::spawn(runner.clone().run(stop_rx));
        Some(runner)
    } else {
        None
    };
    let dispatcher = crate::webhooks::Dispatcher::new(
        store.clone(),
        engine.guard().clone(),
        args.webhook_delay_scale,
    )?;
    tokio::spawn(Arc::new(dispatcher).run(stop_tx.subscribe()));
    let state = AppState {
        store: store.clone(),
        config: config.clone(),
        metrics: Arc::new(Metrics::default()),
        engine,
        runner,
        kube,
        search: search_provider(&args)?,
        model: chat_model(&args)?,
    };
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("could not listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    if let Some(key) = shown_key {
        eprintln!(
            "\nwebdata: created organization 'default' with {} credits.",
            args.bootstrap_credits
        );
        eprintln!("API key (shown once, store it now): {key}");
        eprintln!(
            "Try: curl -s http://{addr}/v1/team/credit-usage -H 'Authorization: Bearer {key}'\n"
        );
    }
    spawn_janitor(store.clone(), config.request_timeout.as_millis() as i64);
    tracing::info!(%addr, backend = ?store.backend(), "webdata listening");
    eprintln!("webdata listening on http://{addr}");
    axum::serve(listener, router(state))
        .with_graceful_shutdown(webdata_engine::shutdown::signal())
        .await?;
    let _ = stop_tx.send(true);
    Ok(())
}

/// The search provider `WEBDATA_SEARXNG_URL` names, if any.
fn search_provider(
    args: &ServeArgs,
) -> anyhow::Result<Option<Arc<dyn crate::services::search::SearchProvider>>> {
    let Some(url) = args.searxng_url.as_deref().filter(|u| !u.trim().is_empty()) else {
        return Ok(None);
    };
    let p = crate::services::search::Searxng::new(
        url,
        std::time::Duration::from_millis(args.search_timeout_ms.max(100)),
    )?;
    tracing::info!(provider = "searxng", "search enabled");
    Ok(Some(Arc::new(p)))
}

/// The extract model `WEBDATA_LLM_BASE_URL` and `WEBDATA_LLM_MODEL` name, if any.
fn chat_model(args: &ServeArgs) -> anyhow::Result<Option<Arc<crate::services::llm::ChatModel>>> {
    let Some(base) = args
        .llm_base_url
        .as_deref()
        .filter(|u| !u.trim().is_empty())
    else {
        return Ok(None);
    };
    let m = crate::services::llm::ChatModel::new(
        base,
        args.llm_model.as_deref().unwrap_or_default(),
        args.llm_api_key.clone(),
        std::time::Duration::from_millis(args.llm_timeout_ms.max(100)),
        args.llm_max_input_tokens,
    )?;
    tracing::info!(model = m.model(), "extract enabled");
    Ok(Some(Arc::new(m)))
}

/// Cached scrapes are kept this long (a larger `maxAge` finds nothing older).
const SCRAPE_CACHE_KEEP_MS: i64 = 7 * 24 * 60 * 60 * 1000;

fn spawn_janitor(store: Store, request_timeout_ms: i64) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            tick.tick().await;
            if let Err(e) = store
                .sweep_limits(webdata_core::store::idempotency_replay_window_ms())
                .await
            {
                tracing::warn!(error = %e, "sweep failed");
            }
            if let Err(e) = store.sweep_blobs().await {
                tracing::warn!(error = %e, "sweeping expired blobs failed");
            }
            if let Err(e) = store
                .brand_cache_sweep(
                    webdata_core::store::now_ms() - crate::services::brand::IMAGE_TTL_MS,
                )
                .await
            {
                tracing::warn!(error = %e, "sweeping the brand cache failed");
            }
            if let Err(e) = store.cache_sweep(SCRAPE_CACHE_KEEP_MS).await {
                tracing::warn!(error = %e, "sweeping the scrape cache failed");
            }
            if let Err(e) = store
                .release_stale_reservations(request_timeout_ms + 300_000)
                .await
            {
                tracing::warn!(error = %e, "releasing stale reservations failed");
            }
        }
    });
}

/// `webdata scrape URL`: the scrape engine, once, printing to stdout.
async fn scrape_once(args: ScrapeArgs) -> anyhow::Result<()> {
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
    let guard =
        webdata_engine::guard::NetworkGuard::from_setting(args.allow_private_networks.as_deref())
            .map_err(|e| anyhow::anyhow!("WEBDATA_ALLOW_PRIVATE_NETWORKS: {e}"))?;
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
