//! The MCP tools: names, descriptions and JSON Schemas written for a model
//! to use them well, and how each maps onto one `/v1` call.

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};
use std::sync::Arc;

/// Tokens an answer may take by default (about 4 characters a token).
pub const DEFAULT_MAX_TOKENS: i64 = 10_000;

fn formats_schema() -> Value {
    json!({
        "type": "array",
        "description": "Output formats. markdown (default) is LLM-ready text of the main content; html is cleaned HTML; rawHtml the page as served; text plain text; links every link; screenshot/screenshotFull a signed PNG URL; chunks token-counted markdown chunks; metadata title, description, language…; brand the site's brand.",
        "items": { "type": "string", "enum": ["markdown", "html", "rawHtml", "text", "links", "screenshot", "screenshotFull", "chunks", "metadata", "brand"] },
        "uniqueItems": true
    })
}

fn budget_schema() -> Value {
    json!({
        "type": "integer", "minimum": 500, "maximum": 100000, "default": DEFAULT_MAX_TOKENS,
        "description": "Most tokens (≈4 characters each) this answer may take; longer content is cut and the answer says how to read on."
    })
}

fn scrape_options_schema() -> Value {
    json!({
        "type": "object",
        "description": "How each page is scraped.",
        "properties": {
            "formats": formats_schema(),
            "onlyMainContent": { "type": "boolean", "default": true, "description": "Drop navigation, headers, footers and ads." },
        },
        "additionalProperties": true
    })
}

fn paths_schema(what: &str) -> Value {
    json!({ "type": "array", "items": { "type": "string" }, "maxItems": 100, "description": what })
}

fn tool(
    name: &'static str,
    title: &str,
    description: &'static str,
    schema: Value,
    read_only: bool,
) -> Tool {
    let Value::Object(obj) = schema else {
        unreachable!("tool schemas are objects")
    };
    let mut t = Tool::new(name, description, Arc::new(obj as JsonObject));
    let mut a = ToolAnnotations::new();
    a.title = Some(title.to_string());
    a.read_only_hint = Some(read_only);
    a.open_world_hint = Some(true);
    a.destructive_hint = Some(false);
    t.annotations = Some(a);
    t
}

/// Every tool, in the order `tools/list` gives them.
pub fn all() -> Vec<Tool> {
    vec![
        tool(
            "scrape",
            "Scrape a web page",
            "Fetch one web page and return it as clean markdown (main content only by default), plus any other formats asked for. Uses a headless browser only when the page needs it. Answers the markdown as text and the whole Document (url, metadata, quality, …) as structured content. Long pages are cut at maxTokens: call again with the `offset` the answer gives to read on (served from cache). Costs 1 credit.",
            json!({
                "type": "object",
                "properties": {
                    "url": { "type": "string", "format": "uri", "description": "The http(s) URL of the page." },
                    "formats": formats_schema(),
                    "onlyMainContent": { "type": "boolean", "default": true, "description": "Drop navigation, headers, footers and ads; false keeps the whole page." },
                    "includeTags": { "type": "array", "items": { "type": "string" }, "description": "CSS selectors of the only parts to keep." },
                    "excludeTags": { "type": "array", "items": { "type": "string" }, "description": "CSS selectors of parts to drop." },
                    "waitFor": { "type": "integer", "minimum": 0, "maximum": 30000, "description": "Milliseconds to wait after load before reading (needs the browser)." },
                    "timeout": { "type": "integer", "minimum": 1000, "maximum": 120000, "default": 30000, "description": "Whole-scrape timeout in milliseconds." },
                    "actions": {
                        "type": "array", "maxItems": 20,
                        "description": "Browser actions run in order before the page is read.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "type": { "type": "string", "enum": ["wait", "click", "scroll", "type", "press"] },
                                "selector": { "type": "string", "description": "CSS selector (click, type, scroll)." },
                                "text": { "type": "string", "description": "Text to type." },
                                "key": { "type": "string", "description": "Key to press, e.g. Enter." },
                                "ms": { "type": "integer", "minimum": 0, "description": "Milliseconds to wait." }
                            },
                            "required": ["type"],
                            "additionalProperties": false
                        }
                    },
                    "maxAge": { "type": "integer", "minimum": 0, "description": "Accept a cached copy at most this many milliseconds old." },
                    "tier": { "type": "string", "enum": ["auto", "fetch", "render"], "default": "auto", "description": "fetch = plain HTTP only; render = always the browser; auto escalates when needed." },
                    "offset": { "type": "integer", "minimum": 0, "default": 0, "description": "Character offset in the markdown to start from (to read on after a cut answer)." },
                    "maxTokens": budget_schema()
                },
                "required": ["url"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "crawl",
            "Start crawling a site",
            "Start crawling a website from a URL: follows its links and sitemap within the same site and scrapes every page found, up to `limit`. Runs in the background: this answers the crawl id at once; call crawl_status with it to read the pages. Costs 1 credit per page scraped.",
            json!({
                "type": "object",
                "properties": {
                    "url": { "type": "string", "format": "uri", "description": "Where the crawl starts." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100000, "default": 10, "description": "Most pages to scrape (each costs a credit). Defaults to 10 here." },
                    "maxDepth": { "type": "integer", "minimum": 0, "maximum": 20, "description": "Link hops from the start URL (0 = only the start URL)." },
                    "includePaths": paths_schema("Only URLs whose path matches one of these globs, e.g. /docs/**."),
                    "excludePaths": paths_schema("Never URLs whose path matches one of these globs."),
                    "sitemap": { "type": "string", "enum": ["include", "skip", "only"], "default": "include", "description": "Use the sitemap too, not at all, or only." },
                    "allowSubdomains": { "type": "boolean", "default": false, "description": "Follow links to other subdomains of the site." },
                    "scrapeOptions": scrape_options_schema()
                },
                "required": ["url"],
                "additionalProperties": false
            }),
            false,
        ),
        tool(
            "crawl_status",
            "Read a crawl's progress and pages",
            "Status of a crawl (scraping, completed, failed, cancelled), its counts, and a page of its documents as markdown. Pass the `cursor` an answer gives to read the next documents. Free.",
            json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "The crawl id crawl returned." },
                    "cursor": { "type": "string", "description": "Where to continue, from the previous answer." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "Most documents in this answer." },
                    "maxTokens": budget_schema()
                },
                "required": ["id"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "crawl_cancel",
            "Cancel a crawl",
            "Stop a running crawl or batch scrape. Pages already scraped stay readable (and charged); nothing more is fetched. Free.",
            json!({
                "type": "object",
                "properties": { "id": { "type": "string", "description": "The crawl or batch id." } },
                "required": ["id"],
                "additionalProperties": false
            }),
            false,
        ),
        tool(
            "map",
            "List a site's URLs",
            "List the URLs of a website quickly, from its sitemap and links, without scraping them. With `search`, the URLs most relevant to those words come first. Use it to find the right page before scrape. Costs 1 credit.",
            json!({
                "type": "object",
                "properties": {
                    "url": { "type": "string", "format": "uri", "description": "The site." },
                    "search": { "type": "string", "description": "Words to rank the URLs by." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100000, "default": 5000, "description": "Most URLs." },
                    "includeSubdomains": { "type": "boolean", "default": false },
                    "sitemap": { "type": "string", "enum": ["include", "skip", "only"], "default": "include" },
                    "maxTokens": budget_schema()
                },
                "required": ["url"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "batch_scrape",
            "Scrape many pages",
            "Scrape a list of URLs in the background (no link following). Answers a batch id at once; call batch_scrape_status with it to read the documents. Costs 1 credit per page scraped.",
            json!({
                "type": "object",
                "properties": {
                    "urls": { "type": "array", "items": { "type": "string", "format": "uri" }, "minItems": 1, "maxItems": 10000, "description": "The pages." },
                    "formats": formats_schema(),
                    "onlyMainContent": { "type": "boolean", "default": true },
                    "ignoreInvalidURLs": { "type": "boolean", "default": false, "description": "Skip (and list) invalid URLs instead of refusing the batch." }
                },
                "required": ["urls"],
                "additionalProperties": false
            }),
            false,
        ),
        tool(
            "batch_scrape_status",
            "Read a batch scrape's progress and pages",
            "Status of a batch scrape and a page of its documents as markdown. Pass the `cursor` an answer gives to read the next documents. Free.",
            json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "The batch id batch_scrape returned." },
                    "cursor": { "type": "string" },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 100, "default": 10 },
                    "maxTokens": budget_schema()
                },
                "required": ["id"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "search",
            "Search the web",
            "Search the web and return titles, URLs and descriptions; with scrapeOptions each result is also scraped (and billed as a scrape). Needs a search provider configured on the server.",
            json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string", "maxLength": 500, "description": "What to search for." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 50, "default": 10 },
                    "country": { "type": "string", "description": "ISO 3166-1 alpha-2 code, e.g. de." },
                    "language": { "type": "string", "description": "Language code, e.g. en." },
                    "scrapeOptions": scrape_options_schema(),
                    "maxTokens": budget_schema()
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "extract",
            "Extract structured data from pages",
            "Read 1 to 25 pages and extract what `prompt` asks for, shaped by the JSON Schema `schema` when given, with a language model configured on the server. Answers the extracted JSON.",
            json!({
                "type": "object",
                "properties": {
                    "urls": { "type": "array", "items": { "type": "string", "format": "uri" }, "minItems": 1, "maxItems": 25 },
                    "prompt": { "type": "string", "maxLength": 4000, "description": "What to extract. prompt or schema is required." },
                    "schema": { "type": "object", "description": "JSON Schema the answer must match." },
                    "maxTokens": budget_schema()
                },
                "required": ["urls"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "llmstxt",
            "Make a site's llms.txt",
            "Crawl a website and build its llms.txt (a title, a summary and sections of links with one-line descriptions, for language models) and llms-full.txt (every page's main-content markdown). Runs in the background: this answers the job id at once; call llmstxt_status with it until it is completed. Costs 1 credit per page crawled.",
            json!({
                "type": "object",
                "properties": {
                    "url": { "type": "string", "format": "uri", "description": "The site's start page; its title and description head the file." },
                    "limit": { "type": "integer", "minimum": 1, "maximum": 5000, "default": 10, "description": "Most pages to crawl (each costs a credit). Defaults to 10 here." },
                    "maxDepth": { "type": "integer", "minimum": 0, "maximum": 20, "description": "Link hops from the start URL." },
                    "includePaths": paths_schema("Only URLs whose path matches one of these globs, e.g. /docs/**."),
                    "excludePaths": paths_schema("Never URLs whose path matches one of these globs."),
                    "sitemap": { "type": "string", "enum": ["include", "skip", "only"], "default": "include", "description": "Use the sitemap too, not at all, or only." }
                },
                "required": ["url"],
                "additionalProperties": false
            }),
            false,
        ),
        tool(
            "llmstxt_status",
            "Read an llms.txt job",
            "Status of an llms.txt job (queued, scraping, completed, failed, cancelled) and its counts; once completed, the llms.txt (or, with file llms-full.txt, the full text), cut at maxTokens. Free.",
            json!({
                "type": "object",
                "properties": {
                    "id": { "type": "string", "description": "The job id llmstxt returned." },
                    "file": { "type": "string", "enum": ["llms.txt", "llms-full.txt"], "default": "llms.txt", "description": "Which file to answer once completed." },
                    "maxTokens": budget_schema()
                },
                "required": ["id"],
                "additionalProperties": false
            }),
            true,
        ),
        tool(
            "brand",
            "Read a site's brand",
            "A domain's brand identity: name, description, logos and icons, colours, fonts and social links. 5 credits for a fresh lookup, 1 from cache.",
            json!({
                "type": "object",
                "properties": {
                    "domain": { "type": "string", "description": "A domain or URL, e.g. example.com." },
                    "maxAge": { "type": "integer", "minimum": 0, "description": "Accepted cache age in ms (0 forces a fresh lookup)." }
                },
                "required": ["domain"],
                "additionalProperties": false
            }),
            true,
        ),
    ]
}
