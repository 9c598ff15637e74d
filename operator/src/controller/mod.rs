//! The two controllers (level-triggered: every reconcile reads the store and
//! the cluster as they are now, so the operator can be killed and restarted
//! at any moment), their shared context, and the operator's metrics.

pub mod crawljob;
pub mod workerpool;

use std::collections::BTreeMap;
use std::sync::Mutex;
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

/// Counters and gauges for `/metrics`.
#[derive(Debug, Default)]
pub struct Metrics {
    values: Mutex<BTreeMap<String, f64>>,
}

impl Metrics {
    /// Sets a gauge (`name` may carry labels: `x{pool="a"}`).
    pub fn set(&self, name: &str, v: f64) {
        self.values
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), v);
    }

    /// Adds to a counter.
    pub fn inc(&self, name: &str) {
        *self
            .values
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(name.to_string())
            .or_default() += 1.0;
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let values = self.values.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        let mut typed = std::collections::HashSet::new();
        for (name, v) in values.iter() {
            let base = name.split('{').next().unwrap_or(name);
            if typed.insert(base.to_string()) {
                let kind = if base.ends_with("_total") {
                    "counter"
                } else {
                    "gauge"
                };
                out.push_str(&format!("# TYPE {base} {kind}\n"));
            }
            out.push_str(&format!("{name} {v}\n"));
        }
        out
    }
}

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
