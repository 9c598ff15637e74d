//! `GET /v1/openapi.json`: the OpenAPI document, generated from the same
//! Rust types the handlers parse and answer with.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{json, Value};
use webdata_core::types::{ErrorResponse, ScrapeRequest, ScrapeResponse};
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
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "webdata",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Self-hostable web data service: scrape pages into LLM-ready formats. Every response carries `request_id` and `credits_used`; every error uses the ErrorResponse shape."
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
