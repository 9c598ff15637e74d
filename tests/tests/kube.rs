//! Issue 8, end to end without a cluster: a Kubernetes API emulator on
//! loopback (kmock plus our layer, `tests/kube/emulator.py`), real Postgres,
//! the real `webdata` (cluster mode), `webdata-operator` and `webdata-worker`
//! binaries, and the test playing kubelet: it starts one worker process per
//! replica of the pool's worker Deployment, with the Deployment's env.
//!
//! Long by design: a test suite (one area of the spec per file).
//! Each test stands alone; splitting the file would only add test
//! binaries to link.

#[macro_use]
mod support;

use axum::extract::Path;
use axum::response::Html;
use axum::routing::get;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::{binary, fresh_database, Db, Server, ServerOptions, Site, Worker};

/// The Python of `.venv` (made by `make test`), or `WEBDATA_TEST_PYTHON`.
fn python() -> String {
    if let Ok(p) = std::env::var("WEBDATA_TEST_PYTHON") {
        return p;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let venv = root.join(".venv/bin/python");
    assert!(
        venv.exists(),
        "{} is missing: run `make test` (it installs the Python test tools into .venv)",
        venv.display()
    );
    venv.display().to_string()
}

fn repo(path: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
}

/// The emulator process and a kubeconfig pointing at it.
struct Cluster {
    child: Child,
    base: String,
    kubeconfig: std::path::PathBuf,
    http: reqwest::Client,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Cluster {
    fn start() -> Cluster {
        let mut child = Command::new(python())
            .arg(repo("tests/kube/emulator.py"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the emulator");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("listening ") {
                    let _ = tx.send(url.trim().trim_end_matches('/').to_string());
                }
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the emulator did not start");
        let dir = std::env::temp_dir().join(support::unique("webdata-kube"));
        std::fs::create_dir_all(&dir).expect("dir");
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: emu\n  cluster:\n    server: {base}\n\
                 users:\n- name: emu\n  user:\n    token: test\ncontexts:\n- name: emu\n  context:\n    cluster: emu\n    user: emu\n    namespace: default\n\
                 current-context: emu\n"
            ),
        )
        .expect("kubeconfig");
        Cluster {
            child,
            base,
            kubeconfig,
            http: reqwest::Client::builder()
                .no_proxy()
                .build()
                .expect("client"),
        }
    }

    async fn get(&self, path: &str) -> Option<Value> {
        let r = self
            .http
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("get");
        if r.status() == 404 {
            return None;
        }
        Some(r.json().await.expect("json"))
    }

    async fn create(&self, path: &str, body: Value) -> Value {
        let r = self
            .http
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .expect("post");
        assert!(r.status().is_success(), "create {path}: {}", r.status());
        r.json().await.expect("json")
    }

    fn kubectl(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .output()
            .expect("kubectl (installed by `make test`)");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    }

    /// Waits until `path` exists and `check` holds for it.
    async fn wait_for(&self, what: &str, path: &str, check: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = self.get(path).await;
            if let Some(v) = &got {
                if check(v) {
                    return v.clone();
                }
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {got:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A running `webdata-operator`.
struct Operator {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
    pub metrics: String,
}

impl Operator {
    fn start(cluster: &Cluster, database_url: &str) -> Operator {
        let child = Command::new(binary("webdata-operator"))
            .arg("run")
            .env("KUBECONFIG", &cluster.kubeconfig)
            .env("WEBDATA_DATABASE_URL", database_url)
            .env("WEBDATA_KUBE_NAMESPACE", "default")
            .env("WEBDATA_DEFAULT_ORGANIZATION", "default")
            .env("WEBDATA_OPERATOR_SYNC_MS", "200")
            .env("WEBDATA_OPERATOR_IDLE_MS", "500")
            .env("WEBDATA_OPERATOR_LISTEN", "127.0.0.1:0")
            .env("WEBDATA_OPERATOR_LEASE_SECONDS", "3")
            .env("WEBDATA_WORKER_ALLOW_PRIVATE_NETWORKS", "127.0.0.2")
            .env("WEBDATA_WORKER_IMAGE", "webdata:e2e")
            .env(
                "RUST_LOG",
                std::env::var("WEBDATA_TEST_OPERATOR_LOG")
                    .unwrap_or_else(|_| "info,kube=warn,sqlx=warn".into()),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn webdata-operator");
        let (mut child, log, rx) = support::follow_stderr(child, "webdata-operator listening on ");
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(a) => a.split_whitespace().next().unwrap_or("").to_string(),
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "webdata-operator did not start: {}",
                    log.lock().unwrap().join("\n")
                );
            }
        };
        Operator {
            child,
            log,
            metrics: format!("http://{addr}/metrics"),
        }
    }

    fn logs(&self) -> String {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .join("\n")
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("--- webdata-operator log ---\n{}", self.logs());
        }
    }
}

/// Kubelet, played by the test: one `webdata-worker` per replica of the
/// pool's worker Deployment, with the Deployment's env.
#[derive(Default)]
struct Kubelet {
    workers: Vec<Worker>,
}

impl Kubelet {
    async fn sync(&mut self, cluster: &Cluster, database_url: &str) -> usize {
        let Some(dep) = cluster
            .get("/apis/apps/v1/namespaces/default/deployments/default-workers")
            .await
        else {
            return self.workers.len();
        };
        let want = dep["spec"]["replicas"].as_i64().unwrap_or(0) as usize;
        let env: Vec<(String, String)> = dep["spec"]["template"]["spec"]["containers"][0]["env"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|e| {
                Some((
                    e["name"].as_str()?.to_string(),
                    e["value"].as_str()?.to_string(),
                ))
            })
            .collect();
        assert!(
            env.iter()
                .any(|(k, v)| k == "WEBDATA_DATABASE_URL" && v == database_url),
            "{env:?}"
        );
        while self.workers.len() < want {
            let refs: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            self.workers.push(Worker::start(database_url, &refs));
        }
        while self.workers.len() > want {
            let mut w = self.workers.pop().expect("worker");
            assert_eq!(
                w.terminate(30),
                Some(0),
                "a worker stopped on scale-down exits 0"
            );
        }
        want
    }
}

fn page(title: &str, links: &[String]) -> String {
    let links: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><main><article><h1>{title}</h1>\
         <p>{title} is a page of the test site with enough words in it to count as a real page.</p><ul>{links}</ul>\
         </article></main></body></html>"
    )
}

/// Six pages in a chain; each takes `delay_ms`.
async fn site(delay_ms: u64) -> Site {
    Site::serve(
        axum::Router::new()
            .route("/robots.txt", get(|| async { "User-agent: *\nAllow: /\n" }))
            .route(
                "/p/{n}",
                get(move |Path(n): Path<u32>| async move {
                    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                    let next: Vec<String> = if n < 5 {
                        vec![format!("/p/{}", n + 1)]
                    } else {
                        vec![]
                    };
                    Html(page(&format!("Page {n}"), &next))
                }),
            ),
    )
    .await
}

/// `webdata serve` in cluster mode on `database_url`, talking to `cluster`.
async fn api_in_cluster_mode(cluster: &Cluster, database_url: &str) -> Server {
    let mut opts = ServerOptions::new(Db::Postgres);
    opts.database_url = Some(database_url.to_string());
    Server::start_with(
        opts.env("WEBDATA_KUBE", "on")
            .env("KUBECONFIG", &cluster.kubeconfig.display().to_string())
            .env("WEBDATA_KUBE_NAMESPACE", "default"),
    )
    .await
}

async fn make_pool(cluster: &Cluster) {
    cluster
        .create(
            "/apis/webdata.io/v1/namespaces/default/workerpools",
            json!({
                "apiVersion": "webdata.io/v1", "kind": "WorkerPool",
                "metadata": { "name": "default", "namespace": "default" },
                "spec": { "workers": { "min": 0, "max": 3, "concurrency": 2 }, "browsers": { "max": 0 },
                          "scaleDownDelaySeconds": 1 }
            }),
        )
        .await;
}

const JOBS: &str = "/apis/webdata.io/v1/namespaces/default/crawljobs";

/// Waits for the crawl to finish while playing kubelet; returns GET /v1/crawl.
async fn run_to_end(s: &Server, cluster: &Cluster, kubelet: &mut Kubelet, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        kubelet.sync(cluster, &s.database_url).await;
        let r = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
        if r.json["status"] == "completed" {
            return r.json;
        }
        assert!(
            Instant::now() < deadline,
            "crawl did not finish: {}",
            r.text
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

fn same_counters(job: &Value, crawl: &Value) -> bool {
    let st = &job["status"];
    st["total"] == crawl["total"]
        && st["completed"] == crawl["completed"]
        && st["failed"] == crawl["failed"]
        && st["creditsUsed"] == crawl["credits_used"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn api_crawls_run_as_crawljobs_through_the_operator() {
    let cluster = Cluster::start();
    let database_url = fresh_database(Db::Postgres).await;
    let s = api_in_cluster_mode(&cluster, &database_url).await;
    let mut operator = Operator::start(&cluster, &database_url);
    let site = site(150).await;

    // Before the pool exists a crawl waits (Pending), and nothing is scaled.
    let r = s
        .post(
            "/v1/crawl",
            json!({ "url": site.url("/p/0"), "limit": 10, "sitemap": "skip" }),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().expect("id").to_string();
    let name = id.replace('_', "-");
    let job = cluster
        .wait_for(
            "the CrawlJob to be Pending",
            &format!("{JOBS}/{name}"),
            |j| j["status"]["phase"] == "Pending",
        )
        .await;
    assert_eq!(job["metadata"]["labels"]["webdata.io/launched-by"], "api");
    assert_eq!(
        job["metadata"]["annotations"]["webdata.io/crawl-id"],
        id.as_str()
    );
    assert_eq!(job["spec"]["url"], site.url("/p/0"));
    assert_eq!(job["spec"]["limit"], 10);
    assert_eq!(job["status"]["conditions"][0]["reason"], "PoolMissing");
    assert!(job["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x == "webdata.io/cancel-crawl")));

    make_pool(&cluster).await;
    // The operator admits the crawl and scales workers from the backlog.
    cluster
        .wait_for(
            "the CrawlJob to be admitted",
            &format!("{JOBS}/{name}"),
            |j| j["status"]["phase"] == "Queued" || j["status"]["phase"] == "Running",
        )
        .await;
    let dep = cluster
        .wait_for(
            "the worker Deployment",
            "/apis/apps/v1/namespaces/default/deployments/default-workers",
            |d| d["spec"]["replicas"].as_i64().unwrap_or(0) >= 1,
        )
        .await;
    assert_eq!(dep["metadata"]["ownerReferences"][0]["kind"], "WorkerPool");
    assert_eq!(dep["metadata"]["ownerReferences"][0]["name"], "default");

    // Kubelet runs workers; halfway through, the operator is killed and
    // started again: nothing changes for the crawl.
    let mut kubelet = Kubelet::default();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        kubelet.sync(&cluster, &database_url).await;
        let r = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
        if r.json["completed"].as_i64().unwrap_or(0) >= 2 {
            break;
        }
        assert!(Instant::now() < deadline, "no progress: {}", r.text);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    operator.kill();
    let mut operator = Operator::start(&cluster, &database_url);
    let crawl = run_to_end(&s, &cluster, &mut kubelet, &id).await;
    assert_eq!(crawl["completed"], 6, "{crawl}");
    assert_eq!(crawl["credits_used"], 6);
    let job = cluster
        .wait_for(
            "the CrawlJob to mirror the crawl",
            &format!("{JOBS}/{name}"),
            |j| j["status"]["phase"] == "Completed" && same_counters(j, &crawl),
        )
        .await;
    assert_eq!(job["status"]["crawlId"], id.as_str());
    assert!(job["status"]["finishedAt"].is_string());
    // One crawl in the store: the restarted operator registered nothing new.
    let store = s.store().await;
    assert_eq!(store.crawls_in("completed").await.expect("crawls").len(), 1);

    // Events on phase changes.
    let events = cluster
        .get("/apis/events.k8s.io/v1/namespaces/default/events")
        .await
        .expect("events");
    let reasons: Vec<String> = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["regarding"]["name"] == name.as_str())
        .map(|e| e["reason"].as_str().unwrap_or("").to_string())
        .collect();
    for want in ["Pending", "Completed"] {
        assert!(
            reasons.iter().any(|r| r == want),
            "{want} not in {reasons:?}"
        );
    }

    // Idle: the pool scales back to min (0) after its delay; workers exit cleanly.
    cluster
        .wait_for(
            "the workers to scale down",
            "/apis/apps/v1/namespaces/default/deployments/default-workers",
            |d| d["spec"]["replicas"] == 0,
        )
        .await;
    assert_eq!(kubelet.sync(&cluster, &database_url).await, 0);
    let pool = cluster
        .get("/apis/webdata.io/v1/namespaces/default/workerpools/default")
        .await
        .expect("pool");
    assert_eq!(pool["status"]["backlog"], 0, "{pool}");
    assert!(pool["status"]["lastScaleTime"].is_string());
    let metrics = reqwest::get(&operator.metrics)
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(metrics.contains("webdata_operator_leader 1"), "{metrics}");
    assert!(
        metrics.contains("webdata_operator_backlog{pool=\"default\"} 0"),
        "{metrics}"
    );

    // DELETE /v1/crawl sets spec.cancel on a running crawl's CrawlJob.
    let r = s
        .post(
            "/v1/crawl",
            json!({ "url": site.url("/p/0"), "limit": 10, "sitemap": "skip" }),
        )
        .await;
    let id2 = r.json["id"].as_str().expect("id").to_string();
    let name2 = id2.replace('_', "-");
    let r = reqwest::Client::new()
        .delete(s.url(&format!("/v1/crawl/{id2}")))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("delete");
    assert_eq!(r.status(), 200);
    let job2 = cluster
        .wait_for("the cancelled CrawlJob", &format!("{JOBS}/{name2}"), |j| {
            j["status"]["phase"] == "Cancelled"
        })
        .await;
    assert_eq!(job2["spec"]["cancel"], true);

    // kubectl sees the jobs, and `kubectl delete` runs the finalizer: the
    // object goes away, the finished crawl and its pages stay.
    let (ok, out) = cluster.kubectl(&["get", "crawljobs", "-o", "name"]);
    assert!(ok && out.contains(&name), "{out}");
    let (ok, out) = cluster.kubectl(&["delete", "cj", &name, "--timeout=60s"]);
    assert!(ok, "{out}\n{}", operator.logs());
    assert!(cluster.get(&format!("{JOBS}/{name}")).await.is_none());
    let r = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
    assert_eq!(r.json["status"], "completed");
    assert_eq!(r.json["data"].as_array().map(Vec::len), Some(6));
    operator.kill();
}

/// A batch scrape in cluster mode is a CrawlJob like a crawl: the operator
/// admits it, its pool's workers run the given URLs, nothing else.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn api_batch_scrapes_run_as_crawljobs_through_the_operator() {
    let cluster = Cluster::start();
    let database_url = fresh_database(Db::Postgres).await;
    let s = api_in_cluster_mode(&cluster, &database_url).await;
    let _operator = Operator::start(&cluster, &database_url);
    let site = site(0).await;
    make_pool(&cluster).await;
    let urls: Vec<String> = (1..=3).map(|n| site.url(&format!("/p/{n}"))).collect();
    let r = s.post("/v1/batch/scrape", json!({ "urls": urls })).await;
    assert_eq!(r.status, 202, "{}", r.text);
    let id = r.json["id"].as_str().expect("id").to_string();
    let name = id.replace('_', "-");
    let job = cluster
        .wait_for("the batch's CrawlJob", &format!("{JOBS}/{name}"), |j| {
            j["status"]["phase"] == "Queued" || j["status"]["phase"] == "Running"
        })
        .await;
    assert_eq!(job["spec"]["url"], urls[0].as_str());
    assert_eq!(job["spec"]["limit"], 3);
    assert_eq!(
        job["metadata"]["annotations"]["webdata.io/crawl-id"],
        id.as_str()
    );
    let mut kubelet = Kubelet::default();
    let deadline = Instant::now() + Duration::from_secs(90);
    let done = loop {
        kubelet.sync(&cluster, &database_url).await;
        let r = s.get_as(&s.key, &format!("/v1/batch/scrape/{id}")).await;
        if r.json["status"] == "completed" {
            break r.json;
        }
        assert!(
            Instant::now() < deadline,
            "batch did not finish: {}",
            r.text
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    };
    assert_eq!(done["completed"], 3, "{done}");
    let mut got: Vec<String> = done["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|d| d["url"].as_str().map(String::from))
        .collect();
    got.sort();
    assert_eq!(got, urls, "the given URLs, no link followed");
    assert_eq!(done["credits_used"], 3);
    cluster
        .wait_for("the CrawlJob to complete", &format!("{JOBS}/{name}"), |j| {
            j["status"]["phase"] == "Completed"
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crawljob_applied_with_kubectl_runs_the_same_way() {
    let cluster = Cluster::start();
    let database_url = fresh_database(Db::Postgres).await;
    let s = api_in_cluster_mode(&cluster, &database_url).await;
    let operator = Operator::start(&cluster, &database_url);
    // A second replica waits for the Lease: only one acts.
    let standby = Operator::start(&cluster, &database_url);
    let leader_of = |m: &str| m.contains("webdata_operator_leader 1");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let a = reqwest::get(&operator.metrics)
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        let b = reqwest::get(&standby.metrics)
            .await
            .expect("metrics")
            .text()
            .await
            .expect("text");
        if leader_of(&a) || leader_of(&b) {
            assert!(!(leader_of(&a) && leader_of(&b)), "two leaders:\n{a}\n{b}");
            break;
        }
        assert!(Instant::now() < deadline, "no leader");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    make_pool(&cluster).await;
    let site = site(0).await;
    let dir = std::env::temp_dir().join(support::unique("webdata-cj"));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("crawljob.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: webdata.io/v1\nkind: CrawlJob\nmetadata:\n  name: docs\nspec:\n  url: {}\n  limit: 4\n  sitemap: skip\n  organization: default\n  ttlSecondsAfterFinished: 2\n",
            site.url("/p/0")
        ),
    )
    .expect("yaml");
    let (ok, out) = cluster.kubectl(&[
        "apply",
        "--validate=false",
        "-f",
        &file.display().to_string(),
    ]);
    assert!(ok, "{out}");
    let job = cluster
        .wait_for(
            "the kubectl CrawlJob to get a crawl",
            &format!("{JOBS}/docs"),
            |j| j["status"]["crawlId"].is_string(),
        )
        .await;
    let id = job["status"]["crawlId"].as_str().unwrap().to_string();
    let mut kubelet = Kubelet::default();
    let crawl = run_to_end(&s, &cluster, &mut kubelet, &id).await;
    assert_eq!(crawl["completed"], 4, "{crawl}");
    // The bootstrap organization (named `default`) was charged.
    assert_eq!(crawl["credits_used"], 4);
    let job = cluster
        .wait_for(
            "the kubectl CrawlJob to complete",
            &format!("{JOBS}/docs"),
            |j| j["status"]["phase"] == "Completed" && same_counters(j, &crawl),
        )
        .await;
    assert_eq!(job["status"]["crawlId"], id.as_str());
    // ttlSecondsAfterFinished: the finished job is deleted (through its finalizer).
    let deadline = Instant::now() + Duration::from_secs(30);
    while cluster.get(&format!("{JOBS}/docs")).await.is_some() {
        assert!(
            Instant::now() < deadline,
            "the CrawlJob was not deleted after its TTL"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let r = s.get_as(&s.key, &format!("/v1/crawl/{id}")).await;
    assert_eq!(r.json["status"], "completed");

    // Still exactly one leader.
    let a = reqwest::get(&operator.metrics)
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let b = reqwest::get(&standby.metrics)
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        leader_of(&a) != leader_of(&b),
        "exactly one leader:\n{a}\n{b}"
    );

    // A CrawlJob for an organization that does not exist fails clearly.
    std::fs::write(
        &file,
        format!(
            "apiVersion: webdata.io/v1\nkind: CrawlJob\nmetadata:\n  name: nobody\nspec:\n  url: {}\n  organization: no-such-org\n",
            site.url("/p/0")
        ),
    )
    .expect("yaml");
    let (ok, out) = cluster.kubectl(&[
        "apply",
        "--validate=false",
        "-f",
        &file.display().to_string(),
    ]);
    assert!(ok, "{out}");
    let job = cluster
        .wait_for("the failed CrawlJob", &format!("{JOBS}/nobody"), |j| {
            j["status"]["phase"] == "Failed"
        })
        .await;
    assert_eq!(job["status"]["error"]["code"], "not_found");
    assert!(job["status"]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no-such-org"));
}

const SCHEDULES: &str = "/apis/webdata.io/v1/namespaces/default/crawlschedules";

impl Cluster {
    /// A JSON merge patch (of the status subresource when `path` ends so).
    async fn merge(&self, path: &str, body: Value) -> Value {
        let r = self
            .http
            .patch(format!("{}{path}", self.base))
            .header("content-type", "application/merge-patch+json")
            .json(&body)
            .send()
            .await
            .expect("patch");
        assert!(r.status().is_success(), "patch {path}: {}", r.status());
        r.json().await.expect("json")
    }
}

/// A CrawlSchedule applied with kubectl: at its slot the operator creates a
/// CrawlJob (change tracking on, owned by the schedule, named after the
/// slot), the run is crawled like any CrawlJob, and the schedule's status
/// shows the last run, the next one and the result. The clock is moved by
/// rewinding `status.lastScheduleTime`; a slot never runs twice, and a
/// suspended schedule runs nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crawlschedule_runs_its_slots_as_crawljobs() {
    let cluster = Cluster::start();
    let database_url = fresh_database(Db::Postgres).await;
    let s = api_in_cluster_mode(&cluster, &database_url).await;
    let _operator = Operator::start(&cluster, &database_url);
    make_pool(&cluster).await;
    let site = site(0).await;
    let dir = std::env::temp_dir().join(support::unique("webdata-cs"));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("crawlschedule.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: webdata.io/v1\nkind: CrawlSchedule\nmetadata:\n  name: docs\nspec:\n  schedule: \"0 * * * *\"\n  jobTemplate:\n    url: {}\n    limit: 3\n    sitemap: skip\n    organization: default\n",
            site.url("/p/0")
        ),
    )
    .expect("yaml");
    let (ok, out) = cluster.kubectl(&[
        "apply",
        "--validate=false",
        "-f",
        &file.display().to_string(),
    ]);
    assert!(ok, "{out}");
    // Not due yet: the next slot is the next full hour; no CrawlJob.
    let sched = cluster
        .wait_for(
            "the schedule's next run",
            &format!("{SCHEDULES}/docs"),
            |c| c["status"]["nextScheduleTime"].is_string(),
        )
        .await;
    let next: jiff::Timestamp = sched["status"]["nextScheduleTime"]
        .as_str()
        .unwrap()
        .parse()
        .expect("time");
    assert_eq!(next.as_second() % 3600, 0, "{sched}");
    assert_eq!(sched["status"]["conditions"][0]["reason"], "Scheduled");
    let jobs_of = |list: &Value| -> Vec<Value> {
        list["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|j| j["metadata"]["labels"]["webdata.io/schedule"] == "docs")
            .collect()
    };
    assert!(jobs_of(&cluster.get(JOBS).await.unwrap_or_default()).is_empty());

    // Two hours later (as far as the schedule knows): this hour's slot runs.
    let two_hours_ago = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(2);
    cluster
        .merge(
            &format!("{SCHEDULES}/docs/status"),
            json!({"status": {"lastScheduleTime": two_hours_ago.to_string()}}),
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let job = loop {
        if let Some(j) = jobs_of(&cluster.get(JOBS).await.unwrap_or_default()).pop() {
            if j["status"]["crawlId"].is_string() {
                break j;
            }
        }
        assert!(Instant::now() < deadline, "no CrawlJob for the due slot");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // The slot is this hour's (a run straddling the hour may see the next).
    let name = job["metadata"]["name"].as_str().unwrap_or("").to_string();
    let this_hour = [0, 3600]
        .map(|d| (two_hours_ago.as_second() + 7200 + d) / 3600 * 3600)
        .into_iter()
        .find(|h| name == format!("docs-{}", h / 60))
        .unwrap_or_else(|| panic!("{job}"));
    assert_eq!(
        job["metadata"]["ownerReferences"][0]["kind"],
        "CrawlSchedule"
    );
    let formats = &job["spec"]["scrapeOptions"]["formats"];
    assert!(
        formats
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == "changeTracking")),
        "{job}"
    );
    assert_eq!(
        job["spec"]["scrapeOptions"]["changeTrackingOptions"]["tag"],
        "default/docs"
    );
    let id = job["status"]["crawlId"].as_str().unwrap().to_string();
    let mut kubelet = Kubelet::default();
    let crawl = run_to_end(&s, &cluster, &mut kubelet, &id).await;
    assert_eq!(crawl["completed"], 3, "{crawl}");
    let docs = crawl["data"].as_array().cloned().unwrap_or_default();
    assert!(
        docs.iter()
            .all(|d| d["changeTracking"]["changeStatus"] == "new"),
        "{crawl}"
    );
    let sched = cluster
        .wait_for(
            "the run's result in the schedule",
            &format!("{SCHEDULES}/docs"),
            |c| {
                c["status"]["lastResult"]
                    .as_str()
                    .is_some_and(|r| r.starts_with("Completed: 3 pages, 3 new"))
            },
        )
        .await;
    assert_eq!(
        sched["status"]["lastScheduleTime"]
            .as_str()
            .map(|t| t.parse::<jiff::Timestamp>().map(|t| t.as_second()).ok()),
        Some(Some(this_hour)),
        "{sched}"
    );
    assert!(
        sched["status"]["active"]
            .as_array()
            .is_none_or(|a| a.is_empty()),
        "{sched}"
    );

    // The same slot never runs twice, even with the clock rewound again.
    cluster
        .merge(
            &format!("{SCHEDULES}/docs/status"),
            json!({"status": {"lastScheduleTime": two_hours_ago.to_string()}}),
        )
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        jobs_of(&cluster.get(JOBS).await.unwrap_or_default()).len(),
        1
    );

    // Suspended: no next run, and a due slot starts nothing.
    cluster
        .merge(
            &format!("{SCHEDULES}/docs"),
            json!({"spec": {"suspend": true}}),
        )
        .await;
    let sched = cluster
        .wait_for(
            "the suspended schedule",
            &format!("{SCHEDULES}/docs"),
            |c| c["status"]["conditions"][0]["reason"] == "Suspended",
        )
        .await;
    assert!(sched["status"]["nextScheduleTime"].is_null(), "{sched}");
    let three_hours_ago = jiff::Timestamp::now() - jiff::SignedDuration::from_hours(3);
    cluster
        .merge(
            &format!("{SCHEDULES}/docs/status"),
            json!({"status": {"lastScheduleTime": three_hours_ago.to_string()}}),
        )
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        jobs_of(&cluster.get(JOBS).await.unwrap_or_default()).len(),
        1
    );
}

/// When the CrawlJob cannot be created (no API server answers), the crawl
/// fails cleanly with a clear error and costs nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crawl_that_cannot_be_launched_fails_cleanly_and_costs_nothing() {
    let dir = std::env::temp_dir().join(support::unique("webdata-kube-down"));
    std::fs::create_dir_all(&dir).expect("dir");
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: down\n  cluster:\n    server: http://127.0.0.1:9\n\
         users:\n- name: down\n  user:\n    token: t\ncontexts:\n- name: down\n  context:\n    cluster: down\n    user: down\n\
         current-context: down\n",
    )
    .expect("kubeconfig");
    let s = Server::start_with(
        ServerOptions::new(Db::Sqlite)
            .env("WEBDATA_KUBE", "on")
            .env("KUBECONFIG", &kubeconfig.display().to_string())
            .env("WEBDATA_KUBE_NAMESPACE", "default"),
    )
    .await;
    let before = s.credits().await;
    let r = s
        .post(
            "/v1/crawl",
            json!({ "url": "http://127.0.0.2:9/", "limit": 5 }),
        )
        .await;
    r.assert_error(500, "internal");
    assert!(
        r.message().contains("could not be launched")
            && r.message().contains("nothing was charged"),
        "{}",
        r.message()
    );
    assert_eq!(s.credits().await, before);
    let store = s.store().await;
    let failed = store.crawls_in("failed").await.expect("crawls");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].error_code.as_deref(), Some("internal"));
    assert!(failed[0]
        .error_message
        .as_deref()
        .unwrap_or("")
        .contains("CrawlJob"));
    assert_eq!(failed[0].credits_used, 0);
}

/// `kubectl` against the current context's cluster.
fn kubectl_real(args: &[&str]) -> (bool, String) {
    let out = Command::new("kubectl")
        .args(args)
        .output()
        .expect("kubectl");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn env_or_panic(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("set {name} (see the test's comment)"))
}

/// Needs a real cluster (kubelet, scheduler, garbage collector, Selenium
/// pods), which this machine does not have. With the chart installed in
/// `WEBDATA_CLUSTER_NAMESPACE`, the API port-forwarded to `WEBDATA_CLUSTER_API`
/// with the `default` organization's key in `WEBDATA_CLUSTER_KEY`, and a page
/// whose text `WEBDATA_CLUSTER_RENDER_TEXT` only appears after JavaScript at
/// `WEBDATA_CLUSTER_RENDER_URL` (reachable from the pods), it: creates a
/// WorkerPool with at most one worker and one browser; applies a CrawlJob with
/// `tier: render` on that pool; waits for `Completed` while the pool reports a
/// ready browser; reads the rendered text through GET /v1/crawl; deletes the
/// WorkerPool and waits for the garbage collector to remove its Deployments
/// through their owner references.
#[tokio::test]
#[ignore = "needs a real Kubernetes cluster (kubelet, scheduler, garbage collector, Selenium pods) with the chart installed; none on this machine"]
async fn real_cluster_renders_through_the_pool_browsers() {
    let ns = env_or_panic("WEBDATA_CLUSTER_NAMESPACE");
    let api = env_or_panic("WEBDATA_CLUSTER_API");
    let key = env_or_panic("WEBDATA_CLUSTER_KEY");
    let url = env_or_panic("WEBDATA_CLUSTER_RENDER_URL");
    let text = env_or_panic("WEBDATA_CLUSTER_RENDER_TEXT");
    let dir = std::env::temp_dir().join(support::unique("webdata-real-cluster"));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("objects.yaml");
    std::fs::write(
        &file,
        format!(
            "apiVersion: webdata.io/v1\nkind: WorkerPool\nmetadata:\n  name: e2e-render\nspec:\n  workers: {{ min: 0, max: 1, concurrency: 2 }}\n  browsers: {{ min: 0, max: 1 }}\n  scaleDownDelaySeconds: 30\n\
             ---\napiVersion: webdata.io/v1\nkind: CrawlJob\nmetadata:\n  name: e2e-render\nspec:\n  url: {url}\n  limit: 1\n  maxDepth: 0\n  pool: e2e-render\n  organization: default\n  scrapeOptions: {{ tier: render }}\n"
        ),
    )
    .expect("yaml");
    let (ok, out) = kubectl_real(&["-n", &ns, "apply", "-f", &file.display().to_string()]);
    assert!(ok, "{out}");

    let deadline = Instant::now() + Duration::from_secs(600);
    let mut saw_browser = false;
    let crawl_id = loop {
        let (_, browsers) = kubectl_real(&[
            "-n",
            &ns,
            "get",
            "workerpool",
            "e2e-render",
            "-o",
            "jsonpath={.status.readyBrowsers}",
        ]);
        saw_browser |= browsers.trim().parse::<i64>().unwrap_or(0) >= 1;
        let (_, phase) = kubectl_real(&[
            "-n",
            &ns,
            "get",
            "cj",
            "e2e-render",
            "-o",
            "jsonpath={.status.phase}",
        ]);
        match phase.trim() {
            "Completed" => {
                let (_, id) = kubectl_real(&[
                    "-n",
                    &ns,
                    "get",
                    "cj",
                    "e2e-render",
                    "-o",
                    "jsonpath={.status.crawlId}",
                ]);
                break id.trim().to_string();
            }
            "Failed" | "Cancelled" => panic!("the CrawlJob ended {phase}"),
            _ => {}
        }
        assert!(Instant::now() < deadline, "the CrawlJob did not complete");
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    assert!(saw_browser, "the pool never reported a ready browser");
    let crawl: Value = reqwest::Client::new()
        .get(format!("{api}/v1/crawl/{crawl_id}"))
        .bearer_auth(&key)
        .send()
        .await
        .expect("get crawl")
        .json()
        .await
        .expect("json");
    assert_eq!(crawl["completed"], 1, "{crawl}");
    let markdown = crawl["data"][0]["markdown"].as_str().unwrap_or("");
    assert!(
        markdown.contains(&text),
        "rendered text missing: {markdown}"
    );

    let (ok, out) = kubectl_real(&["-n", &ns, "delete", "workerpool", "e2e-render"]);
    assert!(ok, "{out}");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, left) = kubectl_real(&[
            "-n",
            &ns,
            "get",
            "deployment",
            "e2e-render-workers",
            "e2e-render-browsers",
            "--ignore-not-found",
            "-o",
            "name",
        ]);
        if left.trim().is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the pool's Deployments were not garbage-collected"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let _ = kubectl_real(&["-n", &ns, "delete", "cj", "e2e-render"]);
}
