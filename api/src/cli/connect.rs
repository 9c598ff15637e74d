//! Where the CLI's commands (and `webdata mcp`) send their work: a server
//! (`--server URL` or `WEBDATA_URL`, with `WEBDATA_API_KEY`), or else the
//! embedded store, run in this process with its own crawl workers: no
//! server, no key, the same one-binary promise as `make run`.

use super::serve::{build, Built};
use crate::client::ApiClient;
use crate::config::ServeArgs;
use anyhow::Context;
use clap::Parser;
use webdata_core::store::NewOrganization;
use webdata_core::Store;

/// The flags every client command shares.
#[derive(Debug, Clone, clap::Args)]
pub struct ConnectArgs {
    /// A webdata server to use (e.g. http://127.0.0.1:3002) instead of the embedded store.
    #[arg(long, env = "WEBDATA_URL", global = true)]
    pub server: Option<String>,
    /// The API key for --server (create one in the dashboard or with `webdata keys create`).
    #[arg(long, env = "WEBDATA_API_KEY", hide_env_values = true, global = true)]
    pub api_key: Option<String>,
    /// The embedded store when no --server is given
    /// (default: sqlite://$XDG_DATA_HOME/webdata/webdata.db, i.e. ~/.local/share/webdata).
    #[arg(long, env = "WEBDATA_DATABASE_URL", global = true)]
    pub database_url: Option<String>,
    /// Private networks the embedded engine may reach (CIDRs or `true`).
    #[arg(long, env = "WEBDATA_ALLOW_PRIVATE_NETWORKS", global = true)]
    pub allow_private_networks: Option<String>,
}

/// An open connection: the client, and the embedded application when
/// there is one (stopped by [`Connection::close`]).
pub struct Connection {
    pub client: ApiClient,
    embedded: Option<tokio::sync::watch::Sender<bool>>,
}

/// Every `WEBDATA_*` setting of `serve`, from the environment and defaults.
#[derive(Parser)]
struct ServeEnv {
    #[command(flatten)]
    args: ServeArgs,
}

/// The name of the organization the embedded CLI runs as.
pub const LOCAL_ORG: &str = "local (CLI)";

impl Connection {
    /// Connects to `--server`, or starts the embedded store.
    pub async fn open(args: &ConnectArgs) -> anyhow::Result<Connection> {
        if let Some(server) = args.server.as_deref().filter(|s| !s.trim().is_empty()) {
            let key = args
                .api_key
                .as_deref()
                .filter(|k| !k.trim().is_empty())
                .with_context(|| {
                    format!(
                        "--server {server} needs an API key: set WEBDATA_API_KEY or pass --api-key \
                         (create one in the dashboard under API keys, or with `webdata keys create`)"
                    )
                })?;
            return Ok(Connection {
                client: ApiClient::remote(server, key.trim())?,
                embedded: None,
            });
        }
        quiet_logs();
        let mut serve = ServeEnv::try_parse_from(["webdata"])
            .map_err(|e| anyhow::anyhow!("a WEBDATA_* setting is invalid: {e}"))?
            .args;
        serve.store.database_url = match &args.database_url {
            Some(u) => u.clone(),
            None => default_store()?,
        };
        serve.allow_private_networks = args.allow_private_networks.clone();
        // The embedded store gets no bootstrap organization of its own: the
        // CLI runs as its local organization.
        serve.bootstrap_owner = None;
        let Built {
            state, app, stop, ..
        } = build(&serve, None)
            .await
            .with_context(|| format!("opening the embedded store {}", serve.store.database_url))?;
        let key = local_key(&state.store).await?;
        Ok(Connection {
            client: ApiClient::local(app, key),
            embedded: Some(stop),
        })
    }

    /// Whether the work runs in this process.
    pub fn is_embedded(&self) -> bool {
        self.embedded.is_some()
    }

    /// Stops the embedded application's workers (pages they hold are
    /// released by their leases and picked up on the next start).
    pub fn close(self) {
        if let Some(stop) = self.embedded {
            let _ = stop.send(true);
        }
    }
}

/// Logs go to stderr at `warn` unless `RUST_LOG` says otherwise, so they do
/// not drown the output and progress.
pub fn quiet_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,sqlx=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// `sqlite://$XDG_DATA_HOME/webdata/webdata.db` (or `~/.local/share/…`),
/// its folder created.
fn default_store() -> anyhow::Result<String> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/share"))
        })
        .context("neither XDG_DATA_HOME nor HOME is set: pass --database-url sqlite://PATH")?;
    let dir = base.join("webdata");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(format!("sqlite://{}", dir.join("webdata.db").display()))
}

/// The embedded CLI's own key: made once, with its organization, and kept
/// in the store's settings.
async fn local_key(store: &Store) -> anyhow::Result<String> {
    let secret = store
        .setting_or_init("cli_local_key", webdata_core::store::generate_key)
        .await?;
    if store.find_key_by_secret(&secret).await?.is_none() {
        let org = store
            .create_org(&NewOrganization {
                name: LOCAL_ORG.into(),
                // Local work has no bill: the ledger still records every page.
                credits: 1_000_000_000,
                ..Default::default()
            })
            .await?;
        store
            .create_key_with_secret(&org.id, "cli", &secret)
            .await?;
    }
    Ok(secret)
}
