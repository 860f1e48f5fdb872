-- simdup: which k or threshold fits a table's own data (src/calibrate.rs; the histogram and its
-- valley: core/src/calibrate.rs).
--
--   SELECT * FROM simdup_calibrate('docs');                  -- 1,000 sampled rows
--   SELECT * FROM simdup_calibrate('docs', sample => 10000);
--
-- A sample of rows (TABLESAMPLE BERNOULLI, repeatable by seed); for each, its nearest other row
-- by Hamming distance (a table enabled with simdup_enable: hamming(fp, q) <= radius, served by
-- the block indexes) and its most similar other row by Jaccard among the candidates of the
-- table's first similarity index (a table enabled with simdup_enable_similar: rows sharing a
-- band, through the GIN index). Both read the table with ordinary queries as the caller.

CREATE FUNCTION _simdup_calibrate_settings(tbl regclass)
RETURNS TABLE (max_distance integer, threshold double precision)
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_calibrate_settings_wrapper';
COMMENT ON FUNCTION _simdup_calibrate_settings(regclass) IS
  'simdup (internal): the max_distance of a table''s SimHash dedup trigger and the threshold of its similarity dedup trigger (NULL where it has none), for simdup_calibrate; 0A000 for a Citus distributed table';

CREATE FUNCTION _simdup_calibrate_simhash(distances integer[], radius integer, table_rows double precision, current_k integer, seconds double precision)
RETURNS TABLE (method text, bucket text, rows bigint, bar text, note text)
LANGUAGE c IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_calibrate_simhash_wrapper';
COMMENT ON FUNCTION _simdup_calibrate_simhash(integer[], integer, double precision, integer, double precision) IS
  'simdup (internal): simdup_calibrate''s SimHash rows from each sampled row''s distance to its nearest other row (NULL: none within radius): a bucket per distance and one beyond the radius, a bar, the suggested k at the valley with the rows it flags and their 95 % interval, and the current k';

CREATE FUNCTION _simdup_calibrate_similarity(similarities double precision[], bands integer, rows integer, table_rows double precision, current_threshold double precision, seconds double precision)
RETURNS TABLE (method text, bucket text, rows bigint, bar text, note text)
LANGUAGE c IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_calibrate_similarity_wrapper';
COMMENT ON FUNCTION _simdup_calibrate_similarity(double precision[], integer, integer, double precision, double precision, double precision) IS
  'simdup (internal): simdup_calibrate''s similarity rows from each sampled row''s best Jaccard among the similarity index''s candidates (NULL: no candidate): buckets of 0.05 from 1 down and one for none, a bar, the suggested threshold at the valley with the rows it flags and their 95 % interval, the current threshold, and where the index finds a pair with probability below 0.99';

CREATE FUNCTION simdup_calibrate(tbl regclass, sample integer DEFAULT 1000, radius integer DEFAULT 12,
                                 seed double precision DEFAULT 0)
RETURNS TABLE (method text, bucket text, rows bigint, bar text, note text)
LANGUAGE plpgsql VOLATILE
-- enable_seqscan off: a sampled row's search must read the indexes; a sequential scan of the
-- table per sampled row would compute every row's fingerprint distance or bands (the sample
-- itself is a sample scan, which this setting does not touch).
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS $$
DECLARE
    -- simdup's schema, quoted, for the queries below (their search_path is pg_catalog's).
    ext text := (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                 WHERE e.extname = 'simdup');
    settings record;
    fp_column text;
    ix record;
    table_rows double precision;
    percent double precision;
    started timestamptz;
    distances integer[];
    similarities double precision[];
BEGIN
    IF tbl IS NULL OR sample IS NULL OR radius IS NULL OR seed IS NULL THEN
        RETURN;
    END IF;
    IF sample < 1 OR sample > 1000000 THEN
        RAISE EXCEPTION 'sample = % rows is out of range', sample
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Sample between 1 and 1000000 rows.';
    END IF;
    IF radius < 0 OR radius > 20 THEN
        RAISE EXCEPTION 'radius = % bits is out of range', radius
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Search between 0 and 20 bits; each bit more costs about twice the last.';
    END IF;
    SELECT s.max_distance, s.threshold INTO settings FROM @extschema@._simdup_calibrate_settings(tbl) s;
    SELECT t.fingerprint_column INTO fp_column FROM @extschema@.simdup_tables t WHERE t.tbl = simdup_calibrate.tbl;
    SELECT i.text_expr, i.k, i.bands, i.rows INTO ix
        FROM @extschema@._simdup_similar_indexes(tbl) i WHERE i.bands IS NOT NULL LIMIT 1;
    IF fp_column IS NULL AND ix.text_expr IS NULL THEN
        RAISE EXCEPTION 'table % has neither simdup block indexes nor a similarity index', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_enable(table, text_column) or simdup_enable_similar(table, text_column) first.';
    END IF;
    -- The table's size: the planner's estimate, counted when it has none.
    SELECT c.reltuples INTO table_rows FROM pg_class c WHERE c.oid = tbl;
    IF table_rows IS NULL OR table_rows < 1 THEN
        EXECUTE format('SELECT count(*) FROM %s', tbl) INTO table_rows;
    END IF;
    percent := least(100, 100.0 * sample / greatest(table_rows, 1));

    IF fp_column IS NOT NULL THEN
        started := clock_timestamp();
        EXECUTE format(
            'SELECT array_agg(n.d) FROM %1$s AS _simdup_s TABLESAMPLE BERNOULLI ($1) REPEATABLE ($2) '
            'CROSS JOIN LATERAL (SELECT min(%3$s.hamming(_simdup_t.%2$I, _simdup_s.%2$I)) AS d FROM %1$s AS _simdup_t '
            '  WHERE %3$s.hamming(_simdup_t.%2$I, _simdup_s.%2$I) <= %4$s AND _simdup_t.ctid <> _simdup_s.ctid) AS n '
            'WHERE _simdup_s.%2$I IS NOT NULL',
            tbl, fp_column, ext, radius)
            INTO distances USING percent, seed;
        RETURN QUERY SELECT * FROM @extschema@._simdup_calibrate_simhash(coalesce(distances, '{}'), radius, table_rows,
            settings.max_distance, extract(epoch FROM clock_timestamp() - started)::double precision);
    END IF;

    IF ix.text_expr IS NOT NULL THEN
        started := clock_timestamp();
        -- The index's expression is written unqualified: in the inner query it reads the inner
        -- scan's row, in the sample's LATERAL the sampled row.
        EXECUTE format(
            'SELECT array_agg(n.j) FROM (SELECT _simdup_s.ctid AS id, q.set, q.bands '
            '  FROM %1$s AS _simdup_s TABLESAMPLE BERNOULLI ($1) REPEATABLE ($2), '
            '  LATERAL (SELECT %3$s.shingles(%2$s, %4$s) AS set, %3$s._simdup_similar_bands(%2$s, %4$s, %5$s, %6$s) AS bands) q '
            '  WHERE q.set IS NOT NULL) AS _simdup_q '
            'CROSS JOIN LATERAL (SELECT max(%3$s.jaccard(%3$s.shingles(%2$s, %4$s), _simdup_q.set)) AS j FROM %1$s '
            '  WHERE %3$s._simdup_similar_bands(%2$s, %4$s, %5$s, %6$s) && _simdup_q.bands AND ctid <> _simdup_q.id) AS n',
            tbl, ix.text_expr, ext, ix.k, ix.bands, ix.rows)
            INTO similarities USING percent, seed;
        RETURN QUERY SELECT * FROM @extschema@._simdup_calibrate_similarity(coalesce(similarities, '{}'), ix.bands, ix.rows,
            table_rows, settings.threshold, extract(epoch FROM clock_timestamp() - started)::double precision);
    END IF;
END
$$;
COMMENT ON FUNCTION simdup_calibrate(regclass, integer, integer, double precision) IS
  'simdup: which k or threshold fits a table''s data. Over a sample of about `sample` rows (TABLESAMPLE BERNOULLI, the same rows for the same seed), each row''s distance to its nearest other row (a table enabled with simdup_enable; searched within radius bits through the block indexes) and its best Jaccard with another row among its similarity index''s candidates (a table enabled with simdup_enable_similar), as histograms: method, bucket, rows, a bar (its length grows with the logarithm of rows) and notes: the sample, the suggested k or threshold at the valley between the near-duplicates and the rest with the rows it flags (sampled, their 95 % interval, and about how many in the table), the dedup trigger''s current setting. Reads the table as the caller; 22023 for sample outside 1..1000000 or radius outside 0..20; 55000 for a table with neither kind of index; 0A000 for a Citus distributed table';
