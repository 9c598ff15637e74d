//! The OpenAPI document covers every route that exists, with the spec's
//! field names and the Error shape on every error response.

use webdata_core::types::ScrapeOptions;

#[test]
fn document_covers_routes_fields_and_errors() {
    let doc = webdata_api::openapi::document();
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
                responses.contains_key("200") || responses.contains_key("202"),
                "{method} {path}"
            );
            if path != "/v1/openapi.json" && path != "/v1/blobs/{file}" {
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
