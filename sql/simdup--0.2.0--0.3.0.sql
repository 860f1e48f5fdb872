-- simdup 0.2.0 -> 0.3.0 (ALTER EXTENSION simdup UPDATE).
--
-- What changes (CHANGELOG.md, 0.3.0): safe against hostile roles — the dedup trigger checks the
-- columns it reads and writes on every row, waits for in-progress deleters of a candidate, and
-- takes its lock stripes under simdup's own advisory tag (_simdup_lock_row); simdup_enable
-- refuses an adopted generated fingerprint column; _simdup_insert runs with search_path pinned
-- and writes each row with its own keys (new argument: the caller's search_path); index names
-- that never collide (_simdup_index_name); the fingerprint column found after a rename
-- (_simdup_fingerprint_column); ORDER BY fp <~> q LIMIT n served by the block indexes
-- (_simdup_nearest_tids, simdup_nearest over it); jaccard(body, q) >= t served by a
-- similarity index (jaccard gets a support function and COST 100); simdup_similar in Rust
-- (a C function with a plan kept per backend, no longer PL/pgSQL); one column check
-- (_simdup_column) and one owner check for the SQL functions; the similarity indexes
-- read from the catalog; dedup by verified similarity (simdup_enable_similar(..., on_duplicate =>,
-- containment =>), containment, _simdup_similar_match,
-- simdup_similar_dedup_trigger, simdup_disable_similar), with a short-text rule and its index
-- (_simdup_similar_short_bands, _simdup_similar_short_match). The fingerprint format does not
-- change (format 1).

\echo Use "ALTER EXTENSION simdup UPDATE TO '0.3.0'" to load this file. \quit

CREATE OR REPLACE FUNCTION "_simdup_check_dedup"(
	"tbl" oid /* pg_sys :: Oid */
) RETURNS void
STRICT VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_check_dedup_wrapper';

COMMENT ON FUNCTION _simdup_check_dedup(oid) IS 'simdup (internal): checks the columns the dedup trigger of a table (simdup_dedup or simdup_dedup_similar) reads and writes (exist, types, not a generated adopted fingerprint), as the trigger does on every row, and that the table has not both; simdup_enable and simdup_enable_similar call it after installing the trigger';

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
        SELECT a.attname INTO col FROM pg_attribute a
        WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid = 'bigint'::regtype
          AND EXISTS (SELECT FROM @extschema@._simdup_block_indexes(tbl::oid, a.attnum::integer))
        ORDER BY a.attnum LIMIT 1;
    END IF;
    RETURN col;
END
$$;

COMMENT ON FUNCTION _simdup_fingerprint_column(regclass) IS
  'simdup (internal): the fingerprint column of an enabled table, found by the name simdup_tables records or, after a rename, as the column its block indexes are on';

CREATE OR REPLACE FUNCTION _simdup_index_name(tbl regclass, stem text, suffix text) RETURNS name
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ns oid;
    n integer := 0;
    tail text;
    head text;
BEGIN
    SELECT c.relnamespace INTO ns FROM pg_class c WHERE c.oid = tbl;
    LOOP
        tail := CASE WHEN n = 0 THEN suffix ELSE '_' || n || suffix END;
        head := stem;
        WHILE octet_length(head || tail) > 63 LOOP
            head := left(head, -1);
        END LOOP;
        IF NOT EXISTS (SELECT FROM pg_class c WHERE c.relnamespace = ns AND c.relname = (head || tail)::name) THEN
            RETURN (head || tail)::name;
        END IF;
        n := n + 1;
    END LOOP;
END
$$;

COMMENT ON FUNCTION _simdup_index_name(regclass, text, text) IS
  'simdup (internal): a free name for a new index of a table, <stem><suffix> or <stem>_<n><suffix>, clipped to fit NAMEDATALEN';

CREATE OR REPLACE FUNCTION _simdup_insert(tbl regclass, source text, arg jsonb, caller_search_path text) RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    marker text;
    coordinator boolean;
    rows jsonb;
    j jsonb;
    keys text[];
    row_keys text[];
    cols text;
    vals text;
    unknown text;
    insert_sql text;
    stored bigint := 0;
    n bigint;
    same_keys boolean;
BEGIN
    -- The table's name as messages give it.
    SELECT pg_catalog.format('%I.%I', ns.nspname, c.relname) INTO marker
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE c.oid OPERATOR(pg_catalog.=) tbl;
    -- (Reference tables are not distributed in this sense: each placement's trigger sees every row.)
    IF @extschema@._simdup_citus_distributed(tbl) THEN
        -- (Dynamic: the function exists only where Citus is installed.)
        EXECUTE 'SELECT pg_catalog.citus_is_coordinator()' INTO coordinator;
        IF NOT coordinator THEN
            RAISE EXCEPTION 'simdup_insert into distributed table % must run on the coordinator', marker
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Its lock stripes live on the coordinator; a worker''s locks would not serialize writers on other nodes.';
        END IF;
    END IF;
    -- A table with a dedup trigger: simdup_enable's or simdup_enable_similar's.
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_trigger t
                   WHERE t.tgrelid OPERATOR(pg_catalog.=) tbl
                     AND t.tgname OPERATOR(pg_catalog.=) ANY (ARRAY['simdup_dedup', 'simdup_dedup_similar']::name[])) THEN
        RAISE EXCEPTION 'table % is not enabled for dedup', tbl::pg_catalog.text
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_enable(table, text_column, on_duplicate => ''reject'' | ''skip'' | ''mark'') first.';
    END IF;

    -- The caller's rows, read with the caller's search_path (their query names their tables).
    PERFORM pg_catalog.set_config('search_path', caller_search_path, true);
    EXECUTE 'SELECT pg_catalog.jsonb_agg(q.j) FROM (' || source || ') q(j)' INTO rows USING arg;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    IF rows IS NULL THEN
        RETURN 0;
    END IF;
    -- Rows that all name the same columns (always those of simdup_insert_select) go into one
    -- INSERT ... SELECT, in their order: checked as any such statement (the trigger's bulk check
    -- of a long one on one node, batches across shards on Citus).
    -- (Each an object with the first one's keys, no other: no sort of the rows' key lists.)
    IF pg_catalog.jsonb_array_length(rows) OPERATOR(pg_catalog.>) 1
       AND pg_catalog.jsonb_typeof(rows OPERATOR(pg_catalog.->) 0) OPERATOR(pg_catalog.=) 'object' THEN
        keys := coalesce((SELECT pg_catalog.array_agg(k) FROM pg_catalog.jsonb_object_keys(rows OPERATOR(pg_catalog.->) 0) k), '{}');
        same_keys := NOT EXISTS (
            SELECT FROM pg_catalog.jsonb_array_elements(rows) e
            WHERE pg_catalog.jsonb_typeof(e) OPERATOR(pg_catalog.<>) 'object'
               OR NOT e OPERATOR(pg_catalog.?&) keys
               OR (e OPERATOR(pg_catalog.-) keys) OPERATOR(pg_catalog.<>) '{}'::pg_catalog.jsonb);
        keys := NULL;
    END IF;

    FOR j IN SELECT e FROM pg_catalog.jsonb_array_elements(rows) e LOOP
        IF j IS NULL OR pg_catalog.jsonb_typeof(j) OPERATOR(pg_catalog.<>) 'object' THEN
            RAISE EXCEPTION 'simdup_insert: a row must be a JSON object, got %', coalesce(pg_catalog.jsonb_typeof(j), 'NULL')
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        -- The row's own columns (generated columns are computed, not taken); what is built from
        -- them is rebuilt only when the keys change.
        SELECT pg_catalog.array_agg(k ORDER BY k) INTO row_keys FROM pg_catalog.jsonb_object_keys(j) k;
        IF keys IS NULL OR row_keys IS DISTINCT FROM keys THEN
            keys := coalesce(row_keys, '{}');
            SELECT pg_catalog.string_agg(k, ', ') INTO unknown FROM pg_catalog.unnest(keys) k
            WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_attribute a
                              WHERE a.attrelid OPERATOR(pg_catalog.=) tbl AND a.attname OPERATOR(pg_catalog.=) k
                                AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped);
            IF unknown IS NOT NULL THEN
                RAISE EXCEPTION 'relation % has no column(s) %', marker, unknown USING ERRCODE = 'undefined_column';
            END IF;
            SELECT pg_catalog.string_agg(pg_catalog.format('%I', a.attname), ', ' ORDER BY a.attnum),
                   pg_catalog.string_agg(pg_catalog.format('r.%I', a.attname), ', ' ORDER BY a.attnum)
              INTO cols, vals
            FROM pg_catalog.pg_attribute a
            WHERE a.attrelid OPERATOR(pg_catalog.=) tbl AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
              AND a.attgenerated OPERATOR(pg_catalog.=) ''
              AND a.attname::pg_catalog.text OPERATOR(pg_catalog.=) ANY (keys);
            insert_sql := CASE WHEN cols IS NULL THEN pg_catalog.format('INSERT INTO %s DEFAULT VALUES', tbl)
                               ELSE pg_catalog.format('INSERT INTO %s (%s) SELECT %s FROM pg_catalog.jsonb_populate_record(NULL::%s, $1) r',
                                                      tbl, cols, vals, tbl) END;
        END IF;
        IF same_keys AND cols IS NOT NULL THEN
            EXECUTE pg_catalog.format('INSERT INTO %s (%s) SELECT %s FROM pg_catalog.jsonb_array_elements($1) WITH ORDINALITY e(j, n), '
                                      'pg_catalog.jsonb_populate_record(NULL::%s, e.j) r ORDER BY e.n', tbl, cols, vals, tbl)
                USING rows;
            GET DIAGNOSTICS n = ROW_COUNT;
            RETURN n;
        END IF;
        EXECUTE insert_sql USING j;
        GET DIAGNOSTICS n = ROW_COUNT;
        stored := stored OPERATOR(pg_catalog.+) n;
    END LOOP;
    RETURN stored;
END
$$;
COMMENT ON FUNCTION _simdup_insert(regclass, text, jsonb, text) IS
  'simdup (internal): the write of simdup_insert: reads the jsonb rows of a query (run with the caller''s search_path), then inserts them in their order by plain INSERTs, each row with its own keys: one INSERT ... SELECT when they all name the same columns, else one by one; checked as any INSERT, by the table''s dedup trigger or, on a Citus distributed table, by simdup''s planner hook against every shard';

CREATE FUNCTION _simdup_checked_insert(tbl regclass, "row" jsonb) RETURNS bigint
LANGUAGE c VOLATILE STRICT
AS 'MODULE_PATHNAME', 'simdup_checked_insert';
COMMENT ON FUNCTION _simdup_checked_insert(regclass, jsonb) IS
  'simdup (internal): writes one row (column => value) into a Citus distributed table with dedup, on the coordinator: the caller''s INSERT privilege on the columns written, the fingerprint, the lock stripes, the near-duplicate with the smallest key on every shard, then reject (23505), skip (returns 0) or mark, and the INSERT as the table''s owner, which the shards'' dedup triggers let through; returns the number of rows stored';

CREATE OR REPLACE FUNCTION "_simdup_lock_row"(
	"tbl" oid, /* pg_sys :: Oid */
	"fp" bigint, /* i64 */
	"k" INT /* i32 */
) RETURNS void
STRICT VOLATILE PARALLEL UNSAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_lock_row_wrapper';

COMMENT ON FUNCTION _simdup_lock_row(oid, bigint, integer) IS 'simdup (internal): takes the dedup trigger''s exclusive transaction-scoped lock stripes of table tbl for a row with fingerprint fp at maximum distance k (simdup''s own advisory lock tag, objsubid 21316, which pg_advisory_* cannot take); needs INSERT or UPDATE on the table';

CREATE OR REPLACE FUNCTION _simdup_create_block_indexes(tbl regclass, fingerprint_column name, blocks integer)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    stem text;
    offs integer;
BEGIN
    -- Index names <table>_<column>_k<offset>_idx (_simdup_index_name: clipped, numbered if taken).
    SELECT c.relname || '_' || fingerprint_column INTO stem FROM pg_class c WHERE c.oid = tbl;
    FOREACH offs IN ARRAY @extschema@._simdup_layout(blocks) LOOP
        EXECUTE format('CREATE INDEX %I ON %s ((@extschema@._simdup_key(%I, %s)))',
                       @extschema@._simdup_index_name(tbl, stem, '_k' || offs || '_idx'), tbl, fingerprint_column, offs);
    END LOOP;
END
$$;

COMMENT ON FUNCTION _simdup_create_block_indexes(regclass, name, integer) IS
  'simdup (internal): creates the B-tree indexes (_simdup_key(fp, offset)) of an m-block layout on a fingerprint column';

CREATE OR REPLACE FUNCTION _simdup_table_info(tbl regclass, OUT fingerprint_column name, OUT key_column name)
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM FROM @extschema@.simdup_tables s WHERE s.tbl = _simdup_table_info.tbl;
    IF NOT FOUND THEN
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

CREATE OR REPLACE FUNCTION simdup_block_indexes(tbl regclass)
RETURNS TABLE (index regclass, block integer, bit_offset integer, bits integer, kind text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
    SELECT b.index::regclass, b.block, b.bit_offset, b.bits, b.kind
    FROM pg_catalog.pg_attribute a,
    LATERAL _simdup_block_indexes(a.attrelid::oid, a.attnum::integer) b
    WHERE a.attrelid = simdup_block_indexes.tbl AND a.attname = _simdup_fingerprint_column(simdup_block_indexes.tbl)
    ORDER BY b.block;
END;

COMMENT ON FUNCTION simdup_block_indexes(regclass) IS
  'simdup: the block indexes of a table enabled with simdup_enable, from the catalog: index, block, the bit offset where the block starts, its width in bits, and kind (key: 0.2.0; block: simhash_block INCLUDE (fp) of 0.1.0, replaced by simdup_reindex)';

CREATE OR REPLACE FUNCTION simdup_disable(tbl regclass) RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg @extschema@.simdup_tables;
    fp name;
    idx regclass;
BEGIN
    IF tbl IS NULL THEN
        RAISE EXCEPTION 'table must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    cfg := @extschema@._simdup_registered(tbl);
    fp := @extschema@._simdup_fingerprint_column(tbl);
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
    -- stops the drop). Indexes you built on it yourself go with it. Found by the name recorded,
    -- or where a rename moved it (_simdup_fingerprint_column).
    IF cfg.text_column IS NOT NULL AND fp IS NOT NULL THEN
        EXECUTE format('ALTER TABLE %s DROP COLUMN %I', tbl, fp);
    END IF;
    DELETE FROM @extschema@.simdup_tables s WHERE s.tbl = simdup_disable.tbl;
END
$$;

COMMENT ON FUNCTION simdup_disable(regclass) IS
  'simdup: removes what simdup_enable added to a table: the dedup trigger and dup_of column (if any), the block indexes, the generated fingerprint column (if simdup_enable added it) and its simdup_tables row. Requires owning the table';

CREATE OR REPLACE FUNCTION simdup_enable(tbl regclass, text_column name, fingerprint_column name DEFAULT 'simhash',
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
        -- only the writes simdup_insert checked across shards (src/dedup/citus.rs). The check
        -- of its columns (src/dedup/tuple.rs) refuses e.g. an adopted generated fingerprint.
        PERFORM @extschema@._simdup_install_dedup_trigger(tbl, 'simdup_dedup', 'simdup_dedup_trigger', trigger_args,
                                                          on_duplicate = 'mark', pk.key_type);
    END IF;

    INSERT INTO @extschema@.simdup_tables (tbl, text_column, fingerprint_column, on_duplicate, max_distance)
    VALUES (simdup_enable.tbl, simdup_enable.text_column, simdup_enable.fingerprint_column,
            simdup_enable.on_duplicate, k);
END
$$;

COMMENT ON FUNCTION simdup_enable(regclass, name, name, text, integer, integer) IS
  'simdup: equips a table for near-duplicate search: adds fingerprint_column bigint GENERATED ALWAYS AS (simhash(text_column)) STORED and one B-tree index per block (_simdup_key(fp, offset); blocks => 2..8, default 4), and records it in simdup_tables. text_column NULL adopts an existing bigint fingerprint_column. on_duplicate => ''reject'' | ''skip'' | ''mark'' also installs the dedup trigger simdup_dedup (BEFORE INSERT OR UPDATE): a row within max_distance (default: simdup.max_distance at enable time) of an existing row raises 23505, is not stored, or is stored with dup_of (added, the primary key''s type) = the smallest key among its near-duplicates; safe under concurrency (advisory locks); needs a single-column primary key. On a Citus distributed table the trigger on each shard refuses every write but the coordinator''s checked writes (plain INSERT, COPY and text-changing UPDATE there, simdup_insert), which check rows across shards. Requires owning the table';

-- One prerequisite check of both dedup triggers (sql/enable.sql).
-- The single-column primary key (column and type) of a table that gets a dedup trigger: 0A000
-- for a partitioned table or a materialized view, 55000 without such a key. The one
-- prerequisite check of simdup_enable's and simdup_enable_similar's dedup triggers.
CREATE FUNCTION _simdup_dedup_key(tbl regclass, OUT key_column name, OUT key_type text)
LANGUAGE plpgsql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kind "char";
BEGIN
    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = tbl;
    IF kind <> 'r' THEN
        RAISE EXCEPTION 'on_duplicate is not supported on % %',
                        CASE kind WHEN 'p' THEN 'partitioned table' ELSE 'materialized view' END, tbl
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'A row trigger on a partitioned table runs per partition; enable dedup on a plain table.';
    END IF;
    SELECT p.key_column, p.key_type INTO key_column, key_type FROM @extschema@._simdup_primary_key(tbl) p;
    IF key_column IS NULL THEN
        RAISE EXCEPTION 'table % has no single-column primary key', tbl
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'The dedup trigger reports and marks near-duplicates by their primary key.';
    END IF;
END
$$;
COMMENT ON FUNCTION _simdup_dedup_key(regclass) IS
  'simdup (internal): the single-column primary key (column, type) of a table that gets a dedup trigger; 0A000 for a partitioned table or materialized view, 55000 without such a key';

-- One installer of both dedup triggers (sql/dedup.sql).
-- Installs a dedup trigger on tbl: for 'mark', the column dup_of of the primary key's type
-- (key_type) first; then CREATE TRIGGER <trigger_name> BEFORE INSERT OR UPDATE ... EXECUTE
-- FUNCTION <function>(<trigger_args>) — on a Citus distributed table on every shard
-- (_simdup_trigger_ddl) — and the trigger's own check of the columns it reads and writes
-- (_simdup_check_dedup: now rather than at the first insert). The one installer of
-- simdup_enable's and simdup_enable_similar's triggers.
CREATE FUNCTION _simdup_install_dedup_trigger(tbl regclass, trigger_name name, function_name name,
                                              trigger_args text, mark boolean, key_type text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF mark THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN dup_of %s', tbl, key_type);
    END IF;
    PERFORM @extschema@._simdup_trigger_ddl(format(
        'CREATE TRIGGER %I BEFORE INSERT OR UPDATE ON %s FOR EACH ROW EXECUTE FUNCTION @extschema@.%I(%s)',
        trigger_name, tbl, function_name, trigger_args));
    PERFORM @extschema@._simdup_check_dedup(tbl);
END
$$;
COMMENT ON FUNCTION _simdup_install_dedup_trigger(regclass, name, name, text, boolean, text) IS
  'simdup (internal): installs a dedup trigger (simdup_dedup or simdup_dedup_similar) with its arguments, adding dup_of of the key''s type first in mark mode, and checks the columns it reads and writes';

-- Dedup by verified similarity (src/dedup/similar.rs): simdup_enable_similar gets on_duplicate
-- (a new signature: the 0.2.0 function is dropped), its trigger function, the argument check,
-- and simdup_disable_similar.
DROP FUNCTION simdup_enable_similar(regclass, name, double precision, integer, double precision);

CREATE FUNCTION "_simdup_similar_dedup_trigger_args"(
	"on_duplicate" TEXT, /* Option<&str> */
	"threshold" double precision, /* Option<f64> */
	"k" INT, /* Option<i32> */
	"bands" INT, /* Option<i32> */
	"rows" INT, /* Option<i32> */
	"text_column" TEXT, /* Option<&str> */
	"key_column" TEXT, /* Option<&str> */
	"containment" double precision /* Option<f64> */
) RETURNS TEXT /* alloc::string::String */
IMMUTABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_similar_dedup_trigger_args_wrapper';
COMMENT ON FUNCTION _simdup_similar_dedup_trigger_args(text, double precision, integer, integer, integer, text, text, double precision) IS 'simdup (internal): checks simdup_enable_similar''s on_duplicate, threshold, k, bands, rows and containment and returns the similarity dedup trigger''s argument list';

-- Dedup by similarity's second rule, containment (src/dedup/similar.rs), and the decision as
-- SQL for the cross-shard check on Citus.
CREATE FUNCTION "containment"(
	"a" TEXT, /* &str */
	"b" TEXT, /* &str */
	"k" INT DEFAULT 5 /* i32 */
) RETURNS double precision /* Option<f64> */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'containment_wrapper';
COMMENT ON FUNCTION containment(text, text, integer) IS 'simdup: containment |A∩B|/min(|A|,|B|) of the character k-shingle sets (default k = 5) of two texts, 0..1: the share of the smaller text''s shingles found in the other, 1 when one contains the other (an added header or paragraph lowers jaccard but not this); NULL when either has no shingles';
CREATE FUNCTION "_simdup_similar_match"(
	"a" TEXT, /* Option<&str> */
	"b" TEXT, /* Option<&str> */
	"k" INT, /* Option<i32> */
	"threshold" double precision, /* Option<f64> */
	"containment" double precision /* Option<f64> */
) RETURNS double precision /* Option<f64> */
IMMUTABLE PARALLEL SAFE COST 2500
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_similar_match_wrapper';
-- A MinHash signature of an article costs about 0.2 ms, the work of thousands of operators: with
-- the default cost the planner computed the similarity index's expression for every row of a
-- small or unanalyzed table instead of reading the index (src/minhash.rs).
ALTER FUNCTION minhash(text, integer, integer) COST 5000;
COMMENT ON FUNCTION _simdup_similar_match(text, text, integer, double precision, double precision) IS 'simdup (internal): the Jaccard similarity of the character k-shingles of two texts when the similarity dedup trigger counts them as near-duplicates (Jaccard >= threshold, or containment >= containment when that is not NULL, or for two short texts the Jaccard similarity of their 3-shingles >= threshold), NULL otherwise: the condition of the cross-shard check on Citus';
-- The same for a row that shares only a short band: the short-text rule alone, as the trigger
-- judges such a row (its lock stripes cover the other rules only between rows sharing a band).
CREATE FUNCTION "_simdup_similar_short_match"(
	"a" TEXT, /* Option<&str> */
	"b" TEXT, /* Option<&str> */
	"k" INT, /* Option<i32> */
	"threshold" double precision /* Option<f64> */
) RETURNS double precision /* Option<f64> */
IMMUTABLE PARALLEL SAFE COST 2500
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_similar_short_match_wrapper';
COMMENT ON FUNCTION _simdup_similar_short_match(text, text, integer, double precision) IS 'simdup (internal): the Jaccard similarity of the character k-shingles of two texts when the similarity dedup trigger''s short-text rule alone counts them as near-duplicates (the shorter text under 50 characters, both short, the Jaccard similarity of their 3-shingles >= threshold), NULL otherwise: the condition of the cross-shard check on Citus for rows that share only a short band';

-- The expression of the similarity dedup trigger's short-text index: the LSH bands of the
-- 3-shingles of short texts (src/minhash.rs, simdup_core::similarity).
CREATE FUNCTION "_simdup_similar_short_bands"(
	"body" TEXT, /* &str */
	"threshold" double precision /* f64 */
) RETURNS bigint[] /* core::option::Option<alloc::vec::Vec<i64>> */
IMMUTABLE STRICT PARALLEL SAFE COST 2500
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_similar_short_bands_wrapper';
COMMENT ON FUNCTION _simdup_similar_short_bands(text, double precision) IS 'simdup (internal): LSH band values of the character 3-shingles of a short text (at most 100 distinct 3-shingles and 1000 characters), banded so that texts of 3-shingle Jaccard similarity threshold share one with probability >= 0.99; NULL for other texts: the expression of the similarity dedup trigger''s short-text index';

-- The containment rule of tiny texts (fewer than 50 shingles): the expression of the similarity
-- dedup trigger's containment index, every text's sketch and every tiny text's containment
-- prefix (src/minhash.rs, simdup_core::similarity::Keys), and the cross-shard check's condition for
-- the rows found through it.
CREATE FUNCTION "_simdup_similar_keys"(
	"body" TEXT, /* &str */
	"k" INT, /* i32 */
	"containment" double precision /* f64 */
) RETURNS bigint[] /* core::option::Option<alloc::vec::Vec<i64>> */
IMMUTABLE STRICT PARALLEL SAFE COST 2500
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_similar_keys_wrapper';
COMMENT ON FUNCTION _simdup_similar_keys(text, integer, double precision) IS 'simdup (internal): the containment keys of the character k-shingles of a text (its 32 rarest shingles, and for a text of fewer than 50 shingles the first ones a text holding containment of them must share), tagged by role; NULL for text without shingles: the expression of the similarity dedup trigger''s containment index';
CREATE FUNCTION "_simdup_similar_key_probe"(
	"body" TEXT, /* &str */
	"k" INT, /* i32 */
	"containment" double precision /* f64 */
) RETURNS bigint[] /* core::option::Option<alloc::vec::Vec<i64>> */
IMMUTABLE STRICT PARALLEL SAFE COST 2500
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_similar_key_probe_wrapper';
COMMENT ON FUNCTION _simdup_similar_key_probe(text, integer, double precision) IS 'simdup (internal): the values a text looks up in the containment index (its containment prefix among the sketches, its sketch among the prefixes): _simdup_similar_key_probe(a, k, c) && _simdup_similar_keys(b, k, c) when the containment keys of a and b meet; NULL for text without shingles';
CREATE FUNCTION "_simdup_similar_key_match"(
	"a" TEXT, /* Option<&str> */
	"b" TEXT, /* Option<&str> */
	"k" INT, /* Option<i32> */
	"threshold" double precision, /* Option<f64> */
	"containment" double precision /* Option<f64> */
) RETURNS double precision /* Option<f64> */
IMMUTABLE PARALLEL SAFE COST 2500
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_similar_key_match_wrapper';
COMMENT ON FUNCTION _simdup_similar_key_match(text, text, integer, double precision, double precision) IS 'simdup (internal): the Jaccard similarity of the character k-shingles of two texts when the similarity dedup trigger counts them as near-duplicates through their containment keys (containment >= containment, or for two short texts the Jaccard similarity of their 3-shingles >= threshold), NULL otherwise or for a NULL containment: the condition of the cross-shard check on Citus for rows found through the containment index';

-- The dedup trigger by verified similarity (src/dedup/similar.rs), installed by
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
-- (the table needs a single-column primary key; mark adds dup_of).
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

CREATE OR REPLACE FUNCTION simdup_insert(tbl regclass, rows jsonb) RETURNS bigint
LANGUAGE sql VOLATILE STRICT
BEGIN ATOMIC
    SELECT _simdup_insert(tbl,
        'SELECT e FROM pg_catalog.jsonb_array_elements(CASE pg_catalog.jsonb_typeof($1) WHEN ''array'' THEN $1 ELSE pg_catalog.jsonb_build_array($1) END) e',
        rows, pg_catalog.current_setting('search_path'));
END;

COMMENT ON FUNCTION simdup_insert(regclass, jsonb) IS
  'simdup: inserts rows (a JSON object, or an array of objects: column => value) into a table enabled with on_duplicate, checking each against the stored rows and those before it; on a Citus distributed table the one checked write (against every shard, on the coordinator). Returns the number of rows stored';

CREATE OR REPLACE FUNCTION simdup_insert_select(tbl regclass, query text) RETURNS bigint
LANGUAGE sql VOLATILE STRICT
BEGIN ATOMIC
    SELECT _simdup_insert(tbl, 'SELECT pg_catalog.to_jsonb(q) FROM (' || query || ') q', NULL,
                          pg_catalog.current_setting('search_path'));
END;

COMMENT ON FUNCTION simdup_insert_select(regclass, text) IS
  'simdup: inserts the rows of a query (columns matched by name, e.g. $$SELECT id, body FROM staging$$) into a table enabled with on_duplicate, checking each against the stored rows and those before it; on a Citus distributed table the one checked write (against every shard, on the coordinator). Returns the number of rows stored';

-- The old checked write, replaced above by the four-argument one that simdup_insert and
-- simdup_insert_select now call.
DROP FUNCTION _simdup_insert(regclass, text, jsonb);

-- Whether a table is Citus-distributed is asked of one Rust function (src/dedup/citus.rs), the
-- one the checked write and the shards' trigger use; the SQL reader of the method goes.
CREATE FUNCTION "_simdup_citus_distributed"(
	"tbl" oid /* pg_sys :: Oid */
) RETURNS bool
STRICT STABLE PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_citus_distributed_wrapper';
COMMENT ON FUNCTION _simdup_citus_distributed(oid) IS 'simdup (internal): whether a table is Citus-distributed by hash, range or append (each shard holds part of the rows), read from Citus''s catalog when there is one; false for reference, local and plain tables';
DROP FUNCTION _simdup_citus_method(regclass);

-- ORDER BY fp <~> q LIMIT n served by the planner step: _simdup_nearest_tids takes n as a
-- bigint (the limit plus the offset), returns the rows tied at the n-th distance too, and is
-- not STRICT (LIMIT NULL); simdup_nearest becomes a query of that form.
DROP FUNCTION _simdup_nearest_tids(oid, integer, bigint, integer);
CREATE FUNCTION _simdup_nearest_tids(tbl oid, attnum integer, q bigint, n bigint) RETURNS tid[]
LANGUAGE c STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_nearest_tids';
COMMENT ON FUNCTION _simdup_nearest_tids(oid, integer, bigint, bigint) IS
  'simdup (internal): tids of the rows of tbl within the distance of the n-th nearest to q (column attnum; ties at that distance included), found exactly through its block indexes; the planner puts it in a Tid Scan for ORDER BY fp <~> q LIMIT n';

-- The n rows nearest to q, nearest first, ties by ctid, with their ctids: the rows the query
--   SELECT * FROM docs ORDER BY simhash <~> q, ctid LIMIT n
-- returns (which the planner step serves through the block indexes), for one plain table.
-- Rows without a fingerprint are not returned.
CREATE OR REPLACE FUNCTION simdup_nearest(tbl regclass, q bigint, n integer, fingerprint_column name DEFAULT 'simhash')
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

-- WHERE jaccard(body, q) >= t served by a similarity index: the support function loads the
-- library (and the planner step) while the planner simplifies the query; shingling two texts
-- is priced as what it costs.
ALTER FUNCTION jaccard(text, text, integer) COST 100;
ALTER FUNCTION jaccard(text, text, integer) SUPPORT _simdup_hamming_support;

-- The shingle size check of simdup_enable_similar, in src/args.rs with the others.
CREATE FUNCTION "_simdup_check_shingle_size"(
	"k" INT /* i32 */
) RETURNS INT /* i32 */
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', '_simdup_check_shingle_size_wrapper';
COMMENT ON FUNCTION _simdup_check_shingle_size(integer) IS 'simdup (internal): k when it is a valid shingle size (1..256); 22023 otherwise';

-- One "column exists" check (_simdup_column) and one owner check (_simdup_owned_table) for the
-- SQL functions.
CREATE FUNCTION _simdup_column(tbl regclass, column_name name, hint text DEFAULT NULL,
                               OUT attnum smallint, OUT typ regtype)
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT a.attnum, a.atttypid::regtype INTO attnum, typ FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attname = column_name AND a.attnum > 0 AND NOT a.attisdropped;
    IF NOT FOUND AND hint IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', column_name, tbl
            USING ERRCODE = 'undefined_column';
    ELSIF NOT FOUND THEN
        RAISE EXCEPTION 'column "%" of relation % does not exist', column_name, tbl
            USING ERRCODE = 'undefined_column', HINT = hint;
    END IF;
END
$$;
COMMENT ON FUNCTION _simdup_column(regclass, name, text) IS
  'simdup (internal): number and type of a column of a table; 42703 (with the given hint) when there is no such column';

CREATE OR REPLACE FUNCTION _simdup_registered(tbl regclass) RETURNS simdup_tables
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
    PERFORM @extschema@._simdup_owned_table(tbl, 'rp');  -- 42501 unless the caller owns it
    RETURN cfg;
END
$$;

-- The similarity indexes read from the catalog (src/similar.rs), no longer from
-- pg_get_indexdef text.
CREATE OR REPLACE FUNCTION _simdup_similar_indexes(tbl regclass)
RETURNS TABLE (index regclass, text_expr text, k integer, bands integer, rows integer)
LANGUAGE c STABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', '_simdup_similar_indexes_wrapper';

-- simdup_similar in Rust (src/similar.rs): the index chosen, and the search run from a plan
-- kept per backend, instead of a PL/pgSQL function planning a dynamic query on every call.
CREATE OR REPLACE FUNCTION simdup_similar(tbl regclass, query text, threshold double precision DEFAULT 0.5,
                               min_recall double precision DEFAULT 0.99)
RETURNS TABLE (ctid tid, similarity double precision)
LANGUAGE c STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS 'MODULE_PATHNAME', 'simdup_similar_wrapper';

-- Every object's comment as this version states it.
COMMENT ON TABLE simdup_tables IS
  'simdup: tables equipped by simdup_enable (kept by pg_dump): text column (NULL when an existing fingerprint column was adopted), fingerprint column, and the dedup trigger''s on_duplicate and max_distance (NULL without a trigger)';
COMMENT ON FUNCTION _simdup_tables_guard() IS
  'simdup (internal): trigger letting only the owner of a table add or remove its simdup_tables row';
COMMENT ON FUNCTION _simdup_trigger_ddl(text) IS
  'simdup (internal): runs a CREATE or DROP TRIGGER of the dedup trigger, with citus.enable_unsafe_triggers on for that command when Citus is loaded (it refuses trigger DDL on distributed tables otherwise)';
COMMENT ON FUNCTION _simdup_forget_dropped() IS
  'simdup (internal): event trigger function removing the simdup_tables row of a dropped table or fingerprint column (and the dedup trigger of a table whose fingerprint column was dropped)';
COMMENT ON EVENT TRIGGER simdup_forget_dropped IS
  'simdup: forgets equipped tables (simdup_tables rows) when the table or its fingerprint column is dropped';
COMMENT ON FUNCTION simdup_dedup_trigger() IS
  'simdup: the dedup trigger function installed by simdup_enable(..., on_duplicate => ...) as BEFORE INSERT OR UPDATE FOR EACH ROW, arguments (on_duplicate, max_distance, text_column or '''', fingerprint_column, key_column): computes simhash of the new text, takes the row''s advisory lock stripes, finds the near-duplicate with the smallest key through the block indexes, then rejects (23505, constraint simdup_dedup), skips or marks (dup_of) the row. On a shard of a Citus distributed table it refuses (0A000) every write of a new or changed text but the coordinator''s checked writes (plain INSERT, COPY and UPDATE there, simdup_insert), which checked them across shards';
COMMENT ON FUNCTION _simdup_tids(oid, integer, bigint, integer) IS
  'simdup (internal): tids of the visible rows of tbl whose fingerprint column attnum is within k of q, found through its block indexes; the planner puts it in a Tid Scan for hamming(fp, q) <= k';
COMMENT ON FUNCTION _simdup_block_indexes(oid, integer) IS 'simdup (internal): the block indexes of a fingerprint column, read from the catalog: index, block, bit offset, width, kind (key: 0.2.0, block: 0.1.0)';
COMMENT ON FUNCTION _simdup_check_group_method(text) IS 'simdup (internal): the grouping method when it is components or leader; 22023 otherwise';
COMMENT ON FUNCTION _simdup_check_k(integer) IS 'simdup (internal): k when it is a valid maximum Hamming distance (0..64); 22023 otherwise';
COMMENT ON FUNCTION _simdup_check_similarity(double precision, double precision) IS 'simdup (internal): the threshold when it is a valid Jaccard threshold (0 < t <= 1) and recall a valid recall (0 < r < 1); 22023 otherwise';
COMMENT ON FUNCTION _simdup_dedup_trigger_args(text, integer, text, text, text) IS 'simdup (internal): checks simdup_enable''s on_duplicate and max_distance and returns the dedup trigger''s argument list';
COMMENT ON FUNCTION _simdup_fingerprint_components(regclass, text, integer) IS 'simdup (internal): connected components of _simdup_fingerprint_pairs(tbl, fingerprint_column, k): each fingerprint with a near neighbour, and the smallest fingerprint of its component';
COMMENT ON FUNCTION _simdup_fingerprint_leaders(regclass, text, text, integer) IS 'simdup (internal): leader clustering of a table''s distinct fingerprints in the order of their smallest key: each fingerprint in a group of two or more with its leader, every member within k of its leader';
COMMENT ON FUNCTION _simdup_fingerprint_pairs(regclass, text, integer) IS 'simdup (internal): all pairs of distinct fingerprints (fa < fb) of a table''s fingerprint column within Hamming distance k, each once, with the distance: identical fingerprints collapsed, then an in-memory join on the values of each 16-bit block within its threshold (never all pairs)';
COMMENT ON FUNCTION _simdup_key(bigint, integer) IS 'simdup (internal): the block-index key of a fingerprint: fp rotated left by offset bits, sign bit flipped (the keys of one block value form one range)';
COMMENT ON FUNCTION _simdup_layout(integer) IS 'simdup (internal): the bit offsets at which the blocks of a layout of m nearly equal blocks start (2..8 blocks; 22023 otherwise)';
COMMENT ON FUNCTION _simdup_lock_stripes(bigint, integer) IS 'simdup (internal): the lock stripes (0..4095) the dedup trigger locks exclusively (pg_locks: locktype advisory, classid = table OID, objid = stripe, objsubid = 21316, a tag pg_advisory_* cannot take) for fingerprint fp at maximum distance k: one per piece of the fingerprint cut into k + 1 pieces (near-duplicates share a piece, so a stripe), ascending';
COMMENT ON FUNCTION hamming(bigint, bigint) IS
  'simdup: number of differing bits between two 64-bit fingerprints (0..64); hamming(fp, q) <= k on a column with simdup block indexes is served by them';
COMMENT ON OPERATOR <~> (bigint, bigint) IS
  'simdup: Hamming distance between two 64-bit fingerprints; fp <~> q <= k is served by the block indexes';
COMMENT ON FUNCTION _simdup_hamming_support(internal) IS
  'simdup (internal): planner support function of hamming and jaccard(text, text, integer): loads the library, and with it the planner step serving hamming(fp, q) <= k and jaccard(body, q) >= t, before the scan paths are built';
COMMENT ON FUNCTION simdup_match(bigint, bigint, integer) IS
  'simdup: true when hamming(fp, q) <= k (k in 0..64); inlined to that condition, which the block indexes of simdup_enable serve on large tables';
COMMENT ON FUNCTION jaccard(text, text, integer) IS 'simdup: exact Jaccard similarity |A∩B|/|A∪B| of the character k-shingle sets (default k = 5) of two texts, 0..1; NULL when either has no shingles; jaccard(text_column, q) >= t on a table with a similarity index is served by it';
COMMENT ON FUNCTION jaccard(bigint[], bigint[]) IS 'simdup: exact Jaccard similarity of two stored shingle sets (from shingles or word_shingles; order and duplicates ignored); NULL when either is empty; NULL elements raise 22004';
COMMENT ON FUNCTION minhash(text, integer, integer) IS 'simdup: MinHash signature (n values, default 128) of the character k-shingles (default k = 5) of a text; deterministic (fixed seeds, see minhash_format_version); NULL for empty or whitespace-only text. Store it: sig bigint[] GENERATED ALWAYS AS (minhash(body)) STORED';
COMMENT ON FUNCTION minhash(bigint[], integer) IS 'simdup: MinHash signature (n values, default 128) of a stored shingle set, e.g. minhash(word_shingles(body)); NULL for an empty set; NULL elements raise 22004';
COMMENT ON FUNCTION minhash_bands(bigint[], integer, integer) IS 'simdup: LSH band values of a signature: bands hashes of rows consecutive values each (bands*rows <= n). Index with CREATE INDEX ON t USING gin (minhash_bands(sig, 16, 8)) and search with WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash($1), 16, 8); a pair of similarity J becomes a candidate with probability minhash_s_curve(J, bands, rows). Pick bands and rows with minhash_choose_bands(n, threshold); see docs/minhash.md';
COMMENT ON FUNCTION minhash_choose_bands(integer, double precision) IS 'simdup: bands and rows (bands*rows <= n) for a Jaccard threshold strictly between 0 and 1, minimizing the false-positive plus false-negative area under the S-curve, with the approximate threshold (1/bands)^(1/rows) where the curve is steepest';
COMMENT ON FUNCTION minhash_choose_bands(integer, double precision, double precision) IS 'simdup: bands and rows (bands*rows <= n) under which a pair of Jaccard similarity threshold becomes a candidate with probability at least recall (minhash_s_curve(threshold, bands, rows) >= recall), the steepest such curve (smallest false-positive area below the threshold), with its approximate threshold (1/bands)^(1/rows); for verified searches (simdup_similar), see docs/similar.md';
COMMENT ON FUNCTION minhash_format_version() IS 'simdup: version of the MinHash format (normalization, shingle hashes, permutation seeds, band hash) computed by this build; stored shingle sets, signatures and band indexes of another version must be recomputed';
COMMENT ON FUNCTION minhash_jaccard(bigint[], bigint[]) IS 'simdup: estimated Jaccard similarity of two signatures, the fraction of agreeing positions (standard deviation sqrt(J(1-J)/n), at most 0.044 for n = 128); different lengths raise 22023, NULL elements 22004';
COMMENT ON FUNCTION minhash_s_curve(double precision, integer, integer) IS 'simdup: probability 1-(1-J^rows)^bands that two documents of Jaccard similarity J share at least one of bands LSH bands of rows rows';
COMMENT ON FUNCTION shingles(text, integer) IS 'simdup: set of xxh3-64 hashes of the character k-shingles (default k = 5) of the normalized text (NFKC, lower case, whitespace runs as one space), sorted as unsigned 64-bit numbers; a text shorter than k characters is one shingle; NULL for empty or whitespace-only text';
COMMENT ON FUNCTION simdup_fingerprint_version() IS 'simdup: version of the fingerprint format computed by this build';
COMMENT ON FUNCTION simdup_max_distance() IS 'simdup: the current simdup.max_distance (default k of the batch functions); loads the library, so it works before any other simdup call in a session';
COMMENT ON FUNCTION _simdup_primary_key(regclass) IS
  'simdup (internal): the single-column primary key of a table (column and type), NULLs when it has none';
COMMENT ON FUNCTION _simdup_owned_table(regclass, text) IS
  'simdup (internal): name and kind of a table of one of the given relkinds that the caller owns; 42P01, 42809 or 42501 otherwise';
COMMENT ON FUNCTION _simdup_registered(regclass) IS
  'simdup (internal): the simdup_tables row of an enabled table the caller owns; 42704 when not enabled, 42501 when not the owner';
COMMENT ON FUNCTION simdup_reindex(regclass, integer) IS
  'simdup: rebuilds the block indexes of an enabled table as the key indexes of an m-block layout (default 4 blocks of 16 bits): the one call that moves a table enabled under simdup 0.1.0 to the smaller, faster 0.2.0 indexes. Requires owning the table';
COMMENT ON FUNCTION _simdup_similar_bands(text, integer, integer, integer) IS
  'simdup (internal): LSH band values of the character k-shingles of a text, minhash_bands(minhash(body, k, bands*rows), bands, rows): the GIN index expression of simdup_enable_similar; NULL for text without shingles';
COMMENT ON FUNCTION _simdup_similar_indexes(regclass) IS
  'simdup (internal): the valid GIN indexes of a table on _simdup_similar_bands(expr, k, bands, rows), oldest first, with expr (SQL text), k, bands and rows read from their expressions in the catalog; then the similarity dedup trigger''s short-text indexes on _simdup_similar_short_bands(expr, threshold), with k = 3 and their bands and rows; then its containment indexes on _simdup_similar_keys(expr, k, containment), with their k and NULL bands and rows';
COMMENT ON FUNCTION simdup_similar(regclass, text, double precision, double precision) IS
  'simdup: the rows of tbl whose exact Jaccard similarity of character k-shingles with query (jaccard(text_column, query, k)) is at least threshold (default 0.5), most similar first: (ctid, similarity). Candidates from the GIN index of simdup_enable_similar (LSH bands, k read from it), each verified exactly: precision is exact, recall at the threshold is minhash_s_curve(threshold, bands, rows) >= min_recall (default 0.99; 22023 when the index cannot reach it). NULL query: no rows';
COMMENT ON FUNCTION simdup_pairs(regclass, integer) IS
  'simdup: all pairs of rows of an enabled table whose fingerprints are within distance k (default simdup.max_distance), identical fingerprints included, each pair once: primary keys a < b as text, and the distance';
COMMENT ON FUNCTION simdup_groups(regclass, integer, text) IS
  'simdup: groups of near-duplicate rows (distance <= k, default simdup.max_distance): method ''components'' (default; connected components, chains join) or ''leader'' (leader clustering in key order: every member within k of its group''s first row, no chaining). One row per grouped row, as (primary key as text, group_id); groups numbered 1, 2, ... by their smallest key';
COMMENT ON FUNCTION simhash(text) IS 'simdup: 64-bit SimHash fingerprint of a Chinese/English text (NFKC + lower case, jieba segmentation, sublinear TF x IDF weights, xxh3-64); NULL for text without words';
COMMENT ON FUNCTION simhash(text, text) IS 'simdup: SimHash of a document with a title: format 1 of title || E''\n'' || body (the title-aware choice measured best, docs/quality.md); a NULL or empty title gives simhash(body), a NULL body NULL';
COMMENT ON FUNCTION simhash(text, text, text) IS 'simdup: SimHash of body (and title, may be NULL) under a named scheme: default (format 1, title fingerprinted with the body), title (body words also in the title x5), improved (Zhang & He 2020: part of speech, word length, cue words x5, title words x5); unknown scheme 22023, NULL scheme 22004';
COMMENT ON FUNCTION simhash_block(bigint, integer) IS 'simdup: 16-bit block i (0 = most significant, 0..3) of a fingerprint, as 0..65535 (the key of the block indexes of simdup 0.1.0)';
COMMENT ON FUNCTION simhash_features(text) IS 'simdup: the weighted features behind simhash(text), one row per distinct token: token, weight, hash, count, idf';
COMMENT ON FUNCTION simhash_features(text, text, text) IS 'simdup: the weighted features behind simhash(body, title, scheme), one row per distinct token: token, weight, hash, count, idf';
COMMENT ON FUNCTION word_shingles(text, integer) IS 'simdup: set of hashes of the word k-shingles (default k = 3) of the text: jieba words, numbers and English words, punctuation dropped; NULL for text without words';
