-- simdup: all near-duplicate pairs and groups of an equipped table.
--
-- The distinct fingerprints are read once and joined in memory on the values of each 16-bit
-- block within the block's threshold (src/batch.rs, simdup_core::pairs: about 16 bytes per
-- distinct fingerprint, never all pairs); identical fingerprints are collapsed first, so many
-- copies of one document cost nothing. The pairs of fingerprints are then expanded to rows by
-- one more scan of the table, hashed on the fingerprints that occur in a pair or more than once
-- (never a join of the table with itself: on Citus that would need a repartition join).

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------
-- The text column that verify => true reads (simdup_tables.text_column, checked to exist):
-- 22023 when the table was enabled with an adopted fingerprint column, which has no text.
CREATE FUNCTION _simdup_verify_column(tbl regclass) RETURNS name
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col name;
BEGIN
    SELECT s.text_column INTO col FROM @extschema@.simdup_tables s WHERE s.tbl = _simdup_verify_column.tbl;
    IF col IS NULL THEN
        RAISE EXCEPTION 'table % has no text column to verify pairs with', tbl
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'verify => true reads the text column simdup_enable fingerprints; a table enabled with an adopted fingerprint column has none.';
    END IF;
    PERFORM @extschema@._simdup_column(tbl, col);  -- 42703 when it was dropped or renamed
    RETURN col;
END
$$;
COMMENT ON FUNCTION _simdup_verify_column(regclass) IS
  'simdup (internal): the text column of an enabled table that simdup_pairs and simdup_groups read with verify => true; 22023 for a table without one';

-- All pairs of rows whose fingerprints are within distance k (identical fingerprints
-- included), each pair once, as their primary keys (a < b in the key's own order). With
-- verify => true only the pairs whose texts are near-duplicates too (_simdup_verified, the
-- dedup trigger's verification): Jaccard of character 5-shingles >= threshold, or containment
-- >= containment (NULL: none). Unverified, a table of n rows holds about n^2/2 * p false pairs
-- (p the chance that two unrelated texts fall within k: docs/quality.md, "Precision as the
-- table grows").
CREATE FUNCTION simdup_pairs(tbl regclass, k integer DEFAULT simdup_max_distance(), verify boolean DEFAULT false,
                             threshold double precision DEFAULT 0.5, containment double precision DEFAULT 0.8)
RETURNS TABLE (a text, b text, distance integer)
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    info record;
    body name;
BEGIN
    IF tbl IS NULL OR k IS NULL OR verify IS NULL THEN
        RETURN;  -- NULL in, nothing out (as a STRICT function), but containment may be NULL
    END IF;
    PERFORM @extschema@._simdup_check_k(k);
    SELECT * INTO info FROM @extschema@._simdup_table_info(tbl);
    IF verify THEN
        body := @extschema@._simdup_verify_column(tbl);
        -- 22023 for thresholds outside (0, 1], before any work.
        PERFORM @extschema@._simdup_verified('', '', threshold, containment);
    END IF;
    RETURN QUERY EXECUTE format(
        'WITH p AS MATERIALIZED (SELECT * FROM @extschema@._simdup_fingerprint_pairs($1, $3, $2)), '
        'd AS MATERIALIZED (SELECT x.%2$I AS fp FROM %3$s x WHERE x.%2$I IS NOT NULL GROUP BY x.%2$I HAVING count(*) > 1), '
        'r AS MATERIALIZED (SELECT x.%1$I AS key, x.%2$I AS fp, %4$s AS body FROM %3$s x '
        '                   WHERE x.%2$I IN (SELECT fa FROM p UNION SELECT fb FROM p UNION SELECT fp FROM d)) '
        'SELECT least(x.key, y.key)::text, greatest(x.key, y.key)::text, p.distance '
        'FROM p JOIN r x ON x.fp = p.fa JOIN r y ON y.fp = p.fb %5$s'
        'UNION ALL '
        'SELECT x.key::text, y.key::text, 0 FROM r x JOIN r y ON x.fp = y.fp AND x.key < y.key %6$s',
        info.key_column, info.fingerprint_column, tbl,
        CASE WHEN verify THEN format('x.%I::pg_catalog.text', body) ELSE 'NULL::pg_catalog.text' END,
        CASE WHEN verify THEN 'WHERE @extschema@._simdup_verified(x.body, y.body, $4, $5) ' ELSE '' END,
        CASE WHEN verify THEN 'AND @extschema@._simdup_verified(x.body, y.body, $4, $5)' ELSE '' END)
    USING tbl, k, info.fingerprint_column::text, threshold, containment;
END
$$;
COMMENT ON FUNCTION simdup_pairs(regclass, integer, boolean, double precision, double precision) IS
  'simdup: all pairs of rows of an enabled table whose fingerprints are within distance k (default simdup.max_distance), identical fingerprints included, each pair once: primary keys a < b as text, and the distance. verify => true keeps only the pairs whose texts are near-duplicates too, as the dedup trigger verifies: Jaccard of character 5-shingles >= threshold (default 0.5) or containment >= containment (default 0.8, NULL for none); unverified, unrelated rows within k make false pairs, more as the table grows';

-- Groups of near-duplicate rows, by method:
--   'components' (default): connected components of the near-duplicate graph (rows linked when
--     their fingerprints are within distance k). Chains join: a group can hold rows far more
--     than k apart (a-b and b-c within k, a-c not).
--   'leader': leader clustering in primary key order: the row with the smallest key not yet in
--     a group leads a new group, which every row within k of it that is not yet in a group
--     joins. Every member is within k of its group's leader (the group's smallest key), so no
--     group chains; a row whose near-duplicates all joined earlier groups whose leaders are
--     farther than k is in no group.
-- With verify => true rows are linked only by verified pairs (simdup_pairs(..., verify =>
-- true)): a false pair can join two unrelated groups into one component, and the chance that
-- some pair does grows with the table.
-- One row per grouped row (rows without a near-duplicate are left out). group_id numbers the
-- groups 1, 2, ... in the order of their smallest primary key, so it is deterministic; rows
-- come ordered by group_id, key.
CREATE FUNCTION simdup_groups(tbl regclass, k integer DEFAULT simdup_max_distance(), method text DEFAULT 'components',
                              verify boolean DEFAULT false, threshold double precision DEFAULT 0.5,
                              containment double precision DEFAULT 0.8)
RETURNS TABLE (key text, group_id bigint)
LANGUAGE plpgsql STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    info record;
    source text;
BEGIN
    IF tbl IS NULL OR k IS NULL OR method IS NULL OR verify IS NULL THEN
        RETURN;  -- NULL in, nothing out (as a STRICT function), but containment may be NULL
    END IF;
    PERFORM @extschema@._simdup_check_k(k);
    method := @extschema@._simdup_check_group_method(method);
    SELECT * INTO info FROM @extschema@._simdup_table_info(tbl);
    IF verify THEN
        -- The verified pairs' rows, numbered in key order; the graph of those numbers grouped
        -- in Rust (_simdup_graph_groups: components, or leaders in that order).
        RETURN QUERY EXECUTE format(
            'WITH p AS MATERIALIZED (SELECT p.a, p.b FROM @extschema@.simdup_pairs($1, $2, true, $3, $4) p), '
            'r AS MATERIALIZED (SELECT x.%1$I::pg_catalog.text AS key, row_number() OVER (ORDER BY x.%1$I) AS n '
            '                   FROM %2$s x WHERE x.%1$I::pg_catalog.text IN (SELECT a FROM p UNION SELECT b FROM p)), '
            'e AS MATERIALIZED (SELECT ra.n AS a, rb.n AS b FROM p JOIN r ra ON ra.key = p.a JOIN r rb ON rb.key = p.b), '
            'g AS (SELECT * FROM @extschema@._simdup_graph_groups((SELECT count(*) FROM r), '
            '                    ARRAY(SELECT e.a FROM e), ARRAY(SELECT e.b FROM e), $5)) '
            'SELECT r.key, dense_rank() OVER (ORDER BY g.first) FROM g JOIN r ON r.n = g.node ORDER BY 2, r.n',
            info.key_column, tbl)
        USING tbl, k, threshold, containment, method;
        RETURN;
    END IF;
    source := CASE method
        WHEN 'components' THEN 'SELECT fp, component FROM @extschema@._simdup_fingerprint_components($1, $3, $2)'
        ELSE 'SELECT fp, leader AS component FROM @extschema@._simdup_fingerprint_leaders($1, $3, $4, $2)'
    END;
    RETURN QUERY EXECUTE format(
        'WITH c AS (%4$s), '
        'r AS (SELECT x.%1$I AS key, coalesce(c.component, x.%2$I) AS comp, c.fp IS NOT NULL AS near, '
        '             count(*) OVER (PARTITION BY x.%2$I) AS same '
        '      FROM %3$s x LEFT JOIN c ON c.fp = x.%2$I WHERE x.%2$I IS NOT NULL), '
        'm AS (SELECT key, min(key) OVER (PARTITION BY comp) AS first FROM r WHERE near OR same > 1) '
        'SELECT key::text, dense_rank() OVER (ORDER BY first) FROM m ORDER BY 2, m.key',
        info.key_column, info.fingerprint_column, tbl, source)
    USING tbl, k, info.fingerprint_column::text, info.key_column::text;
END
$$;
COMMENT ON FUNCTION simdup_groups(regclass, integer, text, boolean, double precision, double precision) IS
  'simdup: groups of near-duplicate rows (distance <= k, default simdup.max_distance): method ''components'' (default; connected components, chains join) or ''leader'' (leader clustering in key order: every member within k of its group''s first row, no chaining). verify => true links rows only by pairs whose texts are near-duplicates too (simdup_pairs(..., verify => true)), so that no false pair joins unrelated groups. One row per grouped row, as (primary key as text, group_id); groups numbered 1, 2, ... by their smallest key';
