-- Cached scrape results, keyed by the URL and every option that changes
-- the output (see worker::scrape::cache_key).
CREATE TABLE scrape_cache (
    cache_key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    document TEXT NOT NULL,
    billable BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX scrape_cache_created ON scrape_cache (created_at);
