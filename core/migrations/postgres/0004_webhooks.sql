-- Webhooks: organization endpoints, the signing-secret rotation overlap,
-- and a durable outbox of deliveries (retries, dead letters).
ALTER TABLE organizations ADD COLUMN previous_webhook_secret TEXT;
ALTER TABLE organizations ADD COLUMN previous_secret_until BIGINT;
ALTER TABLE crawls ADD COLUMN webhook_seq BIGINT NOT NULL DEFAULT 0;

CREATE TABLE webhook_endpoints (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id);

CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    event_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    crawl_id TEXT NOT NULL,
    endpoint_id TEXT,
    url TEXT NOT NULL,
    event_type TEXT NOT NULL,
    body TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    state TEXT NOT NULL,
    lease_until BIGINT,
    last_status BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL,
    finished_at BIGINT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_org ON webhook_deliveries (org_id, state);
