-- Readers of a crawl's documents (getCrawl, SSE, webhooks) ask for the
-- blocks on at least half its pages: `pages >= threshold`. Keyed by
-- (crawl_id, hash) alone, that read scanned every distinct block of the
-- crawl (hundreds of thousands on a large crawl: a status call took 240 ms
-- at 100,000 pages); with this index it reads only the frequent ones.
CREATE INDEX crawl_blocks_frequent ON crawl_blocks (crawl_id, pages);
