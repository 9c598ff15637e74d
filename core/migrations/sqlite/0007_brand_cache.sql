-- Brand lookups, one row per host (Unicode, no `www.`, `:port` when not the
-- default). `brand` is the stored lookup as JSON (the Brand plus the ids of
-- the hosted image copies); `fetched_at` is when the site was read.
CREATE TABLE brand_cache (
    host TEXT PRIMARY KEY,
    brand TEXT NOT NULL,
    fetched_at BIGINT NOT NULL
);
