//! The three controllers (level-triggered: every reconcile reads the store and
//! the cluster as they are now, so the operator can be killed and restarted
//! at any moment) and their shared context.

pub mod crawljob;
pub mod crawlschedule;
pub mod workerpool;

use std::time::Duration;

use kube::runtime::events::Recorder;
use kube::Client;
use webdata_core::Store;

use crate::build::PoolDefaults;

/// What went wrong in a reconcile (it is retried).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("store: {0}")]
    Store(#[from] webdata_core::StoreError),
    #[error("finalizer: {0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
    #[error("{0}")]
    Other(String),
}

/// The operator's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Organization charged for kubectl-made CrawlJobs without `spec.organization`.
    pub default_organization: Option<String>,
    /// How often running crawls are mirrored and busy pools re-scaled.
    pub sync_interval: Duration,
    /// How often idle pools and queued jobs are looked at again.
    pub idle_interval: Duration,
    pub pool_defaults: PoolDefaults,
}

pub use crate::metrics::Metrics;

/// What every reconcile gets.
pub struct Ctx {
    pub client: Client,
    pub store: Store,
    pub recorder: Recorder,
    pub settings: Settings,
    pub metrics: std::sync::Arc<Metrics>,
}

/// Now in unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A Kubernetes timestamp for now.
pub fn now_time() -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Time {
    k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::now())
}
