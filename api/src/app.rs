//! The router: every route with its description (the OpenAPI document is
//! built from the same table) and its layers (request id and envelope, auth
//! on `/v1`, the admin token on `/admin/v1`).

use crate::layers::{admin_layer, auth_layer, envelope_layer};
use crate::openapi::{self, crawl_status, ApiRouter, Body, Data, Link, Op, Route, Security};
use crate::routes::{
    admin, batch, blobs, brand, crawl, extract, llmstxt, map, ops, schedules, scrape, search, team,
};
use crate::state::AppState;
use axum::Router;
use serde_json::json;
use tower_http::catch_panic::CatchPanicLayer;
use webdata_core::brand::BrandResponse;
use webdata_core::store::{NewOrganization, Organization};
use webdata_core::types::{
    BatchScrapeRequest, CrawlJob, CrawlRequest, ExtractRequest, ExtractResponse, LlmsTxtRequest,
    LlmsTxtStatus, MapRequest, MapResponse, Schedule, ScheduleRequest, ScrapeRequest,
    ScrapeResponse, SearchRequest, SearchResponse,
};

/// The routes behind an API key, described.
fn keyed() -> ApiRouter<AppState> {
    ApiRouter::new(Security::Key)
        .get(
            "/v1/team/credit-usage",
            team::credit_usage,
            Op::new("creditUsage", "Remaining credits and limits of the caller's organization (free).")
                .answers(200, "Remaining credits and limits.", Body::Json(openapi::any_object))
                .errors(&[400, 401, 402, 404, 429, 500]),
        )
        .post(
            "/v1/scrape",
            scrape::scrape,
            Op::new("scrape", "Scrape one URL (1 credit per page returned; failures cost 0).")
                .idempotent()
                .body::<ScrapeRequest>()
                .ok::<ScrapeResponse>(200, "The scraped page.")
                .errors(&[400, 401, 402, 403, 404, 409, 413, 415, 422, 429, 500, 501, 502, 503, 504]),
        )
        .get(
            "/v1/brand",
            brand::brand,
            Op::new("brand", "Logo, icon, colours, fonts, name and socials of a host (5 credits fresh, 1 from the cache, 0 on failure).")
                .param(json!({ "name": "domain", "in": "query", "required": true, "schema": { "type": "string" },
                    "description": "A domain or URL (IDNs accepted); the path is ignored and a leading `www.` dropped." }))
                .param(json!({ "name": "maxAge", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 0, "default": 2592000000i64 },
                    "description": "Accepted cache age in ms (default 30 days); 0 forces a fresh lookup. Cached brands older than 7 days are refreshed in the background." }))
                .ok::<BrandResponse>(200, "The brand (`cached: true` from the cache, `stale: true` when a cached brand past `maxAge` was served because a fresh lookup failed).")
                .errors(&[400, 401, 402, 404, 415, 429, 500, 502, 503, 504]),
        )
        .post(
            "/v1/crawl",
            crawl::start,
            Op::new("startCrawl", "Crawl a site asynchronously (1 credit per page scraped successfully).")
                .idempotent()
                .body::<CrawlRequest>()
                .ok::<CrawlJob>(202, "The crawl was accepted (status queued).")
                .links(&[
                    Link { name: "GetCrawl", operation_id: "getCrawl" },
                    Link { name: "GetCrawlErrors", operation_id: "getCrawlErrors" },
                    Link { name: "CancelCrawl", operation_id: "cancelCrawl" },
                ])
                .errors(&[400, 401, 402, 404, 409, 413, 415, 422, 429, 500, 501]),
        )
        .get(
            "/v1/crawl/{id}",
            crawl::get,
            Op::new("getCrawl", "Status and a page of documents; pass `next` as `cursor`.")
                .path("id")
                .param(json!({ "name": "cursor", "in": "query", "required": false, "schema": { "type": "string" } }))
                .param(json!({ "name": "limit", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 1, "maximum": 100, "default": 50 } }))
                .answers(200, "Status and one page of documents.", Body::Json(crawl_status))
                .errors(&[400, 401, 404, 429, 500]),
        )
        .delete(
            "/v1/crawl/{id}",
            crawl::cancel,
            Op::new("cancelCrawl", "Cancel a crawl; queued pages are dropped at no cost.")
                .path("id")
                .ok::<CrawlJob>(200, "The crawl, now cancelled (scraped pages stay available and charged).")
                .errors(&[400, 401, 404, 429, 500]),
        )
        .get(
            "/v1/crawl/{id}/errors",
            crawl::errors,
            Op::new("getCrawlErrors", "Why pages failed: every URL of the crawl that failed for good with its error code and message (`errors`), and the URLs robots.txt kept out (`robotsBlocked`); up to 10000 of each (free).")
                .path("id")
                .answers(200, "`errors`: [{url, code, error, attempts}], `robotsBlocked`: [url].", Body::Json(openapi::any_object))
                .errors(&[400, 401, 404, 429, 500]),
        )
        .get(
            "/v1/crawl/{id}/events",
            crawl::events,
            Op::new("streamCrawl", "Follow a crawl as server-sent events.")
                .path("id")
                .param(json!({ "name": "Last-Event-ID", "in": "header", "required": false, "schema": { "type": "string" } }))
                .answers(200, "Server-sent events: `page` (Document), `status` and `done` (CrawlStatus without data); ids usable as Last-Event-ID; `: keep-alive` every 15 s.", Body::EventStream)
                .errors(&[400, 401, 404, 429, 500]),
        )
        .post(
            "/v1/batch/scrape",
            batch::start,
            Op::new("startBatchScrape", "Scrape a list of URLs (1 to 10000) with one set of options, asynchronously: a crawl whose URLs are given (1 credit per page scraped successfully; invalid URLs cost nothing).")
                .idempotent()
                .body::<BatchScrapeRequest>()
                .answers(202, "Accepted (status queued): `id`, `status`, `url` (the first URL), `createdAt`, and `invalidURLs` (the URLs skipped with `ignoreInvalidURLs`).", Body::Json(openapi::any_object))
                .links(&[
                    Link { name: "GetBatchScrape", operation_id: "getBatchScrape" },
                    Link { name: "GetBatchScrapeErrors", operation_id: "getBatchScrapeErrors" },
                    Link { name: "CancelBatchScrape", operation_id: "cancelBatchScrape" },
                ])
                .errors(&[400, 401, 402, 404, 409, 413, 415, 422, 429, 500, 501]),
        )
        .get(
            "/v1/batch/scrape/{id}",
            batch::get,
            Op::new("getBatchScrape", "Status and a page of documents, as getCrawl; pass `next` as `cursor`.")
                .path("id")
                .param(json!({ "name": "cursor", "in": "query", "required": false, "schema": { "type": "string" } }))
                .param(json!({ "name": "limit", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 1, "maximum": 100, "default": 50 } }))
                .answers(200, "Status and one page of documents.", Body::Json(crawl_status))
                .errors(&[400, 401, 404, 429, 500]),
        )
        .delete(
            "/v1/batch/scrape/{id}",
            batch::cancel,
            Op::new("cancelBatchScrape", "Cancel a batch scrape; queued pages are dropped at no cost.")
                .path("id")
                .ok::<CrawlJob>(200, "The batch scrape, now cancelled (scraped pages stay available and charged).")
                .errors(&[400, 401, 404, 429, 500]),
        )
        .get(
            "/v1/batch/scrape/{id}/events",
            batch::events,
            Op::new("streamBatchScrape", "Follow a batch scrape as server-sent events (as streamCrawl).")
                .path("id")
                .param(json!({ "name": "Last-Event-ID", "in": "header", "required": false, "schema": { "type": "string" } }))
                .answers(200, "Server-sent events: `page`, `status`, `done`.", Body::EventStream)
                .errors(&[400, 401, 404, 429, 500]),
        )
        .get(
            "/v1/batch/scrape/{id}/errors",
            batch::errors,
            Op::new("getBatchScrapeErrors", "Why pages failed: `errors` (url, code, error, attempts) and `robotsBlocked` (free).")
                .path("id")
                .answers(200, "`errors` and `robotsBlocked`.", Body::Json(openapi::any_object))
                .errors(&[400, 401, 404, 429, 500]),
        )
        .post(
            "/v1/llmstxt",
            llmstxt::start,
            Op::new("startLlmsTxt", "Make a site's llms.txt and llms-full.txt from a crawl of it (`limit` 1 to 5000 pages, default 100), asynchronously: 1 credit per page scraped successfully, as a crawl.")
                .idempotent()
                .body::<LlmsTxtRequest>()
                .ok::<LlmsTxtStatus>(202, "The job was accepted (status queued); its id starts with `llmstxt_`.")
                .links(&[
                    Link { name: "GetLlmsTxt", operation_id: "getLlmsTxt" },
                    Link { name: "CancelLlmsTxt", operation_id: "cancelLlmsTxt" },
                ])
                .errors(&[400, 401, 402, 409, 413, 415, 422, 429, 500, 501]),
        )
        .get(
            "/v1/llmstxt/{id}",
            llmstxt::get,
            Op::new("getLlmsTxt", "Status of an llms.txt job (`queued`, `scraping`, `completed`, `failed`, `cancelled`), its counters and credits, and `data.llmsTxt`/`data.llmsFullTxt` once completed (free).")
                .path("id")
                .ok::<LlmsTxtStatus>(200, "Status and counters; `data` once completed.")
                .errors(&[400, 401, 404, 429, 500]),
        )
        .delete(
            "/v1/llmstxt/{id}",
            llmstxt::cancel,
            Op::new("cancelLlmsTxt", "Cancel an llms.txt job; queued pages are dropped at no cost, scraped pages stay charged (free).")
                .path("id")
                .ok::<LlmsTxtStatus>(200, "The job, now cancelled (no `data`).")
                .errors(&[400, 401, 404, 429, 500]),
        )
        .post(
            "/v1/map",
            map::map,
            Op::new("map", "Discover a site's URLs: robots.txt, sitemaps, links of fetched pages, a rendered start page when little is found. Reserves 42 credits (or the largest multiple of 3 the organization has, then `budgetLimited` may be true) and settles the fetches made.")
                .body::<MapRequest>()
                .ok::<MapResponse>(200, "The URLs found, ranked by `search` when given. Costs 3 credits per 10 fetches made (robots.txt, sitemap files, pages fetched for links, the rendered-links fallback), at least 3; 0 when the start page fails to load.")
                .errors(&[400, 401, 402, 403, 404, 413, 415, 429, 500, 502, 504]),
        )
        .post(
            "/v1/search",
            search::search,
            Op::new("search", "Search the web through the configured provider (SearXNG); with `scrapeOptions` each result is scraped. 1 credit + 1 per scraped result; 501 `not_configured` (0 credits) when no provider is set.")
                .body::<SearchRequest>()
                .ok::<SearchResponse>(200, "Results in rank order (`position` from 1). Costs 1 credit, plus 1 per result scraped and returned billable with `scrapeOptions`; a result whose scrape failed keeps its search fields, has no `document` and costs 0. A provider failure costs 0.")
                .errors(&[400, 401, 402, 404, 413, 415, 429, 500, 501, 502, 504]),
        )
        .post(
            "/v1/extract",
            extract::extract,
            Op::new("extract", "Read 1 to 25 URLs and have the configured model (any OpenAI-compatible chat-completions endpoint) return JSON matching `schema`, following `prompt`. 5 credits + 1 per page read; 501 `not_configured` (0 credits) when no model is set.")
                .body::<ExtractRequest>()
                .ok::<ExtractResponse>(200, "JSON matching `schema`, and which URLs were read. Costs 5 credits plus 1 per page read; 0 on any failure (422 `extract_failed` when the model's answer did not match the schema after one retry).")
                .errors(&[400, 401, 402, 404, 413, 415, 422, 429, 500, 501, 502, 504]),
        )
        .post(
            "/v1/schedules",
            schedules::create,
            Op::new("createSchedule", "Run a crawl or batch scrape on a schedule (`cron` in a `timezone`, or `every`), each run with change tracking; free to create, each run billed as the crawl it starts.")
                .body::<ScheduleRequest>()
                .ok::<Data<Schedule>>(201, "The schedule, with its first `nextRunAt`.")
                .links_at("/data/id", &[
                    Link { name: "GetSchedule", operation_id: "getSchedule" },
                    Link { name: "UpdateSchedule", operation_id: "updateSchedule" },
                    Link { name: "PauseSchedule", operation_id: "pauseSchedule" },
                    Link { name: "ResumeSchedule", operation_id: "resumeSchedule" },
                    Link { name: "DeleteSchedule", operation_id: "deleteSchedule" },
                ])
                .errors(&[400, 401, 403, 404, 413, 415, 429, 500]),
        )
        .get(
            "/v1/schedules",
            schedules::list,
            Op::new("listSchedules", "The organization's schedules, oldest first, each with its newest runs.")
                .ok::<Data<Vec<Schedule>>>(200, "Every schedule of the organization.")
                .errors(&[400, 401, 429, 500]),
        )
        .get(
            "/v1/schedules/{id}",
            schedules::get,
            Op::new("getSchedule", "A schedule, its next run and its run history (state, crawl id, pages new/same/changed/removed).")
                .path("id")
                .ok::<Data<Schedule>>(200, "The schedule.")
                .errors(&[400, 401, 404, 429, 500]),
        )
        .patch(
            "/v1/schedules/{id}",
            schedules::update,
            Op::new("updateSchedule", "Change a schedule: the fields given replace the stored ones (`cron`/`every` and `crawl`/`batch` replace each other); a new timing counts from now.")
                .path("id")
                .body::<ScheduleRequest>()
                .ok::<Data<Schedule>>(200, "The schedule as changed.")
                .errors(&[400, 401, 403, 404, 413, 415, 429, 500]),
        )
        .delete(
            "/v1/schedules/{id}",
            schedules::delete,
            Op::new("deleteSchedule", "Delete a schedule and its run history; the crawls it started stay.")
                .path("id")
                .answers(200, "`id` and `deleted: true`.", Body::Json(openapi::any_object))
                .errors(&[400, 401, 404, 429, 500]),
        )
        .post(
            "/v1/schedules/{id}/pause",
            schedules::pause,
            Op::new("pauseSchedule", "Suspend a schedule: no run starts until it is resumed.")
                .path("id")
                .ok::<Data<Schedule>>(200, "The schedule, suspended (`nextRunAt` null).")
                .errors(&[400, 401, 404, 429, 500]),
        )
        .post(
            "/v1/schedules/{id}/resume",
            schedules::resume,
            Op::new("resumeSchedule", "Resume a schedule: the next run is the next slot after now (missed slots are not run).")
                .path("id")
                .ok::<Data<Schedule>>(200, "The schedule, active.")
                .errors(&[400, 401, 404, 429, 500]),
        )
}

/// The operator's routes behind the admin token, described.
fn admin() -> ApiRouter<AppState> {
    const E: &[u16] = &[400, 401, 404, 415, 500];
    let op = |id: &'static str, summary: &'static str| {
        Op::new(id, summary)
            .ok::<Data<serde_json::Value>>(200, "OK")
            .errors(E)
    };
    let org = |id: &'static str, summary: &'static str| op(id, summary).path("id");
    ApiRouter::new(Security::Admin)
        .post(
            "/admin/v1/organizations",
            admin::create_org,
            op(
                "adminCreateOrganization",
                "Create an organization (credits, spend cap, limits).",
            )
            .body::<NewOrganization>()
            .ok::<Data<Organization>>(201, "The organization."),
        )
        .get(
            "/admin/v1/organizations",
            admin::list_orgs,
            op("adminListOrganizations", "Every organization."),
        )
        .get(
            "/admin/v1/organizations/{id}",
            admin::get_org,
            org("adminGetOrganization", "One organization.")
                .ok::<Data<Organization>>(200, "The organization."),
        )
        .patch(
            "/admin/v1/organizations/{id}",
            admin::update_org,
            org(
                "adminUpdateOrganization",
                "Change an organization's credits, spend cap or limits.",
            )
            .body::<serde_json::Value>()
            .ok::<Data<Organization>>(200, "The organization."),
        )
        .post(
            "/admin/v1/organizations/{id}/keys",
            admin::create_key,
            org(
                "adminCreateKey",
                "Create an API key; the secret is shown once.",
            )
            .body::<serde_json::Value>()
            .answers(
                201,
                "The key with its secret.",
                Body::Json(openapi::schema_of::<Data<serde_json::Value>>),
            ),
        )
        .get(
            "/admin/v1/organizations/{id}/keys",
            admin::list_keys,
            org(
                "adminListKeys",
                "The organization's keys (prefixes, never secrets).",
            ),
        )
        .post(
            "/admin/v1/organizations/{id}/playground-keys",
            admin::create_playground_key,
            org(
                "adminCreatePlaygroundKey",
                "A temporary playground key with its own budget and rate limit.",
            )
            .body::<serde_json::Value>()
            .answers(
                201,
                "The key with its secret.",
                Body::Json(openapi::schema_of::<Data<serde_json::Value>>),
            ),
        )
        .get(
            "/admin/v1/organizations/{id}/audit",
            admin::audit,
            org(
                "adminAudit",
                "The organization's audit log (key and secret changes).",
            ),
        )
        .get(
            "/admin/v1/organizations/{id}/ledger",
            admin::ledger,
            org(
                "adminLedger",
                "The organization's credit ledger, one row per request.",
            ),
        )
        .get(
            "/admin/v1/organizations/{id}/webhook-secret",
            admin::webhook_secret,
            org("adminWebhookSecret", "The webhook signing secret."),
        )
        .post(
            "/admin/v1/organizations/{id}/webhook-secret/rotate",
            admin::rotate_webhook_secret,
            org(
                "adminRotateWebhookSecret",
                "A new webhook signing secret; the old one stops signing.",
            ),
        )
        .post(
            "/admin/v1/organizations/{id}/webhook-endpoints",
            admin::create_endpoint,
            org(
                "adminCreateWebhookEndpoint",
                "Register an endpoint for crawl events (its URL passes the network guard).",
            )
            .body::<serde_json::Value>()
            .answers(
                201,
                "The endpoint.",
                Body::Json(openapi::schema_of::<Data<serde_json::Value>>),
            ),
        )
        .get(
            "/admin/v1/organizations/{id}/webhook-endpoints",
            admin::list_endpoints,
            org(
                "adminListWebhookEndpoints",
                "The organization's webhook endpoints.",
            ),
        )
        .delete(
            "/admin/v1/organizations/{id}/webhook-endpoints/{endpoint}",
            admin::delete_endpoint,
            org("adminDeleteWebhookEndpoint", "Remove a webhook endpoint.").path("endpoint"),
        )
        .get(
            "/admin/v1/organizations/{id}/webhook-deliveries",
            admin::list_deliveries,
            org(
                "adminListWebhookDeliveries",
                "Webhook deliveries, dead letters included.",
            ),
        )
        .post(
            "/admin/v1/organizations/{id}/webhook-deliveries/{delivery}/redrive",
            admin::redrive_delivery,
            org("adminRedriveWebhookDelivery", "Send a dead letter again.").path("delivery"),
        )
        .post(
            "/admin/v1/keys/{id}/rotate",
            admin::rotate_key,
            org(
                "adminRotateKey",
                "A new secret for a key; the old one stops working.",
            ),
        )
        .delete(
            "/admin/v1/keys/{id}",
            admin::revoke_key,
            org("adminRevokeKey", "Revoke a key."),
        )
}

/// Routes anyone may call, described.
fn public() -> ApiRouter<AppState> {
    ApiRouter::new(Security::Public)
        .get(
            "/healthz",
            ops::healthz,
            Op::new("healthz", "Liveness: the process answers."),
        )
        .get(
            "/readyz",
            ops::readyz,
            Op::new("readyz", "Readiness: the store answers (503 `unavailable` when it does not).")
                .errors(&[503]),
        )
        .get(
            "/metrics",
            ops::metrics,
            Op::new("metrics", "Prometheus metrics.")
                .answers(200, "The Prometheus text format.", Body::Text),
        )
        .get(
            "/v1/blobs/{file}",
            blobs::get,
            Op::new("getBlob", "A screenshot or hosted brand image behind a signed link (the link is the credential; screenshots expire after 24 hours, brand images after 90 days).")
                .path("file")
                .param(json!({ "name": "expires", "in": "query", "required": true, "schema": { "type": "integer" } }))
                .param(json!({ "name": "sig", "in": "query", "required": true, "schema": { "type": "string" } }))
                .answers(200, "The file (PNG for screenshots; the image's own type for brand images).", Body::Image)
                .errors(&[400, 404]),
        )
        .get(
            "/v1/openapi.json",
            || async { axum::Json(openapi_document()) },
            Op::new("openapi", "This document (no key needed).")
                .answers(200, "OpenAPI document", Body::Json(openapi::any_object)),
        )
}

/// The MCP endpoint: its key is checked by the handler, and each tool call
/// is a `/v1` request counted by `/v1`'s limits.
fn mcp() -> ApiRouter<AppState> {
    ApiRouter::new(Security::Key).post(
        "/mcp",
        crate::mcp::http::handle,
        Op::new(
            "mcp",
            "Model Context Protocol (Streamable HTTP, stateless, JSON answers): the tools scrape, crawl, crawl_status, crawl_cancel, map, batch_scrape, batch_scrape_status, search, extract and brand; each tool call costs what its /v1 request costs.",
        )
        .answers(200, "A JSON-RPC answer.", Body::Json(openapi::any_object))
        .errors(&[400, 401, 406, 415]),
    )
}

/// Every route of the API document (the dashboard's HTML pages are not in it).
pub fn routes() -> Vec<Route> {
    let mut all = Vec::new();
    for group in [public(), keyed(), mcp(), admin()] {
        all.extend(group.routes().iter().cloned());
    }
    all
}

/// The OpenAPI document of every route the application serves.
pub fn openapi_document() -> serde_json::Value {
    openapi::document_for(&routes())
}

/// The whole HTTP application.
pub fn router(state: AppState) -> Router {
    router_with(state, Router::new())
}

/// The application with `extra` routes merged in under the same layers
/// (tests use it to prove the envelope holds for panics and timeouts).
pub fn router_with(state: AppState, extra: Router<AppState>) -> Router {
    let v1 = keyed().route_layer(axum::middleware::from_fn_with_state(
        state.clone(),
        auth_layer,
    ));
    let admin = admin().route_layer(axum::middleware::from_fn_with_state(
        state.clone(),
        admin_layer,
    ));
    let (open, signed_in) = crate::dashboard::routes();
    let dashboard = open
        .merge(signed_in.route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::dashboard::login_layer,
        )))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::dashboard::guard_layer,
        ));
    let (served, _) = public()
        .merge(v1)
        .merge(mcp())
        .merge(admin)
        .merge(dashboard)
        .merge(crate::firecrawl::prefixed())
        .into_parts();
    let loopback = state.loopback.clone();
    let app = served
        .merge(extra)
        .fallback(crate::dashboard::fallback)
        .layer(CatchPanicLayer::new())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            envelope_layer,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::layers::security_headers,
        ))
        .with_state(state);
    loopback.set(app.clone());
    app
}
