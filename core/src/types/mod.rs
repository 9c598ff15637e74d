//! Wire types exactly as the spec names them. The OpenAPI document and the
//! handlers both derive from these, so a field is renamed in one place only.

mod batch;
mod crawl;
mod envelope;
mod extract;
mod llmstxt;
mod map;
mod schedule;
mod scrape;
mod search;

pub use batch::{BatchScrapeRequest, BATCH_URLS_MAX};
pub use crawl::{CrawlJob, CrawlRequest, WebhookSpec};
pub use envelope::{ErrorBody, ErrorResponse};
pub use extract::{ExtractRequest, ExtractResponse, ExtractSource};
pub use llmstxt::{
    llmstxt_status, LlmsTxtData, LlmsTxtError, LlmsTxtRequest, LlmsTxtStatus, LLMSTXT_ID_PREFIX,
    LLMSTXT_LIMIT_DEFAULT, LLMSTXT_LIMIT_MAX,
};
pub use map::{LinkSource, MapLink, MapRequest, MapResponse, SitemapMode};
pub use schedule::{
    tracked_options, ConcurrencyPolicy, RunSummary, Schedule, ScheduleRequest, ScheduleRun,
    ScheduleWebhook,
};
pub use scrape::{
    Action, ActionType, ChangeDiff, ChangeMode, ChangeStatus, ChangeTracking,
    ChangeTrackingOptions, Chunk, Document, Format, Location, Metadata, Quality, QualityIssue,
    ScrapeOptions, ScrapeRequest, ScrapeResponse, Tier, Visibility,
};
pub use search::{SearchRequest, SearchResponse, SearchResult, TimeRange};
