//! The WorkerPool controller: owns the pool's worker Deployment, browser
//! Deployment and browser Service; sets their replicas from the pool's
//! backlog in the store (up at once, down after the scale-down delay); and
//! requeues while there is work, since a changing backlog is not a watch event.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::ResourceExt;

use super::{now_ms, now_time, Ctx, Error};
use crate::build;
use crate::crd::{Autoscaling, WorkerPool, WorkerPoolStatus};
use crate::scale::{desired_browsers, desired_workers, stabilize, Sizing};

/// The field manager of everything the operator applies.
pub const MANAGER: &str = "webdata-operator";

fn ready(d: &Deployment) -> i32 {
    d.status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0)
}

fn replicas(d: Option<&Deployment>) -> i32 {
    d.and_then(|d| d.spec.replicas).unwrap_or(0)
}

/// Reconciles one WorkerPool.
pub async fn reconcile(wp: Arc<WorkerPool>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let result = apply(&wp, &ctx).await;
    if result.is_err() {
        ctx.metrics.reconcile_error("workerpool");
    }
    result
}

/// Retry soon after a failed reconcile.
pub fn error_policy(wp: Arc<WorkerPool>, err: &Error, _ctx: Arc<Ctx>) -> Action {
    tracing::warn!(workerpool = %wp.name_any(), error = %err, "reconcile failed; retrying");
    Action::requeue(Duration::from_secs(2))
}

async fn apply(wp: &WorkerPool, ctx: &Ctx) -> Result<Action, Error> {
    let name = wp.name_any();
    let ns = wp.namespace().unwrap_or_else(|| "default".into());
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &ns);
    let services: Api<Service> = Api::namespaced(ctx.client.clone(), &ns);
    let pools: Api<WorkerPool> = Api::namespaced(ctx.client.clone(), &ns);
    let old = wp.status.clone().unwrap_or_default();
    let now = now_ms();

    let backlog = ctx.store.pool_backlog(&name).await?;
    let want_workers = desired_workers(
        &backlog,
        Sizing {
            min: wp.spec.workers.min,
            max: wp.spec.workers.max,
            per_replica: wp.spec.workers.concurrency,
        },
    );
    let want_browsers = desired_browsers(
        &backlog,
        Sizing {
            min: wp.spec.browsers.min,
            max: wp.spec.browsers.max,
            per_replica: wp.spec.browsers.sessions_per_browser,
        },
    );
    let current_workers = deployments.get_opt(&build::workers_name(&name)).await?;
    let current_browsers = deployments.get_opt(&build::browsers_name(&name)).await?;
    let delay = wp.spec.scale_down_delay_seconds.max(0) * 1000;
    let (workers, workers_since) = stabilize(
        replicas(current_workers.as_ref()),
        want_workers,
        old.workers_lower_since,
        now,
        delay,
    );
    let (browsers, browsers_since) = stabilize(
        replicas(current_browsers.as_ref()),
        want_browsers,
        old.browsers_lower_since,
        now,
        delay,
    );
    let external = wp.spec.autoscaling == Autoscaling::External;
    let ssa = PatchParams::apply(MANAGER).force();

    let worker_dep = build::worker_deployment(
        wp,
        &ctx.settings.pool_defaults,
        (!external).then_some(workers),
    );
    let applied_workers = deployments
        .patch(
            &build::workers_name(&name),
            &ssa,
            &Patch::Apply(&worker_dep),
        )
        .await?;
    let mut ready_browsers = 0;
    if wp.spec.browsers.max > 0 {
        let dep = build::browser_deployment(wp, (!external).then_some(browsers));
        let applied = deployments
            .patch(&build::browsers_name(&name), &ssa, &Patch::Apply(&dep))
            .await?;
        ready_browsers = ready(&applied);
        services
            .patch(
                &build::browsers_name(&name),
                &ssa,
                &Patch::Apply(&build::browser_service(wp)),
            )
            .await?;
    }

    let (set_workers, set_browsers) = if external {
        (replicas(Some(&applied_workers)), old.desired_browsers)
    } else {
        (
            workers,
            if wp.spec.browsers.max > 0 {
                browsers
            } else {
                0
            },
        )
    };
    let scaled = set_workers != replicas(current_workers.as_ref())
        || (wp.spec.browsers.max > 0 && set_browsers != replicas(current_browsers.as_ref()));
    let mut st = WorkerPoolStatus {
        desired_workers: set_workers,
        ready_workers: ready(&applied_workers),
        desired_browsers: set_browsers,
        ready_browsers,
        backlog: backlog.urls + backlog.queued_crawls,
        render_backlog: backlog.render_urls,
        last_scale_time: if scaled {
            Some(webdata_core::store::rfc3339(now))
        } else {
            old.last_scale_time.clone()
        },
        workers_lower_since: workers_since,
        browsers_lower_since: browsers_since,
        conditions: vec![Condition {
            type_: "Ready".into(),
            status: "True".into(),
            reason: if external { "ExternalAutoscaling" } else { "Scaled" }.into(),
            message: format!(
                "{} queued/in-flight URLs, {} crawls waiting; {set_workers} workers, {set_browsers} browsers",
                backlog.urls, backlog.queued_crawls
            ),
            observed_generation: wp.metadata.generation,
            last_transition_time: now_time(),
        }],
        observed_generation: wp.metadata.generation,
    };
    if let Some(o) = old.conditions.iter().find(|c| c.type_ == "Ready") {
        if o.status == "True" {
            st.conditions[0].last_transition_time = o.last_transition_time.clone();
        }
    }
    ctx.metrics.set_pool(
        &name,
        st.backlog as i64,
        st.render_backlog as i64,
        set_workers as i64,
        set_browsers as i64,
    );
    if st != old {
        if scaled {
            tracing::info!(pool = %name, workers = set_workers, browsers = set_browsers, backlog = st.backlog, "scaled");
        }
        let patch = serde_json::json!({ "status": st });
        pools
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
    }
    let busy = st.backlog > 0 || workers_since.is_some() || browsers_since.is_some();
    Ok(Action::requeue(if busy {
        ctx.settings.sync_interval
    } else {
        ctx.settings.idle_interval
    }))
}
