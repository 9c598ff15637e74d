//! The guard proxy: an HTTP forward proxy the browser must use for every
//! request (documents, sub-resources, redirects, fetch/XHR, iframes,
//! websockets). Each target is resolved with [`NetworkGuard::resolve_checked`]
//! and the connection goes only to a checked address, so a public page
//! cannot make our browser reach a private one.
//!
//! `CONNECT host:port` (https, wss, ws) becomes a tunnel; an absolute-URI
//! request (`GET http://host/path`) is forwarded on a fresh upstream
//! connection. Refusals answer 403 and are logged, so a render can tell
//! that its own page URL (or a redirect target) was refused.

use std::collections::HashSet;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode, Uri};
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use url::Url;

use crate::guard::{GuardError, NetworkGuard};

/// How long DNS plus the TCP connect to one target may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Marks the proxy's own refusals, for logs and the page.
const GUARD_HEADER: &str = "x-webdata-guard";

type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// Loopback endpoints of our own machinery (chromedriver, the guard
/// proxies) that a page must never reach, even when the guard allows
/// loopback: address and port, so that a site on another loopback address
/// that happens to use the same port number (127.0.0.2:P beside
/// 127.0.0.1:P) is not mistaken for them.
#[derive(Debug, Clone, Default)]
pub(crate) struct InternalPorts(Arc<Mutex<HashSet<SocketAddr>>>);

impl InternalPorts {
    /// Adds a port listening on localhost (127.0.0.1 and ::1).
    pub(crate) fn add(&self, port: u16) {
        self.add_addr(SocketAddr::from(([127, 0, 0, 1], port)));
        self.add_addr(SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)));
    }

    /// Adds one listening address.
    pub(crate) fn add_addr(&self, addr: SocketAddr) {
        if let Ok(mut ports) = self.0.lock() {
            ports.insert(addr);
        }
    }

    /// Removes a port (every address it was added with).
    pub(crate) fn remove(&self, port: u16) {
        if let Ok(mut ports) = self.0.lock() {
            ports.retain(|a| a.port() != port);
        }
    }

    fn refuses(&self, addr: SocketAddr) -> bool {
        if !(addr.ip().is_loopback() || addr.ip().is_unspecified()) {
            return false;
        }
        self.0.lock().map_or(true, |p| {
            p.iter().any(|own| {
                own.port() == addr.port()
                    && (own.ip() == addr.ip()
                        || own.ip().is_unspecified()
                        || addr.ip().is_unspecified())
            })
        })
    }
}

/// One target the proxy refused during the current render.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    /// Host as the browser asked for it (lower case, no brackets).
    pub host: String,
    /// Target port.
    pub port: u16,
    /// Why (the guard's message).
    pub message: String,
    /// DNS failed rather than the guard refusing.
    pub dns_failure: bool,
}

#[derive(Clone)]
struct State {
    guard: NetworkGuard,
    internal: InternalPorts,
    refusals: Arc<Mutex<Vec<Refusal>>>,
    shutdown: watch::Receiver<()>,
}

/// A running guard proxy; it stops (with every tunnel) when dropped.
pub(crate) struct GuardProxy {
    addr: SocketAddr,
    refusals: Arc<Mutex<Vec<Refusal>>>,
    internal: InternalPorts,
    _shutdown: watch::Sender<()>,
}

impl GuardProxy {
    /// Listens on `bind` (port chosen by the OS) and serves until dropped.
    pub(crate) async fn start(
        bind: IpAddr,
        guard: NetworkGuard,
        internal: InternalPorts,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind((bind, 0)).await?;
        let addr = listener.local_addr()?;
        internal.add_addr(addr);
        let (tx, rx) = watch::channel(());
        let refusals = Arc::new(Mutex::new(Vec::new()));
        let state = State {
            guard,
            internal: internal.clone(),
            refusals: refusals.clone(),
            shutdown: rx,
        };
        tokio::spawn(accept_loop(listener, state));
        Ok(Self {
            addr,
            refusals,
            internal,
            _shutdown: tx,
        })
    }

    /// The address the proxy listens on.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Forgets earlier refusals (a new render starts).
    pub(crate) fn clear_refusals(&self) {
        if let Ok(mut log) = self.refusals.lock() {
            log.clear();
        }
    }

    /// The refusal of `url`'s host and port since the last clear, if any.
    pub(crate) fn refusal_for(&self, url: &Url) -> Option<Refusal> {
        let host = bare_host(url.host_str()?);
        let port = url.port_or_known_default()?;
        let log = self.refusals.lock().ok()?;
        log.iter()
            .rev()
            .find(|r| r.host == host && r.port == port)
            .cloned()
    }
}

impl Drop for GuardProxy {
    fn drop(&mut self) {
        self.internal.remove(self.addr.port());
    }
}

async fn accept_loop(listener: TcpListener, state: State) {
    let mut shutdown = state.shutdown.clone();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = shutdown.changed() => return,
        };
        let Ok((stream, _peer)) = accepted else {
            // Out of file descriptors and the like: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        tokio::spawn(async move {
            let mut shutdown = state.shutdown.clone();
            let service_state = state.clone();
            let service = service_fn(move |req| handle(req, service_state.clone()));
            let conn = hyper::server::conn::http1::Builder::new()
                .preserve_header_case(true)
                .title_case_headers(true)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::select! {
                _ = conn => {}
                _ = shutdown.changed() => {}
            }
        });
    }
}

async fn handle(req: Request<Incoming>, state: State) -> Result<Response<ProxyBody>, Infallible> {
    Ok(if req.method() == Method::CONNECT {
        tunnel(req, state).await
    } else {
        forward(req, state).await
    })
}

/// `CONNECT host:port`: check, connect, answer 200, then splice bytes.
async fn tunnel(req: Request<Incoming>, state: State) -> Response<ProxyBody> {
    let Some(authority) = req.uri().authority() else {
        return text(StatusCode::BAD_REQUEST, "CONNECT needs host:port");
    };
    let host = bare_host(authority.host());
    let port = authority.port_u16().unwrap_or(443);
    let upstream = match connect_checked(&state, &host, port).await {
        Ok(stream) => stream,
        Err(response) => return response,
    };
    let mut shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        let Ok(upgraded) = hyper::upgrade::on(req).await else {
            return;
        };
        let mut client = TokioIo::new(upgraded);
        let mut upstream = upstream;
        tokio::select! {
            _ = tokio::io::copy_bidirectional(&mut client, &mut upstream) => {}
            _ = shutdown.changed() => {}
        }
    });
    Response::new(empty())
}

/// `GET http://host/path`: check, connect, send in origin form, stream back.
async fn forward(mut req: Request<Incoming>, state: State) -> Response<ProxyBody> {
    let target = req.uri().to_string();
    let url = match Url::parse(&target) {
        Ok(url) if url.scheme() == "http" => url,
        _ => {
            return text(
                StatusCode::BAD_REQUEST,
                "this is a forward proxy: send absolute http:// URIs or CONNECT",
            )
        }
    };
    let (Some(raw_host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return text(StatusCode::BAD_REQUEST, "the URL has no host");
    };
    let host = bare_host(raw_host);
    if let Err(e) = state.guard.check_parsed(&url) {
        return refuse(&state, &host, port, &e);
    }
    let upstream = match connect_checked(&state, &host, port).await {
        Ok(stream) => stream,
        Err(response) => return response,
    };
    let path = url[url::Position::BeforePath..url::Position::AfterQuery].to_owned();
    let Ok(origin_form) = path.parse::<Uri>() else {
        return text(StatusCode::BAD_REQUEST, "unparsable request path");
    };
    *req.uri_mut() = origin_form;
    let headers = req.headers_mut();
    for name in ["proxy-connection", "proxy-authorization", "keep-alive"] {
        headers.remove(name);
    }
    if !headers.contains_key(header::HOST) {
        let host_header = match url.port() {
            Some(p) => format!("{raw_host}:{p}"),
            None => raw_host.to_owned(),
        };
        if let Ok(value) = host_header.parse() {
            headers.insert(header::HOST, value);
        }
    }
    let (mut sender, conn) =
        match hyper::client::conn::http1::handshake::<_, Incoming>(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(e) => return text(StatusCode::BAD_GATEWAY, &format!("upstream: {e}")),
        };
    let mut shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = conn => {}
            _ = shutdown.changed() => {}
        }
    });
    match sender.send_request(req).await {
        Ok(response) => response.map(|body| body.boxed()),
        Err(e) => text(StatusCode::BAD_GATEWAY, &format!("upstream: {e}")),
    }
}

/// Resolves through the guard and connects to the first checked address
/// that answers; a refusal or failure is already an HTTP response.
async fn connect_checked(
    state: &State,
    host: &str,
    port: u16,
) -> Result<TcpStream, Response<ProxyBody>> {
    let resolved =
        tokio::time::timeout(CONNECT_TIMEOUT, state.guard.resolve_checked(host, port)).await;
    let addrs = match resolved {
        Ok(Ok(addrs)) => addrs,
        Ok(Err(e)) => return Err(refuse(state, host, port, &e)),
        Err(_) => {
            return Err(text(
                StatusCode::GATEWAY_TIMEOUT,
                &format!("resolving {host} timed out"),
            ))
        }
    };
    if let Some(addr) = addrs.iter().find(|a| state.internal.refuses(**a)) {
        let message = format!("{host} is {addr}, an endpoint of the renderer itself");
        record(state, host, port, message.clone(), false);
        return Err(guard_response(&message));
    }
    let mut last = String::from("no addresses");
    for addr in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Ok(Err(e)) => last = format!("{addr}: {e}"),
            Err(_) => last = format!("{addr}: connect timed out"),
        }
    }
    Err(text(
        StatusCode::BAD_GATEWAY,
        &format!("could not connect to {host}:{port}: {last}"),
    ))
}

fn refuse(state: &State, host: &str, port: u16, error: &GuardError) -> Response<ProxyBody> {
    record(state, host, port, error.to_string(), error.is_dns_failure());
    tracing::debug!(host, port, %error, "guard proxy refused a browser request");
    if error.is_dns_failure() {
        text(StatusCode::BAD_GATEWAY, &error.to_string())
    } else {
        guard_response(&error.to_string())
    }
}

fn record(state: &State, host: &str, port: u16, message: String, dns_failure: bool) {
    if let Ok(mut log) = state.refusals.lock() {
        // A hostile page can ask for thousands of blocked URLs; keep the log small.
        if log.len() < 256 {
            log.push(Refusal {
                host: host.to_owned(),
                port,
                message,
                dns_failure,
            });
        }
    }
}

fn guard_response(message: &str) -> Response<ProxyBody> {
    let mut response = text(StatusCode::FORBIDDEN, message);
    response
        .headers_mut()
        .insert(GUARD_HEADER, http::HeaderValue::from_static("refused"));
    response
}

fn text(status: StatusCode, message: &str) -> Response<ProxyBody> {
    let body = Full::new(Bytes::from(format!("{message}\n")))
        .map_err(|never| match never {})
        .boxed();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn empty() -> ProxyBody {
    Empty::<Bytes>::new()
        .map_err(|never| match never {})
        .boxed()
}

/// Lower case, without IPv6 brackets or a trailing dot.
fn bare_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn ask(proxy: SocketAddr, request: &str) -> String {
        let mut stream = TcpStream::connect(proxy).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut buf = vec![0u8; 4096];
        let n = stream.read(&mut buf).await.unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    #[tokio::test]
    async fn refuses_connect_and_forward_to_a_blocked_address_and_logs_it() {
        let guard = NetworkGuard::from_setting(Some("127.0.0.2")).unwrap();
        let proxy = GuardProxy::start(
            "127.0.0.1".parse().unwrap(),
            guard,
            InternalPorts::default(),
        )
        .await
        .unwrap();
        let answer = ask(proxy.addr(), "CONNECT 127.0.0.1:9:443 HTTP/1.1\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        let answer = ask(
            proxy.addr(),
            "CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        let answer = ask(
            proxy.addr(),
            "GET http://127.0.0.3:8080/x HTTP/1.1\r\nHost: 127.0.0.3:8080\r\n\r\n",
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert!(answer
            .to_ascii_lowercase()
            .contains("x-webdata-guard: refused"));
        let url = Url::parse("http://127.0.0.3:8080/other").unwrap();
        assert!(proxy.refusal_for(&url).is_some());
        proxy.clear_refusals();
        assert!(proxy.refusal_for(&url).is_none());
    }

    #[tokio::test]
    async fn refuses_internal_ports_even_when_loopback_is_allowed() {
        let internal = InternalPorts::default();
        let guard = NetworkGuard::from_setting(Some("true")).unwrap();
        let proxy = GuardProxy::start("127.0.0.1".parse().unwrap(), guard, internal.clone())
            .await
            .unwrap();
        let own = proxy.addr().port();
        let answer = ask(
            proxy.addr(),
            &format!("GET http://127.0.0.1:{own}/ HTTP/1.1\r\nHost: 127.0.0.1:{own}\r\n\r\n"),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    }

    #[tokio::test]
    async fn forwards_an_allowed_request_in_origin_form() {
        let upstream = TcpListener::bind("127.0.0.2:0").await.unwrap();
        let upstream_addr = upstream.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = upstream.accept().await.unwrap();
            let mut buf = vec![0u8; 4096];
            let n = s.read(&mut buf).await.unwrap();
            let head = String::from_utf8_lossy(&buf[..n]).into_owned();
            let body = head.lines().next().unwrap_or("").to_owned();
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            s.write_all(reply.as_bytes()).await.unwrap();
        });
        let guard = NetworkGuard::from_setting(Some("127.0.0.2")).unwrap();
        let proxy = GuardProxy::start(
            "127.0.0.1".parse().unwrap(),
            guard,
            InternalPorts::default(),
        )
        .await
        .unwrap();
        let answer = ask(
            proxy.addr(),
            &format!(
                "GET http://{upstream_addr}/a?b=1 HTTP/1.1\r\nHost: {upstream_addr}\r\nProxy-Connection: keep-alive\r\n\r\n"
            ),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("GET /a?b=1 HTTP/1.1"), "{answer}");
    }
}

#[cfg(test)]
mod internal_ports_tests {
    use super::InternalPorts;
    use std::net::SocketAddr;

    #[test]
    fn only_our_own_loopback_endpoints_are_refused() {
        let own = InternalPorts::default();
        own.add(4000);
        own.add_addr("127.0.0.1:4100".parse().expect("addr"));
        let at = |s: &str| s.parse::<SocketAddr>().expect("addr");
        assert!(own.refuses(at("127.0.0.1:4000")));
        assert!(own.refuses(at("[::1]:4000")));
        assert!(own.refuses(at("0.0.0.0:4000")));
        assert!(own.refuses(at("127.0.0.1:4100")));
        // A test site on another loopback address with the same port number.
        assert!(!own.refuses(at("127.0.0.2:4000")));
        assert!(!own.refuses(at("127.0.0.2:4100")));
        assert!(!own.refuses(at("127.0.0.1:4001")));
        own.remove(4000);
        assert!(!own.refuses(at("127.0.0.1:4000")));
    }
}
