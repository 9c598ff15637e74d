-- Organizations, keys, credits, limits and idempotency. Times are unix
-- milliseconds (BIGINT) so both backends share one schema and one set of queries.

CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    credits BIGINT NOT NULL DEFAULT 0 CHECK (credits >= 0),
    spend_cap BIGINT,
    period TEXT NOT NULL DEFAULT '',
    period_spent BIGINT NOT NULL DEFAULT 0,
    rate_limit_per_minute BIGINT NOT NULL,
    concurrency_limit BIGINT NOT NULL,
    webhook_secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    person TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    revoked_at BIGINT,
    budget BIGINT,
    spent BIGINT NOT NULL DEFAULT 0,
    rate_limit_per_minute BIGINT,
    concurrency_limit BIGINT,
    replaced_by TEXT
);
CREATE INDEX api_keys_org ON api_keys (org_id);

CREATE TABLE audit_log (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    key_id TEXT,
    action TEXT NOT NULL,
    detail TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX audit_log_org ON audit_log (org_id, at);

CREATE TABLE credit_ledger (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    key_id TEXT,
    operation TEXT NOT NULL,
    reserved BIGINT NOT NULL,
    settled BIGINT,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    settled_at BIGINT
);
CREATE INDEX credit_ledger_org ON credit_ledger (org_id, created_at);

CREATE TABLE idempotency_keys (
    org_id TEXT NOT NULL,
    idem_key TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    state TEXT NOT NULL,
    status BIGINT,
    body TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, idem_key)
);

CREATE TABLE rate_windows (
    subject TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    hits BIGINT NOT NULL,
    PRIMARY KEY (subject, window_start)
);

CREATE TABLE inflight (
    id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX inflight_subject ON inflight (subject, expires_at);
