-- Screenshots and other generated files, served through signed URLs until they expire.
CREATE TABLE blobs (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    content_type TEXT NOT NULL,
    data BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX blobs_expiry ON blobs (expires_at);
CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
