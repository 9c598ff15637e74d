//! The CrawlJob controller against a mocked API server (tower-test) and a
//! real SQLite store: the finalizer, admission, the status patch and its
//! event, and deletion cancelling the crawl.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use kube::client::Body;
use kube::runtime::events::Recorder;
use kube::Client;
use webdata_core::store::{NewOrganization, Placement};
use webdata_core::Store;
use webdata_operator::build::{Database, PoolDefaults};
use webdata_operator::controller::{crawljob, Ctx, Metrics, Settings};
use webdata_operator::crd::{
    CrawlJob, CrawlJobSpec, WorkerPool, WorkerPoolSpec, CRAWL_ID_ANNOTATION, FINALIZER,
};

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

async fn store() -> Store {
    let dir = std::env::temp_dir().join(format!(
        "webdata-operator-test-{}-{}",
        std::process::id(),
        webdata_core::store::new_id("t")
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    Store::connect(&format!("sqlite://{}/s.db", dir.display()))
        .await
        .expect("store")
}

fn ctx(client: Client, store: Store) -> Arc<Ctx> {
    Arc::new(Ctx {
        recorder: Recorder::new(client.clone(), "webdata-operator".to_string().into()),
        client,
        store,
        settings: Settings {
            default_organization: None,
            sync_interval: Duration::from_secs(5),
            idle_interval: Duration::from_secs(30),
            pool_defaults: PoolDefaults {
                worker_image: "webdata:test".into(),
                database: Database::Url("sqlite://x".into()),
                allow_private_networks: None,
                worker_env: Vec::new(),
            },
        },
        metrics: Arc::new(Metrics::default()),
    })
}

async fn crawl_in_store(store: &Store) -> (String, String) {
    let org = store
        .create_org(&NewOrganization {
            name: "acme".into(),
            credits: 100,
            ..Default::default()
        })
        .await
        .expect("org");
    let id = Store::new_crawl_id();
    store
        .create_crawl_in(
            &id,
            &org.id,
            None,
            "https://a.test/",
            r#"{"url":"https://a.test/"}"#,
            10,
            &Placement {
                admitted: false,
                launcher: "kube".into(),
                ..Default::default()
            },
        )
        .await
        .expect("crawl");
    (org.id, id)
}

fn job(crawl_id: &str, finalizer: bool) -> CrawlJob {
    let mut cj = CrawlJob::new(
        &webdata_operator::crd::job_name(crawl_id),
        serde_json::from_value::<CrawlJobSpec>(serde_json::json!({"url": "https://a.test/"}))
            .expect("spec"),
    );
    cj.metadata.namespace = Some("default".into());
    cj.metadata.uid = Some("11111111-2222-3333-4444-555555555555".into());
    cj.metadata.generation = Some(1);
    cj.metadata.annotations = Some(
        [(CRAWL_ID_ANNOTATION.to_string(), crawl_id.to_string())]
            .into_iter()
            .collect(),
    );
    if finalizer {
        cj.metadata.finalizers = Some(vec![FINALIZER.into()]);
    }
    cj
}

async fn body_json(req: Request<Body>) -> serde_json::Value {
    let bytes = req.into_body().collect_bytes().await.expect("body");
    serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null)
}

/// The `op` of each operation of a JSON patch.
fn op_names(patch: &serde_json::Value) -> Vec<&str> {
    patch
        .as_array()
        .expect("a JSON patch is an array")
        .iter()
        .map(|o| o["op"].as_str().expect("op"))
        .collect()
}

fn json_response(v: &serde_json::Value) -> Response<Body> {
    Response::builder()
        .status(StatusCode::OK)
        .body(Body::from(serde_json::to_vec(v).expect("json")))
        .expect("response")
}

#[tokio::test]
async fn a_new_crawljob_gets_the_finalizer_first() {
    let (service, mut handle): (_, Handle) = tower_test::mock::pair();
    let client = Client::new(service, "default");
    let store = store().await;
    let (_, id) = crawl_in_store(&store).await;
    let cj = job(&id, false);
    let name = webdata_operator::crd::job_name(&id);
    let expected = cj.clone();
    let server = tokio::spawn(async move {
        let (req, send) = handle.next_request().await.expect("finalizer patch");
        assert_eq!(req.method(), Method::PATCH);
        assert_eq!(
            req.uri().path(),
            format!("/apis/webdata.io/v1/namespaces/default/crawljobs/{name}")
        );
        assert_eq!(
            req.headers().get("content-type").unwrap(),
            "application/json-patch+json"
        );
        let patch = body_json(req).await;
        let ops = op_names(&patch);
        assert_eq!(ops, ["test", "add"], "{patch}");
        assert_eq!(patch[1]["value"], serde_json::json!([FINALIZER]));
        let mut obj = serde_json::to_value(&expected).unwrap();
        obj["metadata"]["finalizers"] = serde_json::json!([FINALIZER]);
        send.send_response(json_response(&obj));
    });
    crawljob::reconcile(Arc::new(cj), ctx(client, store))
        .await
        .expect("reconcile");
    tokio::time::timeout(Duration::from_secs(2), server)
        .await
        .expect("server done")
        .expect("server ok");
}

#[tokio::test]
async fn an_api_crawljob_is_admitted_and_mirrored_with_an_event() {
    let (service, mut handle): (_, Handle) = tower_test::mock::pair();
    let client = Client::new(service, "default");
    let store = store().await;
    let (_, id) = crawl_in_store(&store).await;
    let cj = job(&id, true);
    let for_server = cj.clone();
    let id2 = id.clone();
    let server = tokio::spawn(async move {
        // 1. The pool exists: the crawl may start.
        let (req, send) = handle.next_request().await.expect("pool lookup");
        assert_eq!(req.method(), Method::GET);
        assert_eq!(
            req.uri().path(),
            "/apis/webdata.io/v1/namespaces/default/workerpools/default"
        );
        let mut pool = WorkerPool::new("default", WorkerPoolSpec::default());
        pool.metadata.namespace = Some("default".into());
        send.send_response(json_response(&serde_json::to_value(&pool).unwrap()));
        // 2. The status mirrors the store: admitted, queued.
        let (req, send) = handle.next_request().await.expect("status patch");
        assert_eq!(req.method(), Method::PATCH);
        assert_eq!(
            req.uri().path(),
            format!(
                "/apis/webdata.io/v1/namespaces/default/crawljobs/{}/status",
                for_server.metadata.name.clone().unwrap()
            )
        );
        assert_eq!(
            req.headers().get("content-type").unwrap(),
            "application/merge-patch+json"
        );
        let v = body_json(req).await;
        assert_eq!(v["status"]["phase"], "Queued", "{v}");
        assert_eq!(v["status"]["crawlId"], id2.as_str());
        assert_eq!(v["status"]["observedGeneration"], 1);
        assert_eq!(v["status"]["conditions"][0]["type"], "Admitted");
        assert_eq!(v["status"]["conditions"][0]["status"], "True");
        let mut obj = serde_json::to_value(&for_server).unwrap();
        obj["status"] = v["status"].clone();
        send.send_response(json_response(&obj));
        // 3. The phase changed: an Event.
        let (req, send) = handle.next_request().await.expect("event");
        assert_eq!(req.method(), Method::POST);
        assert_eq!(
            req.uri().path(),
            "/apis/events.k8s.io/v1/namespaces/default/events"
        );
        let ev = body_json(req).await;
        assert_eq!(ev["reason"], "Queued");
        assert_eq!(ev["regarding"]["kind"], "CrawlJob");
        send.send_response(json_response(&ev));
    });
    let c = ctx(client, store.clone());
    crawljob::reconcile(Arc::new(cj), c)
        .await
        .expect("reconcile");
    tokio::time::timeout(Duration::from_secs(2), server)
        .await
        .expect("server done")
        .expect("server ok");
    assert!(store.get_crawl(&id).await.unwrap().unwrap().admitted);
}

#[tokio::test]
async fn deleting_a_crawljob_cancels_its_crawl_and_releases_the_finalizer() {
    let (service, mut handle): (_, Handle) = tower_test::mock::pair();
    let client = Client::new(service, "default");
    let store = store().await;
    let (_, id) = crawl_in_store(&store).await;
    store.admit_crawl(&id).await.unwrap();
    let mut cj = job(&id, true);
    cj.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        jiff::Timestamp::now(),
    ));
    let for_server = cj.clone();
    let server = tokio::spawn(async move {
        let (req, send) = handle.next_request().await.expect("finalizer removal");
        assert_eq!(req.method(), Method::PATCH);
        assert_eq!(
            req.headers().get("content-type").unwrap(),
            "application/json-patch+json"
        );
        let patch = body_json(req).await;
        let ops = op_names(&patch);
        assert_eq!(ops, ["test", "remove"], "{patch}");
        let mut obj = serde_json::to_value(&for_server).unwrap();
        obj["metadata"]["finalizers"] = serde_json::json!([]);
        send.send_response(json_response(&obj));
    });
    let c = ctx(client, store.clone());
    crawljob::reconcile(Arc::new(cj.clone()), c.clone())
        .await
        .expect("reconcile");
    tokio::time::timeout(Duration::from_secs(2), server)
        .await
        .expect("server done")
        .expect("server ok");
    let row = store.get_crawl(&id).await.unwrap().unwrap();
    assert_eq!(row.status, "cancelled");
    // Idempotent: the crawl stays cancelled, and its `cancelled` event is not repeated.
    let events = store.crawl_events(&id, 0, 100).await.unwrap();
    assert_eq!(events.iter().filter(|e| e.kind == "cancelled").count(), 1);
}
