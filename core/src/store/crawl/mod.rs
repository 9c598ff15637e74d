//! Durable crawls: the crawl row and its state machine, the frontier with
//! leases, documents and events numbered per crawl. A page is stored,
//! charged, marked done and its event appended in one transaction, so a
//! crash never loses or double-charges a page.

mod backlog;
mod blocks;
mod commit;
mod documents;
mod events;
mod frontier;
mod lease;
mod lifecycle;
mod row;
mod state;
mod wire;

pub use backlog::PoolBacklog;
pub use commit::{PageCommit, PageWrite};
pub use events::CrawlEvent;
pub use frontier::{FailedUrl, Lease, NewUrl};
pub use lease::LeaseAsk;
pub use row::{CrawlRow, Placement, KIND_BATCH, KIND_CRAWL};
pub use state::{status, CrawlStatus, UnknownState, UrlState};
pub use wire::{status_data, status_json};
