//! The OpenAPI document covers every route that exists, with the spec's
//! field names and the Error shape on every error response.

use webdata_core::types::ScrapeOptions;

#[test]
fn document_covers_routes_fields_and_errors() {
    let doc = webdata_api::app::openapi_document();
    assert_eq!(doc["openapi"], "3.0.3");
    let paths = doc["paths"].as_object().expect("paths");
    for p in [
        "/v1/scrape",
        "/v1/team/credit-usage",
        "/v1/openapi.json",
        "/v1/crawl",
        "/v1/crawl/{id}",
        "/v1/crawl/{id}/events",
        "/v1/blobs/{file}",
        "/v1/brand",
        "/v1/map",
        "/v1/llmstxt",
        "/v1/llmstxt/{id}",
    ] {
        assert!(paths.contains_key(p), "missing {p}");
    }
    let brand_params: Vec<&str> = doc["paths"]["/v1/brand"]["get"]["parameters"]
        .as_array()
        .expect("brand parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(brand_params, vec!["domain", "maxAge"]);
    for (p, fields) in [
        (
            "/v1/search",
            &[
                "query",
                "limit",
                "country",
                "language",
                "timeRange",
                "scrapeOptions",
            ][..],
        ),
        (
            "/v1/extract",
            &["urls", "schema", "prompt", "scrapeOptions"][..],
        ),
    ] {
        let op = &doc["paths"][p]["post"];
        assert!(op.is_object(), "{p} is built and must be documented");
        let name = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            .as_str()
            .and_then(|r| r.rsplit('/').next())
            .expect("request schema ref");
        let props = doc["components"]["schemas"][name]["properties"]
            .as_object()
            .expect("request properties");
        for f in fields {
            assert!(props.contains_key(*f), "{p} request lacks {f}");
        }
        assert!(
            op["responses"]["501"].is_object(),
            "{p} documents not_configured"
        );
        assert!(
            op["summary"].as_str().is_some_and(|s| s.contains("credit")),
            "{p} states its cost"
        );
    }
    assert!(doc["paths"]["/v1/extract"]["post"]["responses"]["422"].is_object());
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let req = doc["paths"]["/v1/scrape"]["post"]["requestBody"]["content"]["application/json"]
        ["schema"]
        .clone();
    let req_name = req["$ref"]
        .as_str()
        .expect("ref")
        .rsplit('/')
        .next()
        .expect("name")
        .to_string();
    let props = schemas[&req_name]["properties"]
        .as_object()
        .expect("properties");
    assert!(props.contains_key("url"));
    for f in ScrapeOptions::FIELDS {
        assert!(props.contains_key(f), "ScrapeRequest lacks {f}");
    }
    let err = schemas["ErrorResponse"]["properties"]
        .as_object()
        .expect("error props");
    for f in ["success", "error", "credits_used", "request_id"] {
        assert!(err.contains_key(f));
    }
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("ops") {
            let responses = op["responses"].as_object().expect("responses");
            assert!(
                ["200", "201", "202"]
                    .iter()
                    .any(|s| responses.contains_key(*s)),
                "{method} {path}"
            );
            if path.starts_with("/v1/") && path != "/v1/openapi.json" && path != "/v1/blobs/{file}"
            {
                for status in ["400", "401", "429", "500"] {
                    let r = &responses[status];
                    assert_eq!(
                        r["content"]["application/json"]["schema"]["$ref"],
                        "#/components/schemas/ErrorResponse",
                        "{method} {path} {status}"
                    );
                }
            }
        }
    }
    let codes = schemas["ErrorCode"]["enum"].as_array().expect("codes");
    assert!(codes.iter().any(|c| c == "insufficient_credits"));
}

/// The router serves exactly what the document lists: on every documented
/// path each documented method is served (not 405) and every other method
/// is 405 (so the path exists in the router), and the status of each
/// documented method's answer is among its documented responses. Routes can only be added with
/// their description (`ApiRouter`); `routes_are_only_added_with_a_description`
/// keeps it that way.
#[tokio::test]
async fn the_router_serves_exactly_the_documented_methods() {
    use axum::body::Body;
    use axum::http::{Method, Request};
    use tower::ServiceExt;
    let state = common::state(
        "openapi",
        std::time::Duration::from_secs(10),
        Some("admin-token"),
    )
    .await;
    let org = state
        .store
        .create_org(&webdata_core::store::NewOrganization {
            name: "probe".into(),
            credits: 10,
            ..Default::default()
        })
        .await
        .expect("org");
    let key = state.store.create_key(&org.id, "probe").await.expect("key");
    let app = webdata_api::app::router(state);
    let doc = webdata_api::app::openapi_document();
    let paths = doc["paths"].as_object().expect("paths");
    let operations: usize = paths
        .values()
        .filter_map(|i| i.as_object())
        .map(|i| i.len())
        .sum();
    assert!(operations >= 30, "every route is documented: {operations}");
    let all = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
    ];
    for (path, item) in paths {
        let uri = path
            .split('/')
            .map(|seg| if seg.starts_with('{') { "x" } else { seg })
            .collect::<Vec<_>>()
            .join("/");
        let documented: Vec<String> = item.as_object().expect("ops").keys().cloned().collect();
        for m in &all {
            // Authorized, so that the answer comes from the router, not auth.
            let bearer = if path.starts_with("/admin/") {
                "admin-token"
            } else {
                key.secret.as_str()
            };
            let resp = app
                .clone()
                .oneshot(
                    Request::builder()
                        .method(m.clone())
                        .uri(&uri)
                        .header("authorization", format!("Bearer {bearer}"))
                        .body(Body::empty())
                        .expect("request"),
                )
                .await
                .expect("response");
            let status = resp.status().as_u16();
            let method = m.as_str().to_ascii_lowercase();
            if documented.contains(&method) {
                assert_ne!(status, 405, "{m} {path} is documented but not served");
                // The answer to a request without a body or content type
                // (415 for a JSON operation, 404 for an unknown id, …) is
                // one the document lists for that operation.
                assert!(
                    item[&method]["responses"].get(status.to_string()).is_some(),
                    "{m} {path} answered {status}, which its responses do not list"
                );
            } else {
                assert_eq!(
                    status, 405,
                    "{m} {path} is served but not documented ({status})"
                );
            }
        }
    }
    let unknown = app
        .oneshot(
            Request::builder()
                .uri("/v1/nope")
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("response");
    assert_eq!(unknown.status().as_u16(), 404);
}

/// Every route goes through `ApiRouter` (which records its description):
/// no file of the API adds an axum route any other way.
#[test]
fn routes_are_only_added_with_a_description() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stack = vec![src];
    let mut offenders = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.ends_with("openapi/router.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("source");
            for (n, line) in text.lines().enumerate() {
                if line.contains(".route(")
                    || line.contains("Router::new().route")
                    || line.contains(".nest(")
                {
                    offenders.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "routes added without a description:\n{}",
        offenders.join("\n")
    );
}

mod common;

/// The links a client (or a stateful fuzzer) follows from a started crawl or
/// batch scrape lead to operations that exist and take that `id`.
#[test]
fn links_lead_from_started_jobs_to_operations_taking_their_id() {
    let doc = webdata_api::app::openapi_document();
    let mut by_id = std::collections::HashMap::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for op in item.as_object().expect("path item").values() {
            if let Some(id) = op["operationId"].as_str() {
                by_id.insert(id.to_string(), (path.clone(), op.clone()));
            }
        }
    }
    for (start, status, at, want) in [
        (
            "startCrawl",
            "202",
            "/id",
            &["getCrawl", "getCrawlErrors", "cancelCrawl"][..],
        ),
        (
            "startBatchScrape",
            "202",
            "/id",
            &[
                "getBatchScrape",
                "getBatchScrapeErrors",
                "cancelBatchScrape",
            ][..],
        ),
        (
            "startLlmsTxt",
            "202",
            "/id",
            &["getLlmsTxt", "cancelLlmsTxt"][..],
        ),
        // Schedules answer `{success, data: Schedule}`.
        (
            "createSchedule",
            "201",
            "/data/id",
            &[
                "getSchedule",
                "updateSchedule",
                "pauseSchedule",
                "resumeSchedule",
                "deleteSchedule",
            ][..],
        ),
    ] {
        let links = by_id[start].1["responses"][status]["links"]
            .as_object()
            .unwrap_or_else(|| panic!("{start} has no links"))
            .clone();
        let mut targets: Vec<&str> = links
            .values()
            .map(|l| l["operationId"].as_str().expect("operationId"))
            .collect();
        targets.sort();
        let mut want = want.to_vec();
        want.sort();
        assert_eq!(targets, want, "{start}'s links");
        for link in links.values() {
            assert_eq!(
                link["parameters"]["id"],
                format!("$response.body#{at}").as_str()
            );
            let (path, op) = &by_id[link["operationId"].as_str().unwrap()];
            assert!(path.contains("{id}"), "{path} takes no id");
            assert!(
                op["parameters"]
                    .as_array()
                    .is_some_and(|ps| ps.iter().any(|p| p["name"] == "id" && p["in"] == "path")),
                "{path} does not declare its id parameter"
            );
        }
    }
}
