//! The application's state for in-process router tests: a fresh SQLite
//! store in the temp folder, a network guard that refuses private
//! addresses, no providers.

use std::sync::Arc;
use std::time::Duration;
use webdata_api::config::Config;
use webdata_api::metrics::Metrics;
use webdata_api::state::AppState;

/// State on `<tmp>/webdata-api-<name>-<pid>/t<timeout ms>.db`, requests
/// timing out after `timeout`, the admin API behind `admin_token`.
pub async fn state(name: &str, timeout: Duration, admin_token: Option<&str>) -> AppState {
    let dir = std::env::temp_dir().join(format!("webdata-api-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let store = webdata_core::Store::connect(&format!(
        "sqlite://{}/t{}.db",
        dir.display(),
        timeout.as_millis()
    ))
    .await
    .expect("store");
    AppState {
        store,
        config: Arc::new(Config {
            admin_token: admin_token.map(str::to_string),
            request_timeout: timeout,
            sse_keepalive: Duration::from_secs(15),
            sse_poll: Duration::from_millis(200),
            public_url: None,
            screenshot_ttl_ms: 86_400_000,
            brand_timeout: Duration::from_secs(30),
            blob_key: "test".into(),
            signup: true,
            free_credits: 500,
            smtp_url: None,
            smtp_from: "webdata <no-reply@localhost>".into(),
            cookie_secure: true,
            listen_url: None,
            tls: false,
        }),
        metrics: Arc::new(Metrics::default()),
        engine: webdata_engine::Engine::new(webdata_engine::guard::NetworkGuard::deny_private())
            .expect("engine"),
        runner: None,
        kube: None,
        search: None,
        model: None,
        loopback: Default::default(),
    }
}
