-- Change tracking's `json` mode: the fields the extract model read from the
-- snapshot's page (a JSON document), compared field by field with the next
-- scrape's. NULL for snapshots taken without the `json` mode.
ALTER TABLE change_snapshots ADD COLUMN fields TEXT;
