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
CREATE FUNCTION simdup_dedup_trigger() RETURNS trigger
LANGUAGE c
AS 'MODULE_PATHNAME', 'simdup_dedup_trigger';
COMMENT ON FUNCTION simdup_dedup_trigger() IS
  'simdup: the dedup trigger function installed by simdup_enable(..., on_duplicate => ...) as BEFORE INSERT OR UPDATE FOR EACH ROW, arguments (on_duplicate, max_distance, text_column or '''', fingerprint_column, key_column): computes simhash of the new text, takes the row''s advisory lock stripes, finds the near-duplicate with the smallest key through the block indexes, then rejects (23505, constraint simdup_dedup), skips or marks (dup_of) the row. On a shard of a Citus distributed table it refuses (0A000) every write of a new or changed text but the coordinator''s checked writes (plain INSERT, COPY and UPDATE there, simdup_insert), which checked them across shards';

-- ---------------------------------------------------------------------------------------------
-- Private functions
-- ---------------------------------------------------------------------------------------------
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

-- The write of simdup_insert and simdup_insert_select: the rows of `source` (a query returning
-- one jsonb object per row, run with $1 = arg under the caller's search_path) are collected
-- first, then inserted into tbl in their order by plain INSERTs: one INSERT ... SELECT when they
-- all name the same columns, else one single-row INSERT at a time. Everything else runs with
-- search_path pinned to pg_catalog, every name qualified: no function or operator a caller can
-- create is ever called with the caller's (perhaps a superuser's) rights.
--
-- Each row is written with its own keys: a column a row leaves out takes its default (evaluated
-- by the INSERT, as the caller). A key that names no column of the table raises 42703 and
-- nothing is stored.
--
-- The INSERTs are checked as any INSERT is: on a plain table or a Citus reference table by the
-- table's dedup trigger, on a Citus distributed table by simdup's planner hook on the
-- coordinator, each row against every shard (src/citus/, src/citus/checked/: the one
-- check, in Rust). Only the coordinator's check holds its lock stripes for every writer, so on
-- a worker this refuses the call.
CREATE FUNCTION _simdup_insert(tbl regclass, source text, arg jsonb, caller_search_path text) RETURNS bigint
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

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------
-- simdup_insert(tbl, rows jsonb) and simdup_insert_select(tbl, query): INSERT ... VALUES and
-- INSERT ... SELECT, kept as conveniences (plain INSERT and COPY are checked too).
-- Inserts rows into a table enabled with on_duplicate and returns how many it stored (skipped
-- near-duplicates are not counted; a rejected one raises 23505 and stores nothing of the call).
-- Columns are matched by name, row by row; columns a row leaves out take their defaults. On a plain or
-- reference table it is the same as INSERT (the trigger checks each row); on a Citus
-- distributed table it is the checked write against every shard, as plain INSERT and COPY on
-- the coordinator are (src/citus/), text-changing UPDATEs too.
CREATE FUNCTION simdup_insert(tbl regclass, rows jsonb) RETURNS bigint
LANGUAGE sql VOLATILE STRICT
BEGIN ATOMIC
    SELECT _simdup_insert(tbl,
        'SELECT e FROM pg_catalog.jsonb_array_elements(CASE pg_catalog.jsonb_typeof($1) WHEN ''array'' THEN $1 ELSE pg_catalog.jsonb_build_array($1) END) e',
        rows, pg_catalog.current_setting('search_path'));
END;
COMMENT ON FUNCTION simdup_insert(regclass, jsonb) IS
  'simdup: inserts rows (a JSON object, or an array of objects: column => value) into a table enabled with on_duplicate, checking each against the stored rows and those before it; on a Citus distributed table the one checked write (against every shard, on the coordinator). Returns the number of rows stored';

CREATE FUNCTION simdup_insert_select(tbl regclass, query text) RETURNS bigint
LANGUAGE sql VOLATILE STRICT
BEGIN ATOMIC
    SELECT _simdup_insert(tbl, 'SELECT pg_catalog.to_jsonb(q) FROM (' || query || ') q', NULL,
                          pg_catalog.current_setting('search_path'));
END;
COMMENT ON FUNCTION simdup_insert_select(regclass, text) IS
  'simdup: inserts the rows of a query (columns matched by name, e.g. $$SELECT id, body FROM staging$$) into a table enabled with on_duplicate, checking each against the stored rows and those before it; on a Citus distributed table the one checked write (against every shard, on the coordinator). Returns the number of rows stored';
