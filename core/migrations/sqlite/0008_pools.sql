-- Cluster mode: which WorkerPool runs a crawl, whether the operator has
-- admitted it (crawls made through the API in cluster mode wait for it),
-- whether its pages need a browser (render demand), and who launched it.
ALTER TABLE crawls ADD COLUMN pool TEXT NOT NULL DEFAULT 'default';
ALTER TABLE crawls ADD COLUMN admitted BIGINT NOT NULL DEFAULT 1;
ALTER TABLE crawls ADD COLUMN renders BIGINT NOT NULL DEFAULT 0;
ALTER TABLE crawls ADD COLUMN launcher TEXT NOT NULL DEFAULT 'local';
CREATE INDEX crawls_pool ON crawls (pool, status);
