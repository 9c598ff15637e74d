-- A crawl's documents are stored compressed (LZ4 block, the uncompressed
-- length first; see store/crawl/documents.rs): `document` is then empty.
-- Rows written before this migration keep their JSON in `document` and
-- have no `document_lz4`; readers take whichever is set. On the 2,469-page
-- mixed docs crawl the JSON was about 14 KB a page and most of what each
-- commit copied and wrote.
ALTER TABLE crawl_documents ADD COLUMN document_lz4 BLOB;
