//! Scheduled crawls: `POST /v1/schedules` and its answers (an addition to
//! v1). Each run is an ordinary crawl or batch scrape with change tracking.

use super::{BatchScrapeRequest, CrawlRequest, Format, ScrapeOptions};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What to do when a run is due while the previous one is still going (as
/// a Kubernetes CronJob's `concurrencyPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub enum ConcurrencyPolicy {
    /// Start it anyway.
    Allow,
    /// Skip it (recorded as a `skipped` run). The default.
    #[default]
    Forbid,
    /// Cancel the running one and start it.
    Replace,
}

/// Where the schedule's own events go (`schedule.run.completed`, signed like
/// crawl webhooks with the organization's secret).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleWebhook {
    pub url: String,
}

/// POST /v1/schedules body; PATCH takes the same fields, each optional,
/// replacing what was stored.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScheduleRequest {
    /// A label for people (at most 200 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Five-field cron (`minute hour day-of-month month day-of-week`) or a
    /// macro (`@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    /// A fixed interval instead of `cron`: `15m`, `6h`, `1d`, `1w` (1
    /// minute to 366 days), counted from the schedule's creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<String>,
    /// IANA time zone of `cron` (default `UTC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// The crawl each run starts (exactly one of `crawl` and `batch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crawl: Option<CrawlRequest>,
    /// Or the batch scrape each run starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchScrapeRequest>,
    /// Change-tracking tag of the runs (default: the schedule's id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<ScheduleWebhook>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_policy: Option<ConcurrencyPolicy>,
    /// A run more than this late (after downtime) is recorded as `missed`
    /// instead of started (default: no deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,
    /// Paused: no run starts (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// Ended runs kept in the history (1 to 100, default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_limit: Option<i64>,
}

impl ScheduleRequest {
    /// `patch`'s fields replace these (`cron` and `every`, `crawl` and
    /// `batch`, replace each other).
    pub fn merged(&self, patch: &ScheduleRequest) -> ScheduleRequest {
        let mut out = self.clone();
        macro_rules! take {
            ($($f:ident),*) => { $( if patch.$f.is_some() { out.$f = patch.$f.clone(); } )* };
        }
        take!(
            name,
            timezone,
            tag,
            webhook,
            concurrency_policy,
            starting_deadline_seconds,
            suspend,
            history_limit
        );
        if patch.cron.is_some() || patch.every.is_some() {
            out.cron = patch.cron.clone();
            out.every = patch.every.clone();
        }
        if patch.crawl.is_some() || patch.batch.is_some() {
            out.crawl = patch.crawl.clone();
            out.batch = patch.batch.clone();
        }
        out
    }

    /// Ended runs to keep (default 10).
    pub fn history_limit(&self) -> i64 {
        self.history_limit.unwrap_or(10)
    }
}

/// Pages of a run by change status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct RunSummary {
    pub pages: i64,
    pub new: i64,
    pub same: i64,
    pub changed: i64,
    pub removed: i64,
}

/// A run of a schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleRun {
    pub id: String,
    /// The slot it was due at (RFC 3339).
    pub scheduled_for: String,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// `starting`, `running`, `completed`, `failed`, `cancelled`, `skipped`
    /// (concurrency policy) or `missed` (starting deadline).
    pub state: String,
    /// The crawl (or batch scrape) it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crawl_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<RunSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A schedule as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Schedule {
    pub id: String,
    #[serde(flatten)]
    pub spec: ScheduleRequest,
    /// When the next run is due (RFC 3339); null when suspended.
    pub next_run_at: Option<String>,
    pub last_run_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Newest first, at most `historyLimit` ended runs plus any running.
    #[serde(default)]
    pub runs: Vec<ScheduleRun>,
}

/// `options` with change tracking on under `tag` (and markdown, which the
/// comparison reads, unless other formats were chosen): what every
/// scheduled run scrapes with.
pub fn tracked_options(options: Option<ScrapeOptions>, tag: &str) -> ScrapeOptions {
    let mut o = options.unwrap_or_default();
    let mut formats = o.formats();
    if !formats.contains(&Format::ChangeTracking) {
        formats.push(Format::ChangeTracking);
    }
    o.formats = Some(formats);
    let mut ct = o.change_tracking_options.clone().unwrap_or_default();
    ct.tag = Some(tag.to_string());
    o.change_tracking_options = Some(ct);
    o
}
