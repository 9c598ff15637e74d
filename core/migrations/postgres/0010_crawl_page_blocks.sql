-- Boilerplate counting, batched. A page's commit appends its block hashes
-- here (one small row, written in key order) instead of upserting a counter
-- per block into crawl_blocks: those upserts land all over crawl_blocks'
-- index, and rewriting its pages on every commit was the crawl's write
-- bottleneck. Every few hundred pages, and when the crawl ends, the rows are
-- counted into crawl_blocks in one pass and deleted, in the transaction
-- that commits the pages. Readers add the rows still here to crawl_blocks'
-- counts, so the verdict is exact at every moment.
CREATE TABLE crawl_page_blocks (
    crawl_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    hashes TEXT NOT NULL,
    PRIMARY KEY (crawl_id, seq)
);
