-- Why pages failed: the error code next to the message of a failed URL, and
-- the URLs robots.txt kept out of a crawl (GET /v1/crawl/{id}/errors).
ALTER TABLE frontier ADD COLUMN error_code TEXT;

CREATE TABLE crawl_robots_blocked (
    crawl_id TEXT NOT NULL,
    url TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (crawl_id, url)
);
