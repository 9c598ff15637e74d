//! Test support: start the real `webdata` binary against a fresh SQLite file
//! or a fresh database on the PostgreSQL server `make test` started, and
//! serve test sites on loopback.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use webdata_core::Store;

pub const ADMIN_TOKEN: &str = "test-admin-token";

/// Generates `mod sqlite { … }` and `mod postgres { … }` tests that call
/// each named `async fn name(db: Db)` with that store.
#[macro_export]
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod sqlite { $( #[tokio::test(flavor = "multi_thread", worker_threads = 4)] async fn $name() { super::$name(super::Db::Sqlite).await } )* }
        mod postgres { $( #[tokio::test(flavor = "multi_thread", worker_threads = 4)] async fn $name() { super::$name(super::Db::Postgres).await } )* }
    };
}

/// Which store a server runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Db {
    Sqlite,
    Postgres,
}

/// A unique name for databases and folders.
pub fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}_{}_{}_{}",
        std::process::id(),
        t % 1_000_000_000_000,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh database URL of the given kind.
pub async fn fresh_database(db: Db) -> String {
    match db {
        Db::Sqlite => {
            let dir = std::env::temp_dir().join(unique("webdata-e2e"));
            std::fs::create_dir_all(&dir).expect("temp dir");
            format!("sqlite://{}/webdata.db", dir.display())
        }
        Db::Postgres => {
            let base = std::env::var("WEBDATA_TEST_POSTGRES_URL").expect(
                "WEBDATA_TEST_POSTGRES_URL is not set: run the tests with `make test` (it starts PostgreSQL on loopback)",
            );
            let name = unique("e2e");
            let admin = Store::connect(&base)
                .await
                .expect("connect to the test PostgreSQL");
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(admin.pool())
                .await
                .expect("create database");
            admin.pool().close().await;
            let i = base.rfind('/').expect("database URL has a path");
            format!("{}/{name}", &base[..i])
        }
    }
}

/// The built `webdata` binary next to this test executable.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: build it first (`cargo build --bins`)",
        path.display()
    );
    path
}

/// Collects a child's stderr lines in the background and sends the rest of
/// the first line that starts with `ready` (the readiness signal).
pub fn follow_stderr(
    mut child: Child,
    ready: &'static str,
) -> (
    Child,
    Arc<Mutex<Vec<String>>>,
    std::sync::mpsc::Receiver<String>,
) {
    let stderr = child.stderr.take().expect("stderr");
    let log = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let log2 = log.clone();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix(ready) {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(rest.trim().to_string());
                }
            }
            log2.lock().unwrap_or_else(|p| p.into_inner()).push(line);
        }
    });
    (child, log, rx)
}

/// A running `webdata serve`.
pub struct Server {
    child: Child,
    pub base: String,
    pub database_url: String,
    pub key: String,
    pub http: reqwest::Client,
    pub log: Arc<Mutex<Vec<String>>>,
}

/// Options for starting a server.
pub struct ServerOptions {
    pub db: Db,
    pub database_url: Option<String>,
    pub credits: i64,
    pub env: Vec<(String, String)>,
}

impl ServerOptions {
    pub fn new(db: Db) -> Self {
        ServerOptions {
            db,
            database_url: None,
            credits: 1000,
            env: Vec::new(),
        }
    }
    pub fn credits(mut self, c: i64) -> Self {
        self.credits = c;
        self
    }
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }
}

impl Server {
    /// Starts a server with a bootstrap organization holding `credits`.
    pub async fn start(db: Db) -> Server {
        Self::start_with(ServerOptions::new(db)).await
    }

    pub async fn start_with(opts: ServerOptions) -> Server {
        let database_url = match opts.database_url {
            Some(u) => u,
            None => fresh_database(opts.db).await,
        };
        let key = webdata_core::store::generate_key();
        let mut cmd = Command::new(binary("webdata"));
        cmd.arg("serve")
            .env("WEBDATA_DATABASE_URL", &database_url)
            .env("WEBDATA_LISTEN", "127.0.0.1:0")
            .env("WEBDATA_BOOTSTRAP_KEY", &key)
            .env("WEBDATA_BOOTSTRAP_CREDITS", opts.credits.to_string())
            .env("WEBDATA_ADMIN_TOKEN", ADMIN_TOKEN)
            .env("WEBDATA_ALLOW_PRIVATE_NETWORKS", "127.0.0.2")
            .env("RUST_LOG", "info,sqlx=warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("spawn webdata");
        let (mut child, log, rx) = follow_stderr(child, "webdata listening on ");
        let base = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(b) => b,
            Err(_) => {
                let _ = child.kill();
                let lines = log.lock().unwrap_or_else(|p| p.into_inner()).join("\n");
                panic!("webdata did not start:\n{lines}");
            }
        };
        Server {
            child,
            base,
            database_url,
            key,
            http: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("client"),
            log,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// A direct handle on the server's database (for ageing records).
    pub async fn store(&self) -> Store {
        Store::connect(&self.database_url).await.expect("store")
    }

    /// POST JSON with the bootstrap key.
    pub async fn post(&self, path: &str, body: serde_json::Value) -> Resp {
        self.post_as(&self.key.clone(), path, body, &[]).await
    }

    pub async fn post_as(
        &self,
        key: &str,
        path: &str,
        body: serde_json::Value,
        headers: &[(&str, &str)],
    ) -> Resp {
        let mut rb = self.http.post(self.url(path)).bearer_auth(key).json(&body);
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        Resp::from(rb.send().await.expect("send")).await
    }

    pub async fn get_as(&self, key: &str, path: &str) -> Resp {
        Resp::from(
            self.http
                .get(self.url(path))
                .bearer_auth(key)
                .send()
                .await
                .expect("send"),
        )
        .await
    }

    /// Calls the admin API.
    pub async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Resp {
        let mut rb = self
            .http
            .request(method, self.url(path))
            .bearer_auth(ADMIN_TOKEN);
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        Resp::from(rb.send().await.expect("send")).await
    }

    /// The bootstrap organization's id.
    pub async fn org_id(&self) -> String {
        let r = self
            .admin(reqwest::Method::GET, "/admin/v1/organizations", None)
            .await;
        r.json["data"][0]["id"]
            .as_str()
            .expect("org id")
            .to_string()
    }

    pub async fn credits(&self) -> i64 {
        let r = self
            .get_as(&self.key.clone(), "/v1/team/credit-usage")
            .await;
        r.json["data"]["remainingCredits"]
            .as_i64()
            .expect("credits")
    }

    /// Sets the bootstrap organization's fields through the admin API.
    pub async fn set_org(&self, patch: serde_json::Value) {
        let org = self.org_id().await;
        let r = self
            .admin(
                reqwest::Method::PATCH,
                &format!("/admin/v1/organizations/{org}"),
                Some(patch),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }

    /// Stops the server hard (SIGKILL).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn logs(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    /// The first log line that contains `needle`, waiting up to `within` for
    /// it: a thread reads the server's stderr, and under load it can be
    /// behind the HTTP answer that followed the line.
    pub async fn log_line(&self, needle: &str, within: Duration) -> Option<String> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let found = self
                .log
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .find(|l| l.contains(needle))
                .cloned();
            if found.is_some() || tokio::time::Instant::now() >= deadline {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A response read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
    pub json: serde_json::Value,
}

impl Resp {
    pub async fn from(r: reqwest::Response) -> Resp {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.unwrap_or_default();
        let json = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
        Resp {
            status,
            headers,
            text,
            json,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts the spec's Error envelope with this status and code.
    pub fn assert_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "status; body: {}", self.text);
        assert_eq!(self.json["success"], false, "{}", self.text);
        assert_eq!(self.json["error"]["code"], code, "{}", self.text);
        assert!(
            self.json["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{}",
            self.text
        );
        assert_eq!(self.json["credits_used"], 0, "{}", self.text);
        self.assert_request_id();
    }

    /// Body request_id matches the X-Request-Id header.
    pub fn assert_request_id(&self) {
        let h = self.header("x-request-id").expect("X-Request-Id header");
        assert!(h.starts_with("req_"), "{h}");
        assert_eq!(self.json["request_id"].as_str(), Some(h), "{}", self.text);
    }

    pub fn message(&self) -> String {
        self.json["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// A test site on 127.0.0.2 (the only loopback address the test servers allow).
pub struct Site {
    pub base: String,
    pub hits: Arc<std::sync::atomic::AtomicUsize>,
    handle: tokio::task::JoinHandle<()>,
}

impl Site {
    /// Serves `router` on 127.0.0.2 at a free port.
    pub async fn serve(router: axum::Router) -> Site {
        let listener = tokio::net::TcpListener::bind("127.0.0.2:0")
            .await
            .expect("bind 127.0.0.2");
        let addr = listener.local_addr().expect("addr");
        let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let h2 = hits.clone();
        let router = router.layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let h = h2.clone();
                async move {
                    h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    next.run(req).await
                }
            },
        ));
        let handle = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Site {
            base: format!("http://{addr}"),
            hits,
            handle,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// A small article page.
pub fn article_page(title: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><title>{title}</title><meta name=\"description\" content=\"About {title}\"></head>\
         <body><nav><a href=\"/\">Home</a> <a href=\"/about\">About</a></nav><main><article><h1>{title}</h1>\
         <p>This is a complete article about {title}. It has enough words to count as real content for a reader, \
         with several sentences that explain the subject in plain language.</p>\
         <p>A second paragraph adds detail, so the page is clearly not thin, and links to <a href=\"/next\">the next page</a>.</p>\
         </article></main><footer>Copyright footer text</footer></body></html>"
    )
}

/// Both stores, for tests that must hold on each.
pub const BOTH: [Db; 2] = [Db::Sqlite, Db::Postgres];

/// Waits until at least 10 seconds remain in the current wall-clock minute,
/// so a handful of requests land in one rate window.
pub async fn away_from_minute_boundary() {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let into = secs % 60.0;
    if into > 50.0 {
        tokio::time::sleep(Duration::from_secs_f64(60.0 - into + 0.2)).await;
    }
}

/// A running `webdata-worker` process.
pub struct Worker {
    pub child: Child,
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Worker {
    /// Starts a worker on `database_url`; waits until it says it is ready.
    pub fn start(database_url: &str, env: &[(&str, &str)]) -> Worker {
        let mut cmd = Command::new(binary("webdata-worker"));
        cmd.env("WEBDATA_DATABASE_URL", database_url)
            .env("WEBDATA_ALLOW_PRIVATE_NETWORKS", "127.0.0.2")
            .env("RUST_LOG", "info,sqlx=warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("spawn webdata-worker");
        let (mut child, log, rx) = follow_stderr(child, "webdata-worker ready");
        if rx.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = child.kill();
            panic!(
                "webdata-worker did not start: {}",
                log.lock().unwrap_or_else(|p| p.into_inner()).join("\n")
            );
        }
        Worker { child, log }
    }

    /// SIGTERM, then wait up to `secs` for a clean exit; returns the exit status code.
    pub fn terminate(&mut self, secs: u64) -> Option<i32> {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// POSTs `size` bytes of body on a raw socket, writing in one task and
/// reading the answer in another, so an early answer (413) is read even
/// though the server stops reading the upload.
pub async fn raw_post(base: &str, path: &str, key: &str, size: usize) -> Resp {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://").to_string();
    let stream = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let (mut rd, mut wr) = stream.into_split();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
    );
    let writer = tokio::spawn(async move {
        if wr.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let chunk = vec![b' '; 64 * 1024];
        let mut sent = 0;
        while sent < size {
            let n = chunk.len().min(size - sent);
            if wr.write_all(&chunk[..n]).await.is_err() {
                return;
            }
            sent += n;
        }
    });
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), rd.read_to_end(&mut buf)).await;
    writer.abort();
    let text = String::from_utf8_lossy(&buf).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text.as_str(), ""));
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let mut headers = reqwest::header::HeaderMap::new();
    for line in head.lines().skip(1) {
        if let Some((k, v)) = line.split_once(':') {
            if let (Ok(k), Ok(v)) = (
                reqwest::header::HeaderName::from_bytes(k.trim().as_bytes()),
                reqwest::header::HeaderValue::from_str(v.trim()),
            ) {
                headers.insert(k, v);
            }
        }
    }
    // The body may be chunked; take the JSON object inside it.
    let json_text = match (body.find('{'), body.rfind('}')) {
        (Some(a), Some(b)) if b >= a => body[a..=b].to_string(),
        _ => body.to_string(),
    };
    let json = serde_json::from_str(&json_text).unwrap_or(serde_json::Value::Null);
    Resp {
        status,
        headers,
        text: json_text,
        json,
    }
}

/// Runs the pytest suite in `dir` (relative to the workspace) with the
/// workspace's `.venv` against the `webdata` binary this build made, plus
/// `env`; fails the test unless pytest passed and ran something.
pub fn run_pytest(dir: &str, env: &[(&str, &str)]) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `make test` (it installs the Python test tools)",
        python.display()
    );
    let mut cmd = Command::new(&python);
    cmd.current_dir(&root)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", dir])
        .env("WEBDATA_BIN", binary("webdata"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run pytest");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(out.status.success(), "{dir} failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains(" passed") && !stdout.contains(" failed"),
        "pytest ran no test in {dir}: {stdout}"
    );
}
