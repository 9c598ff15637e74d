-- The dashboard: people, their organizations and roles, sessions,
-- invitations, password resets; a log of /v1 requests (usage and failures
-- by day); who created a key and when it was last used; endpoints that can
-- be disabled; usage alerts (low credits, spend cap) sent once per crossing;
-- the person behind each audit record.
CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE memberships (
    org_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user ON memberships (user_id);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    org_id TEXT,
    csrf TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE invitations (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    org_id TEXT NOT NULL,
    role TEXT NOT NULL,
    email TEXT,
    invited_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    accepted_by TEXT,
    accepted_at BIGINT,
    revoked_at BIGINT
);
CREATE INDEX invitations_org ON invitations (org_id, created_at);

CREATE TABLE password_resets (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);

CREATE TABLE request_log (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    key_id TEXT,
    method TEXT NOT NULL,
    route TEXT NOT NULL,
    status BIGINT NOT NULL,
    error_code TEXT,
    message TEXT,
    at BIGINT NOT NULL
);
CREATE INDEX request_log_org ON request_log (org_id, at);

ALTER TABLE api_keys ADD COLUMN created_by TEXT;
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at BIGINT;
ALTER TABLE organizations ADD COLUMN last_topup BIGINT NOT NULL DEFAULT 0;
ALTER TABLE organizations ADD COLUMN low_credit_threshold BIGINT;
ALTER TABLE organizations ADD COLUMN low_credit_alerted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE organizations ADD COLUMN cap_hit_period TEXT NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN cap_alert_period TEXT NOT NULL DEFAULT '';
ALTER TABLE organizations ADD COLUMN deleted_at BIGINT;
ALTER TABLE audit_log ADD COLUMN actor TEXT;
UPDATE organizations SET last_topup = credits;
