-- Change tracking: the last snapshot of each page an organization scraped
-- with the `changeTracking` format, per tag ("" for none). `url_key` is the
-- crawl frontier's dedup key of the URL; `site` its origin (scheme, host,
-- port), so a crawl can find the pages of a previous crawl that are gone.
-- `markdown` is the main-content markdown compared; `scraped_at` unix ms.
CREATE TABLE change_snapshots (
    org_id TEXT NOT NULL,
    tag TEXT NOT NULL,
    url_key TEXT NOT NULL,
    url TEXT NOT NULL,
    site TEXT NOT NULL,
    markdown TEXT NOT NULL,
    scraped_at BIGINT NOT NULL,
    crawl_id TEXT,
    PRIMARY KEY (org_id, tag, url_key)
);
CREATE INDEX change_snapshots_site ON change_snapshots (org_id, tag, site);
CREATE INDEX change_snapshots_age ON change_snapshots (scraped_at);
