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

-- COPY into a dedup table is read ahead too: simdup reads the rows with PostgreSQL's COPY
-- reader and writes them by INSERT ... SELECT in large batches, which are read ahead (DEBUG: the
-- join); in mark mode (every row stored) the rows and dup_of equal those of the same rows
-- checked row by row (bulk check off). The batch: 300 rows, every third a stored fingerprint
-- with a bit flipped, every third a copy of the row before it with 2 bits flipped, and a NULL.
-- A COPY ... WHERE is PostgreSQL's.
CREATE TABLE copy_skip_on (id int PRIMARY KEY, fp bigint);
CREATE TABLE copy_mark_on (id int PRIMARY KEY, fp bigint);
CREATE TABLE copy_mark_off (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable(t, NULL, 'fp', on_duplicate => m, max_distance => 3)
FROM (VALUES ('copy_skip_on', 'skip'), ('copy_mark_on', 'mark'), ('copy_mark_off', 'mark')) v(t, m);
SELECT format('INSERT INTO %I SELECT g, (g * 2654435761) # (g << 40) FROM generate_series(1::bigint, 200) g', t)
FROM unnest(ARRAY['copy_skip_on', 'copy_mark_on', 'copy_mark_off']) t
\gexec
SET client_min_messages = debug1;
COPY copy_mark_on (id, fp) FROM stdin;
1001	331751985124637
1002	331751985124638
1003	24247653397822
1004	335058483315248
1005	335058483315251
1006	47393140732155
1007	338364981505859
1008	338364981505856
1009	70538628066880
1010	341671479696470
1011	341671479696469
1012	93684115404741
1013	344977977887081
1014	344977977887082
1015	116829602767690
1016	348284476077692
1017	348284476077695
1018	139975089807055
1019	351590974268303
1020	351590974268300
1021	163120579500628
1022	354897472458914
1023	354897472458913
1024	186266081514969
1025	358203970649525
1026	358203970649526
1027	209411417854302
1028	361510468840136
1029	361510468840139
1030	12122752957083
1031	364816967030747
1032	364816967030744
1033	35260724098592
1034	368123465221358
1035	368123465221357
1036	58483520844197
1037	371429963411969
1038	371429963411970
1039	82110044515626
1040	374736461602580
1041	374736461602583
1042	104705776036011
1043	378042959793191
1044	378042959793188
1045	127851263370260
1046	381349457983802
1047	381349457983801
1048	150996750704313
1049	384655956174413
1050	384655956174414
1051	174142238036798
1052	387962454365024
1053	387962454365027
1054	197287725389507
1055	391268952555635
1056	391268952555632
1057	220433212576328
1058	394575450746246
1059	394575450746245
1060	23145488382853
1061	397881948936857
1062	397881948936858
1063	46290983057162
1064	401188447127468
1065	401188447127471
1066	69436394893967
1067	404494945318079
1068	404494945318076
1069	92581412466196
1070	407801443508690
1071	407801443508689
1072	115731731638681
1073	411107941699301
1074	411107941699302
1075	138838564267294
1076	414414439889912
1077	414414439889915
1078	161743533432995
1079	417720938080523
1080	417720938080520
1081	185163898674218
1082	421027436271134
1083	421027436271133
1084	208309386008509
1085	424333934461745
1086	424333934461746
1087	11021660635242
1088	427640432652356
1089	427640432652359
1090	34167147968623
1091	430946930842967
1092	430946930842964
1093	57312635295732
1094	434253429033578
1095	434253429033577
1096	80458122572665
1097	437559927224189
1098	437559927224190
1099	103603609448190
1100	440866425414800
1101	440866425414803
1102	126749093112451
1103	444172923605411
1104	444172923605408
1105	149894618195464
1106	447479421796022
1107	447479421796021
1108	173040340410765
1109	450785919986633
1110	450785919986634
1111	196187706793234
1112	454092418177244
1113	454092418177247
1114	219348226513047
1115	455199893112303
1116	455199893112300
1117	22180760224212
1118	460705414558466
1119	460705414558465
1120	45188808605016
1121	461812889493525
1122	461812889493526
1123	68334295939286
1124	467318410939688
1125	467318410939691
1126	91479783273507
1127	468425885874747
1128	468425885874744
1129	114625270607336
1130	473931407320910
1131	473931407320909
1132	137770757946221
1133	475038882255969
1134	475038882255970
1135	160916245309170
1136	480544403702132
1137	480544403702135
1138	184061732872823
1139	481651878637191
1140	481651878637188
1141	207207217847804
1142	487157400083354
1143	487157400083353
1144	9919477794617
1145	488264875018413
1146	488264875018414
1147	33064847688382
1148	493770396464576
1149	493770396464579
1150	56211542982211
1151	494877871399635
1152	494877871399632
1153	79364546509256
1154	500383392845798
1155	500383392845797
1156	102432724432205
1157	501490867780857
1158	501490867780858
1159	126196687057106
1160	506996389227020
1161	506996389227023
1162	148792418577491
1163	508103864162079
1164	508103864162076
1165	171937905911804
1166	513609385608242
1167	513609385608241
1168	195083393245793
1169	514716860543301
1170	514716860543302
1171	218228880578278
1172	520222381989464
1173	520222381989467
1174	20941155223587
1175	521329856924523
1176	521329856924520
1177	44086642410408
1178	526835378370686
1179	526835378370685
1180	67232128827181
1181	527942853305745
1182	527942853305746
1183	90377608821426
1184	533448374751908
1185	533448374751911
1186	113523171653175
1187	534555849686967
1188	534555849686964
1189	136668055007676
1190	540061371133130
1191	540061371133129
1192	159809784245569
1193	541168846068189
1194	541168846068190
1195	182993926285510
1196	546674367514352
1197	546674367514355
1198	205830175974475
1199	547781842449411
1200	547781842449408
1201	8817328508298
1202	553287363895574
1203	553287363895573
1204	31962815842589
1205	554394838830633
1206	554394838830634
1207	55108303176722
1208	559900360276796
1209	559900360276799
1210	78253790512151
1211	561007835211855
1212	561007835211852
1213	101399277837212
1214	566513356658018
1215	566513356658017
1216	124544765245217
1217	567620831593077
1218	567620831593078
1219	147690251989670
1220	573126353039240
1221	573126353039243
1222	170835744042539
1223	574233827974299
1224	574233827974296
1225	193981193628080
1226	579739349420462
1227	579739349420461
1228	217126982952245
1229	580846824355521
1230	580846824355522
1231	19841136627314
1232	586352345801684
1233	586352345801687
1234	43001656347127
1235	587459820736743
1236	587459820736740
1237	65992524858748
1238	592965342182906
1239	592965342182905
1240	89275451146496
1241	594072817117965
1242	594072817117966
1243	112420938480782
1244	599578338564128
1245	599578338564131
1246	135566425815115
1247	600685813499187
1248	600685813499184
1249	158711913148816
1250	606191334945350
1251	606191334945349
1252	181857400487701
1253	607298809880409
1254	607298809880410
1255	205002887850650
1256	612804331326572
1257	612804331326575
1258	7715162182615
1259	613911806261631
1260	613911806261628
1261	30860651876188
1262	619417327707794
1263	619417327707793
1264	54006153890529
1265	620524802642853
1266	620524802642854
1267	77151758665318
1268	626030324089016
1269	626030324089019
1270	100298185523691
1271	627137799024075
1272	627137799024072
1273	123451189050736
1274	632643320470238
1275	632643320470237
1276	146519366973685
1277	633750795405297
1278	633750795405298
1279	170283329598586
1280	639256316851460
1281	639256316851463
1282	192879061118971
1283	640363791786519
1284	640363791786516
1285	216024548453284
1286	645869313232682
1287	645869313232681
1288	18736823080385
1289	646976788167741
1290	646976788167742
1291	41882310416454
1292	652482309613904
1293	652482309613907
1294	65027797765067
1295	653589784548963
1296	653589784548960
1297	88173284951888
1298	659095305995126
1299	659095305995125
1300	111318773465813
1301	\N
\.
RESET client_min_messages;
SET simdup.bulk_check = off;
INSERT INTO copy_mark_off SELECT id, fp FROM copy_mark_on WHERE id > 1000 ORDER BY id;
RESET simdup.bulk_check;
SELECT count(*) AS rows, count(dup_of) AS marked,
       NOT EXISTS ((SELECT id, fp, dup_of FROM copy_mark_on EXCEPT SELECT id, fp, dup_of FROM copy_mark_off)
                   UNION ALL (SELECT id, fp, dup_of FROM copy_mark_off EXCEPT SELECT id, fp, dup_of FROM copy_mark_on)) AS same
FROM copy_mark_on;
SET client_min_messages = debug1;
COPY copy_skip_on (id, fp) FROM stdin WHERE id > 5000;
5001	12345
5002	12344
\.
RESET client_min_messages;
SELECT id, fp FROM copy_skip_on WHERE id > 5000 ORDER BY id;
-- With the bulk check on, a COPY read ahead shows the join's DEBUG line, PostgreSQL's own only
-- the load: options of the data's form are read ahead, FREEZE (as ON_ERROR, REJECT_LIMIT, or
-- rules on the table) leaves the COPY to PostgreSQL.
CREATE TABLE copy_freeze (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable('copy_freeze', NULL, 'fp', on_duplicate => 'skip', max_distance => 3);
SET simdup.bulk_check = on;
SET client_min_messages = debug1;
COPY copy_skip_on (id, fp) FROM stdin (FORMAT text, HEADER false);
5101	777
5102	-777
\.
RESET client_min_messages;
BEGIN;
TRUNCATE copy_freeze;
SET LOCAL client_min_messages = debug1;
COPY copy_freeze FROM stdin (FREEZE);
1	777
2	778
\.
COMMIT;
RESET client_min_messages;
RESET simdup.bulk_check;
SELECT * FROM copy_freeze ORDER BY id;
-- Bad data: the reader's error (its SQLSTATE and message), nothing stored.
COPY copy_skip_on (id, fp) FROM stdin;
6001	1
6002	not a number
\.
SELECT count(*) AS stored_after_error FROM copy_skip_on WHERE id > 6000;
-- An identity column GENERATED ALWAYS, left out of the COPY: the reader's next values, as
-- PostgreSQL's COPY writes them.
CREATE TABLE copy_identity (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, fp bigint);
SELECT simdup_enable('copy_identity', NULL, 'fp', on_duplicate => 'skip', max_distance => 3);
COPY copy_identity (fp) FROM stdin;
100
101
5000
\.
SELECT id, fp FROM copy_identity ORDER BY id;
-- A text table's COPY: its texts fingerprinted ahead; a copy of a stored text and an edited
-- copy of a row before it in the COPY are skipped.
CREATE TABLE copy_text (id int PRIMARY KEY, body text);
SELECT simdup_enable('copy_text', 'body', on_duplicate => 'skip');
INSERT INTO copy_text VALUES (1, 'the quick brown fox jumps over the lazy dog near the river bank today');
SET client_min_messages = debug1;
COPY copy_text FROM stdin;
2	the quick brown fox jumps over the lazy dog near the river bank today
3	an entirely different sentence about databases, indexes and duplicate detection in postgres
4	an entirely different sentence about databases, indexes and duplicate detection in postgres!
5	something else altogether: weather reports from the mountain villages in winter
\.
RESET client_min_messages;
SELECT id, body, simhash = simhash(body) AS fingerprint_ok FROM copy_text ORDER BY id;
-- A COPY in many batches (simdup.copy_batch_memory = 16kB: 10 of them): each batch is read, and
-- its texts fingerprinted on threads of their own, while the batch before it is written (DEBUG:
-- each batch's read-ahead takes every text's fingerprint from that work). The rows stored (skip,
-- each batch checked by the join: bulk check on), their fingerprints and dup_of (mark, auto:
-- batches this small are checked row by row) are those of the same rows checked row by row,
-- across the batches' boundaries: 600 rows, 200 documents of 30 words three times, the third
-- time with a word added (many of the 200 share most of their words too). The rows come from
-- awk, so that the test needs no file and no page of data.
\set many_rows 'awk ''BEGIN { for (i = 1; i <= 600; i++) { d = (i * 7) % 200; s = ""; for (w = 1; w <= 30; w++) s = s " word" ((d * 31 + w * 17) % 997); if (i > 400) s = s " added"; print i "\t" substr(s, 2) } }'''
CREATE TABLE copy_src (id int PRIMARY KEY, body text);
COPY copy_src FROM PROGRAM :'many_rows';
SELECT format('CREATE TABLE %I (id int PRIMARY KEY, body text)', t)
FROM unnest(ARRAY['copy_many_skip', 'copy_many_skip_off', 'copy_many_mark', 'copy_many_mark_off']) t
\gexec
SELECT simdup_enable(t, 'body', on_duplicate => m)
FROM (VALUES ('copy_many_skip', 'skip'), ('copy_many_skip_off', 'skip'), ('copy_many_mark', 'mark'), ('copy_many_mark_off', 'mark')) v(t, m);
SET simdup.copy_batch_memory = '16kB';
SET simdup.batch_threads = 2;
SET simdup.bulk_check = on;
COPY copy_many_skip (id, body) FROM PROGRAM :'many_rows';
RESET simdup.bulk_check;
SET client_min_messages = debug1;
COPY copy_many_mark (id, body) FROM PROGRAM :'many_rows';
RESET client_min_messages;
RESET simdup.copy_batch_memory;
RESET simdup.batch_threads;
SET simdup.bulk_check = off;
INSERT INTO copy_many_skip_off SELECT id, body FROM copy_src ORDER BY id;
INSERT INTO copy_many_mark_off SELECT id, body FROM copy_src ORDER BY id;
RESET simdup.bulk_check;
SELECT (SELECT count(*) FROM copy_many_skip) AS skip_rows, (SELECT count(dup_of) FROM copy_many_mark) AS marked,
       NOT EXISTS ((SELECT id, simhash FROM copy_many_skip EXCEPT SELECT id, simhash FROM copy_many_skip_off)
                   UNION ALL (SELECT id, simhash FROM copy_many_skip_off EXCEPT SELECT id, simhash FROM copy_many_skip)) AS skip_same,
       NOT EXISTS ((SELECT id, simhash, dup_of FROM copy_many_mark EXCEPT SELECT id, simhash, dup_of FROM copy_many_mark_off)
                   UNION ALL (SELECT id, simhash, dup_of FROM copy_many_mark_off EXCEPT SELECT id, simhash, dup_of FROM copy_many_mark)) AS mark_same,
       (SELECT count(*) FROM copy_many_mark WHERE simhash IS DISTINCT FROM simhash(body)) AS wrong_fingerprints;
-- A COPY that fails in a subtransaction leaves no work behind for the next one: the reject
-- COPY fails in its first batch (a near-duplicate's 23505) while its second batch's texts are
-- being fingerprinted; after ROLLBACK TO SAVEPOINT, a COPY of 160 other documents in one batch
-- into the same table takes every fingerprint from its own work (DEBUG: 160 of 160), not from
-- the failed COPY's, and stores them.
\set other_rows 'awk ''BEGIN { for (i = 1; i <= 160; i++) { s = ""; for (w = 1; w <= 30; w++) s = s " word" ((i * 7919 + w * 104729) % 99991); print i "\t" substr(s, 2) } }'''
CREATE TABLE copy_many_reject (id int PRIMARY KEY, body text);
SELECT simdup_enable('copy_many_reject', 'body', on_duplicate => 'reject');
SET simdup.copy_batch_memory = '16kB';
SET simdup.batch_threads = 2;
BEGIN;
SAVEPOINT before_copy;
COPY copy_many_reject (id, body) FROM PROGRAM :'many_rows';
ROLLBACK TO SAVEPOINT before_copy;
SET LOCAL simdup.copy_batch_memory = '1MB';
SET LOCAL client_min_messages = debug1;
COPY copy_many_reject (id, body) FROM PROGRAM :'other_rows';
COMMIT;
RESET simdup.copy_batch_memory;
RESET simdup.batch_threads;
SELECT count(*) AS stored FROM copy_many_reject;

DROP TABLE bulk_auto, bulk_conflict_on, bulk_conflict_off, bulk_merge_on, bulk_merge_off, bulk_hinted,
    bulk_text, bulk_changed_on, bulk_changed_off, bulk_big_on, bulk_big_off,
    text_skip_on, text_skip_off, text_mark_on, text_mark_off,
    copy_skip_on, copy_mark_on, copy_mark_off, copy_identity, copy_freeze, copy_text,
    copy_src, copy_many_skip, copy_many_skip_off, copy_many_mark, copy_many_mark_off, copy_many_reject;
DROP ROLE bulk_writer;
