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
  'simdup: the dedup trigger function installed by simdup_enable(..., on_duplicate => ...) as BEFORE INSERT OR UPDATE FOR EACH ROW, arguments (on_duplicate, max_distance, text_column or '''', fingerprint_column, key_column): computes simhash of the new text, takes the row''s advisory lock stripes, finds the near-duplicate with the smallest key through the block indexes, then rejects (23505, constraint simdup_dedup), skips or marks (dup_of) the row. On a shard of a Citus distributed table it refuses (0A000) every write of a new text but those of simdup_insert, which checked them across shards';

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
