-- Dedup across shards: simdup_insert / simdup_insert_select on a distributed table enabled with
-- on_duplicate give the answers the dedup trigger gives on a local table fed the same rows in
-- the same order, for skip, mark and reject, k = 3 and 10, near-duplicates on any shard.
-- check_that() is from checks.sql.
\set ON_ERROR_STOP 1
\set VERBOSITY terse
SET citus.shard_count = 4;
SET client_min_messages = warning;

-- name: distributed, enabled with on_duplicate (the trigger on every shard); name_local: a
-- plain table with the same trigger.
CREATE FUNCTION make_pair(name text, mode text, k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL)', name);
  PERFORM create_distributed_table(name, 'id');
  PERFORM simdup_enable(name::regclass, 'body', on_duplicate => mode, max_distance => k);
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL)', name || '_local');
  PERFORM simdup_enable((name || '_local')::regclass, 'body', on_duplicate => mode, max_distance => k);
END $$;

-- skip, k = 10: all pool rows in ONE call of simdup_insert_select (INSERT ... SELECT; later
-- rows must see the earlier ones, on every shard).
SELECT make_pair('cd_skip', 'skip', 10);
SELECT simdup_insert_select('cd_skip', 'SELECT id, body FROM pool ORDER BY id') AS skip_stored \gset
INSERT INTO cd_skip_local (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('skip, k = 10, simdup_insert_select of all rows in one call: the same rows stored as by the dedup trigger on a local table, and the count it returns',
  array(SELECT id FROM cd_skip ORDER BY id) = array(SELECT id FROM cd_skip_local ORDER BY id)
  AND (SELECT count(*) FROM cd_skip) < (SELECT count(*) FROM pool) AND (SELECT count(*) FROM cd_skip) = :skip_stored,
  format('%s vs %s rows, returned %s', (SELECT count(*) FROM cd_skip), (SELECT count(*) FROM cd_skip_local), :skip_stored));
SELECT check_that('skip, k = 10: no two stored rows within 10 bits, across shards',
  NOT EXISTS (SELECT 1 FROM cd_skip_local a JOIN cd_skip_local b ON a.id < b.id AND hamming(a.simhash, b.simhash) <= 10));

-- Verification across shards: at k = 64 every stored row is a candidate of every new one, so
-- what marks a row is the verification of the two texts alone (_simdup_verified, the local
-- trigger's rule), on the batch path (one simdup_insert_select) and on the one-row path (plain
-- INSERTs, one a statement).
SELECT make_pair('cd_verify', 'mark', 64);
SELECT simdup_insert_select('cd_verify', 'SELECT id, body FROM pool WHERE id % 2 = 0 ORDER BY id');
SELECT format('INSERT INTO cd_verify (id, body) VALUES (%s, %L)', id, body) FROM pool WHERE id % 2 = 1 ORDER BY id \gexec
INSERT INTO cd_verify_local (id, body) SELECT id, body FROM pool WHERE id % 2 = 0 ORDER BY id;
INSERT INTO cd_verify_local (id, body) SELECT id, body FROM pool WHERE id % 2 = 1 ORDER BY id;
SELECT array(SELECT id || ':' || coalesce(dup_of::text, '-') FROM cd_verify ORDER BY id) AS verify_dist \gset
SELECT check_that('mark, k = 64 (every row a candidate), verified: dup_of = the local trigger''s, on the batch and the one-row path',
  :'verify_dist' = array(SELECT id || ':' || coalesce(dup_of::text, '-') FROM cd_verify_local ORDER BY id)::text
  AND (SELECT count(dup_of) FROM cd_verify_local) > 0
  AND (SELECT count(*) FROM cd_verify_local) > (SELECT count(dup_of) FROM cd_verify_local),
  format('%s rows, %s marked', (SELECT count(*) FROM cd_verify_local), (SELECT count(dup_of) FROM cd_verify_local)));
SELECT check_that('mark, k = 64, verified: no row is marked against a text it does not verify with',
  NOT EXISTS (SELECT FROM cd_verify_local d JOIN cd_verify_local o ON o.id = d.dup_of WHERE NOT _simdup_verified(d.body, o.body, 0.5, 0.8)));

-- mark, k = 3: one autocommit simdup_insert (jsonb) per row.
SELECT make_pair('cd_mark', 'mark', 3);
SELECT format('SELECT simdup_insert(''cd_mark'', %L)', jsonb_build_object('id', id, 'body', body)) FROM pool ORDER BY id \gexec
INSERT INTO cd_mark_local (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('mark, k = 3, simdup_insert a transaction per row: dup_of = the dedup trigger''s on a local table, for every row',
  (SELECT count(*) FROM cd_mark d FULL JOIN cd_mark_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0
  AND (SELECT count(dup_of) FROM cd_mark) > 0);
SELECT check_that('mark: rows marked with a near-duplicate on ANOTHER shard (what a per-shard trigger misses)',
  (SELECT count(*) FROM (SELECT id, dup_of FROM cd_mark WHERE dup_of IS NOT NULL) d
   WHERE get_shard_id_for_distribution_column('cd_mark', d.id) <> get_shard_id_for_distribution_column('cd_mark', d.dup_of)) > 0);

-- mark, k = 10, one jsonb array of all rows (multi-row INSERT ... VALUES).
SELECT make_pair('cd_mark10', 'mark', 10);
SELECT simdup_insert('cd_mark10', (SELECT jsonb_agg(jsonb_build_object('id', id, 'body', body) ORDER BY id) FROM pool));
INSERT INTO cd_mark10_local (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('mark, k = 10, one simdup_insert of a JSON array of every row: dup_of = the local trigger''s',
  (SELECT count(*) FROM cd_mark10 d FULL JOIN cd_mark10_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0);

-- reject: a near-duplicate on another shard raises 23505 with the table's name and fields.
SELECT make_pair('cd_reject', 'reject', 3);
SELECT a.id AS x_a, b.id AS x_b FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) BETWEEN 1 AND 3
 AND get_shard_id_for_distribution_column('cd_reject', a.id) <> get_shard_id_for_distribution_column('cd_reject', b.id)
ORDER BY 1, 2 LIMIT 1 \gset
SELECT simdup_insert_select('cd_reject', format('SELECT id, body FROM pool WHERE id = %s', :x_a));
SET x.x_a = :x_a;
SET x.x_b = :x_b;
DO $$ DECLARE st text; msg text; det text; sch text; tab text; con text; BEGIN
  PERFORM simdup_insert_select('cd_reject', format('SELECT id, body FROM pool WHERE id IN (%s, 999999)', current_setting('x.x_b')));
  RAISE EXCEPTION 'accepted';
EXCEPTION WHEN unique_violation THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          sch = SCHEMA_NAME, tab = TABLE_NAME, con = CONSTRAINT_NAME;
  PERFORM check_that('reject: a near-duplicate on another shard raises 23505 naming the table, the key and distance, with schema, table and constraint fields',
    msg = 'near-duplicate row violates simdup_dedup on relation "cd_reject"'
    AND det LIKE format('Key (id)=(%s) is at Hamming distance _ (max_distance 3).', current_setting('x.x_a'))
    AND (sch, tab, con) = ('public', 'cd_reject', 'simdup_dedup'), concat_ws(' / ', st, msg, det, sch, tab, con));
END $$;
SELECT check_that('reject: nothing of the rejected call is stored', array(SELECT id FROM cd_reject) = ARRAY[:x_a]::bigint[]);
-- The error (SQLSTATE: message) a statement raises, NULL when it succeeds (its work is undone).
CREATE FUNCTION error_of(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE sql;
  RAISE EXCEPTION USING ERRCODE = 'P0004';  -- undo it: the statement should have failed
EXCEPTION
  WHEN assert_failure THEN RETURN NULL;
  WHEN others THEN RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT check_that('REPEATABLE READ is refused (0A000)', e = '0A000: a checked write into distributed table public.cd_reject needs READ COMMITTED', e)
FROM error_of($$SELECT simdup_insert('cd_reject', '{"id": 1, "body": "x"}')$$) e;
SELECT check_that('REPEATABLE READ: a plain INSERT is refused too (0A000)', e = '0A000: a checked write into distributed table public.cd_reject needs READ COMMITTED', e)
FROM error_of($$INSERT INTO cd_reject (id, body) VALUES (1, 'x')$$) e;
ROLLBACK;
SELECT check_that('a table without on_duplicate: 55000', e = '55000: table public.pool is not enabled for dedup', e)
FROM error_of($$SELECT simdup_insert('pool', '{"id": 1, "body": "x"}')$$) e;
SELECT check_that('an unknown column: 42703, nothing stored', e = '42703: relation public.cd_reject has no column(s) bdy'
                  AND array(SELECT id FROM cd_reject) = ARRAY[:x_a]::bigint[], e)
FROM error_of($$SELECT simdup_insert('cd_reject', '{"id": 5, "bdy": "x"}')$$) e;

-- Hostile names on every write path: a schema and a 63-byte table name with quotes, $, the
-- string $simdup$, spaces and upper case, columns likewise. Mark, k = 10: simdup_insert_select
-- of every row in one call, then plain writes refused, then simdup_disable and a plain INSERT.
CREATE SCHEMA "Sch""ema $simdup$ x";
CREATE TABLE "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" ("I d" bigint PRIMARY KEY, "Bo""dy $simdup$" text NOT NULL);
SELECT create_distributed_table('"Sch""ema $simdup$ x"."Ta''ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"', 'I d');
SELECT simdup_enable('"Sch""ema $simdup$ x"."Ta''ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"', 'Bo"dy $simdup$', on_duplicate => 'mark', max_distance => 10);
SELECT simdup_insert_select('"Sch""ema $simdup$ x"."Ta''ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"', 'SELECT id AS "I d", body AS "Bo""dy $simdup$" FROM pool ORDER BY id') AS hostile_stored \gset
SELECT check_that('hostile names (schema, 63-byte table and columns with quotes, $, $simdup$, spaces, upper case): simdup_insert_select of every row, dup_of = the local trigger''s',
  (SELECT count(*) FROM "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" d FULL JOIN cd_mark10_local l ON l.id = d."I d"
   WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d."I d" IS NULL OR l.id IS NULL) = 0
  AND :hostile_stored = (SELECT count(*) FROM pool),
  format('%s rows stored', :hostile_stored));
-- Plain writes into the hostile table, checked on the coordinator: an INSERT of row 1's text
-- under a new key is marked with the smallest stored key within 10 bits; a COPY likewise.
INSERT INTO "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" ("I d", "Bo""dy $simdup$") SELECT 999999, body FROM pool WHERE id = 1;
COPY "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" ("I d", "Bo""dy $simdup$") FROM STDIN (FORMAT csv);
999998,"A text that no pool row has, copied into the hostile table: the weather in the valley, the price of bread, and a long walk home."
\.
SELECT check_that('hostile names: a plain INSERT and a COPY on the coordinator are checked writes (dup_of = the smallest stored key within 10 bits; a new text unmarked)',
  (SELECT dup_of FROM "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" WHERE "I d" = 999999)
    = (SELECT min(q.id) FROM pool p JOIN pool q ON hamming(p.fp, q.fp) <= 10 WHERE p.id = 1)
  AND (SELECT dup_of IS NULL FROM "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" WHERE "I d" = 999998));
-- INSERT ... RETURNING into the hostile table: the row as stored, dup_of included.
INSERT INTO "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" ("I d", "Bo""dy $simdup$") SELECT 999997, body FROM pool WHERE id = 2
  RETURNING "I d" AS hostile_id, dup_of AS hostile_dup_of, length("Bo""dy $simdup$") AS hostile_len \gset
SELECT check_that('hostile names: INSERT ... RETURNING returns the row stored, marked',
  :hostile_id = 999997 AND :hostile_dup_of = (SELECT min(q.id) FROM pool p JOIN pool q ON hamming(p.fp, q.fp) <= 10 WHERE p.id = 2)
  AND :hostile_len = (SELECT length(body) FROM pool WHERE id = 2));
-- An UPDATE of the new row's text to row 1's: checked (marked like the INSERT above); back to a
-- text of its own: unmarked again.
UPDATE "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" SET "Bo""dy $simdup$" = (SELECT body FROM pool WHERE id = 1) WHERE "I d" = 999998;
SELECT dup_of AS hostile_marked FROM "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" WHERE "I d" = 999998 \gset
UPDATE "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" SET "Bo""dy $simdup$" = 'Back to a text of its own: the harbour, the gulls, the fish market at dawn and the long quay.' WHERE "I d" = 999998;
SELECT check_that('hostile names: an UPDATE of the text on the coordinator is a checked write (marked with the smallest stored key within 10 bits, unmarked again for a new text)',
  :'hostile_marked'::bigint = (SELECT min(q.id) FROM pool p JOIN pool q ON hamming(p.fp, q.fp) <= 10 WHERE p.id = 1)
  AND (SELECT dup_of IS NULL FROM "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" WHERE "I d" = 999998),
  :'hostile_marked');
DELETE FROM "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" WHERE "I d" >= 999997;
SELECT simdup_disable('"Sch""ema $simdup$ x"."Ta''ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"');
INSERT INTO "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" ("I d", "Bo""dy $simdup$") SELECT id + 1000000, body FROM pool WHERE id <= 3;
SELECT check_that('hostile names: after simdup_disable plain INSERTs are stored',
  (SELECT count(*) FROM "Sch""ema $simdup$ x"."Ta'ble $1 ""q"" $simdup$ Upxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" WHERE "I d" > 1000000) = 3);

-- Dedup by verified similarity (simdup_enable_similar, on_duplicate) on a distributed table:
-- simdup_insert checks every shard through its similarity index and the exact jaccard, with the
-- answers of the similarity trigger on a local table fed the same rows in the same order.
CREATE FUNCTION make_similar_pair(name text, mode text, t float8, c float8 DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL)', name);
  PERFORM create_distributed_table(name, 'id');
  PERFORM simdup_enable_similar(name::regclass, 'body', t, on_duplicate => mode, containment => c);
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL)', name || '_local');
  PERFORM simdup_enable_similar((name || '_local')::regclass, 'body', t, on_duplicate => mode, containment => c);
END $$;
SELECT make_similar_pair('cs_skip', 'skip', 0.5);
SELECT simdup_insert_select('cs_skip', 'SELECT id, body FROM pool ORDER BY id') AS sim_skip_stored \gset
INSERT INTO cs_skip_local (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('similar skip, t = 0.5, simdup_insert_select of all rows: the rows the local similarity trigger stores, and the count returned',
  array(SELECT id FROM cs_skip ORDER BY id) = array(SELECT id FROM cs_skip_local ORDER BY id)
  AND (SELECT count(*) FROM cs_skip) < (SELECT count(*) FROM pool) AND (SELECT count(*) FROM cs_skip) = :sim_skip_stored,
  format('%s vs %s rows, returned %s', (SELECT count(*) FROM cs_skip), (SELECT count(*) FROM cs_skip_local), :sim_skip_stored));
SELECT make_similar_pair('cs_mark', 'mark', 0.7);
SELECT format('SELECT simdup_insert(''cs_mark'', %L)', jsonb_build_object('id', id, 'body', body)) FROM pool ORDER BY id \gexec
INSERT INTO cs_mark_local (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('similar mark, t = 0.7, simdup_insert a transaction per row: dup_of = the local similarity trigger''s, some across shards',
  (SELECT count(*) FROM cs_mark d FULL JOIN cs_mark_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0
  AND (SELECT count(*) FROM cs_mark WHERE dup_of IS NOT NULL
       AND get_shard_id_for_distribution_column('cs_mark', id) <> get_shard_id_for_distribution_column('cs_mark', dup_of)) > 0,
  format('%s marked', (SELECT count(dup_of) FROM cs_mark)));
SELECT make_similar_pair('cs_reject', 'reject', 0.6);
SELECT a.id AS s_a, b.id AS s_b FROM pool a JOIN pool b ON a.id < b.id AND jaccard(a.body, b.body) BETWEEN 0.7 AND 0.95
 AND get_shard_id_for_distribution_column('cs_reject', a.id) <> get_shard_id_for_distribution_column('cs_reject', b.id)
ORDER BY 1, 2 LIMIT 1 \gset
SELECT simdup_insert('cs_reject', jsonb_build_object('id', id, 'body', body)) FROM pool WHERE id = :s_a;
SELECT check_that('similar reject: a near-duplicate on another shard raises 23505 naming the key and the similarity',
  e = format('23505: near-duplicate row violates simdup_dedup_similar on relation "cs_reject"'), e)
FROM error_of(format('SELECT simdup_insert(''cs_reject'', %L)', (SELECT jsonb_build_object('id', id, 'body', body) FROM pool WHERE id = :s_b))) e;
SELECT check_that('similar: a plain INSERT of a near-duplicate on another shard: 23505 from the coordinator',
  e = '23505: near-duplicate row violates simdup_dedup_similar on relation "cs_reject"', e)
FROM error_of(format('INSERT INTO cs_reject (id, body) SELECT id, body FROM pool WHERE id = %s', :s_b)) e;
-- Plain INSERT ... SELECT into a similarity-dedup table: the local similarity trigger's answers.
CREATE TABLE cs_plain (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('cs_plain', 'id');
SELECT simdup_enable_similar('cs_plain', 'body', 0.5, on_duplicate => 'skip');
INSERT INTO cs_plain (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('similar skip, t = 0.5, one plain INSERT ... SELECT of all rows: the rows the local similarity trigger stores',
  array(SELECT id FROM cs_plain ORDER BY id) = array(SELECT id FROM cs_skip_local ORDER BY id));
-- With containment => 0.7 (the trigger's second rule, _simdup_similar_match on every shard).
SELECT make_similar_pair('cs_contain', 'skip', 0.5, 0.7);
INSERT INTO cs_contain (id, body) SELECT id, body FROM pool ORDER BY id;
INSERT INTO cs_contain_local (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('similar skip with containment 0.7, one plain INSERT ... SELECT of all rows: the rows the local similarity trigger stores',
  array(SELECT id FROM cs_contain ORDER BY id) = array(SELECT id FROM cs_contain_local ORDER BY id)
  AND (SELECT count(*) FROM cs_contain) <= (SELECT count(*) FROM cs_skip_local),
  format('%s vs %s rows (Jaccard alone: %s)', (SELECT count(*) FROM cs_contain), (SELECT count(*) FROM cs_contain_local),
         (SELECT count(*) FROM cs_skip_local)));
-- Mark mode, one plain INSERT ... SELECT: the pool's rows are one batch (src/citus/checked/batch.rs,
-- write_batch), so every dup_of comes from the batch's own earlier rows (a shared band, then the
-- trigger's decision in Rust); then the same texts under new keys, marked with the stored rows'
-- keys (the query over every shard). dup_of = the local similarity trigger's for the same rows.
SELECT make_similar_pair('cs_mark_plain', 'mark', 0.7, 0.8);
INSERT INTO cs_mark_plain (id, body) SELECT id, body FROM pool ORDER BY id;
INSERT INTO cs_mark_plain (id, body) SELECT id + 100000, body FROM pool WHERE id % 7 = 0 ORDER BY id DESC;
INSERT INTO cs_mark_plain_local (id, body) SELECT id, body FROM pool ORDER BY id;
INSERT INTO cs_mark_plain_local (id, body) SELECT id + 100000, body FROM pool WHERE id % 7 = 0 ORDER BY id DESC;
SELECT check_that('similar mark (t = 0.7, containment 0.8), plain INSERT ... SELECT in batches: dup_of = the local similarity trigger''s, within the batch and from stored rows',
  (SELECT count(*) FROM cs_mark_plain d FULL JOIN cs_mark_plain_local l USING (id)
    WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0
  AND (SELECT count(*) FROM cs_mark_plain WHERE id < 100000 AND dup_of IS NOT NULL) > 0
  AND (SELECT count(*) FROM cs_mark_plain WHERE id > 100000 AND dup_of < 100000) = (SELECT count(*) FROM pool WHERE id % 7 = 0),
  format('%s marked in the first statement, %s in the second', (SELECT count(dup_of) FROM cs_mark_plain WHERE id < 100000),
         (SELECT count(dup_of) FROM cs_mark_plain WHERE id > 100000)));
-- Short texts (the short-text rule: _simdup_similar_match on every shard, the short-text index
-- read there, the short bands within a batch): the first 20 to 45 characters of the pool's
-- texts and a copy of each with one typo, in one plain INSERT ... SELECT (dup_of from the
-- batch's own earlier rows), then every fifth again under new keys with another typo (from the
-- stored rows on every shard). dup_of = the local similarity trigger's, some by the short-text
-- rule alone (5-shingle similarity below the threshold; counted on the local table, whose dup_of
-- are the same: a join on dup_of would need repartitioning).
CREATE TABLE short_pool AS
SELECT (row_number() OVER (ORDER BY id, v))::bigint AS id, body FROM (
  SELECT id, 0 AS v, left(body, 20 + id::int % 26) AS body FROM pool
  UNION ALL
  SELECT id, 1, overlay(left(body, 20 + id::int % 26) PLACING CASE WHEN body ~ '[一-龥]' THEN '的' ELSE 'x' END FROM 10 FOR 1)
  FROM pool) s;
SELECT make_similar_pair('cs_short', 'mark', 0.5);
INSERT INTO cs_short (id, body) SELECT id, body FROM short_pool ORDER BY id;
INSERT INTO cs_short (id, body) SELECT id + 100000, overlay(body PLACING 'q' FROM 5 FOR 1) FROM short_pool WHERE id % 5 = 0 ORDER BY id;
INSERT INTO cs_short_local (id, body) SELECT id, body FROM short_pool ORDER BY id;
INSERT INTO cs_short_local (id, body) SELECT id + 100000, overlay(body PLACING 'q' FROM 5 FOR 1) FROM short_pool WHERE id % 5 = 0 ORDER BY id;
SELECT check_that('similar mark on short texts (the short-text rule), plain INSERT ... SELECT in batches: dup_of = the local similarity trigger''s, some by the short-text rule alone',
  (SELECT count(*) FROM cs_short d FULL JOIN cs_short_local l USING (id)
    WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0
  AND (SELECT count(*) FROM cs_short_local d JOIN cs_short_local o ON o.id = d.dup_of WHERE jaccard(d.body, o.body) < 0.5) > 0
  AND (SELECT count(*) FROM cs_short WHERE id > 100000 AND dup_of < 100000) > 0,
  format('%s marked, %s of them below 0.5 by 5-shingles, %s of the second statement by stored rows',
         (SELECT count(dup_of) FROM cs_short),
         (SELECT count(*) FROM cs_short_local d JOIN cs_short_local o ON o.id = d.dup_of WHERE jaccard(d.body, o.body) < 0.5),
         (SELECT count(*) FROM cs_short WHERE id > 100000 AND dup_of < 100000)));
-- Reject: two near-duplicates in one multi-row statement, neither stored: 23505 (the second row
-- against the first, in the batch), nothing stored.
CREATE TABLE cs_reject_batch (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('cs_reject_batch', 'id');
SELECT simdup_enable_similar('cs_reject_batch', 'body', 0.6, on_duplicate => 'reject');
SELECT check_that('similar reject, one INSERT ... SELECT of two near-duplicates: 23505, nothing stored',
  e = '23505: near-duplicate row violates simdup_dedup_similar on relation "cs_reject_batch"'
  AND (SELECT count(*) FROM cs_reject_batch) = 0, e)
FROM error_of(format('INSERT INTO cs_reject_batch (id, body) SELECT id, body FROM pool WHERE id IN (%s, %s) ORDER BY id', :s_a, :s_b)) e;

-- ---------------------------------------------------------------------------------------------
-- Plain writes on the coordinator (src/citus/): INSERT ... SELECT, one INSERT a
-- row, a multi-row VALUES, prepared statements (custom and generic plans), each with the
-- answers of the local trigger fed the same rows in the same order.
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION make_dist(name text, mode text, k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL)', name);
  PERFORM create_distributed_table(name, 'id');
  PERFORM simdup_enable(name::regclass, 'body', on_duplicate => mode, max_distance => k);
END $$;
SELECT make_dist('pw_skip', 'skip', 10);
INSERT INTO pw_skip (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('plain INSERT ... SELECT of all rows, skip, k = 10: the rows the local trigger stores',
  array(SELECT id FROM pw_skip ORDER BY id) = array(SELECT id FROM cd_skip_local ORDER BY id));
SELECT make_dist('pw_mark', 'mark', 3);
SELECT format('INSERT INTO pw_mark (id, body) VALUES (%s, %L)', id, body) FROM pool ORDER BY id \gexec
SELECT check_that('one plain INSERT a row, mark, k = 3: dup_of = the local trigger''s, for every row',
  (SELECT count(*) FROM pw_mark d FULL JOIN cd_mark_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0);
SELECT make_dist('pw_mark10', 'mark', 10);
SELECT 'INSERT INTO pw_mark10 (id, body) VALUES ' || string_agg(format('(%s, %L)', id, body), ', ' ORDER BY id) FROM pool \gexec
SELECT check_that('one multi-row INSERT ... VALUES of every row, mark, k = 10: dup_of = the local trigger''s',
  (SELECT count(*) FROM pw_mark10 d FULL JOIN cd_mark10_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0);
SELECT make_dist('pw_prep', 'mark', 3);
PREPARE pw_ins(bigint, text) AS INSERT INTO pw_prep (id, body) VALUES ($1, $2);
SET plan_cache_mode = force_generic_plan;
SELECT format('EXECUTE pw_ins(%s, %L)', id, body) FROM pool WHERE id <= 300 ORDER BY id \gexec
SET plan_cache_mode = force_custom_plan;
SELECT format('EXECUTE pw_ins(%s, %L)', id, body) FROM pool WHERE id > 300 ORDER BY id \gexec
RESET plan_cache_mode;
SELECT check_that('a prepared INSERT (generic, then custom plans), mark, k = 3: dup_of = the local trigger''s',
  (SELECT count(*) FROM pw_prep d FULL JOIN cd_mark_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0);
SELECT make_dist('pw_reject', 'reject', 3);
INSERT INTO pw_reject (id, body) SELECT id, body FROM pool WHERE id = :x_a;
DO $$ DECLARE st text; msg text; det text; sch text; tab text; con text; BEGIN
  EXECUTE format('INSERT INTO pw_reject (id, body) VALUES (999999, %L), (%s, (SELECT body FROM pool WHERE id = %s))',
                 'a new text, stored only if the statement is', current_setting('x.x_b'), current_setting('x.x_b'));
  RAISE EXCEPTION 'accepted';
EXCEPTION WHEN unique_violation THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL,
                          sch = SCHEMA_NAME, tab = TABLE_NAME, con = CONSTRAINT_NAME;
  PERFORM check_that('reject, a plain multi-row INSERT whose second row is near a row on another shard: 23505 with the key, distance and constraint fields',
    msg = 'near-duplicate row violates simdup_dedup on relation "pw_reject"'
    AND det LIKE format('Key (id)=(%s) is at Hamming distance _ (max_distance 3).', current_setting('x.x_a'))
    AND (sch, tab, con) = ('public', 'pw_reject', 'simdup_dedup'), concat_ws(' / ', st, msg, det, sch, tab, con));
END $$;
SELECT check_that('reject: nothing of the rejected statement is stored', array(SELECT id FROM pw_reject) = ARRAY[:x_a]::bigint[]);
INSERT INTO pw_reject (id, body) VALUES (700001, 'A text written twice in one statement, about lighthouses on the northern coast and their keepers.');
SELECT check_that('reject, a plain multi-row INSERT whose second row repeats its first (new) row: 23505 naming the first row (the batch checked within itself)',
  e = '23505: near-duplicate row violates simdup_dedup on relation "pw_reject"', e)
FROM error_of($$INSERT INTO pw_reject (id, body) VALUES (700002, 'Another new text, this one about rivers and bridges in the old town, long enough.'), (700003, 'Another new text, this one about rivers and bridges in the old town, long enough.')$$) e;
DELETE FROM pw_reject WHERE id = 700001;
-- More rows than one batch (1,000): the pool twice under new keys in one statement, skip; and
-- a table whose key is text (checked a row at a time), mark.
CREATE TABLE pw_two (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('pw_two', 'id');
SELECT simdup_enable('pw_two', 'body', on_duplicate => 'skip', max_distance => 3);
CREATE TABLE pw_two_local (id bigint PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('pw_two_local', 'body', on_duplicate => 'skip', max_distance => 3);
INSERT INTO pw_two (id, body) SELECT id + g * 1000, CASE WHEN g = 1 THEN body || ' (again)' ELSE body END FROM pool, generate_series(0, 1) g ORDER BY g, id;
INSERT INTO pw_two_local (id, body) SELECT id + g * 1000, CASE WHEN g = 1 THEN body || ' (again)' ELSE body END FROM pool, generate_series(0, 1) g ORDER BY g, id;
SELECT check_that('skip, k = 3, one INSERT ... SELECT of 1,168 rows (two batches): the rows the local trigger stores',
  array(SELECT id FROM pw_two ORDER BY id) = array(SELECT id FROM pw_two_local ORDER BY id),
  format('%s vs %s rows', (SELECT count(*) FROM pw_two), (SELECT count(*) FROM pw_two_local)));
CREATE TABLE pw_text (id text PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('pw_text', 'id');
SELECT simdup_enable('pw_text', 'body', on_duplicate => 'mark', max_distance => 3);
CREATE TABLE pw_text_local (id text PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('pw_text_local', 'body', on_duplicate => 'mark', max_distance => 3);
INSERT INTO pw_text (id, body) SELECT 'k' || id, body FROM pool ORDER BY id;
INSERT INTO pw_text_local (id, body) SELECT 'k' || id, body FROM pool ORDER BY id;
SELECT check_that('mark, k = 3, text keys (a row at a time), one INSERT ... SELECT: dup_of = the local trigger''s (the smallest key as text orders)',
  (SELECT count(*) FROM pw_text d FULL JOIN pw_text_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0
  AND (SELECT count(dup_of) FROM pw_text) > 0);
-- INSERT ... RETURNING: the rows stored, as the shards stored them, in the statement's order:
-- what the local trigger's table returns for the same statements. returned(sql): the rows a
-- statement returns, in their order, as text.
-- same_rows(name): rows of name and name_local that differ (body, dup_of), or are in one only.
CREATE FUNCTION same_rows(name text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  -- (The distributed table's rows read first, on their own: joined to a local table, a
  -- one-shard table's query would be sent to its worker whole.)
  EXECUTE format('WITH d AS MATERIALIZED (SELECT id, body, to_jsonb(x) -> ''dup_of'' AS dup_of FROM %1$I x)
                  SELECT count(*) FROM d FULL JOIN %1$I_local l USING (id)
                  WHERE d.body IS DISTINCT FROM l.body OR d.dup_of IS DISTINCT FROM to_jsonb(l) -> ''dup_of''
                     OR d.id IS NULL OR l.id IS NULL', name) INTO n;
  RETURN n;
END $$;
CREATE FUNCTION returned(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; out text[] := '{}';
BEGIN
  FOR r IN EXECUTE sql LOOP out := out || r::text; END LOOP;
  RETURN array_to_string(out, ' ');
END $$;
CREATE FUNCTION make_returning_pair(name text, mode text, k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM make_dist(name, mode, k);
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL)', name || '_local');
  PERFORM simdup_enable((name || '_local')::regclass, 'body', on_duplicate => mode, max_distance => k);
END $$;
SELECT make_returning_pair('ret_mark', 'mark', 3);
SELECT returned('INSERT INTO ret_mark (id, body) SELECT id, body FROM pool ORDER BY id RETURNING id, dup_of') AS ret_d,
       returned('INSERT INTO ret_mark_local (id, body) SELECT id, body FROM pool ORDER BY id RETURNING id, dup_of') AS ret_l \gset
SELECT check_that('INSERT ... SELECT ... RETURNING id, dup_of, mark, k = 3 (a batch): every row with the local trigger''s dup_of, in the statement''s order',
  :'ret_d' = :'ret_l' AND :'ret_d' LIKE '(1,) (2,%' AND (SELECT count(dup_of) FROM ret_mark) > 0, left(:'ret_d', 60));
SELECT make_returning_pair('ret_skip', 'skip', 3);
SELECT returned('INSERT INTO ret_skip (id, body) SELECT id, body FROM pool ORDER BY id DESC RETURNING id') AS ret_d,
       returned('INSERT INTO ret_skip_local (id, body) SELECT id, body FROM pool ORDER BY id DESC RETURNING id') AS ret_l \gset
SELECT check_that('INSERT ... SELECT ... ORDER BY id DESC RETURNING id, skip, k = 3: the rows the local trigger keeps, in the statement''s order',
  :'ret_d' = :'ret_l' AND (SELECT count(*) FROM ret_skip) < (SELECT count(*) FROM pool)
  AND :'ret_d' = (SELECT string_agg(format('(%s)', id), ' ' ORDER BY id DESC) FROM ret_skip), left(:'ret_d', 60));
SELECT make_returning_pair('ret_one', 'mark', 10);
SELECT string_agg(returned(format('INSERT INTO ret_one (id, body) VALUES (%s, %L) RETURNING *', id, body)), ' ' ORDER BY id) AS ret_d,
       string_agg(returned(format('INSERT INTO ret_one_local (id, body) VALUES (%s, %L) RETURNING *', id, body)), ' ' ORDER BY id) AS ret_l
FROM (SELECT id, body FROM pool WHERE id % 7 = 0 ORDER BY id) p \gset
SELECT check_that('INSERT ... VALUES ... RETURNING *, a statement a row, mark, k = 10: every column as the local trigger''s table stores it',
  :'ret_d' = :'ret_l' AND (SELECT count(dup_of) FROM ret_one) > 0);
-- A dropped, a generated and a defaulted column; the whole row, and expressions over it.
CREATE TABLE ret_cols (id bigint PRIMARY KEY, gone int, body text NOT NULL, note text DEFAULT 'default note',
                       len int GENERATED ALWAYS AS (length(body)) STORED);
ALTER TABLE ret_cols DROP COLUMN gone;
SELECT create_distributed_table('ret_cols', 'id');
SELECT simdup_enable('ret_cols', 'body', on_duplicate => 'mark', max_distance => 3);
SELECT returned('INSERT INTO ret_cols (id, body) SELECT id, body FROM pool WHERE id <= 40 ORDER BY id RETURNING ret_cols, upper(note), len + 1, dup_of') AS ret_d \gset
SELECT check_that('INSERT ... RETURNING the whole row and expressions, with dropped, generated and defaulted columns: the rows as stored',
  :'ret_d' = returned('SELECT ret_cols, upper(note), len + 1, dup_of FROM ret_cols ORDER BY id'), left(:'ret_d', 80));
-- Prepared, a generic plan: row 1's text under a new key is marked with key 1.
SELECT body AS ret_body FROM pool WHERE id = 1 \gset
PREPARE ret_ins(bigint, text) AS INSERT INTO ret_mark (id, body) VALUES ($1, $2) RETURNING id, dup_of;
SET plan_cache_mode = force_generic_plan;
EXECUTE ret_ins(900001, :'ret_body') \gset ret_
RESET plan_cache_mode;
SELECT check_that('a prepared INSERT ... RETURNING, generic plan: the row stored, marked', :ret_id = 900001 AND :ret_dup_of = 1);
-- Inside a data-modifying WITH (Citus plans it as a subplan, through the same hook).
WITH w AS (INSERT INTO ret_mark (id, body) SELECT 900002, body FROM pool WHERE id = 1 RETURNING id, dup_of) SELECT dup_of AS ret_cte FROM w \gset
SELECT check_that('WITH w AS (INSERT ... RETURNING ...) SELECT ... FROM w: checked, the row returned', :ret_cte = 1);
-- RETURNING needs SELECT on the columns it returns; what the rows stored do not hold is refused.
CREATE ROLE ret_writer;
GRANT INSERT, UPDATE ON ret_mark TO ret_writer;
GRANT SELECT (id) ON ret_mark TO ret_writer;
SET ROLE ret_writer;
SELECT returned('INSERT INTO ret_mark (id, body) VALUES (900003, ''A writer who may read the key only, about kites over the dunes.'') RETURNING id') AS ret_granted \gset
SELECT error_of('INSERT INTO ret_mark (id, body) VALUES (900004, ''x'') RETURNING id, body') AS ret_column,
       error_of('INSERT INTO ret_mark (id, body) VALUES (900004, ''x'') RETURNING ret_mark') AS ret_whole \gset
RESET ROLE;
SELECT check_that('RETURNING as a role with INSERT and SELECT on the key only: the key returned; another column or the whole row 42501, nothing stored',
  :'ret_granted' = '(900003)'
  AND :'ret_column' = '42501: permission denied for table public.ret_mark' AND :'ret_whole' = :'ret_column'
  AND NOT EXISTS (SELECT FROM ret_mark WHERE id = 900004), :'ret_column');
SELECT check_that('INSERT ... RETURNING a sub-SELECT, or a system column: 0A000 with a hint',
  e1 = '0A000: INSERT … RETURNING a sub-SELECT is not supported on distributed dedup table public.ret_mark'
  AND e2 = '0A000: INSERT … RETURNING a system column is not supported on distributed dedup table public.ret_mark', e1 || ' / ' || e2)
FROM error_of('INSERT INTO ret_mark (id, body) VALUES (900005, ''x'') RETURNING (SELECT 1)') e1,
     error_of('INSERT INTO ret_mark (id, body) VALUES (900005, ''x'') RETURNING ctid') e2;
SELECT check_that('EXPLAIN (VERBOSE) of an INSERT ... RETURNING: the custom scan on the table, its output the RETURNING list',
  returned('EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO ret_mark (id, body) VALUES (1, ''x'') RETURNING id, dup_of')
    ~ 'Custom Scan \(SimdupCheckedInsert\) on public\.ret_mark"\) \("\s+Output: ret_mark\.id, ret_mark\.dup_of"');
-- INSERT ... ON CONFLICT DO NOTHING: each row checked (as a BEFORE trigger runs before the
-- conflict check), then left out if it conflicts — the local trigger's table's answers for the
-- same statements. Half the pool stored first, then all of it again with the clause (its
-- arbiter left out, named by column, by constraint), a row at a time.
SELECT make_returning_pair('oc_mark', 'mark', 3);
SELECT make_returning_pair('oc_skip', 'skip', 3);
SELECT make_returning_pair('oc_reject', 'reject', 3);
INSERT INTO oc_mark (id, body) SELECT id, body FROM pool WHERE id % 2 = 0 ORDER BY id;
INSERT INTO oc_mark_local (id, body) SELECT id, body FROM pool WHERE id % 2 = 0 ORDER BY id;
INSERT INTO oc_skip (id, body) SELECT id, body FROM pool WHERE id % 2 = 0 ORDER BY id;
INSERT INTO oc_skip_local (id, body) SELECT id, body FROM pool WHERE id % 2 = 0 ORDER BY id;
SELECT returned('INSERT INTO oc_mark (id, body) SELECT id, body FROM pool ORDER BY id ON CONFLICT (id) DO NOTHING RETURNING id, dup_of') AS oc_d,
       returned('INSERT INTO oc_mark_local (id, body) SELECT id, body FROM pool ORDER BY id ON CONFLICT (id) DO NOTHING RETURNING id, dup_of') AS oc_l \gset
SELECT check_that('INSERT ... SELECT ... ON CONFLICT (id) DO NOTHING RETURNING, mark, k = 3, half the rows stored: the rows, dup_of and order the local table returns, and the same table',
  :'oc_d' = :'oc_l' AND :'oc_d' NOT LIKE '%(2,%' AND same_rows('oc_mark') = 0 AND (SELECT count(*) FROM oc_mark) = (SELECT count(*) FROM pool),
  left(:'oc_d', 60));
SELECT returned('INSERT INTO oc_skip (id, body) SELECT id, body || '' (again)'' FROM pool ORDER BY id ON CONFLICT ON CONSTRAINT oc_skip_pkey DO NOTHING RETURNING id') AS oc_d,
       returned('INSERT INTO oc_skip_local (id, body) SELECT id, body || '' (again)'' FROM pool ORDER BY id ON CONFLICT ON CONSTRAINT oc_skip_local_pkey DO NOTHING RETURNING id') AS oc_l \gset
INSERT INTO oc_skip (id, body) SELECT id + 1000, body || ' (and again)' FROM pool ORDER BY id ON CONFLICT DO NOTHING;
INSERT INTO oc_skip_local (id, body) SELECT id + 1000, body || ' (and again)' FROM pool ORDER BY id ON CONFLICT DO NOTHING;
SELECT check_that('INSERT ... ON CONFLICT ON CONSTRAINT ... DO NOTHING, then ON CONFLICT DO NOTHING, skip, k = 3: the rows the local table returns and keeps',
  :'oc_d' = :'oc_l' AND same_rows('oc_skip') = 0, left(:'oc_d', 60));
-- One row of each family (no two near each other: no row decided by an earlier one, so each
-- batch goes in one statement), half of them stored first.
SELECT make_returning_pair('oc_fam', 'mark', 3);
CREATE TABLE oc_families AS SELECT DISTINCT ON (family) id, body FROM pool ORDER BY family, id;
INSERT INTO oc_fam (id, body) SELECT id, body FROM oc_families WHERE id % 2 = 0 ORDER BY id;
INSERT INTO oc_fam_local (id, body) SELECT id, body FROM oc_families WHERE id % 2 = 0 ORDER BY id;
SELECT returned('INSERT INTO oc_fam (id, body) SELECT id, body FROM oc_families ORDER BY id ON CONFLICT (id) DO NOTHING RETURNING id, dup_of') AS oc_d,
       returned('INSERT INTO oc_fam_local (id, body) SELECT id, body FROM oc_families ORDER BY id ON CONFLICT (id) DO NOTHING RETURNING id, dup_of') AS oc_l \gset
SELECT check_that('INSERT ... SELECT ... ON CONFLICT (id) DO NOTHING RETURNING of one row a family, half of them stored: the rows the local table returns (the unstored half) and the same table',
  :'oc_d' = :'oc_l' AND same_rows('oc_fam') = 0
  AND cardinality(string_to_array(:'oc_d', ' ')) = (SELECT count(*) FROM oc_families WHERE id % 2 = 1), left(:'oc_d', 60));
INSERT INTO oc_reject (id, body) SELECT id, body FROM pool WHERE id = 1;
INSERT INTO oc_reject_local (id, body) SELECT id, body FROM pool WHERE id = 1;
SELECT check_that('INSERT ... ON CONFLICT DO NOTHING of a stored row, reject: 23505 as on the local table (the check runs before the conflict''s)',
  d = '23505: near-duplicate row violates simdup_dedup on relation "oc_reject"'
  AND l = '23505: near-duplicate row violates simdup_dedup on relation "oc_reject_local"', d || ' / ' || l)
FROM error_of($$INSERT INTO oc_reject (id, body) SELECT id, body FROM pool WHERE id = 1 ON CONFLICT DO NOTHING$$) d,
     error_of($$INSERT INTO oc_reject_local (id, body) SELECT id, body FROM pool WHERE id = 1 ON CONFLICT DO NOTHING$$) l;
SELECT check_that('INSERT ... ON CONFLICT DO UPDATE: 0A000 with a hint',
  e = '0A000: INSERT … ON CONFLICT DO UPDATE is not supported on distributed dedup table public.pw_reject', e)
FROM error_of($$INSERT INTO pw_reject (id, body) VALUES (5, 'x') ON CONFLICT (id) DO UPDATE SET body = excluded.body$$) e;
SELECT check_that('EXPLAIN of a plain INSERT: the custom scan SimdupCheckedInsert over the rows'' plan',
  (SELECT string_agg(p, E'\n') FROM explain_all('INSERT INTO pw_reject (id, body) SELECT id, body FROM pool') x(p))
    ~ 'Custom Scan \(SimdupCheckedInsert\)\s+Dedup Check: each row against every shard of public\.pw_reject');
CREATE TABLE pw_plain (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('pw_plain', 'id');
SELECT check_that('a plain INSERT into a distributed table without dedup is Citus''s plan, unchanged',
  (SELECT string_agg(p, E'\n') FROM explain_all('INSERT INTO pw_plain (id, body) VALUES (1, ''x'')') x(p)) !~ 'SimdupCheckedInsert');

-- ---------------------------------------------------------------------------------------------
-- UPDATEs that change the text, on the coordinator (SimdupCheckedUpdate: each changed row
-- checked against every shard but its own row, then written by key and ctid), against the
-- local trigger fed the same statements: one UPDATE a row, for 97 rows, each given the text of
-- another pool row (many of them near-duplicates of stored rows) or a new text.
-- ---------------------------------------------------------------------------------------------
CREATE FUNCTION make_update_pair(name text, mode text, k int, by_similarity boolean DEFAULT false) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY[name, name || '_local'] LOOP
    EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL, note text)', t);
    IF t = name THEN PERFORM create_distributed_table(t, 'id'); END IF;
    IF by_similarity THEN
      -- (Every pool row: most of the pool are variants of a few stories at this threshold.)
      EXECUTE format('INSERT INTO %I (id, body) SELECT id, body FROM pool ORDER BY id', t);
      PERFORM simdup_enable_similar(t::regclass, 'body', 0.5, on_duplicate => mode);
    ELSE
      PERFORM simdup_enable(t::regclass, 'body', on_duplicate => 'skip', max_distance => k);
      EXECUTE format('INSERT INTO %I (id, body) SELECT id, body FROM pool ORDER BY id', t);
      PERFORM simdup_disable(t::regclass);
      PERFORM simdup_enable(t::regclass, 'body', on_duplicate => mode, max_distance => k);
    END IF;
  END LOOP;
END $$;
-- update_both(name): the same one-row UPDATEs on name and name_local, in the same order: row
-- p1 (every sixth stored row) gets the text of pool row (7 p1 mod 584) + 1, or (every other
-- one) a new text of its own (words made of md5 digests: near nothing else).
CREATE FUNCTION update_both(name text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record; t text;
BEGIN
  FOR r IN SELECT p1.id, CASE WHEN p1.id % 12 = 0 THEN p2.body
                              ELSE (SELECT string_agg(md5(p1.id || '/' || g), ' ') FROM generate_series(1, 12) g) END AS body
           FROM pool p1 JOIN pool p2 ON p2.id = (p1.id * 7) % 584 + 1 WHERE p1.id % 6 = 0 ORDER BY p1.id LOOP
    FOREACH t IN ARRAY ARRAY[name, name || '_local'] LOOP
      EXECUTE format('UPDATE %I SET body = %L WHERE id = %s', t, r.body, r.id);
    END LOOP;
  END LOOP;
END $$;
SELECT make_update_pair('up_mark', 'mark', 3);
SELECT update_both('up_mark');
SELECT check_that('UPDATE of the text, mark, k = 3, one statement a row: bodies and dup_of = the local trigger''s; rows marked',
  same_rows('up_mark') = 0 AND (SELECT count(*) FROM up_mark WHERE id % 6 = 0 AND dup_of IS NOT NULL) > 0,
  format('%s rows differ; %s updated rows marked', same_rows('up_mark'), (SELECT count(*) FROM up_mark WHERE id % 6 = 0 AND dup_of IS NOT NULL)));
SELECT make_update_pair('up_skip', 'skip', 3);
SELECT update_both('up_skip');
SELECT check_that('UPDATE of the text, skip, k = 3: the rows the local trigger changes and leaves (a skipped UPDATE keeps the row as it was)',
  same_rows('up_skip') = 0
  AND (SELECT count(*) FROM up_skip u JOIN pool p USING (id) WHERE u.id % 6 = 0 AND u.body = p.body) > 0
  AND (SELECT count(*) FROM up_skip u JOIN pool p USING (id) WHERE u.id % 6 = 0 AND u.body <> p.body) > 0,
  format('%s rows differ', same_rows('up_skip')));
SELECT make_update_pair('up_sim', 'mark', 0, true);
SELECT update_both('up_sim');
SELECT check_that('UPDATE of the text, similarity mark, t = 0.5: bodies and dup_of = the local similarity trigger''s',
  same_rows('up_sim') = 0 AND (SELECT count(*) FROM up_sim WHERE id % 6 = 0 AND dup_of IS NOT NULL) > 0,
  format('%s rows differ', same_rows('up_sim')));
SELECT make_update_pair('up_reject', 'reject', 3);
SELECT id AS r_kept FROM up_reject ORDER BY id LIMIT 1 \gset
SELECT id AS r_other FROM up_reject ORDER BY id DESC LIMIT 1 \gset
SELECT id AS r_other2 FROM up_reject ORDER BY id DESC OFFSET 1 LIMIT 1 \gset
SELECT check_that('UPDATE of the text, reject: a row given a stored row''s text gets 23505, and is left as it was',
  e = '23505: near-duplicate row violates simdup_dedup on relation "up_reject"'
  AND (SELECT body FROM up_reject WHERE id = :r_kept) = (SELECT body FROM pool WHERE id = :r_kept), e)
FROM error_of(format('UPDATE up_reject SET body = (SELECT body FROM pool WHERE id = %s) WHERE id = %s', :r_other, :r_kept)) e;
UPDATE up_reject SET body = 'A text of its own for this row, about tidal mills and the villages that kept them.', note = 'edited' WHERE id = :r_kept;
UPDATE up_reject SET body = body, note = 'same text' WHERE id = :r_other;
SELECT check_that('UPDATE of the text, reject: a new text is written (with the other columns); an UPDATE that keeps the text works',
  (SELECT note || ':' || left(body, 21) FROM up_reject WHERE id = :r_kept) = 'edited:A text of its own for'
  AND (SELECT note FROM up_reject WHERE id = :r_other) = 'same text');
-- One statement, several rows given the same new text: the first row it writes gets it, the
-- others are near-duplicates of that row by then (skip: left as they were; reject: 23505 and
-- nothing of the statement kept).
UPDATE up_skip SET body = 'One new text for three rows, about the salt marshes of the estuary and their birds.' WHERE id IN (1, 2, 3);
SELECT check_that('UPDATE of three rows to one new text, skip: one row has it, the other two are as they were',
  (SELECT count(*) FROM up_skip WHERE body LIKE 'One new text for three rows%') = 1
  AND (SELECT count(*) FROM up_skip u JOIN pool p USING (id) WHERE u.id IN (1, 2, 3) AND u.body = p.body) = 2);
SELECT check_that('UPDATE of two rows to one new text, reject: 23505, neither row changed',
  e = '23505: near-duplicate row violates simdup_dedup on relation "up_reject"'
  AND (SELECT count(*) FROM up_reject WHERE body LIKE 'Two rows, one text%') = 0, e)
FROM error_of(format('UPDATE up_reject SET body = %L WHERE id IN (%s, %s)',
  'Two rows, one text: a story about the ferry between the islands and its timetable.', :r_other, :r_other2)) e;
-- UPDATE ... RETURNING of the text: the rows as written (a skipped row returns nothing, as a
-- BEFORE trigger that skips it makes it), what the local trigger's table returns, a statement a
-- row; then one statement of many rows (batches): the rows it changed, as stored.
CREATE FUNCTION update_both_returning(name text, ret text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r record; n bigint := 0; a text; b text;
BEGIN
  FOR r IN SELECT p1.id, CASE WHEN p1.id % 12 = 0 THEN p2.body
                              ELSE (SELECT string_agg(md5(p1.id || '/' || g), ' ') FROM generate_series(1, 12) g) END AS body
           FROM pool p1 JOIN pool p2 ON p2.id = (p1.id * 7) % 584 + 1 WHERE p1.id % 6 = 0 ORDER BY p1.id LOOP
    a := returned(format('UPDATE %I SET body = %L WHERE id = %s RETURNING %s', name, r.body, r.id, ret));
    b := returned(format('UPDATE %I SET body = %L WHERE id = %s RETURNING %s', name || '_local', r.body, r.id, ret));
    IF a IS DISTINCT FROM b THEN n := n + 1; END IF;
  END LOOP;
  RETURN n;
END $$;
SELECT make_update_pair('upr_skip', 'skip', 3);
SELECT check_that('UPDATE ... RETURNING of the text, skip, k = 3, a statement a row: the rows the local trigger''s table returns (none when skipped)',
  update_both_returning('upr_skip', 'id, md5(body)') = 0 AND same_rows('upr_skip') = 0);
SELECT make_update_pair('upr_mark', 'mark', 3);
SELECT check_that('UPDATE ... RETURNING of the text, mark, k = 3, a statement a row: the rows the local trigger''s table returns',
  update_both_returning('upr_mark', 'id, dup_of, md5(body)') = 0 AND same_rows('upr_mark') = 0);
SELECT returned('UPDATE upr_mark SET body = body || '' (edited)'' WHERE id % 5 = 0 RETURNING id, dup_of, md5(body)') AS ret_d \gset
SELECT check_that('UPDATE ... RETURNING of many rows (batches): each row changed, as stored',
  (SELECT array_agg(x ORDER BY x) FROM unnest(string_to_array(:'ret_d', ' ')) x)
  = (SELECT array_agg(format('(%s,%s,%s)', id, dup_of, md5(body)) ORDER BY format('(%s,%s,%s)', id, dup_of, md5(body))) FROM upr_mark WHERE body LIKE '% (edited)')
  AND (SELECT count(*) FROM upr_mark WHERE body LIKE '% (edited)') > 0);
SELECT check_that('UPDATE ... RETURNING a column of another table of the UPDATE: 0A000 with a hint',
  e = '0A000: UPDATE … RETURNING columns of another table is not supported on distributed dedup table public.up_reject', e)
FROM error_of('UPDATE up_reject SET body = ''x'' FROM (VALUES (1)) v(a) WHERE id = v.a RETURNING v.a') e;
SELECT check_that('EXPLAIN of an UPDATE of the text: the custom scan SimdupCheckedUpdate; of another column: Citus''s plan',
  (SELECT string_agg(p, E'\n') FROM explain_all('UPDATE up_reject SET body = body || ''!'' WHERE id = 5') x(p))
    ~ 'Custom Scan \(SimdupCheckedUpdate\)\s+Dedup Check: each row against every shard of public\.up_reject'
  AND (SELECT string_agg(p, E'\n') FROM explain_all('UPDATE up_reject SET note = ''n'' WHERE id = 5') x(p)) !~ 'SimdupChecked');
-- One UPDATE statement of many rows, checked in batches (update_batch): every sixth row gets
-- next_body — every twelfth the text of another pool row (7 id mod 584 + 1), the others a new
-- text shared by three rows (so the second and third are near-duplicates of the first by then).
-- The answers depend on the order the UPDATE reads the rows in: on one shard that is the
-- shard's heap order, read first (ORDER BY ctid), and the local table gets the same changes
-- one row at a time in that order (update_local_in_order).
CREATE FUNCTION make_batch_pair(name text, mode text, k int, by_similarity boolean DEFAULT false) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY[name, name || '_local'] LOOP
    EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL, note text, next_body text)', t);
    IF t = name THEN PERFORM create_distributed_table(t, 'id', shard_count => 1); END IF;
    IF NOT by_similarity THEN
      PERFORM simdup_enable(t::regclass, 'body', on_duplicate => 'skip', max_distance => k);
    END IF;
    EXECUTE format($i$INSERT INTO %I (id, body, next_body)
      SELECT p.id, p.body,
             CASE WHEN p.id %% 12 = 0 THEN (SELECT q.body FROM pool q WHERE q.id = (7 * p.id) %% 584 + 1)
                  WHEN p.id %% 12 = 6 THEN 'Batch text ' || (p.id / 36) || ': '
                       || (SELECT string_agg(md5((p.id / 36) || '/' || g), ' ') FROM generate_series(1, 12) g) END
      FROM pool p ORDER BY p.id$i$, t);
    IF by_similarity THEN
      PERFORM simdup_enable_similar(t::regclass, 'body', 0.5, on_duplicate => mode);
    ELSE
      PERFORM simdup_disable(t::regclass);
      PERFORM simdup_enable(t::regclass, 'body', on_duplicate => mode, max_distance => k);
    END IF;
  END LOOP;
END $$;
CREATE FUNCTION update_local_in_order(name text, ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
  FOREACH r IN ARRAY ids LOOP
    EXECUTE format('UPDATE %I SET body = next_body, note = ''batch'' WHERE id = $1', name || '_local') USING r;
  END LOOP;
END $$;
-- update_batch_pair(name): the one UPDATE on name, the same changes on name_local in its order;
-- returns same_rows(name).
CREATE FUNCTION update_batch_pair(name text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE ids bigint[];
BEGIN
  EXECUTE format('SELECT array_agg(id ORDER BY ctid) FROM %I WHERE next_body IS NOT NULL', name) INTO ids;
  EXECUTE format('UPDATE %I SET body = next_body, note = ''batch'' WHERE next_body IS NOT NULL', name);
  PERFORM update_local_in_order(name, ids);
  RETURN same_rows(name);
END $$;
-- (A query that names only one-shard tables goes to their worker whole, functions and all:
-- the comparisons with the local tables run on their own, their counts kept in variables.)
SELECT make_batch_pair('ub_mark', 'mark', 3);
SELECT update_batch_pair('ub_mark') AS differ \gset
SELECT count(*) FILTER (WHERE id % 12 = 0 AND dup_of IS NOT NULL) AS by_stored,
       count(*) FILTER (WHERE id % 12 = 6 AND dup_of IS NOT NULL) AS by_own FROM ub_mark \gset
SELECT check_that('one UPDATE of many texts, mark, k = 3 (checked in a batch): bodies and dup_of = the local trigger''s; rows marked by stored rows and by the statement''s own',
  :differ = 0 AND :by_stored > 0 AND :by_own > 0, format('%s rows differ, %s and %s marked', :differ, :by_stored, :by_own));
-- A batch of rows that change their text and rows that keep it, with dup_of assigned by the
-- UPDATE (one statement writes them all): the local trigger sets dup_of where the text changes
-- and lets the assigned value through where it stays.
CREATE FUNCTION update_mixed_local_in_order(name text, ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r bigint;
BEGIN
  FOREACH r IN ARRAY ids LOOP
    EXECUTE format('UPDATE %I SET body = CASE WHEN id %% 24 = 0 THEN body ELSE next_body END, note = ''mixed'', dup_of = -1
                    WHERE id = $1', name || '_local') USING r;
  END LOOP;
END $$;
SELECT make_batch_pair('ub_mixed', 'mark', 3);
SELECT array_agg(id ORDER BY ctid) AS ids FROM ub_mixed WHERE next_body IS NOT NULL \gset
UPDATE ub_mixed SET body = CASE WHEN id % 24 = 0 THEN body ELSE next_body END, note = 'mixed', dup_of = -1
WHERE next_body IS NOT NULL;
SELECT update_mixed_local_in_order('ub_mixed', :'ids');
SELECT same_rows('ub_mixed') AS differ \gset
SELECT count(*) FILTER (WHERE id % 24 = 0 AND dup_of = -1) AS kept_assigned,
       count(*) FILTER (WHERE id % 24 <> 0 AND dup_of IS DISTINCT FROM -1) AS set_by_check,
       count(*) FILTER (WHERE note = 'mixed') AS written
FROM ub_mixed WHERE next_body IS NOT NULL \gset
SELECT check_that('one UPDATE of many rows, mark, k = 3, some keeping their text, dup_of assigned: bodies and dup_of = the local trigger''s (the assigned value where the text stays, the check''s where it changes)',
  :differ = 0 AND :kept_assigned > 0 AND :set_by_check > 0 AND :written > 0,
  format('%s rows differ, %s kept the assigned dup_of, %s set by the check, %s written', :differ, :kept_assigned, :set_by_check, :written));
SELECT make_batch_pair('ub_skip', 'skip', 3);
SELECT update_batch_pair('ub_skip') AS differ \gset
SELECT count(*) FILTER (WHERE body = next_body) AS changed, count(*) FILTER (WHERE body <> next_body) AS left_as_was
FROM ub_skip WHERE next_body IS NOT NULL \gset
SELECT check_that('one UPDATE of many texts, skip, k = 3: the rows the local trigger changes and leaves',
  :differ = 0 AND :changed > 0 AND :left_as_was > 0, format('%s rows differ, %s changed, %s left', :differ, :changed, :left_as_was));
SELECT make_batch_pair('ub_sim', 'mark', 0, true);
SELECT update_batch_pair('ub_sim') AS differ \gset
SELECT count(*) AS by_own FROM ub_sim WHERE id % 12 = 6 AND dup_of IS NOT NULL \gset
SELECT check_that('one UPDATE of many texts, similarity mark, t = 0.5: bodies and dup_of = the local similarity trigger''s',
  :differ = 0 AND :by_own > 0, format('%s rows differ, %s marked by the statement''s own', :differ, :by_own));
SELECT make_batch_pair('ub_reject', 'reject', 3);
SELECT array_agg(id ORDER BY ctid) AS ids FROM ub_reject WHERE next_body IS NOT NULL \gset
SELECT e AS dist_error, l AS local_error
FROM error_of('UPDATE ub_reject SET body = next_body, note = ''batch'' WHERE next_body IS NOT NULL') e,
     error_of(format('SELECT update_local_in_order(%L, %L)', 'ub_reject', :'ids')) l \gset
SELECT count(*) AS changed FROM ub_reject WHERE note = 'batch' \gset
SELECT check_that('one UPDATE of many texts, reject: 23505 as on the local table, no row changed',
  :'dist_error' = '23505: near-duplicate row violates simdup_dedup on relation "ub_reject"'
  AND :'local_error' = '23505: near-duplicate row violates simdup_dedup on relation "ub_reject_local"' AND :changed = 0,
  :'dist_error');
-- MERGE: Citus runs its actions on the shards (its source must be a Citus table), unchecked
-- across them. One that can store a new text (an INSERT action, an UPDATE of the text) is
-- refused on the coordinator; one that only changes other columns or deletes is Citus's, as
-- such an UPDATE is.
CREATE TABLE merge_src (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('merge_src', 'id', colocate_with => 'up_reject');
SELECT body AS kept_body FROM up_reject WHERE id = :r_kept \gset
INSERT INTO merge_src VALUES (900001, :'kept_body'), (:r_other, 'x');
-- (Errors and counts read in statements of their own: a query naming one row of a
-- distributed table goes to that row's worker whole.)
SELECT e AS merge_insert FROM error_of($$MERGE INTO up_reject t USING merge_src s ON t.id = s.id
                                         WHEN NOT MATCHED THEN INSERT (id, body) VALUES (s.id, s.body)$$) e \gset
SELECT e AS merge_text FROM error_of($$MERGE INTO up_reject t USING merge_src s ON t.id = s.id
                                       WHEN MATCHED THEN UPDATE SET body = s.body$$) e \gset
SELECT count(*) AS inserted FROM up_reject WHERE id = 900001 \gset
SELECT count(*) AS texts_x FROM up_reject WHERE id = :r_other AND body = 'x' \gset
SELECT check_that('MERGE with an INSERT action, or updating the text: 0A000 with a hint, nothing changed',
  :'merge_insert' = '0A000: MERGE that inserts rows or changes the checked column is not supported on distributed dedup table public.up_reject'
  AND :'merge_text' = :'merge_insert' AND :inserted = 0 AND :texts_x = 0, :'merge_insert');
MERGE INTO up_reject t USING merge_src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET note = 'merged';
SELECT note AS merged_note FROM up_reject WHERE id = :r_other \gset
SELECT check_that('MERGE that updates another column: Citus''s own, the row changed', :'merged_note' = 'merged');

-- The verification limit (simdup.similar_verify_limit, 64 by default): past it, a check verifies
-- only the candidates sharing the most index values with the new row, the smaller keys first
-- among equals, on a distributed table as the local trigger does (docs/dedup.md). A family of
-- 400 texts, all near-duplicates of each other, written with the smallest key last; key 1 holds
-- only the first 150 characters (fewer shared bands). Every write path names the local trigger's
-- dup_of: a batch whose earlier rows are the candidates, a batch beside stored ones, one row a
-- statement, an UPDATE of one row and of many, a row after them. A new row names key 1 only
-- without the limit.
SELECT make_similar_pair('cl_fam', 'mark', 0.5);
CREATE TABLE cl_texts AS
  SELECT g AS id, CASE WHEN g = 1 THEN left(b.base, 150) || 'xyz' ELSE b.base || md5(g::text) END AS body
  FROM (SELECT string_agg(md5(x::text), ' ') AS base FROM generate_series(1, 6) x) b, generate_series(1, 400) g;
SELECT string_agg(md5(x::text), ' ') AS cl_base FROM generate_series(1, 6) x \gset
CREATE FUNCTION cl_differ() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM cl_fam d FULL JOIN cl_fam_local l USING (id)
  WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.body IS DISTINCT FROM l.body OR d.id IS NULL OR l.id IS NULL $$;
INSERT INTO cl_fam (id, body) SELECT id, body FROM cl_texts WHERE id > 100 ORDER BY id DESC;
INSERT INTO cl_fam_local (id, body) SELECT id, body FROM cl_texts WHERE id > 100 ORDER BY id DESC;
SELECT cl_differ() AS cl_batch \gset
INSERT INTO cl_fam (id, body) SELECT id, body FROM cl_texts WHERE id BETWEEN 2 AND 100 ORDER BY id DESC;
INSERT INTO cl_fam_local (id, body) SELECT id, body FROM cl_texts WHERE id BETWEEN 2 AND 100 ORDER BY id DESC;
SELECT cl_differ() AS cl_batch2 \gset
INSERT INTO cl_fam (id, body) SELECT id, body FROM cl_texts WHERE id = 1;
INSERT INTO cl_fam_local (id, body) SELECT id, body FROM cl_texts WHERE id = 1;
SELECT format('INSERT INTO %I (id, body) VALUES (%s, %L)', t, 1000 + g, :'cl_base' || 'new' || g)
FROM generate_series(1, 5) g, unnest(ARRAY['cl_fam', 'cl_fam_local']) t ORDER BY g, t \gexec
SELECT cl_differ() AS cl_rows \gset
UPDATE cl_fam SET body = :'cl_base' || 'changed' WHERE id = 7;
UPDATE cl_fam_local SET body = :'cl_base' || 'changed' WHERE id = 7;
SELECT array_agg(id ORDER BY ctid) AS cl_ids FROM cl_fam_local WHERE id BETWEEN 20 AND 30 \gset
UPDATE cl_fam SET body = body || ' again' WHERE id BETWEEN 20 AND 30;
SELECT format('UPDATE cl_fam_local SET body = body || '' again'' WHERE id = %s', id)
FROM unnest(:'cl_ids'::bigint[]) WITH ORDINALITY u(id, o) ORDER BY o \gexec
SELECT cl_differ() AS cl_updates \gset
-- (The local table's indexes still name the old versions of the rows just updated: gone rows
-- take no place among those verified.)
INSERT INTO cl_fam (id, body) VALUES (1006, :'cl_base' || 'new after the updates');
INSERT INTO cl_fam_local (id, body) VALUES (1006, :'cl_base' || 'new after the updates');
SET simdup.similar_verify_limit = 0;
INSERT INTO cl_fam (id, body) VALUES (2000, :'cl_base' || 'unlimited');
INSERT INTO cl_fam_local (id, body) VALUES (2000, :'cl_base' || 'unlimited');
RESET simdup.similar_verify_limit;
SELECT check_that('the verification limit: a family of 400 near-duplicates; dup_of = the local trigger''s on a batch among its own rows, a batch beside stored ones, one row a statement, UPDATEs of one row and of many; without the limit key 1, with it a key the limit chose',
  :cl_batch = 0 AND :cl_batch2 = 0 AND :cl_rows = 0 AND :cl_updates = 0 AND cl_differ() = 0
  AND (SELECT dup_of FROM cl_fam_local WHERE id = 2000) = 1
  AND (SELECT bool_and(dup_of > 1) FROM cl_fam_local WHERE id BETWEEN 1001 AND 1006),
  format('rows differing: %s, %s, %s, %s, %s; dup_of %s', :cl_batch, :cl_batch2, :cl_rows, :cl_updates, cl_differ(),
         (SELECT string_agg(id || ':' || dup_of, ' ' ORDER BY id) FROM cl_fam_local WHERE id > 1000)));

-- Text keys (checked a row at a time): the limit's choice ordered by the key type, in SQL
-- ('k10' before 'k9').
CREATE TABLE cl_text (id text PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('cl_text', 'id');
SELECT simdup_enable_similar('cl_text', 'body', 0.5, on_duplicate => 'mark');
CREATE TABLE cl_text_local (id text PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable_similar('cl_text_local', 'body', 0.5, on_duplicate => 'mark');
INSERT INTO cl_text (id, body) SELECT 'k' || id, body FROM cl_texts WHERE id BETWEEN 2 AND 150 ORDER BY id DESC;
INSERT INTO cl_text_local (id, body) SELECT 'k' || id, body FROM cl_texts WHERE id BETWEEN 2 AND 150 ORDER BY id DESC;
INSERT INTO cl_text (id, body) VALUES ('n1', :'cl_base' || 'new');
INSERT INTO cl_text_local (id, body) VALUES ('n1', :'cl_base' || 'new');
SELECT check_that('the verification limit, text keys (a row at a time): dup_of = the local trigger''s',
  (SELECT count(*) FROM cl_text d FULL JOIN cl_text_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0
  AND (SELECT count(dup_of) FROM cl_text_local) = 149,
  (SELECT string_agg(id || ':' || dup_of, ' ' ORDER BY id) FROM cl_text_local WHERE id IN ('n1', 'k2', 'k3')));

-- For the concurrency steps of run.sh.
CREATE TABLE conc (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('conc', 'id');
SELECT simdup_enable('conc', 'body', on_duplicate => 'reject', max_distance => 3);
