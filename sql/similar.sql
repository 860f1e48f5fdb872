-- simdup: verified similarity search.
--
-- simdup_similar(tbl, query, threshold) returns the rows whose exact Jaccard similarity of
-- character k-shingles with the query, jaccard(body, query, k), is at least the threshold.
-- Candidates come from a GIN index on MinHash LSH bands whose S-curve finds a pair at the
-- threshold with probability >= recall (0.99 by default; minhash_choose_bands(n, t, recall));
-- each candidate is verified exactly, so precision is exact and recall is the S-curve's
-- (>= recall at the threshold, more above it). docs/similar.md.
--
-- What simdup_enable_similar('docs', 'body', 0.5) does, as plain DDL (run it yourself to build the
-- index CONCURRENTLY, or to choose its name or tablespace):
--
--   SELECT * FROM minhash_choose_bands(128, 0.5, 0.99);           -- 35 bands x 3 rows
--   CREATE INDEX docs_body_similar_idx ON docs USING gin (_simdup_similar_bands(body, 5, 35, 3));
--
-- No column is added: the index expression computes the signature (35 x 3 = 105 values) once
-- per inserted or updated row. simdup_similar reads k, bands and rows back from the index
-- expression in the catalog, so the index is the whole configuration; DROP INDEX undoes it.

-- The LSH band values of a text for a verified search: bands hashes of rows MinHash values each
-- (a signature of exactly bands * rows values). Inlinable (LANGUAGE sql, one expression,
-- IMMUTABLE, not STRICT, no SET clause): the index expression and the query's are the same
-- expression after inlining. The functions inside check k, bands and rows (22023).
CREATE FUNCTION _simdup_similar_bands(body text, k integer, bands integer, rows integer) RETURNS bigint[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN minhash_bands(minhash(body, k, bands * rows), bands, rows);
COMMENT ON FUNCTION _simdup_similar_bands(text, integer, integer, integer) IS
  'simdup (internal): LSH band values of the character k-shingles of a text, minhash_bands(minhash(body, k, bands*rows), bands, rows): the GIN index expression of simdup_enable_similar; NULL for text without shingles';

-- The similarity indexes of a table: (index, text expression, k, bands, rows), read from the
-- index expressions in the catalog (src/similarity/search.rs), oldest first. The expression is SQL text
-- as the caller's search_path prints it (simdup_similar's: pg_catalog, names outside it
-- qualified), for the caller's dynamic SQL.
CREATE FUNCTION _simdup_similar_indexes(tbl regclass)
RETURNS TABLE (index regclass, text_expr text, k integer, bands integer, rows integer)
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_similar_indexes_wrapper';
COMMENT ON FUNCTION _simdup_similar_indexes(regclass) IS
  'simdup (internal): the valid GIN indexes of a table on _simdup_similar_bands(expr, k, bands, rows), oldest first, with expr (SQL text), k, bands and rows read from their expressions in the catalog; then the similarity dedup trigger''s short-text indexes on _simdup_similar_short_bands(expr, threshold), with k = 3 and their bands and rows; then its containment indexes on _simdup_similar_keys(expr, k, containment), with their k and NULL bands and rows';

-- The dedup trigger by verified similarity (src/similarity/trigger.rs), installed by
-- simdup_enable_similar(..., on_duplicate => ...) as
--   CREATE TRIGGER simdup_dedup_similar BEFORE INSERT OR UPDATE ON docs FOR EACH ROW
--       EXECUTE FUNCTION simdup_similar_dedup_trigger('reject', '0.5', '5', '35', '3', 'body', 'id');
CREATE FUNCTION simdup_similar_dedup_trigger() RETURNS trigger
LANGUAGE c
AS 'MODULE_PATHNAME', 'simdup_similar_dedup_trigger';
COMMENT ON FUNCTION simdup_similar_dedup_trigger() IS
  'simdup: BEFORE INSERT OR UPDATE row trigger of simdup_enable_similar(..., on_duplicate => ...), arguments (mode, threshold, k, bands, rows, text_column, key_column[, containment]): a row whose text has exact Jaccard similarity (character k-shingles) >= threshold with a stored row sharing one of its LSH bands (the similarity index''s candidates), or containment >= containment with a stored row sharing a band (both texts of at least 50 shingles) or whose containment keys meet its own (the containment index''s candidates), or, the shorter of two texts under 50 characters, Jaccard similarity of character 3-shingles >= threshold with any of these or a stored row sharing a short band (the short-text index''s candidates), raises 23505 (reject), is not stored (skip), or is stored with dup_of = the smallest such key (mark); safe under concurrency (lock stripes of the band values, of the prefix filters of the shingle sets of small and short texts, and of the containment keys)';

-- Equips a table for simdup_similar: one GIN index on the LSH bands of text_column; with
-- on_duplicate ('reject', 'skip' or 'mark'), also the dedup trigger simdup_dedup_similar above
-- (the table needs a single-column primary key; mark adds dup_of), and with containment (0.8 by
-- default, NULL for none), the trigger's second rule (a stored row holding that share of the
-- smaller text's shingles) and its containment index.
CREATE FUNCTION simdup_enable_similar(tbl regclass, text_column name, threshold double precision DEFAULT 0.5,
                                      k integer DEFAULT 5, recall double precision DEFAULT 0.99,
                                      on_duplicate text DEFAULT NULL, containment double precision DEFAULT 0.8)
RETURNS TABLE (index regclass, bands integer, rows integer, p_at_threshold double precision)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET extra_float_digits = 3
AS $$
DECLARE
    rel record;
    col record;
    pk record;
    b integer;
    r integer;
    idx text;
    trigger_args text;
BEGIN
    IF tbl IS NULL OR text_column IS NULL OR threshold IS NULL OR k IS NULL OR recall IS NULL THEN
        RAISE EXCEPTION 'table, text column, threshold, k and recall must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO rel FROM @extschema@._simdup_owned_table(tbl, 'rpm');
    SELECT t.typcategory, c.typ INTO col
    FROM @extschema@._simdup_column(tbl, text_column) c JOIN pg_type t ON t.oid = c.typ;  -- 42703
    IF col.typcategory <> 'S' THEN
        RAISE EXCEPTION 'column "%" of relation % is of type %, not a string type', text_column, tbl, col.typ
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    PERFORM @extschema@._simdup_check_similarity(threshold, recall);  -- 22023 (src/args.rs)
    PERFORM @extschema@._simdup_check_shingle_size(k);                 -- 22023 (src/args.rs)
    SELECT c.bands, c.rows INTO b, r FROM @extschema@.minhash_choose_bands(128, threshold, recall) c;

    -- Dedup arguments, checked before anything is changed (containment is the dedup trigger's
    -- rule: without on_duplicate it is not used).
    IF on_duplicate IS NOT NULL THEN
        -- 22023 for an unknown mode or a bad containment (src/dedup/similar.rs), then 0A000 / 55000.
        PERFORM @extschema@._simdup_similar_dedup_trigger_args(on_duplicate, threshold, k, b, r, text_column, '', containment);
        SELECT * INTO pk FROM @extschema@._simdup_dedup_key(tbl);
        trigger_args := @extschema@._simdup_similar_dedup_trigger_args(on_duplicate, threshold, k, b, r,
                                                                       text_column, pk.key_column, containment);
        IF EXISTS (SELECT FROM pg_trigger t WHERE t.tgrelid = tbl AND t.tgname IN ('simdup_dedup', 'simdup_dedup_similar')) THEN
            RAISE EXCEPTION 'table % already has a simdup dedup trigger', tbl
                USING ERRCODE = 'duplicate_object',
                      HINT = 'A table is deduplicated by one trigger: simdup_disable(table) or simdup_disable_similar(table) removes it.';
        END IF;
    END IF;

    -- <table>_<column>_similar_idx (_simdup_index_name: clipped, numbered if taken: a second
    -- similarity index of the column, e.g. for another threshold, gets its own name).
    idx := @extschema@._simdup_index_name(tbl, rel.relname || '_' || text_column, '_similar_idx');
    -- For dedup without GIN's pending list: every insert searches the index, and a search reads
    -- the whole pending list (6 ms a row at 2,000 rows, against 0.55 ms with fastupdate off).
    EXECUTE format('CREATE INDEX %I ON %s USING gin (@extschema@._simdup_similar_bands(%I, %s, %s, %s))%s',
                   idx, tbl, text_column, k, b, r,
                   CASE WHEN on_duplicate IS NOT NULL THEN ' WITH (fastupdate = off)' ELSE '' END);

    IF on_duplicate IS NOT NULL THEN
        -- The short-text index: the candidates of the trigger's short-text rule, the LSH bands of
        -- the 3-shingles of texts of at most 100 distinct 3-shingles (NULL for other texts).
        -- The threshold is written in full (extra_float_digits = 3): the trigger finds the index
        -- by it.
        EXECUTE format('CREATE INDEX %I ON %s USING gin (@extschema@._simdup_similar_short_bands(%I, %L::double precision)) WITH (fastupdate = off)',
                       @extschema@._simdup_index_name(tbl, rel.relname || '_' || text_column, '_similar_short_idx'),
                       tbl, text_column, threshold);
        -- The containment index: the candidates of the containment rule for tiny texts, their
        -- containment prefixes among every text's sketch (its 32 rarest shingles) and back.
        IF containment IS NOT NULL THEN
            EXECUTE format('CREATE INDEX %I ON %s USING gin (@extschema@._simdup_similar_keys(%I, %s, %L::double precision)) WITH (fastupdate = off)',
                           @extschema@._simdup_index_name(tbl, rel.relname || '_' || text_column, '_similar_keys_idx'),
                           tbl, text_column, k, containment);
        END IF;
        PERFORM @extschema@._simdup_install_dedup_trigger(tbl, 'simdup_dedup_similar', 'simdup_similar_dedup_trigger',
                                                          trigger_args, on_duplicate = 'mark', pk.key_type);
    END IF;

    RETURN QUERY
    SELECT format('%I.%I', n.nspname, idx)::regclass, b, r, @extschema@.minhash_s_curve(threshold, b, r)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tbl;
END
$$;
COMMENT ON FUNCTION simdup_enable_similar(regclass, name, double precision, integer, double precision, text, double precision) IS
  'simdup: equips a table for simdup_similar and jaccard(text_column, q) >= t queries: a GIN index <table>_<column>_similar_idx on the LSH bands of text_column (_simdup_similar_bands(text_column, k, bands, rows), no column added), with bands x rows (<= 128) chosen so that a pair of character-k-shingle Jaccard similarity threshold (default 0.5, k default 5) becomes a candidate with probability >= recall (default 0.99): minhash_choose_bands(128, threshold, recall). on_duplicate => ''reject'' | ''skip'' | ''mark'' also installs the dedup trigger simdup_dedup_similar (BEFORE INSERT OR UPDATE) a second GIN index <table>_<column>_similar_short_idx on the 3-shingle bands of short texts (_simdup_similar_short_bands(text_column, threshold)) and, with containment (default 0.8; NULL: none), a third, <table>_<column>_similar_keys_idx, on the containment keys of every text (_simdup_similar_keys(text_column, k, containment)): a row with Jaccard similarity >= threshold to a stored row among the indexes'' candidates (or one of them holding at least containment of the smaller text''s shingles: an added header, footer or paragraph; or, when the shorter text has fewer than 50 characters, Jaccard similarity of character 3-shingles >= threshold: a typo in a short text) raises 23505, is not stored, or is stored with dup_of (added, the primary key''s type) = the smallest such key; safe under concurrency; needs a single-column primary key and a text or varchar column; on a Citus distributed table the trigger on each shard refuses every write but the coordinator''s checked writes (plain INSERT, COPY and text-changing UPDATE there, simdup_insert), which check rows across shards. Returns the index, bands, rows and that probability. Requires owning the table';

-- Removes what simdup_enable_similar added: the dedup trigger (and dup_of, if it marked) and
-- the table's similarity indexes.
CREATE FUNCTION simdup_disable_similar(tbl regclass) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    mode text;
    idx regclass;
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM @extschema@._simdup_owned_table(tbl, 'rpm');  -- 42501 unless the caller owns it
    -- The trigger's first argument is its mode (encode(..., 'escape') shows the NUL separators
    -- as \000).
    SELECT split_part(encode(t.tgargs, 'escape'), '\000', 1) INTO mode
    FROM pg_trigger t WHERE t.tgrelid = tbl AND t.tgname = 'simdup_dedup_similar';
    IF FOUND THEN
        PERFORM @extschema@._simdup_trigger_ddl(format('DROP TRIGGER simdup_dedup_similar ON %s', tbl));
        IF mode = 'mark' THEN
            EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS dup_of', tbl);
        END IF;
    END IF;
    FOR idx IN SELECT s.index FROM @extschema@._simdup_similar_indexes(tbl) s LOOP
        EXECUTE format('DROP INDEX %s', idx);
    END LOOP;
END
$$;
COMMENT ON FUNCTION simdup_disable_similar(regclass) IS
  'simdup: removes what simdup_enable_similar added to a table: the dedup trigger simdup_dedup_similar and its dup_of column (if any), and every similarity index of the table. Requires owning the table';

-- The rows of tbl whose jaccard(text, query, k) >= threshold, most similar first (ties by ctid).
-- Join on ctid for the rows themselves:
--   SELECT d.*, s.similarity FROM simdup_similar('docs', $1) s JOIN docs d ON d.ctid = s.ctid;
-- The choice of index, its errors and the search are in Rust (src/similarity/search.rs): one query over
-- SPI as the caller, planned once per backend. The search_path is pinned for the names it
-- prints into that query; enable_seqscan is off because the bands expression in a sequential
-- scan's filter would compute a MinHash for every row, which the planner cannot see.
CREATE FUNCTION simdup_similar(tbl regclass, query text, threshold double precision DEFAULT 0.5,
                               min_recall double precision DEFAULT 0.99)
RETURNS TABLE (ctid tid, similarity double precision)
LANGUAGE c STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS 'MODULE_PATHNAME', 'simdup_similar_wrapper';
COMMENT ON FUNCTION simdup_similar(regclass, text, double precision, double precision) IS
  'simdup: the rows of tbl whose exact Jaccard similarity of character k-shingles with query (jaccard(text_column, query, k)) is at least threshold (default 0.5), most similar first: (ctid, similarity). Candidates from the GIN index of simdup_enable_similar (LSH bands, k read from it), each verified exactly: precision is exact, recall at the threshold is minhash_s_curve(threshold, bands, rows) >= min_recall (default 0.99; 22023 when the index cannot reach it). NULL query: no rows';
