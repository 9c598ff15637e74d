//! `GET /v1/openapi.json`: the OpenAPI document, generated from the same
//! Rust types the handlers parse and answer with.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{json, Value};
use webdata_core::types::{
    CrawlJob, CrawlRequest, Document, ErrorResponse, ExtractRequest, ExtractResponse, MapRequest,
    MapResponse, ScrapeRequest, ScrapeResponse, SearchRequest, SearchResponse,
};
use webdata_core::ErrorCode;

fn error_responses(codes: &[u16]) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    for status in codes {
        let which: Vec<&str> = ErrorCode::ALL
            .iter()
            .filter(|c| c.http_status() == *status)
            .map(|c| c.as_str())
            .collect();
        let desc = if which.is_empty() {
            "Error".to_string()
        } else {
            format!("Error: {}", which.join(", "))
        };
        m.insert(
            status.to_string(),
            json!({
                "description": desc,
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ErrorResponse" } } }
            }),
        );
    }
    m
}

fn rate_headers() -> Value {
    json!({
        "X-Request-Id": { "schema": { "type": "string" }, "description": "Also in the body as request_id." },
        "RateLimit-Policy": { "schema": { "type": "string" }, "description": "\"default\";q=<requests>;w=60" },
        "RateLimit": { "schema": { "type": "string" }, "description": "\"default\";r=<remaining>;t=<seconds>" }
    })
}

/// The whole document.
pub fn document() -> Value {
    let mut gen = SchemaGenerator::new(SchemaSettings::openapi3());
    let scrape_req = gen.subschema_for::<ScrapeRequest>();
    let scrape_resp = gen.subschema_for::<ScrapeResponse>();
    gen.subschema_for::<ErrorResponse>();
    let crawl_req = gen.subschema_for::<CrawlRequest>();
    let crawl_job = gen.subschema_for::<CrawlJob>();
    let document = gen.subschema_for::<Document>();
    let map_req = gen.subschema_for::<MapRequest>();
    let map_resp = gen.subschema_for::<MapResponse>();
    let brand_resp = gen.subschema_for::<webdata_core::brand::BrandResponse>();
    let search_req = gen.subschema_for::<SearchRequest>();
    let search_resp = gen.subschema_for::<SearchResponse>();
    let extract_req = gen.subschema_for::<ExtractRequest>();
    let extract_resp = gen.subschema_for::<ExtractResponse>();
    let mut schemas = gen.take_definitions(true);
    schemas.insert(
        "ErrorCode".into(),
        json!({ "type": "string", "enum": ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>() }),
    );
    let common_errors = [400u16, 401, 402, 404, 429, 500];
    let mut scrape_responses = error_responses(&[
        400, 401, 402, 403, 404, 409, 415, 422, 429, 500, 501, 502, 503, 504,
    ]);
    scrape_responses.insert(
        "200".into(),
        json!({
            "description": "The scraped page.",
            "headers": rate_headers(),
            "content": { "application/json": { "schema": scrape_resp } }
        }),
    );
    let mut usage_responses = error_responses(&common_errors);
    usage_responses.insert(
        "200".into(),
        json!({ "description": "Remaining credits and limits.", "headers": rate_headers(),
                "content": { "application/json": { "schema": { "type": "object" } } } }),
    );
    let crawl_status = json!({
        "type": "object",
        "required": ["success", "id", "status", "total", "completed", "failed", "credits_used", "data", "next"],
        "properties": {
            "success": { "type": "boolean" },
            "id": { "type": "string" },
            "status": { "type": "string", "enum": ["queued", "running", "completed", "failed", "cancelled"] },
            "url": { "type": "string" },
            "createdAt": { "type": "string", "format": "date-time" },
            "total": { "type": "integer" },
            "completed": { "type": "integer" },
            "failed": { "type": "integer" },
            "credits_used": { "type": "integer" },
            "data": { "type": "array", "items": document },
            "next": { "type": "string", "nullable": true, "description": "Cursor for the next page; null once the crawl is finished and every page has been returned." },
            "error": { "type": "object", "properties": { "code": { "type": "string" }, "message": { "type": "string" } } },
            "request_id": { "type": "string" }
        }
    });
    let id_param =
        json!({ "name": "id", "in": "path", "required": true, "schema": { "type": "string" } });
    let with_ok = |codes: &[u16], status: &str, desc: &str, schema: Value| {
        let mut r = error_responses(codes);
        r.insert(status.into(), json!({ "description": desc, "headers": rate_headers(), "content": { "application/json": { "schema": schema } } }));
        r
    };
    let start_responses = with_ok(
        &[400, 401, 402, 404, 409, 422, 429, 500],
        "202",
        "The crawl was accepted (status queued).",
        crawl_job.clone().into(),
    );
    let get_responses = with_ok(
        &[400, 401, 404, 429, 500],
        "200",
        "Status and one page of documents.",
        crawl_status,
    );
    let cancel_responses = with_ok(
        &[400, 401, 404, 429, 500],
        "200",
        "The crawl, now cancelled (scraped pages stay available and charged).",
        crawl_job.into(),
    );
    let map_responses = with_ok(
        &[400, 401, 402, 403, 404, 429, 500, 502, 504],
        "200",
        "The URLs found, ranked by `search` when given. Costs 3 credits per 10 fetches made (robots.txt, sitemap files, pages fetched for links, the rendered-links fallback), at least 3; 0 when the start page fails to load.",
        map_resp.into(),
    );
    let brand_responses = with_ok(
        &[400, 401, 402, 404, 415, 429, 500, 502, 503, 504],
        "200",
        "The brand (`cached: true` from the cache, `stale: true` when a cached brand past `maxAge` was served because a fresh lookup failed).",
        brand_resp.into(),
    );
    let search_responses = with_ok(
        &[400, 401, 402, 404, 429, 500, 501, 502, 504],
        "200",
        "Results in rank order (`position` from 1). Costs 1 credit, plus 1 per result scraped and returned billable with `scrapeOptions`; a result whose scrape failed keeps its search fields, has no `document` and costs 0. A provider failure costs 0.",
        search_resp.into(),
    );
    let extract_responses = with_ok(
        &[400, 401, 402, 404, 422, 429, 500, 501, 502, 504],
        "200",
        "JSON matching `schema`, and which URLs were read. Costs 5 credits plus 1 per page read; 0 on any failure (422 `extract_failed` when the model's answer did not match the schema after one retry).",
        extract_resp.into(),
    );
    let mut events_responses = error_responses(&[400, 401, 404, 429, 500]);
    events_responses.insert("200".into(), json!({
        "description": "Server-sent events: `page` (Document), `status` and `done` (CrawlStatus without data); ids usable as Last-Event-ID; `: keep-alive` every 15 s.",
        "content": { "text/event-stream": { "schema": { "type": "string" } } }
    }));
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "webdata",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Self-hostable web data service: scrape pages into LLM-ready formats, crawl, map, brand, search and extract. Every response carries `request_id` and `credits_used`; every error uses the ErrorResponse shape."
        },
        "servers": [{ "url": "/" }],
        "security": [{ "bearer": [] }],
        "paths": {
            "/v1/scrape": {
                "post": {
                    "operationId": "scrape",
                    "summary": "Scrape one URL (1 credit per page returned; failures cost 0).",
                    "parameters": [{
                        "name": "Idempotency-Key", "in": "header", "required": false,
                        "schema": { "type": "string", "maxLength": 255 },
                        "description": "Repeats within 24 hours replay the first answer with `Idempotent-Replayed: true`."
                    }],
                    "requestBody": { "required": true, "content": { "application/json": { "schema": scrape_req } } },
                    "responses": scrape_responses
                }
            },
            "/v1/brand": {
                "get": {
                    "operationId": "brand",
                    "summary": "Logo, icon, colours, fonts, name and socials of a host (5 credits fresh, 1 from the cache, 0 on failure).",
                    "parameters": [
                        { "name": "domain", "in": "query", "required": true, "schema": { "type": "string" },
                          "description": "A domain or URL (IDNs accepted); the path is ignored and a leading `www.` dropped." },
                        { "name": "maxAge", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 0, "default": 2592000000i64 },
                          "description": "Accepted cache age in ms (default 30 days); 0 forces a fresh lookup. Cached brands older than 7 days are refreshed in the background." }
                    ],
                    "responses": brand_responses
                }
            },
            "/v1/crawl": {
                "post": {
                    "operationId": "startCrawl",
                    "summary": "Crawl a site asynchronously (1 credit per page scraped successfully).",
                    "parameters": [{ "name": "Idempotency-Key", "in": "header", "required": false, "schema": { "type": "string", "maxLength": 255 } }],
                    "requestBody": { "required": true, "content": { "application/json": { "schema": crawl_req } } },
                    "responses": start_responses
                }
            },
            "/v1/crawl/{id}": {
                "get": {
                    "operationId": "getCrawl",
                    "summary": "Status and a page of documents; pass `next` as `cursor`.",
                    "parameters": [id_param.clone(),
                        { "name": "cursor", "in": "query", "required": false, "schema": { "type": "string" } },
                        { "name": "limit", "in": "query", "required": false, "schema": { "type": "integer", "minimum": 1, "maximum": 100, "default": 50 } }],
                    "responses": get_responses
                },
                "delete": {
                    "operationId": "cancelCrawl",
                    "summary": "Cancel a crawl; queued pages are dropped at no cost.",
                    "parameters": [id_param.clone()],
                    "responses": cancel_responses
                }
            },
            "/v1/crawl/{id}/events": {
                "get": {
                    "operationId": "streamCrawl",
                    "summary": "Follow a crawl as server-sent events.",
                    "parameters": [id_param, { "name": "Last-Event-ID", "in": "header", "required": false, "schema": { "type": "string" } }],
                    "responses": events_responses
                }
            },
            "/v1/map": {
                "post": {
                    "operationId": "map",
                    "summary": "Discover a site's URLs: robots.txt, sitemaps, links of fetched pages, a rendered start page when little is found. Reserves 42 credits (or the largest multiple of 3 the organization has, then `budgetLimited` may be true) and settles the fetches made.",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": map_req } } },
                    "responses": map_responses
                }
            },
            "/v1/search": {
                "post": {
                    "operationId": "search",
                    "summary": "Search the web through the configured provider (SearXNG); with `scrapeOptions` each result is scraped. 1 credit + 1 per scraped result; 501 `not_configured` (0 credits) when no provider is set.",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": search_req } } },
                    "responses": search_responses
                }
            },
            "/v1/extract": {
                "post": {
                    "operationId": "extract",
                    "summary": "Read 1 to 25 URLs and have the configured model (any OpenAI-compatible chat-completions endpoint) return JSON matching `schema`, following `prompt`. 5 credits + 1 per page read; 501 `not_configured` (0 credits) when no model is set.",
                    "requestBody": { "required": true, "content": { "application/json": { "schema": extract_req } } },
                    "responses": extract_responses
                }
            },
            "/v1/blobs/{file}": {
                "get": {
                    "operationId": "getBlob",
                    "summary": "A screenshot or hosted brand image behind a signed link (the link is the credential; screenshots expire after 24 hours, brand images after 90 days).",
                    "security": [],
                    "parameters": [
                        { "name": "file", "in": "path", "required": true, "schema": { "type": "string" } },
                        { "name": "expires", "in": "query", "required": true, "schema": { "type": "integer" } },
                        { "name": "sig", "in": "query", "required": true, "schema": { "type": "string" } }
                    ],
                    "responses": {
                        "200": { "description": "The file (PNG for screenshots; the image's own type for brand images).", "content": { "image/*": { "schema": { "type": "string", "format": "binary" } } } },
                        "404": { "description": "Error: not_found (invalid or expired link)", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ErrorResponse" } } } }
                    }
                }
            },
            "/v1/team/credit-usage": {
                "get": {
                    "operationId": "creditUsage",
                    "summary": "Remaining credits and limits of the caller's organization (free).",
                    "responses": usage_responses
                }
            },
            "/v1/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document (no key needed).",
                    "security": [],
                    "responses": { "200": { "description": "OpenAPI document", "content": { "application/json": { "schema": { "type": "object" } } } } }
                }
            }
        },
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer", "description": "An API key: `wd_…`" } },
            "schemas": schemas
        }
    })
}
