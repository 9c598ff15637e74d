-- Block hashes shrink from 128 to 64 bits: a block's hash is now the first
-- 16 hex digits of the same XXH3-128 value (see webdata_content::boilerplate).
-- Counts already taken are kept: each stored hash is cut to its first 16
-- digits, so a crawl that runs across the upgrade keeps its statistics.
--
-- The count index holds only blocks seen on two pages or more. Readers ask
-- for blocks on at least half of a crawl's pages (never fewer than three),
-- so singletons (97.6% of the rows of a 2,469-page docs crawl) were written
-- into the index at every fold for nothing: the fold's upserts wrote two
-- B-trees where one is needed.
CREATE TABLE crawl_blocks_new (
    crawl_id TEXT NOT NULL,
    hash TEXT NOT NULL,
    pages BIGINT NOT NULL,
    PRIMARY KEY (crawl_id, hash)
) WITHOUT ROWID;
INSERT INTO crawl_blocks_new (crawl_id, hash, pages)
    SELECT crawl_id, substr(hash, 1, 16), SUM(pages) FROM crawl_blocks
    GROUP BY crawl_id, substr(hash, 1, 16);
DROP TABLE crawl_blocks;
ALTER TABLE crawl_blocks_new RENAME TO crawl_blocks;
CREATE INDEX crawl_blocks_frequent ON crawl_blocks (crawl_id, pages) WHERE pages >= 2;

-- The pages not yet counted: each row's hashes cut the same way (and kept
-- distinct within the row).
UPDATE crawl_page_blocks SET hashes = (
    WITH RECURSIVE split (tok, rest) AS (
        SELECT '', crawl_page_blocks.hashes || ' '
        UNION ALL
        SELECT substr(rest, 1, instr(rest, ' ') - 1), substr(rest, instr(rest, ' ') + 1)
        FROM split WHERE rest <> ''
    )
    SELECT COALESCE(group_concat(t, ' '), '')
    FROM (SELECT DISTINCT substr(tok, 1, 16) AS t FROM split WHERE tok <> '')
);
