//! One way to call the `/v1` API, in process or over HTTP: the CLI and the
//! MCP server both talk to webdata through it, so every call they make gets
//! the API's keys, credits, limits, idempotency and network guard.
//!
//! - [`ApiClient::local`]: the application's own router with a key (the
//!   MCP endpoint of a running server, or the embedded store of a
//!   standalone CLI);
//! - [`ApiClient::remote`]: a server at a URL (`--server`, `WEBDATA_URL`).

use axum::body::Body;
use axum::http::{header, Method, Request};
use futures::StreamExt;
use serde_json::{json, Value};
use tower::ServiceExt;

/// Where requests go.
#[derive(Clone)]
enum Target {
    Local(axum::Router),
    Remote { http: reqwest::Client, base: String },
}

/// A `/v1` client holding one API key.
#[derive(Clone)]
pub struct ApiClient {
    target: Target,
    key: String,
}

/// A call that did not succeed: the API's error envelope, or why the
/// server could not be reached (`status` 0, code `unreachable`).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiFailure {
    pub status: u16,
    pub code: String,
    pub message: String,
    pub retry_after_ms: Option<u64>,
}

impl std::fmt::Display for ApiFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiFailure {}

impl ApiFailure {
    fn unreachable(message: String) -> Self {
        ApiFailure {
            status: 0,
            code: "unreachable".into(),
            message,
            retry_after_ms: None,
        }
    }

    /// The failure from an answer's status and JSON body.
    fn from_answer(status: u16, body: &Value) -> Self {
        let e = &body["error"];
        ApiFailure {
            status,
            code: e["code"].as_str().unwrap_or("internal").to_string(),
            message: e["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("the API answered {status}")),
            retry_after_ms: e["retry_after_ms"].as_u64(),
        }
    }
}

/// Largest answer body read (a crawl page of documents with raw HTML).
const MAX_ANSWER: usize = 512 * 1024 * 1024;

impl ApiClient {
    /// Calls go through `router` (the app itself) with `key`.
    pub fn local(router: axum::Router, key: impl Into<String>) -> Self {
        ApiClient {
            target: Target::Local(router),
            key: key.into(),
        }
    }

    /// Calls go to the server at `base` (`http://host:port`) with `key`.
    pub fn remote(base: &str, key: impl Into<String>) -> anyhow::Result<Self> {
        let base = base.trim().trim_end_matches('/').to_string();
        let parsed = url::Url::parse(&base)
            .map_err(|e| anyhow::anyhow!("--server {base}: not a URL ({e})"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            anyhow::bail!("--server {base}: use an http:// or https:// URL");
        }
        let http = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()?;
        Ok(ApiClient {
            target: Target::Remote { http, base },
            key: key.into(),
        })
    }

    /// Where the calls go, for messages.
    pub fn describe(&self) -> String {
        match &self.target {
            Target::Local(_) => "the embedded store".into(),
            Target::Remote { base, .. } => base.clone(),
        }
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Value, ApiFailure> {
        self.call(Method::GET, path, None).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> Result<Value, ApiFailure> {
        self.call(Method::POST, path, Some(body)).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> Result<Value, ApiFailure> {
        self.call(Method::DELETE, path, None).await
    }

    /// One call; a non-2xx answer is the API's error as an [`ApiFailure`].
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ApiFailure> {
        let (status, value) = match &self.target {
            Target::Local(router) => {
                let mut req = Request::builder()
                    .method(method)
                    .uri(path)
                    .header(header::AUTHORIZATION, format!("Bearer {}", self.key));
                if body.is_some() {
                    req = req.header(header::CONTENT_TYPE, "application/json");
                }
                let req = req
                    .body(Body::from(body.map(|b| b.to_string()).unwrap_or_default()))
                    .map_err(|e| ApiFailure::unreachable(format!("bad request: {e}")))?;
                let resp = router
                    .clone()
                    .oneshot(req)
                    .await
                    .map_err(|e| ApiFailure::unreachable(e.to_string()))?;
                let status = resp.status().as_u16();
                let bytes = axum::body::to_bytes(resp.into_body(), MAX_ANSWER)
                    .await
                    .map_err(|e| ApiFailure::unreachable(format!("reading the answer: {e}")))?;
                (
                    status,
                    serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                )
            }
            Target::Remote { http, base } => {
                let m = reqwest::Method::from_bytes(method.as_str().as_bytes())
                    .unwrap_or(reqwest::Method::GET);
                let mut rb = http
                    .request(m, format!("{base}{path}"))
                    .bearer_auth(&self.key);
                if let Some(b) = body {
                    rb = rb.json(&b);
                }
                let resp = rb.send().await.map_err(|e| {
                    ApiFailure::unreachable(format!(
                        "could not reach {base} ({e}); is `webdata serve` running there? Check --server / WEBDATA_URL"
                    ))
                })?;
                let status = resp.status().as_u16();
                let bytes = resp
                    .bytes()
                    .await
                    .map_err(|e| ApiFailure::unreachable(format!("reading the answer: {e}")))?;
                (
                    status,
                    serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                )
            }
        };
        if (200..300).contains(&status) {
            Ok(value)
        } else if value.is_null() {
            Err(ApiFailure::from_answer(
                status,
                &json!({"error": {"code": if status == 404 { "not_found" } else { "internal" }, "message": format!("the server answered {status} without an error body; is it webdata?")}}),
            ))
        } else {
            Err(ApiFailure::from_answer(status, &value))
        }
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub id: Option<String>,
    pub event: String,
    pub data: String,
}

type ByteStream =
    std::pin::Pin<Box<dyn futures::Stream<Item = Result<bytes::Bytes, String>> + Send>>;

/// A `text/event-stream` answer, read event by event.
pub struct EventStream {
    body: ByteStream,
    buf: Vec<u8>,
    /// How far `buf` was searched for the end of an event.
    scanned: usize,
}

impl EventStream {
    /// The next event; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Result<SseEvent, String>> {
        loop {
            // Only the bytes not searched yet (and one before, for a "\n\n"
            // split across chunks) are scanned: a large event arriving in
            // many chunks is searched once.
            let from = self.scanned.saturating_sub(3);
            if let Some(end) = event_end(&self.buf[from..]).map(|e| from + e) {
                let block = String::from_utf8_lossy(&self.buf[..end]).replace("\r\n", "\n");
                self.buf.drain(..end);
                self.scanned = 0;
                if let Some(ev) = parse_event(&block) {
                    return Some(Ok(ev));
                }
                continue;
            }
            self.scanned = self.buf.len();
            match self.body.next().await? {
                Ok(chunk) => self.buf.extend_from_slice(&chunk),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Where the first event of `b` ends (after its blank line: "\n\n" or
/// "\r\n\r\n").
fn event_end(b: &[u8]) -> Option<usize> {
    let lf = b.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = b.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    }
}

/// An event block's fields; comments and keep-alives give `None`.
fn parse_event(block: &str) -> Option<SseEvent> {
    let mut ev = SseEvent {
        id: None,
        event: "message".into(),
        data: String::new(),
    };
    let mut has_data = false;
    for line in block.lines() {
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => ev.event = value.to_string(),
            "id" => ev.id = Some(value.to_string()),
            "data" => {
                if has_data {
                    ev.data.push('\n');
                }
                ev.data.push_str(value);
                has_data = true;
            }
            _ => {}
        }
    }
    has_data.then_some(ev)
}

impl ApiClient {
    /// Opens the event stream at `path`, after event `last_event_id`.
    pub async fn events(
        &self,
        path: &str,
        last_event_id: Option<i64>,
    ) -> Result<EventStream, ApiFailure> {
        let after = last_event_id.map(|i| i.to_string()).unwrap_or_default();
        let body: ByteStream = match &self.target {
            Target::Local(router) => {
                let req = Request::builder()
                    .method(Method::GET)
                    .uri(path)
                    .header(header::AUTHORIZATION, format!("Bearer {}", self.key))
                    .header("last-event-id", &after)
                    .body(Body::empty())
                    .map_err(|e| ApiFailure::unreachable(format!("bad request: {e}")))?;
                let resp = router
                    .clone()
                    .oneshot(req)
                    .await
                    .map_err(|e| ApiFailure::unreachable(e.to_string()))?;
                let status = resp.status().as_u16();
                if !(200..300).contains(&status) {
                    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
                        .await
                        .unwrap_or_default();
                    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                    return Err(ApiFailure::from_answer(status, &v));
                }
                Box::pin(
                    resp.into_body()
                        .into_data_stream()
                        .map(|r| r.map_err(|e| e.to_string())),
                )
            }
            Target::Remote { http, base } => {
                let resp = http
                    .get(format!("{base}{path}"))
                    .bearer_auth(&self.key)
                    .header("last-event-id", &after)
                    .send()
                    .await
                    .map_err(|e| {
                        ApiFailure::unreachable(format!(
                            "could not reach {base} ({e}); is `webdata serve` running there?"
                        ))
                    })?;
                let status = resp.status().as_u16();
                if !(200..300).contains(&status) {
                    let v = resp.json::<Value>().await.unwrap_or(Value::Null);
                    return Err(ApiFailure::from_answer(status, &v));
                }
                Box::pin(resp.bytes_stream().map(|r| r.map_err(|e| e.to_string())))
            }
        };
        Ok(EventStream {
            body,
            buf: Vec::new(),
            scanned: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_parsed_by_field_and_keepalives_skipped() {
        let ev = parse_event("id: 7\nevent: page\ndata: {\"a\":1}\n\n").expect("event");
        assert_eq!(ev.id.as_deref(), Some("7"));
        assert_eq!(ev.event, "page");
        assert_eq!(ev.data, "{\"a\":1}");
        assert!(parse_event(": keep-alive\n\n").is_none());
        let two = parse_event("data: a\ndata: b\n\n").expect("event");
        assert_eq!((two.event.as_str(), two.data.as_str()), ("message", "a\nb"));
        assert_eq!(event_end(b"data: x\n\nrest"), Some(9));
        assert_eq!(event_end(b"data: x\r\n\r\nrest"), Some(11));
        assert_eq!(event_end(b"data: x\n"), None);
    }

    #[tokio::test]
    async fn events_split_across_chunks_come_out_whole_and_in_order() {
        let chunks = [
            "id: 1\nevent: page\ndata: {\"u\":",
            "1}\n",
            "\n: keep-alive\n\nid: 2\nda",
            "ta: b\n\n",
        ];
        let body: ByteStream = Box::pin(futures::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok(bytes::Bytes::from_static(c.as_bytes()))),
        ));
        let mut s = EventStream {
            body,
            buf: Vec::new(),
            scanned: 0,
        };
        let a = s.next().await.expect("one").expect("ok");
        assert_eq!((a.id.as_deref(), a.data.as_str()), (Some("1"), "{\"u\":1}"));
        let b = s.next().await.expect("two").expect("ok");
        assert_eq!((b.id.as_deref(), b.data.as_str()), (Some("2"), "b"));
        assert!(s.next().await.is_none());
    }
}
