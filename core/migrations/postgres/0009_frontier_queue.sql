-- Leasing walks queued URLs in (depth, created_at) order and expired leases
-- by deadline; these indexes let both stop after the batch instead of
-- sorting every waiting URL (lease latency stays flat at 100k URLs).
CREATE INDEX frontier_queue ON frontier (state, depth, created_at);
CREATE INDEX frontier_leases ON frontier (state, lease_until);
-- The old (state, not_before) index made planners sort every ready row.
DROP INDEX frontier_ready;
