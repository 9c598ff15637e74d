-- Batch scrape runs as a crawl whose URLs are given: its kind, and the
-- URLs (JSON array) the workers seed its frontier with.
ALTER TABLE crawls ADD COLUMN kind TEXT NOT NULL DEFAULT 'crawl';
ALTER TABLE crawls ADD COLUMN seed_urls TEXT;
