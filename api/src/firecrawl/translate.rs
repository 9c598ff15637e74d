//! Firecrawl request bodies to ours, and our Documents to Firecrawl's. Every
//! field a Firecrawl client may send is either mapped, accepted because we
//! already behave that way, or refused with an error naming it; nothing is
//! silently ignored. `docs/firecrawl-compatibility.md` lists each one.

use serde_json::{json, Map, Value};

/// A request we cannot honour: the field (path) and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub field: String,
    pub reason: String,
}

/// The string field `name` of a request body: refused as missing when it is
/// absent or null, and as the wrong type when it is anything but a string.
pub fn required_str<'a>(body: &'a Map<String, Value>, name: &str) -> Out<&'a str> {
    match body.get(name) {
        None | Some(Value::Null) => Err(Refused::new(name, "is required")),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(Refused::new(name, "must be a string")),
    }
}

impl Refused {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Refused {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// The message shown to the client.
    pub fn message(&self) -> String {
        format!("`{}`: {}", self.field, self.reason)
    }
}

type Out<T> = Result<T, Refused>;

/// Which Firecrawl API version a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

fn is_false(v: &Value) -> bool {
    v.is_null() || v == &Value::Bool(false)
}

fn is_true_or_null(v: &Value) -> bool {
    v.is_null() || v == &Value::Bool(true)
}

/// Fields every Firecrawl client may send that change nothing here.
const INERT: &[&str] = &["origin", "integration", "__experimental_cache"];

/// One entry of `formats` to our format names (pushed into `out`).
fn format(
    v: Version,
    i: usize,
    f: &Value,
    out: &mut Vec<&'static str>,
    tracking: &mut Option<Value>,
) -> Out<()> {
    let field = format!("formats[{i}]");
    let (name, obj) = match f {
        Value::String(s) => (s.as_str(), None),
        Value::Object(o) => (o.get("type").and_then(Value::as_str).unwrap_or(""), Some(o)),
        _ => {
            return Err(Refused::new(
                field,
                "must be a format name or a format object",
            ))
        }
    };
    match name {
        "markdown" => out.push("markdown"),
        "html" => out.push("html"),
        "rawHtml" | "raw_html" => out.push("rawHtml"),
        "links" => out.push("links"),
        "branding" => out.push("brand"),
        "screenshot" => {
            let full = obj
                .and_then(|o| o.get("fullPage"))
                .is_some_and(|v| v == &Value::Bool(true));
            if let Some(o) = obj {
                for k in o.keys() {
                    if !["type", "fullPage", "quality"].contains(&k.as_str()) {
                        return Err(Refused::new(
                            format!("{field}.{k}"),
                            "is not supported (screenshots are 1280x800 PNG, or the full page with fullPage)",
                        ));
                    }
                }
            }
            out.push(if full { "screenshotFull" } else { "screenshot" });
        }
        "screenshot@fullPage" if v == Version::V1 => out.push("screenshotFull"),
        "json" | "extract" => {
            return Err(Refused::new(
                field,
                "JSON extraction inside a scrape is not supported yet; call POST /v1/extract (or /v2/extract) with the URL and schema",
            ))
        }
        "changeTracking" => {
            out.push("changeTracking");
            if let Some(o) = obj {
                let rest: Map<String, Value> = o
                    .iter()
                    .filter(|(k, _)| k.as_str() != "type")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                *tracking = Some(change_tracking_options(&field, &Value::Object(rest))?);
            }
        }
        other => {
            return Err(Refused::new(
                field,
                format!("the format `{other}` is not supported; supported: markdown, html, rawHtml, links, screenshot, branding"),
            ))
        }
    }
    Ok(())
}

/// Firecrawl's change-tracking options (`modes`, `tag`, and for the `json`
/// mode `schema` and `prompt`) to ours, which have the same names.
fn change_tracking_options(field: &str, o: &Value) -> Out<Value> {
    let Some(o) = o.as_object() else {
        return Err(Refused::new(field, "must be an object"));
    };
    let mut out = Map::new();
    for (k, val) in o {
        match k.as_str() {
            "modes" => {
                let ok = val
                    .as_array()
                    .is_some_and(|l| l.iter().all(|m| m == "git-diff" || m == "json"));
                if !ok {
                    return Err(Refused::new(
                        format!("{field}.modes"),
                        "must be a list of `git-diff` and `json`",
                    ));
                }
                out.insert("modes".into(), val.clone());
            }
            "schema" | "prompt" => {
                if !val.is_null() {
                    out.insert(k.clone(), val.clone());
                }
            }
            "tag" => {
                if !val.is_null() {
                    out.insert("tag".into(), val.clone());
                }
            }
            _ => {
                return Err(Refused::new(
                    format!("{field}.{k}"),
                    "is not supported by webdata",
                ))
            }
        }
    }
    let json_mode = out
        .get("modes")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|x| x == "json"));
    if json_mode && !out.contains_key("schema") && !out.contains_key("prompt") {
        return Err(Refused::new(
            format!("{field}.schema"),
            "the `json` mode needs `schema` or `prompt`",
        ));
    }
    Ok(Value::Object(out))
}

/// One Firecrawl action to ours.
fn action(i: usize, a: &Value) -> Out<Value> {
    let field = format!("actions[{i}]");
    let o = a
        .as_object()
        .ok_or_else(|| Refused::new(&field, "must be an object"))?;
    let kind = o.get("type").and_then(Value::as_str).unwrap_or("");
    let mut out = Map::new();
    let allowed: &[&str] = match kind {
        "wait" => {
            out.insert("type".into(), json!("wait"));
            if let Some(ms) = o.get("milliseconds") {
                out.insert("ms".into(), ms.clone());
            }
            if let Some(s) = o.get("selector") {
                out.insert("selector".into(), s.clone());
            }
            &["type", "milliseconds", "selector"]
        }
        "click" => {
            out.insert("type".into(), json!("click"));
            out.insert("selector".into(), o.get("selector").cloned().unwrap_or_default());
            &["type", "selector", "all"]
        }
        "write" => {
            out.insert("type".into(), json!("type"));
            out.insert("text".into(), o.get("text").cloned().unwrap_or_default());
            &["type", "text"]
        }
        "press" => {
            out.insert("type".into(), json!("press"));
            out.insert("key".into(), o.get("key").cloned().unwrap_or_default());
            &["type", "key"]
        }
        "scroll" => {
            out.insert("type".into(), json!("scroll"));
            if let Some(s) = o.get("selector") {
                out.insert("selector".into(), s.clone());
            }
            if o.get("direction").and_then(Value::as_str) == Some("up") {
                return Err(Refused::new(format!("{field}.direction"), "only `down` is supported"));
            }
            &["type", "selector", "direction"]
        }
        other => {
            return Err(Refused::new(
                format!("{field}.type"),
                format!("the action `{other}` is not supported; supported: wait, click, write, press, scroll"),
            ))
        }
    };
    for k in o.keys() {
        if !allowed.contains(&k.as_str()) {
            return Err(Refused::new(format!("{field}.{k}"), "is not supported"));
        }
    }
    Ok(Value::Object(out))
}

/// Firecrawl scrape options (a scrape body, `scrapeOptions`, or a batch
/// body) to our ScrapeOptions; `skip` names keys the caller handles.
pub fn scrape_options(
    v: Version,
    body: &Map<String, Value>,
    prefix: &str,
    skip: &[&str],
) -> Out<Map<String, Value>> {
    let mut out = Map::new();
    let mut formats = vec![];
    let mut tracking = None;
    for (k, val) in body {
        let field = format!("{prefix}{k}");
        if skip.contains(&k.as_str()) || INERT.contains(&k.as_str()) {
            continue;
        }
        match k.as_str() {
            "formats" => {
                let list = val
                    .as_array()
                    .ok_or_else(|| Refused::new(&field, "must be a list"))?;
                for (i, f) in list.iter().enumerate() {
                    format(v, i, f, &mut formats, &mut tracking)
                        .map_err(|r| Refused::new(format!("{prefix}{}", r.field), r.reason))?;
                }
            }
            "onlyMainContent" | "includeTags" | "excludeTags" | "waitFor" | "timeout"
            | "maxAge" | "headers" => {
                if !val.is_null() {
                    out.insert(k.clone(), val.clone());
                }
            }
            "location" => {
                if let Some(o) = val.as_object() {
                    let mut loc = Map::new();
                    for (lk, lv) in o {
                        match lk.as_str() {
                            "country" | "languages" => {
                                loc.insert(lk.clone(), lv.clone());
                            }
                            _ => {
                                return Err(Refused::new(
                                    format!("{field}.{lk}"),
                                    "is not supported",
                                ))
                            }
                        }
                    }
                    out.insert("location".into(), Value::Object(loc));
                }
            }
            "actions" => {
                if let Some(list) = val.as_array() {
                    let mapped = list
                        .iter()
                        .enumerate()
                        .map(|(i, a)| action(i, a))
                        .collect::<Out<Vec<_>>>()
                        .map_err(|r| Refused::new(format!("{prefix}{}", r.field), r.reason))?;
                    if !mapped.is_empty() {
                        out.insert("actions".into(), Value::Array(mapped));
                    }
                }
            }
            // What we do anyway: ads and trackers are chrome that main
            // content removes; images are never inlined as base64; every
            // scrape is cached for `maxAge`; there is no slower mode.
            "blockAds"
            | "removeBase64Images"
            | "fastMode"
            | "storeInCache"
            | "skipTlsVerification"
            | "mobile"
            | "zeroDataRetention" => {
                let ok = match k.as_str() {
                    "blockAds" | "removeBase64Images" | "storeInCache" => is_true_or_null(val),
                    _ => is_false(val),
                };
                if !ok {
                    return Err(Refused::new(
                        field,
                        format!(
                            "{val} is not supported (webdata behaves as {})",
                            if ["blockAds", "removeBase64Images", "storeInCache"]
                                .contains(&k.as_str())
                            {
                                "true"
                            } else {
                                "false"
                            }
                        ),
                    ));
                }
            }
            "proxy" => match val.as_str() {
                None | Some("basic") | Some("auto") => {}
                Some(p) => {
                    return Err(Refused::new(
                        field,
                        format!(
                            "the `{p}` proxy is not available; webdata fetches directly (basic)"
                        ),
                    ))
                }
            },
            "changeTrackingOptions" => {
                if !val.is_null() {
                    tracking = Some(change_tracking_options(&field, val)?);
                }
            }
            "parsers" => {
                let ok = val.as_array().is_some_and(|l| {
                    l.iter()
                        .all(|p| p == "pdf" || p.get("type").is_some_and(|t| t == "pdf"))
                });
                if !ok && !val.is_null() {
                    return Err(Refused::new(
                        field,
                        "only the `pdf` parser is supported (PDFs are always read)",
                    ));
                }
            }
            _ => return Err(Refused::new(field, "is not supported by webdata")),
        }
    }
    if !formats.contains(&"metadata") {
        if formats.is_empty() {
            formats.push("markdown");
        }
        formats.push("metadata");
    }
    if let Some(t) = tracking.filter(|t| t.as_object().is_some_and(|o| !o.is_empty())) {
        if !formats.contains(&"changeTracking") {
            return Err(Refused::new(
                format!("{prefix}changeTrackingOptions"),
                "needs the `changeTracking` format",
            ));
        }
        out.insert("changeTrackingOptions".into(), t);
    }
    out.insert("formats".into(), json!(formats));
    Ok(out)
}

/// Our Document to a Firecrawl Document (`source` is the URL asked for).
pub fn document(doc: &Value, source: Option<&str>) -> Value {
    let mut out = Map::new();
    for (ours, theirs) in [
        ("markdown", "markdown"),
        ("html", "html"),
        ("rawHtml", "rawHtml"),
        ("links", "links"),
        ("screenshot", "screenshot"),
    ] {
        if let Some(v) = doc.get(ours).filter(|v| !v.is_null()) {
            out.insert(theirs.into(), v.clone());
        }
    }
    if let Some(b) = doc.get("brand").filter(|b| b.is_object()) {
        out.insert("branding".into(), branding(b));
    }
    // The same object as ours: previousScrapeAt, changeStatus, visibility
    // and, with `git-diff`, `diff.text`.
    if let Some(c) = doc.get("changeTracking").filter(|c| c.is_object()) {
        out.insert("changeTracking".into(), c.clone());
    }
    let m = doc.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let url = doc["url"].as_str().or(source).unwrap_or("");
    let mut meta = Map::new();
    for k in [
        "title",
        "description",
        "language",
        "statusCode",
        "contentType",
        "author",
    ] {
        if let Some(v) = m.get(k).filter(|v| !v.is_null()) {
            meta.insert(k.into(), v.clone());
        }
    }
    if let Some(v) = m.get("ogImage").filter(|v| !v.is_null()) {
        meta.insert("ogImage".into(), v.clone());
    }
    if let Some(v) = m.get("publishedAt").filter(|v| !v.is_null()) {
        meta.insert("publishedTime".into(), v.clone());
    }
    meta.insert("sourceURL".into(), json!(source.unwrap_or(url)));
    meta.insert("url".into(), json!(doc["finalUrl"].as_str().unwrap_or(url)));
    meta.insert(
        "cacheState".into(),
        json!(if doc["cached"] == Value::Bool(true) {
            "hit"
        } else {
            "miss"
        }),
    );
    meta.insert("proxyUsed".into(), json!("basic"));
    out.insert("metadata".into(), Value::Object(meta));
    Value::Object(out)
}

/// Our brand to Firecrawl's `branding` (string maps without nulls).
fn branding(b: &Value) -> Value {
    let mut colors = Map::new();
    if let Some(list) = b["colors"].as_array() {
        for (i, c) in list.iter().enumerate() {
            if let Some(hex) = c["hex"].as_str().or(c.as_str()) {
                let role = c["role"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("color{}", i + 1));
                colors.insert(role, json!(hex));
            }
        }
    }
    let logo = b["logo"]["url"]
        .as_str()
        .or(b["logo"].as_str())
        .map(str::to_string);
    json!({ "colors": colors, "logo": logo, "fonts": b["fonts"].as_array().cloned().unwrap_or_default()
        .into_iter().filter(|f| f.is_object()).collect::<Vec<_>>() })
}

/// Converts a Firecrawl path regex into our glob when it is one of the
/// simple shapes (`blog/.*`, `^/docs/.*$`, `/about`); None otherwise.
pub fn regex_to_glob(re: &str) -> Option<String> {
    let mut s = re
        .trim()
        .trim_start_matches('^')
        .trim_end_matches('$')
        .to_string();
    s = s.replace(".*", "\u{1}");
    if s.chars().any(|c| "()[]{}+?|\\.^$".contains(c)) {
        return None;
    }
    let s = s.replace('\u{1}', "**");
    Some(if s.starts_with('/') || s.starts_with("**") {
        s
    } else {
        format!("/{s}")
    })
}

/// A Firecrawl crawl body to our CrawlRequest JSON.
pub fn crawl_request(v: Version, body: &Map<String, Value>) -> Out<Map<String, Value>> {
    let mut out = Map::new();
    let url = required_str(body, "url")?;
    out.insert("url".into(), json!(url));
    let mut entire_domain = false;
    for (k, val) in body {
        let field = k.clone();
        if INERT.contains(&k.as_str()) || val.is_null() {
            continue;
        }
        match k.as_str() {
            "url" => {}
            "limit" => {
                out.insert("limit".into(), val.clone());
            }
            "maxDiscoveryDepth" | "maxDepth" => {
                out.insert("maxDepth".into(), val.clone());
            }
            "includePaths" | "excludePaths" => {
                let list = val
                    .as_array()
                    .ok_or_else(|| Refused::new(&field, "must be a list"))?;
                let mut globs = Vec::new();
                for (i, p) in list.iter().enumerate() {
                    let g = p.as_str().and_then(regex_to_glob).ok_or_else(|| {
                        Refused::new(format!("{field}[{i}]"), "only simple path patterns are supported (like `blog/.*`); webdata matches paths with globs")
                    })?;
                    globs.push(g);
                }
                out.insert(field, json!(globs));
            }
            "sitemap" => {
                out.insert("sitemap".into(), val.clone());
            }
            "ignoreSitemap" if v == Version::V1 => {
                if val == &Value::Bool(true) {
                    out.insert("sitemap".into(), json!("skip"));
                }
            }
            "ignoreRobotsTxt" => {
                out.insert("ignoreRobots".into(), val.clone());
            }
            "allowSubdomains" => {
                out.insert("allowSubdomains".into(), val.clone());
            }
            "crawlEntireDomain" | "allowBackwardLinks" => entire_domain = val == &Value::Bool(true),
            "allowExternalLinks"
            | "ignoreQueryParameters"
            | "regexOnFullURL"
            | "zeroDataRetention" => {
                if !is_false(val) {
                    return Err(Refused::new(field, "true is not supported"));
                }
            }
            // Similar URLs (trailing slash, fragments, tracking parameters)
            // are always the same page here; concurrency is the workers'.
            "deduplicateSimilarURLs" | "maxConcurrency" => {}
            "delay" => {
                if val.as_f64().is_some_and(|d| d > 0.0) {
                    return Err(Refused::new(
                        field,
                        "is not supported; webdata follows the site's robots.txt Crawl-delay",
                    ));
                }
            }
            "webhook" => {
                out.insert("webhook".into(), webhook(val)?);
            }
            "scrapeOptions" => {
                let o = val
                    .as_object()
                    .ok_or_else(|| Refused::new(&field, "must be an object"))?;
                out.insert(
                    "scrapeOptions".into(),
                    Value::Object(scrape_options(v, o, "scrapeOptions.", &[])?),
                );
            }
            _ => return Err(Refused::new(field, "is not supported by webdata")),
        }
    }
    if !entire_domain && !out.contains_key("includePaths") {
        // Firecrawl crawls below the start URL's path unless asked for the
        // whole domain.
        if let Ok(u) = url::Url::parse(url) {
            let path = u.path().trim_end_matches('/');
            if !path.is_empty() {
                out.insert("includePaths".into(), json!([path, format!("{path}/**")]));
            }
        }
    }
    if !out.contains_key("scrapeOptions") {
        out.insert(
            "scrapeOptions".into(),
            json!({"formats": ["markdown", "metadata"]}),
        );
    }
    Ok(out)
}

/// A Firecrawl webhook (a URL, or `{url, headers, metadata, events}`).
pub fn webhook(val: &Value) -> Out<Value> {
    match val {
        Value::String(u) => Ok(json!({ "url": u })),
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, v) in o {
                match k.as_str() {
                    "url" | "metadata" | "events" => {
                        if !v.is_null() {
                            out.insert(k.clone(), v.clone());
                        }
                    }
                    "headers" => {
                        if v.as_object().is_some_and(|h| !h.is_empty()) {
                            return Err(Refused::new("webhook.headers", "custom headers are not sent; deliveries are authenticated by their Service-Signature"));
                        }
                    }
                    _ => return Err(Refused::new(format!("webhook.{k}"), "is not supported")),
                }
            }
            Ok(Value::Object(out))
        }
        _ => Err(Refused::new("webhook", "must be a URL or an object")),
    }
}

/// A Firecrawl batch body (options at the top level) to ours.
pub fn batch_request(v: Version, body: &Map<String, Value>) -> Out<Map<String, Value>> {
    let mut out = Map::new();
    let urls = body
        .get("urls")
        .cloned()
        .ok_or_else(|| Refused::new("urls", "is required"))?;
    out.insert("urls".into(), urls);
    for (k, val) in body {
        if val.is_null() {
            continue;
        }
        match k.as_str() {
            "ignoreInvalidURLs" => {
                out.insert("ignoreInvalidURLs".into(), val.clone());
            }
            "webhook" => {
                out.insert("webhook".into(), webhook(val)?);
            }
            "appendToId" => {
                return Err(Refused::new(
                    "appendToId",
                    "adding URLs to a running batch is not supported",
                ))
            }
            _ => {}
        }
    }
    let skip = [
        "urls",
        "ignoreInvalidURLs",
        "webhook",
        "appendToId",
        "maxConcurrency",
        "scrapeOptions",
    ];
    let mut opts = scrape_options(v, body, "", &skip)?;
    if let Some(so) = body.get("scrapeOptions").and_then(Value::as_object) {
        opts = scrape_options(v, so, "scrapeOptions.", &[])?;
    }
    out.insert("scrapeOptions".into(), Value::Object(opts));
    Ok(out)
}

/// A Firecrawl map body to ours.
pub fn map_request(body: &Map<String, Value>) -> Out<Map<String, Value>> {
    let mut out = Map::new();
    for (k, val) in body {
        if INERT.contains(&k.as_str()) || val.is_null() {
            continue;
        }
        match k.as_str() {
            "url" | "search" | "limit" | "sitemap" => {
                out.insert(k.clone(), val.clone());
            }
            "includeSubdomains" => {
                out.insert("includeSubdomains".into(), val.clone());
            }
            "ignoreSitemap" => {
                if val == &Value::Bool(true) {
                    out.insert("sitemap".into(), json!("skip"));
                }
            }
            "sitemapOnly" => {
                if val == &Value::Bool(true) {
                    out.insert("sitemap".into(), json!("only"));
                }
            }
            "timeout" | "ignoreQueryParameters" => {}
            "location" => {}
            _ => return Err(Refused::new(k.clone(), "is not supported by webdata")),
        }
    }
    Ok(out)
}

/// A Firecrawl search body to ours.
pub fn search_request(v: Version, body: &Map<String, Value>) -> Out<Map<String, Value>> {
    let mut out = Map::new();
    for (k, val) in body {
        if INERT.contains(&k.as_str()) || val.is_null() {
            continue;
        }
        match k.as_str() {
            "query" | "limit" | "country" => {
                out.insert(k.clone(), val.clone());
            }
            "lang" => {
                out.insert("language".into(), val.clone());
            }
            "tbs" => {
                let range = match val.as_str().unwrap_or("") {
                    "qdr:d" => "day",
                    "qdr:w" => "week",
                    "qdr:m" => "month",
                    "qdr:y" => "year",
                    other => {
                        return Err(Refused::new(
                            "tbs",
                            format!("`{other}` is not supported; use qdr:d, qdr:w, qdr:m or qdr:y"),
                        ))
                    }
                };
                out.insert("timeRange".into(), json!(range));
            }
            "sources" | "categories" => {
                let only_web = val.as_array().is_some_and(|l| {
                    l.iter()
                        .all(|s| s == "web" || s.get("type").is_some_and(|t| t == "web"))
                });
                if !only_web {
                    return Err(Refused::new(
                        k.clone(),
                        "only web results are available (no news, images or categories)",
                    ));
                }
            }
            "timeout" | "ignoreInvalidURLs" => {}
            "location" => {
                if let Some(c) = val.as_str() {
                    out.insert("country".into(), json!(c));
                }
            }
            "scrapeOptions" => {
                let o = val
                    .as_object()
                    .ok_or_else(|| Refused::new("scrapeOptions", "must be an object"))?;
                // An empty `formats` (firecrawl-js v1's default) asks for no scrape.
                if o.get("formats")
                    .and_then(Value::as_array)
                    .is_some_and(|f| f.is_empty())
                {
                    continue;
                }
                out.insert(
                    "scrapeOptions".into(),
                    Value::Object(scrape_options(v, o, "scrapeOptions.", &[])?),
                );
            }
            _ => return Err(Refused::new(k.clone(), "is not supported by webdata")),
        }
    }
    Ok(out)
}

/// A Firecrawl extract body to ours.
pub fn extract_request(v: Version, body: &Map<String, Value>) -> Out<Map<String, Value>> {
    let mut out = Map::new();
    for (k, val) in body {
        if INERT.contains(&k.as_str()) || val.is_null() {
            continue;
        }
        match k.as_str() {
            "urls" | "schema" | "prompt" => {
                out.insert(k.clone(), val.clone());
            }
            "allowExternalLinks" | "enableWebSearch" | "showSources" | "ignoreInvalidURLs" => {
                if k != "showSources" && !is_false(val) {
                    return Err(Refused::new(
                        k.clone(),
                        "true is not supported; extract reads the URLs given",
                    ));
                }
            }
            "systemPrompt" => {
                return Err(Refused::new(
                    "systemPrompt",
                    "is not supported; put instructions in `prompt`",
                ))
            }
            "scrapeOptions" => {
                let o = val
                    .as_object()
                    .ok_or_else(|| Refused::new("scrapeOptions", "must be an object"))?;
                out.insert(
                    "scrapeOptions".into(),
                    Value::Object(scrape_options(v, o, "scrapeOptions.", &[])?),
                );
            }
            _ => return Err(Refused::new(k.clone(), "is not supported by webdata")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn python_sdk_defaults_are_accepted_and_formats_mapped() {
        let body = obj(
            json!({"url": "https://a.test", "onlyMainContent": true, "mobile": false, "removeBase64Images": true,
            "fastMode": false, "blockAds": true, "maxAge": 14400000, "storeInCache": true, "origin": "python-sdk@4.55.0",
            "formats": ["markdown", "rawHtml", {"type": "screenshot", "fullPage": true}]}),
        );
        let o = scrape_options(Version::V2, &body, "", &["url"]).expect("accepted");
        assert_eq!(
            o["formats"],
            json!(["markdown", "rawHtml", "screenshotFull", "metadata"])
        );
        assert_eq!(o["maxAge"], 14400000);
        assert!(!o.contains_key("mobile"));
    }

    #[test]
    fn change_tracking_maps_from_both_sdk_shapes() {
        // v2: options inside the format object.
        let o = scrape_options(
            Version::V2,
            &obj(json!({"formats": ["markdown", {"type": "changeTracking", "modes": ["git-diff"], "tag": "prices"}]})),
            "",
            &[],
        )
        .expect("accepted");
        assert_eq!(
            o["formats"],
            json!(["markdown", "changeTracking", "metadata"])
        );
        assert_eq!(
            o["changeTrackingOptions"],
            json!({"modes": ["git-diff"], "tag": "prices"})
        );
        // The json mode's schema and prompt keep their names.
        let o = scrape_options(
            Version::V2,
            &obj(json!({"formats": [{"type": "changeTracking", "modes": ["json"], "schema": {"type": "object"}, "prompt": "p"}]})),
            "",
            &[],
        )
        .expect("accepted");
        assert_eq!(
            o["changeTrackingOptions"],
            json!({"modes": ["json"], "schema": {"type": "object"}, "prompt": "p"})
        );
        // v1: a top-level changeTrackingOptions.
        let o = scrape_options(
            Version::V1,
            &obj(json!({"formats": ["markdown", "changeTracking"], "changeTrackingOptions": {"tag": "t"}})),
            "",
            &[],
        )
        .expect("accepted");
        assert_eq!(o["changeTrackingOptions"], json!({"tag": "t"}));
        let r = scrape_options(
            Version::V1,
            &obj(json!({"formats": ["markdown"], "changeTrackingOptions": {"tag": "t"}})),
            "",
            &[],
        )
        .expect_err("no format");
        assert_eq!(r.field, "changeTrackingOptions");
        let doc = document(
            &json!({"url": "https://a.test/", "changeTracking": {"previousScrapeAt": null, "changeStatus": "new", "visibility": "visible"}}),
            None,
        );
        assert_eq!(doc["changeTracking"]["changeStatus"], "new");
    }

    #[test]
    fn what_we_cannot_honour_is_refused_naming_the_field() {
        let r = scrape_options(
            Version::V2,
            &obj(json!({"formats": ["markdown", {"type": "json", "prompt": "x"}]})),
            "",
            &[],
        )
        .expect_err("refused");
        assert_eq!(r.field, "formats[1]");
        let r = scrape_options(
            Version::V2,
            &obj(json!({"mobile": true})),
            "scrapeOptions.",
            &[],
        )
        .expect_err("refused");
        assert_eq!(r.field, "scrapeOptions.mobile");
        let r = scrape_options(Version::V2, &obj(json!({"proxy": "stealth"})), "", &[])
            .expect_err("refused");
        assert_eq!(r.field, "proxy");
        let r =
            scrape_options(Version::V2, &obj(json!({"bogus": 1})), "", &[]).expect_err("refused");
        assert_eq!(r.field, "bogus");
    }

    #[test]
    fn crawl_paths_become_globs_and_stay_below_the_start_path() {
        assert_eq!(regex_to_glob("blog/.*").as_deref(), Some("/blog/**"));
        assert_eq!(regex_to_glob("^/docs/.*$").as_deref(), Some("/docs/**"));
        assert_eq!(regex_to_glob("a(b|c)"), None);
        let c = crawl_request(
            Version::V2,
            &obj(
                json!({"url": "https://a.test/docs/", "limit": 5, "crawlEntireDomain": false,
            "deduplicateSimilarURLs": true, "ignoreRobotsTxt": false}),
            ),
        )
        .expect("ok");
        assert_eq!(c["includePaths"], json!(["/docs", "/docs/**"]));
        assert_eq!(c["ignoreRobots"], false);
        let c = crawl_request(
            Version::V2,
            &obj(json!({"url": "https://a.test/docs/", "crawlEntireDomain": true})),
        )
        .expect("ok");
        assert!(!c.contains_key("includePaths"));
        let r = crawl_request(
            Version::V2,
            &obj(json!({"url": "https://a.test/", "allowExternalLinks": true})),
        )
        .expect_err("no");
        assert_eq!(r.field, "allowExternalLinks");
    }

    /// Every refusal docs/firecrawl-compatibility.md lists, with the field
    /// the error names.
    #[test]
    fn every_documented_refusal_names_its_field() {
        let scrape: &[(Value, &str)] = &[
            (
                json!({"formats": [{"type": "changeTracking", "modes": ["xml"]}]}),
                "formats[0].modes",
            ),
            (
                json!({"formats": [{"type": "changeTracking", "threshold": 3}]}),
                "formats[0].threshold",
            ),
            (
                json!({"formats": ["markdown", {"type": "changeTracking", "modes": ["json"]}]}),
                "formats[1].schema",
            ),
            (json!({"formats": ["summary"]}), "formats[0]"),
            (json!({"formats": ["markdown", "images"]}), "formats[1]"),
            (
                json!({"formats": [{"type": "attributes", "selectors": []}]}),
                "formats[0]",
            ),
            (
                json!({"formats": [{"type": "screenshot", "viewport": {"width": 1}}]}),
                "formats[0].viewport",
            ),
            (json!({"blockAds": false}), "blockAds"),
            (json!({"removeBase64Images": false}), "removeBase64Images"),
            (json!({"storeInCache": false}), "storeInCache"),
            (json!({"mobile": true}), "mobile"),
            (json!({"skipTlsVerification": true}), "skipTlsVerification"),
            (json!({"fastMode": true}), "fastMode"),
            (json!({"zeroDataRetention": true}), "zeroDataRetention"),
            (json!({"proxy": "enhanced"}), "proxy"),
            (json!({"parsers": ["image"]}), "parsers"),
            (json!({"location": {"city": "x"}}), "location.city"),
            (
                json!({"actions": [{"type": "executeJavascript", "script": "1"}]}),
                "actions[0].type",
            ),
            (
                json!({"actions": [{"type": "scroll", "direction": "up"}]}),
                "actions[0].direction",
            ),
            (json!({"redactPII": true}), "redactPII"),
        ];
        for (body, field) in scrape {
            let r = scrape_options(Version::V2, &obj(body.clone()), "", &[]).expect_err("refused");
            assert_eq!(r.field, *field, "{body}");
        }
        let crawl: &[(Value, &str)] = &[
            (json!({"includePaths": ["a(b|c)"]}), "includePaths[0]"),
            (json!({"allowExternalLinks": true}), "allowExternalLinks"),
            (
                json!({"ignoreQueryParameters": true}),
                "ignoreQueryParameters",
            ),
            (json!({"regexOnFullURL": true}), "regexOnFullURL"),
            (json!({"delay": 2}), "delay"),
            (
                json!({"webhook": {"url": "https://h.test", "headers": {"x": "y"}}}),
                "webhook.headers",
            ),
            (json!({"prompt": "docs only"}), "prompt"),
            (
                json!({"scrapeOptions": {"formats": [{"type": "json", "prompt": "x"}]}}),
                "scrapeOptions.formats[0]",
            ),
        ];
        for (body, field) in crawl {
            let mut b = obj(body.clone());
            b.insert("url".into(), json!("https://a.test/"));
            let r = crawl_request(Version::V2, &b).expect_err("refused");
            assert_eq!(r.field, *field, "{body}");
        }
        let r = batch_request(
            Version::V2,
            &obj(json!({"urls": ["https://a.test/"], "appendToId": "x"})),
        )
        .expect_err("refused");
        assert_eq!(r.field, "appendToId");
        let r = map_request(&obj(json!({"url": "https://a.test/", "useIndex": true})))
            .expect_err("refused");
        assert_eq!(r.field, "useIndex");
        let r = search_request(Version::V2, &obj(json!({"query": "x", "tbs": "sbd:1"})))
            .expect_err("refused");
        assert_eq!(r.field, "tbs");
        let r = search_request(
            Version::V2,
            &obj(json!({"query": "x", "categories": ["github"]})),
        )
        .expect_err("refused");
        assert_eq!(r.field, "categories");
        for (k, v) in [
            ("systemPrompt", json!("x")),
            ("enableWebSearch", json!(true)),
            ("allowExternalLinks", json!(true)),
        ] {
            let mut b = obj(json!({"urls": ["https://a.test/"]}));
            b.insert(k.into(), v);
            assert_eq!(
                extract_request(Version::V2, &b).expect_err("refused").field,
                k
            );
        }
    }

    #[test]
    fn documents_carry_source_url_status_code_and_legal_enums() {
        let d = document(
            &json!({"url": "https://a.test/x", "markdown": "# X", "chunks": [], "quality": {},
            "metadata": {"title": "X", "statusCode": 200}}),
            Some("https://a.test/x"),
        );
        assert_eq!(d["metadata"]["sourceURL"], "https://a.test/x");
        assert_eq!(d["metadata"]["statusCode"], 200);
        assert_eq!(d["metadata"]["cacheState"], "miss");
        assert!(d.get("chunks").is_none());
    }
}
