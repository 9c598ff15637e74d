//! The CrawlSchedule controller, a CronJob for crawls: at each slot of
//! `spec.schedule` it creates a CrawlJob from `spec.jobTemplate` with change
//! tracking under the schedule's tag (the CrawlJob controller runs it as any
//! other), honours `suspend`, `concurrencyPolicy` and
//! `startingDeadlineSeconds`, keeps the history limits, and mirrors the
//! newest result (pages new/same/changed/removed) into its status. Each
//! slot's CrawlJob has a name derived from the slot, so a reconcile repeated
//! after a crash (or by a new leader) never starts a slot twice.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use kube::{Resource, ResourceExt};
use webdata_core::store::rfc3339;
use webdata_core::types::{tracked_options, ConcurrencyPolicy};

use super::{now_ms, now_time, Ctx, Error};
use crate::crd::{CrawlJob, CrawlSchedule, CrawlScheduleStatus, SCHEDULE_LABEL};
use crate::phase;

/// Reconciles one CrawlSchedule.
pub async fn reconcile(cs: Arc<CrawlSchedule>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    let result = apply(&cs, &ctx).await;
    if result.is_err() {
        ctx.metrics.reconcile_error("crawlschedule");
    }
    result
}

/// Retry soon after a failed reconcile.
pub fn error_policy(cs: Arc<CrawlSchedule>, err: &Error, _ctx: Arc<Ctx>) -> Action {
    tracing::warn!(crawlschedule = %cs.name_any(), error = %err, "reconcile failed; retrying");
    Action::requeue(Duration::from_secs(2))
}

fn ms_of(t: &str) -> Option<i64> {
    t.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_millisecond())
}

fn created_ms(job: &CrawlJob) -> i64 {
    job.metadata
        .creation_timestamp
        .as_ref()
        .map(|t| t.0.as_millisecond())
        .unwrap_or(0)
}

fn phase_of(job: &CrawlJob) -> &str {
    job.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

/// The name of the CrawlJob of `schedule`'s slot at `slot_ms`.
pub fn job_name(schedule: &str, slot_ms: i64) -> String {
    format!("{schedule}-{}", slot_ms / 60_000)
}

/// The latest slot after `last` that is due at `now`, skipping older ones
/// (after downtime one run catches up, as a CronJob does).
fn due_slot(when: &webdata_core::schedule::When, last: i64, now: i64) -> Option<i64> {
    let mut slot = None;
    let mut t = last;
    for _ in 0..100_000 {
        match when.next_after(t) {
            Some(n) if n <= now => {
                slot = Some(n);
                t = n;
            }
            _ => break,
        }
    }
    slot
}

async fn event(ctx: &Ctx, cs: &CrawlSchedule, kind: EventType, reason: &str, note: String) {
    let ev = Event {
        type_: kind,
        reason: reason.into(),
        note: Some(note),
        action: "Schedule".into(),
        secondary: None,
    };
    if let Err(e) = ctx.recorder.publish(&ev, &cs.object_ref(&())).await {
        tracing::debug!(error = %e, "could not record an event");
    }
}

async fn apply(cs: &CrawlSchedule, ctx: &Ctx) -> Result<Action, Error> {
    let name = cs.name_any();
    let ns = cs.namespace().unwrap_or_else(|| "default".into());
    let schedules: Api<CrawlSchedule> = Api::namespaced(ctx.client.clone(), &ns);
    let jobs: Api<CrawlJob> = Api::namespaced(ctx.client.clone(), &ns);
    let old = cs.status.clone().unwrap_or_default();
    let now = now_ms();
    let created = cs
        .metadata
        .creation_timestamp
        .as_ref()
        .map(|t| t.0.as_millisecond())
        .unwrap_or(now);
    let mut st = CrawlScheduleStatus {
        observed_generation: cs.metadata.generation,
        ..old.clone()
    };
    let when = match cs.spec.when(created) {
        Ok(w) => w,
        Err(msg) => {
            st.next_schedule_time = None;
            st.conditions = vec![condition(cs, &old, "False", "InvalidSchedule", &msg)];
            patch_status(&schedules, &name, &old, &st).await?;
            return Ok(Action::requeue(ctx.settings.idle_interval));
        }
    };

    // The schedule's CrawlJobs, newest first.
    let mut owned = jobs
        .list(&ListParams::default().labels(&format!("{SCHEDULE_LABEL}={name}")))
        .await?
        .items;
    owned.sort_by_key(|j| std::cmp::Reverse(created_ms(j)));
    let active: Vec<&CrawlJob> = owned
        .iter()
        .filter(|j| !phase::is_finished(phase_of(j)))
        .collect();
    if let Some(done) = owned.iter().find(|j| phase::is_finished(phase_of(j))) {
        let crawl = done.status.as_ref().and_then(|s| s.crawl_id.clone());
        let summary = match &crawl {
            Some(id) => Some(ctx.store.crawl_change_summary(id).await?),
            None => None,
        };
        st.last_result = Some(match summary {
            Some(s) => format!(
                "{}: {} pages, {} new, {} changed, {} same, {} removed",
                phase_of(done),
                s.pages,
                s.new,
                s.changed,
                s.same,
                s.removed
            ),
            None => phase_of(done).to_string(),
        });
    }
    if let Some(ok) = owned.iter().find(|j| phase_of(j) == phase::COMPLETED) {
        st.last_successful_time = ok.status.as_ref().and_then(|s| s.finished_at.clone());
    }
    // History limits (CrawlJobs of ended runs; their pages stay in the store).
    let (mut kept_ok, mut kept_failed) = (0, 0);
    for j in owned.iter().filter(|j| phase::is_finished(phase_of(j))) {
        let (kept, limit) = if phase_of(j) == phase::COMPLETED {
            (&mut kept_ok, cs.spec.successful_jobs_history_limit)
        } else {
            (&mut kept_failed, cs.spec.failed_jobs_history_limit)
        };
        *kept += 1;
        if *kept > limit.max(0) {
            match jobs.delete(&j.name_any(), &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(st)) if st.code == 404 => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    let last = old
        .last_schedule_time
        .as_deref()
        .and_then(ms_of)
        .unwrap_or(created);
    let mut active_names: Vec<String> = active.iter().map(|j| j.name_any()).collect();
    if !cs.spec.suspend {
        if let Some(slot) = due_slot(&when, last, now) {
            st.last_schedule_time = Some(rfc3339(slot));
            let late = now - slot;
            match cs.spec.starting_deadline_seconds {
                Some(d) if late > d * 1000 => {
                    event(ctx, cs, EventType::Warning, "MissedSchedule", format!(
                        "the run due at {} was not started: {} s late, past startingDeadlineSeconds ({d})",
                        rfc3339(slot), late / 1000
                    ))
                    .await;
                }
                _ if !active.is_empty()
                    && cs.spec.concurrency_policy == ConcurrencyPolicy::Forbid =>
                {
                    event(ctx, cs, EventType::Normal, "SkippedSchedule", format!(
                        "the run due at {} was skipped: {} is still running (concurrencyPolicy Forbid)",
                        rfc3339(slot), active_names.join(", ")
                    ))
                    .await;
                }
                _ => {
                    if cs.spec.concurrency_policy == ConcurrencyPolicy::Replace {
                        for j in &active {
                            let cancel = serde_json::json!({"spec": {"cancel": true}});
                            jobs.patch(
                                &j.name_any(),
                                &PatchParams::default(),
                                &Patch::Merge(&cancel),
                            )
                            .await?;
                        }
                        active_names.clear();
                    }
                    let job = run_job(cs, &ns, &name, slot);
                    let job_name = job.name_any();
                    match jobs.create(&PostParams::default(), &job).await {
                        Ok(_) => {
                            event(
                                ctx,
                                cs,
                                EventType::Normal,
                                "CreatedCrawlJob",
                                format!(
                                    "created CrawlJob {job_name} for the run due at {}",
                                    rfc3339(slot)
                                ),
                            )
                            .await;
                        }
                        // This slot's CrawlJob exists: it was created before.
                        Err(kube::Error::Api(st)) if st.code == 409 => {}
                        Err(e) => return Err(e.into()),
                    }
                    if !active_names.contains(&job_name) {
                        active_names.push(job_name);
                    }
                }
            }
        }
    }
    active_names.sort();
    st.active = active_names;
    let next = when.next_after(
        now.max(
            st.last_schedule_time
                .as_deref()
                .and_then(ms_of)
                .unwrap_or(last),
        ),
    );
    st.next_schedule_time = if cs.spec.suspend {
        None
    } else {
        next.map(rfc3339)
    };
    st.conditions = vec![condition(
        cs,
        &old,
        "True",
        if cs.spec.suspend {
            "Suspended"
        } else {
            "Scheduled"
        },
        &match (&st.next_schedule_time, cs.spec.suspend) {
            (_, true) => "suspended: no new runs".to_string(),
            (Some(n), false) => format!("next run at {n}"),
            (None, false) => "the schedule never fires again".to_string(),
        },
    )];
    patch_status(&schedules, &name, &old, &st).await?;
    // Wake at the next slot, or sooner to follow running CrawlJobs.
    let until_next = next
        .map(|n| Duration::from_millis((n - now).clamp(200, 3_600_000) as u64))
        .unwrap_or(ctx.settings.idle_interval);
    let wait = if st.active.is_empty() {
        until_next.min(ctx.settings.idle_interval.max(Duration::from_secs(60)))
    } else {
        until_next.min(ctx.settings.sync_interval)
    };
    Ok(Action::requeue(wait))
}

/// The CrawlJob of one run: the template with change tracking under the
/// schedule's tag, owned by the schedule (deleted with it).
fn run_job(cs: &CrawlSchedule, ns: &str, name: &str, slot: i64) -> CrawlJob {
    let tag = cs
        .spec
        .tag
        .clone()
        .unwrap_or_else(|| format!("{ns}/{name}"));
    let mut spec = cs.spec.job_template.clone();
    spec.scrape_options = Some(tracked_options(spec.scrape_options.take(), &tag));
    spec.cancel = false;
    CrawlJob {
        metadata: ObjectMeta {
            name: Some(job_name(name, slot)),
            namespace: Some(ns.to_string()),
            labels: Some([(SCHEDULE_LABEL.to_string(), name.to_string())].into()),
            owner_references: cs.controller_owner_ref(&()).map(|o| vec![o]),
            ..Default::default()
        },
        spec,
        status: None,
    }
}

fn condition(
    cs: &CrawlSchedule,
    old: &CrawlScheduleStatus,
    status: &str,
    reason: &str,
    message: &str,
) -> Condition {
    let mut c = Condition {
        type_: "Ready".into(),
        status: status.into(),
        reason: reason.into(),
        message: message.into(),
        observed_generation: cs.metadata.generation,
        last_transition_time: now_time(),
    };
    if let Some(o) = old.conditions.iter().find(|c| c.type_ == "Ready") {
        if o.status == status {
            c.last_transition_time = o.last_transition_time.clone();
        }
    }
    c
}

async fn patch_status(
    api: &Api<CrawlSchedule>,
    name: &str,
    old: &CrawlScheduleStatus,
    st: &CrawlScheduleStatus,
) -> Result<(), Error> {
    if st != old {
        // A merge patch leaves out what it does not name: cleared fields
        // are sent as null (and `active` as an empty list).
        let mut v = serde_json::to_value(st).unwrap_or_default();
        for k in [
            "lastScheduleTime",
            "nextScheduleTime",
            "lastSuccessfulTime",
            "lastResult",
        ] {
            if v.get(k).is_none() {
                v[k] = serde_json::Value::Null;
            }
        }
        if v.get("active").is_none() {
            v["active"] = serde_json::json!([]);
        }
        let patch = serde_json::json!({ "status": v });
        api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_downtime_only_the_latest_missed_slot_runs() {
        let w = webdata_core::schedule::When::parse(None, Some("10m"), None, 0).expect("every");
        // Last run at 0; now is 35 minutes later: slots 10, 20, 30 were
        // missed; one run, for 30.
        assert_eq!(due_slot(&w, 0, 35 * 60_000), Some(30 * 60_000));
        assert_eq!(due_slot(&w, 30 * 60_000, 35 * 60_000), None);
        assert_eq!(due_slot(&w, 0, 9 * 60_000), None);
    }

    #[test]
    fn each_slot_has_its_own_job_name() {
        assert_eq!(job_name("docs", 120_000), "docs-2");
        assert_ne!(job_name("docs", 60_000), job_name("docs", 120_000));
    }
}
