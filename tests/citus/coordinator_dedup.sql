-- Prototype of cross-shard dedup on the coordinator (docs/citus.md, "Design"), in PL/pgSQL on
-- top of simdup 0.2.0 (first written for 0.1.0), so that the design can be tested before it is written in Rust.
--
--   SELECT simdup_citus_insert('docs', to_jsonb(r), 'reject' | 'skip' | 'mark', k) FROM src r ORDER BY ...;
--
-- inserts one row (a jsonb object: column => value; columns not given take their defaults)
-- into a distributed table enabled with simdup_enable(tbl, text_column) WITHOUT on_duplicate
-- (the per-shard trigger would check again, shard by shard), unless a stored row of ANY shard
-- is within k bits. Returns the key of the earliest such row (NULL if none); 'reject' raises
-- 23505 instead, 'skip' leaves the row out, 'mark' stores it with dup_of = that key.
--
-- Why this is correct when every write goes through it, on the coordinator:
-- 1. Locks: the k + 1 stripes of the fingerprint (_simdup_lock_stripes, the same pieces as the
--    dedup trigger) are taken as transaction-scoped advisory locks ON THE COORDINATOR, keyed
--    by the shell table's OID, ascending. Two fingerprints within k share a stripe, so two
--    writers of near-duplicates serialize on it, whichever shards their rows go to.
-- 2. Lookup after the locks: one distributed query over all shards, in READ COMMITTED, so each
--    worker takes its snapshot after the locks are held; rows this transaction wrote earlier
--    are visible because Citus reads a placement over the connection that wrote it.
-- 3. The earlier writer's rows are committed on the workers before its coordinator locks go:
--    Citus commits the workers in PRE_COMMIT (one-phase) or sends COMMIT PREPARED in the
--    COMMIT callback (two-phase), both before PostgreSQL releases the coordinator's locks.
-- REPEATABLE READ / SERIALIZABLE are refused (the workers' snapshots could predate the other
-- writer's commit).
CREATE FUNCTION simdup_citus_insert(tbl regclass, new_row jsonb, on_duplicate text, k integer)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = public, pg_catalog, pg_temp
AS $$
DECLARE
    cfg record;
    key_col name;
    fp bigint;
    found_key text;
    found_distance integer;
    cols text;
    vals text;
BEGIN
    IF on_duplicate NOT IN ('reject', 'skip', 'mark') OR k NOT BETWEEN 0 AND 64 THEN
        RAISE EXCEPTION 'bad on_duplicate % or k %', on_duplicate, k USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'simdup_citus_insert needs READ COMMITTED' USING ERRCODE = 'feature_not_supported';
    END IF;
    SELECT s.text_column, s.fingerprint_column INTO cfg FROM simdup_tables s WHERE s.tbl = simdup_citus_insert.tbl;
    IF NOT FOUND OR cfg.text_column IS NULL THEN
        RAISE EXCEPTION 'table % is not enabled with a text column', tbl USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    SELECT a.attname INTO key_col FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = tbl AND i.indisprimary AND i.indnkeyatts = 1;

    fp := simhash(new_row ->> cfg.text_column);
    IF fp IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(tbl::oid::integer, s) FROM unnest(_simdup_lock_stripes(fp, k)) s ORDER BY s;
        -- (ORDER BY t.key: the key's own order, not that of its text in the output column)
        EXECUTE format('SELECT t.%1$I::text, hamming(t.%2$I, $1) FROM %3$s t WHERE simdup_match(t.%2$I, $1, $2) ORDER BY t.%1$I LIMIT 1',
                       key_col, cfg.fingerprint_column, tbl)
            INTO found_key, found_distance USING fp, k;
    END IF;
    IF found_key IS NOT NULL THEN
        IF on_duplicate = 'reject' THEN
            RAISE EXCEPTION 'near-duplicate row violates simdup_citus_insert on relation "%"', tbl::text
                USING ERRCODE = 'unique_violation',
                      DETAIL = format('Key (%s)=(%s) is at Hamming distance %s (max_distance %s).', key_col, found_key, found_distance, k);
        ELSIF on_duplicate = 'skip' THEN
            RETURN found_key;
        END IF;
    END IF;
    IF on_duplicate = 'mark' THEN
        new_row := new_row || jsonb_build_object('dup_of', found_key);
    END IF;

    -- A single-row INSERT with the given columns: a router query to the row's shard.
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum),
           string_agg(format('($1 ->> %L)::%s', a.attname, format_type(a.atttypid, a.atttypmod)), ', ' ORDER BY a.attnum)
      INTO cols, vals
    FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      AND new_row ? a.attname;
    EXECUTE format('INSERT INTO %s (%s) VALUES (%s)', tbl, cols, vals) USING new_row;
    RETURN found_key;
END
$$;
