-- simdup: near-duplicate search.
--
-- The query form: WHERE hamming(fp, q) <= k (or fp <~> q <= k, < k, or
-- simdup_match(fp, q, k), which inlines to it). On a column with simdup block indexes, the
-- planner step of src/search/planner.rs adds a Tid Scan path whose TID condition
-- ctid = ANY (_simdup_tids(tbl, column, q, k)) finds the rows within k through the indexes
-- (src/search/scan.rs: key ranges of the block values within each block's threshold, candidates
-- checked from the index alone, the heap read only for matches); the condition stays as the
-- scan's filter. The planner takes that path when its cost (probes and candidates) is below a
-- sequential scan's: on large tables, not on a few thousand rows.

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------
-- Inlinable: LANGUAGE sql, one expression, IMMUTABLE, not STRICT, no SET clause. A SQL-standard
-- body (RETURN), so the names inside are bound when the extension is created, whatever the
-- caller's search_path. _simdup_check_k raises 22023 for k outside 0..64 (folded away for a
-- constant k).
CREATE FUNCTION simdup_match(fp bigint, q bigint, k integer) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN hamming(fp, q) <= _simdup_check_k(k);
COMMENT ON FUNCTION simdup_match(bigint, bigint, integer) IS
  'simdup: true when hamming(fp, q) <= k (k in 0..64); inlined to that condition, which the block indexes of simdup_enable serve on large tables';

-- The n rows nearest to q, nearest first, ties by ctid, with their ctids: the rows the query
--   SELECT * FROM docs ORDER BY simhash <~> q, ctid LIMIT n
-- returns (which the planner step serves through the block indexes), for one plain table.
-- Rows without a fingerprint are not returned.
CREATE FUNCTION simdup_nearest(tbl regclass, q bigint, n integer, fingerprint_column name DEFAULT 'simhash')
RETURNS TABLE (ctid tid, fingerprint bigint, distance integer)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col smallint := (@extschema@._simdup_column(tbl, fingerprint_column)).attnum;
BEGIN
    -- On Citus the query below would run on the shards with this (the coordinator's) table
    -- OID, which names nothing there, or another relation.
    IF @extschema@._simdup_citus_distributed(tbl) THEN
        RAISE EXCEPTION 'simdup_nearest is not supported on distributed table %', tbl
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Use SELECT ... ORDER BY fp <~> q LIMIT n, which Citus runs on every shard.';
    END IF;
    -- _simdup_nearest_tids checks the caller's access and the table's kind, and returns the
    -- rows within the n-th distance (ties included); the limit picks n of them by ctid.
    RETURN QUERY EXECUTE format(
        'SELECT t.ctid, t.%1$I, @extschema@.hamming(t.%1$I, $1) FROM %2$s t '
        'WHERE t.ctid = ANY (@extschema@._simdup_nearest_tids($3, $4, $1, $2)) AND t.%1$I IS NOT NULL '
        'ORDER BY 3, 1 LIMIT $2',
        fingerprint_column, tbl)
    USING q, n::bigint, tbl::oid, col::integer;
END
$$;
COMMENT ON FUNCTION simdup_nearest(regclass, bigint, integer, name) IS
  'simdup: the n rows of tbl whose fingerprint column is nearest to q, exactly, nearest first, ties by ctid: (ctid, fingerprint, distance); the rows of SELECT ... ORDER BY fp <~> q, ctid LIMIT n, which the block indexes serve';
