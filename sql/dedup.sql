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
-- The checked write of simdup_insert and simdup_insert_select: the rows of `source` (a query
-- returning one jsonb object per row, run with $1 = arg under the caller's search_path) are
-- collected first, then inserted into tbl one single-row INSERT at a time, so that every row is
-- checked against the rows stored before it, the same call's included. Everything else runs
-- with search_path pinned to pg_catalog, every name qualified: no function or operator a caller
-- can create is ever called with the caller's (perhaps a superuser's) rights.
--
-- Each row is written with its own keys: a column a row leaves out takes its default. A key
-- that names no column of the table raises 42703 and nothing is stored.
--
-- On a plain table or a Citus reference table the table's simdup_dedup trigger checks each row
-- (src/dedup/). On a Citus distributed table (hash, range or append) the trigger of a shard sees
-- only that shard, so the check is made here, on the coordinator, for each row
-- (docs/citus.md, "Dedup across shards", argues why this is exact under concurrency):
--   1. the fingerprint: simhash of the text the row will store (the same function as the
--      generated column; a text column the row leaves out is filled with its default first, so
--      the default's text is what is checked and stored);
--   2. its k + 1 lock stripes (_simdup_lock_row, the trigger's own locks) on the coordinator:
--      two writers of near-duplicates share a stripe, whichever shards their rows go to;
--   3. then one query over every shard for the near-duplicate with the smallest key (each
--      shard serves it from its block indexes); READ COMMITTED, so each worker's snapshot is
--      taken after the locks are held, and this transaction's earlier rows are seen because
--      Citus reads a shard over the connection that wrote it;
--   4. reject (23505), skip, or mark (dup_of), then the INSERT, routed to the row's shard, with
--      simdup.checked_write naming the table: a SET LOCAL that Citus propagates to the workers
--      (citus.propagate_set_commands = 'local', from inside a DO block, which Citus counts as a
--      transaction block), and the only writes the shard trigger lets through. The caller's
--      query has already run by then, so a data-modifying WITH in it is an ordinary write,
--      refused on the shards.
CREATE FUNCTION _simdup_insert(tbl regclass, source text, arg jsonb, caller_search_path text) RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    cfg @extschema@.simdup_tables;
    pk record;
    distributed boolean;
    coordinator boolean;
    schema_name name;
    table_name name;
    marker text;
    tag text;
    propagate text;
    rows jsonb;
    filled jsonb;
    j jsonb;
    keys text[];
    row_keys text[];
    cols text;
    vals text;
    unknown text;
    text_default text;
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
    SELECT ns.nspname, c.relname INTO schema_name, table_name
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace ns ON ns.oid OPERATOR(pg_catalog.=) c.relnamespace
    WHERE c.oid OPERATOR(pg_catalog.=) tbl;
    -- The table's name as messages give it and simdup.checked_write holds it.
    marker := pg_catalog.format('%I.%I', schema_name, table_name);
    -- (Reference tables, 'n', are not: each placement's trigger sees every row.)
    distributed := coalesce(@extschema@._simdup_citus_method(tbl) OPERATOR(pg_catalog.=) ANY ('{h,a,r}'::pg_catalog.text[]), false);
    IF distributed THEN
        -- (The registry of enabled tables is on the coordinator only.)
        EXECUTE 'SELECT pg_catalog.citus_is_coordinator()' INTO coordinator;
        IF NOT coordinator THEN
            RAISE EXCEPTION 'simdup_insert into distributed table % must run on the coordinator', marker
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'Its lock stripes live on the coordinator; a worker''s locks would not serialize writers on other nodes.';
        END IF;
    END IF;
    SELECT s.* INTO cfg FROM @extschema@.simdup_tables s WHERE s.tbl OPERATOR(pg_catalog.=) _simdup_insert.tbl;
    IF NOT FOUND OR cfg.on_duplicate IS NULL THEN
        RAISE EXCEPTION 'table % is not enabled for dedup', tbl::pg_catalog.text
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call simdup_enable(table, text_column, on_duplicate => ''reject'' | ''skip'' | ''mark'') first.';
    END IF;

    -- The caller's rows, read with the caller's search_path (their query names their tables),
    -- before anything is marked as checked.
    PERFORM pg_catalog.set_config('search_path', caller_search_path, true);
    EXECUTE 'SELECT pg_catalog.jsonb_agg(q.j) FROM (' || source || ') q(j)' INTO rows USING arg;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    IF rows IS NULL THEN
        RETURN 0;
    END IF;

    IF distributed THEN
        IF pg_catalog.current_setting('transaction_isolation') OPERATOR(pg_catalog.<>) 'read committed' THEN
            RAISE EXCEPTION 'simdup_insert into distributed table % needs READ COMMITTED', marker
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = pg_catalog.format('At %s, a worker''s snapshot can predate a concurrent writer''s commit, so its near-duplicate could be missed.',
                                                 pg_catalog.upper(pg_catalog.current_setting('transaction_isolation')));
        END IF;
        IF (SELECT c.relrowsecurity FROM pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) tbl) THEN
            RAISE EXCEPTION 'simdup_insert does not support distributed table % with row-level security', marker
                USING ERRCODE = 'feature_not_supported',
                      DETAIL = 'The check searches the table as the caller; row security would hide near-duplicates from it.';
        END IF;
        fp_sql := pg_catalog.format('SELECT %s FROM pg_catalog.jsonb_populate_record(NULL::%s, $1) r',
                         CASE WHEN cfg.text_column IS NULL THEN pg_catalog.format('r.%I', cfg.fingerprint_column)
                              ELSE pg_catalog.format('@extschema@.simhash(r.%I::pg_catalog.text)', cfg.text_column) END, tbl);
        -- (Ordered aggregates, not ORDER BY key LIMIT 1: pushed to the shards, that would let
        -- a shard's planner walk its primary key index, estimating a third of the rows match.)
        find_sql := pg_catalog.format('SELECT (pg_catalog.array_agg(t.%1$I ORDER BY t.%1$I))[1]::pg_catalog.text, '
                           '(pg_catalog.array_agg(@extschema@.hamming(t.%2$I, $1) ORDER BY t.%1$I))[1] FROM %3$s t '
                           'WHERE @extschema@.hamming(t.%2$I, $1) OPERATOR(pg_catalog.<=) %4$s',
                           pk.key_column, cfg.fingerprint_column, tbl, cfg.max_distance);
        -- The text column's default, when it has one (a row that leaves the text out stores it).
        IF cfg.text_column IS NOT NULL THEN
            SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid) INTO text_default
            FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_attrdef d
              ON d.adrelid OPERATOR(pg_catalog.=) a.attrelid AND d.adnum OPERATOR(pg_catalog.=) a.attnum
            WHERE a.attrelid OPERATOR(pg_catalog.=) tbl AND a.attname OPERATOR(pg_catalog.=) cfg.text_column
              AND a.attgenerated OPERATOR(pg_catalog.=) '';
        END IF;
        -- Marks this transaction's writes of tbl as checked, on every worker. The DO block's
        -- dollar quote is one the table's name does not contain.
        tag := '$simdup$';
        WHILE pg_catalog.strpos(marker, tag) OPERATOR(pg_catalog.>) 0 LOOP
            tag := '$simdup' || pg_catalog.md5(tag) || '$';
        END LOOP;
        propagate := pg_catalog.current_setting('citus.propagate_set_commands');
        PERFORM pg_catalog.set_config('citus.propagate_set_commands', 'local', true);
        EXECUTE pg_catalog.format('DO %s BEGIN SET LOCAL simdup.checked_write = %L; END %s', tag, marker, tag);
    END IF;

    FOR j IN SELECT e FROM pg_catalog.jsonb_array_elements(rows) e LOOP
        IF j IS NULL OR pg_catalog.jsonb_typeof(j) OPERATOR(pg_catalog.<>) 'object' THEN
            RAISE EXCEPTION 'simdup_insert: a row must be a JSON object, got %', coalesce(pg_catalog.jsonb_typeof(j), 'NULL')
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF distributed AND text_default IS NOT NULL AND NOT (j OPERATOR(pg_catalog.?) cfg.text_column::pg_catalog.text) THEN
            -- Evaluated once here and stored as given: the text checked is the text stored.
            EXECUTE 'SELECT pg_catalog.jsonb_build_object($1, (' || text_default || '))' INTO STRICT filled
                USING cfg.text_column::pg_catalog.text;
            j := j OPERATOR(pg_catalog.||) filled;
        END IF;
        -- The row's own columns (generated columns, and dup_of on a distributed 'mark' table,
        -- are computed, not taken); the INSERT is rebuilt only when the keys change.
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
              AND a.attname::pg_catalog.text OPERATOR(pg_catalog.=) ANY (keys)
              AND NOT (distributed AND cfg.on_duplicate OPERATOR(pg_catalog.=) 'mark' AND a.attname OPERATOR(pg_catalog.=) 'dup_of');
            IF distributed AND cfg.on_duplicate OPERATOR(pg_catalog.=) 'mark' THEN
                cols := pg_catalog.concat_ws(', ', cols, 'dup_of');
                vals := pg_catalog.concat_ws(', ', vals, pg_catalog.format('$2::%s', pk.key_type));
            END IF;
            insert_sql := CASE WHEN cols IS NULL THEN pg_catalog.format('INSERT INTO %s DEFAULT VALUES', tbl)
                               ELSE pg_catalog.format('INSERT INTO %s (%s) SELECT %s FROM pg_catalog.jsonb_populate_record(NULL::%s, $1) r',
                                                      tbl, cols, vals, tbl) END;
        END IF;
        found_key := NULL;
        IF distributed THEN
            EXECUTE fp_sql INTO fp USING j;
            IF fp IS NOT NULL THEN
                PERFORM @extschema@._simdup_lock_row(tbl, fp, cfg.max_distance);
                EXECUTE find_sql INTO found_key, found_distance USING fp;
            END IF;
            IF found_key IS NOT NULL AND cfg.on_duplicate OPERATOR(pg_catalog.=) 'reject' THEN
                RAISE EXCEPTION 'near-duplicate row violates simdup_dedup on relation "%"', table_name
                    USING ERRCODE = 'unique_violation',
                          DETAIL = pg_catalog.format('Key (%I)=(%s) is at Hamming distance %s (max_distance %s).',
                                                     pk.key_column, found_key, found_distance, cfg.max_distance),
                          SCHEMA = schema_name, TABLE = table_name, CONSTRAINT = 'simdup_dedup';
            END IF;
            CONTINUE WHEN found_key IS NOT NULL AND cfg.on_duplicate OPERATOR(pg_catalog.=) 'skip';
        END IF;
        EXECUTE insert_sql USING j, found_key;
        GET DIAGNOSTICS n = ROW_COUNT;
        stored := stored OPERATOR(pg_catalog.+) n;
    END LOOP;

    IF distributed THEN
        EXECUTE pg_catalog.format('DO %s BEGIN SET LOCAL simdup.checked_write = %L; END %s', tag, '', tag);
        PERFORM pg_catalog.set_config('citus.propagate_set_commands', propagate, true);
    END IF;
    RETURN stored;
END
$$;
COMMENT ON FUNCTION _simdup_insert(regclass, text, jsonb, text) IS
  'simdup (internal): the checked write of simdup_insert: reads the jsonb rows of a query (run with the caller''s search_path), then inserts them one by one, each with its own keys; on a Citus distributed table checks each against every shard on the coordinator (lock stripes, then a lookup) before writing it';

-- ---------------------------------------------------------------------------------------------
-- Functions
-- ---------------------------------------------------------------------------------------------
-- simdup_insert(tbl, rows jsonb) and simdup_insert_select(tbl, query): INSERT ... VALUES and
-- INSERT ... SELECT (COPY: into a staging table, then simdup_insert_select(tbl, 'TABLE staging')).
-- Inserts rows into a table enabled with on_duplicate and returns how many it stored (skipped
-- near-duplicates are not counted; a rejected one raises 23505 and stores nothing of the call).
-- Columns are matched by name, row by row; columns a row leaves out take their defaults. On a plain or
-- reference table it is the same as INSERT (the trigger checks each row); on a Citus
-- distributed table it is the write that is checked against every shard, and plain INSERT,
-- COPY and text-changing UPDATEs are refused there.
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
