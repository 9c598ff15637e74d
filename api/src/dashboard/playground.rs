//! Playground: mints this person's temporary key (one hour, 20 requests a
//! minute, 2 at once, 50 credits; minting again revokes the previous one)
//! and runs scrape, crawl, map and brand through the real `/v1` API with
//! it, so the key's limits and budget apply exactly as for any client. The
//! key's secret lives only in an HttpOnly cookie of this browser.

use super::view::{button_form, csrf, markdown_html, time};
use super::{
    cookie, page, read_cookie, CsrfToken, Ctx, FormData, Page, PageResult, PLAYGROUND_COOKIE,
};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, Request, StatusCode};
use axum::Extension;
use maud::{html, Markup};
use serde_json::{json, Value};
use tower::ServiceExt;
use webdata_core::store::{now_ms, ApiKey, KeyKind, PLAYGROUND_CREDITS};

/// Operations the playground runs.
const OPERATIONS: &[(&str, &str)] = &[
    ("scrape", "Scrape a page"),
    ("crawl", "Crawl a site"),
    ("map", "Map a site's URLs"),
    ("brand", "Read a brand"),
];
/// Formats offered for scrape and crawl.
const FORMATS: &[&str] = &[
    "markdown",
    "html",
    "links",
    "screenshot",
    "chunks",
    "metadata",
];

/// This person's live playground key in this organization, from the cookie.
async fn current_key(app: &AppState, ctx: &Ctx, headers: &HeaderMap) -> Option<(ApiKey, String)> {
    let secret = read_cookie(headers, PLAYGROUND_COOKIE)?;
    let key = app.store.find_key_by_secret(&secret).await.ok().flatten()?;
    (key.kind == KeyKind::Playground
        && key.org_id == ctx.org.id
        && key.person.as_deref() == Some(ctx.user_id())
        && key.is_active(now_ms()))
    .then_some((key, secret))
}

fn key_panel(key: Option<&ApiKey>, token: &str) -> Markup {
    html! {
        section.card aria-labelledby="pgkey-h" {
            h2 id="pgkey-h" { "Playground key" }
            @match key {
                Some(k) => {
                    p id="pg-key-state" { "Active until " (time(k.expires_at.unwrap_or(0))) ": " (k.spent) " of " (k.budget.unwrap_or(PLAYGROUND_CREDITS)) " credits spent; 20 requests a minute, 2 at once." }
                    (button_form("/dashboard/playground/key", token, "Mint a new key", "secondary", Some("Mint a new playground key? The current one stops working.")))
                }
                None => {
                    p id="pg-key-state" { "No playground key yet. It lasts one hour and has " (PLAYGROUND_CREDITS) " credits, 20 requests a minute, 2 at once; it is yours alone and not listed with the API keys." }
                    (button_form("/dashboard/playground/key", token, "Mint a playground key", "", None))
                }
            }
        }
    }
}

fn run_form(token: &str, form: &FormData) -> Markup {
    let op = form.get("op").unwrap_or("scrape");
    let chosen: Vec<&str> = if form.get("url").is_some() {
        form.all("formats")
    } else {
        vec!["markdown"]
    };
    html! {
        form method="post" action="/dashboard/playground" id="pg-form" {
            (csrf(token))
            fieldset {
                legend { "Operation" }
                @for (v, label) in OPERATIONS {
                    label.choice { input type="radio" name="op" value=(v) checked[op == *v]; " " (label) }
                }
            }
            label for="pg-url" { "URL (or domain for brand)" }
            input id="pg-url" name="url" required value=(form.text("url")) placeholder="https://example.com";
            fieldset {
                legend { "Formats (scrape and crawl)" }
                @for f in FORMATS {
                    label.choice { input type="checkbox" name="formats" value=(f) checked[chosen.contains(f)]; " " (f) }
                }
                label.choice { input type="checkbox" name="onlyMainContent" value="1" checked[form.get("url").is_none() || form.on("onlyMainContent")]; " only main content" }
            }
            label for="pg-limit" { "Crawl page limit" }
            input id="pg-limit" name="limit" type="number" min="1" max="50" value=(form.get("limit").unwrap_or("10"));
            button type="submit" { "Run" }
        }
    }
}

/// `GET /dashboard/playground`
pub async fn show(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    headers: HeaderMap,
) -> PageResult {
    let key = current_key(&app, &ctx, &headers).await;
    let body = html! {
        (key_panel(key.as_ref().map(|k| &k.0), &token.0))
        @if key.is_some() { (run_form(&token.0, &FormData::default())) }
    };
    Ok(page(
        &app,
        &ctx,
        &token,
        &headers,
        "playground",
        "Playground",
        body,
    ))
}

/// `POST /dashboard/playground/key`: mints (and audits) a key; the
/// previous one of this person is revoked.
pub async fn mint(State(app): State<AppState>, Extension(ctx): Extension<Ctx>) -> PageResult {
    let k = ctx
        .audited(app.store.create_playground_key(&ctx.org.id, ctx.user_id()))
        .await?;
    Ok(Page::see_other("/dashboard/playground")
        .cookie(cookie(
            PLAYGROUND_COOKIE,
            &k.secret,
            "/dashboard",
            Some(3600),
            app.config.cookie_secure,
            "Strict",
        ))
        .flash(
            "Playground key minted: valid for one hour.",
            app.config.cookie_secure,
        ))
}

/// The `/v1` request for a playground form.
fn request_for(form: &FormData) -> Result<(axum::http::Method, String, Option<Value>), String> {
    let url = form.text("url");
    if url.is_empty() {
        return Err("Enter a URL.".into());
    }
    let formats: Vec<&str> = form
        .all("formats")
        .into_iter()
        .filter(|f| FORMATS.contains(f))
        .collect();
    let formats = if formats.is_empty() {
        vec!["markdown"]
    } else {
        formats
    };
    let only_main = form.on("onlyMainContent");
    use axum::http::Method;
    Ok(match form.text("op") {
        "crawl" => {
            let limit: i64 = form.text("limit").parse().unwrap_or(10);
            if !(1..=50).contains(&limit) {
                return Err("The playground crawls 1 to 50 pages.".into());
            }
            (
                Method::POST,
                "/v1/crawl".into(),
                Some(
                    json!({ "url": url, "limit": limit, "scrapeOptions": { "formats": formats, "onlyMainContent": only_main } }),
                ),
            )
        }
        "map" => (Method::POST, "/v1/map".into(), Some(json!({ "url": url }))),
        "brand" => {
            let q: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
            (Method::GET, format!("/v1/brand?domain={q}"), None)
        }
        _ => (
            Method::POST,
            "/v1/scrape".into(),
            Some(json!({ "url": url, "formats": formats, "onlyMainContent": only_main })),
        ),
    })
}

/// `POST /dashboard/playground`: runs the form through `/v1` with the key.
pub async fn run(
    State(app): State<AppState>,
    Extension(ctx): Extension<Ctx>,
    Extension(token): Extension<CsrfToken>,
    Extension(form): Extension<FormData>,
    headers: HeaderMap,
) -> PageResult {
    let Some((key, secret)) = current_key(&app, &ctx, &headers).await else {
        return Ok(page(
            &app,
            &ctx,
            &token,
            &headers,
            "playground",
            "Playground",
            html! {
                p.error role="alert" { "Your playground key has expired or was replaced. Mint a new one." }
                (key_panel(None, &token.0))
            },
        ));
    };
    let (method, path, body) = match request_for(&form) {
        Ok(r) => r,
        Err(m) => {
            return Ok(page(
                &app,
                &ctx,
                &token,
                &headers,
                "playground",
                "Playground",
                html! {
                    (key_panel(Some(&key), &token.0))
                    p.error role="alert" { (m) }
                    (run_form(&token.0, &form))
                },
            ))
        }
    };
    let mut req = Request::builder()
        .method(method)
        .uri(&path)
        .header(header::AUTHORIZATION, format!("Bearer {secret}"))
        .header(header::HOST, &ctx.host);
    if body.is_some() {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let req = req
        .body(Body::from(
            body.as_ref().map(|b| b.to_string()).unwrap_or_default(),
        ))
        .map_err(|e| {
            Page::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                &e.to_string(),
            )
        })?;
    let api = app.loopback.router().ok_or_else(|| {
        Page::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "The API is not ready.",
        )
    })?;
    let resp = api.oneshot(req).await.map_err(|_| {
        Page::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "The request failed.",
        )
    })?;
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 64 * 1024 * 1024)
        .await
        .unwrap_or_default();
    let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if form.text("op") == "crawl" && status.is_success() {
        if let Some(id) = answer["id"].as_str() {
            return Ok(Page::see_other(&format!("/dashboard/crawls/{id}")).flash(
                "Crawl started with your playground key; pages appear as they are scraped.",
                app.config.cookie_secure,
            ));
        }
    }
    let key = app.store.get_key(&key.id).await.unwrap_or(key);
    let result = html! {
        section aria-labelledby="result-h" id="pg-result" {
            h2 id="result-h" { "Result" }
            p {
                "HTTP " strong id="pg-status" { (status.as_u16()) }
                " · credits used: " strong id="pg-credits" { (answer["credits_used"].as_i64().unwrap_or(0)) }
                @if let Some(ms) = answer["latency_ms"].as_i64() { " · " (ms) " ms" }
            }
            @if let Some(err) = answer.get("error") {
                p.error role="alert" { code { (err["code"].as_str().unwrap_or("")) } ": " (err["message"].as_str().unwrap_or("")) }
            }
            (document_view(if answer["data"].is_object() { &answer["data"] } else { &answer }))
            details {
                summary { "JSON" }
                pre.json id="pg-json" { (serde_json::to_string_pretty(&answer).unwrap_or_default()) }
            }
        }
    };
    Ok(page(
        &app,
        &ctx,
        &token,
        &headers,
        "playground",
        "Playground",
        html! {
            (key_panel(Some(&key), &token.0))
            (run_form(&token.0, &form))
            (result)
        },
    ))
}

/// The parts of a Document (or a map/brand answer) people look at.
pub fn document_view(d: &Value) -> Markup {
    html! {
        @if let Some(q) = d.get("quality").filter(|q| !q.is_null()) {
            p id="pg-quality" { "Quality: " (q["score"].as_f64().map(|s| format!("{s:.2}")).unwrap_or_default())
                @if let Some(issues) = q["issues"].as_array() { @if !issues.is_empty() { " · " @for (i, is) in issues.iter().enumerate() { @if i > 0 { ", " } (is.as_str().unwrap_or("")) } } } }
        }
        @if let Some(title) = d["metadata"]["title"].as_str() {
            p { "Title: " strong.page-title { (title) } }
        }
        @if let Some(md) = d["markdown"].as_str() {
            details open {
                summary { "Markdown, rendered" }
                div.rendered id="pg-rendered" { (markdown_html(md)) }
            }
            details {
                summary { "Markdown, raw" }
                pre id="pg-markdown" { (md) }
            }
        }
        @if let Some(shot) = d["screenshot"].as_str() {
            details open {
                summary { "Screenshot" }
                img.shot id="pg-screenshot" src=(shot) alt="Screenshot of the page";
            }
        }
        @if let Some(chunks) = d["chunks"].as_array() {
            details {
                summary { "Chunks (" (chunks.len()) ")" }
                ol.chunks {
                    @for c in chunks {
                        li {
                            @if let Some(path) = c["headingPath"].as_array() {
                                p.muted { @for (i, h) in path.iter().enumerate() { @if i > 0 { " › " } (h.as_str().unwrap_or("")) } }
                            }
                            pre { (c["text"].as_str().unwrap_or("")) }
                        }
                    }
                }
            }
        }
        @if let Some(links) = d["links"].as_array() {
            details {
                summary { "Links (" (links.len()) ")" }
                ul.links { @for l in links.iter().take(500) { li { (l.as_str().unwrap_or_else(|| l["url"].as_str().unwrap_or(""))) } } }
            }
        }
    }
}
