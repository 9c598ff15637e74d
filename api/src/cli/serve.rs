//! `webdata serve`: logs, the store and its bootstrap organization, the
//! engine, providers, crawl runner, webhook dispatcher and janitor, then
//! the HTTP server until a shutdown signal.

use super::open;
use crate::app::router;
use crate::config::{Config, ServeArgs};
use crate::metrics::Metrics;
use crate::state::AppState;
use anyhow::Context;
use std::sync::Arc;
use webdata_core::store::NewOrganization;
use webdata_core::Store;

pub(crate) fn init_logs(format: &str) {
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

/// Makes sure the `WEBDATA_BOOTSTRAP_OWNER` account exists and owns the
/// first organization (`make run` prints its login).
async fn bootstrap_owner(store: &Store, args: &ServeArgs) -> anyhow::Result<()> {
    let Some(email) = args.bootstrap_owner.as_deref().filter(|e| !e.is_empty()) else {
        return Ok(());
    };
    let Some(org) = store.list_orgs().await?.into_iter().next() else {
        return Ok(());
    };
    let user = match store.user_by_email(email).await? {
        Some(u) => u,
        None => {
            let password = args
                .bootstrap_owner_password
                .as_deref()
                .filter(|p| p.chars().count() >= crate::dashboard::MIN_PASSWORD)
                .context("WEBDATA_BOOTSTRAP_OWNER_PASSWORD must have at least 10 characters")?;
            let u = store
                .create_user(email, &crate::dashboard::hash_password(password)?)
                .await?;
            tracing::info!(email, org = %org.id, "created the bootstrap owner");
            u
        }
    };
    if store.role_in(&org.id, &user.id).await?.is_none() {
        store
            .set_membership(&org.id, &user.id, webdata_core::store::Role::Owner)
            .await?;
    }
    Ok(())
}

/// A built application: its state and router, the signal that stops its
/// background tasks, and the bootstrap key when one was generated.
pub(crate) struct Built {
    pub state: AppState,
    pub app: axum::Router,
    pub stop: tokio::sync::watch::Sender<bool>,
    pub shown_key: Option<String>,
}

/// Opens the store and builds everything `serve` runs, without listening:
/// the engine, browser, crawl runner, webhook dispatcher, janitor and the
/// router. `listen_url` is where the API is reachable (for links in mail).
pub(crate) async fn build(args: &ServeArgs, listen_url: Option<String>) -> anyhow::Result<Built> {
    let store = open(&args.store).await?;
    let shown_key = bootstrap(&store, args).await?;
    bootstrap_owner(&store, args).await?;
    let mut config = Config::from_args(args);
    config.listen_url = listen_url;
    config.blob_key = store
        .setting_or_init("blob_signing_key", webdata_core::store::generate_key)
        .await?;
    let config = Arc::new(config);
    let guard =
        webdata_engine::guard::NetworkGuard::from_setting(args.allow_private_networks.as_deref())
            .map_err(|e| anyhow::anyhow!("WEBDATA_ALLOW_PRIVATE_NETWORKS: {e}"))?
            .with_egress_settings(args.egress_allow.as_deref(), args.egress_deny.as_deref())?;
    let resolver =
        webdata_engine::guard::OverrideResolver::parse(args.resolve.as_deref().unwrap_or_default())
            .map_err(|e| anyhow::anyhow!("WEBDATA_RESOLVE: {e}"))?;
    let resolver: Arc<dyn webdata_engine::guard::Resolve> = Arc::new(resolver);
    let engine = webdata_engine::Engine::with_resolver(guard.clone(), resolver.clone())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // The browser's requests resolve through the same pinned names as fetches.
    let browser = webdata_engine::render::start_from_env(
        guard.with_resolver(resolver),
        args.webdriver_url.as_deref(),
    )
    .await;
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
        search: search_provider(args)?,
        model: chat_model(args)?,
        loopback: Default::default(),
    };
    if args.scheduler_tick_ms > 0 {
        crate::services::schedules::spawn(
            state.clone(),
            std::time::Duration::from_millis(args.scheduler_tick_ms.max(50)),
        );
    }
    spawn_janitor(
        store,
        config.request_timeout.as_millis() as i64,
        args.change_retention_days.max(1) * 86_400_000,
    );
    let app = router(state.clone());
    Ok(Built {
        state,
        app,
        stop: stop_tx,
        shown_key,
    })
}

/// `webdata serve`.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    init_logs(&args.log_format);
    let tls_pair = tls_files(&args)?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("could not listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let Built {
        state,
        app,
        stop: stop_tx,
        shown_key,
    } = build(&args, Some(format!("http://{addr}"))).await?;
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
    if let Some(fc) = args.firecrawl_listen {
        let l = tokio::net::TcpListener::bind(fc)
            .await
            .with_context(|| format!("could not listen on {fc} (WEBDATA_FIRECRAWL_LISTEN)"))?;
        let fc_addr = l.local_addr()?;
        let fc_app = crate::firecrawl::root_router(state.clone());
        tokio::spawn(async move {
            let served = serve_http(l, fc_app).await;
            if let Err(e) = served {
                tracing::error!(error = %e, "the Firecrawl listener stopped");
            }
        });
        tracing::info!(addr = %fc_addr, "Firecrawl-compatible API listening");
        eprintln!("firecrawl API listening on http://{fc_addr}");
    }
    match tls_pair {
        None => {
            tracing::info!(%addr, backend = ?state.store.backend(), "webdata listening");
            eprintln!("webdata listening on http://{addr}");
            serve_http(listener, app).await?;
        }
        Some((cert, key)) => {
            let _ = rustls::crypto::ring::default_provider().install_default();
            let tls = axum_server::tls_rustls::RustlsConfig::from_pem_file(&cert, &key)
                .await
                .with_context(|| {
                    format!(
                        "WEBDATA_TLS_CERT / WEBDATA_TLS_KEY: could not load {} and {}",
                        cert.display(),
                        key.display()
                    )
                })?;
            tokio::spawn(reload_tls(tls.clone(), cert, key));
            let handle = axum_server::Handle::new();
            let on_signal = handle.clone();
            tokio::spawn(async move {
                webdata_engine::shutdown::signal().await;
                on_signal.graceful_shutdown(Some(std::time::Duration::from_secs(30)));
            });
            tracing::info!(%addr, backend = ?state.store.backend(), "webdata listening (TLS)");
            eprintln!("webdata listening on https://{addr}");
            let mut server = axum_server::from_tcp_rustls(listener.into_std()?, tls)?;
            server
                .http_builder()
                .http1()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            server
                .handle(handle)
                .serve(app.into_make_service_with_connect_info::<std::net::SocketAddr>())
                .await?;
        }
    }
    let _ = stop_tx.send(true);
    Ok(())
}

/// A client must send a whole request head within this, or its connection
/// is closed (slow-loris clients are shed instead of holding sockets).
pub const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a shutdown waits for open connections to finish.
const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Serves `app` on `listener` (HTTP/1 and HTTP/2) until a shutdown signal,
/// like `axum::serve` but with [`HEADER_READ_TIMEOUT`] on HTTP/1 heads
/// (`axum::serve` sets no timer, so a head trickled byte by byte holds its
/// connection for ever).
async fn serve_http(listener: tokio::net::TcpListener, app: axum::Router) -> anyhow::Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use tower::{Service, ServiceExt};
    let mut make = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    builder.http2().enable_connect_protocol();
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let signal = webdata_engine::shutdown::signal();
    tokio::pin!(signal);
    loop {
        let (stream, remote) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut signal => break,
        };
        let service = match make.call(remote).await {
            Ok(s) => s,
            Err(e) => match e {},
        };
        let service = hyper_util::service::TowerToHyperService::new(service.map_request(
            |req: axum::http::Request<hyper::body::Incoming>| req.map(axum::body::Body::new),
        ));
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::trace!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("open connections did not finish within the drain timeout");
    }
    Ok(())
}

/// The certificate and key files, when TLS is configured (both or neither).
fn tls_files(args: &ServeArgs) -> anyhow::Result<Option<(std::path::PathBuf, std::path::PathBuf)>> {
    match (&args.tls_cert, &args.tls_key) {
        (None, None) => Ok(None),
        (Some(c), Some(k)) => Ok(Some((c.clone(), k.clone()))),
        _ => anyhow::bail!(
            "WEBDATA_TLS_CERT and WEBDATA_TLS_KEY go together: set both (a PEM certificate chain and its key) or neither"
        ),
    }
}

/// How often the certificate files are looked at for a change.
const TLS_RELOAD_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Reloads the certificate and key when either file changes (a renewed
/// certificate is served to new connections without a restart); a pair
/// that does not load is logged and the previous one kept.
async fn reload_tls(
    tls: axum_server::tls_rustls::RustlsConfig,
    cert: std::path::PathBuf,
    key: std::path::PathBuf,
) {
    let stamp = |p: &std::path::Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .map(|t| (t, std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)))
    };
    let mut seen = (stamp(&cert), stamp(&key));
    loop {
        tokio::time::sleep(TLS_RELOAD_EVERY).await;
        let now = (stamp(&cert), stamp(&key));
        if now == seen {
            continue;
        }
        match tls.reload_from_pem_file(&cert, &key).await {
            Ok(()) => {
                tracing::info!(cert = %cert.display(), "TLS certificate reloaded");
                seen = now;
            }
            // Half-written files (a renewal in progress) are tried again
            // on the next look.
            Err(e) => {
                tracing::warn!(error = %e, cert = %cert.display(), "the new TLS certificate did not load; still serving the previous one")
            }
        }
    }
}

/// `webdata tls self-signed`: a certificate and key for local HTTPS.
pub fn self_signed(out: &std::path::Path, names: &[String]) -> anyhow::Result<()> {
    let names = if names.is_empty() {
        vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
            "::1".to_string(),
        ]
    } else {
        names.to_vec()
    };
    let certified = rcgen::generate_simple_self_signed(names.clone())
        .context("generating the self-signed certificate")?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let cert = out.join("cert.pem");
    let key = out.join("key.pem");
    std::fs::write(&cert, certified.cert.pem())
        .with_context(|| format!("writing {}", cert.display()))?;
    write_private(&key, certified.signing_key.serialize_pem().as_bytes())?;
    eprintln!(
        "wrote {} and {} (self-signed for {}); serve with WEBDATA_TLS_CERT={} WEBDATA_TLS_KEY={}",
        cert.display(),
        key.display(),
        names.join(", "),
        cert.display(),
        key.display()
    );
    Ok(())
}

/// Writes a file only its owner can read.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("writing {}", path.display()))
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

fn spawn_janitor(store: Store, request_timeout_ms: i64, change_keep_ms: i64) {
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
            if let Err(e) = store.sweep_change_snapshots(change_keep_ms).await {
                tracing::warn!(error = %e, "sweeping change-tracking snapshots failed");
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
/// Cached scrapes are kept this long (a larger `maxAge` finds nothing older).
const SCRAPE_CACHE_KEEP_MS: i64 = 7 * 24 * 60 * 60 * 1000;
