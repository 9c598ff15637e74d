//! The CrawlJob status as a pure function of the crawl's row in the store.

use crate::crd::{CrawlJobError, CrawlJobStatus};
use webdata_core::store::{rfc3339, CrawlRow};

/// CrawlJob phases.
pub const PENDING: &str = "Pending";
pub const QUEUED: &str = "Queued";
pub const RUNNING: &str = "Running";
pub const COMPLETED: &str = "Completed";
pub const FAILED: &str = "Failed";
pub const CANCELLED: &str = "Cancelled";

/// The phase of a crawl: `Pending` while it waits for the operator to
/// admit it, then the store's status in title case.
pub fn phase_of(row: &CrawlRow) -> &'static str {
    match row.status.as_str() {
        "queued" if !row.admitted => PENDING,
        "queued" => QUEUED,
        "running" => RUNNING,
        "completed" => COMPLETED,
        "failed" => FAILED,
        "cancelled" => CANCELLED,
        _ => PENDING,
    }
}

/// True for phases nothing changes any more.
pub fn is_finished(phase: &str) -> bool {
    matches!(phase, COMPLETED | FAILED | CANCELLED)
}

/// The status fields mirrored from the store (conditions and
/// observedGeneration are the controller's).
pub fn status_of(row: &CrawlRow) -> CrawlJobStatus {
    CrawlJobStatus {
        phase: Some(phase_of(row).to_string()),
        crawl_id: Some(row.id.clone()),
        total: row.total,
        completed: row.completed,
        failed: row.failed,
        credits_used: row.credits_used,
        started_at: row.started_at.map(rfc3339),
        finished_at: row.finished_at.map(rfc3339),
        error: match (&row.error_code, &row.error_message) {
            (Some(code), message) => Some(CrawlJobError {
                code: code.clone(),
                message: message.clone().unwrap_or_default(),
            }),
            _ => None,
        },
        conditions: Vec::new(),
        observed_generation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(status: &str, admitted: bool) -> CrawlRow {
        CrawlRow {
            id: "crawl_1".into(),
            org_id: "org".into(),
            key_id: None,
            status: status.into(),
            url: "https://a.test/".into(),
            request: "{}".into(),
            max_pages: 10,
            created_at: 0,
            started_at: Some(1_700_000_000_000),
            finished_at: None,
            total: 5,
            completed: 3,
            failed: 1,
            credits_used: 3,
            doc_seq: 3,
            event_seq: 4,
            error_code: None,
            error_message: None,
            pool: "default".into(),
            admitted,
            renders: false,
            launcher: "kube".into(),
            kind: "crawl".into(),
            seed_urls: None,
        }
    }

    #[test]
    fn phases_map_from_store_states() {
        let cases = [
            ("queued", false, PENDING),
            ("queued", true, QUEUED),
            ("running", true, RUNNING),
            ("completed", true, COMPLETED),
            ("failed", true, FAILED),
            ("cancelled", true, CANCELLED),
            ("cancelled", false, CANCELLED),
            ("something-new", true, PENDING),
        ];
        for (status, admitted, want) in cases {
            assert_eq!(
                phase_of(&row(status, admitted)),
                want,
                "{status} {admitted}"
            );
        }
        assert!(is_finished(COMPLETED) && is_finished(FAILED) && is_finished(CANCELLED));
        assert!(!is_finished(RUNNING) && !is_finished(PENDING) && !is_finished(QUEUED));
    }

    #[test]
    fn status_mirrors_counters_times_and_error() {
        let mut r = row("completed", true);
        r.finished_at = Some(1_700_000_060_000);
        r.error_code = Some("insufficient_credits".into());
        r.error_message = Some("out of credits".into());
        let s = status_of(&r);
        assert_eq!(s.phase.as_deref(), Some(COMPLETED));
        assert_eq!(s.crawl_id.as_deref(), Some("crawl_1"));
        assert_eq!(
            (s.total, s.completed, s.failed, s.credits_used),
            (5, 3, 1, 3)
        );
        assert_eq!(s.started_at.as_deref(), Some("2023-11-14T22:13:20.000Z"));
        assert_eq!(s.finished_at.as_deref(), Some("2023-11-14T22:14:20.000Z"));
        assert_eq!(s.error.unwrap().code, "insufficient_credits");
    }
}
