//! Cluster mode (`WEBDATA_KUBE`): POST /v1/crawl stores the crawl and
//! creates a `CrawlJob` named after it, which the operator admits and its
//! WorkerPool's workers run; DELETE also sets the CrawlJob's `spec.cancel`.
//! GET, SSE and webhooks read the store as on one machine.

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::Client;
use std::collections::BTreeMap;
use webdata_core::store::CrawlRow;
use webdata_core::types::CrawlRequest;
use webdata_crd::{
    job_name, CrawlJob, CrawlJobSpec, CRAWL_ID_ANNOTATION, LAUNCHED_BY_LABEL,
    ORGANIZATION_ANNOTATION,
};

/// Whether to launch crawls as CrawlJobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    On,
    Off,
    /// On when running in a pod (`KUBERNETES_SERVICE_HOST` is set).
    Auto,
}

impl Mode {
    /// Parses `on`/`off`/`auto` (and true/false).
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "on" | "true" | "1" => Ok(Mode::On),
            "off" | "false" | "0" => Ok(Mode::Off),
            "auto" | "" => Ok(Mode::Auto),
            other => Err(format!("`{other}` is not on, off or auto")),
        }
    }

    /// The decision for this process.
    pub fn enabled(self) -> bool {
        match self {
            Mode::On => true,
            Mode::Off => false,
            Mode::Auto => std::env::var_os("KUBERNETES_SERVICE_HOST").is_some(),
        }
    }
}

/// Creates and cancels CrawlJobs.
#[derive(Clone)]
pub struct Launcher {
    client: Client,
    /// Namespace of the CrawlJobs (the operator's).
    pub namespace: String,
    /// WorkerPool of API crawls.
    pub pool: String,
}

impl Launcher {
    /// A launcher from in-cluster config or KUBECONFIG.
    pub async fn connect(namespace: Option<String>, pool: String) -> anyhow::Result<Launcher> {
        let client = Client::try_default().await.map_err(|e| {
            anyhow::anyhow!("WEBDATA_KUBE is on but there is no Kubernetes API (in-cluster config or KUBECONFIG): {e}")
        })?;
        let namespace = namespace
            .or_else(|| {
                std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
                    .ok()
                    .map(|s| s.trim().to_string())
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| client.default_namespace().to_string());
        Ok(Launcher {
            client,
            namespace,
            pool,
        })
    }

    fn api(&self) -> Api<CrawlJob> {
        Api::namespaced(self.client.clone(), &self.namespace)
    }

    /// The CrawlJob of a stored crawl.
    pub fn job_for(&self, crawl: &CrawlRow, req: &CrawlRequest) -> CrawlJob {
        let mut job = CrawlJob::new(
            &job_name(&crawl.id),
            CrawlJobSpec::from_request(req, &crawl.pool),
        );
        job.metadata.namespace = Some(self.namespace.clone());
        job.metadata.labels = Some(BTreeMap::from([(
            LAUNCHED_BY_LABEL.to_string(),
            "api".to_string(),
        )]));
        job.metadata.annotations = Some(BTreeMap::from([
            (CRAWL_ID_ANNOTATION.to_string(), crawl.id.clone()),
            (ORGANIZATION_ANNOTATION.to_string(), crawl.org_id.clone()),
        ]));
        job
    }

    /// Creates the CrawlJob of a stored crawl.
    pub async fn launch(&self, crawl: &CrawlRow, req: &CrawlRequest) -> Result<(), String> {
        let job = self.job_for(crawl, req);
        self.api()
            .create(&PostParams::default(), &job)
            .await
            .map(|_| ())
            .map_err(|e| {
                format!(
                    "creating CrawlJob {} in namespace {} failed: {e}",
                    job_name(&crawl.id),
                    self.namespace
                )
            })
    }

    /// Sets `spec.cancel` on a crawl's CrawlJob.
    pub async fn cancel(&self, crawl_id: &str) -> Result<(), String> {
        let patch = serde_json::json!({ "spec": { "cancel": true } });
        self.api()
            .patch(
                &job_name(crawl_id),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
