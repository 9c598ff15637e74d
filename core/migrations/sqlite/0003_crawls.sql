-- Durable crawls: the crawl row, its frontier (one row per normalised URL),
-- stored documents and events, each numbered per crawl (cursor and SSE ids).
CREATE TABLE crawls (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    key_id TEXT,
    status TEXT NOT NULL,
    url TEXT NOT NULL,
    request TEXT NOT NULL,
    max_pages BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    total BIGINT NOT NULL DEFAULT 0,
    completed BIGINT NOT NULL DEFAULT 0,
    failed BIGINT NOT NULL DEFAULT 0,
    credits_used BIGINT NOT NULL DEFAULT 0,
    doc_seq BIGINT NOT NULL DEFAULT 0,
    event_seq BIGINT NOT NULL DEFAULT 0,
    error_code TEXT,
    error_message TEXT,
    updated_at BIGINT NOT NULL
);
CREATE INDEX crawls_org ON crawls (org_id, created_at);
CREATE INDEX crawls_status ON crawls (status);

CREATE TABLE frontier (
    crawl_id TEXT NOT NULL,
    url_key TEXT NOT NULL,
    url TEXT NOT NULL,
    depth BIGINT NOT NULL,
    source TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    not_before BIGINT NOT NULL DEFAULT 0,
    lease_until BIGINT,
    worker TEXT,
    error TEXT,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (crawl_id, url_key)
);
CREATE INDEX frontier_ready ON frontier (state, not_before);
CREATE INDEX frontier_crawl_state ON frontier (crawl_id, state);

CREATE TABLE crawl_documents (
    crawl_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    url TEXT NOT NULL,
    document TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (crawl_id, seq)
);

CREATE TABLE crawl_events (
    crawl_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (crawl_id, seq)
);
