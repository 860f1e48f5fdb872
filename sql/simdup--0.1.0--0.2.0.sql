-- simdup 0.1.0 -> 0.2.0 (ALTER EXTENSION simdup UPDATE).
--
-- What changes (CHANGELOG.md, 0.2.0): search through the key indexes (_simdup_key) with
-- the tight probe set and the planner step for hamming(fp, q) <= k; the dedup trigger without
-- SPI; internal helpers renamed _simdup_*; simdup_enable(..., blocks), simdup_reindex,
-- simdup_nearest; simdup_insert and simdup_insert_select (checked writes: dedup across the shards
-- of a Citus distributed table). The fingerprint format does not change (format 1).
--
-- Tables enabled under 0.1.0 keep their block indexes (simhash_block(fp, i) INCLUDE (fp)) and
-- their dedup trigger, and keep working: search and the trigger read those indexes too. One call
-- moves a table to the smaller, faster 0.2.0 indexes: SELECT simdup_reindex('tbl');

\echo Use "ALTER EXTENSION simdup UPDATE TO '0.2.0'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- Registry: the mode and k are checked by simdup_enable (src/args.rs), not spelled out again;
-- internal trigger functions get private names.
-- ---------------------------------------------------------------------------------------------
ALTER TABLE simdup_tables DROP CONSTRAINT IF EXISTS simdup_tables_on_duplicate_check,
                          DROP CONSTRAINT IF EXISTS simdup_tables_max_distance_check,
                          DROP CONSTRAINT IF EXISTS simdup_tables_check;
ALTER FUNCTION simdup_tables_guard() RENAME TO _simdup_tables_guard;
ALTER FUNCTION simdup_forget_dropped() RENAME TO _simdup_forget_dropped;

COMMENT ON TABLE simdup_tables IS
  'simdup: tables equipped by simdup_enable (kept by pg_dump): text column (NULL when an existing fingerprint column was adopted), fingerprint column, and the dedup trigger''s on_duplicate and max_distance (NULL without a trigger)';

COMMENT ON FUNCTION _simdup_tables_guard() IS
  'simdup (internal): trigger letting only the owner of a table add or remove its simdup_tables row';


-- Runs a CREATE or DROP TRIGGER of the dedup trigger. Citus refuses trigger DDL on its
-- distributed tables unless citus.enable_unsafe_triggers is on: set here for this one command
-- and put back (the trigger on a shard only refuses writes that simdup_insert did not check,
-- src/dedup/citus.rs). Without Citus, the command alone.
CREATE FUNCTION _simdup_trigger_ddl(command text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unsafe_triggers text := current_setting('citus.enable_unsafe_triggers', true);
BEGIN
    IF unsafe_triggers IS NULL THEN
        EXECUTE command;
        RETURN;
    END IF;
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    EXECUTE command;
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe_triggers, true);
END
$$;
COMMENT ON FUNCTION _simdup_trigger_ddl(text) IS
  'simdup (internal): runs a CREATE or DROP TRIGGER of the dedup trigger, with citus.enable_unsafe_triggers on for that command when Citus is loaded (it refuses trigger DDL on distributed tables otherwise)';

-- Dropping an equipped table, or its fingerprint column, forgets it.
CREATE OR REPLACE FUNCTION _simdup_forget_dropped() RETURNS event_trigger
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t oid;
BEGIN
    FOR t IN
        DELETE FROM @extschema@.simdup_tables s
        WHERE s.tbl::oid IN (SELECT o.objid FROM pg_event_trigger_dropped_objects() o
                             WHERE o.classid = 'pg_class'::regclass)
          AND NOT EXISTS (SELECT FROM pg_attribute a
                          WHERE a.attrelid = s.tbl AND a.attname = s.fingerprint_column
                            AND a.attnum > 0 AND NOT a.attisdropped)
        RETURNING s.tbl::oid
    LOOP
        -- The table is still there (its fingerprint column was dropped): its dedup trigger,
        -- which needs that column, goes too.
        IF EXISTS (SELECT FROM pg_trigger g WHERE g.tgrelid = t AND g.tgname = 'simdup_dedup') THEN
            PERFORM @extschema@._simdup_trigger_ddl(format('DROP TRIGGER simdup_dedup ON %s', t::regclass));
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION _simdup_forget_dropped() IS
  'simdup (internal): event trigger function removing the simdup_tables row of a dropped table or fingerprint column (and the dedup trigger of a table whose fingerprint column was dropped)';

COMMENT ON EVENT TRIGGER simdup_forget_dropped IS
  'simdup: forgets equipped tables (simdup_tables rows) when the table or its fingerprint column is dropped';


-- ---------------------------------------------------------------------------------------------
-- Functions whose signature or result changes, or that are gone (after their last user below)
-- ---------------------------------------------------------------------------------------------
DROP FUNCTION simdup_enable(regclass, name, name, text, integer);
DROP FUNCTION simdup_block_indexes(regclass);
DROP FUNCTION simdup_table_info(regclass);
DROP FUNCTION simdup_groups(regclass, integer);

-- ---------------------------------------------------------------------------------------------
-- New functions of the Rust layer
-- ---------------------------------------------------------------------------------------------

CREATE  FUNCTION "_simdup_block_indexes"(
	"tbl" oid, /* pg_sys :: Oid */
	"attnum" INT /* i32 */
) RETURNS TABLE (
	"index" oid,  /* pg_sys :: Oid */
	"block" INT,  /* i32 */
	"bit_offset" INT,  /* i32 */
	"bits" INT,  /* i32 */
	"kind" TEXT  /* String */
)
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_block_indexes_wrapper';

CREATE  FUNCTION "_simdup_check_group_method"(
	"method" TEXT /* & str */
) RETURNS TEXT /* & str */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_check_group_method_wrapper';

CREATE  FUNCTION "_simdup_check_k"(
	"k" INT /* i32 */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_check_k_wrapper';

CREATE  FUNCTION "_simdup_dedup_trigger_args"(
	"on_duplicate" TEXT, /* & str */
	"max_distance" INT, /* i32 */
	"text_column" TEXT, /* Option < & str > */
	"fingerprint_column" TEXT, /* & str */
	"key_column" TEXT /* & str */
) RETURNS TEXT /* String */
IMMUTABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_dedup_trigger_args_wrapper';

CREATE  FUNCTION "_simdup_fingerprint_components"(
	"tbl" regclass, /* PgRelation */
	"fingerprint_column" TEXT, /* & str */
	"k" INT /* i32 */
) RETURNS TABLE (
	"fp" bigint,  /* i64 */
	"component" bigint  /* i64 */
)
STRICT STABLE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_fingerprint_components_wrapper';

CREATE  FUNCTION "_simdup_fingerprint_leaders"(
	"tbl" regclass, /* PgRelation */
	"fingerprint_column" TEXT, /* & str */
	"key_column" TEXT, /* & str */
	"k" INT /* i32 */
) RETURNS TABLE (
	"fp" bigint,  /* i64 */
	"leader" bigint  /* i64 */
)
STRICT STABLE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_fingerprint_leaders_wrapper';

CREATE  FUNCTION "_simdup_fingerprint_pairs"(
	"tbl" regclass, /* PgRelation */
	"fingerprint_column" TEXT, /* & str */
	"k" INT /* i32 */
) RETURNS TABLE (
	"fa" bigint,  /* i64 */
	"fb" bigint,  /* i64 */
	"distance" INT  /* i32 */
)
STRICT STABLE PARALLEL RESTRICTED
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_fingerprint_pairs_wrapper';

CREATE  FUNCTION "_simdup_key"(
	"fp" bigint, /* i64 */
	"offset" INT /* i32 */
) RETURNS bigint /* i64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_key_wrapper';

CREATE  FUNCTION "_simdup_layout"(
	"blocks" INT /* i32 */
) RETURNS INT[] /* Vec < i32 > */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_layout_wrapper';

CREATE  FUNCTION "_simdup_lock_stripes"(
	"fp" bigint, /* i64 */
	"k" INT /* i32 */
) RETURNS INT[] /* Vec < i32 > */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_lock_stripes_wrapper';

CREATE FUNCTION _simdup_tids(tbl oid, attnum integer, q bigint, k integer) RETURNS tid[]
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_tids';
COMMENT ON FUNCTION _simdup_tids(oid, integer, bigint, integer) IS
  'simdup (internal): tids of the visible rows of tbl whose fingerprint column attnum is within k of q, found through its block indexes; the planner puts it in a Tid Scan for hamming(fp, q) <= k';

CREATE FUNCTION _simdup_nearest_tids(tbl oid, attnum integer, q bigint, n integer) RETURNS tid[]
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_nearest_tids';
COMMENT ON FUNCTION _simdup_nearest_tids(oid, integer, bigint, integer) IS
  'simdup (internal): tids of the n rows of tbl nearest to q (column attnum; ties by tid), found exactly through its block indexes';

COMMENT ON FUNCTION hamming(bigint, bigint) IS
  'simdup: number of differing bits between two 64-bit fingerprints (0..64); hamming(fp, q) <= k on a column with simdup block indexes is served by them';
COMMENT ON OPERATOR <~> (bigint, bigint) IS
  'simdup: Hamming distance between two 64-bit fingerprints; fp <~> q <= k is served by the block indexes';
CREATE FUNCTION _simdup_hamming_support(internal) RETURNS internal
LANGUAGE c IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_hamming_support';
COMMENT ON FUNCTION _simdup_hamming_support(internal) IS
  'simdup (internal): planner support function of hamming: loads the library, and with it the planner step serving hamming(fp, q) <= k, before the scan paths are built';
ALTER FUNCTION hamming(bigint, bigint) SUPPORT _simdup_hamming_support;

-- ---------------------------------------------------------------------------------------------
-- Search (sql/search.sql)
-- ---------------------------------------------------------------------------------------------

-- simdup: near-duplicate search.
--
-- The query is the design card's: WHERE hamming(fp, q) <= k (or fp <~> q <= k, < k, or
-- simdup_match(fp, q, k), which inlines to it). On a column with simdup block indexes, the
-- planner step of src/search/planner.rs adds a Tid Scan path whose TID condition
-- ctid = ANY (_simdup_tids(tbl, column, q, k)) finds the rows within k through the indexes
-- (src/search/scan.rs: key ranges of the block values within each block's threshold, candidates
-- checked from the index alone, the heap read only for matches); the condition stays as the
-- scan's filter. The planner takes that path when its cost (probes and candidates) is below a
-- sequential scan's: on large tables, not on a few thousand rows.

-- ---------------------------------------------------------------------------------------------
-- Private functions
-- ---------------------------------------------------------------------------------------------
-- The Citus distribution method of a table ('h' hash, 'a' append, 'r' range; 'n' reference
-- and Citus local tables), NULL when the table is not distributed or Citus is not installed:
-- read from Citus's catalog when there is one, without depending on Citus.
CREATE FUNCTION _simdup_citus_method(tbl regclass) RETURNS text
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    method text;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT p.partmethod::text FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = $1'
            INTO method USING tbl;
    END IF;
    RETURN method;
END
$$;
COMMENT ON FUNCTION _simdup_citus_method(regclass) IS
  'simdup (internal): the Citus distribution method of a table (h, a, r; n for reference and local tables), NULL when it is not distributed or Citus is absent';

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------
-- Inlinable: LANGUAGE sql, one expression, IMMUTABLE, not STRICT, no SET clause. A SQL-standard
-- body (RETURN), so the names inside are bound when the extension is created, whatever the
-- caller's search_path. _simdup_check_k raises 22023 for k outside 0..64 (folded away for a
-- constant k).
CREATE OR REPLACE FUNCTION simdup_match(fp bigint, q bigint, k integer) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN hamming(fp, q) <= _simdup_check_k(k);
COMMENT ON FUNCTION simdup_match(bigint, bigint, integer) IS
  'simdup: true when hamming(fp, q) <= k (k in 0..64); inlined to that condition, which the block indexes of simdup_enable serve on large tables';

-- The n rows nearest to q (exact: widening radius; ties by ctid), nearest first. Join on ctid
-- for the rows themselves:
--   SELECT d.*, n.distance FROM simdup_nearest('docs', q, 5) n JOIN docs d ON d.ctid = n.ctid;
CREATE FUNCTION simdup_nearest(tbl regclass, q bigint, n integer, fingerprint_column name DEFAULT 'simhash')
RETURNS TABLE (ctid tid, fingerprint bigint, distance integer)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col smallint;
BEGIN
    SELECT a.attnum INTO col FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = fingerprint_column AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', fingerprint_column, tbl
            USING ERRCODE = 'undefined_column';
    END IF;
    -- On Citus the query below would run on the shards with this (the coordinator's) table
    -- OID, which names nothing there, or another relation.
    IF @extschema@._simdup_citus_method(tbl) IN ('h', 'a', 'r') THEN
        RAISE EXCEPTION 'simdup_nearest is not supported on distributed table %', tbl
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Use SELECT ... ORDER BY fp <~> q LIMIT n, which Citus runs on every shard.';
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT t.ctid, t.%1$I, @extschema@.hamming(t.%1$I, $1) FROM %2$s t '
        'WHERE t.ctid = ANY (@extschema@._simdup_nearest_tids($3, $4, $1, $2)) ORDER BY 3, 1',
        fingerprint_column, tbl)
    USING q, n, tbl::oid, col::integer;
END
$$;
COMMENT ON FUNCTION simdup_nearest(regclass, bigint, integer, name) IS
  'simdup: the n rows of tbl whose fingerprint column is nearest to q, exactly (the search radius grows until n rows are within it), nearest first, ties by ctid: (ctid, fingerprint, distance)';

DROP FUNCTION simdup_probe(bigint, integer, integer);
DROP FUNCTION simdup_fingerprint_pairs(regclass, integer);
DROP FUNCTION simdup_fingerprint_components(regclass, integer);
DROP FUNCTION simdup_lock_stripes(bigint, integer);

-- ---------------------------------------------------------------------------------------------
-- Equipping tables (sql/enable.sql)
-- ---------------------------------------------------------------------------------------------

-- simdup: equipping a table for search and dedup, and undoing it.
--
-- What simdup_enable('docs', 'body') does, as plain DDL (run it yourself to build the indexes
-- CONCURRENTLY, or to choose index names or a tablespace):
--
--   ALTER TABLE docs ADD COLUMN simhash bigint GENERATED ALWAYS AS (simhash(body)) STORED;
--   CREATE INDEX docs_simhash_k0_idx  ON docs ((_simdup_key(simhash, 0)));
--   CREATE INDEX docs_simhash_k16_idx ON docs ((_simdup_key(simhash, 16)));
--   CREATE INDEX docs_simhash_k32_idx ON docs ((_simdup_key(simhash, 32)));
--   CREATE INDEX docs_simhash_k48_idx ON docs ((_simdup_key(simhash, 48)));
--   INSERT INTO simdup_tables (tbl, text_column, fingerprint_column)
--     VALUES ('docs', 'body', 'simhash');   -- only needed by simdup_pairs / simdup_groups
--
-- (blocks => m cuts the fingerprint into m blocks instead: _simdup_layout(m) lists their bit
-- offsets. simdup_enable('docs', NULL, 'fp') adopts an existing bigint column "fp" instead of
-- adding one.)

-- ---------------------------------------------------------------------------------------------
-- Private functions
-- ---------------------------------------------------------------------------------------------
-- The single-column primary key of a table (NULLs when it has none, or one of several columns):
-- the one place that reads it, for simdup_enable (dedup reports and marks rows by it) and the
-- batch functions (they report rows by it).
CREATE FUNCTION _simdup_primary_key(tbl regclass, OUT key_column name, OUT key_type text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)
    FROM pg_catalog.pg_index i JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = tbl AND i.indisprimary AND i.indnkeyatts = 1;
END;
COMMENT ON FUNCTION _simdup_primary_key(regclass) IS
  'simdup (internal): the single-column primary key of a table (column and type), NULLs when it has none';

-- A table (relkind among kinds) that the caller owns: its name and kind. 42P01 when it does not
-- exist, 42809 when it is not a table of those kinds, 42501 when the caller does not own it.
-- The one check of simdup_enable and simdup_enable_similar.
CREATE FUNCTION _simdup_owned_table(tbl regclass, kinds text, OUT relname name, OUT relkind "char")
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    owner oid;
BEGIN
    SELECT c.relname, c.relkind, c.relowner INTO relname, relkind, owner FROM pg_class c WHERE c.oid = tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'relation with OID % does not exist', tbl::oid USING ERRCODE = 'undefined_table';
    END IF;
    IF strpos(kinds, relkind::text) = 0 THEN
        RAISE EXCEPTION '% is not a table', tbl USING ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT pg_has_role(owner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
END
$$;
COMMENT ON FUNCTION _simdup_owned_table(regclass, text) IS
  'simdup (internal): name and kind of a table of one of the given relkinds that the caller owns; 42P01, 42809 or 42501 otherwise';

-- Fingerprint column and primary key of an enabled table, for the batch functions; errors say
-- what is missing.
CREATE FUNCTION _simdup_table_info(tbl regclass, OUT fingerprint_column name, OUT key_column name)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT s.fingerprint_column INTO fingerprint_column
    FROM @extschema@.simdup_tables s WHERE s.tbl = _simdup_table_info.tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not enabled for simdup', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_enable(table, text_column) first.';
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
CREATE FUNCTION _simdup_registered(tbl regclass) RETURNS simdup_tables
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg @extschema@.simdup_tables;
BEGIN
    SELECT s.* INTO cfg FROM @extschema@.simdup_tables s WHERE s.tbl = _simdup_registered.tbl;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % is not enabled for simdup', tbl USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT pg_has_role((SELECT c.relowner FROM pg_class c WHERE c.oid = tbl), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN cfg;
END
$$;
COMMENT ON FUNCTION _simdup_registered(regclass) IS
  'simdup (internal): the simdup_tables row of an enabled table the caller owns; 42704 when not enabled, 42501 when not the owner';

-- Builds the block indexes of a layout on a fingerprint column.
CREATE FUNCTION _simdup_create_block_indexes(tbl regclass, fingerprint_column name, blocks integer)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    prefix text;
    offs integer;
BEGIN
    -- Index names <table>_<column>_k<offset>_idx, the prefix clipped to stay within NAMEDATALEN.
    SELECT c.relname || '_' || fingerprint_column INTO prefix FROM pg_class c WHERE c.oid = tbl;
    WHILE octet_length(prefix) > 54 LOOP
        prefix := left(prefix, -1);
    END LOOP;
    FOREACH offs IN ARRAY @extschema@._simdup_layout(blocks) LOOP
        EXECUTE format('CREATE INDEX %I ON %s ((@extschema@._simdup_key(%I, %s)))',
                       prefix || '_k' || offs || '_idx', tbl, fingerprint_column, offs);
    END LOOP;
END
$$;
COMMENT ON FUNCTION _simdup_create_block_indexes(regclass, name, integer) IS
  'simdup (internal): creates the B-tree indexes (_simdup_key(fp, offset)) of an m-block layout on a fingerprint column';

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------
-- With on_duplicate ('reject', 'skip' or 'mark'), also installs the dedup trigger of
-- sql/dedup.sql with k = max_distance (NULL: simdup.max_distance now), recorded in
-- simdup_tables; the table needs a single-column primary key.
CREATE FUNCTION simdup_enable(tbl regclass, text_column name, fingerprint_column name DEFAULT 'simhash',
                              on_duplicate text DEFAULT NULL, max_distance integer DEFAULT NULL,
                              blocks integer DEFAULT 4)
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
        IF max_distance IS NOT NULL THEN
            RAISE EXCEPTION 'max_distance is only used with on_duplicate'
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
        trigger_args := @extschema@._simdup_dedup_trigger_args(on_duplicate, k, coalesce(text_column, ''),
                                                               fingerprint_column, coalesce(pk.key_column, ''));
        IF rel.relkind = 'p' THEN
            RAISE EXCEPTION 'on_duplicate is not supported on partitioned table %', tbl
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'A row trigger on a partitioned table runs per partition; enable dedup on a plain table.';
        END IF;
        IF pk.key_column IS NULL THEN
            RAISE EXCEPTION 'table % has no single-column primary key', tbl
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = 'The dedup trigger reports and marks near-duplicates by their primary key.';
        END IF;
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

    PERFORM @extschema@._simdup_create_block_indexes(tbl, fingerprint_column, blocks);

    IF on_duplicate IS NOT NULL THEN
        IF on_duplicate = 'mark' THEN
            EXECUTE format('ALTER TABLE %s ADD COLUMN dup_of %s', tbl, pk.key_type);
        END IF;
        -- On a Citus distributed table the trigger goes to every shard, where it lets through
        -- only the writes simdup_insert checked across shards (src/dedup/citus.rs).
        PERFORM @extschema@._simdup_trigger_ddl(format(
            'CREATE TRIGGER simdup_dedup BEFORE INSERT OR UPDATE ON %s FOR EACH ROW '
            'EXECUTE FUNCTION @extschema@.simdup_dedup_trigger(%s)', tbl, trigger_args));
    END IF;

    INSERT INTO @extschema@.simdup_tables (tbl, text_column, fingerprint_column, on_duplicate, max_distance)
    VALUES (simdup_enable.tbl, simdup_enable.text_column, simdup_enable.fingerprint_column,
            simdup_enable.on_duplicate, k);
END
$$;
COMMENT ON FUNCTION simdup_enable(regclass, name, name, text, integer, integer) IS
  'simdup: equips a table for near-duplicate search: adds fingerprint_column bigint GENERATED ALWAYS AS (simhash(text_column)) STORED and one B-tree index per block (_simdup_key(fp, offset); blocks => 2..8, default 4), and records it in simdup_tables. text_column NULL adopts an existing bigint fingerprint_column. on_duplicate => ''reject'' | ''skip'' | ''mark'' also installs the dedup trigger simdup_dedup (BEFORE INSERT OR UPDATE): a row within max_distance (default: simdup.max_distance at enable time) of an existing row raises 23505, is not stored, or is stored with dup_of (added, the primary key''s type) = the smallest key among its near-duplicates; safe under concurrency (advisory locks); needs a single-column primary key. On a Citus distributed table the trigger on each shard refuses every write but simdup_insert''s, which checks rows across shards on the coordinator. Requires owning the table';

-- The block indexes of an enabled table, read from the catalog.
CREATE FUNCTION simdup_block_indexes(tbl regclass)
RETURNS TABLE (index regclass, block integer, bit_offset integer, bits integer, kind text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT b.index::regclass, b.block, b.bit_offset, b.bits, b.kind
    FROM simdup_tables s
    JOIN pg_catalog.pg_attribute a ON a.attrelid = s.tbl AND a.attname = s.fingerprint_column AND NOT a.attisdropped,
    LATERAL _simdup_block_indexes(s.tbl::oid, a.attnum::integer) b
    WHERE s.tbl = simdup_block_indexes.tbl
    ORDER BY b.block;
END;
COMMENT ON FUNCTION simdup_block_indexes(regclass) IS
  'simdup: the block indexes of a table enabled with simdup_enable, from the catalog: index, block, the bit offset where the block starts, its width in bits, and kind (key: 0.2.0; block: simhash_block INCLUDE (fp) of 0.1.0, replaced by simdup_reindex)';

-- Replaces the block indexes of an enabled table (those of 0.1.0 included) with the key indexes
-- of an m-block layout, in one transaction.
CREATE FUNCTION simdup_reindex(tbl regclass, blocks integer DEFAULT 4) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg @extschema@.simdup_tables := @extschema@._simdup_registered(tbl);
    idx regclass;
BEGIN
    PERFORM @extschema@._simdup_layout(blocks);  -- 22023 unless 2..8 blocks
    -- All in this transaction: other sessions see the old indexes until it commits, then the
    -- new ones (DROP and CREATE INDEX lock the table against writes meanwhile).
    FOR idx IN SELECT b.index FROM @extschema@.simdup_block_indexes(tbl) b LOOP
        EXECUTE format('DROP INDEX %s', idx);
    END LOOP;
    PERFORM @extschema@._simdup_create_block_indexes(tbl, cfg.fingerprint_column, blocks);
END
$$;
COMMENT ON FUNCTION simdup_reindex(regclass, integer) IS
  'simdup: rebuilds the block indexes of an enabled table as the key indexes of an m-block layout (default 4 blocks of 16 bits): the one call that moves a table enabled under simdup 0.1.0 to the smaller, faster 0.2.0 indexes. Requires owning the table';

CREATE OR REPLACE FUNCTION simdup_disable(tbl regclass) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg @extschema@.simdup_tables;
    idx regclass;
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    cfg := @extschema@._simdup_registered(tbl);
    IF cfg.on_duplicate IS NOT NULL THEN
        PERFORM @extschema@._simdup_trigger_ddl(format('DROP TRIGGER IF EXISTS simdup_dedup ON %s', tbl));
        IF cfg.on_duplicate = 'mark' THEN
            EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS dup_of', tbl);
        END IF;
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
COMMENT ON FUNCTION simdup_disable(regclass) IS
  'simdup: removes what simdup_enable added to a table: the dedup trigger and dup_of column (if any), the block indexes, the generated fingerprint column (if simdup_enable added it) and its simdup_tables row. Requires owning the table';

-- ---------------------------------------------------------------------------------------------
-- Dedup trigger (sql/dedup.sql): it runs no SQL any more, so no SET clauses
-- ---------------------------------------------------------------------------------------------

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
CREATE OR REPLACE FUNCTION simdup_dedup_trigger() RETURNS trigger
LANGUAGE c
AS 'MODULE_PATHNAME', 'simdup_dedup_trigger';
COMMENT ON FUNCTION simdup_dedup_trigger() IS
  'simdup: the dedup trigger function installed by simdup_enable(..., on_duplicate => ...) as BEFORE INSERT OR UPDATE FOR EACH ROW, arguments (on_duplicate, max_distance, text_column or '''', fingerprint_column, key_column): computes simhash of the new text, takes the row''s advisory lock stripes, finds the near-duplicate with the smallest key through the block indexes, then rejects (23505, constraint simdup_dedup), skips or marks (dup_of) the row. On a shard of a Citus distributed table it refuses (0A000) every write of a new text but those of simdup_insert, which checked them across shards';

-- New in 0.2.0: checked writes (cross-shard dedup on Citus).
-- ---------------------------------------------------------------------------------------------
-- Private functions
-- ---------------------------------------------------------------------------------------------
-- The checked write of simdup_insert and simdup_insert_select: each row of `source` (a query returning one jsonb object
-- per row, run with $1 = arg) is inserted into tbl, one single-row INSERT at a time, so that
-- every row is checked against the rows stored before it, the same call's included.
--
-- On a plain table or a Citus reference table the table's simdup_dedup trigger checks each row
-- (src/dedup/). On a Citus distributed table (hash, range or append) the trigger of a shard sees
-- only that shard, so the check is made here, on the coordinator, for each row
-- (docs/citus.md, "Dedup across shards", argues why this is exact under concurrency):
--   1. the fingerprint: simhash of the text (the same function as the generated column);
--   2. its k + 1 lock stripes (_simdup_lock_stripes, the trigger's own), exclusive
--      transaction-scoped advisory locks (table OID, stripe) on the coordinator, ascending:
--      two writers of near-duplicates share a stripe, whichever shards their rows go to;
--   3. then one query over every shard for the near-duplicate with the smallest key (each
--      shard serves it from its block indexes); READ COMMITTED, so each worker's snapshot is
--      taken after the locks are held, and this transaction's earlier rows are seen because
--      Citus reads a shard over the connection that wrote it;
--   4. reject (23505), skip, or mark (dup_of), then the INSERT, routed to the row's shard, with
--      simdup.checked_write naming the table: a SET LOCAL that Citus propagates to the workers
--      (citus.propagate_set_commands = 'local', from inside a DO block, which Citus counts as a
--      transaction block), and the only writes the shard trigger lets through.
-- No SET search_path: the caller's query runs with the caller's search_path (every name here
-- is qualified).
CREATE FUNCTION _simdup_insert(tbl regclass, source text, arg jsonb) RETURNS bigint
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    cfg @extschema@.simdup_tables;
    pk record;
    distributed boolean;
    coordinator boolean;
    schema_name name;
    table_name name;
    marker text;
    propagate text;
    j jsonb;
    is_first boolean := true;
    cols text;
    vals text;
    unknown text;
    fp_sql text;
    find_sql text;
    insert_sql text;
    fp bigint;
    found_key text;
    found_distance integer;
    stored bigint := 0;
    n bigint;
BEGIN
    SELECT p.key_column, p.key_type INTO pk FROM @extschema@._simdup_primary_key(tbl) p;
    SELECT n.nspname, c.relname INTO schema_name, table_name
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tbl;
    -- The table's name as messages give it and simdup.checked_write holds it.
    marker := format('%I.%I', schema_name, table_name);
    -- (Reference tables, 'n', are not: each placement's trigger sees every row.)
    distributed := coalesce(@extschema@._simdup_citus_method(tbl) IN ('h', 'a', 'r'), false);
    IF distributed THEN
        -- (The registry of enabled tables is on the coordinator only.)
        EXECUTE 'SELECT pg_catalog.citus_is_coordinator()' INTO coordinator;
        IF NOT coordinator THEN
            RAISE EXCEPTION 'simdup_insert into distributed table % must run on the coordinator', marker
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Its lock stripes live on the coordinator; a worker''s advisory locks would not serialize writers on other nodes.';
        END IF;
    END IF;
    SELECT s.* INTO cfg FROM @extschema@.simdup_tables s WHERE s.tbl = _simdup_insert.tbl;
    IF NOT FOUND OR cfg.on_duplicate IS NULL THEN
        RAISE EXCEPTION 'table % is not enabled for dedup', tbl::text
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_enable(table, text_column, on_duplicate => ''reject'' | ''skip'' | ''mark'') first.';
    END IF;
    IF distributed THEN
        IF current_setting('transaction_isolation') <> 'read committed' THEN
            RAISE EXCEPTION 'simdup_insert into distributed table % needs READ COMMITTED', marker
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = format('At %s, a worker''s snapshot can predate a concurrent writer''s commit, so its near-duplicate could be missed.',
                                      upper(current_setting('transaction_isolation')));
        END IF;
        IF (SELECT c.relrowsecurity FROM pg_catalog.pg_class c WHERE c.oid = tbl) THEN
            RAISE EXCEPTION 'simdup_insert does not support distributed table % with row-level security', marker
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'The check searches the table as the caller; row security would hide near-duplicates from it.';
        END IF;
        fp_sql := format('SELECT %s FROM pg_catalog.jsonb_populate_record(NULL::%s, $1) r',
                         CASE WHEN cfg.text_column IS NULL THEN format('r.%I', cfg.fingerprint_column)
                              ELSE format('@extschema@.simhash(r.%I::text)', cfg.text_column) END, tbl);
        -- (Ordered aggregates, not ORDER BY key LIMIT 1: pushed to the shards, that would let
        -- a shard's planner walk its primary key index, estimating a third of the rows match.)
        find_sql := format('SELECT (array_agg(t.%1$I ORDER BY t.%1$I))[1]::text, '
                           '(array_agg(@extschema@.hamming(t.%2$I, $1) ORDER BY t.%1$I))[1] FROM %3$s t '
                           'WHERE @extschema@.hamming(t.%2$I, $1) <= %4$s',
                           pk.key_column, cfg.fingerprint_column, tbl, cfg.max_distance);
        -- Marks this transaction's writes of tbl as checked, on every worker.
        propagate := current_setting('citus.propagate_set_commands');
        PERFORM set_config('citus.propagate_set_commands', 'local', true);
        EXECUTE format('DO $simdup$ BEGIN SET LOCAL simdup.checked_write = %L; END $simdup$', marker);
    END IF;

    FOR j IN EXECUTE source USING arg LOOP
        IF j IS NULL OR jsonb_typeof(j) <> 'object' THEN
            RAISE EXCEPTION 'simdup_insert: a row must be a JSON object, got %', coalesce(jsonb_typeof(j), 'NULL')
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF is_first THEN
            -- The columns: those of the first row (others take their defaults; generated
            -- columns, and dup_of in 'mark' mode, are computed, not taken).
            SELECT string_agg(k, ', ') INTO unknown FROM jsonb_object_keys(j) k
            WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_attribute a WHERE a.attrelid = tbl AND a.attname = k
                                                          AND a.attnum > 0 AND NOT a.attisdropped);
            IF unknown IS NOT NULL THEN
                RAISE EXCEPTION 'relation % has no column(s) %', marker, unknown USING ERRCODE = 'undefined_column';
            END IF;
            SELECT string_agg(format('%I', a.attname), ', ' ORDER BY a.attnum),
                   string_agg(format('r.%I', a.attname), ', ' ORDER BY a.attnum)
              INTO cols, vals
            FROM pg_catalog.pg_attribute a
            WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
              AND j ? a.attname AND NOT (distributed AND cfg.on_duplicate = 'mark' AND a.attname = 'dup_of');
            IF distributed AND cfg.on_duplicate = 'mark' THEN
                cols := concat_ws(', ', cols, 'dup_of');
                vals := concat_ws(', ', vals, format('$2::%s', pk.key_type));
            END IF;
            insert_sql := CASE WHEN cols IS NULL THEN format('INSERT INTO %s DEFAULT VALUES', tbl)
                               ELSE format('INSERT INTO %s (%s) SELECT %s FROM pg_catalog.jsonb_populate_record(NULL::%s, $1) r',
                                           tbl, cols, vals, tbl) END;
            is_first := false;
        END IF;
        found_key := NULL;
        IF distributed THEN
            EXECUTE fp_sql INTO fp USING j;
            IF fp IS NOT NULL THEN
                PERFORM pg_advisory_xact_lock(tbl::oid::integer, s)
                FROM unnest(@extschema@._simdup_lock_stripes(fp, cfg.max_distance)) s ORDER BY s;
                EXECUTE find_sql INTO found_key, found_distance USING fp;
            END IF;
            IF found_key IS NOT NULL AND cfg.on_duplicate = 'reject' THEN
                RAISE EXCEPTION 'near-duplicate row violates simdup_dedup on relation "%"', table_name
                    USING ERRCODE = 'unique_violation',
                          DETAIL = format('Key (%I)=(%s) is at Hamming distance %s (max_distance %s).',
                                          pk.key_column, found_key, found_distance, cfg.max_distance),
                          SCHEMA = schema_name, TABLE = table_name, CONSTRAINT = 'simdup_dedup';
            END IF;
            CONTINUE WHEN found_key IS NOT NULL AND cfg.on_duplicate = 'skip';
        END IF;
        EXECUTE insert_sql USING j, found_key;
        GET DIAGNOSTICS n = ROW_COUNT;
        stored := stored + n;
    END LOOP;

    IF distributed THEN
        EXECUTE 'DO $simdup$ BEGIN SET LOCAL simdup.checked_write = ''''; END $simdup$';
        PERFORM set_config('citus.propagate_set_commands', propagate, true);
    END IF;
    RETURN stored;
END
$$;
COMMENT ON FUNCTION _simdup_insert(regclass, text, jsonb) IS
  'simdup (internal): the checked write of simdup_insert: inserts the jsonb rows of a query one by one; on a Citus distributed table checks each against every shard on the coordinator (lock stripes, then a lookup) before writing it';

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------
-- simdup_insert(tbl, rows jsonb) and simdup_insert_select(tbl, query): INSERT ... VALUES and
-- INSERT ... SELECT (COPY: into a staging table, then simdup_insert_select(tbl, 'TABLE staging')).
-- Inserts rows into a table enabled with on_duplicate and returns how many it stored (skipped
-- near-duplicates are not counted; a rejected one raises 23505 and stores nothing of the call).
-- Columns are matched by name; columns the rows leave out take their defaults. On a plain or
-- reference table it is the same as INSERT (the trigger checks each row); on a Citus
-- distributed table it is the write that is checked against every shard, and plain INSERT,
-- COPY and text-changing UPDATEs are refused there.
CREATE FUNCTION simdup_insert(tbl regclass, rows jsonb) RETURNS bigint
LANGUAGE sql VOLATILE STRICT
BEGIN ATOMIC
    SELECT _simdup_insert(tbl,
        'SELECT e FROM pg_catalog.jsonb_array_elements(CASE pg_catalog.jsonb_typeof($1) WHEN ''array'' THEN $1 ELSE pg_catalog.jsonb_build_array($1) END) e',
        rows);
END;
COMMENT ON FUNCTION simdup_insert(regclass, jsonb) IS
  'simdup: inserts rows (a JSON object, or an array of objects: column => value) into a table enabled with on_duplicate, checking each against the stored rows and those before it; on a Citus distributed table the one checked write (against every shard, on the coordinator). Returns the number of rows stored';

CREATE FUNCTION simdup_insert_select(tbl regclass, query text) RETURNS bigint
LANGUAGE sql VOLATILE STRICT
BEGIN ATOMIC
    SELECT _simdup_insert(tbl, 'SELECT pg_catalog.to_jsonb(q) FROM (' || query || ') q', NULL);
END;
COMMENT ON FUNCTION simdup_insert_select(regclass, text) IS
  'simdup: inserts the rows of a query (columns matched by name, e.g. $$SELECT id, body FROM staging$$) into a table enabled with on_duplicate, checking each against the stored rows and those before it; on a Citus distributed table the one checked write (against every shard, on the coordinator). Returns the number of rows stored';

-- ---------------------------------------------------------------------------------------------
-- Batch (sql/batch.sql)
-- ---------------------------------------------------------------------------------------------

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
CREATE OR REPLACE FUNCTION simdup_pairs(tbl regclass, k integer DEFAULT simdup_max_distance())
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

-- ---------------------------------------------------------------------------------------------
-- Comments of the Rust layer's functions (new and reworded), as a fresh install sets them
-- ---------------------------------------------------------------------------------------------

COMMENT ON FUNCTION _simdup_block_indexes(oid, integer) IS 'simdup (internal): the block indexes of a fingerprint column, read from the catalog: index, block, bit offset, width, kind (key: 0.2.0, block: 0.1.0)';

COMMENT ON FUNCTION _simdup_check_group_method(text) IS 'simdup (internal): the grouping method when it is components or leader; 22023 otherwise';

COMMENT ON FUNCTION _simdup_check_k(integer) IS 'simdup (internal): k when it is a valid maximum Hamming distance (0..64); 22023 otherwise';

COMMENT ON FUNCTION _simdup_dedup_trigger_args(text, integer, text, text, text) IS 'simdup (internal): checks simdup_enable''s on_duplicate and max_distance and returns the dedup trigger''s argument list';

COMMENT ON FUNCTION _simdup_fingerprint_components(regclass, text, integer) IS 'simdup (internal): connected components of _simdup_fingerprint_pairs(tbl, fingerprint_column, k): each fingerprint with a near neighbour, and the smallest fingerprint of its component';

COMMENT ON FUNCTION _simdup_fingerprint_leaders(regclass, text, text, integer) IS 'simdup (internal): leader clustering of a table''s distinct fingerprints in the order of their smallest key: each fingerprint in a group of two or more with its leader, every member within k of its leader';

COMMENT ON FUNCTION _simdup_fingerprint_pairs(regclass, text, integer) IS 'simdup (internal): all pairs of distinct fingerprints (fa < fb) of a table''s fingerprint column within Hamming distance k, each once, with the distance: identical fingerprints collapsed, then an in-memory join on the values of each 16-bit block within its threshold (never all pairs)';

COMMENT ON FUNCTION _simdup_key(bigint, integer) IS 'simdup (internal): the block-index key of a fingerprint: fp rotated left by offset bits, sign bit flipped (the keys of one block value form one range)';

COMMENT ON FUNCTION _simdup_layout(integer) IS 'simdup (internal): the bit offsets at which the blocks of a layout of m nearly equal blocks start (2..8 blocks; 22023 otherwise)';

COMMENT ON FUNCTION _simdup_lock_stripes(bigint, integer) IS 'simdup (internal): the advisory lock stripes (0..4095) the dedup trigger locks exclusively, as pg_advisory_xact_lock(table OID, stripe), for fingerprint fp at maximum distance k: one per piece of the fingerprint cut into k + 1 pieces (near-duplicates share a piece, so a stripe), ascending';

COMMENT ON FUNCTION jaccard(text, text, integer) IS 'simdup: exact Jaccard similarity |A∩B|/|A∪B| of the character k-shingle sets (default k = 5) of two texts, 0..1; NULL when either has no shingles';

COMMENT ON FUNCTION jaccard(bigint[], bigint[]) IS 'simdup: exact Jaccard similarity of two stored shingle sets (from shingles or word_shingles; order and duplicates ignored); NULL when either is empty; NULL elements raise 22004';

COMMENT ON FUNCTION minhash(text, integer, integer) IS 'simdup: MinHash signature (n values, default 128) of the character k-shingles (default k = 5) of a text; deterministic (fixed seeds, see minhash_format_version); NULL for empty or whitespace-only text. Store it: sig bigint[] GENERATED ALWAYS AS (minhash(body)) STORED';

COMMENT ON FUNCTION minhash(bigint[], integer) IS 'simdup: MinHash signature (n values, default 128) of a stored shingle set, e.g. minhash(word_shingles(body)); NULL for an empty set; NULL elements raise 22004';

COMMENT ON FUNCTION minhash_choose_bands(integer, double precision) IS 'simdup: bands and rows (bands*rows <= n) for a Jaccard threshold strictly between 0 and 1, minimizing the false-positive plus false-negative area under the S-curve, with the approximate threshold (1/bands)^(1/rows) where the curve is steepest';

COMMENT ON FUNCTION minhash_format_version() IS 'simdup: version of the MinHash format (normalization, shingle hashes, permutation seeds, band hash) computed by this build; stored shingle sets, signatures and band indexes of another version must be recomputed';

COMMENT ON FUNCTION minhash_jaccard(bigint[], bigint[]) IS 'simdup: estimated Jaccard similarity of two signatures, the fraction of agreeing positions (standard deviation sqrt(J(1-J)/n), at most 0.044 for n = 128); different lengths raise 22023, NULL elements 22004';

COMMENT ON FUNCTION minhash_s_curve(double precision, integer, integer) IS 'simdup: probability 1-(1-J^rows)^bands that two documents of Jaccard similarity J share at least one of bands LSH bands of rows rows';

COMMENT ON FUNCTION shingles(text, integer) IS 'simdup: set of xxh3-64 hashes of the character k-shingles (default k = 5) of the normalized text (NFKC, lower case, whitespace runs as one space), sorted as unsigned 64-bit numbers; a text shorter than k characters is one shingle; NULL for empty or whitespace-only text';

COMMENT ON FUNCTION simdup_fingerprint_version() IS 'simdup: version of the fingerprint format computed by this build';

COMMENT ON FUNCTION simdup_max_distance() IS 'simdup: the current simdup.max_distance (default k of the batch functions); loads the library, so it works before any other simdup call in a session';

COMMENT ON FUNCTION simhash(text) IS 'simdup: 64-bit SimHash fingerprint of a Chinese/English text (NFKC + lower case, jieba segmentation, sublinear TF x IDF weights, xxh3-64); NULL for text without words';

COMMENT ON FUNCTION simhash(text, text) IS 'simdup: SimHash of a document with a title: format 1 of title || E''\n'' || body (the title-aware choice measured best, docs/quality.md); a NULL or empty title gives simhash(body), a NULL body NULL';

COMMENT ON FUNCTION simhash(text, text, text) IS 'simdup: SimHash of body (and title, may be NULL) under a named scheme: default (format 1, title fingerprinted with the body), title (body words also in the title x5), improved (Zhang & He 2020: part of speech, word length, cue words x5, title words x5); unknown scheme 22023, NULL scheme 22004';

COMMENT ON FUNCTION simhash_block(bigint, integer) IS 'simdup: 16-bit block i (0 = most significant, 0..3) of a fingerprint, as 0..65535 (the key of the block indexes of simdup 0.1.0)';

COMMENT ON FUNCTION simhash_features(text) IS 'simdup: the weighted features behind simhash(text), one row per distinct token: token, weight, hash, count, idf';

COMMENT ON FUNCTION simhash_features(text, text, text) IS 'simdup: the weighted features behind simhash(body, title, scheme), one row per distinct token: token, weight, hash, count, idf';

COMMENT ON FUNCTION word_shingles(text, integer) IS 'simdup: set of hashes of the word k-shingles (default k = 3) of the text: jieba words, numbers and English words, punctuation dropped; NULL for text without words';

-- ---------------------------------------------------------------------------------------------
-- Verified similarity search (sql/similar.sql, src/similar.rs): the same definitions as a fresh
-- install.
-- ---------------------------------------------------------------------------------------------

CREATE  FUNCTION "_simdup_check_similarity"(
	"threshold" double precision, /* f64 */
	"recall" double precision /* f64 */
) RETURNS double precision /* f64 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_check_similarity_wrapper';

COMMENT ON FUNCTION _simdup_check_similarity(double precision, double precision) IS 'simdup (internal): the threshold when it is a valid Jaccard threshold (0 < t <= 1) and recall a valid recall (0 < r < 1); 22023 otherwise';

CREATE  FUNCTION "minhash_choose_bands"(
	"n" INT, /* i32 */
	"threshold" double precision, /* f64 */
	"recall" double precision /* f64 */
) RETURNS TABLE (
	"bands" INT,  /* i32 */
	"rows" INT,  /* i32 */
	"approx_threshold" double precision  /* f64 */
)
IMMUTABLE STRICT PARALLEL SAFE 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'minhash_choose_bands_for_recall_wrapper';

COMMENT ON FUNCTION minhash_choose_bands(integer, double precision, double precision) IS 'simdup: bands and rows (bands*rows <= n) under which a pair of Jaccard similarity threshold becomes a candidate with probability at least recall (minhash_s_curve(threshold, bands, rows) >= recall), the steepest such curve (smallest false-positive area below the threshold), with its approximate threshold (1/bands)^(1/rows); for verified searches (simdup_similar), see docs/similar.md';

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
-- definition, so the index is the whole configuration; DROP INDEX undoes it.

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
-- index definitions, oldest first. The expression is SQL text as pg_get_indexdef prints it
-- under search_path pg_catalog (names outside it qualified), for the caller's dynamic SQL.
CREATE FUNCTION _simdup_similar_indexes(tbl regclass)
RETURNS TABLE (index regclass, text_expr text, k integer, bands integer, rows integer)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT x.indexrelid::regclass, m[1], m[2]::integer, m[3]::integer, m[4]::integer
    FROM (SELECT i.indexrelid,
                 regexp_match(pg_get_indexdef(i.indexrelid, 1, false),
                              '^(?:[^(]*\.)?_simdup_similar_bands\((.*), (\d+), (\d+), (\d+)\)$') AS m
          FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
          WHERE i.indrelid = tbl AND i.indisvalid AND i.indnatts = 1 AND a.amname = 'gin'
            AND i.indpred IS NULL) x
    WHERE x.m IS NOT NULL
    ORDER BY x.indexrelid;
END
$$;
COMMENT ON FUNCTION _simdup_similar_indexes(regclass) IS
  'simdup (internal): the valid GIN indexes of a table on _simdup_similar_bands(expr, k, bands, rows), oldest first, with expr (SQL text), k, bands and rows read from their definitions';

-- Equips a table for simdup_similar: one GIN index on the LSH bands of text_column.
CREATE FUNCTION simdup_enable_similar(tbl regclass, text_column name, threshold double precision DEFAULT 0.5,
                                      k integer DEFAULT 5, recall double precision DEFAULT 0.99)
RETURNS TABLE (index regclass, bands integer, rows integer, p_at_threshold double precision)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel record;
    b integer;
    r integer;
    idx text;
BEGIN
    IF tbl IS NULL OR text_column IS NULL OR threshold IS NULL OR k IS NULL OR recall IS NULL THEN
        RAISE EXCEPTION 'table, text column, threshold, k and recall must not be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    SELECT * INTO rel FROM @extschema@._simdup_owned_table(tbl, 'rpm');
    IF NOT EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = tbl AND a.attname = text_column
                   AND a.attnum > 0 AND NOT a.attisdropped) THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', text_column, tbl
            USING ERRCODE = 'undefined_column';
    END IF;
    PERFORM @extschema@._simdup_check_similarity(threshold, recall);  -- 22023 (src/args.rs)
    PERFORM @extschema@.shingles('', k);                               -- 22023 unless 1..256
    SELECT c.bands, c.rows INTO b, r FROM @extschema@.minhash_choose_bands(128, threshold, recall) c;
    -- <table>_<column>_similar_idx, the prefix clipped to stay within NAMEDATALEN.
    idx := rel.relname || '_' || text_column;
    WHILE octet_length(idx) > 51 LOOP
        idx := left(idx, -1);
    END LOOP;
    idx := idx || '_similar_idx';
    EXECUTE format('CREATE INDEX %I ON %s USING gin (@extschema@._simdup_similar_bands(%I, %s, %s, %s))',
                   idx, tbl, text_column, k, b, r);
    RETURN QUERY
    SELECT format('%I.%I', n.nspname, idx)::regclass, b, r, @extschema@.minhash_s_curve(threshold, b, r)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = tbl;
END
$$;
COMMENT ON FUNCTION simdup_enable_similar(regclass, name, double precision, integer, double precision) IS
  'simdup: equips a table for simdup_similar: a GIN index <table>_<column>_similar_idx on the LSH bands of text_column (_simdup_similar_bands(text_column, k, bands, rows), no column added), with bands x rows (<= 128) chosen so that a pair of character-k-shingle Jaccard similarity threshold (default 0.5, k default 5) becomes a candidate with probability >= recall (default 0.99): minhash_choose_bands(128, threshold, recall). Returns the index, bands, rows and that probability. Requires owning the table; DROP INDEX undoes it';

-- The rows of tbl whose jaccard(text, query, k) >= threshold, most similar first (ties by ctid).
-- Join on ctid for the rows themselves:
--   SELECT d.*, s.similarity FROM simdup_similar('docs', $1) s JOIN docs d ON d.ctid = s.ctid;
CREATE FUNCTION simdup_similar(tbl regclass, query text, threshold double precision DEFAULT 0.5,
                               min_recall double precision DEFAULT 0.99)
RETURNS TABLE (ctid tid, similarity double precision)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
-- The bands expression in a sequential scan's filter computes a MinHash for every row, which the
-- planner cannot see (function cost 1): always take the index.
SET enable_seqscan = off
AS $$
DECLARE
    ix record;
    best record;
    n integer := 0;
    found_one boolean := false;
    p double precision;
    qset bigint[];
BEGIN
    PERFORM @extschema@._simdup_check_similarity(threshold, min_recall);  -- 22023 (src/args.rs)
    -- The first similarity index whose S-curve reaches min_recall at the threshold.
    FOR ix IN SELECT * FROM @extschema@._simdup_similar_indexes(tbl) LOOP
        n := n + 1;
        p := @extschema@.minhash_s_curve(threshold, ix.bands, ix.rows);
        IF p >= min_recall THEN
            best := ix;
            found_one := true;
            EXIT;
        END IF;
    END LOOP;
    IF NOT found_one THEN
        IF n = 0 THEN
            RAISE EXCEPTION 'table % has no similarity index', tbl
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Call simdup_enable_similar(table, text_column, threshold) first.';
        END IF;
        RAISE EXCEPTION 'the similarity index % finds pairs of similarity % with probability %, below min_recall %',
                        ix.index, threshold, round(p::numeric, 4), min_recall
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = format('Search at a threshold of at least the one the index was made for, or add an index for this one: simdup_enable_similar(%L, text_column, %s).', tbl::text, threshold);
    END IF;
    -- On Citus the ctids below would be those of different shards, which name no row.
    IF @extschema@._simdup_citus_method(tbl) IN ('h', 'a', 'r') THEN
        RAISE EXCEPTION 'simdup_similar is not supported on distributed table %', tbl
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'It returns ctids, which do not identify a row across shards.',
                  HINT = format('Query the table instead (Citus runs it on every shard, through each shard''s index): '
                                'SELECT key, jaccard(shingles(%1$s, %2$s), shingles(q, %2$s)) AS similarity FROM %3$s '
                                'WHERE _simdup_similar_bands(%1$s, %2$s, %4$s, %5$s) && _simdup_similar_bands(q, %2$s, %4$s, %5$s) '
                                'AND jaccard(shingles(%1$s, %2$s), shingles(q, %2$s)) >= %6$s',
                                best.text_expr, best.k, tbl, best.bands, best.rows, threshold);
    END IF;
    qset := @extschema@.shingles(query, best.k);
    IF qset IS NULL THEN
        RETURN;  -- no shingles: no similarity to anything
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT s.ctid, s.similarity FROM ('
        '  SELECT t.ctid, @extschema@.jaccard(@extschema@.shingles(%1$s, %2$s), $1) AS similarity '
        '  FROM %3$s t WHERE @extschema@._simdup_similar_bands(%1$s, %2$s, %4$s, %5$s) && $2 OFFSET 0) s '
        'WHERE s.similarity >= $3 ORDER BY s.similarity DESC, s.ctid',
        best.text_expr, best.k, tbl, best.bands, best.rows)
    USING qset, @extschema@._simdup_similar_bands(query, best.k, best.bands, best.rows), threshold;
END
$$;
COMMENT ON FUNCTION simdup_similar(regclass, text, double precision, double precision) IS
  'simdup: the rows of tbl whose exact Jaccard similarity of character k-shingles with query (jaccard(text_column, query, k)) is at least threshold (default 0.5), most similar first: (ctid, similarity). Candidates from the GIN index of simdup_enable_similar (LSH bands, k read from it), each verified exactly: precision is exact, recall at the threshold is minhash_s_curve(threshold, bands, rows) >= min_recall (default 0.99; 22023 when the index cannot reach it). NULL query: no rows';
