-- The dedup trigger's bulk check (src/dedup/bulk.rs): a statement whose rows are checked against
-- the table's fingerprints loaded into memory (simdup.bulk_check = on), a plain INSERT ...
-- SELECT whose rows are read first (src/dedup/readahead.rs) and checked by one pair join (auto),
-- and simdup_insert_select (one such INSERT) store, skip, mark and reject exactly the rows that
-- the row-by-row check (off) does, in the statement's order: for
-- k = 0..16 with four blocks, and 3 and 8 blocks at k = 3 and 10. The stored rows and the batch
-- are near-duplicates of each other at every distance around k: 40 random bases, each with
-- variants at 0, 3, ..., 18 random bits flipped, stored rows among them (some near-duplicates of
-- each other, loaded with the trigger disabled), and a NULL fingerprint.
CREATE FUNCTION pg_temp.flip(fp bigint, n int, seed int) RETURNS bigint LANGUAGE sql AS $$
  SELECT fp # coalesce((SELECT bit_or(CASE WHEN b = 63 THEN (-9223372036854775807 - 1)::bigint
                                         ELSE 1::bigint << b END)
                        FROM (SELECT b FROM generate_series(0, 63) b
                              ORDER BY hashint4extended(b, seed) LIMIT n) s), 0)
$$;
CREATE TEMP TABLE pool AS
SELECT (row_number() OVER (ORDER BY hashint8extended(i * 100 + d, 3)))::int AS n,
       pg_temp.flip(hashint8extended(i % 40, 7), d, i * 100 + d) AS fp
FROM generate_series(1, 130) i, generate_series(0, 18, 3) d;
INSERT INTO pool VALUES (0, NULL);
-- stored: n <= 300; the batch: the other 611 rows, in order of n.
-- The batch from a function estimated at one row: its INSERT is not read ahead, and the bulk
-- check answers from the set in memory.
CREATE FUNCTION pg_temp.batch() RETURNS TABLE (n int, fp bigint) LANGUAGE plpgsql ROWS 1 AS $$
BEGIN
    RETURN QUERY SELECT p.n, p.fp FROM pool p WHERE p.n = 0 OR p.n > 300 ORDER BY p.n;
END
$$;

-- One comparison: the same batch into four tables that hold the same rows: the bulk check on
-- (the set in memory), off (row by row), the INSERT read ahead (auto), and simdup_insert_select.
-- Returns the rows stored, skipped and marked, the first error (reject), whether the bulk
-- statements took the table lock the bulk check takes, and whether all tables agree.
CREATE FUNCTION pg_temp.compare(on_dup text, k int, nblocks int,
    OUT stored bigint, OUT marked bigint, OUT error text, OUT bulk_locked boolean, OUT same boolean)
LANGUAGE plpgsql AS $$
DECLARE
    errs text[] := '{}';
    msg text;
    det text;
    t text;
    tables text[] := ARRAY['b_off', 'b_on', 'b_read', 'b_hint'];
    cols text := CASE on_dup WHEN 'mark' THEN 'id, fp, dup_of' ELSE 'id, fp' END;
    differ boolean;
BEGIN
    DROP TABLE IF EXISTS b_on, b_off, b_read, b_hint;
    SET LOCAL client_min_messages = warning;
    FOREACH t IN ARRAY tables LOOP
        EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, fp bigint)', t);
        PERFORM simdup_enable(t, NULL, 'fp', on_duplicate => on_dup, max_distance => k, blocks => nblocks);
        EXECUTE format('ALTER TABLE %I DISABLE TRIGGER simdup_dedup', t);
        EXECUTE format('INSERT INTO %I SELECT n, fp FROM pool WHERE n BETWEEN 1 AND 300', t);
        EXECUTE format('ALTER TABLE %I ENABLE TRIGGER simdup_dedup', t);
        PERFORM set_config('simdup.bulk_check', CASE t WHEN 'b_on' THEN 'on' WHEN 'b_off' THEN 'off' ELSE 'auto' END, true);
        BEGIN
            IF t = 'b_hint' THEN
                PERFORM simdup_insert_select(t, 'SELECT n AS id, fp FROM pool WHERE n = 0 OR n > 300 ORDER BY n');
            ELSIF t = 'b_on' THEN
                EXECUTE format('INSERT INTO %I SELECT * FROM pg_temp.batch()', t);
            ELSE
                EXECUTE format('INSERT INTO %I SELECT n, fp FROM pool WHERE n = 0 OR n > 300 ORDER BY n', t);
            END IF;
            IF t <> 'b_off' THEN
                bulk_locked := coalesce(bulk_locked, true)
                    AND EXISTS (SELECT FROM pg_locks WHERE pid = pg_backend_pid()
                                AND relation = t::regclass AND mode = 'ShareRowExclusiveLock');
            END IF;
        EXCEPTION WHEN unique_violation THEN
            GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
            errs := errs || (replace(msg, t, 'T') || ' / ' || det);
            bulk_locked := NULL;
        END;
    END LOOP;
    RESET simdup.bulk_check;
    same := true;
    FOREACH t IN ARRAY tables[2:] LOOP
        EXECUTE format('SELECT EXISTS ((SELECT %s FROM %I EXCEPT SELECT %s FROM b_off) UNION ALL '
                       '(SELECT %s FROM b_off EXCEPT SELECT %s FROM %I))', cols, t, cols, cols, cols, t) INTO differ;
        same := same AND NOT differ;
    END LOOP;
    IF on_dup = 'mark' THEN
        SELECT count(*) FILTER (WHERE dup_of IS NOT NULL) INTO marked FROM b_on WHERE id = 0 OR id > 300;
    END IF;
    same := same AND (SELECT count(DISTINCT e) <= 1 AND count(e) IN (0, 4) FROM unnest(errs) e);
    error := errs[1];
    SELECT count(*) INTO stored FROM b_on WHERE id = 0 OR id > 300;
END
$$;

-- Each comparison in its own transaction (the row-by-row check holds its lock stripes to the end).
CREATE TEMP TABLE runs (mode text, k int, nblocks int, stored bigint, marked bigint, error text,
                        bulk_locked boolean, same boolean);
SELECT format('INSERT INTO runs SELECT %L, %s, %s, c.* FROM pg_temp.compare(%L, %s, %s) c', m, k, b, m, k, b)
FROM (SELECT m, k, 4 AS b FROM unnest(ARRAY['skip', 'mark', 'reject']) m, generate_series(0, 16) k
      UNION ALL
      SELECT m, k, b FROM unnest(ARRAY['skip', 'mark', 'reject']) m, unnest(ARRAY[3, 10]) k, unnest(ARRAY[3, 8]) b) c
ORDER BY b, m, k
\gexec
DROP TABLE b_on, b_off, b_read, b_hint;
-- Every combination agrees; the bulk statements took the lock (where no row was rejected).
SELECT count(*) AS runs, count(*) FILTER (WHERE same) AS same,
       count(*) FILTER (WHERE bulk_locked) AS bulk_locked,
       count(*) FILTER (WHERE error IS NOT NULL) AS rejected
FROM runs;
SELECT mode, k, nblocks FROM runs WHERE NOT same;
-- What the batch did at each k (four blocks): rows stored (of 611), of them marked.
SELECT k, max(stored) FILTER (WHERE mode = 'skip') AS skip_stored,
       max(marked) FILTER (WHERE mode = 'mark') AS mark_marked,
       bool_and(error IS NOT NULL) FILTER (WHERE mode = 'reject') AS reject_raised
FROM runs WHERE nblocks = 4 GROUP BY k ORDER BY k;
-- The first rejection reported, as both checks report it.
SELECT k, error FROM runs WHERE mode = 'reject' AND nblocks = 4 AND k IN (0, 10);

-- ---------------------------------------------------------------------------------------------
-- When the bulk check loads: auto waits for 100 rows in a statement; a role that may not
-- LOCK the table never loads; rows that ON CONFLICT DO NOTHING drops are not counted as stored
-- ---------------------------------------------------------------------------------------------
CREATE TABLE bulk_auto (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable('bulk_auto', NULL, 'fp', on_duplicate => 'skip', max_distance => 3);
BEGIN;
INSERT INTO bulk_auto SELECT g, hashint8extended(g, 11) FROM generate_series(1, 99) g;
SELECT count(*) AS lock_after_99 FROM pg_locks
WHERE pid = pg_backend_pid() AND relation = 'bulk_auto'::regclass AND mode = 'ShareRowExclusiveLock';
INSERT INTO bulk_auto SELECT g, hashint8extended(g, 11) FROM generate_series(100, 3000) g;
SELECT count(*) AS lock_after_2901 FROM pg_locks
WHERE pid = pg_backend_pid() AND relation = 'bulk_auto'::regclass AND mode = 'ShareRowExclusiveLock';
COMMIT;

CREATE ROLE bulk_writer;
GRANT SELECT, INSERT ON bulk_auto TO bulk_writer;
BEGIN;
SET LOCAL ROLE bulk_writer;
SET LOCAL simdup.bulk_check = on;
-- Copies of stored rows (skipped) and new rows (stored), checked row by row.
INSERT INTO bulk_auto SELECT g + 10000, hashint8extended(g, 11) # CASE WHEN g % 2 = 0 THEN 0 ELSE 7 END
FROM generate_series(1, 2000) g;
SELECT count(*) AS insert_only_locks FROM pg_locks
WHERE pid = pg_backend_pid() AND relation = 'bulk_auto'::regclass AND mode = 'ShareRowExclusiveLock';
ROLLBACK;

-- id 1 exists: the first row is dropped by ON CONFLICT; its near-duplicate (id 5001) is stored
-- both ways, as nothing within k of it landed.
CREATE TABLE bulk_conflict_on (id int PRIMARY KEY, fp bigint);
CREATE TABLE bulk_conflict_off (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable('bulk_conflict_on', NULL, 'fp', on_duplicate => 'skip', max_distance => 3);
SELECT simdup_enable('bulk_conflict_off', NULL, 'fp', on_duplicate => 'skip', max_distance => 3);
INSERT INTO bulk_conflict_on VALUES (1, 42);
INSERT INTO bulk_conflict_off VALUES (1, 42);
SET simdup.bulk_check = on;
INSERT INTO bulk_conflict_on VALUES (1, 1::bigint << 40), (5001, (1::bigint << 40) # 3), (5002, 43)
ON CONFLICT (id) DO NOTHING;
SET simdup.bulk_check = off;
INSERT INTO bulk_conflict_off VALUES (1, 1::bigint << 40), (5001, (1::bigint << 40) # 3), (5002, 43)
ON CONFLICT (id) DO NOTHING;
RESET simdup.bulk_check;
SELECT 'on' AS bulk_check, * FROM bulk_conflict_on UNION ALL SELECT 'off', * FROM bulk_conflict_off
ORDER BY 1, 2;

-- In one statement, MERGE deletes a stored row and then inserts a near-duplicate of it; INSERT
-- ... ON CONFLICT DO UPDATE changes a stored row's fingerprint and then inserts a near-duplicate
-- of the old one: the copy loaded at the statement's first row is out of date for both, and the
-- answers are still the row-by-row ones (1001 and 5000001 stored).
CREATE TABLE bulk_merge_on (id int PRIMARY KEY, fp bigint);
CREATE TABLE bulk_merge_off (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable('bulk_merge_on', NULL, 'fp', on_duplicate => 'skip', max_distance => 3);
SELECT simdup_enable('bulk_merge_off', NULL, 'fp', on_duplicate => 'skip', max_distance => 3);
INSERT INTO bulk_merge_on VALUES (1, 1000), (2, 5000000), (9, -1);
INSERT INTO bulk_merge_off VALUES (1, 1000), (2, 5000000), (9, -1);
SET simdup.bulk_check = on;
MERGE INTO bulk_merge_on t USING (VALUES (0, 1, 0::bigint), (1, 5, -2::bigint), (2, 3, 1001::bigint)) s(n, id, fp)
  ON t.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.fp);
INSERT INTO bulk_merge_on VALUES (6, -3), (2, 77), (4, 5000001) ON CONFLICT (id) DO UPDATE SET fp = excluded.fp;
SET simdup.bulk_check = off;
MERGE INTO bulk_merge_off t USING (VALUES (0, 1, 0::bigint), (1, 5, -2::bigint), (2, 3, 1001::bigint)) s(n, id, fp)
  ON t.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.fp);
INSERT INTO bulk_merge_off VALUES (6, -3), (2, 77), (4, 5000001) ON CONFLICT (id) DO UPDATE SET fp = excluded.fp;
RESET simdup.bulk_check;
SELECT 'on' AS bulk_check, * FROM bulk_merge_on UNION ALL SELECT 'off', * FROM bulk_merge_off
ORDER BY 1, 2;

-- simdup_insert_select gives its batch to the bulk check: 500 rows into 1,000 join at once (the
-- DEBUG1 lines; every even row a copy of a stored one, skipped), 50 rows are checked one by one
-- (no table lock: a short statement never takes it).
CREATE TABLE bulk_hinted (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable('bulk_hinted', NULL, 'fp', on_duplicate => 'skip', max_distance => 3);
INSERT INTO bulk_hinted SELECT g, hashint8extended(g, 5) FROM generate_series(1, 1000) g;
BEGIN;
SELECT simdup_insert_select('bulk_hinted', 'SELECT 1000 + g AS id, hashint8extended(g, 6 - g % 2) AS fp FROM generate_series(1, 50) g') AS stored_of_50;
SELECT count(*) AS short_locks FROM pg_locks
WHERE pid = pg_backend_pid() AND relation = 'bulk_hinted'::regclass AND mode = 'ShareRowExclusiveLock';
SET LOCAL client_min_messages = debug1;
SELECT simdup_insert_select('bulk_hinted', 'SELECT 2000 + g AS id, hashint8extended(g, 6 - g % 2) AS fp FROM generate_series(51, 550) g') AS stored_of_500;
RESET client_min_messages;
COMMIT;

-- ---------------------------------------------------------------------------------------------
-- Which INSERTs are read ahead (src/dedup/readahead.rs): an INSERT ... SELECT or a multi-row
-- VALUES into a table with the dedup trigger (adopted fingerprints or text); not a one-row
-- VALUES, not a source estimated at one row, not with the bulk check off.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE bulk_text (id int PRIMARY KEY, body text);
SELECT simdup_enable('bulk_text', 'body', on_duplicate => 'skip');
EXPLAIN (COSTS OFF) INSERT INTO bulk_hinted SELECT g, g FROM generate_series(1, 10) g;
EXPLAIN (COSTS OFF) INSERT INTO bulk_hinted VALUES (1, 1), (2, 2);
EXPLAIN (COSTS OFF) INSERT INTO bulk_hinted VALUES (1, 1);
EXPLAIN (COSTS OFF) INSERT INTO bulk_hinted SELECT * FROM pg_temp.batch();
EXPLAIN (COSTS OFF) INSERT INTO bulk_text SELECT g, 'text ' || g FROM generate_series(1, 10) g;
SET simdup.bulk_check = off;
EXPLAIN (COSTS OFF) INSERT INTO bulk_hinted SELECT g, g FROM generate_series(1, 10) g;
RESET simdup.bulk_check;
-- The target list is the rows' own: constants stay (the NULL of a dropped column, which the
-- INSERT requires), the other columns are named through the node.
ALTER TABLE bulk_hinted ADD COLUMN gone int, ADD COLUMN note text;
ALTER TABLE bulk_hinted DROP COLUMN gone;
EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO bulk_hinted SELECT g + 100000, g, 'n' FROM generate_series(1, 10) g ORDER BY g DESC;
BEGIN;
INSERT INTO bulk_hinted SELECT g + 100000, -g, 'n' || g FROM generate_series(1, 10) g ORDER BY g DESC;
SELECT id, fp, note FROM bulk_hinted WHERE id > 100000 ORDER BY id;
ROLLBACK;

-- A BEFORE trigger that fires before the dedup trigger (by name) and changes some rows'
-- fingerprints: the hint read ahead is wrong from the 7th row on (DEBUG), the check goes on with
-- the set in memory, and the answers are the row-by-row ones.
CREATE TABLE bulk_changed_on (id int PRIMARY KEY, fp bigint);
CREATE TABLE bulk_changed_off (id int PRIMARY KEY, fp bigint);
CREATE FUNCTION pg_temp.shift() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.id % 7 = 0 THEN NEW.fp := NEW.fp # 1; END IF;
    RETURN NEW;
END
$$;
SELECT simdup_enable(t, NULL, 'fp', on_duplicate => 'mark', max_distance => 3)
FROM unnest(ARRAY['bulk_changed_on', 'bulk_changed_off']) t;
CREATE TRIGGER a_shift BEFORE INSERT ON bulk_changed_on FOR EACH ROW EXECUTE FUNCTION pg_temp.shift();
CREATE TRIGGER a_shift BEFORE INSERT ON bulk_changed_off FOR EACH ROW EXECUTE FUNCTION pg_temp.shift();
INSERT INTO bulk_changed_on SELECT g, hashint8extended(g, 11) FROM generate_series(1, 300) g;
INSERT INTO bulk_changed_off SELECT g, hashint8extended(g, 11) FROM generate_series(1, 300) g;
SET client_min_messages = debug1;
SET simdup.bulk_check = on;
-- Odd rows: a stored row's fingerprint with 3 bits flipped (2 for rows the trigger shifts);
-- even rows: copies of the odd row before them.
INSERT INTO bulk_changed_on
SELECT 1000 + g, hashint8extended((g + 1) / 2, 11) # 7 FROM generate_series(1, 400) g;
SET simdup.bulk_check = off;
INSERT INTO bulk_changed_off
SELECT 1000 + g, hashint8extended((g + 1) / 2, 11) # 7 FROM generate_series(1, 400) g;
RESET simdup.bulk_check;
RESET client_min_messages;
SELECT count(*) AS rows, count(dup_of) AS marked,
       NOT EXISTS ((SELECT id, fp, dup_of FROM bulk_changed_on EXCEPT SELECT id, fp, dup_of FROM bulk_changed_off)
                   UNION ALL
                   (SELECT id, fp, dup_of FROM bulk_changed_off EXCEPT SELECT id, fp, dup_of FROM bulk_changed_on)) AS same
FROM bulk_changed_on;

-- A batch whose hint would outgrow simdup.bulk_check_memory (17 MB: the set's fixed 16 MB and
-- about 7,000 fingerprints): the node stops reading ahead and gives no hint, the rest of the rows
-- pass through as they come, the set in memory answers from the 100th row (DEBUG: loaded, no
-- join), and the answers are the row-by-row ones.
CREATE TABLE bulk_big_on (id int PRIMARY KEY, fp bigint);
CREATE TABLE bulk_big_off (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable(t, NULL, 'fp', on_duplicate => 'skip', max_distance => 3)
FROM unnest(ARRAY['bulk_big_on', 'bulk_big_off']) t;
INSERT INTO bulk_big_on SELECT g, hashint8extended(g, 11) FROM generate_series(1, 500) g;
INSERT INTO bulk_big_off SELECT g, hashint8extended(g, 11) FROM generate_series(1, 500) g;
SET simdup.bulk_check_memory = '17MB';
SET client_min_messages = debug1;
INSERT INTO bulk_big_on SELECT 1000 + g, hashint8extended(g % 1000, 11) # (g % 3) FROM generate_series(1, 8000) g;
RESET client_min_messages;
SET simdup.bulk_check = off;
INSERT INTO bulk_big_off SELECT 1000 + g, hashint8extended(g % 1000, 11) # (g % 3) FROM generate_series(1, 8000) g;
RESET simdup.bulk_check;
RESET simdup.bulk_check_memory;
SELECT count(*) AS rows,
       NOT EXISTS ((SELECT id, fp FROM bulk_big_on EXCEPT SELECT id, fp FROM bulk_big_off)
                   UNION ALL
                   (SELECT id, fp FROM bulk_big_off EXCEPT SELECT id, fp FROM bulk_big_on)) AS same
FROM bulk_big_on;

-- A table that fingerprints text: the INSERT read ahead fingerprints the batch's texts on the
-- batch threads (2 here), remembers each row's just before it is written, and checks the batch
-- by one pair join; the rows stored (skip, mark), their generated fingerprints and dup_of are
-- those of the row-by-row check, and every stored fingerprint is simhash of its text. The batch:
-- 600 documents of 30 words, every third a near-duplicate (one word changed) of a stored one or
-- of an earlier one in the batch, one of 70 kB (longer than the memo: fingerprinted for the
-- hint, and again by the trigger), an empty one (no fingerprint), and a NULL.
CREATE TEMP TABLE words AS
SELECT d, string_agg(md5((d * 100 + w)::text), ' ' ORDER BY w) AS body
FROM generate_series(1, 400) d, generate_series(1, 30) w GROUP BY d;
CREATE TEMP TABLE text_batch AS
SELECT n, CASE WHEN n % 3 = 0 THEN replace(body, md5((d * 100 + 7)::text), 'changed' || n) ELSE body END AS body
FROM (SELECT n, (n * 7) % 400 + 1 AS d FROM generate_series(1, 600) n) x JOIN words USING (d)
UNION ALL SELECT 601, repeat('long text ', 7000)
UNION ALL SELECT 602, '...'
UNION ALL SELECT 603, NULL;
SET simdup.batch_threads = 2;
SELECT format('CREATE TABLE %I (id int PRIMARY KEY, body text)', t)
FROM unnest(ARRAY['text_skip_on', 'text_skip_off', 'text_mark_on', 'text_mark_off']) t
\gexec
SELECT simdup_enable(t, 'body', on_duplicate => m)
FROM (VALUES ('text_skip_on', 'skip'), ('text_skip_off', 'skip'), ('text_mark_on', 'mark'), ('text_mark_off', 'mark')) v(t, m);
INSERT INTO text_skip_on SELECT d, body FROM words WHERE d <= 200;
INSERT INTO text_skip_off SELECT d, body FROM words WHERE d <= 200;
INSERT INTO text_mark_on SELECT d, body FROM words WHERE d <= 200;
INSERT INTO text_mark_off SELECT d, body FROM words WHERE d <= 200;
EXPLAIN (COSTS OFF) INSERT INTO text_skip_on SELECT 1000 + n, body FROM text_batch ORDER BY n;
SET client_min_messages = debug1;
INSERT INTO text_skip_on SELECT 1000 + n, body FROM text_batch ORDER BY n;
INSERT INTO text_mark_on SELECT 1000 + n, body FROM text_batch ORDER BY n;
RESET client_min_messages;
SET simdup.bulk_check = off;
INSERT INTO text_skip_off SELECT 1000 + n, body FROM text_batch ORDER BY n;
INSERT INTO text_mark_off SELECT 1000 + n, body FROM text_batch ORDER BY n;
RESET simdup.bulk_check;
RESET simdup.batch_threads;
SELECT t AS "table", count(*) AS rows, count(dup_of) AS marked,
       count(*) FILTER (WHERE simhash IS DISTINCT FROM simhash(body)) AS wrong_fingerprints
FROM (SELECT 'skip' AS t, id, body, simhash, NULL::int AS dup_of FROM text_skip_on
      UNION ALL SELECT 'mark', id, body, simhash, dup_of FROM text_mark_on) x
GROUP BY t ORDER BY t;
SELECT NOT EXISTS ((SELECT id, simhash FROM text_skip_on EXCEPT SELECT id, simhash FROM text_skip_off)
                   UNION ALL (SELECT id, simhash FROM text_skip_off EXCEPT SELECT id, simhash FROM text_skip_on)) AS skip_same,
       NOT EXISTS ((SELECT id, simhash, dup_of FROM text_mark_on EXCEPT SELECT id, simhash, dup_of FROM text_mark_off)
                   UNION ALL (SELECT id, simhash, dup_of FROM text_mark_off EXCEPT SELECT id, simhash, dup_of FROM text_mark_on)) AS mark_same;

DROP TABLE bulk_auto, bulk_conflict_on, bulk_conflict_off, bulk_merge_on, bulk_merge_off, bulk_hinted,
    bulk_text, bulk_changed_on, bulk_changed_off, bulk_big_on, bulk_big_off,
    text_skip_on, text_skip_off, text_mark_on, text_mark_off;
DROP ROLE bulk_writer;
