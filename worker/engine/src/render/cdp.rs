//! Chrome DevTools Protocol, two ways: page-level commands through
//! chromedriver's `goog/cdp/execute` endpoint (they act on the WebDriver
//! session's current window), and a browser-level connection over the
//! DevTools websocket for what page sessions may not do (browser contexts).

use std::time::Duration;

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::Client;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::RenderError;

/// How long one browser-level DevTools command may take.
const CDP_TIMEOUT: Duration = Duration::from_secs(15);

/// chromedriver's vendor command `POST /session/{id}/goog/cdp/execute`.
#[derive(Debug)]
struct CdpExecute {
    method: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for CdpExecute {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({ "cmd": self.method, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// Runs a DevTools command on the session's current window.
pub(crate) async fn page_command(
    client: &Client,
    method: &'static str,
    params: Value,
) -> Result<Value, fantoccini::error::CmdError> {
    client.issue_cmd(CdpExecute { method, params }).await
}

/// A browser-level DevTools connection (one user at a time).
pub(crate) struct BrowserCdp {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

impl BrowserCdp {
    /// Connects to a `ws://…/devtools/browser/…` endpoint.
    pub(crate) async fn connect(ws_url: &str) -> Result<Self, RenderError> {
        let connecting = tokio_tungstenite::connect_async(ws_url);
        let (ws, _) = tokio::time::timeout(CDP_TIMEOUT, connecting)
            .await
            .map_err(|_| RenderError::Browser(format!("DevTools at {ws_url} did not answer")))?
            .map_err(|e| RenderError::Browser(format!("DevTools at {ws_url}: {e}")))?;
        Ok(Self { ws, next_id: 0 })
    }

    /// Sends one browser-level command and waits for its answer.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Result<Value, RenderError> {
        self.call_in(None, method, params).await
    }

    /// Sends one command, to a target when `session` (from
    /// `Target.attachToTarget` with `flatten`) is given; events are skipped.
    pub(crate) async fn call_in(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, RenderError> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            message["sessionId"] = Value::String(session.to_owned());
        }
        let message = message.to_string();
        let exchange = async {
            self.ws
                .send(Message::text(message))
                .await
                .map_err(|e| format!("sending {method}: {e}"))?;
            while let Some(frame) = self.ws.next().await {
                let frame = frame.map_err(|e| format!("waiting for {method}: {e}"))?;
                let Message::Text(text) = frame else { continue };
                let Ok(reply) = serde_json::from_str::<Value>(text.as_str()) else {
                    continue;
                };
                if reply.get("id").and_then(Value::as_u64) != Some(id) {
                    continue;
                }
                if let Some(error) = reply.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(reply.get("result").cloned().unwrap_or(Value::Null));
            }
            Err(format!("DevTools connection closed during {method}"))
        };
        match tokio::time::timeout(CDP_TIMEOUT, exchange).await {
            Ok(result) => result.map_err(RenderError::Browser),
            Err(_) => Err(RenderError::Browser(format!("{method} timed out"))),
        }
    }
}
