//! The render tier: pages loaded in headless Chromium through WebDriver
//! (fantoccini), with actions, waits and screenshots.
//!
//! Every request the browser makes goes through an in-process guard proxy
//! ([`proxy`]) that applies the same [`NetworkGuard`] as the fetch tier.
//! Sessions are pooled ([`BrowserPool`]); each render runs in a fresh
//! browser context (its own cookies, storage and cache) that is disposed
//! afterwards, so nothing leaks from one scrape to the next.
//!
//! Remote browsers (`WEBDATA_WEBDRIVER_URL`, e.g. Selenium) get the same
//! flags and proxy through capabilities; the proxy then has to be reachable
//! from the browser pod: bind it with `WEBDATA_BROWSER_PROXY_BIND=0.0.0.0`
//! and advertise this worker's address with `WEBDATA_BROWSER_PROXY_ADVERTISE`.
//! Fresh contexts need the browser-level DevTools endpoint (Selenium Grid's
//! `se:cdp`, or a chromedriver on this machine); without it every render gets
//! a new WebDriver session.
//!
//! Configuration (environment, see [`BrowserConfig::from_env`]):
//! `WEBDATA_WEBDRIVER_URL`, `WEBDATA_BROWSER_SESSIONS`,
//! `WEBDATA_BROWSER_ACQUIRE_TIMEOUT_MS`, `WEBDATA_CHROMIUM_PATH`,
//! `WEBDATA_CHROMEDRIVER_PATH`, `WEBDATA_BROWSER_PROXY_BIND`,
//! `WEBDATA_BROWSER_PROXY_ADVERTISE`.

mod actions;
mod cdp;
mod driver;
mod failure;
mod page;
mod pool;
mod proxy;
mod session;
mod webdriver;

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::time::Duration;

use webdata_core::types::Action;

use crate::guard::NetworkGuard;

pub use pool::{BrowserPool, ProcessIds};

/// Width of the browser viewport in CSS pixels.
pub const VIEWPORT_WIDTH: u32 = 1280;
/// Height of the browser viewport in CSS pixels.
pub const VIEWPORT_HEIGHT: u32 = 800;
/// Full-page screenshots are cut at this height (pixels).
pub const MAX_SCREENSHOT_HEIGHT: u32 = 16384;

/// How the render tier reaches a browser.
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    /// A Selenium or chromedriver endpoint; `None` spawns a local chromedriver if installed.
    pub webdriver_url: Option<String>,
    /// Most browser sessions alive at once (each renders one page at a time).
    pub max_sessions: usize,
    /// How long a render waits for a free session before `Capacity`.
    pub acquire_timeout: Duration,
    /// The network guard every browser request must pass.
    pub guard: NetworkGuard,
    /// Chromium executable for local sessions (default: `chromium` on `PATH`).
    pub chromium_path: Option<PathBuf>,
    /// chromedriver executable for local sessions (default: `chromedriver` on `PATH`).
    pub chromedriver_path: Option<PathBuf>,
    /// Address the guard proxies listen on (loopback unless the browser is remote).
    pub proxy_bind: IpAddr,
    /// Host name or address a remote browser uses to reach the guard proxies
    /// (default: `proxy_bind`). It must be reachable from the browser pod.
    pub proxy_advertise: Option<String>,
}

impl BrowserConfig {
    /// Defaults (local chromedriver, 2 sessions, 10 s acquire timeout) with `guard`.
    pub fn new(guard: NetworkGuard) -> Self {
        Self {
            webdriver_url: None,
            max_sessions: 2,
            acquire_timeout: Duration::from_secs(10),
            guard,
            chromium_path: None,
            chromedriver_path: None,
            proxy_bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            proxy_advertise: None,
        }
    }

    /// Defaults overridden by the `WEBDATA_*` variables listed in the module docs.
    pub fn from_env(guard: NetworkGuard) -> Result<Self, BrowserConfigError> {
        Self::from_lookup(guard, |name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) with an injectable variable lookup.
    pub fn from_lookup(
        guard: NetworkGuard,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, BrowserConfigError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let bad = |name: &str, value: &str, expected: &str| BrowserConfigError {
            message: format!("{name}={value:?}: expected {expected}"),
        };
        let mut cfg = Self::new(guard);
        cfg.webdriver_url = get("WEBDATA_WEBDRIVER_URL");
        if let Some(v) = get("WEBDATA_BROWSER_SESSIONS") {
            cfg.max_sessions = v
                .trim()
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad("WEBDATA_BROWSER_SESSIONS", &v, "a positive integer"))?;
        }
        if let Some(v) = get("WEBDATA_BROWSER_ACQUIRE_TIMEOUT_MS") {
            let ms: u64 = v.trim().parse().map_err(|_| {
                bad(
                    "WEBDATA_BROWSER_ACQUIRE_TIMEOUT_MS",
                    &v,
                    "milliseconds (an integer)",
                )
            })?;
            cfg.acquire_timeout = Duration::from_millis(ms);
        }
        cfg.chromium_path = get("WEBDATA_CHROMIUM_PATH").map(PathBuf::from);
        cfg.chromedriver_path = get("WEBDATA_CHROMEDRIVER_PATH").map(PathBuf::from);
        if let Some(v) = get("WEBDATA_BROWSER_PROXY_BIND") {
            cfg.proxy_bind = v
                .trim()
                .parse()
                .map_err(|_| bad("WEBDATA_BROWSER_PROXY_BIND", &v, "an IP address"))?;
        }
        cfg.proxy_advertise = get("WEBDATA_BROWSER_PROXY_ADVERTISE");
        Ok(cfg)
    }
}

/// A `WEBDATA_*` browser setting could not be parsed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct BrowserConfigError {
    /// Which variable, its value and what was expected.
    pub message: String,
}

/// Which screenshot to take after the page settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenshotKind {
    /// The 1280×800 viewport.
    Viewport,
    /// The whole document, up to [`MAX_SCREENSHOT_HEIGHT`] pixels tall.
    FullPage,
}

/// One page to render.
#[derive(Debug, Clone)]
pub struct RenderRequest {
    /// The page URL (checked by the guard before the browser sees it).
    pub url: url::Url,
    /// Extra headers sent on the page's own requests.
    pub headers: Vec<(String, String)>,
    /// Preferred languages, most preferred first (`Accept-Language`, `navigator.languages`).
    pub languages: Vec<String>,
    /// Actions run in order once the page loaded.
    pub actions: Vec<Action>,
    /// Extra settle time after the actions.
    pub wait_for: Option<Duration>,
    /// The whole render (including waiting for a session) ends by then.
    pub deadline: tokio::time::Instant,
    /// A screenshot to take, if any.
    pub screenshot: Option<ScreenshotKind>,
    /// A script run in the page after the actions and waits, just before
    /// the DOM is read (a function body: `return` gives the value). Its
    /// JSON result comes back in [`Rendered::script_result`]; a script that
    /// throws leaves that `None` and does not fail the render.
    pub script: Option<String>,
}

impl RenderRequest {
    /// A plain render of `url` that must finish within `timeout`.
    pub fn new(url: url::Url, timeout: Duration) -> Self {
        Self {
            url,
            headers: Vec::new(),
            languages: Vec::new(),
            actions: Vec::new(),
            wait_for: None,
            deadline: tokio::time::Instant::now() + timeout,
            screenshot: None,
            script: None,
        }
    }
}

/// What the browser saw.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The URL after redirects and script navigations.
    pub final_url: url::Url,
    /// The serialized DOM (doctype included) after actions and waits.
    pub html: String,
    /// HTTP status of the main document, when the browser reports it.
    pub status: Option<u16>,
    /// The PNG screenshot, when one was asked for.
    pub screenshot_png: Option<Vec<u8>>,
    /// What [`RenderRequest::script`] returned, when it ran and returned.
    pub script_result: Option<serde_json::Value>,
    /// The page settled (no DOM change or network for a quiet window)
    /// before it was read; false when the timeout cut the wait short.
    pub settled: bool,
    /// Time from the call to the result, waiting for a session included.
    pub elapsed: Duration,
}

/// Why a render failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// No browser is configured or installed (API code `not_configured`).
    #[error("browser rendering is not available: {0}")]
    NotAvailable(String),
    /// Every session stayed busy for the acquire timeout (`capacity_exceeded`).
    #[error("all browser sessions are busy; retry after {retry_after_ms} ms")]
    Capacity {
        /// A hint for the client's retry.
        retry_after_ms: u64,
    },
    /// The render did not finish before its deadline.
    #[error("the page did not finish rendering before the timeout")]
    Timeout,
    /// The page URL itself (or a redirect of it) was refused by the network guard.
    #[error("{0}")]
    Blocked(String),
    /// Action `index` (0-based) failed; the message names the selector.
    #[error("action {index} failed: {message}")]
    ActionFailed {
        /// Position of the action in the request.
        index: usize,
        /// What went wrong, naming the selector or key.
        message: String,
    },
    /// The browser or WebDriver failed (or the page could not be loaded).
    #[error("browser error: {0}")]
    Browser(String),
}

/// The render tier's browser pool: `WEBDATA_WEBDRIVER_URL`, else a local
/// chromedriver + chromium when installed; `WEBDATA_BROWSER=off` disables it.
pub async fn start_from_env(
    guard: crate::guard::NetworkGuard,
    webdriver_url: Option<&str>,
) -> Option<BrowserPool> {
    if std::env::var("WEBDATA_BROWSER").is_ok_and(|v| v == "off") {
        tracing::info!("browser rendering disabled (WEBDATA_BROWSER=off)");
        return None;
    }
    let mut cfg = match BrowserConfig::from_env(guard) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "browser settings are invalid; rendering is off");
            return None;
        }
    };
    if let Some(u) = webdriver_url {
        cfg.webdriver_url = Some(u.to_string());
    }
    match BrowserPool::start(cfg).await {
        Ok(pool) => {
            tracing::info!("browser rendering available");
            Some(pool)
        }
        Err(e) => {
            tracing::info!(reason = %e, "browser rendering not available; tier render answers not_configured");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_reads_the_environment_names_and_refuses_bad_values() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let cfg = BrowserConfig::from_lookup(
            NetworkGuard::default(),
            env(&[
                ("WEBDATA_WEBDRIVER_URL", "http://selenium:4444/wd/hub"),
                ("WEBDATA_BROWSER_SESSIONS", "4"),
                ("WEBDATA_BROWSER_ACQUIRE_TIMEOUT_MS", "250"),
                ("WEBDATA_BROWSER_PROXY_BIND", "0.0.0.0"),
                ("WEBDATA_BROWSER_PROXY_ADVERTISE", "worker-0.workers"),
            ]),
        )
        .unwrap();
        assert_eq!(
            cfg.webdriver_url.as_deref(),
            Some("http://selenium:4444/wd/hub")
        );
        assert_eq!(cfg.max_sessions, 4);
        assert_eq!(cfg.acquire_timeout, Duration::from_millis(250));
        assert_eq!(cfg.proxy_bind, IpAddr::from([0, 0, 0, 0]));
        assert_eq!(cfg.proxy_advertise.as_deref(), Some("worker-0.workers"));

        let defaults = BrowserConfig::from_lookup(NetworkGuard::default(), env(&[])).unwrap();
        assert_eq!(defaults.max_sessions, 2);
        assert_eq!(defaults.acquire_timeout, Duration::from_secs(10));
        assert!(defaults.webdriver_url.is_none());

        let bad = BrowserConfig::from_lookup(
            NetworkGuard::default(),
            env(&[("WEBDATA_BROWSER_SESSIONS", "0")]),
        )
        .unwrap_err();
        assert!(bad.message.contains("WEBDATA_BROWSER_SESSIONS"), "{bad}");
    }
}
