//! The objects a WorkerPool owns: the worker Deployment, the browser
//! Deployment and the browser Service. Pure functions of the pool and the
//! operator's settings, applied with server-side apply.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource, PodSpec, PodTemplateSpec,
    SecretKeySelector, Service, ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{Resource, ResourceExt};

use crate::crd::WorkerPool;

/// WebDriver port of the Selenium standalone image.
pub const WEBDRIVER_PORT: i32 = 4444;
/// How long a worker pod may take to finish its pages on scale-down.
pub const WORKER_GRACE_SECONDS: i64 = 120;

/// Where worker pods find the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// A key of a Secret in the pool's namespace (what the chart sets up).
    Secret { name: String, key: String },
    /// A literal URL (development and tests).
    Url(String),
}

/// The operator's settings that end up in pool objects.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolDefaults {
    /// Image with `webdata-worker` when the pool names none.
    pub worker_image: String,
    pub database: Database,
    /// Passed to workers as `WEBDATA_ALLOW_PRIVATE_NETWORKS`.
    pub allow_private_networks: Option<String>,
    /// More environment for every worker (e.g. `WEBDATA_RESOLVE`, log format).
    pub worker_env: Vec<EnvVar>,
}

/// Names of a pool's objects.
pub fn workers_name(pool: &str) -> String {
    format!("{pool}-workers")
}
pub fn browsers_name(pool: &str) -> String {
    format!("{pool}-browsers")
}

/// The labels of a pool's pods of one component.
pub fn labels(pool: &str, component: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), "webdata".to_string()),
        (
            "app.kubernetes.io/component".to_string(),
            component.to_string(),
        ),
        (
            "app.kubernetes.io/managed-by".to_string(),
            "webdata-operator".to_string(),
        ),
        ("webdata.io/pool".to_string(), pool.to_string()),
    ])
}

fn meta(wp: &WorkerPool, name: String, component: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: wp.namespace(),
        labels: Some(labels(&wp.name_any(), component)),
        owner_references: owner(wp).map(|o| vec![o]),
        ..Default::default()
    }
}

fn owner(wp: &WorkerPool) -> Option<OwnerReference> {
    wp.controller_owner_ref(&())
}

fn env(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        ..Default::default()
    }
}

/// The in-cluster WebDriver URL of a pool's browsers.
pub fn webdriver_url(pool: &str) -> String {
    format!("http://{}:{WEBDRIVER_PORT}", browsers_name(pool))
}

/// The worker Deployment: `webdata-worker` leasing only this pool's crawls,
/// rendering through the pool's browser Service. `replicas` is `None` when
/// something else scales it (autoscaling `External`).
pub fn worker_deployment(wp: &WorkerPool, d: &PoolDefaults, replicas: Option<i32>) -> Deployment {
    let pool = wp.name_any();
    let spec = &wp.spec.workers;
    let mut vars = vec![
        match &d.database {
            Database::Url(u) => env("WEBDATA_DATABASE_URL", u.clone()),
            Database::Secret { name, key } => EnvVar {
                name: "WEBDATA_DATABASE_URL".into(),
                value_from: Some(EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector {
                        name: name.clone(),
                        key: key.clone(),
                        optional: None,
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            },
        },
        env("WEBDATA_POOL", pool.clone()),
        env("WEBDATA_WORKER_CONCURRENCY", spec.concurrency.to_string()),
    ];
    if wp.spec.browsers.max > 0 {
        vars.push(env("WEBDATA_WEBDRIVER_URL", webdriver_url(&pool)));
        vars.push(env(
            "WEBDATA_BROWSER_SESSIONS",
            wp.spec.browsers.sessions_per_browser.to_string(),
        ));
    } else {
        vars.push(env("WEBDATA_BROWSER", "off"));
    }
    if let Some(a) = &d.allow_private_networks {
        vars.push(env("WEBDATA_ALLOW_PRIVATE_NETWORKS", a.clone()));
    }
    // The operator's extras, then the pool's own (which win on a clash).
    for e in d.worker_env.iter().chain(spec.env.iter()) {
        vars.retain(|v| v.name != e.name);
        vars.push(e.clone());
    }
    let labels = labels(&pool, "worker");
    Deployment {
        metadata: meta(wp, workers_name(&pool), "worker"),
        spec: DeploymentSpec {
            replicas,
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    termination_grace_period_seconds: Some(WORKER_GRACE_SECONDS),
                    containers: vec![Container {
                        name: "worker".into(),
                        image: Some(spec.image.clone().unwrap_or_else(|| d.worker_image.clone())),
                        command: Some(vec!["webdata-worker".into()]),
                        env: Some(vars),
                        resources: spec.resources.clone(),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The browser Deployment: Selenium standalone Chromium with
/// `sessionsPerBrowser` sessions and a memory-backed `/dev/shm`.
pub fn browser_deployment(wp: &WorkerPool, replicas: Option<i32>) -> Deployment {
    let pool = wp.name_any();
    let spec = &wp.spec.browsers;
    let labels = labels(&pool, "browser");
    Deployment {
        metadata: meta(wp, browsers_name(&pool), "browser"),
        spec: DeploymentSpec {
            replicas,
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "browser".into(),
                        image: Some(spec.image.clone()),
                        ports: Some(vec![ContainerPort {
                            name: Some("webdriver".into()),
                            container_port: WEBDRIVER_PORT,
                            ..Default::default()
                        }]),
                        env: Some(vec![
                            env(
                                "SE_NODE_MAX_SESSIONS",
                                spec.sessions_per_browser.to_string(),
                            ),
                            env("SE_NODE_OVERRIDE_MAX_SESSIONS", "true"),
                        ]),
                        resources: spec.resources.clone(),
                        volume_mounts: Some(vec![VolumeMount {
                            name: "dshm".into(),
                            mount_path: "/dev/shm".into(),
                            ..Default::default()
                        }]),
                        ..Default::default()
                    }],
                    volumes: Some(vec![Volume {
                        name: "dshm".into(),
                        empty_dir: Some(EmptyDirVolumeSource {
                            medium: Some("Memory".into()),
                            size_limit: Some(Quantity("2Gi".into())),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The browser Service. A WebDriver session lives in one browser pod, so
/// the Service pins each client (worker pod) to one browser pod with
/// `sessionAffinity: ClientIP`; every command of a session reaches the pod
/// that created it.
pub fn browser_service(wp: &WorkerPool) -> Service {
    let pool = wp.name_any();
    Service {
        metadata: meta(wp, browsers_name(&pool), "browser"),
        spec: Some(ServiceSpec {
            selector: Some(labels(&pool, "browser")),
            session_affinity: Some("ClientIP".into()),
            ports: Some(vec![ServicePort {
                name: Some("webdriver".into()),
                port: WEBDRIVER_PORT,
                target_port: Some(IntOrString::Int(WEBDRIVER_PORT)),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{Autoscaling, WorkerPoolSpec};

    fn pool() -> WorkerPool {
        let mut wp = WorkerPool::new("fast", WorkerPoolSpec::default());
        wp.metadata.namespace = Some("crawl".into());
        wp.metadata.uid = Some("uid-1".into());
        wp.spec.workers.concurrency = 8;
        wp.spec.workers.env = vec![env("WEBDATA_LOG_FORMAT", "text")];
        wp
    }

    fn defaults() -> PoolDefaults {
        PoolDefaults {
            worker_image: "webdata:1".into(),
            database: Database::Secret {
                name: "webdata".into(),
                key: "database-url".into(),
            },
            allow_private_networks: Some("10.0.0.0/8".into()),
            worker_env: vec![env("WEBDATA_LOG_FORMAT", "json"), env("RUST_LOG", "info")],
        }
    }

    fn envs(d: &Deployment) -> Vec<(String, Option<String>)> {
        d.spec.template.spec.as_ref().unwrap().containers[0]
            .env
            .clone()
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.value))
            .collect()
    }

    #[test]
    fn worker_deployment_wires_pool_database_browsers_and_owner() {
        let wp = pool();
        let d = worker_deployment(&wp, &defaults(), Some(3));
        assert_eq!(d.metadata.name.as_deref(), Some("fast-workers"));
        assert_eq!(d.metadata.namespace.as_deref(), Some("crawl"));
        let owner = &d.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.controller),
            ("WorkerPool", "fast", Some(true))
        );
        assert_eq!(d.spec.replicas, Some(3));
        let sel = d.spec.selector.match_labels.clone().unwrap();
        assert_eq!(sel.get("webdata.io/pool").map(String::as_str), Some("fast"));
        assert_eq!(
            d.spec.template.metadata.as_ref().unwrap().labels.as_ref(),
            Some(&sel)
        );
        let c = &d.spec.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(c.image.as_deref(), Some("webdata:1"));
        assert_eq!(
            c.command.as_ref().unwrap(),
            &vec!["webdata-worker".to_string()]
        );
        let e = envs(&d);
        let get = |n: &str| e.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("WEBDATA_POOL"), Some(Some("fast".into())));
        assert_eq!(get("WEBDATA_WORKER_CONCURRENCY"), Some(Some("8".into())));
        assert_eq!(
            get("WEBDATA_WEBDRIVER_URL"),
            Some(Some("http://fast-browsers:4444".into()))
        );
        assert_eq!(
            get("WEBDATA_ALLOW_PRIVATE_NETWORKS"),
            Some(Some("10.0.0.0/8".into()))
        );
        // The pool's own env wins over the operator's default, once.
        assert_eq!(get("WEBDATA_LOG_FORMAT"), Some(Some("text".into())));
        assert_eq!(
            e.iter().filter(|(k, _)| k == "WEBDATA_LOG_FORMAT").count(),
            1
        );
        // The database URL comes from the Secret.
        let db = c
            .env
            .as_ref()
            .unwrap()
            .iter()
            .find(|v| v.name == "WEBDATA_DATABASE_URL")
            .unwrap();
        let r = db
            .value_from
            .as_ref()
            .unwrap()
            .secret_key_ref
            .as_ref()
            .unwrap();
        assert_eq!(
            (r.name.as_str(), r.key.as_str()),
            ("webdata", "database-url")
        );
        assert_eq!(
            d.spec
                .template
                .spec
                .as_ref()
                .unwrap()
                .termination_grace_period_seconds,
            Some(120)
        );
    }

    #[test]
    fn pools_without_browsers_turn_rendering_off_and_external_leaves_replicas() {
        let mut wp = pool();
        wp.spec.browsers.max = 0;
        wp.spec.autoscaling = Autoscaling::External;
        let mut d = defaults();
        d.database = Database::Url("postgres://db/webdata".into());
        let dep = worker_deployment(&wp, &d, None);
        assert_eq!(dep.spec.replicas, None);
        let e = envs(&dep);
        assert!(e.contains(&("WEBDATA_BROWSER".into(), Some("off".into()))));
        assert!(e.contains(&(
            "WEBDATA_DATABASE_URL".into(),
            Some("postgres://db/webdata".into())
        )));
        assert!(!e.iter().any(|(k, _)| k == "WEBDATA_WEBDRIVER_URL"));
        // Replicas absent from the applied object: server-side apply leaves them to the HPA.
        let json = serde_json::to_value(&dep).unwrap();
        assert!(json["spec"].get("replicas").is_none(), "{json}");
    }

    #[test]
    fn browser_objects_pin_sessions() {
        let mut wp = pool();
        wp.spec.browsers.sessions_per_browser = 3;
        let d = browser_deployment(&wp, Some(2));
        assert_eq!(d.metadata.name.as_deref(), Some("fast-browsers"));
        assert_eq!(d.spec.replicas, Some(2));
        let c = &d.spec.template.spec.as_ref().unwrap().containers[0];
        assert_eq!(c.image.as_deref(), Some("selenium/standalone-chromium"));
        assert_eq!(c.ports.as_ref().unwrap()[0].container_port, 4444);
        assert!(envs(&d).contains(&("SE_NODE_MAX_SESSIONS".into(), Some("3".into()))));
        let s = browser_service(&wp);
        let spec = s.spec.unwrap();
        assert_eq!(spec.session_affinity.as_deref(), Some("ClientIP"));
        assert_eq!(spec.selector.unwrap(), labels("fast", "browser"));
        assert_eq!(spec.ports.unwrap()[0].port, 4444);
        assert_eq!(s.metadata.owner_references.unwrap()[0].name, "fast");
    }
}
