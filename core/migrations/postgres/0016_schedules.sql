-- Scheduled crawls (POST /v1/schedules): `spec` is the schedule as created
-- (JSON: cron or every, timezone, the crawl or batch request, tag, webhook,
-- policies); `next_run_at` is claimed atomically by whichever scheduler
-- starts the run, so replicas never start one twice.
CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    key_id TEXT,
    spec TEXT NOT NULL,
    suspended INTEGER NOT NULL DEFAULT 0,
    next_run_at BIGINT,
    last_run_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX schedules_due ON schedules (next_run_at);
CREATE INDEX schedules_org ON schedules (org_id, created_at);

-- One row per run: `state` is starting, running, completed, failed,
-- cancelled, skipped (concurrency policy) or missed (starting deadline);
-- `summary` counts the pages by change status once the crawl ended.
CREATE TABLE schedule_runs (
    id TEXT PRIMARY KEY,
    schedule_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    scheduled_for BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    state TEXT NOT NULL,
    crawl_id TEXT,
    summary TEXT,
    message TEXT
);
CREATE INDEX schedule_runs_schedule ON schedule_runs (schedule_id, started_at);
CREATE INDEX schedule_runs_open ON schedule_runs (state);
