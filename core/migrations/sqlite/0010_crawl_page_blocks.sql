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

-- crawl_blocks as one B-tree keyed by (crawl_id, hash) instead of a rowid
-- table plus its primary-key index: a fold writes half the pages.
CREATE TABLE crawl_blocks_new (
    crawl_id TEXT NOT NULL,
    hash TEXT NOT NULL,
    pages BIGINT NOT NULL,
    PRIMARY KEY (crawl_id, hash)
) WITHOUT ROWID;
INSERT INTO crawl_blocks_new (crawl_id, hash, pages) SELECT crawl_id, hash, pages FROM crawl_blocks;
DROP TABLE crawl_blocks;
ALTER TABLE crawl_blocks_new RENAME TO crawl_blocks;
