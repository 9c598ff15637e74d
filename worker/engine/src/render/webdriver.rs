//! How browsers are configured and reached: Chromium's flags (quiet,
//! headless, every request through the guard proxy) and WebDriver sessions,
//! attached to a Chromium we launched or opened on a remote endpoint.

use std::net::IpAddr;

use fantoccini::wd::Capabilities;
use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};

use super::{RenderError, VIEWPORT_HEIGHT, VIEWPORT_WIDTH};

/// Accept-Language when the request names no languages.
pub(crate) const DEFAULT_ACCEPT_LANGUAGE: &str = "en-US,en";

/// Flags for every Chromium we start (locally or through remote WebDriver):
/// headless, quiet (no background traffic on a closed network) and every
/// request through the guard proxy, loopback included.
pub(crate) fn chromium_flags(proxy_url: &str) -> Vec<String> {
    let mut flags: Vec<String> = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-domain-reliability",
        "--disable-breakpad",
        "--disable-client-side-phishing-detection",
        // The WebUI omnibox popups cost two renderer processes per window,
        // and every render opens a window (a fresh browser context).
        "--disable-features=Translate,MediaRouter,DialMediaRouteProvider,OptimizationHints,AutofillServerCommunication,CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions,DnsOverHttps,WebTransport,PreloadTopChromeWebUI,WebUIOmniboxPopup,WebUIOmniboxAimPopup",
        "--no-default-browser-check",
        "--no-pings",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        "--mute-audio",
        "--hide-scrollbars",
        "--disable-dev-shm-usage",
        "--disable-renderer-backgrounding",
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-hang-monitor",
        "--force-device-scale-factor=1",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--proxy-bypass-list=<-loopback>",
        "--lang=en-US",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    flags.push(format!("--proxy-server={proxy_url}"));
    flags.push(format!("--accept-lang={DEFAULT_ACCEPT_LANGUAGE}"));
    flags.push(format!("--window-size={VIEWPORT_WIDTH},{VIEWPORT_HEIGHT}"));
    flags
}

/// Opens a WebDriver session (https endpoints use rustls with ring).
pub(crate) async fn connect(
    webdriver_url: &str,
    caps: Capabilities,
) -> Result<Client, RenderError> {
    let mut url = webdriver_url.to_owned();
    if !url.ends_with('/') {
        url.push('/');
    }
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
        .map_err(|e| RenderError::Browser(format!("tls: {e}")))?
        .https_or_http()
        .enable_http1()
        .build();
    let mut builder = ClientBuilder::new(connector);
    builder.capabilities(caps);
    builder
        .connect(&url)
        .await
        .map_err(|e| RenderError::Browser(format!("WebDriver session at {webdriver_url}: {e}")))
}

/// Capabilities that attach chromedriver to a Chromium we launched.
pub(crate) fn attach_capabilities(debugger_address: &str) -> Capabilities {
    let mut caps = Capabilities::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({ "debuggerAddress": debugger_address }),
    );
    caps.insert("pageLoadStrategy".into(), json!("normal"));
    caps.insert("unhandledPromptBehavior".into(), json!("dismiss"));
    caps
}

/// Capabilities for a remote browser: our flags, our proxy.
pub(crate) fn remote_capabilities(proxy_url: &str) -> Capabilities {
    let mut caps = Capabilities::new();
    caps.insert("browserName".into(), json!("chrome"));
    caps.insert(
        "goog:chromeOptions".into(),
        json!({ "args": chromium_flags(proxy_url) }),
    );
    caps.insert("pageLoadStrategy".into(), json!("normal"));
    caps.insert("unhandledPromptBehavior".into(), json!("dismiss"));
    caps
}

/// The browser-level DevTools websocket of a remote session: Selenium Grid's
/// `se:cdp`, or chromedriver's `debuggerAddress` when chromedriver runs on
/// this machine (anywhere else "localhost" would mean us).
pub(crate) async fn remote_devtools_url(client: &Client, webdriver_url: &str) -> Option<String> {
    let caps = client.capabilities()?;
    if let Some(ws) = caps.get("se:cdp").and_then(Value::as_str) {
        return Some(ws.to_owned());
    }
    let webdriver_is_local = url::Url::parse(webdriver_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
        .is_some_and(|h| {
            h == "localhost"
                || h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        });
    let address = caps
        .get("goog:chromeOptions")
        .and_then(|o| o.get("debuggerAddress"))
        .and_then(Value::as_str)?;
    if !webdriver_is_local {
        return None;
    }
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .ok()?;
    let version: Value = http
        .get(format!("http://{address}/json/version"))
        .send()
        .await
        .ok()?
        .json()
        .await
        .ok()?;
    version
        .get("webSocketDebuggerUrl")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// An IPv6 literal in brackets, for a URL authority.
pub(crate) fn bracket(host: &str) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_route_loopback_through_the_proxy_and_keep_the_browser_quiet() {
        let flags = chromium_flags("http://127.0.0.1:9");
        for needed in [
            "--proxy-server=http://127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--disable-quic",
            "--disable-background-networking",
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
        ] {
            assert!(flags.iter().any(|f| f == needed), "missing {needed}");
        }
    }
}
