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
-- All pairs of rows whose fingerprints are within distance k (identical fingerprints
-- included), each pair once, as their primary keys (a < b in the key's own order).
CREATE FUNCTION simdup_pairs(tbl regclass, k integer DEFAULT simdup_max_distance())
RETURNS TABLE (a text, b text, distance integer)
LANGUAGE plpgsql STABLE STRICT PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    info record;
BEGIN
    PERFORM @extschema@._simdup_check_k(k);
    SELECT * INTO info FROM @extschema@._simdup_table_info(tbl);
    RETURN QUERY EXECUTE format(
        'WITH p AS MATERIALIZED (SELECT * FROM @extschema@._simdup_fingerprint_pairs($1, $3, $2)), '
        'd AS MATERIALIZED (SELECT x.%2$I AS fp FROM %3$s x WHERE x.%2$I IS NOT NULL GROUP BY x.%2$I HAVING count(*) > 1), '
        'r AS MATERIALIZED (SELECT x.%1$I AS key, x.%2$I AS fp FROM %3$s x '
        '                   WHERE x.%2$I IN (SELECT fa FROM p UNION SELECT fb FROM p UNION SELECT fp FROM d)) '
        'SELECT least(x.key, y.key)::text, greatest(x.key, y.key)::text, p.distance '
        'FROM p JOIN r x ON x.fp = p.fa JOIN r y ON y.fp = p.fb '
        'UNION ALL '
        'SELECT x.key::text, y.key::text, 0 FROM r x JOIN r y ON x.fp = y.fp AND x.key < y.key',
        info.key_column, info.fingerprint_column, tbl)
    USING tbl, k, info.fingerprint_column::text;
END
$$;
COMMENT ON FUNCTION simdup_pairs(regclass, integer) IS
  'simdup: all pairs of rows of an enabled table whose fingerprints are within distance k (default simdup.max_distance), identical fingerprints included, each pair once: primary keys a < b as text, and the distance';

-- Groups of near-duplicate rows, by method:
--   'components' (default): connected components of the near-duplicate graph (rows linked when
--     their fingerprints are within distance k). Chains join: a group can hold rows far more
--     than k apart (a-b and b-c within k, a-c not).
--   'leader': leader clustering in primary key order: the row with the smallest key not yet in
--     a group leads a new group, which every row within k of it that is not yet in a group
--     joins. Every member is within k of its group's leader (the group's smallest key), so no
--     group chains; a row whose near-duplicates all joined earlier groups whose leaders are
--     farther than k is in no group.
-- One row per grouped row (rows without a near-duplicate are left out). group_id numbers the
-- groups 1, 2, ... in the order of their smallest primary key, so it is deterministic; rows
-- come ordered by group_id, key.
CREATE FUNCTION simdup_groups(tbl regclass, k integer DEFAULT simdup_max_distance(), method text DEFAULT 'components')
RETURNS TABLE (key text, group_id bigint)
LANGUAGE plpgsql STABLE STRICT PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    info record;
    source text;
BEGIN
    PERFORM @extschema@._simdup_check_k(k);
    source := CASE @extschema@._simdup_check_group_method(method)
        WHEN 'components' THEN 'SELECT fp, component FROM @extschema@._simdup_fingerprint_components($1, $3, $2)'
        ELSE 'SELECT fp, leader AS component FROM @extschema@._simdup_fingerprint_leaders($1, $3, $4, $2)'
    END;
    SELECT * INTO info FROM @extschema@._simdup_table_info(tbl);
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
COMMENT ON FUNCTION simdup_groups(regclass, integer, text) IS
  'simdup: groups of near-duplicate rows (distance <= k, default simdup.max_distance): method ''components'' (default; connected components, chains join) or ''leader'' (leader clustering in key order: every member within k of its group''s first row, no chaining). One row per grouped row, as (primary key as text, group_id); groups numbered 1, 2, ... by their smallest key';
