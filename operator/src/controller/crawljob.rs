//! The CrawlJob controller: registers CrawlJobs made with kubectl as crawls
//! in the store, admits crawls once their WorkerPool exists (workers then
//! start them), mirrors the crawl into `.status` (at most once per sync
//! interval while it runs), turns `spec.cancel` into a cancelled crawl,
//! cancels the crawl through a finalizer when the CrawlJob is deleted (its
//! pages stay), deletes finished jobs after `ttlSecondsAfterFinished`, and
//! records a Kubernetes Event on every phase change.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use kube::runtime::finalizer::{finalizer, Event as Finalizer};
use kube::{Resource, ResourceExt};
use webdata_core::store::crawl::{status, CrawlStatus};
use webdata_core::store::{CrawlRow, Placement};
use webdata_core::Store;

use super::{now_ms, now_time, Ctx, Error};
use crate::crd::{
    CrawlJob, CrawlJobError, CrawlJobStatus, WorkerPool, CRAWL_ID_ANNOTATION, FINALIZER,
    ORGANIZATION_ANNOTATION,
};
use crate::phase;

/// The crawl a CrawlJob mirrors: the API's annotation, else one derived
/// from the CrawlJob's uid (so registering twice finds the same crawl).
pub fn crawl_id_of(cj: &CrawlJob) -> Option<String> {
    if let Some(id) = cj.annotations().get(CRAWL_ID_ANNOTATION) {
        return Some(id.clone());
    }
    cj.metadata
        .uid
        .as_ref()
        .map(|uid| format!("crawl_{}", uid.replace('-', "").to_ascii_lowercase()))
}

/// Reconciles one CrawlJob.
pub async fn reconcile(cj: Arc<CrawlJob>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let ns = cj.namespace().unwrap_or_else(|| "default".into());
    let api: Api<CrawlJob> = Api::namespaced(ctx.client.clone(), &ns);
    let result = finalizer(&api, FINALIZER, cj, |event| async {
        match event {
            Finalizer::Apply(cj) => apply(cj, &ctx).await,
            Finalizer::Cleanup(cj) => cleanup(cj, &ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)));
    if result.is_err() {
        ctx.metrics.reconcile_error("crawljob");
    }
    result
}

/// Retry soon after a failed reconcile.
pub fn error_policy(cj: Arc<CrawlJob>, err: &Error, _ctx: Arc<Ctx>) -> Action {
    tracing::warn!(crawljob = %cj.name_any(), error = %err, "reconcile failed; retrying");
    Action::requeue(Duration::from_secs(2))
}

async fn resolve_org(store: &Store, wanted: &str) -> Result<Option<String>, Error> {
    if let Ok(o) = store.get_org(wanted).await {
        return Ok(Some(o.id));
    }
    Ok(store
        .list_orgs()
        .await?
        .into_iter()
        .find(|o| o.name == wanted)
        .map(|o| o.id))
}

/// A crawl for a CrawlJob made with kubectl; `Err` is why it cannot run.
async fn register(
    cj: &CrawlJob,
    id: &str,
    ctx: &Ctx,
) -> Result<Result<CrawlRow, CrawlJobError>, Error> {
    let invalid = |code: &str, message: String| {
        Ok(Err(CrawlJobError {
            code: code.into(),
            message,
        }))
    };
    let Some(org_name) = cj
        .spec
        .organization
        .clone()
        .or_else(|| cj.annotations().get(ORGANIZATION_ANNOTATION).cloned())
        .or_else(|| ctx.settings.default_organization.clone())
    else {
        return invalid(
            "invalid_request",
            "spec.organization is not set and the operator has no default organization (WEBDATA_DEFAULT_ORGANIZATION)".into(),
        );
    };
    let Some(org) = resolve_org(&ctx.store, &org_name).await? else {
        return invalid(
            "not_found",
            format!("organization `{org_name}` does not exist"),
        );
    };
    let req = cj.spec.crawl_request();
    if let Err(e) = webdata_core::validate::check_crawl_request(&req) {
        return invalid("invalid_request", format!("spec: {}", e.message));
    }
    let json = serde_json::to_string(&req).map_err(|e| Error::Other(e.to_string()))?;
    let placement = Placement {
        pool: cj.spec.pool.clone(),
        admitted: false,
        renders: req.renders_every_page(),
        launcher: "kube".into(),
    };
    let row = ctx
        .store
        .create_crawl_in(id, &org, None, &req.url, &json, req.limit(), &placement)
        .await?;
    tracing::info!(crawljob = %cj.name_any(), crawl = %id, org = %org, "registered a kubectl CrawlJob as a crawl");
    Ok(Ok(row))
}

fn condition(type_: &str, ok: bool, reason: &str, message: String, gen: Option<i64>) -> Condition {
    Condition {
        type_: type_.into(),
        status: if ok { "True" } else { "False" }.into(),
        reason: reason.into(),
        message,
        observed_generation: gen,
        last_transition_time: now_time(),
    }
}

/// Keeps the transition time of a condition that did not change, so an
/// unchanged status compares equal and is not patched again.
fn keep_times(new: &mut [Condition], old: &[Condition]) {
    for c in new.iter_mut() {
        if let Some(o) = old.iter().find(|o| o.type_ == c.type_) {
            if o.status == c.status && o.reason == c.reason {
                c.last_transition_time = o.last_transition_time.clone();
            }
        }
    }
}

async fn apply(cj: Arc<CrawlJob>, ctx: &Ctx) -> Result<Action, Error> {
    let name = cj.name_any();
    let ns = cj.namespace().unwrap_or_else(|| "default".into());
    let api: Api<CrawlJob> = Api::namespaced(ctx.client.clone(), &ns);
    let gen = cj.metadata.generation;
    let old = cj.status.clone().unwrap_or_default();
    let Some(id) = crawl_id_of(&cj) else {
        return Ok(Action::requeue(Duration::from_secs(1)));
    };

    let row = match ctx.store.get_crawl(&id).await? {
        Some(r) => Ok(r),
        None if cj.annotations().contains_key(CRAWL_ID_ANNOTATION) => Err(CrawlJobError {
            code: "not_found".into(),
            message: format!("crawl `{id}` is not in the store"),
        }),
        None => register(&cj, &id, ctx).await?,
    };
    let mut row = match row {
        Ok(r) => r,
        Err(error) => {
            let mut st = CrawlJobStatus {
                phase: Some(phase::FAILED.into()),
                error: Some(error.clone()),
                observed_generation: gen,
                conditions: vec![condition(
                    "Registered",
                    false,
                    "Invalid",
                    error.message.clone(),
                    gen,
                )],
                ..Default::default()
            };
            keep_times(&mut st.conditions, &old.conditions);
            write_status(&api, &cj, &old, st, ctx).await?;
            return Ok(Action::await_change());
        }
    };

    // Admission: the crawl's pool must exist before workers may start it.
    let pools: Api<WorkerPool> = Api::namespaced(ctx.client.clone(), &ns);
    let pool_exists = pools.get_opt(&row.pool).await?.is_some();
    if !row.admitted && row.status == status::QUEUED && pool_exists {
        ctx.store.admit_crawl(&id).await?;
        row = ctx.store.get_crawl(&id).await?.unwrap_or(row);
    }

    // Cancel on request (pages already scraped stay and are charged).
    if cj.spec.cancel && !row.is_finished() {
        ctx.store
            .finish_crawl(&id, CrawlStatus::Cancelled, None)
            .await?;
        row = ctx.store.get_crawl(&id).await?.unwrap_or(row);
    }

    let mut st = phase::status_of(&row);
    st.observed_generation = gen;
    st.conditions = vec![if row.admitted {
        condition(
            "Admitted",
            true,
            "PoolFound",
            format!("WorkerPool `{}` runs this crawl", row.pool),
            gen,
        )
    } else {
        condition(
            "Admitted",
            false,
            "PoolMissing",
            format!("waiting for WorkerPool `{}` in namespace `{ns}`", row.pool),
            gen,
        )
    }];
    keep_times(&mut st.conditions, &old.conditions);
    let finished = phase::is_finished(st.phase.as_deref().unwrap_or(""));
    write_status(&api, &cj, &old, st, ctx).await?;

    if finished {
        if let (Some(ttl), Some(done)) = (cj.spec.ttl_seconds_after_finished, row.finished_at) {
            let due = done + ttl.max(0) * 1000;
            let now = now_ms();
            if now >= due {
                tracing::info!(crawljob = %name, "deleting a finished CrawlJob after its TTL");
                api.delete(&name, &DeleteParams::default()).await?;
                return Ok(Action::await_change());
            }
            return Ok(Action::requeue(Duration::from_millis(
                (due - now) as u64 + 10,
            )));
        }
        return Ok(Action::await_change());
    }
    Ok(Action::requeue(if row.admitted {
        ctx.settings.sync_interval
    } else {
        ctx.settings.idle_interval.min(Duration::from_secs(5))
    }))
}

/// Patches `.status` when it changed, with an Event when the phase did.
async fn write_status(
    api: &Api<CrawlJob>,
    cj: &CrawlJob,
    old: &CrawlJobStatus,
    st: CrawlJobStatus,
    ctx: &Ctx,
) -> Result<(), Error> {
    if *old == st {
        return Ok(());
    }
    let patch = serde_json::json!({ "status": st });
    api.patch_status(
        &cj.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await?;
    if old.phase != st.phase {
        let phase = st.phase.clone().unwrap_or_default();
        let note = match (&st.error, st.crawl_id.as_deref()) {
            (Some(e), _) => format!("{phase}: {} ({})", e.message, e.code),
            (None, Some(id)) => format!("crawl {id} is {}", phase.to_lowercase()),
            _ => phase.clone(),
        };
        let kind = if phase == phase::FAILED {
            EventType::Warning
        } else {
            EventType::Normal
        };
        let event = Event {
            type_: kind,
            reason: phase,
            note: Some(note),
            action: "Reconcile".into(),
            secondary: None,
        };
        if let Err(e) = ctx.recorder.publish(&event, &cj.object_ref(&())).await {
            tracing::warn!(error = %e, "could not record an event");
        }
    }
    Ok(())
}

/// The finalizer: the crawl is cancelled (its pages stay); repeating it is harmless.
async fn cleanup(cj: Arc<CrawlJob>, ctx: &Ctx) -> Result<Action, Error> {
    if let Some(id) = crawl_id_of(&cj) {
        if let Some(row) = ctx.store.get_crawl(&id).await? {
            if !row.is_finished() {
                ctx.store
                    .finish_crawl(&id, CrawlStatus::Cancelled, None)
                    .await?;
                tracing::info!(crawljob = %cj.name_any(), crawl = %id, "CrawlJob deleted: crawl cancelled");
            }
        }
    }
    Ok(Action::await_change())
}
