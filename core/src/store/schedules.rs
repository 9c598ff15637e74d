//! Scheduled crawls and their runs. A run is started by whichever
//! scheduler claims it: the claim moves `next_run_at` from the value it read
//! to the next slot and inserts the run in one transaction, so replicas (or
//! a restarted process) never start one run twice.

use super::webhooks::{insert_delivery, NewDelivery};
use super::{new_id, now_ms, rfc3339, Store, StoreResult};
use sqlx::Row;

/// A stored schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleRow {
    pub id: String,
    pub org_id: String,
    pub key_id: Option<String>,
    /// The schedule as created or last changed (JSON).
    pub spec: String,
    pub suspended: bool,
    pub next_run_at: Option<i64>,
    pub last_run_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// A run of a schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: String,
    pub schedule_id: String,
    pub org_id: String,
    /// The slot it was due at.
    pub scheduled_for: i64,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    /// starting, running, completed, failed, cancelled, skipped, missed.
    pub state: String,
    pub crawl_id: Option<String>,
    /// Pages by change status (JSON), once the crawl ended.
    pub summary: Option<String>,
    pub message: Option<String>,
}

impl RunRow {
    /// Still starting or running.
    pub fn is_open(&self) -> bool {
        self.state == "starting" || self.state == "running"
    }
}

const SCHEDULE_COLUMNS: &str =
    "id, org_id, key_id, spec, suspended, next_run_at, last_run_at, created_at, updated_at";
const RUN_COLUMNS: &str = "id, schedule_id, org_id, scheduled_for, started_at, finished_at, state, crawl_id, summary, message";

fn schedule_row(r: &sqlx::any::AnyRow) -> StoreResult<ScheduleRow> {
    Ok(ScheduleRow {
        id: r.try_get("id")?,
        org_id: r.try_get("org_id")?,
        key_id: r.try_get("key_id")?,
        spec: r.try_get("spec")?,
        suspended: r.try_get::<i64, _>("suspended")? != 0,
        next_run_at: r.try_get("next_run_at")?,
        last_run_at: r.try_get("last_run_at")?,
        created_at: r.try_get("created_at")?,
        updated_at: r.try_get("updated_at")?,
    })
}

fn run_row(r: &sqlx::any::AnyRow) -> StoreResult<RunRow> {
    Ok(RunRow {
        id: r.try_get("id")?,
        schedule_id: r.try_get("schedule_id")?,
        org_id: r.try_get("org_id")?,
        scheduled_for: r.try_get("scheduled_for")?,
        started_at: r.try_get("started_at")?,
        finished_at: r.try_get("finished_at")?,
        state: r.try_get("state")?,
        crawl_id: r.try_get("crawl_id")?,
        summary: r.try_get("summary")?,
        message: r.try_get("message")?,
    })
}

/// How a claimed slot is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claimed {
    /// To be started: the run is `starting`.
    Start,
    /// Not started, with the reason (state `skipped` or `missed`).
    Skip(&'static str),
}

impl Store {
    pub fn new_schedule_id() -> String {
        new_id("sched")
    }

    /// Stores a new schedule.
    pub async fn create_schedule(&self, s: &ScheduleRow) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO schedules (id, org_id, key_id, spec, suspended, next_run_at, last_run_at, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&s.id)
        .bind(&s.org_id)
        .bind(&s.key_id)
        .bind(&s.spec)
        .bind(s.suspended as i64)
        .bind(s.next_run_at)
        .bind(s.last_run_at)
        .bind(s.created_at)
        .bind(s.updated_at)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The organization's schedule `id`.
    pub async fn get_schedule(&self, org_id: &str, id: &str) -> StoreResult<Option<ScheduleRow>> {
        let sql = format!("SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE id = $1 AND org_id = $2");
        let row = sqlx::query(&sql)
            .bind(id)
            .bind(org_id)
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(schedule_row).transpose()
    }

    /// The organization's schedules, oldest first.
    pub async fn list_schedules(&self, org_id: &str) -> StoreResult<Vec<ScheduleRow>> {
        let sql = format!(
            "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE org_id = $1 ORDER BY created_at, id"
        );
        let rows = sqlx::query(&sql)
            .bind(org_id)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(schedule_row).collect()
    }

    /// Replaces a schedule's spec, suspension and next slot.
    pub async fn update_schedule(
        &self,
        org_id: &str,
        id: &str,
        spec: &str,
        suspended: bool,
        next_run_at: Option<i64>,
    ) -> StoreResult<bool> {
        Ok(sqlx::query(
            "UPDATE schedules SET spec = $1, suspended = $2, next_run_at = $3, updated_at = $4 WHERE id = $5 AND org_id = $6",
        )
        .bind(spec)
        .bind(suspended as i64)
        .bind(next_run_at)
        .bind(now_ms())
        .bind(id)
        .bind(org_id)
        .execute(self.pool())
        .await?
        .rows_affected()
            == 1)
    }

    /// Deletes a schedule and its run history (crawls it started stay).
    pub async fn delete_schedule(&self, org_id: &str, id: &str) -> StoreResult<bool> {
        let mut tx = self.begin_write().await?;
        let n = sqlx::query("DELETE FROM schedules WHERE id = $1 AND org_id = $2")
            .bind(id)
            .bind(org_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if n == 1 {
            sqlx::query("DELETE FROM schedule_runs WHERE schedule_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(n == 1)
    }

    /// Schedules due at `now` (not suspended), most overdue first.
    pub async fn due_schedules(&self, now: i64, limit: i64) -> StoreResult<Vec<ScheduleRow>> {
        let sql = format!(
            "SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE suspended = 0 AND next_run_at IS NOT NULL \
             AND next_run_at <= $1 ORDER BY next_run_at, id LIMIT $2"
        );
        let rows = sqlx::query(&sql)
            .bind(now)
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(schedule_row).collect()
    }

    /// Claims the slot `due` of schedule `id`: moves `next_run_at` to `next`
    /// and records the run, in one transaction. None when another scheduler
    /// claimed it first (or it was changed, suspended or deleted).
    pub async fn claim_schedule_run(
        &self,
        id: &str,
        due: i64,
        next: Option<i64>,
        how: Claimed,
        message: Option<&str>,
    ) -> StoreResult<Option<RunRow>> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let moved = sqlx::query(
            "UPDATE schedules SET next_run_at = $1, last_run_at = $2 WHERE id = $3 AND next_run_at = $4 AND suspended = 0",
        )
        .bind(next)
        .bind(now)
        .bind(id)
        .bind(due)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if moved == 0 {
            return Ok(None);
        }
        let org_id: String = sqlx::query_scalar("SELECT org_id FROM schedules WHERE id = $1")
            .bind(id)
            .fetch_one(&mut *tx)
            .await?;
        let (state, finished) = match how {
            Claimed::Start => ("starting", None),
            Claimed::Skip(s) => (s, Some(now)),
        };
        let run = RunRow {
            id: new_id("run"),
            schedule_id: id.to_string(),
            org_id,
            scheduled_for: due,
            started_at: now,
            finished_at: finished,
            state: state.to_string(),
            crawl_id: None,
            summary: None,
            message: message.map(str::to_string),
        };
        sqlx::query(
            "INSERT INTO schedule_runs (id, schedule_id, org_id, scheduled_for, started_at, finished_at, state, crawl_id, summary, message) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, NULL, $8)",
        )
        .bind(&run.id)
        .bind(&run.schedule_id)
        .bind(&run.org_id)
        .bind(run.scheduled_for)
        .bind(run.started_at)
        .bind(run.finished_at)
        .bind(&run.state)
        .bind(&run.message)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(run))
    }

    /// A `starting` run got its crawl.
    pub async fn schedule_run_started(&self, run_id: &str, crawl_id: &str) -> StoreResult<()> {
        sqlx::query(
            "UPDATE schedule_runs SET state = 'running', crawl_id = $1 WHERE id = $2 AND state = 'starting'",
        )
        .bind(crawl_id)
        .bind(run_id)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Ends an open run with `state`; with `event`, queues that webhook
    /// event (type, data) for the schedule's own webhook (`hook_url`, signed
    /// with the organization's secret) and the organization's endpoints,
    /// in the same transaction. False when the run had already ended.
    pub async fn finish_schedule_run(
        &self,
        run: &RunRow,
        state: &str,
        summary: Option<&str>,
        message: Option<&str>,
        event: Option<(&str, serde_json::Value, Option<&str>)>,
    ) -> StoreResult<bool> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let n = sqlx::query(
            "UPDATE schedule_runs SET state = $1, summary = $2, message = $3, finished_at = $4 \
             WHERE id = $5 AND state IN ('starting', 'running')",
        )
        .bind(state)
        .bind(summary)
        .bind(message)
        .bind(now)
        .bind(&run.id)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if n == 0 {
            return Ok(false);
        }
        if let Some((event_type, data, hook_url)) = event {
            let event_id = format!("evt_{}", run.id);
            let body = serde_json::json!({
                "id": event_id,
                "type": event_type,
                "createdAt": rfc3339(now),
                "data": data,
            })
            .to_string();
            let mut deliveries = Vec::new();
            if let Some(url) = hook_url {
                deliveries.push(NewDelivery {
                    event_id: event_id.clone(),
                    endpoint_id: None,
                    url: url.to_string(),
                    event_type: event_type.to_string(),
                    body: body.clone(),
                });
            }
            let endpoints = sqlx::query(
                "SELECT id, url FROM webhook_endpoints WHERE org_id = $1 AND disabled_at IS NULL",
            )
            .bind(&run.org_id)
            .fetch_all(&mut *tx)
            .await?;
            for e in &endpoints {
                deliveries.push(NewDelivery {
                    event_id: event_id.clone(),
                    endpoint_id: Some(e.try_get("id")?),
                    url: e.try_get("url")?,
                    event_type: event_type.to_string(),
                    body: body.clone(),
                });
            }
            let crawl = run.crawl_id.as_deref().unwrap_or("");
            for d in &deliveries {
                insert_delivery(&mut tx, &run.org_id, crawl, d, now).await?;
            }
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Runs still starting or running, oldest first.
    pub async fn open_schedule_runs(&self, limit: i64) -> StoreResult<Vec<RunRow>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM schedule_runs WHERE state IN ('starting', 'running') \
             ORDER BY started_at, id LIMIT $1"
        );
        let rows = sqlx::query(&sql).bind(limit).fetch_all(self.pool()).await?;
        rows.iter().map(run_row).collect()
    }

    /// A schedule's runs, newest first.
    pub async fn schedule_runs(&self, schedule_id: &str, limit: i64) -> StoreResult<Vec<RunRow>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM schedule_runs WHERE schedule_id = $1 \
             ORDER BY started_at DESC, id DESC LIMIT $2"
        );
        let rows = sqlx::query(&sql)
            .bind(schedule_id)
            .bind(limit)
            .fetch_all(self.pool())
            .await?;
        rows.iter().map(run_row).collect()
    }

    /// Keeps the newest `keep` ended runs of a schedule (open runs stay).
    pub async fn trim_schedule_runs(&self, schedule_id: &str, keep: i64) -> StoreResult<u64> {
        let ended: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM schedule_runs WHERE schedule_id = $1 AND state NOT IN ('starting', 'running') \
             ORDER BY started_at DESC, id DESC",
        )
        .bind(schedule_id)
        .fetch_all(self.pool())
        .await?;
        let mut n = 0;
        for id in ended.iter().skip(keep.max(0) as usize) {
            n += sqlx::query("DELETE FROM schedule_runs WHERE id = $1")
                .bind(id)
                .execute(self.pool())
                .await?
                .rows_affected();
        }
        Ok(n)
    }
}
