//! Issue 9, black-box: POST /v1/search and /v1/extract through the real
//! binary, against an in-test SearXNG-compatible server and an in-test
//! OpenAI-compatible server on loopback (the only fakes: third parties we
//! cannot run here), with real pages scraped by the engine.

#[macro_use]
mod support;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use support::{article_page, Db, Server, ServerOptions, Site};

/// An address nothing listens on: scrapes of it fail.
const DEAD: &str = "http://127.0.0.2:9/";

/// Pages to scrape: two articles and a long one.
async fn pages() -> Site {
    Site::serve(
        axum::Router::new()
            .route("/a", get(|| async { Html(article_page("Alpha")) }))
            .route("/b", get(|| async { Html(article_page("Bravo")) }))
            .route(
                "/long",
                get(|| async {
                    let body: String = (0..400)
                        .map(|i| format!("<p>Paragraph {i} of the long page says something different about widgets and gadgets.</p>"))
                        .collect();
                    Html(format!("<!doctype html><html><head><title>Long</title></head><body><main><h1>Long</h1>{body}</main></body></html>"))
                }),
            ),
    )
    .await
}

/// A SearXNG-compatible `/search`: records each query string and answers
/// `results` on page 1 (page 2 and later are empty); `q=fail` answers 500.
#[derive(Clone, Default)]
struct Searx {
    queries: Arc<Mutex<Vec<HashMap<String, String>>>>,
    results: Arc<Vec<Value>>,
}

impl Searx {
    async fn serve(results: Vec<Value>) -> (Searx, Site) {
        let s = Searx {
            queries: Arc::default(),
            results: Arc::new(results),
        };
        let site = Site::serve(
            axum::Router::new()
                .route("/search", get(searx_search))
                .with_state(s.clone()),
        )
        .await;
        (s, site)
    }
    fn queries(&self) -> Vec<HashMap<String, String>> {
        self.queries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

async fn searx_search(
    State(s): State<Searx>,
    Query(q): Query<HashMap<String, String>>,
) -> axum::response::Response {
    s.queries
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(q.clone());
    if q.get("q").map(String::as_str) == Some("fail") {
        return (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response();
    }
    let page = q.get("pageno").map(String::as_str).unwrap_or("1");
    let results = if page == "1" {
        s.results.as_ref().clone()
    } else {
        Vec::new()
    };
    axum::Json(json!({ "query": q.get("q"), "number_of_results": results.len(), "results": results, "unresponsive_engines": [] }))
        .into_response()
}

/// One chat-completions call as received: the Authorization header and the body.
type Recorded = (Option<String>, Value);

/// An OpenAI-compatible `/v1/chat/completions`: records each request (body
/// and Authorization header) and answers the queued contents in order.
#[derive(Clone, Default)]
struct Llm {
    requests: Arc<Mutex<Vec<Recorded>>>,
    answers: Arc<Mutex<VecDeque<String>>>,
}

impl Llm {
    async fn serve(answers: &[&str]) -> (Llm, Site) {
        let l = Llm {
            requests: Arc::default(),
            answers: Arc::new(Mutex::new(answers.iter().map(|a| a.to_string()).collect())),
        };
        let site = Site::serve(
            axum::Router::new()
                .route("/v1/chat/completions", post(llm_complete))
                .with_state(l.clone()),
        )
        .await;
        (l, site)
    }
    fn requests(&self) -> Vec<Recorded> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

async fn llm_complete(
    State(l): State<Llm>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> axum::response::Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    l.requests
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((auth, body));
    let content = l
        .answers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop_front()
        .unwrap_or_else(|| "{}".into());
    axum::Json(json!({
        "id": "chatcmpl-test", "object": "chat.completion", "model": "test-model",
        "choices": [{ "index": 0, "finish_reason": "stop", "message": { "role": "assistant", "content": content } }]
    }))
    .into_response()
}

fn with_searx(db: Db, searx: &Site) -> ServerOptions {
    ServerOptions::new(db)
        .env("WEBDATA_BROWSER", "off")
        .env("WEBDATA_SEARXNG_URL", &searx.base)
}

fn with_llm(db: Db, llm: &Site) -> ServerOptions {
    ServerOptions::new(db)
        .env("WEBDATA_BROWSER", "off")
        .env("WEBDATA_LLM_BASE_URL", &llm.url("/v1"))
        .env("WEBDATA_LLM_MODEL", "test-model")
        .env("WEBDATA_LLM_API_KEY", "test-llm-key")
}

/// The newest ledger entry: its operation, reserved and settled amounts.
async fn last_ledger(s: &Server) -> Value {
    let store = s.store().await;
    store
        .ledger_entries(&s.org_id().await, 1)
        .await
        .expect("ledger")
        .into_iter()
        .next()
        .unwrap_or(Value::Null)
}

async fn search_maps_results_and_passes_every_parameter_for_one_credit(db: Db) {
    let (searx, searx_site) = Searx::serve(vec![
        json!({"url": "https://www.alpha.example/post", "title": "Alpha post", "content": "Alpha snippet", "publishedDate": "2024-03-05 10:20:30+00:00", "engine": "bing", "parsed_url": ["https", "www.alpha.example", "/post", "", "", ""]}),
        json!({"url": "https://www.alpha.example/post", "title": "Alpha again", "engine": "google"}),
        json!({"url": "https://news.example/b", "title": "Bravo news", "content": "Bravo snippet", "publishedDate": "last Tuesday", "source": "The Bravo Times"}),
        json!({"url": "https://charlie.example/", "title": "Charlie", "publishedDate": null}),
    ])
    .await;
    let s = Server::start_with(with_searx(db, &searx_site)).await;
    let r = s
        .post(
            "/v1/search",
            json!({"query": "rust & axum", "limit": 2, "language": "en", "country": "gb", "timeRange": "week"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.assert_request_id();
    assert_eq!(r.json["success"], true);
    assert_eq!(r.json["credits_used"], 1);
    let results = r.json["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "{}", r.text);
    assert_eq!(
        results[0],
        json!({"url": "https://www.alpha.example/post", "title": "Alpha post", "snippet": "Alpha snippet",
               "position": 1, "date": "2024-03-05T10:20:30Z", "source": "alpha.example"})
    );
    assert_eq!(
        results[1],
        json!({"url": "https://news.example/b", "title": "Bravo news", "snippet": "Bravo snippet",
               "position": 2, "date": "last Tuesday", "source": "The Bravo Times"})
    );
    let q = searx.queries();
    assert_eq!(q.len(), 1, "two results fit in page 1: {q:?}");
    assert_eq!(q[0]["q"], "rust & axum");
    assert_eq!(q[0]["format"], "json");
    assert_eq!(q[0]["pageno"], "1");
    assert_eq!(q[0]["language"], "en-GB");
    assert_eq!(q[0]["time_range"], "week");
    // Asking for more than page 1 holds asks page 2, which is empty.
    let r = s
        .post("/v1/search", json!({"query": "more", "country": "de"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["results"].as_array().map(Vec::len), Some(3));
    assert_eq!(r.json["results"][2]["position"], 3);
    assert!(r.json["results"][2].get("date").is_none(), "{}", r.text);
    let q = searx.queries();
    assert_eq!(q[1]["language"], "de-DE");
    assert!(!q[1].contains_key("time_range"));
    assert_eq!(q[2]["pageno"], "2");
    let e = last_ledger(&s).await;
    assert_eq!(e["operation"], "search");
    assert_eq!(e["settled"], json!(1), "{e}");
    assert_eq!(s.credits().await, 998);
}

async fn search_validation_and_provider_failure_cost_nothing(db: Db) {
    let (searx, searx_site) =
        Searx::serve(vec![json!({"url": "https://a.example/", "title": "A"})]).await;
    let s = Server::start_with(with_searx(db, &searx_site)).await;
    for (body, field) in [
        (json!({"query": "a", "limit": 0}), "`limit`"),
        (json!({"query": "a", "limit": 51}), "`limit`"),
        (json!({"query": ""}), "`query`"),
        (json!({"query": "q".repeat(501)}), "`query`"),
        (json!({"limit": 5}), "query"),
        (json!({"query": "a", "timeRange": "decade"}), "timeRange"),
        (json!({"query": "a", "country": "gbr"}), "`country`"),
        (json!({"query": "a", "language": "english!"}), "`language`"),
        (
            json!({"query": "a", "scrapeOptions": {"timeout": 5}}),
            "scrapeOptions.timeout",
        ),
        (json!({"query": "a", "pages": 2}), "pages"),
    ] {
        let r = s.post("/v1/search", body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(r.message().contains(field), "{body}: {}", r.message());
    }
    assert!(searx.queries().is_empty());
    assert_eq!(s.credits().await, 1000);
    let r = s.post("/v1/search", json!({"query": "fail"})).await;
    r.assert_error(502, "fetch_failed");
    assert!(r.message().contains("500"), "{}", r.message());
    let e = last_ledger(&s).await;
    assert_eq!(e["operation"], "search");
    assert_eq!(e["settled"], json!(0), "{e}");
    assert_eq!(s.credits().await, 1000);
}

async fn search_scrape_options_bill_each_scraped_result_and_keep_failed_ones(db: Db) {
    let site = pages().await;
    let (_, searx_site) = Searx::serve(vec![
        json!({"url": site.url("/a"), "title": "Alpha", "content": "about alpha"}),
        json!({"url": DEAD, "title": "Dead", "content": "nobody home", "publishedDate": "2023-12-01"}),
        json!({"url": site.url("/b"), "title": "Bravo"}),
    ])
    .await;
    let s = Server::start_with(with_searx(db, &searx_site)).await;
    let r = s
        .post(
            "/v1/search",
            json!({"query": "alpha", "limit": 5, "scrapeOptions": {"formats": ["markdown"], "maxAge": 0}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json["credits_used"], 3,
        "1 for the search + 2 pages: {}",
        r.text
    );
    let results = r.json["results"].as_array().expect("results");
    assert_eq!(results.len(), 3);
    assert!(results[0]["document"]["markdown"]
        .as_str()
        .is_some_and(|m| m.contains("complete article about Alpha")));
    assert_eq!(
        results[1],
        json!({"url": DEAD, "title": "Dead", "snippet": "nobody home", "position": 2,
               "date": "2023-12-01", "source": "127.0.0.2"}),
        "a failed scrape keeps its search fields and has no document"
    );
    assert!(results[2]["document"]["markdown"]
        .as_str()
        .is_some_and(|m| m.contains("Bravo")));
    let e = last_ledger(&s).await;
    assert_eq!(e["operation"], "search");
    assert_eq!(e["reserved"], json!(6), "1 + limit held up front: {e}");
    assert_eq!(e["settled"], r.json["credits_used"], "{e}");
    assert_eq!(s.credits().await, 997);
}

async fn unconfigured_search_and_extract_are_not_configured_at_no_cost(db: Db) {
    let s = Server::start_with(ServerOptions::new(db).env("WEBDATA_BROWSER", "off")).await;
    let r = s.post("/v1/search", json!({"query": "anything"})).await;
    r.assert_error(501, "not_configured");
    assert!(
        r.message().contains("WEBDATA_SEARXNG_URL"),
        "{}",
        r.message()
    );
    let r = s
        .post(
            "/v1/extract",
            json!({"urls": ["http://127.0.0.2:9/"], "prompt": "the title"}),
        )
        .await;
    r.assert_error(501, "not_configured");
    assert!(
        r.message().contains("WEBDATA_LLM_BASE_URL"),
        "{}",
        r.message()
    );
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": "http://127.0.0.2:9/", "formats": ["changeTracking"],
                   "changeTrackingOptions": {"modes": ["json"], "prompt": "the price"}}),
        )
        .await;
    r.assert_error(501, "not_configured");
    assert!(
        r.message().contains("changeTrackingOptions.modes"),
        "{}",
        r.message()
    );
    assert_eq!(s.credits().await, 1000);
    let store = s.store().await;
    assert!(
        store
            .ledger_entries(&s.org_id().await, 10)
            .await
            .expect("ledger")
            .is_empty(),
        "nothing was reserved"
    );
}

fn title_schema() -> Value {
    json!({
        "type": "object",
        "required": ["title"],
        "properties": { "title": { "type": "string" }, "count": { "type": "integer" } }
    })
}

async fn extract_retries_once_with_the_validation_errors_and_bills_pages_read(db: Db) {
    let site = pages().await;
    let (llm, llm_site) = Llm::serve(&[
        "{\"title\": 5}",
        "```json\n{\"title\": \"Alpha\", \"count\": 2}\n```",
    ])
    .await;
    let s = Server::start_with(with_llm(db, &llm_site).env("WEBDATA_LLM_MAX_INPUT_TOKENS", "1000"))
        .await;
    let urls = [
        site.url("/a"),
        site.url("/b"),
        site.url("/long"),
        DEAD.to_string(),
    ];
    let r = s
        .post(
            "/v1/extract",
            json!({"urls": urls, "prompt": "The first article's title and how many articles there are.", "schema": title_schema()}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.assert_request_id();
    assert_eq!(r.json["data"], json!({"title": "Alpha", "count": 2}));
    let sources = r.json["sources"].as_array().expect("sources");
    let flags: Vec<(&str, bool)> = sources
        .iter()
        .map(|s| (s["url"].as_str().unwrap_or(""), s["ok"] == true))
        .collect();
    assert_eq!(
        flags,
        vec![
            (urls[0].as_str(), true),
            (urls[1].as_str(), true),
            (urls[2].as_str(), true),
            (DEAD, false)
        ]
    );
    assert!(sources[3]["error"].as_str().is_some_and(|e| !e.is_empty()));
    assert_eq!(
        sources[2]["trimmed"], true,
        "the long page was cut: {}",
        r.text
    );
    assert!(sources[0].get("trimmed").is_none(), "{}", r.text);
    assert_eq!(r.json["credits_used"], 8, "5 + 3 pages read: {}", r.text);
    let e = last_ledger(&s).await;
    assert_eq!(e["operation"], "extract");
    assert_eq!(e["reserved"], json!(9), "5 + 4 URLs held: {e}");
    assert_eq!(e["settled"], json!(8), "{e}");
    assert_eq!(s.credits().await, 992);

    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2, "one call and one retry");
    let (auth, first) = &reqs[0];
    assert_eq!(auth.as_deref(), Some("Bearer test-llm-key"));
    assert_eq!(first["model"], "test-model");
    assert_eq!(first["response_format"]["type"], "json_object");
    let first_text = first["messages"].to_string();
    assert!(
        first_text.contains("\\\"required\\\""),
        "the schema is sent: {first_text}"
    );
    assert!(first_text.contains("The first article's title"));
    assert!(first_text.contains("complete article about Alpha"));
    assert!(first_text.contains("complete article about Bravo"));
    assert!(
        !first_text.contains("Paragraph 399"),
        "the long page was trimmed"
    );
    assert!(
        first_text.len() < 12_000,
        "bounded input: {} bytes",
        first_text.len()
    );
    let second = &reqs[1].1;
    let msgs = second["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[2]["role"], "assistant");
    assert_eq!(msgs[2]["content"], "{\"title\": 5}");
    let fix = msgs[3]["content"].as_str().unwrap_or_default();
    assert!(
        fix.contains("at `/title`"),
        "the retry shows the errors: {fix}"
    );
    assert!(fix.contains("string"), "{fix}");
}

async fn extract_fails_after_two_violations_at_no_cost(db: Db) {
    let site = pages().await;
    let (llm, llm_site) = Llm::serve(&["{\"count\": 1}", "not json at all"]).await;
    let s = Server::start_with(with_llm(db, &llm_site)).await;
    let r = s
        .post(
            "/v1/extract",
            json!({"urls": [site.url("/a")], "schema": title_schema()}),
        )
        .await;
    r.assert_error(422, "extract_failed");
    assert!(r.message().contains("not valid JSON"), "{}", r.message());
    assert_eq!(llm.requests().len(), 2);
    let e = last_ledger(&s).await;
    assert_eq!(e["operation"], "extract");
    assert_eq!(e["settled"], json!(0), "{e}");
    assert_eq!(s.credits().await, 1000);
    // No page readable: nothing is asked and nothing charged.
    let r = s
        .post("/v1/extract", json!({"urls": [DEAD], "prompt": "anything"}))
        .await;
    r.assert_error(502, "fetch_failed");
    assert_eq!(llm.requests().len(), 2);
    assert_eq!(s.credits().await, 1000);
}

async fn extract_validation_refuses_bad_fields_and_schemas_at_no_cost(db: Db) {
    let (llm, llm_site) = Llm::serve(&[]).await;
    let s = Server::start_with(with_llm(db, &llm_site)).await;
    let many: Vec<String> = (0..26).map(|i| format!("https://a.example/{i}")).collect();
    for (body, field) in [
        (json!({"urls": [], "prompt": "x"}), "`urls`"),
        (json!({"urls": many, "prompt": "x"}), "`urls`"),
        (
            json!({"urls": ["ftp://a.example/"], "prompt": "x"}),
            "`urls[0]`",
        ),
        (json!({"prompt": "x"}), "urls"),
        (
            json!({"urls": ["https://a.example/"], "prompt": "p".repeat(4001)}),
            "`prompt`",
        ),
        (
            json!({"urls": ["https://a.example/"]}),
            "`prompt` or `schema`",
        ),
        (
            json!({"urls": ["https://a.example/"], "schema": {"type": "nonsense"}}),
            "`schema`",
        ),
        (
            json!({"urls": ["https://a.example/"], "schema": {"properties": {"a": {"minimum": "ten"}}}}),
            "`schema`",
        ),
        (
            json!({"urls": ["https://a.example/"], "schema": {"$ref": "http://127.0.0.2:9/s.json"}}),
            "`schema`",
        ),
        (
            json!({"urls": ["https://a.example/"], "schema": "object"}),
            "`schema`",
        ),
        (
            json!({"urls": ["https://a.example/"], "prompt": "x", "scrapeOptions": {"chunkSize": 1}}),
            "scrapeOptions.chunkSize",
        ),
        (
            json!({"urls": ["https://a.example/"], "prompt": "x", "model": "gpt"}),
            "model",
        ),
    ] {
        let r = s.post("/v1/extract", body.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(r.message().contains(field), "{body}: {}", r.message());
    }
    assert!(llm.requests().is_empty());
    assert_eq!(s.credits().await, 1000);
}

/// A pricing page whose Pro price the test sets.
async fn priced_site(price: Arc<Mutex<u32>>) -> Site {
    Site::serve(
        axum::Router::new()
            .route(
                "/pricing",
                get(|State(p): State<Arc<Mutex<u32>>>| async move {
                    let n = *p.lock().unwrap_or_else(|e| e.into_inner());
                    if n == 0 {
                        return (
                            StatusCode::SERVICE_UNAVAILABLE,
                            Html("<html><body><h1>Maintenance</h1><p>We are back soon.</p></body></html>".to_string()),
                        )
                            .into_response();
                    }
                    Html(format!(
                        "<!doctype html><html lang=\"en\"><head><title>Pricing</title></head><body><main><article>\
                         <h1>Pricing</h1><p>Our plans are simple and every plan includes the full product with support by email.</p>\
                         <p>The Pro plan costs {n} dollars a month for teams of any size, billed yearly.</p>\
                         <p>Prices exclude taxes; you can change plans at any time from the account page.</p>\
                         </article></main></body></html>"
                    ))
                    .into_response()
                }),
            )
            .with_state(price),
    )
    .await
}

fn price_schema() -> Value {
    json!({"type": "object", "required": ["price"],
           "properties": {"price": {"type": "number"}, "plan": {"type": "string"}}})
}

/// Change tracking's `json` mode: the model reads the fields of a new or
/// changed page (5 credits on top of the scrape), not of an unchanged one;
/// a changed page lists the fields that differ; a failed reading costs 0 and
/// keeps the baseline; crawls, bad options and a deployment without a model
/// are refused before anything is held.
async fn change_tracking_json_mode_compares_the_fields_the_model_reads(db: Db) {
    let price = Arc::new(Mutex::new(29u32));
    let site = priced_site(price.clone()).await;
    let (llm, llm_site) = Llm::serve(&[
        "{\"price\": 29, \"plan\": \"Pro\"}",
        "{\"price\": 39, \"plan\": \"Pro\"}",
        "{\"price\": \"forty-nine\"}",
        "{\"plan\": \"Pro\"}",
        "{\"price\": 49, \"plan\": \"Pro\"}",
        "{\"price\": 59, \"plan\": \"Pro\"}",
        "{\"price\": 59}",
    ])
    .await;
    let s = Server::start_with(with_llm(db, &llm_site)).await;
    let url = site.url("/pricing");
    let body = json!({"url": url, "formats": ["markdown", "changeTracking"],
        "changeTrackingOptions": {"modes": ["git-diff", "json"], "schema": price_schema(),
                                  "prompt": "The Pro plan's monthly price."}});
    let set = |n: u32| *price.lock().unwrap_or_else(|e| e.into_inner()) = n;

    let r = s.post("/v1/scrape", body.clone()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let ct = &r.json["data"]["changeTracking"];
    assert_eq!(ct["changeStatus"], "new", "{ct}");
    assert!(
        ct.get("json").is_none(),
        "only a changed page lists fields: {ct}"
    );
    assert_eq!(
        r.json["credits_used"], 6,
        "1 for the page + 5 for the model: {}",
        r.text
    );
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 1);
    let sent = reqs[0].1["messages"].to_string();
    assert!(
        sent.contains("costs 29 dollars"),
        "the page is sent: {sent}"
    );
    assert!(sent.contains("monthly price"), "the prompt is sent: {sent}");
    assert!(sent.contains("\\\"price\\\""), "the schema is sent: {sent}");

    // Unchanged: no model call, 1 credit.
    let r = s.post("/v1/scrape", body.clone()).await;
    assert_eq!(
        r.json["data"]["changeTracking"]["changeStatus"], "same",
        "{}",
        r.text
    );
    assert_eq!(r.json["credits_used"], 1, "{}", r.text);
    assert_eq!(
        llm.requests().len(),
        1,
        "an unchanged page is not read again"
    );

    set(39);
    let r = s.post("/v1/scrape", body.clone()).await;
    let ct = &r.json["data"]["changeTracking"];
    assert_eq!(ct["changeStatus"], "changed", "{ct}");
    assert_eq!(
        ct["json"],
        json!({"price": {"previous": 29, "current": 39}}),
        "{ct}"
    );
    assert!(
        ct["diff"]["text"]
            .as_str()
            .is_some_and(|d| d.contains("+The Pro plan costs 39")),
        "{ct}"
    );
    assert_eq!(r.json["credits_used"], 6, "{}", r.text);

    // The model fails twice (the schema is not met): 422, nothing charged,
    // and the snapshot stays, so the next reading compares with 39.
    set(49);
    let r = s.post("/v1/scrape", body.clone()).await;
    r.assert_error(422, "extract_failed");
    assert!(r.message().contains("json"), "{}", r.message());
    let r = s.post("/v1/scrape", body.clone()).await;
    let ct = &r.json["data"]["changeTracking"];
    assert_eq!(ct["changeStatus"], "changed", "{}", r.text);
    assert_eq!(
        ct["json"],
        json!({"price": {"previous": 39, "current": 49}}),
        "{ct}"
    );
    assert_eq!(llm.requests().len(), 5);
    assert_eq!(s.credits().await, 1000 - 6 - 1 - 6 - 6);

    // A git-diff scrape of the page (same tag) keeps its own history and
    // never replaces the json mode's baseline: the next json scrape still
    // compares the fields with 49.
    set(59);
    let plain = json!({"url": url, "formats": ["markdown", "changeTracking"]});
    let r = s.post("/v1/scrape", plain.clone()).await;
    assert_eq!(
        r.json["data"]["changeTracking"]["changeStatus"], "new",
        "{}",
        r.text
    );
    assert_eq!(r.json["credits_used"], 1);
    let r = s.post("/v1/scrape", body.clone()).await;
    let ct = &r.json["data"]["changeTracking"];
    assert_eq!(
        ct["json"],
        json!({"price": {"previous": 49, "current": 59}}),
        "{}",
        r.text
    );
    assert_eq!(llm.requests().len(), 6);

    // An error answer is compared but neither read (no model call, no
    // charge) nor kept as the baseline.
    set(0);
    let r = s.post("/v1/scrape", body.clone()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["data"]["metadata"]["statusCode"], 503, "{}", r.text);
    assert!(
        r.json["data"]["changeTracking"].get("json").is_none(),
        "{}",
        r.text
    );
    assert_eq!(r.json["credits_used"], 0, "{}", r.text);
    assert_eq!(
        llm.requests().len(),
        6,
        "an error page is not sent to the model"
    );
    set(59);
    let r = s.post("/v1/scrape", body.clone()).await;
    assert_eq!(
        r.json["data"]["changeTracking"]["changeStatus"], "same",
        "{}",
        r.text
    );
    assert_eq!(r.json["credits_used"], 1);

    // Another prompt is another history: new, read once.
    let mut other = body.clone();
    other["changeTrackingOptions"]["prompt"] = json!("Only the price.");
    let r = s.post("/v1/scrape", other).await;
    assert_eq!(
        r.json["data"]["changeTracking"]["changeStatus"], "new",
        "{}",
        r.text
    );
    assert_eq!(r.json["credits_used"], 6, "{}", r.text);
    assert_eq!(llm.requests().len(), 7);
    assert_eq!(
        s.credits().await,
        1000 - 19 - 1 - 6 - 1 - 6,
        "the error page cost nothing"
    );

    // Refused before anything is held, naming the field.
    for (bad, field) in [
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"modes": ["json"]}}),
            "changeTrackingOptions.schema",
        ),
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"schema": price_schema()}}),
            "changeTrackingOptions.schema",
        ),
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"modes": ["json"], "schema": {"type": "array"}}}),
            "changeTrackingOptions.schema",
        ),
        (
            json!({"url": url, "formats": ["changeTracking"], "changeTrackingOptions": {"modes": ["json"], "schema": {"type": "object", "minProperties": "x"}}}),
            "changeTrackingOptions.schema",
        ),
    ] {
        let r = s.post("/v1/scrape", bad.clone()).await;
        r.assert_error(400, "invalid_request");
        assert!(r.message().contains(field), "{bad}: {}", r.message());
    }
    let r = s
        .post(
            "/v1/crawl",
            json!({"url": url, "scrapeOptions": {"formats": ["changeTracking"],
            "changeTrackingOptions": {"modes": ["json"], "prompt": "the price"}}}),
        )
        .await;
    r.assert_error(400, "invalid_request");
    assert!(
        r.message()
            .contains("scrapeOptions.changeTrackingOptions.modes"),
        "{}",
        r.message()
    );
    assert_eq!(llm.requests().len(), 7);
    assert_eq!(s.credits().await, 1000 - 33);
}

on_both!(
    change_tracking_json_mode_compares_the_fields_the_model_reads,
    search_maps_results_and_passes_every_parameter_for_one_credit,
    search_validation_and_provider_failure_cost_nothing,
    search_scrape_options_bill_each_scraped_result_and_keep_failed_ones,
    unconfigured_search_and_extract_are_not_configured_at_no_cost,
    extract_retries_once_with_the_validation_errors_and_bills_pages_read,
    extract_fails_after_two_violations_at_no_cost,
    extract_validation_refuses_bad_fields_and_schemas_at_no_cost,
);
