//! The state every handler shares: the store, configuration, metrics, the
//! engine, the crawl launcher and the providers.

use crate::config::Config;
use crate::metrics::Metrics;
use std::sync::Arc;
use webdata_core::Store;

/// Shared state: the store, configuration and metrics.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub config: Arc<Config>,
    pub metrics: Arc<Metrics>,
    pub engine: webdata_engine::Engine,
    /// The in-process crawl runner, woken when a crawl is created or cancelled.
    pub runner: Option<Arc<webdata_engine::crawl::CrawlRunner>>,
    /// Cluster mode: crawls are launched as CrawlJobs.
    pub kube: Option<crate::kube::Launcher>,
    /// The search provider (`WEBDATA_SEARXNG_URL`); none answers 501.
    pub search: Option<Arc<dyn crate::services::search::SearchProvider>>,
    /// The model extract asks (`WEBDATA_LLM_*`); none answers 501.
    pub model: Option<Arc<crate::services::llm::ChatModel>>,
    /// The whole application, for requests the service makes to its own
    /// `/v1` (the dashboard's playground), set once the router is built.
    pub loopback: Loopback,
}

/// The application's router, reachable from handlers without importing it.
#[derive(Clone, Default)]
pub struct Loopback(Arc<std::sync::OnceLock<axum::Router>>);

impl Loopback {
    /// Remembers the built application (the first call wins).
    pub fn set(&self, router: axum::Router) {
        let _ = self.0.set(router);
    }

    /// The application, once built.
    pub fn router(&self) -> Option<axum::Router> {
        self.0.get().cloned()
    }
}
