-- simdup: dedup on insert (issue #4). simdup_enable(tbl, text_column, on_duplicate => ...) in
-- sql/search.sql installs, for a table with a single-column primary key:
--
--   ALTER TABLE docs ADD COLUMN dup_of <type of the primary key>;          -- 'mark' only
--   CREATE TRIGGER simdup_dedup BEFORE INSERT OR UPDATE ON docs FOR EACH ROW
--       EXECUTE FUNCTION simdup_dedup_trigger('reject', '10', 'body', 'simhash', 'id');
--
-- (arguments: on_duplicate, max_distance, text column ('' when an existing bigint fingerprint
-- column was adopted), fingerprint column, primary key column), and records on_duplicate and
-- max_distance in simdup_tables. simdup_disable drops the trigger (and dup_of).
--
-- The trigger (src/dedup.rs, where the argument for its correctness under concurrency is
-- written down) computes simhash(NEW.text_column) itself, takes k + 1 transaction-scoped
-- advisory locks (pg_advisory_xact_lock(table OID, stripe), stripes from
-- simdup_lock_stripes(fp, k)), then looks up the near-duplicate with the smallest primary key
-- through the block indexes (simdup_match) and
--   reject: raises unique_violation (23505), DETAIL Key (id)=(…) is at Hamming distance d;
--   skip:   drops the row (the INSERT's or COPY's row count does not include it);
--   mark:   stores the row with dup_of = that key (NULL when there is none).
--
-- SET search_path: the lookup's names are schema-qualified anyway. SET enable_seqscan: the
-- lookup's generic plan, made per table and session (often while the table is empty) and made
-- again each time the table has doubled (src/dedup.rs), must use the block indexes.
CREATE FUNCTION simdup_dedup_trigger() RETURNS trigger
LANGUAGE c
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS 'MODULE_PATHNAME', 'simdup_dedup_trigger';
