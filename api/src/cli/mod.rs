//! The `webdata` command line: `serve`, `keys …`, `orgs …`, `openapi`.

mod commands;
mod connect;
mod crawl;
mod llmstxt;
mod mcp;
mod scrape;
mod serve;
mod watch;

pub use commands::{BatchArgs, BrandArgs, MapArgs};
pub use connect::{ConnectArgs, Connection};
pub use crawl::{page_path, CrawlArgs};
pub use llmstxt::LlmsTxtArgs;
pub use mcp::McpArgs;
pub use watch::WatchArgs;

use crate::config::{ServeArgs, StoreArgs};
use anyhow::Context;
use clap::{Parser, Subcommand};
use webdata_core::store::{NewOrganization, OrgUpdate};
use webdata_core::Store;

pub use scrape::scrape_once;
pub use serve::serve;

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
    /// Scrape one URL and print its markdown (or --json): with the engine in
    /// this process, or through --server.
    Scrape(ScrapeArgs),
    /// Crawl a site into a folder of markdown files (Ctrl-C cancels; --resume continues).
    Crawl(Box<CrawlArgs>),
    /// List a site's URLs.
    Map(MapArgs),
    /// Scrape many URLs (one per line in FILE, or `-` for standard input).
    Batch(BatchArgs),
    /// A domain's brand: logos, colours, fonts, name and links.
    Brand(BrandArgs),
    /// Make a site's llms.txt: crawl it and print llms.txt (or llms-full.txt
    /// with --full), or write both files with --out DIR.
    Llmstxt(LlmsTxtArgs),
    /// Watch a page: scrape it every --every with change tracking and print
    /// what changed (a diff), until Ctrl-C or --count checks.
    Watch(WatchArgs),
    /// Serve the MCP tools over stdio, for desktop MCP hosts (Claude Desktop, Cursor, VS Code).
    Mcp(McpArgs),
    /// TLS helpers: `tls self-signed --out DIR` makes a certificate and key for local HTTPS.
    Tls {
        #[command(subcommand)]
        cmd: TlsCmd,
    },
    /// Dashboard accounts: `users create --org … --email … --role owner` bootstraps the first one.
    Users {
        #[command(subcommand)]
        cmd: UsersCmd,
    },
    /// Webhook signing secrets and endpoints.
    Webhooks {
        #[command(subcommand)]
        cmd: WebhooksCmd,
    },
}

/// `webdata tls …`
#[derive(Debug, Subcommand)]
pub enum TlsCmd {
    /// Write DIR/cert.pem and DIR/key.pem, self-signed (for local use only).
    SelfSigned {
        /// Where to write them.
        #[arg(long)]
        out: std::path::PathBuf,
        /// Names and addresses the certificate is for (default: localhost, 127.0.0.1, ::1).
        #[arg(long = "name", value_delimiter = ',')]
        names: Vec<String>,
    },
}

/// `webdata users …`
#[derive(Debug, Subcommand)]
pub enum UsersCmd {
    /// Create a dashboard account (or add an existing one) in an organization with a role.
    Create {
        #[command(flatten)]
        store: StoreArgs,
        /// Organization id or exact name.
        #[arg(long)]
        org: String,
        #[arg(long)]
        email: String,
        /// owner, admin or member.
        #[arg(long, default_value = "owner")]
        role: String,
        /// The password (at least 10 characters); generated and printed when absent.
        #[arg(long, env = "WEBDATA_USER_PASSWORD", hide_env_values = true)]
        password: Option<String>,
    },
    /// List an organization's members.
    List {
        #[command(flatten)]
        store: StoreArgs,
        #[arg(long)]
        org: String,
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

/// A page address as typed in a terminal: one without a scheme
/// (`example.com/docs`) is read as `https://`, as browsers and other
/// scraping tools do; anything with a scheme is left for the API to judge.
pub(crate) fn page_url(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("is empty".into());
    }
    if s.contains("://") || s.chars().any(char::is_whitespace) {
        return Ok(s.to_string());
    }
    Ok(format!("https://{}", s.trim_start_matches('/')))
}

/// `webdata scrape URL`.
#[derive(Debug, clap::Args)]
pub struct ScrapeArgs {
    /// The page to scrape (`example.com/page` means https://example.com/page).
    #[arg(value_parser = page_url)]
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
    #[command(flatten)]
    pub connect: ConnectArgs,
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

/// An organization by id or exact name.
async fn find_org(
    store: &Store,
    id_or_name: &str,
) -> anyhow::Result<webdata_core::store::Organization> {
    if let Ok(o) = store.get_org(id_or_name).await {
        return Ok(o);
    }
    let matches: Vec<_> = store
        .list_orgs()
        .await?
        .into_iter()
        .filter(|o| o.name == id_or_name)
        .collect();
    match matches.len() {
        1 => Ok(matches.into_iter().next().context("one match")?),
        0 => anyhow::bail!("no organization has the id or name {id_or_name:?}"),
        n => anyhow::bail!("{n} organizations are named {id_or_name:?}; pass the id"),
    }
}

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve(*args).await,
        Command::Openapi => print_json(&crate::app::openapi_document()),
        Command::Scrape(args) if args.connect.server.is_some() => {
            commands::scrape_remote(&args).await
        }
        Command::Scrape(args) => scrape_once(args).await,
        Command::Crawl(args) => crawl::crawl(*args).await,
        Command::Map(args) => commands::map(args).await,
        Command::Batch(args) => commands::batch(args).await,
        Command::Brand(args) => commands::brand(args).await,
        Command::Watch(args) => watch::watch(args).await,
        Command::Llmstxt(args) => llmstxt::llmstxt(args).await,
        Command::Mcp(args) => mcp::run(args).await,
        Command::Tls {
            cmd: TlsCmd::SelfSigned { out, names },
        } => serve::self_signed(&out, &names),
        Command::Users { cmd } => match cmd {
            UsersCmd::Create {
                store,
                org,
                email,
                role,
                password,
            } => {
                let store = open(&store).await?;
                let org = find_org(&store, &org).await?;
                let role = webdata_core::store::Role::parse(&role)
                    .context("--role is owner, admin or member")?;
                let (user, generated) = match store.user_by_email(&email).await? {
                    Some(u) => (u, None),
                    None => {
                        let (pw, generated) = match password {
                            Some(p) => (p, None),
                            None => {
                                let p = webdata_core::store::random_token();
                                (p.clone(), Some(p))
                            }
                        };
                        if pw.chars().count() < crate::dashboard::MIN_PASSWORD {
                            anyhow::bail!("the password needs at least 10 characters");
                        }
                        let hash = crate::dashboard::hash_password(&pw)?;
                        (store.create_user(&email, &hash).await?, generated)
                    }
                };
                store.set_membership(&org.id, &user.id, role).await?;
                store
                    .audit(
                        &org.id,
                        None,
                        "member.added",
                        &format!("{} ({}, CLI)", user.email, role.as_str()),
                    )
                    .await?;
                print_json(&serde_json::json!({
                    "user": user,
                    "organization": org.id,
                    "role": role,
                    "password": generated,
                }))
            }
            UsersCmd::List { store, org } => {
                let store = open(&store).await?;
                let org = find_org(&store, &org).await?;
                print_json(&store.members(&org.id).await?)
            }
        },
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
                    .deliveries(&org, Some(webdata_core::store::DeliveryState::Dead), 100)
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
