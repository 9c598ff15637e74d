-- How many pages of a crawl each markdown block appeared on (boilerplate).
CREATE TABLE crawl_blocks (
    crawl_id TEXT NOT NULL,
    hash TEXT NOT NULL,
    pages BIGINT NOT NULL,
    PRIMARY KEY (crawl_id, hash)
);
