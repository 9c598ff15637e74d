//! The MCP server (Model Context Protocol, official Rust SDK `rmcp`): the
//! tools of [`tools`] over two transports, Streamable HTTP at `POST /mcp`
//! ([`http`]) and stdio (`webdata mcp`). Each tool call is one `/v1` call
//! through [`ApiClient`], so keys, credits, limits and the network guard
//! are the API's; API errors come back as tool errors carrying the error
//! code and message.

pub mod http;
pub mod tools;

use crate::client::{ApiClient, ApiFailure};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};

/// Where a tool call's `/v1` request goes.
#[derive(Clone)]
enum Backend {
    /// One client for the whole session (stdio).
    Fixed(ApiClient),
    /// The app's router with the key of each HTTP request (`POST /mcp`).
    PerRequest(axum::Router),
}

/// The MCP server handler.
#[derive(Clone)]
pub struct WebdataMcp {
    backend: Backend,
}

impl WebdataMcp {
    /// A server whose tools call `client` (stdio).
    pub fn with_client(client: ApiClient) -> Self {
        WebdataMcp {
            backend: Backend::Fixed(client),
        }
    }

    /// A server whose tools call `router` with each HTTP request's key.
    pub fn per_request(router: axum::Router) -> Self {
        WebdataMcp {
            backend: Backend::PerRequest(router),
        }
    }

    fn client(&self, ctx: &RequestContext<RoleServer>) -> Result<ApiClient, ErrorData> {
        match &self.backend {
            Backend::Fixed(c) => Ok(c.clone()),
            Backend::PerRequest(router) => {
                let key = ctx
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|p| p.headers.get(axum::http::header::AUTHORIZATION))
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.split_once(' ').map(|(_, k)| k.trim().to_string()))
                    .ok_or_else(|| {
                        ErrorData::invalid_request(
                            "missing `Authorization: Bearer <API key>`",
                            None,
                        )
                    })?;
                Ok(ApiClient::local(router.clone(), key))
            }
        }
    }
}

impl ServerHandler for WebdataMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("webdata", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "webdata turns web pages into LLM-ready markdown. Use `scrape` for one page, \
                 `map` to find a site's URLs, `crawl` + `crawl_status` for a whole site, \
                 `batch_scrape` + `batch_scrape_status` for a list of pages, `search` to find \
                 pages, `extract` for structured data and `brand` for a site's identity. \
                 Answers are cut at `maxTokens` (default 10000) and say how to read on.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::all().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if self.get_tool(&name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; tools/list names them"),
                None,
            ));
        }
        let client = self.client(&context)?;
        let args = request.arguments.unwrap_or_default();
        Ok(call(&client, &name, args).await.into())
    }
}

/// A tool error carrying the API's code and message.
fn failed(e: ApiFailure) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(format!(
        "{}: {}",
        e.code, e.message
    ))]);
    r.structured_content = Some(json!({ "error": { "code": e.code, "message": e.message } }));
    r
}

fn invalid(msg: String) -> CallToolResult {
    failed(ApiFailure {
        status: 400,
        code: "invalid_request".into(),
        message: msg,
        retry_after_ms: None,
    })
}

fn ok(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

/// The budget in characters (≈4 per token) from `maxTokens`.
fn budget(args: &mut Map<String, Value>) -> Result<usize, CallToolResult> {
    match args.remove("maxTokens") {
        None | Some(Value::Null) => Ok(tools::DEFAULT_MAX_TOKENS as usize * 4),
        Some(v) => match v.as_i64() {
            Some(n) if (500..=100_000).contains(&n) => Ok(n as usize * 4),
            _ => Err(invalid(format!(
                "maxTokens: must be an integer from 500 to 100000 (got {v})"
            ))),
        },
    }
}

/// `s` cut to `max` characters at a char boundary; whether it was cut.
fn cut(s: &str, max: usize) -> (&str, bool) {
    if s.len() <= max {
        return (s, false);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    // Prefer a line break near the end, so a cut never splits a word.
    let at = s[..end].rfind('\n').filter(|&i| i > end / 2).unwrap_or(end);
    (&s[..at], true)
}

fn path_id(args: &Map<String, Value>, tool: &str) -> Result<String, CallToolResult> {
    match args.get("id").and_then(Value::as_str) {
        Some(id) if webdata_core::store::is_id_text(id) => Ok(id.to_string()),
        Some(id) => Err(invalid(format!("id: `{id}` is not a crawl or batch id"))),
        None => Err(invalid(format!("id: required (the id {tool} was given)"))),
    }
}

/// Starts a background job at `path` (`limit` 10 unless given); the text
/// says how to follow it.
async fn start(
    client: &ApiClient,
    path: &str,
    args: Map<String, Value>,
    started: impl Fn(&str, &str) -> String,
) -> Result<CallToolResult, ApiFailure> {
    let mut body = Value::Object(args);
    if body.get("limit").is_none() {
        body["limit"] = json!(10);
    }
    let job = client.post(path, body).await?;
    let text = started(
        job["id"].as_str().unwrap_or_default(),
        job["status"].as_str().unwrap_or("queued"),
    );
    Ok(ok(text, job))
}

/// Runs one tool.
async fn call(client: &ApiClient, name: &str, mut args: Map<String, Value>) -> CallToolResult {
    let max = match budget(&mut args) {
        Ok(m) => m,
        Err(e) => return e,
    };
    let run = async {
        match name {
            "scrape" => scrape(client, args, max).await,
            "crawl" => {
                start(client, "/v1/crawl", args, |id, st| format!("Crawl {id} started ({st}). Call crawl_status with id \"{id}\" to follow it and read its pages.")).await
            }
            "crawl_status" | "batch_scrape_status" => {
                let id = match path_id(
                    &args,
                    if name == "crawl_status" {
                        "crawl"
                    } else {
                        "batch_scrape"
                    },
                ) {
                    Ok(id) => id,
                    Err(e) => return Ok(e),
                };
                let base = if name == "crawl_status" {
                    "/v1/crawl"
                } else {
                    "/v1/batch/scrape"
                };
                status(client, base, &id, &args, max, name).await
            }
            "llmstxt" => {
                start(client, "/v1/llmstxt", args, |id, st| format!("llms.txt job {id} started ({st}). Call llmstxt_status with id \"{id}\" until it is completed.")).await
            }
            "llmstxt_status" => {
                let id = match path_id(&args, "llmstxt") {
                    Ok(id) => id,
                    Err(e) => return Ok(e),
                };
                let full = match args.get("file").and_then(Value::as_str) {
                    None | Some("llms.txt") => false,
                    Some("llms-full.txt") => true,
                    Some(other) => {
                        return Ok(invalid(format!(
                            "file: must be `llms.txt` or `llms-full.txt` (got `{other}`)"
                        )))
                    }
                };
                let mut v = client.get(&format!("/v1/llmstxt/{id}")).await?;
                let state = v["status"].as_str().unwrap_or("").to_string();
                if state == "failed" || state == "cancelled" {
                    // Finished without the files: an error, so the agent stops polling.
                    let why = v["error"]["message"]
                        .as_str()
                        .unwrap_or("no reason was given")
                        .to_string();
                    let mut r = CallToolResult::error(vec![ContentBlock::text(format!(
                        "llms.txt job {id} {state}: {why}"
                    ))]);
                    r.structured_content = Some(v);
                    return Ok(r);
                }
                let counts = format!(
                    "{} pages scraped, {} failed, {} credits",
                    v["completed"], v["failed"], v["credits_used"]
                );
                let (keep, drop) = if full {
                    ("llmsFullTxt", "llmsTxt")
                } else {
                    ("llmsTxt", "llmsFullTxt")
                };
                let file = v["data"][keep].as_str().map(str::to_string);
                let text = match &file {
                    Some(file) => {
                        let (shown, was_cut) = cut(file, max);
                        let mut t = shown.to_string();
                        if was_cut {
                            t.push_str(&format!(
                                "\n\n[Cut at maxTokens: {} of {} characters shown; ask again with a larger maxTokens (up to 100000) to read more.]",
                                shown.chars().count(),
                                file.chars().count()
                            ));
                        }
                        if let Some(data) = v.get_mut("data").and_then(Value::as_object_mut) {
                            data.remove(drop);
                            data.insert(keep.into(), json!(shown));
                            data.insert("cut".into(), json!(was_cut));
                        }
                        t
                    }
                    None => format!(
                        "llms.txt job {id} is {state} ({counts}). Call llmstxt_status again until it is completed."
                    ),
                };
                Ok(ok(text, v))
            }
            "crawl_cancel" => {
                let id = match path_id(&args, "crawl") {
                    Ok(id) => id,
                    Err(e) => return Ok(e),
                };
                let path = if id.starts_with("batch_") {
                    format!("/v1/batch/scrape/{id}")
                } else {
                    format!("/v1/crawl/{id}")
                };
                let v = client.delete(&path).await?;
                Ok(ok(
                    format!("{id} is {}.", v["status"].as_str().unwrap_or("cancelled")),
                    v,
                ))
            }
            "map" => {
                let v = client.post("/v1/map", Value::Object(args)).await?;
                let links: Vec<String> = v["links"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|l| {
                        l.as_str()
                            .map(str::to_string)
                            .or_else(|| l["url"].as_str().map(str::to_string))
                    })
                    .collect();
                let all = links.join("\n");
                let (text, was_cut) = cut(&all, max);
                let shown = if was_cut {
                    text.lines().count()
                } else {
                    links.len()
                };
                let mut t = format!("{} URLs\n{text}", links.len());
                if was_cut {
                    t.push_str(&format!("\n\n[Cut at maxTokens: {shown} of {} URLs shown. Pass `search` to rank by relevance, a smaller `limit`, or a larger maxTokens.]", links.len()));
                }
                Ok(ok(t, v))
            }
            "batch_scrape" => {
                let mut body = Map::new();
                for k in ["urls", "ignoreInvalidURLs"] {
                    if let Some(v) = args.remove(k) {
                        body.insert(k.into(), v);
                    }
                }
                if !args.is_empty() {
                    body.insert("scrapeOptions".into(), Value::Object(args));
                }
                let job = client.post("/v1/batch/scrape", Value::Object(body)).await?;
                let id = job["id"].as_str().unwrap_or_default();
                let mut t = format!("Batch scrape {id} started. Call batch_scrape_status with id \"{id}\" to read its documents.");
                if let Some(bad) = job["invalidURLs"].as_array().filter(|a| !a.is_empty()) {
                    t.push_str(&format!(
                        " Skipped invalid URLs: {}",
                        Value::Array(bad.clone())
                    ));
                }
                Ok(ok(t, job))
            }
            "search" => {
                let v = client.post("/v1/search", Value::Object(args)).await?;
                let mut t = String::new();
                for r in v["results"].as_array().into_iter().flatten() {
                    t.push_str(&format!(
                        "- [{}]({})\n  {}\n",
                        r["title"].as_str().unwrap_or_default(),
                        r["url"].as_str().unwrap_or_default(),
                        r["snippet"].as_str().unwrap_or_default()
                    ));
                    if let Some(md) = r["document"]["markdown"].as_str() {
                        t.push_str(&format!("\n{md}\n\n"));
                    }
                }
                let (text, was_cut) = cut(&t, max);
                let mut text = text.to_string();
                if was_cut {
                    text.push_str("\n\n[Cut at maxTokens. Ask for fewer results (`limit`) or scrape a result on its own.]");
                }
                Ok(ok(text, v))
            }
            "extract" => {
                let v = client.post("/v1/extract", Value::Object(args)).await?;
                let data = serde_json::to_string_pretty(&v["data"]).unwrap_or_default();
                let (text, was_cut) = cut(&data, max);
                let mut text = text.to_string();
                if was_cut {
                    text.push_str(
                        "\n\n[Cut at maxTokens: the whole answer is in the structured content.]",
                    );
                }
                Ok(ok(text, v))
            }
            "brand" => {
                let Some(domain) = args.get("domain").and_then(Value::as_str) else {
                    return Ok(invalid("domain: required".into()));
                };
                let mut path = format!(
                    "/v1/brand?domain={}",
                    url::form_urlencoded::byte_serialize(domain.as_bytes()).collect::<String>()
                );
                if let Some(m) = args.get("maxAge") {
                    match m.as_i64() {
                        Some(m) => path.push_str(&format!("&maxAge={m}")),
                        None => {
                            return Ok(invalid(format!("maxAge: must be an integer (got {m})")))
                        }
                    }
                }
                let v = client.get(&path).await?;
                Ok(ok(crate::services::brand::brand_markdown(&v["data"]), v))
            }
            other => Ok(invalid(format!("unknown tool `{other}`"))),
        }
    };
    match run.await {
        Ok(r) => r,
        Err(e) => failed(e),
    }
}

/// `scrape`: the markdown from `offset`, cut at the budget.
async fn scrape(
    client: &ApiClient,
    mut args: Map<String, Value>,
    max: usize,
) -> Result<CallToolResult, ApiFailure> {
    let offset = match args.remove("offset") {
        None | Some(Value::Null) => 0,
        Some(v) => match v.as_u64() {
            Some(n) => n as usize,
            None => return Ok(invalid(format!("offset: must be a whole number (got {v})"))),
        },
    };
    // Reading on serves the page from the cache of the first call.
    if offset > 0 && !args.contains_key("maxAge") {
        args.insert("maxAge".into(), json!(3_600_000));
    }
    let v = client.post("/v1/scrape", Value::Object(args)).await?;
    let mut doc = v["data"].clone();
    let md = doc["markdown"].as_str().unwrap_or_default().to_string();
    let mut start = offset.min(md.len());
    while !md.is_char_boundary(start) {
        start -= 1;
    }
    let rest = &md[start..];
    let (part, was_cut) = cut(rest, max);
    let mut text = part.to_string();
    if was_cut {
        let next = start + part.len();
        text.push_str(&format!(
            "\n\n[Cut at maxTokens: characters {start}–{next} of {}. Call scrape again with the same url and offset={next} to read on.]",
            md.len()
        ));
        doc["markdown"] = json!(part);
    } else if start > 0 {
        doc["markdown"] = json!(part);
    }
    if md.is_empty() {
        text = "(the page has no markdown; see the structured content)".into();
    }
    // Other long formats are trimmed in the structured content too.
    for k in ["html", "rawHtml", "text"] {
        if let Some(s) = doc[k].as_str() {
            let (p, c) = cut(s, max);
            if c {
                doc[k] = json!(format!("{p}\n[cut at maxTokens]"));
            }
        }
    }
    if let Some(o) = doc.as_object_mut() {
        o.insert("creditsUsed".into(), v["credits_used"].clone());
    }
    Ok(ok(text, doc))
}

/// `crawl_status` / `batch_scrape_status`: counts and a page of documents.
async fn status(
    client: &ApiClient,
    base: &str,
    id: &str,
    args: &Map<String, Value>,
    max: usize,
    tool: &str,
) -> Result<CallToolResult, ApiFailure> {
    let limit = args
        .get("limit")
        .and_then(Value::as_i64)
        .unwrap_or(10)
        .clamp(1, 100);
    let mut path = format!("{base}/{id}?limit={limit}");
    if let Some(c) = args.get("cursor").and_then(Value::as_str) {
        path.push_str(&format!(
            "&cursor={}",
            url::form_urlencoded::byte_serialize(c.as_bytes()).collect::<String>()
        ));
    }
    let mut v = client.get(&path).await?;
    let docs = v["data"].as_array().cloned().unwrap_or_default();
    let mut text = format!(
        "{id}: {} — {} of {} pages scraped, {} failed.\n",
        v["status"].as_str().unwrap_or("?"),
        v["completed"],
        v["total"],
        v["failed"]
    );
    let per_doc = if docs.is_empty() {
        max
    } else {
        (max / docs.len()).max(400)
    };
    let mut trimmed = Vec::with_capacity(docs.len());
    for mut d in docs {
        let md = d["markdown"].as_str().unwrap_or_default().to_string();
        let (part, was_cut) = cut(&md, per_doc);
        text.push_str(&format!(
            "\n## {}\n\n{part}\n",
            d["url"].as_str().unwrap_or_default()
        ));
        if was_cut {
            text.push_str(&format!(
                "\n[Page cut at its share of maxTokens; scrape {} for all of it.]\n",
                d["url"].as_str().unwrap_or_default()
            ));
            d["markdown"] = json!(part);
        }
        trimmed.push(d);
    }
    v["data"] = Value::Array(trimmed);
    if let Some(c) = v["next"].as_str() {
        text.push_str(&format!(
            "\n[More to read: call {tool} with id \"{id}\" and cursor \"{c}\".]"
        ));
    }
    Ok(ok(text, v))
}
