//! The OpenAPI document, built from the routes the router serves and the
//! Rust types the handlers parse and answer with.

use super::operation::{Body, Security};
use super::router::Route;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::Schema;
use serde_json::{json, Map, Value};
use webdata_core::types::{Document, ErrorResponse};
use webdata_core::ErrorCode;

fn error_response(status: u16) -> Value {
    let which: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| c.http_status() == status)
        .map(|c| c.as_str())
        .collect();
    let desc = if which.is_empty() {
        "Error".to_string()
    } else {
        format!("Error: {}", which.join(", "))
    };
    json!({
        "description": desc,
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ErrorResponse" } } }
    })
}

fn rate_headers() -> Value {
    json!({
        "X-Request-Id": { "schema": { "type": "string" }, "description": "Also in the body as request_id." },
        "RateLimit-Policy": { "schema": { "type": "string" }, "description": "\"default\";q=<requests>;w=60" },
        "RateLimit": { "schema": { "type": "string" }, "description": "\"default\";r=<remaining>;t=<seconds>" }
    })
}

/// The answer of getCrawl: CrawlStatus with a page of documents.
pub fn crawl_status(g: &mut SchemaGenerator) -> Schema {
    let document = g.subschema_for::<Document>();
    schemars::json_schema!({
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
    })
}

fn operation(route: &Route, g: &mut SchemaGenerator) -> Value {
    let op = &route.op;
    let mut responses = Map::new();
    for status in op.errors {
        responses.insert(status.to_string(), error_response(*status));
    }
    let (status, description, body) = &op.ok;
    let content = match body {
        Body::Json(schema) => json!({ "application/json": { "schema": schema(g) } }),
        Body::EventStream => json!({ "text/event-stream": { "schema": { "type": "string" } } }),
        Body::Text => json!({ "text/plain": { "schema": { "type": "string" } } }),
        Body::Html => json!({ "text/html": { "schema": { "type": "string" } } }),
        Body::Image => {
            json!({ "image/*": { "schema": { "type": "string", "format": "binary" } } })
        }
    };
    let mut ok = json!({ "description": description, "content": content });
    if op.security == Security::Key {
        ok["headers"] = rate_headers();
    }
    if !op.links.is_empty() {
        let links: Map<String, Value> = op
            .links
            .iter()
            .map(|l| {
                let link = json!({
                    "operationId": l.operation_id,
                    "parameters": { "id": format!("$response.body#{}", op.link_id_at) },
                });
                (l.name.to_string(), link)
            })
            .collect();
        ok["links"] = Value::Object(links);
    }
    responses.insert(status.to_string(), ok);
    let mut out = json!({
        "operationId": op.id,
        "summary": op.summary,
        "responses": responses,
    });
    if !op.params.is_empty() {
        out["parameters"] = Value::Array(op.params.clone());
    }
    if let Some(schema) = op.body {
        out["requestBody"] =
            json!({ "required": true, "content": { "application/json": { "schema": schema(g) } } });
    }
    match op.security {
        Security::Key => {}
        Security::Public | Security::Session => out["security"] = json!([]),
        Security::Admin => out["security"] = json!([{ "admin": [] }]),
    }
    out
}

/// The document describing `routes`.
pub fn document_for(routes: &[Route]) -> Value {
    let mut g = SchemaGenerator::new(SchemaSettings::openapi3());
    g.subschema_for::<ErrorResponse>();
    let mut paths = Map::new();
    for route in routes {
        let op = operation(route, &mut g);
        let item = paths
            .entry(route.path.to_string())
            .or_insert_with(|| json!({}));
        item[route.method.as_str().to_ascii_lowercase()] = op;
    }
    let mut schemas = g.take_definitions(true);
    schemas.insert(
        "ErrorCode".into(),
        json!({ "type": "string", "enum": ErrorCode::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>() }),
    );
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "webdata",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Self-hostable web data service: scrape pages into LLM-ready formats, crawl, map, brand, search and extract. Every response carries `request_id` and `credits_used`; every error uses the ErrorResponse shape."
        },
        "servers": [{ "url": "/" }],
        "security": [{ "bearer": [] }],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": { "type": "http", "scheme": "bearer", "description": "An API key: `wd_…`" },
                "admin": { "type": "http", "scheme": "bearer", "description": "The operator's admin token (`WEBDATA_ADMIN_TOKEN`)." }
            },
            "schemas": schemas
        }
    })
}
