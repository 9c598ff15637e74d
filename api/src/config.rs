//! Configuration of `webdata serve`: environment variables with the same
//! names as the flags (see README, "Configuration").

use clap::Args;
use std::net::SocketAddr;
use std::time::Duration;

/// Settings shared by every command that opens the store.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// `sqlite://path` (default) or `postgres://…`.
    #[arg(
        long,
        env = "WEBDATA_DATABASE_URL",
        default_value = "sqlite://webdata.db"
    )]
    pub database_url: String,
}

/// Settings of `webdata serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Address to listen on.
    #[arg(long, env = "WEBDATA_LISTEN", default_value = "127.0.0.1:3002")]
    pub listen: SocketAddr,
    /// On an empty store: create a default organization with this API key.
    #[arg(long, env = "WEBDATA_BOOTSTRAP_KEY")]
    pub bootstrap_key: Option<String>,
    /// Credits of the bootstrap organization.
    #[arg(long, env = "WEBDATA_BOOTSTRAP_CREDITS", default_value_t = 1000)]
    pub bootstrap_credits: i64,
    /// Bearer token of the `/admin/v1` API; unset disables it.
    #[arg(long, env = "WEBDATA_ADMIN_TOKEN")]
    pub admin_token: Option<String>,
    /// Private networks the service may reach: comma-separated CIDRs, or `true`.
    #[arg(long, env = "WEBDATA_ALLOW_PRIVATE_NETWORKS")]
    pub allow_private_networks: Option<String>,
    /// Fixed DNS answers, `host=ip[,host=ip…]` (like curl's `--resolve`);
    /// the network guard still applies to the addresses.
    #[arg(long, env = "WEBDATA_RESOLVE")]
    pub resolve: Option<String>,
    /// Launch crawls as CrawlJobs: `on`, `off`, or `auto` (on inside a pod).
    #[arg(long, env = "WEBDATA_KUBE", default_value = "auto")]
    pub kube: String,
    /// Namespace of the CrawlJobs (default: the pod's, else the kubeconfig's).
    #[arg(long, env = "WEBDATA_KUBE_NAMESPACE")]
    pub kube_namespace: Option<String>,
    /// WorkerPool that runs the API's crawls in cluster mode.
    #[arg(long, env = "WEBDATA_KUBE_POOL", default_value = "default")]
    pub kube_pool: String,
    /// A WebDriver endpoint (Selenium or chromedriver) for the render tier.
    #[arg(long, env = "WEBDATA_WEBDRIVER_URL")]
    pub webdriver_url: Option<String>,
    /// Longest a request may run before it is answered with `internal` (ms).
    #[arg(long, env = "WEBDATA_REQUEST_TIMEOUT_MS", default_value_t = 90_000)]
    pub request_timeout_ms: u64,
    /// Interval of `: keep-alive` comments on event streams (ms).
    #[arg(long, env = "WEBDATA_SSE_KEEPALIVE_MS", default_value_t = 15_000)]
    pub sse_keepalive_ms: u64,
    /// Pages the in-process crawl workers scrape at once (0 = no in-process workers).
    #[arg(long, env = "WEBDATA_WORKER_CONCURRENCY", default_value_t = 16)]
    pub worker_concurrency: usize,
    /// Multiplies webhook retry delays (10 s, 20 s, … 1 h); tests use e.g. 0.001.
    #[arg(long, env = "WEBDATA_WEBHOOK_DELAY_SCALE", default_value_t = 1.0)]
    pub webhook_delay_scale: f64,
    /// Base URL clients reach this service at, for screenshot links (default: the request's Host).
    #[arg(long, env = "WEBDATA_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// How long screenshot links work (ms).
    #[arg(long, env = "WEBDATA_SCREENSHOT_TTL_MS", default_value_t = 86_400_000)]
    pub screenshot_ttl_ms: i64,
    /// How often the scheduler looks for due scheduled runs (ms); 0 runs no
    /// scheduler in this process (another replica's starts the runs).
    #[arg(long, env = "WEBDATA_SCHEDULER_TICK_MS", default_value_t = 1000)]
    pub scheduler_tick_ms: u64,
    /// How long change tracking keeps a page's snapshot after its last
    /// scrape (days); an older page compares as `new`.
    #[arg(long, env = "WEBDATA_CHANGE_RETENTION_DAYS", default_value_t = 90)]
    pub change_retention_days: i64,
    /// Longest a brand lookup may spend reading the home page (ms).
    #[arg(long, env = "WEBDATA_BRAND_TIMEOUT_MS", default_value_t = 30_000)]
    pub brand_timeout_ms: u64,
    /// Base URL of a SearXNG instance (with `json` in `search.formats`) for `POST /v1/search`; unset answers 501 `not_configured`.
    #[arg(long, env = "WEBDATA_SEARXNG_URL")]
    pub searxng_url: Option<String>,
    /// Longest a search provider call may take (ms).
    #[arg(long, env = "WEBDATA_SEARCH_TIMEOUT_MS", default_value_t = 15_000)]
    pub search_timeout_ms: u64,
    /// Base URL of an OpenAI-compatible API (`…/v1`) for `POST /v1/extract`; unset answers 501 `not_configured`.
    #[arg(long, env = "WEBDATA_LLM_BASE_URL")]
    pub llm_base_url: Option<String>,
    /// Model name sent to the chat-completions endpoint (required with the base URL).
    #[arg(long, env = "WEBDATA_LLM_MODEL")]
    pub llm_model: Option<String>,
    /// Bearer key for the model endpoint (optional for local servers).
    #[arg(long, env = "WEBDATA_LLM_API_KEY", hide_env_values = true)]
    pub llm_api_key: Option<String>,
    /// Longest one chat-completions call may take (ms).
    #[arg(long, env = "WEBDATA_LLM_TIMEOUT_MS", default_value_t = 60_000)]
    pub llm_timeout_ms: u64,
    /// Tokens of page content sent to the model per extract, shared by its pages.
    #[arg(long, env = "WEBDATA_LLM_MAX_INPUT_TOKENS", default_value_t = 24_000)]
    pub llm_max_input_tokens: usize,
    /// The dashboard's sign-up page: `on` (anyone may create an account and a free organization) or `off` (invitations and `webdata users create` only).
    #[arg(long, env = "WEBDATA_SIGNUP", default_value = "on")]
    pub signup: String,
    /// Credits of an organization made by signing up (the free plan, no card).
    #[arg(long, env = "WEBDATA_FREE_CREDITS", default_value_t = 500)]
    pub free_credits: i64,
    /// SMTP server for the dashboard's mail (password resets): `smtp://[user:pass@]host:port` or `smtps://…`; unset prints the mail to the log.
    #[arg(long, env = "WEBDATA_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// Sender of the dashboard's mail.
    #[arg(
        long,
        env = "WEBDATA_SMTP_FROM",
        default_value = "webdata <no-reply@localhost>"
    )]
    pub smtp_from: String,
    /// Mark dashboard cookies `Secure` (browsers then send them only over HTTPS or to localhost); `false` only for plain-HTTP intranets.
    #[arg(long, env = "WEBDATA_COOKIE_SECURE", default_value_t = true, action = clap::ArgAction::Set)]
    pub cookie_secure: bool,
    /// On start: make sure a dashboard account with this e-mail exists and owns the first organization.
    #[arg(long, env = "WEBDATA_BOOTSTRAP_OWNER")]
    pub bootstrap_owner: Option<String>,
    /// The password of the bootstrap owner (set when the account is created).
    #[arg(long, env = "WEBDATA_BOOTSTRAP_OWNER_PASSWORD", hide_env_values = true)]
    pub bootstrap_owner_password: Option<String>,
    /// Second listener serving the Firecrawl-compatible API at its root (`/v1/…`, `/v2/…` in Firecrawl's shapes), for clients that drop a path prefix; unset: off (the same API is always under `/firecrawl` on the main listener).
    #[arg(long, env = "WEBDATA_FIRECRAWL_LISTEN")]
    pub firecrawl_listen: Option<SocketAddr>,
    /// Egress allow-list: only these hosts (`example.com`, `*.example.com`,
    /// `.example.com`) and addresses/CIDRs are fetched (comma-separated).
    #[arg(long, env = "WEBDATA_EGRESS_ALLOW")]
    pub egress_allow: Option<String>,
    /// Egress deny-list: these hosts and addresses/CIDRs are never fetched.
    #[arg(long, env = "WEBDATA_EGRESS_DENY")]
    pub egress_deny: Option<String>,
    /// PEM certificate chain: `serve` terminates TLS itself (with
    /// `WEBDATA_TLS_KEY`; reloaded when either file changes).
    #[arg(long, env = "WEBDATA_TLS_CERT")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of `WEBDATA_TLS_CERT`.
    #[arg(long, env = "WEBDATA_TLS_KEY")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Log format: `text` or `json`.
    #[arg(long, env = "WEBDATA_LOG_FORMAT", default_value = "text")]
    pub log_format: String,
}

/// The resolved configuration the running service uses.
#[derive(Debug, Clone)]
pub struct Config {
    pub admin_token: Option<String>,
    pub request_timeout: Duration,
    pub sse_keepalive: Duration,
    pub sse_poll: Duration,
    pub public_url: Option<String>,
    pub screenshot_ttl_ms: i64,
    /// How long a brand lookup may spend on the home page.
    pub brand_timeout: Duration,
    /// Key signing blob links (kept in the store, shared by replicas).
    pub blob_key: String,
    /// The dashboard's sign-up page is open.
    pub signup: bool,
    /// Credits of a signed-up organization.
    pub free_credits: i64,
    /// SMTP URL for mail; none logs it.
    pub smtp_url: Option<String>,
    /// Sender of mail.
    pub smtp_from: String,
    /// Dashboard cookies are `Secure`.
    pub cookie_secure: bool,
    /// `http://<address it listens on>`, set by `serve` once bound.
    pub listen_url: Option<String>,
    /// `serve` terminates TLS (answers carry `Strict-Transport-Security`).
    pub tls: bool,
}

impl Config {
    /// From the serve arguments.
    pub fn from_args(a: &ServeArgs) -> Self {
        Config {
            admin_token: a.admin_token.clone().filter(|t| !t.is_empty()),
            request_timeout: Duration::from_millis(a.request_timeout_ms.max(1000)),
            sse_keepalive: Duration::from_millis(a.sse_keepalive_ms.max(100)),
            sse_poll: DEFAULT_SSE_POLL,
            public_url: a.public_url.clone().filter(|u| !u.is_empty()),
            screenshot_ttl_ms: a.screenshot_ttl_ms.max(1000),
            brand_timeout: Duration::from_millis(a.brand_timeout_ms.max(100)),
            blob_key: String::new(),
            signup: !matches!(
                a.signup.trim().to_ascii_lowercase().as_str(),
                "off" | "false" | "0" | "no"
            ),
            free_credits: a.free_credits.max(0),
            smtp_url: a.smtp_url.clone().filter(|u| !u.is_empty()),
            smtp_from: a.smtp_from.clone(),
            cookie_secure: a.cookie_secure,
            listen_url: None,
            tls: a.tls_cert.is_some(),
        }
    }
}

/// How often a stream looks for new events when idle.
pub const DEFAULT_SSE_POLL: Duration = Duration::from_millis(200);
