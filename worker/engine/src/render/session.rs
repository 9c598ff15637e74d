//! One browser session: a WebDriver session, the guard proxy its browser
//! must use, and (when the browser's DevTools endpoint is reachable) a
//! browser-level DevTools connection that gives every render a fresh
//! browser context. Without that connection a session renders once and is
//! closed, since its cookies and storage could not be wiped reliably.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use fantoccini::wd::WindowHandle;
use fantoccini::Client;
use serde_json::{json, Value};

use super::cdp::{self, BrowserCdp};
use super::driver::{LaunchOptions, LocalBrowser};
use super::failure::Failure;
use super::page;
use super::proxy::{GuardProxy, InternalPorts};
use super::webdriver::{
    attach_capabilities, bracket, connect, remote_capabilities, remote_devtools_url,
    DEFAULT_ACCEPT_LANGUAGE,
};
use super::{RenderError, RenderRequest, Rendered, VIEWPORT_HEIGHT, VIEWPORT_WIDTH};
use crate::guard::NetworkGuard;

/// Live sessions' browser pids, removed when a session is dropped.
#[derive(Clone, Default)]
pub(crate) struct PidRegistry(Arc<Mutex<HashMap<u64, u32>>>);

impl PidRegistry {
    pub(super) fn insert(&self, id: u64, pid: u32) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(id, pid);
        }
    }

    /// Forgets a session's pid.
    pub(crate) fn remove(&self, id: u64) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(&id);
        }
    }

    pub(super) fn pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .0
            .lock()
            .map(|m| m.values().copied().collect())
            .unwrap_or_default();
        pids.sort_unstable();
        pids
    }
}

/// A blank page in its own browser context (cookies, storage, cache),
/// with our DevTools session attached to it.
struct ContextPage {
    context_id: String,
    target_id: String,
    cdp_session: String,
}

/// Opens a page in a new browser context with the default identity.
async fn create_context_page(
    cdp: &mut BrowserCdp,
    user_agent: &str,
) -> Result<ContextPage, RenderError> {
    let context = cdp
        .call(
            "Target.createBrowserContext",
            json!({ "disposeOnDetach": true }),
        )
        .await?;
    let context_id = str_field(&context, "browserContextId")?;
    let created = async {
        let target = cdp
            .call(
                "Target.createTarget",
                json!({
                    "url": "about:blank",
                    "browserContextId": context_id,
                    "width": VIEWPORT_WIDTH,
                    "height": VIEWPORT_HEIGHT,
                    "background": true,
                }),
            )
            .await?;
        let target_id = str_field(&target, "targetId")?;
        let attached = cdp
            .call(
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": true }),
            )
            .await?;
        let cdp_session = str_field(&attached, "sessionId")?;
        // A scrape never saves files.
        cdp.call(
            "Browser.setDownloadBehavior",
            json!({ "behavior": "deny", "browserContextId": context_id }),
        )
        .await?;
        let page = ContextPage {
            context_id: context_id.clone(),
            target_id,
            cdp_session,
        };
        set_page_identity(cdp, &page, user_agent, DEFAULT_ACCEPT_LANGUAGE).await?;
        Ok(page)
    }
    .await;
    if created.is_err() {
        let _ = cdp
            .call(
                "Target.disposeBrowserContext",
                json!({ "browserContextId": context_id }),
            )
            .await;
    }
    created
}

/// User agent and Accept-Language (also `navigator.languages`) of one page.
async fn set_page_identity(
    cdp: &mut BrowserCdp,
    page: &ContextPage,
    user_agent: &str,
    accept_language: &str,
) -> Result<(), RenderError> {
    if user_agent.is_empty() {
        return Ok(());
    }
    cdp.call_in(
        Some(&page.cdp_session),
        "Emulation.setUserAgentOverride",
        json!({ "userAgent": user_agent, "acceptLanguage": accept_language }),
    )
    .await
    .map(|_| ())
}

/// Where a session's browser lives.
pub(crate) enum Origin<'a> {
    /// A Chromium we launch, driven by our chromedriver at `driver_url`.
    Local {
        driver_url: &'a str,
        driver_generation: u64,
        chromium: &'a Path,
    },
    /// A browser behind a Selenium or chromedriver endpoint.
    Remote {
        webdriver_url: &'a str,
        proxy_bind: IpAddr,
        proxy_advertise: Option<&'a str>,
    },
}

/// A browser session owned by the pool (or by the render using it).
pub(crate) struct Session {
    pub(crate) id: u64,
    client: Client,
    proxy: GuardProxy,
    browser: Option<LocalBrowser>,
    cdp: Option<BrowserCdp>,
    page: Option<ContextPage>,
    internal: InternalPorts,
    devtools_port: Option<u16>,
    user_agent: String,
    /// Generation of the local chromedriver this session lives on.
    pub(crate) driver_generation: Option<u64>,
    /// Renders done so far.
    pub(crate) renders: u32,
    /// When the session was last returned to the pool.
    pub(crate) idle_since: Instant,
    registry: Option<PidRegistry>,
}

impl Session {
    /// Starts a browser session with its own guard proxy.
    pub(crate) async fn start(
        id: u64,
        origin: Origin<'_>,
        guard: NetworkGuard,
        internal: InternalPorts,
    ) -> Result<Self, RenderError> {
        let bind = match &origin {
            Origin::Local { .. } => IpAddr::from([127, 0, 0, 1]),
            Origin::Remote { proxy_bind, .. } => *proxy_bind,
        };
        let proxy = GuardProxy::start(bind, guard, internal.clone())
            .await
            .map_err(|e| RenderError::Browser(format!("guard proxy: {e}")))?;
        let (client, browser, cdp_url, driver_generation) = match origin {
            Origin::Local {
                driver_url,
                driver_generation,
                chromium,
            } => {
                let browser = LocalBrowser::launch(&LaunchOptions {
                    binary: chromium,
                    proxy: proxy.addr(),
                })
                .await?;
                internal.add(browser.devtools.port());
                let caps = attach_capabilities(&browser.devtools.to_string());
                let client = connect(driver_url, caps).await;
                let client = match client {
                    Ok(client) => client,
                    Err(e) => {
                        internal.remove(browser.devtools.port());
                        return Err(e);
                    }
                };
                let ws = browser.ws_url.clone();
                (client, Some(browser), Some(ws), Some(driver_generation))
            }
            Origin::Remote {
                webdriver_url,
                proxy_advertise,
                ..
            } => {
                let host = proxy_advertise
                    .map(str::to_owned)
                    .unwrap_or_else(|| proxy.addr().ip().to_string());
                let proxy_url = format!("http://{}:{}", bracket(&host), proxy.addr().port());
                let client = connect(webdriver_url, remote_capabilities(&proxy_url)).await?;
                let ws = remote_devtools_url(&client, webdriver_url).await;
                (client, None, ws, None)
            }
        };
        let devtools_port = browser.as_ref().map(|b| b.devtools.port());
        let mut session = Self {
            id,
            client,
            proxy,
            browser,
            cdp: None,
            page: None,
            internal,
            devtools_port,
            user_agent: String::new(),
            driver_generation,
            renders: 0,
            idle_since: Instant::now(),
            registry: None,
        };
        if let Some(ws) = cdp_url {
            match BrowserCdp::connect(&ws).await {
                Ok(conn) => session.cdp = Some(conn),
                Err(e) if session.browser.is_some() => return Err(e),
                Err(e) => {
                    tracing::info!(error = %e, "no browser-level DevTools; one render per session")
                }
            }
        }
        session.setup().await?;
        Ok(session)
    }

    async fn setup(&mut self) -> Result<(), RenderError> {
        let timeouts = fantoccini::wd::TimeoutConfiguration::new(
            Some(std::time::Duration::from_secs(30)),
            Some(std::time::Duration::from_secs(120)),
            Some(std::time::Duration::ZERO),
        );
        self.client
            .update_timeouts(timeouts)
            .await
            .map_err(|e| RenderError::Browser(format!("setting timeouts: {e}")))?;
        let agent = match self.cdp.as_mut() {
            Some(cdp) => cdp
                .call("Browser.getVersion", json!({}))
                .await?
                .get("userAgent")
                .and_then(Value::as_str)
                .map(str::to_owned),
            None => self
                .client
                .execute("return navigator.userAgent", vec![])
                .await
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned)),
        };
        // "HeadlessChrome" is the first thing bot walls look for.
        self.user_agent = agent
            .unwrap_or_default()
            .replace("HeadlessChrome", "Chrome");
        if self.cdp.is_some() {
            self.switch_to_fresh_page().await?;
        } else {
            self.set_identity(DEFAULT_ACCEPT_LANGUAGE, None)
                .await
                .map_err(|f| f.error)?;
        }
        Ok(())
    }

    /// Lists the browser's pid in `registry` until the session is dropped.
    pub(crate) fn set_registry(&mut self, registry: PidRegistry) {
        self.registry = Some(registry);
    }

    /// True when this session may render again after a reset.
    pub(crate) fn reusable(&self) -> bool {
        self.cdp.is_some()
    }

    /// The local browser's process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.browser.as_ref().map(LocalBrowser::pid)
    }

    /// False when the local browser process died.
    pub(crate) fn is_alive(&mut self) -> bool {
        self.browser.as_mut().is_none_or(LocalBrowser::is_running)
    }

    /// Renders one page in the session's fresh context.
    pub(crate) async fn render(&mut self, req: &RenderRequest) -> Result<Rendered, Failure> {
        self.renders += 1;
        self.proxy.clear_refusals();
        if !req.languages.is_empty() || has_header(req, "user-agent") {
            let languages = accept_language(&req.languages);
            let agent = header_value(req, "user-agent");
            self.set_identity(&languages, agent).await?;
        }
        let extra: serde_json::Map<String, Value> = req
            .headers
            .iter()
            .filter(|(name, _)| !name.eq_ignore_ascii_case("user-agent"))
            .map(|(name, value)| (name.clone(), Value::String(value.clone())))
            .collect();
        if !extra.is_empty() {
            cdp::page_command(&self.client, "Network.enable", json!({}))
                .await
                .map_err(Failure::from_cmd("Network.enable"))?;
            cdp::page_command(
                &self.client,
                "Network.setExtraHTTPHeaders",
                json!({ "headers": extra }),
            )
            .await
            .map_err(Failure::from_cmd("Network.setExtraHTTPHeaders"))?;
        }
        page::render(&self.client, &self.proxy, req).await
    }

    /// Wipes everything the last render left: its browser context goes
    /// (cookies, storage, cache, service workers) and the WebDriver session
    /// moves to a page in a fresh one.
    pub(crate) async fn reset(&mut self) -> Result<(), RenderError> {
        let Some(cdp) = self.cdp.as_mut() else {
            return Err(RenderError::Browser("session cannot be reset".into()));
        };
        if let Some(old) = self.page.take() {
            cdp.call(
                "Target.disposeBrowserContext",
                json!({ "browserContextId": old.context_id }),
            )
            .await?;
        }
        self.switch_to_fresh_page().await
    }

    /// Opens a page in a new browser context and makes it the WebDriver
    /// session's window.
    async fn switch_to_fresh_page(&mut self) -> Result<(), RenderError> {
        let Some(cdp) = self.cdp.as_mut() else {
            return Err(RenderError::Browser("no DevTools connection".into()));
        };
        let page = create_context_page(cdp, &self.user_agent).await?;
        let handle = WindowHandle::try_from(page.target_id.clone())
            .map_err(|e| RenderError::Browser(format!("window handle: {e}")));
        self.page = Some(page);
        self.client
            .switch_to_window(handle?)
            .await
            .map_err(|e| RenderError::Browser(format!("switching to the fresh page: {e}")))
    }

    /// User agent (minus "Headless") and Accept-Language for the current page.
    async fn set_identity(&mut self, accept: &str, agent: Option<&str>) -> Result<(), Failure> {
        let agent = agent.unwrap_or(&self.user_agent).to_owned();
        if let (Some(cdp), Some(page)) = (self.cdp.as_mut(), self.page.as_ref()) {
            return set_page_identity(cdp, page, &agent, accept)
                .await
                .map_err(|error| Failure {
                    error,
                    session_ok: false,
                });
        }
        if agent.is_empty() {
            return Ok(());
        }
        cdp::page_command(
            &self.client,
            "Network.setUserAgentOverride",
            json!({ "userAgent": agent, "acceptLanguage": accept }),
        )
        .await
        .map(|_| ())
        .map_err(Failure::from_cmd("Network.setUserAgentOverride"))
    }

    /// Ends the WebDriver session, then kills the local browser (on drop).
    pub(crate) async fn close(self) {
        let client = self.client.clone();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(3), client.close()).await;
        drop(self);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(port) = self.devtools_port {
            self.internal.remove(port);
        }
        if let Some(registry) = &self.registry {
            registry.remove(self.id);
        }
    }
}

fn str_field(value: &Value, field: &str) -> Result<String, RenderError> {
    value
        .get(field)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| RenderError::Browser(format!("DevTools answer without {field}: {value}")))
}

fn has_header(req: &RenderRequest, name: &str) -> bool {
    header_value(req, name).is_some()
}

fn header_value<'a>(req: &'a RenderRequest, name: &str) -> Option<&'a str> {
    req.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// `["de-DE", "en"]` → `de-DE,en;q=0.9` (the first language is preferred).
pub(crate) fn accept_language(languages: &[String]) -> String {
    let mut parts = Vec::new();
    for (i, lang) in languages
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if i == 0 {
            parts.push(lang.to_owned());
        } else {
            let q = (10usize.saturating_sub(i)).max(1);
            parts.push(format!("{lang};q=0.{q}"));
        }
    }
    if parts.is_empty() {
        DEFAULT_ACCEPT_LANGUAGE.to_owned()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_weights_later_languages_lower() {
        let langs = vec!["de-DE".to_owned(), "de".to_owned(), "en".to_owned()];
        assert_eq!(accept_language(&langs), "de-DE,de;q=0.9,en;q=0.8");
        assert_eq!(accept_language(&[]), DEFAULT_ACCEPT_LANGUAGE);
    }
}
