-- simdup: near-duplicate search served by B-tree indexes on the four 16-bit blocks (issue #3).
--
-- Exact for any k (0..64): if hamming(fp, q) <= k, then by pigeonhole some 16-bit block of fp
-- is within Hamming radius floor(k/4) of the same block of q. So an index on each block, probed
-- with every value within that radius (simdup_probe), finds every candidate, and the candidates
-- are filtered with hamming(fp, q) <= k. Probes per block: 1 for k <= 3, 17 for k <= 7,
-- 137 for k <= 11, 697 for k <= 15.
--
-- What simdup_enable('docs', 'body') does, as plain DDL (run it yourself to build the indexes
-- CONCURRENTLY, or to choose index names or a tablespace):
--
--   ALTER TABLE docs ADD COLUMN simhash bigint GENERATED ALWAYS AS (simhash(body)) STORED;
--   CREATE INDEX docs_simhash_b0_idx ON docs ((simhash_block(simhash, 0))) INCLUDE (simhash);
--   CREATE INDEX docs_simhash_b1_idx ON docs ((simhash_block(simhash, 1))) INCLUDE (simhash);
--   CREATE INDEX docs_simhash_b2_idx ON docs ((simhash_block(simhash, 2))) INCLUDE (simhash);
--   CREATE INDEX docs_simhash_b3_idx ON docs ((simhash_block(simhash, 3))) INCLUDE (simhash);
--   INSERT INTO simdup_tables (tbl, text_column, fingerprint_column)
--     VALUES ('docs', 'body', 'simhash');   -- only needed by simdup_pairs / simdup_groups
--
-- (simdup_enable('docs', NULL, 'fp') adopts an existing bigint column "fp" instead: the four
-- CREATE INDEX and the INSERT only.) Queries:
--
--   SELECT id FROM docs WHERE simdup_match(simhash, simhash('some text'), 3);
--   SELECT id, simhash <~> $1 AS d FROM docs WHERE simdup_match(simhash, $1, 6) ORDER BY d;
--
-- simdup_match is an inlinable SQL function, so the planner sees the four block conditions and
-- uses the indexes (BitmapOr of four Bitmap Index Scans). PostgreSQL inlines it only when every
-- argument used more than once is cheap: a column, a constant, a bigint parameter $1, or
-- simhash('literal') (folded to a constant). simhash($1) with a text parameter in a generic
-- plan is NOT cheap (simhash is declared with cost 1000); compute it once instead:
--
--   WITH q AS MATERIALIZED (SELECT simhash($1) AS q)
--   SELECT d.id FROM docs d, q WHERE simdup_match(d.simhash, q.q, 3);
--
-- (or FROM (SELECT simhash($1) AS q OFFSET 0) q: see tests/pg_regress/sql/search_plans.sql).
--
-- Batch: simdup_pairs(tbl, k) lists every pair of rows within distance k (identical
-- fingerprints included) and simdup_groups(tbl, k) their connected components, by primary key.
-- Identical fingerprints are collapsed first; the distinct ones are joined on equal or
-- neighbouring block values (simdup_fingerprint_pairs, in memory: about 16 bytes per distinct
-- fingerprint), never all pairs. The work grows with the number of distinct fingerprints
-- sharing a block value: about n^2 * N(r) / 2^17 checks per block for n random fingerprints.

-- ---------------------------------------------------------------------------------------------
-- Which tables are equipped (kept by pg_dump as extension configuration).
-- ---------------------------------------------------------------------------------------------
CREATE TABLE simdup_tables (
    tbl regclass PRIMARY KEY,
    -- NULL when simdup_enable adopted an existing bigint fingerprint column.
    text_column name,
    fingerprint_column name NOT NULL,
    enabled_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
SELECT pg_catalog.pg_extension_config_dump('simdup_tables', '');

-- Table owners (not only superusers) call simdup_enable/simdup_disable, which run as the caller:
-- everyone may write the table, and a trigger lets a row be added or removed only by the owner
-- of the table it names (or once that table is gone).
GRANT SELECT, INSERT, DELETE ON simdup_tables TO PUBLIC;

CREATE FUNCTION simdup_tables_guard() RETURNS trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner oid;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT c.relowner INTO owner FROM pg_class c WHERE c.oid = OLD.tbl;
        IF FOUND AND NOT pg_has_role(owner, 'USAGE') THEN
            RAISE EXCEPTION 'must be owner of table %', OLD.tbl USING ERRCODE = 'insufficient_privilege';
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT c.relowner INTO owner FROM pg_class c WHERE c.oid = NEW.tbl;
        IF NOT FOUND OR NOT pg_has_role(owner, 'USAGE') THEN
            RAISE EXCEPTION 'must be owner of table %', NEW.tbl USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
    END IF;
    RETURN OLD;
END
$$;

CREATE TRIGGER simdup_tables_guard BEFORE INSERT OR UPDATE OR DELETE ON simdup_tables
    FOR EACH ROW EXECUTE FUNCTION simdup_tables_guard();

-- Dropping an equipped table, or its fingerprint column, forgets it.
CREATE FUNCTION simdup_forget_dropped() RETURNS event_trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM @extschema@.simdup_tables s
    WHERE s.tbl::oid IN (SELECT o.objid FROM pg_event_trigger_dropped_objects() o
                         WHERE o.classid = 'pg_class'::regclass)
      AND NOT EXISTS (SELECT FROM pg_attribute a
                      WHERE a.attrelid = s.tbl AND a.attname = s.fingerprint_column
                        AND a.attnum > 0 AND NOT a.attisdropped);
END
$$;

CREATE EVENT TRIGGER simdup_forget_dropped ON sql_drop
    EXECUTE FUNCTION simdup_forget_dropped();

-- ---------------------------------------------------------------------------------------------
-- The query: simdup_match(fp, q, k)
-- ---------------------------------------------------------------------------------------------
-- Inlinable: LANGUAGE sql, one expression, IMMUTABLE, not STRICT, no SET clause. A SQL-standard
-- body (RETURN), so the names inside are bound when the extension is created, whatever the
-- caller's search_path.
CREATE FUNCTION simdup_match(fp bigint, q bigint, k integer) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (simhash_block(fp, 0) = ANY (simdup_probe(q, 0, k))
     OR simhash_block(fp, 1) = ANY (simdup_probe(q, 1, k))
     OR simhash_block(fp, 2) = ANY (simdup_probe(q, 2, k))
     OR simhash_block(fp, 3) = ANY (simdup_probe(q, 3, k)))
    AND hamming(fp, q) <= k;

-- ---------------------------------------------------------------------------------------------
-- Equipping a table
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION simdup_enable(tbl regclass, text_column name, fingerprint_column name DEFAULT 'simhash')
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel record;
    col record;
    prefix text;
BEGIN
    IF tbl IS NULL OR fingerprint_column IS NULL THEN
        RAISE EXCEPTION 'table and fingerprint column must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT c.relname, c.relkind, c.relowner INTO rel FROM pg_class c WHERE c.oid = tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'relation with OID % does not exist', tbl::oid USING ERRCODE = 'undefined_table';
    END IF;
    IF rel.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '% is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT pg_has_role(rel.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
    -- Forget tables that are gone without an event trigger firing (temporary tables at the end
    -- of their session), so that a reused OID is not mistaken for an enabled table.
    DELETE FROM @extschema@.simdup_tables s WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = s.tbl);
    IF EXISTS (SELECT FROM @extschema@.simdup_tables s WHERE s.tbl = simdup_enable.tbl) THEN
        RAISE EXCEPTION 'table % is already enabled for simdup', tbl
            USING ERRCODE = 'duplicate_object', HINT = 'Call simdup_disable first to change its columns.';
    END IF;

    IF text_column IS NOT NULL THEN
        SELECT t.typcategory, a.atttypid::regtype AS typ INTO col
        FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
        WHERE a.attrelid = tbl AND a.attname = text_column AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'column "%" of relation % does not exist', text_column, tbl
                USING ERRCODE = 'undefined_column';
        END IF;
        IF col.typcategory <> 'S' THEN
            RAISE EXCEPTION 'column "%" of relation % is of type %, not a string type', text_column, tbl, col.typ
                USING ERRCODE = 'datatype_mismatch';
        END IF;
        -- Rewrites the table, computing simhash once per row.
        EXECUTE format('ALTER TABLE %s ADD COLUMN %I bigint GENERATED ALWAYS AS (@extschema@.simhash(%I)) STORED',
                       tbl, fingerprint_column, text_column);
    ELSE
        SELECT a.atttypid::regtype AS typ INTO col
        FROM pg_attribute a
        WHERE a.attrelid = tbl AND a.attname = fingerprint_column AND a.attnum > 0 AND NOT a.attisdropped;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'column "%" of relation % does not exist', fingerprint_column, tbl
                USING ERRCODE = 'undefined_column',
                      HINT = 'Without a text column, simdup_enable adopts an existing bigint fingerprint column.';
        END IF;
        IF col.typ <> 'bigint'::regtype THEN
            RAISE EXCEPTION 'column "%" of relation % is of type %, not bigint', fingerprint_column, tbl, col.typ
                USING ERRCODE = 'datatype_mismatch';
        END IF;
    END IF;

    -- Index names <table>_<column>_b<i>_idx, the prefix clipped to stay within NAMEDATALEN.
    prefix := rel.relname || '_' || fingerprint_column;
    WHILE octet_length(prefix) > 56 LOOP
        prefix := left(prefix, -1);
    END LOOP;
    FOR i IN 0..3 LOOP
        EXECUTE format('CREATE INDEX %I ON %s ((@extschema@.simhash_block(%I, %s))) INCLUDE (%I)',
                       prefix || '_b' || i || '_idx', tbl, fingerprint_column, i, fingerprint_column);
    END LOOP;

    INSERT INTO @extschema@.simdup_tables (tbl, text_column, fingerprint_column)
    VALUES (simdup_enable.tbl, simdup_enable.text_column, simdup_enable.fingerprint_column);
END
$$;

-- The block indexes simdup_enable builds on a table: (simhash_block(fp, i)) INCLUDE (fp).
CREATE FUNCTION simdup_block_indexes(tbl regclass)
RETURNS TABLE (index regclass, block integer)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT i.indexrelid::regclass,
           (regexp_match(pg_get_indexdef(i.indexrelid, 1, true), ', ([0-3])\)$'))[1]::integer
    FROM simdup_tables s
    JOIN pg_attribute a ON a.attrelid = s.tbl AND a.attname = s.fingerprint_column AND NOT a.attisdropped
    JOIN pg_index i ON i.indrelid = s.tbl
    WHERE s.tbl = simdup_block_indexes.tbl
      AND i.indnkeyatts = 1 AND i.indnatts = 2
      AND i.indkey[0] = 0 AND i.indkey[1] = a.attnum
      AND EXISTS (SELECT FROM pg_depend d
                  WHERE d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid
                    AND d.refclassid = 'pg_proc'::regclass
                    AND d.refobjid = 'simhash_block(bigint, integer)'::regprocedure)
    ORDER BY 2, 1;
END;

CREATE FUNCTION simdup_disable(tbl regclass) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg record;
    idx regclass;
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT s.text_column, s.fingerprint_column, c.relowner INTO cfg
    FROM @extschema@.simdup_tables s JOIN pg_class c ON c.oid = s.tbl
    WHERE s.tbl = simdup_disable.tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not enabled for simdup', tbl USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT pg_has_role(cfg.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
    FOR idx IN SELECT b.index FROM @extschema@.simdup_block_indexes(tbl) b LOOP
        EXECUTE format('DROP INDEX %s', idx);
    END LOOP;
    -- Drop the fingerprint column only if simdup_enable added it (RESTRICT: a view using it
    -- stops the drop). Indexes you built on it yourself go with it.
    IF cfg.text_column IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %s DROP COLUMN %I', tbl, cfg.fingerprint_column);
    END IF;
    DELETE FROM @extschema@.simdup_tables s WHERE s.tbl = simdup_disable.tbl;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Batch: all near-duplicate pairs and groups of an equipped table
-- ---------------------------------------------------------------------------------------------
-- Columns the batch functions work with; errors name what is missing.
CREATE FUNCTION simdup_table_info(tbl regclass,
                                  OUT fingerprint_column name, OUT key_column name, OUT key_type regtype)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pk record;
BEGIN
    SELECT s.fingerprint_column INTO fingerprint_column
    FROM @extschema@.simdup_tables s WHERE s.tbl = simdup_table_info.tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not enabled for simdup', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_enable(table, text_column) first.';
    END IF;
    SELECT i.indnkeyatts, i.indkey[0] AS attnum INTO pk
    FROM pg_index i WHERE i.indrelid = tbl AND i.indisprimary;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % has no primary key', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Rows are reported by their primary key, which must be a single column.';
    END IF;
    IF pk.indnkeyatts <> 1 THEN
        RAISE EXCEPTION 'the primary key of table % has % columns', tbl, pk.indnkeyatts
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Rows are reported by their primary key, which must be a single column.';
    END IF;
    SELECT a.attname, a.atttypid::regtype INTO key_column, key_type
    FROM pg_attribute a WHERE a.attrelid = tbl AND a.attnum = pk.attnum;
END
$$;

-- simdup_fingerprint_pairs(tbl, k) and simdup_fingerprint_components(tbl, k) are in Rust
-- (src/search.rs): the distinct fingerprints are read once and joined in memory on equal or
-- neighbouring values of each block, a pair kept only from its first qualifying block.

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
    PERFORM @extschema@.simdup_probe(0, 0, k);  -- 22023 unless 0 <= k <= 64
    SELECT * INTO info FROM @extschema@.simdup_table_info(tbl);
    -- Distinct-fingerprint pairs expanded to rows (the lookups by fingerprint can go through the
    -- block-0 index), then the pairs of rows sharing a fingerprint.
    RETURN QUERY EXECUTE format(
        'SELECT least(x.%1$I, y.%1$I)::text, greatest(x.%1$I, y.%1$I)::text, p.distance '
        'FROM @extschema@.simdup_fingerprint_pairs($1, $2) p '
        'JOIN %3$s x ON @extschema@.simhash_block(x.%2$I, 0) = @extschema@.simhash_block(p.fa, 0) AND x.%2$I = p.fa '
        'JOIN %3$s y ON @extschema@.simhash_block(y.%2$I, 0) = @extschema@.simhash_block(p.fb, 0) AND y.%2$I = p.fb '
        'UNION ALL '
        'SELECT x.%1$I::text, y.%1$I::text, 0 '
        'FROM %3$s x JOIN %3$s y ON x.%2$I = y.%2$I AND x.%1$I < y.%1$I',
        info.key_column, info.fingerprint_column, tbl)
    USING tbl, k;
END
$$;

-- Connected components of the near-duplicate graph (rows linked when their fingerprints are
-- within distance k): one row per row of the table that has at least one near-duplicate (rows
-- without any are left out). group_id numbers the groups 1, 2, ... in the order of their
-- smallest primary key, so it is deterministic; rows come ordered by group_id, key.
CREATE FUNCTION simdup_groups(tbl regclass, k integer DEFAULT simdup_max_distance())
RETURNS TABLE (key text, group_id bigint)
LANGUAGE plpgsql STABLE STRICT PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    info record;
BEGIN
    PERFORM @extschema@.simdup_probe(0, 0, k);  -- 22023 unless 0 <= k <= 64
    SELECT * INTO info FROM @extschema@.simdup_table_info(tbl);
    RETURN QUERY EXECUTE format(
        'WITH c AS (SELECT fp, component FROM @extschema@.simdup_fingerprint_components($1, $2)), '
        'r AS (SELECT x.%1$I AS key, coalesce(c.component, x.%2$I) AS comp, c.fp IS NOT NULL AS near, '
        '             count(*) OVER (PARTITION BY x.%2$I) AS same '
        '      FROM %3$s x LEFT JOIN c ON c.fp = x.%2$I WHERE x.%2$I IS NOT NULL), '
        'm AS (SELECT key, min(key) OVER (PARTITION BY comp) AS first FROM r WHERE near OR same > 1) '
        'SELECT key::text, dense_rank() OVER (ORDER BY first) FROM m ORDER BY 2, m.key',
        info.key_column, info.fingerprint_column, tbl)
    USING tbl, k;
END
$$;
