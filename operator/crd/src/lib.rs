//! The custom resources of group `webdata.io`: `CrawlJob` (a crawl, as
//! kubectl users and the API's cluster mode create it), `WorkerPool`
//! (the workers and browsers that run crawls) and `CrawlSchedule` (a crawl
//! run on a schedule with change tracking, as a CronJob runs Jobs). `webdata-operator crd`
//! prints their CustomResourceDefinitions; `crds/` holds that output.

// kube's `printcolumn(...)` attributes repeat `type_ = "integer"`, which clippy
// mistakes for duplicated attributes.
#![allow(clippy::duplicated_attributes)]

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, CustomResourceExt, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use webdata_core::types::{
    ConcurrencyPolicy, CrawlRequest, ScrapeOptions, SitemapMode, WebhookSpec,
};

/// Label on CrawlJobs the API created for a POST /v1/crawl.
pub const LAUNCHED_BY_LABEL: &str = "webdata.io/launched-by";
/// Annotation naming the crawl a CrawlJob mirrors (set by the API).
pub const CRAWL_ID_ANNOTATION: &str = "webdata.io/crawl-id";
/// Annotation naming the organization of an API-created CrawlJob.
pub const ORGANIZATION_ANNOTATION: &str = "webdata.io/organization";
/// Label on the CrawlJobs a CrawlSchedule created: the schedule's name.
pub const SCHEDULE_LABEL: &str = "webdata.io/schedule";
/// Finalizer that cancels the crawl in the store before a CrawlJob goes away.
pub const FINALIZER: &str = "webdata.io/cancel-crawl";

fn default_limit() -> i64 {
    100
}
fn default_true() -> bool {
    true
}
fn default_pool() -> String {
    "default".into()
}

/// A crawl of a site (the spec's CrawlRequest, plus where it runs).
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "webdata.io",
    version = "v1",
    kind = "CrawlJob",
    plural = "crawljobs",
    namespaced,
    shortname = "cj",
    category = "webdata",
    status = "CrawlJobStatus",
    derive = "PartialEq",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Completed", type_ = "integer", json_path = ".status.completed"),
    printcolumn(name = "Total", type_ = "integer", json_path = ".status.total"),
    printcolumn(name = "Credits", type_ = "integer", json_path = ".status.creditsUsed"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[x_kube(validation = Rule::new("self.url == oldSelf.url && self.pool == oldSelf.pool").message("url and pool cannot change; create another CrawlJob"))]
#[x_kube(validation = Rule::new("!oldSelf.cancel || self.cancel").message("a cancelled CrawlJob cannot be resumed"))]
#[serde(rename_all = "camelCase")]
pub struct CrawlJobSpec {
    /// The start URL (http or https).
    #[x_kube(validation = Rule::new("self.startsWith('http://') || self.startsWith('https://')").message("url must be an http or https URL"))]
    #[schemars(length(min = 1, max = 8192))]
    pub url: String,
    /// Most pages crawled.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 100000))]
    pub limit: i64,
    /// Link hops from the start URL (sitemap URLs count as 1, 0 = only the start URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 20))]
    pub max_depth: Option<i64>,
    /// Only URLs whose path matches one of these globs are crawled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub include_paths: Option<Vec<String>>,
    /// URLs whose path matches one of these globs are never crawled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 100))]
    pub exclude_paths: Option<Vec<String>>,
    /// Follow links to other subdomains of the same registrable domain.
    #[serde(default)]
    pub allow_subdomains: bool,
    /// `include` (default), `skip` or `only`.
    #[serde(default)]
    pub sitemap: SitemapMode,
    /// Strip blocks repeated across the crawl's pages.
    #[serde(default = "default_true")]
    pub remove_boilerplate: bool,
    /// Crawl what robots.txt disallows.
    #[serde(default)]
    pub ignore_robots: bool,
    /// How each page is scraped (the spec's ScrapeOptions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrape_options: Option<ScrapeOptions>,
    /// Signed webhook deliveries of the crawl's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookSpec>,
    /// The WorkerPool that runs it.
    #[serde(default = "default_pool")]
    #[schemars(length(min = 1, max = 63))]
    pub pool: String,
    /// Organization charged for it (CrawlJobs made with kubectl; default:
    /// the operator's `WEBDATA_DEFAULT_ORGANIZATION`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// Set to true to cancel the crawl (scraped pages stay and are charged).
    #[serde(default)]
    pub cancel: bool,
    /// Delete the CrawlJob this long after it finished (its pages stay in the store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub ttl_seconds_after_finished: Option<i64>,
}

impl CrawlJobSpec {
    /// The spec's CrawlRequest.
    pub fn crawl_request(&self) -> CrawlRequest {
        CrawlRequest {
            url: self.url.trim().to_string(),
            limit: Some(self.limit),
            max_depth: self.max_depth,
            include_paths: self.include_paths.clone(),
            exclude_paths: self.exclude_paths.clone(),
            allow_subdomains: Some(self.allow_subdomains),
            sitemap: Some(self.sitemap),
            remove_boilerplate: Some(self.remove_boilerplate),
            ignore_robots: Some(self.ignore_robots),
            scrape_options: self.scrape_options.clone(),
            webhook: self.webhook.clone(),
            // Resuming is an API request (`resumeFrom`): the API stores the
            // request it was given, and the CrawlJob only runs that row.
            resume_from: None,
        }
    }

    /// A spec for `req` in `pool`.
    pub fn from_request(req: &CrawlRequest, pool: &str) -> Self {
        CrawlJobSpec {
            url: req.url.clone(),
            limit: req.limit(),
            max_depth: req.max_depth,
            include_paths: req.include_paths.clone(),
            exclude_paths: req.exclude_paths.clone(),
            allow_subdomains: req.allow_subdomains.unwrap_or(false),
            sitemap: req.sitemap(),
            remove_boilerplate: req.remove_boilerplate(),
            ignore_robots: req.ignore_robots.unwrap_or(false),
            scrape_options: req.scrape_options.clone(),
            webhook: req.webhook.clone(),
            pool: pool.to_string(),
            organization: None,
            cancel: false,
            ttl_seconds_after_finished: None,
        }
    }
}

/// Why a crawl failed or stopped early.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct CrawlJobError {
    pub code: String,
    pub message: String,
}

/// The crawl as the store has it, mirrored for kubectl.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrawlJobStatus {
    /// `Pending` (waiting for its pool), `Queued`, `Running`, `Completed`, `Failed`, `Cancelled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The crawl's id in the API (GET /v1/crawl/{id}).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crawl_id: Option<String>,
    #[serde(default)]
    pub total: i64,
    #[serde(default)]
    pub completed: i64,
    #[serde(default)]
    pub failed: i64,
    #[serde(default)]
    pub credits_used: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CrawlJobError>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

fn default_worker_max() -> i32 {
    10
}
fn default_concurrency() -> i32 {
    16
}
fn default_browser_max() -> i32 {
    4
}
fn default_sessions() -> i32 {
    2
}
fn default_browser_image() -> String {
    "selenium/standalone-chromium".into()
}
fn default_scale_down_delay() -> i64 {
    300
}

/// The worker Deployment of a pool.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[x_kube(validation = Rule::new("self.min <= self.max").message("workers.min must not exceed workers.max"))]
#[serde(rename_all = "camelCase")]
pub struct WorkerSpec {
    #[serde(default)]
    #[schemars(range(min = 0, max = 1000))]
    pub min: i32,
    #[serde(default = "default_worker_max")]
    #[schemars(range(min = 0, max = 1000))]
    pub max: i32,
    /// The image with `webdata-worker` (default: the operator's `WEBDATA_WORKER_IMAGE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    /// Pages one worker scrapes at once.
    #[serde(default = "default_concurrency")]
    #[schemars(range(min = 1, max = 256))]
    pub concurrency: i32,
    /// Extra environment for the workers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
}

impl Default for WorkerSpec {
    fn default() -> Self {
        WorkerSpec {
            min: 0,
            max: default_worker_max(),
            image: None,
            resources: None,
            concurrency: default_concurrency(),
            env: Vec::new(),
        }
    }
}

/// The Selenium/Chrome Deployment of a pool.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, KubeSchema)]
#[x_kube(validation = Rule::new("self.min <= self.max").message("browsers.min must not exceed browsers.max"))]
#[serde(rename_all = "camelCase")]
pub struct BrowserSpec {
    #[serde(default)]
    #[schemars(range(min = 0, max = 1000))]
    pub min: i32,
    #[serde(default = "default_browser_max")]
    #[schemars(range(min = 0, max = 1000))]
    pub max: i32,
    #[serde(default = "default_browser_image")]
    pub image: String,
    /// WebDriver sessions one browser pod runs at once.
    #[serde(default = "default_sessions")]
    #[schemars(range(min = 1, max = 64))]
    pub sessions_per_browser: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
}

impl Default for BrowserSpec {
    fn default() -> Self {
        BrowserSpec {
            min: 0,
            max: default_browser_max(),
            image: default_browser_image(),
            sessions_per_browser: default_sessions(),
            resources: None,
        }
    }
}

/// Who sets the Deployments' replicas.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum Autoscaling {
    /// The operator, from the pool's backlog in the store.
    #[default]
    Operator,
    /// Something else (KEDA, an HPA): the operator leaves `replicas` alone.
    External,
}

/// Workers and browsers that run the crawls of this pool.
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[kube(
    group = "webdata.io",
    version = "v1",
    kind = "WorkerPool",
    plural = "workerpools",
    namespaced,
    shortname = "wp",
    category = "webdata",
    status = "WorkerPoolStatus",
    derive = "PartialEq",
    printcolumn(
        name = "Workers",
        type_ = "integer",
        json_path = ".status.readyWorkers"
    ),
    printcolumn(
        name = "Desired",
        type_ = "integer",
        json_path = ".status.desiredWorkers"
    ),
    printcolumn(
        name = "Browsers",
        type_ = "integer",
        json_path = ".status.readyBrowsers"
    ),
    printcolumn(name = "Backlog", type_ = "integer", json_path = ".status.backlog"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolSpec {
    #[serde(default)]
    pub workers: WorkerSpec,
    #[serde(default)]
    pub browsers: BrowserSpec,
    /// How long demand must stay lower before replicas go down.
    #[serde(default = "default_scale_down_delay")]
    #[schemars(range(min = 0, max = 86400))]
    pub scale_down_delay_seconds: i64,
    #[serde(default)]
    pub autoscaling: Autoscaling,
}

/// What the operator last decided for a pool.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerPoolStatus {
    #[serde(default)]
    pub desired_workers: i32,
    #[serde(default)]
    pub ready_workers: i32,
    #[serde(default)]
    pub desired_browsers: i32,
    #[serde(default)]
    pub ready_browsers: i32,
    /// Queued + in-flight URLs of the pool's running crawls, plus crawls waiting to start.
    #[serde(default)]
    pub backlog: i64,
    /// The part of the backlog that needs a browser.
    #[serde(default)]
    pub render_backlog: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scale_time: Option<String>,
    /// Since when (unix ms) fewer workers have been wanted (scale-down countdown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers_lower_since: Option<i64>,
    /// Since when (unix ms) fewer browsers have been wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browsers_lower_since: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

fn default_successful_history() -> i32 {
    3
}
fn default_failed_history() -> i32 {
    1
}

/// A crawl run on a schedule, each run a CrawlJob with change tracking
/// (as a CronJob runs Jobs).
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "webdata.io",
    version = "v1",
    kind = "CrawlSchedule",
    plural = "crawlschedules",
    namespaced,
    shortname = "cs",
    category = "webdata",
    status = "CrawlScheduleStatus",
    derive = "PartialEq",
    printcolumn(name = "Schedule", type_ = "string", json_path = ".spec.schedule"),
    printcolumn(name = "Suspend", type_ = "boolean", json_path = ".spec.suspend"),
    printcolumn(
        name = "Last Run",
        type_ = "date",
        json_path = ".status.lastScheduleTime"
    ),
    printcolumn(
        name = "Next Run",
        type_ = "string",
        json_path = ".status.nextScheduleTime"
    ),
    printcolumn(
        name = "Last Result",
        type_ = "string",
        json_path = ".status.lastResult"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct CrawlScheduleSpec {
    /// Five-field cron (`0 6 * * 1-5`), a macro (`@daily`), or an interval
    /// (`@every 6h`: 1 minute to 366 days).
    #[schemars(length(min = 1, max = 200))]
    pub schedule: String,
    /// IANA time zone of `schedule` (default UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// The CrawlJob each run creates (change tracking is added to its formats).
    pub job_template: CrawlJobSpec,
    /// Change-tracking tag of the runs (default `<namespace>/<name>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128))]
    pub tag: Option<String>,
    /// `Forbid` (default), `Allow` or `Replace`, as a CronJob's.
    #[serde(default)]
    pub concurrency_policy: ConcurrencyPolicy,
    /// A run later than this (after downtime) is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub starting_deadline_seconds: Option<i64>,
    /// No new runs while true.
    #[serde(default)]
    pub suspend: bool,
    /// Completed CrawlJobs kept.
    #[serde(default = "default_successful_history")]
    #[schemars(range(min = 0, max = 100))]
    pub successful_jobs_history_limit: i32,
    /// Failed or cancelled CrawlJobs kept.
    #[serde(default = "default_failed_history")]
    #[schemars(range(min = 0, max = 100))]
    pub failed_jobs_history_limit: i32,
}

impl CrawlScheduleSpec {
    /// `schedule` as cron or `every`.
    pub fn when(&self, anchor_ms: i64) -> Result<webdata_core::schedule::When, String> {
        let s = self.schedule.trim();
        let (cron, every) = match s.strip_prefix("@every ") {
            Some(e) => (None, Some(e.trim())),
            None => (Some(s), None),
        };
        webdata_core::schedule::When::parse(cron, every, self.time_zone.as_deref(), anchor_ms)
            .map_err(|(field, msg)| {
                format!(
                    "{}: {msg}",
                    if field == "timezone" {
                        "timeZone"
                    } else {
                        "schedule"
                    }
                )
            })
    }
}

/// What the operator last did for a schedule.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrawlScheduleStatus {
    /// The slot of the last run started (or skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<String>,
    /// The next slot (RFC 3339), absent while suspended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_schedule_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_successful_time: Option<String>,
    /// CrawlJobs of this schedule still running.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active: Vec<String>,
    /// The newest ended run: its phase and pages by change status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_result: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The CRDs as YAML documents, as `crds/` holds them.
pub fn crd_yaml() -> BTreeMap<&'static str, String> {
    let mut out = BTreeMap::new();
    for (file, crd) in [
        ("crawljobs.webdata.io.yaml", CrawlJob::crd()),
        ("crawlschedules.webdata.io.yaml", CrawlSchedule::crd()),
        ("workerpools.webdata.io.yaml", WorkerPool::crd()),
    ] {
        let body = serde_saphyr::to_string(&crd).unwrap_or_default();
        out.insert(
            file,
            format!("# Generated by `webdata-operator crd`; do not edit.\n{body}"),
        );
    }
    out
}

/// The Kubernetes name of the CrawlJob of crawl `id` (`crawl_…` → `crawl-…`).
pub fn job_name(crawl_id: &str) -> String {
    crawl_id.replace('_', "-").to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawl_request_round_trips_through_the_spec() {
        let req: CrawlRequest = serde_json::from_value(serde_json::json!({
            "url": "https://a.test/", "limit": 7, "maxDepth": 2, "includePaths": ["/docs/**"],
            "sitemap": "skip", "removeBoilerplate": false, "scrapeOptions": {"formats": ["markdown", "links"]}
        }))
        .unwrap();
        let spec = CrawlJobSpec::from_request(&req, "gpu");
        assert_eq!(spec.pool, "gpu");
        let back = spec.crawl_request();
        assert_eq!(back.limit(), 7);
        assert_eq!(back.max_depth, Some(2));
        assert_eq!(back.sitemap(), SitemapMode::Skip);
        assert!(!back.remove_boilerplate());
        assert_eq!(back.scrape_options, req.scrape_options);
    }

    #[test]
    fn spec_defaults_are_the_specs() {
        let spec: CrawlJobSpec =
            serde_json::from_value(serde_json::json!({"url": "https://a.test/"})).unwrap();
        assert_eq!(spec.limit, 100);
        assert_eq!(spec.sitemap, SitemapMode::Include);
        assert!(spec.remove_boilerplate && !spec.ignore_robots && !spec.cancel);
        assert_eq!(spec.pool, "default");
        let pool: WorkerPoolSpec = serde_json::from_value(serde_json::json!({})).unwrap();
        assert_eq!(pool.workers.max, 10);
        assert_eq!(pool.workers.concurrency, 16);
        assert_eq!(pool.browsers.image, "selenium/standalone-chromium");
        assert_eq!(pool.scale_down_delay_seconds, 300);
        assert_eq!(pool.autoscaling, Autoscaling::Operator);
    }

    #[test]
    fn crds_carry_names_columns_bounds_and_rules() {
        let cj = serde_json::to_value(CrawlJob::crd()).unwrap();
        assert_eq!(cj["spec"]["group"], "webdata.io");
        assert_eq!(cj["spec"]["names"]["shortNames"][0], "cj");
        let v = &cj["spec"]["versions"][0];
        assert_eq!(v["subresources"]["status"], serde_json::json!({}));
        let cols: Vec<&str> = v["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(cols, ["Phase", "Completed", "Total", "Credits", "Age"]);
        let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["properties"]["limit"]["maximum"], 100000.0);
        assert_eq!(spec["properties"]["limit"]["default"], 100);
        assert_eq!(spec["properties"]["maxDepth"]["maximum"], 20.0);
        assert!(spec["x-kubernetes-validations"].as_array().unwrap().len() >= 2);
        let wp = serde_json::to_value(WorkerPool::crd()).unwrap();
        let workers = &wp["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            ["properties"]["workers"];
        assert_eq!(
            workers["x-kubernetes-validations"][0]["rule"],
            "self.min <= self.max"
        );
    }

    #[test]
    fn job_names_are_dns_labels() {
        let n = job_name("crawl_0192ABCDEF");
        assert_eq!(n, "crawl-0192abcdef");
        assert!(n
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'));
    }
}
