//! Crawl and frontier state names, as stored and on the wire.

use serde::{Deserialize, Serialize};

/// A crawl's status; stored in `crawls.status` and sent as its lowercase
/// name. [`CrawlRow::status`](super::CrawlRow::status) stays a string (a
/// reader may meet a status newer than itself); [`CrawlRow::state`](super::CrawlRow::state)
/// reads it as this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CrawlStatus {
    /// Created, not started (maybe waiting for the operator).
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl CrawlStatus {
    /// Every status, in life order.
    pub const ALL: [CrawlStatus; 5] = [
        CrawlStatus::Queued,
        CrawlStatus::Running,
        CrawlStatus::Completed,
        CrawlStatus::Failed,
        CrawlStatus::Cancelled,
    ];

    /// The name stored and sent.
    pub const fn as_str(self) -> &'static str {
        match self {
            CrawlStatus::Queued => "queued",
            CrawlStatus::Running => "running",
            CrawlStatus::Completed => "completed",
            CrawlStatus::Failed => "failed",
            CrawlStatus::Cancelled => "cancelled",
        }
    }

    /// True for the states a crawl never leaves.
    pub const fn is_finished(self) -> bool {
        matches!(
            self,
            CrawlStatus::Completed | CrawlStatus::Failed | CrawlStatus::Cancelled
        )
    }
}

impl std::fmt::Display for CrawlStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for CrawlStatus {
    type Err = UnknownState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CrawlStatus::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownState(s.to_string()))
    }
}

/// Crawl states, as on the wire: [`CrawlStatus`] names for code that
/// compares [`CrawlRow::status`](super::CrawlRow::status) strings.
pub mod status {
    use super::CrawlStatus;

    pub const QUEUED: &str = CrawlStatus::Queued.as_str();
    pub const RUNNING: &str = CrawlStatus::Running.as_str();
    pub const COMPLETED: &str = CrawlStatus::Completed.as_str();
    pub const FAILED: &str = CrawlStatus::Failed.as_str();
    pub const CANCELLED: &str = CrawlStatus::Cancelled.as_str();
}

/// A frontier URL's state, stored in `frontier.state`. The store's SQL
/// names these same strings literally (one statement text per shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UrlState {
    /// Waiting to be leased (from `not_before` on).
    Queued,
    /// Held by a worker until `lease_until`.
    Leased,
    /// Scraped and stored.
    Done,
    /// Gave up on.
    Failed,
    /// Dropped unscraped when the crawl ended.
    Dropped,
    /// Scraped or given up on by the crawl this one resumes (`resumeFrom`):
    /// known, so never fetched again, and not counted as this crawl's page.
    Carried,
}

impl UrlState {
    /// Every state.
    pub const ALL: [UrlState; 6] = [
        UrlState::Queued,
        UrlState::Leased,
        UrlState::Done,
        UrlState::Failed,
        UrlState::Dropped,
        UrlState::Carried,
    ];

    /// The name stored.
    pub const fn as_str(self) -> &'static str {
        match self {
            UrlState::Queued => "queued",
            UrlState::Leased => "leased",
            UrlState::Done => "done",
            UrlState::Failed => "failed",
            UrlState::Dropped => "dropped",
            UrlState::Carried => "carried",
        }
    }
}

impl std::fmt::Display for UrlState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for UrlState {
    type Err = UnknownState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UrlState::ALL
            .into_iter()
            .find(|u| u.as_str() == s)
            .ok_or_else(|| UnknownState(s.to_string()))
    }
}

/// A state name the store does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown state {0:?}")]
pub struct UnknownState(pub String);

#[cfg(test)]
mod tests {
    use super::{status, CrawlStatus, UnknownState, UrlState};

    #[test]
    fn crawl_statuses_keep_their_stored_and_wire_names() {
        let names: Vec<&str> = CrawlStatus::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            names,
            ["queued", "running", "completed", "failed", "cancelled"]
        );
        assert_eq!(
            [
                status::QUEUED,
                status::RUNNING,
                status::COMPLETED,
                status::FAILED,
                status::CANCELLED
            ],
            names.as_slice()
        );
        for c in CrawlStatus::ALL {
            assert_eq!(c.as_str().parse::<CrawlStatus>(), Ok(c));
            assert_eq!(c.to_string(), c.as_str());
            assert_eq!(
                serde_json::to_string(&c).expect("json"),
                format!("\"{}\"", c.as_str())
            );
            assert_eq!(
                serde_json::from_str::<CrawlStatus>(&format!("\"{c}\"")).expect("json"),
                c
            );
        }
        assert_eq!(
            "Running".parse::<CrawlStatus>(),
            Err(UnknownState("Running".into()))
        );
        let finished: Vec<CrawlStatus> = CrawlStatus::ALL
            .into_iter()
            .filter(|c| c.is_finished())
            .collect();
        assert_eq!(
            finished,
            [
                CrawlStatus::Completed,
                CrawlStatus::Failed,
                CrawlStatus::Cancelled
            ]
        );
    }

    #[test]
    fn url_states_keep_their_stored_names() {
        let names: Vec<&str> = UrlState::ALL.iter().map(|u| u.as_str()).collect();
        assert_eq!(
            names,
            ["queued", "leased", "done", "failed", "dropped", "carried"]
        );
        for u in UrlState::ALL {
            assert_eq!(u.as_str().parse::<UrlState>(), Ok(u));
            assert_eq!(u.to_string(), u.as_str());
        }
        assert!("gone".parse::<UrlState>().is_err());
    }
}
