-- simdup 0.3.0 -> 0.4.0 (ALTER EXTENSION simdup UPDATE).
--
-- What changes (CHANGELOG.md, 0.4.0): SimHash dedup verifies its candidates. A row within
-- max_distance of a stored row is a near-duplicate only when the two texts are too (Jaccard of
-- character 5-shingles >= threshold, or containment >= containment: _simdup_verified), by
-- default wherever the table has a text column: simdup_enable gets verify, threshold and
-- containment, simdup_tables records the thresholds, and the trigger takes seven arguments.
-- Triggers installed before keep their five arguments and decide by the distance alone, as
-- they did (docs/dedup.md, "Verification", says how to move a table to verification).
-- simdup_enable warns when a trigger without verification is installed on a table already
-- large enough for that to catch unrelated rows (_simdup_unverified_risk). simdup_pairs and
-- simdup_groups verify on request (verify => true; _simdup_verify_column,
-- _simdup_graph_groups). Dedup stays live under concurrent writers: a row holds its lock
-- stripes only in its check window (_simdup_lock_row is dropped). The fingerprint format does
-- not change (format 1). A table restored from a schema-only or table-only dump (without its
-- simdup_tables row) is recognised, and simdup_register records it again. A generated text
-- column is refused by the similarity trigger too; simdup.memory_limit caps the memory settings.

\echo Use "ALTER EXTENSION simdup UPDATE TO '0.4.0'" to load this file. \quit

-- The dedup trigger holds a row's lock stripes only while it checks and writes the row (its
-- check window, src/dedup/window.rs), no longer to the end of the transaction. The SQL helper
-- that took them to the end of the caller's transaction (for roles with INSERT) goes: nothing
-- in simdup called it, and it let a role hold stripes that writers of unrelated rows want.
DROP FUNCTION _simdup_lock_row(oid, bigint, integer);

-- simdup_tables: the verification's thresholds of each dedup trigger.
ALTER TABLE simdup_tables ADD COLUMN threshold double precision, ADD COLUMN containment double precision;

COMMENT ON TABLE simdup_tables IS
  'simdup: tables equipped by simdup_enable (kept by pg_dump): text column (NULL when an existing fingerprint column was adopted), fingerprint column, and the dedup trigger''s on_duplicate and max_distance (NULL without a trigger) and verification thresholds (NULL when it does not verify its candidates)';

-- The trigger's arguments gain the verification's thresholds.
DROP FUNCTION _simdup_dedup_trigger_args(text, integer, text, text, text);

CREATE FUNCTION "_simdup_dedup_trigger_args"(
	"on_duplicate" TEXT, /* & str */
	"max_distance" INT, /* i32 */
	"text_column" TEXT, /* Option < & str > */
	"fingerprint_column" TEXT, /* & str */
	"key_column" TEXT, /* & str */
	"threshold" double precision, /* Option < f64 > */
	"containment" double precision /* Option < f64 > */
) RETURNS TEXT /* String */
IMMUTABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_dedup_trigger_args_wrapper';

COMMENT ON FUNCTION _simdup_dedup_trigger_args(text, integer, text, text, text, double precision, double precision) IS 'simdup (internal): checks simdup_enable''s on_duplicate, max_distance and verification thresholds and returns the dedup trigger''s argument list';

CREATE FUNCTION "_simdup_verified"(
	"a" TEXT, /* Option < & str > */
	"b" TEXT, /* Option < & str > */
	"threshold" double precision, /* Option < f64 > */
	"containment" double precision /* Option < f64 > */
) RETURNS bool /* bool */
IMMUTABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_verified_wrapper';

COMMENT ON FUNCTION _simdup_verified(text, text, double precision, double precision) IS 'simdup (internal): whether two texts are near-duplicates by the verification of a SimHash candidate: Jaccard of character 5-shingles >= threshold, or containment >= containment (NULL: no containment rule), or the short-text rule; false when either is NULL or has no shingles. The dedup trigger, the Citus checked write and simdup_pairs/simdup_groups with verify => true decide by it';

CREATE FUNCTION "_simdup_unverified_risk"(
	"tbl" oid, /* pg_sys :: Oid */
	"k" INT /* i32 */
) RETURNS void
STRICT VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_unverified_risk_wrapper';

COMMENT ON FUNCTION _simdup_unverified_risk(oid, integer) IS 'simdup (internal): the WARNING simdup_enable gives for a dedup trigger without verification when the table is large enough that about 1 % or more of new rows would have an unrelated row within distance k (the rate measured on real news)';

CREATE FUNCTION "_simdup_graph_groups"(
	"n" bigint, /* i64 */
	"a" bigint[], /* Vec < i64 > */
	"b" bigint[], /* Vec < i64 > */
	"method" TEXT /* & str */
) RETURNS TABLE (
	"node" bigint,  /* i64 */
	"first" bigint  /* i64 */
)
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_graph_groups_wrapper';

COMMENT ON FUNCTION _simdup_graph_groups(bigint, bigint[], bigint[], text) IS 'simdup (internal): groups of the graph of nodes 1..n with edges a[i]-b[i], by method components or leader (in node order): each node in a group of two or more with its group''s first node; simdup_groups(..., verify => true) numbers its rows in key order';

-- simdup_enable gains verify, threshold and containment.
DROP FUNCTION simdup_enable(regclass, name, name, text, integer, integer);

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------
-- With on_duplicate ('reject', 'skip' or 'mark'), also installs the dedup trigger of
-- sql/dedup.sql with k = max_distance (NULL: simdup.max_distance now), recorded in
-- simdup_tables; the table needs a single-column primary key. verify (NULL: true with a text
-- column, false with an adopted fingerprint column) makes a row within k a near-duplicate only
-- when the two texts are too (src/dedup/verify.rs: Jaccard of character 5-shingles >= threshold,
-- or containment >= containment, NULL for none).
CREATE FUNCTION simdup_enable(tbl regclass, text_column name, fingerprint_column name DEFAULT 'simhash',
                              on_duplicate text DEFAULT NULL, max_distance integer DEFAULT NULL,
                              blocks integer DEFAULT 4, verify boolean DEFAULT NULL,
                              threshold double precision DEFAULT 0.5,
                              containment double precision DEFAULT 0.8)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel record;
    col record;
    pk record;
    k integer;
    trigger_args text;
    verified boolean := coalesce(verify, text_column IS NOT NULL);
BEGIN
    IF tbl IS NULL OR fingerprint_column IS NULL OR blocks IS NULL THEN
        RAISE EXCEPTION 'table, fingerprint column and blocks must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO rel FROM @extschema@._simdup_owned_table(tbl, 'rp');
    -- Forget tables that are gone without an event trigger firing (temporary tables at the end
    -- of their session), so that a reused OID is not mistaken for an enabled table.
    DELETE FROM @extschema@.simdup_tables s WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = s.tbl);
    IF EXISTS (SELECT FROM @extschema@.simdup_tables s WHERE s.tbl = simdup_enable.tbl) THEN
        RAISE EXCEPTION 'table % is already enabled for simdup', tbl
            USING ERRCODE = 'duplicate_object', HINT = 'Call simdup_disable first to change its columns.';
    END IF;
    PERFORM @extschema@._simdup_layout(blocks);  -- 22023 unless 2..8 blocks

    -- Dedup arguments, checked before anything is changed.
    SELECT p.key_column, p.key_type INTO pk FROM @extschema@._simdup_primary_key(tbl) p;
    IF on_duplicate IS NULL THEN
        IF max_distance IS NOT NULL OR verify IS NOT NULL THEN
            RAISE EXCEPTION '% is only used with on_duplicate', CASE WHEN max_distance IS NOT NULL THEN 'max_distance' ELSE 'verify' END
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Pass on_duplicate => ''reject'', ''skip'' or ''mark'' to install the dedup trigger.';
        END IF;
        IF pk.key_column IS NULL THEN
            RAISE WARNING 'table % has no single-column primary key', tbl
                USING DETAIL = 'Search works; simdup_pairs and simdup_groups report rows by their primary key and will fail until the table has one.';
        END IF;
    ELSE
        k := coalesce(max_distance, @extschema@.simdup_max_distance());
        -- 22023 for an unknown mode or k outside 0..64 (src/args.rs).
        -- 22023 for a threshold outside (0, 1], or verify without a text column.
        trigger_args := @extschema@._simdup_dedup_trigger_args(on_duplicate, k, coalesce(text_column, ''),
                                                               fingerprint_column, coalesce(pk.key_column, ''),
                                                               CASE WHEN verified THEN threshold END,
                                                               CASE WHEN verified THEN containment END);
        PERFORM @extschema@._simdup_dedup_key(tbl);  -- 0A000 partitioned, 55000 no single-column key
    END IF;

    IF text_column IS NOT NULL THEN
        SELECT t.typcategory, c.typ INTO col
        FROM @extschema@._simdup_column(tbl, text_column) c JOIN pg_type t ON t.oid = c.typ;
        IF col.typcategory <> 'S' THEN
            RAISE EXCEPTION 'column "%" of relation % is of type %, not a string type', text_column, tbl, col.typ
                USING ERRCODE = 'datatype_mismatch';
        END IF;
        -- Rewrites the table, computing simhash once per row.
        EXECUTE format('ALTER TABLE %s ADD COLUMN %I bigint GENERATED ALWAYS AS (@extschema@.simhash(%I)) STORED',
                       tbl, fingerprint_column, text_column);
    ELSE
        SELECT c.typ INTO col FROM @extschema@._simdup_column(tbl, fingerprint_column,
            'Without a text column, simdup_enable adopts an existing bigint fingerprint column.') c;
        IF col.typ <> 'bigint'::regtype THEN
            RAISE EXCEPTION 'column "%" of relation % is of type %, not bigint', fingerprint_column, tbl, col.typ
                USING ERRCODE = 'datatype_mismatch';
        END IF;
    END IF;

    PERFORM @extschema@._simdup_create_block_indexes(tbl, fingerprint_column, blocks);

    IF on_duplicate IS NOT NULL THEN
        -- On a Citus distributed table the trigger goes to every shard, where it lets through
        -- only the writes simdup_insert checked across shards (src/citus/checked/). The check
        -- of its columns (src/dedup/tuple.rs) refuses e.g. an adopted generated fingerprint.
        PERFORM @extschema@._simdup_install_dedup_trigger(tbl, 'simdup_dedup', 'simdup_dedup_trigger', trigger_args,
                                                          on_duplicate = 'mark', pk.key_type);
    END IF;

    IF on_duplicate IS NOT NULL AND NOT verified THEN
        -- Without verification every row within k is a near-duplicate: warn when the table is
        -- large enough for unrelated rows to be caught (src/batch.rs, _simdup_unverified_risk).
        PERFORM @extschema@._simdup_unverified_risk(tbl, k);
    END IF;

    INSERT INTO @extschema@.simdup_tables (tbl, text_column, fingerprint_column, on_duplicate, max_distance,
                                           threshold, containment)
    VALUES (simdup_enable.tbl, simdup_enable.text_column, simdup_enable.fingerprint_column,
            simdup_enable.on_duplicate, k,
            CASE WHEN on_duplicate IS NOT NULL AND verified THEN simdup_enable.threshold END,
            CASE WHEN on_duplicate IS NOT NULL AND verified THEN simdup_enable.containment END);
END
$$;
COMMENT ON FUNCTION simdup_enable(regclass, name, name, text, integer, integer, boolean, double precision, double precision) IS
  'simdup: equips a table for near-duplicate search: adds fingerprint_column bigint GENERATED ALWAYS AS (simhash(text_column)) STORED and one B-tree index per block (_simdup_key(fp, offset); blocks => 2..8, default 4), and records it in simdup_tables. text_column NULL adopts an existing bigint fingerprint_column. on_duplicate => ''reject'' | ''skip'' | ''mark'' also installs the dedup trigger simdup_dedup (BEFORE INSERT OR UPDATE): a row within max_distance (default: simdup.max_distance at enable time) of an existing row raises 23505, is not stored, or is stored with dup_of (added, the primary key''s type) = the smallest key among its near-duplicates. With a text column the trigger verifies (verify => true by default): a row within max_distance is a near-duplicate only when the two texts have Jaccard similarity of character 5-shingles >= threshold (default 0.5) or containment >= containment (default 0.8, NULL for none); verify => false, or an adopted fingerprint column, decides by the distance alone and warns when the table is large enough for that to catch unrelated rows. Safe under concurrency (advisory locks); needs a single-column primary key. On a Citus distributed table the trigger on each shard refuses every write but the coordinator''s checked writes (plain INSERT, COPY and text-changing UPDATE there, simdup_insert), which check rows across shards. Requires owning the table';

-- simdup_pairs and simdup_groups gain verify, threshold and containment.
DROP FUNCTION simdup_pairs(regclass, integer);
DROP FUNCTION simdup_groups(regclass, integer, text);

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

-- A table restored from a schema-only or table-only dump comes back without its simdup_tables
-- row: the readers of the registry say so, and simdup_register records it again.
CREATE FUNCTION "_simdup_dedup_settings"(
	"tbl" oid /* pg_sys :: Oid */
) RETURNS TABLE (
	"on_duplicate" TEXT,  /* String */
	"max_distance" INT,  /* i32 */
	"threshold" double precision,  /* Option < f64 > */
	"containment" double precision  /* Option < f64 > */
)
STRICT STABLE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_dedup_settings_wrapper';

COMMENT ON FUNCTION _simdup_dedup_settings(oid) IS 'simdup (internal): on_duplicate, max_distance and the verification thresholds of a table''s simdup_dedup trigger, read from its arguments; no row without one. simdup_register records them';

-- The bigint column of a table that simdup's block indexes are on (the first, by number), from
-- the catalog alone; NULL when none is.
CREATE FUNCTION _simdup_indexed_column(tbl regclass) RETURNS name
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN (SELECT a.attname FROM pg_attribute a
            WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'bigint'::regtype
              AND EXISTS (SELECT FROM @extschema@._simdup_block_indexes(tbl::oid, a.attnum::integer))
            ORDER BY a.attnum LIMIT 1);
END
$$;
COMMENT ON FUNCTION _simdup_indexed_column(regclass) IS
  'simdup (internal): the bigint column simdup''s block indexes are on, from the catalog (the first by number); NULL when none';

-- The error for a table that has simdup's block indexes but no simdup_tables row: pg_dump
-- writes an extension's configuration rows only with the extension, so a schema-only (-n) or
-- table-only (-t) dump restored into another database brings the table, its fingerprint
-- column, indexes and triggers back without its row. Does nothing for a table without block
-- indexes (the caller then says it is not enabled).
CREATE FUNCTION _simdup_check_unrecorded(tbl regclass) RETURNS void
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF @extschema@._simdup_indexed_column(tbl) IS NOT NULL THEN
        RAISE EXCEPTION 'table % has simdup''s block indexes but no row in simdup_tables', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'pg_dump writes an extension''s configuration only with the extension: a schema-only or table-only dump restored into another database brings the table back without it.',
                  HINT = 'Record it again from the catalog: SELECT simdup_register(table).';
    END IF;
END
$$;
COMMENT ON FUNCTION _simdup_check_unrecorded(regclass) IS
  'simdup (internal): raises 55000 with a HINT to call simdup_register when a table has simdup''s block indexes but no simdup_tables row (a schema-only or table-only dump restored into another database)';

-- Fingerprint column and primary key of an enabled table, for the batch functions; errors say
-- what is missing.
CREATE OR REPLACE FUNCTION _simdup_table_info(tbl regclass, OUT fingerprint_column name, OUT key_column name)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM FROM @extschema@.simdup_tables s WHERE s.tbl = _simdup_table_info.tbl;
    IF NOT FOUND THEN
        PERFORM @extschema@._simdup_check_unrecorded(tbl);
        RAISE EXCEPTION 'table % is not enabled for simdup', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_enable(table, text_column) first.';
    END IF;
    fingerprint_column := @extschema@._simdup_fingerprint_column(tbl);
    IF fingerprint_column IS NULL THEN
        RAISE EXCEPTION 'table % has lost its fingerprint column', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_disable(table) and simdup_enable again.';
    END IF;
    SELECT p.key_column INTO key_column FROM @extschema@._simdup_primary_key(tbl) p;
    IF key_column IS NULL THEN
        RAISE EXCEPTION 'table % has no single-column primary key', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Rows are reported by their primary key, which must be a single column.';
    END IF;
END
$$;
COMMENT ON FUNCTION _simdup_table_info(regclass) IS
  'simdup (internal): fingerprint column and single-column primary key of an enabled table, as used by simdup_pairs and simdup_groups; errors say what is missing';

-- The registry row of an enabled table the caller owns: 42704 when it is not enabled, 42501
-- when the caller does not own it.
CREATE OR REPLACE FUNCTION _simdup_registered(tbl regclass) RETURNS simdup_tables
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg @extschema@.simdup_tables;
BEGIN
    SELECT s.* INTO cfg FROM @extschema@.simdup_tables s WHERE s.tbl = _simdup_registered.tbl;
    IF NOT FOUND THEN
        PERFORM @extschema@._simdup_check_unrecorded(tbl);
        RAISE EXCEPTION 'table % is not enabled for simdup', tbl USING ERRCODE = 'undefined_object';
    END IF;
    PERFORM @extschema@._simdup_owned_table(tbl, 'rp');  -- 42501 unless the caller owns it
    RETURN cfg;
END
$$;
COMMENT ON FUNCTION _simdup_registered(regclass) IS
  'simdup (internal): the simdup_tables row of an enabled table the caller owns; 42704 when not enabled, 42501 when not the owner';

-- The fingerprint column of an enabled table: the column simdup_tables names, or — when it was
-- renamed since — the column its block indexes are on (the catalog knows the index's column
-- by number). NULL when the table is not enabled or the column is gone.
CREATE OR REPLACE FUNCTION _simdup_fingerprint_column(tbl regclass) RETURNS name
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col name;
BEGIN
    SELECT a.attname INTO col
    FROM @extschema@.simdup_tables s
    JOIN pg_attribute a ON a.attrelid = s.tbl AND a.attname = s.fingerprint_column AND a.attnum > 0 AND NOT a.attisdropped
    WHERE s.tbl = _simdup_fingerprint_column.tbl;
    IF col IS NULL AND EXISTS (SELECT FROM @extschema@.simdup_tables s WHERE s.tbl = _simdup_fingerprint_column.tbl) THEN
        col := @extschema@._simdup_indexed_column(tbl);
    END IF;
    RETURN col;
END
$$;
COMMENT ON FUNCTION _simdup_fingerprint_column(regclass) IS
  'simdup (internal): the fingerprint column of an enabled table, found by the name simdup_tables records or, after a rename, as the column its block indexes are on';

-- Records in simdup_tables a table that has simdup's block indexes (and perhaps its dedup
-- trigger) but no row there: after a schema-only or table-only dump restored into another
-- database (_simdup_check_unrecorded). Everything is read from the catalog: the fingerprint
-- column (the column the block indexes are on), the text column (the one its generation
-- expression reads; none for an adopted column) and the dedup trigger's mode, k and
-- verification (its arguments).
CREATE FUNCTION simdup_register(tbl regclass) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    fp_attnum smallint;
    fp name;
    body name;
    d record;
BEGIN
    PERFORM @extschema@._simdup_owned_table(tbl, 'rp');  -- 42501 unless the caller owns it
    DELETE FROM @extschema@.simdup_tables s WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = s.tbl);
    IF EXISTS (SELECT FROM @extschema@.simdup_tables s WHERE s.tbl = simdup_register.tbl) THEN
        RAISE EXCEPTION 'table % is already enabled for simdup', tbl USING ERRCODE = 'duplicate_object';
    END IF;
    fp := @extschema@._simdup_indexed_column(tbl);
    SELECT a.attnum INTO fp_attnum FROM pg_attribute a WHERE a.attrelid = tbl AND a.attname = fp;
    IF fp IS NULL THEN
        RAISE EXCEPTION 'table % has no simdup block indexes', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_enable(table, text_column) to equip it.';
    END IF;
    -- The text column: the column the generated fingerprint column's expression depends on.
    -- (PostgreSQL 14 records that dependency on the generated column itself, not on its
    -- default expression.)
    SELECT a.attname INTO body
    FROM pg_depend dep
    JOIN pg_attribute a ON a.attrelid = tbl AND a.attnum = dep.refobjsubid
    WHERE dep.refclassid = 'pg_class'::regclass AND dep.refobjid = tbl AND dep.refobjsubid > 0
      AND dep.refobjsubid <> fp_attnum
      AND ((dep.classid = 'pg_attrdef'::regclass
            AND dep.objid = (SELECT ad.oid FROM pg_attrdef ad WHERE ad.adrelid = tbl AND ad.adnum = fp_attnum))
           OR (dep.classid = 'pg_class'::regclass AND dep.objid = tbl AND dep.objsubid = fp_attnum))
      AND EXISTS (SELECT FROM pg_attribute g WHERE g.attrelid = tbl AND g.attnum = fp_attnum AND g.attgenerated = 's')
    ORDER BY a.attnum LIMIT 1;
    SELECT s.on_duplicate, s.max_distance, s.threshold, s.containment INTO d
    FROM @extschema@._simdup_dedup_settings(tbl) s;
    INSERT INTO @extschema@.simdup_tables (tbl, text_column, fingerprint_column, on_duplicate, max_distance,
                                           threshold, containment)
    VALUES (simdup_register.tbl, body, fp, d.on_duplicate, d.max_distance, d.threshold, d.containment);
END
$$;
COMMENT ON FUNCTION simdup_register(regclass) IS
  'simdup: records in simdup_tables a table that has simdup''s block indexes but no row there (a schema-only or table-only dump restored into another database: pg_dump writes extension configuration rows only with the extension), reading the fingerprint column, the text column and the dedup trigger''s settings from the catalog; then every simdup function works on it as before. Requires owning the table';

-- ---------------------------------------------------------------------------------------------
-- simdup_explain
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION simdup_explain(a text, b text, tbl regclass DEFAULT NULL) RETURNS jsonb
LANGUAGE c STABLE PARALLEL SAFE COST 10000
AS 'MODULE_PATHNAME', 'simdup_explain_wrapper';
COMMENT ON FUNCTION simdup_explain(text, text, regclass) IS
  'simdup: why two texts are or are not near-duplicates, as jsonb: each text''s length, simhash and number of character k-shingles; hamming (NULL for a text without words), k, jaccard, containment (both NULL for a text without shingles), a_in_b and b_in_a (the share of each text''s shingles found in the other); verdicts: for each dedup trigger of tbl (simdup_dedup or simdup_dedup_similar, with its own arguments), or without tbl for the defaults of both, whether b inserted after a is a near-duplicate, what the trigger does with it, the rule that decided (distance, jaccard, containment, short_text) and why; alignment and passages: the runs both texts share and those only one has (CJK characters and words as units; side both, a or b), which reassemble each text exactly. NULL when a or b is NULL; 55000 for a table without a dedup trigger; 54000 for a text of more than 400000 units';

CREATE FUNCTION simdup_explain_passages(a text, b text)
RETURNS TABLE (ord integer, side text, passage text)
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE COST 10000 ROWS 20
AS 'MODULE_PATHNAME', 'simdup_explain_passages_wrapper';
COMMENT ON FUNCTION simdup_explain_passages(text, text) IS
  'simdup: the aligned passages of two texts, in order (ord): side both for a run both texts have, a or b for a run only one has (a changed run: its a passage, then its b passage). Units are CJK characters one by one and words, whitespace runs and other characters elsewhere, compared exactly; a shared run no longer than the changes on both sides of it is reported as changed. string_agg(passage, '''' ORDER BY ord) over sides both and a is a, over both and b is b. 54000 for a text of more than 400000 units';

-- The text and key columns of a table's dedup trigger, as its arguments name them.
CREATE FUNCTION _simdup_explain_columns(tbl regclass) RETURNS TABLE (text_column text, key_column text)
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_explain_columns_wrapper';
COMMENT ON FUNCTION _simdup_explain_columns(regclass) IS
  'simdup (internal): the text and key columns named by the arguments of a table''s dedup trigger (simdup_dedup or simdup_dedup_similar), for simdup_explain_rows; 55000 without a dedup trigger or for one on an adopted fingerprint column (no text)';

-- Two stored rows, read by their keys (as text: simdup_pairs reports them so) with an ordinary
-- query as the caller, so the caller's privileges and row-level security apply; then
-- simdup_explain of their texts with the table's dedup trigger.
CREATE FUNCTION simdup_explain_rows(tbl regclass, key_a text, key_b text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cols record;
    key_type regtype;
    texts text[] := '{}';
    keys text[] := ARRAY[key_a, key_b];
    body text;
    n bigint;
BEGIN
    IF tbl IS NULL OR key_a IS NULL OR key_b IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT c.text_column, c.key_column INTO cols FROM @extschema@._simdup_explain_columns(tbl) c;
    SELECT c.typ INTO key_type FROM @extschema@._simdup_column(tbl, cols.key_column) c;  -- 42703
    FOR i IN 1..2 LOOP
        EXECUTE format('SELECT %I::text FROM %s WHERE %I = CAST($1 AS %s)', cols.text_column, tbl, cols.key_column, key_type)
            INTO body USING keys[i];
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n = 0 THEN
            RAISE EXCEPTION 'table % has no row with % = %', tbl, quote_ident(cols.key_column), keys[i]
                USING ERRCODE = 'no_data_found',
                      HINT = 'Or no row the current role may see (row-level security).';
        END IF;
        texts := texts || body;
    END LOOP;
    RETURN @extschema@.simdup_explain(texts[1], texts[2], tbl)
           || jsonb_build_object('keys', jsonb_build_object('a', key_a, 'b', key_b));
END
$$;
COMMENT ON FUNCTION simdup_explain_rows(regclass, text, text) IS
  'simdup: simdup_explain of the texts of two stored rows of a table with a dedup trigger, found by their keys (the primary key as text, as simdup_pairs reports it), with the table''s trigger settings; b is judged as inserted after a. Reads the rows with an ordinary query as the caller (SELECT privilege and row-level security apply); P0002 when a key has no row the caller may see; NULL when a text is NULL';

-- ---------------------------------------------------------------------------------------------
-- simdup_calibrate
-- ---------------------------------------------------------------------------------------------
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
