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

-- A table (relkind among kinds) that the caller owns: its name and kind. 42P01 when it does not
-- exist, 42809 when it is not a table of those kinds, 42501 when the caller does not own it.
-- The one owner check of simdup_enable, simdup_enable_similar and _simdup_registered (the
-- simdup_tables guard, tables.sql, checks rows whose table may be gone, and has its own).
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

-- A column of a table: its number and type; 42703 (with the hint, if any) when the table has no
-- such column. The one "column exists" check of the SQL functions.
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
CREATE FUNCTION _simdup_table_info(tbl regclass, OUT fingerprint_column name, OUT key_column name)
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
CREATE FUNCTION _simdup_registered(tbl regclass) RETURNS simdup_tables
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

-- A free name for a new index of tbl: <stem><suffix> (e.g. docs_simhash + _k16_idx), or
-- <stem>_<n><suffix> with the smallest n that is free, the stem clipped (at a character
-- boundary) so that the whole name fits NAMEDATALEN - 1 bytes. The one place index names are
-- made (simdup_enable and simdup_enable_similar); simdup finds its indexes from the catalog,
-- never by name.
CREATE FUNCTION _simdup_index_name(tbl regclass, stem text, suffix text) RETURNS name
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

-- Builds the block indexes of a layout on a fingerprint column.
CREATE FUNCTION _simdup_create_block_indexes(tbl regclass, fingerprint_column name, blocks integer)
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

-- The fingerprint column of an enabled table: the column simdup_tables names, or — when it was
-- renamed since — the column its block indexes are on (the catalog knows the index's column
-- by number). NULL when the table is not enabled or the column is gone.
CREATE FUNCTION _simdup_fingerprint_column(tbl regclass) RETURNS name
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

-- The block indexes of an enabled table, read from the catalog.
CREATE FUNCTION simdup_block_indexes(tbl regclass)
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

CREATE FUNCTION simdup_disable(tbl regclass) RETURNS void
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
