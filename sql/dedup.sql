-- simdup: the dedup trigger function (src/dedup/). simdup_enable(tbl, text_column,
-- on_duplicate => ...) (sql/enable.sql) installs it, for a table with a single-column primary
-- key, as
--
--   ALTER TABLE docs ADD COLUMN dup_of <type of the primary key>;          -- 'mark' only
--   CREATE TRIGGER simdup_dedup BEFORE INSERT OR UPDATE ON docs FOR EACH ROW
--       EXECUTE FUNCTION simdup_dedup_trigger('reject', '10', 'body', 'simhash', 'id');
--
-- (arguments: on_duplicate, max_distance, text column ('' when an existing bigint fingerprint
-- column was adopted), fingerprint column, primary key column: src/dedup/config.rs writes and
-- reads them). It runs no SQL: it reads the block indexes and the heap directly.
CREATE FUNCTION simdup_dedup_trigger() RETURNS trigger
LANGUAGE c
AS 'MODULE_PATHNAME', 'simdup_dedup_trigger';
COMMENT ON FUNCTION simdup_dedup_trigger() IS
  'simdup: the dedup trigger function installed by simdup_enable(..., on_duplicate => ...) as BEFORE INSERT OR UPDATE FOR EACH ROW, arguments (on_duplicate, max_distance, text_column or '''', fingerprint_column, key_column): computes simhash of the new text, takes the row''s advisory lock stripes, finds the near-duplicate with the smallest key through the block indexes, then rejects (23505, constraint simdup_dedup), skips or marks (dup_of) the row';
