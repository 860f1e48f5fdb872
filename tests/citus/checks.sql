-- Checks of what works NOW (simdup 0.2.0 on Citus 13.2.2), run by tests/citus/run.sh on the
-- cluster of scripts/citus_cluster.sh against the local reference table pool (pool.sql).
-- Every check compares a distributed answer with the answer on a plain local table holding the
-- same rows, or asserts a catalog fact on every shard; check() raises on the first failure.
\set ON_ERROR_STOP 1
\set VERBOSITY terse
SET citus.shard_count = 4;
SET client_min_messages = warning;

CREATE FUNCTION check_that(what text, ok boolean, detail text DEFAULT '') RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF ok IS NOT TRUE THEN
    RAISE EXCEPTION 'FAIL: % %', what, detail;
  END IF;
  RAISE WARNING 'ok: %', what;
END $$;

-- Number of shards of a distributed table.
CREATE FUNCTION shard_count(t regclass) RETURNS bigint LANGUAGE sql STABLE
RETURN (SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = t);

-- How many of the queries q_dist and q_local (each returning one array, parameters $1 text and
-- $2 int) answer differently, for each $1 in args. The queries run one by one: Citus does not
-- run a distributed query correlated with a local table.
CREATE FUNCTION differing(q_dist text, q_local text, args text[], k int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  n int := 0; arg text; x text; y text;
BEGIN
  FOREACH arg IN ARRAY args LOOP
    EXECUTE q_dist INTO x USING arg, k;
    EXECUTE q_local INTO y USING arg, k;
    IF x IS DISTINCT FROM y OR x IS NULL THEN n := n + 1; END IF;
  END LOOP;
  RETURN n;
END $$;

-- The lines of EXPLAIN (COSTS OFF) of a query. Called between the BEGIN and COMMIT of
-- explain_settings: every task shown, sequential scans off on the workers (Citus propagates a
-- SET LOCAL with citus.propagate_set_commands = 'local', in a transaction block only: not from
-- inside a function called in autocommit mode).
CREATE FUNCTION explain_all(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;
\set explain_settings 'SET LOCAL citus.explain_all_tasks = on; SET LOCAL citus.propagate_set_commands = \'local\'; SET LOCAL enable_seqscan = off;'

SELECT check_that('CREATE EXTENSION simdup was propagated to both workers with the same version',
  (SELECT bool_and(success AND result = (SELECT extversion FROM pg_extension WHERE extname = 'simdup'))
   FROM run_command_on_workers($$SELECT extversion FROM pg_extension WHERE extname = 'simdup'$$)));

-- ---------------------------------------------------------------------------------------------
-- simdup_enable on a table distributed BEFORE it is enabled
-- ---------------------------------------------------------------------------------------------
CREATE TABLE docs (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('docs', 'id');
SELECT simdup_enable('docs', 'body');
INSERT INTO docs (id, body) SELECT id, body FROM pool;
CREATE TABLE docs_local (id bigint PRIMARY KEY, body text NOT NULL);
INSERT INTO docs_local SELECT id, body FROM pool;
SELECT simdup_enable('docs_local', 'body');

SELECT check_that('simdup_enable after distribution: registry row on the coordinator',
  EXISTS (SELECT 1 FROM simdup_tables WHERE tbl = 'docs'::regclass AND fingerprint_column = 'simhash'));
SELECT check_that('simdup_enable after distribution: every shard has the generated column and the four key indexes _simdup_key(simhash, offset), shard-suffixed',
  (SELECT bool_and(success AND result = format('simhash(body)|docs_simhash_k0_idx_%1$s,docs_simhash_k16_idx_%1$s,docs_simhash_k32_idx_%1$s,docs_simhash_k48_idx_%1$s', shardid))
   FROM run_command_on_shards('docs', $$SELECT pg_get_expr(d.adbin, d.adrelid) || '|' ||
       (SELECT string_agg(i.indexrelid::regclass::text, ',' ORDER BY substring(pg_get_indexdef(i.indexrelid) from '_simdup_key\(simhash, (\d+)\)')::int)
        FROM pg_index i
        WHERE i.indrelid = '%1$s'::regclass AND pg_get_indexdef(i.indexrelid) LIKE '%%_simdup_key(simhash, %%')
     FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
     WHERE d.adrelid = '%1$s'::regclass AND a.attname = 'simhash'$$)), 'see run_command_on_shards');
SELECT check_that('simhash computed on the workers (generated column) = simhash on the coordinator, every row',
  (SELECT count(*) FROM docs d JOIN pool p USING (id) WHERE d.simhash IS DISTINCT FROM p.fp) = 0
  AND (SELECT count(*) FROM docs) = (SELECT count(*) FROM pool));
SELECT check_that('simhash(body) pushed down in a multi-shard query = local',
  (SELECT array_agg(h ORDER BY id) FROM (SELECT id, simhash(body) AS h FROM docs) x)
  = (SELECT array_agg(fp ORDER BY id) FROM pool));

-- simdup_match and the query form hamming(fp, q) <= k on the distributed table = on the local
-- copy, for every 10th pool fingerprint as q.
SELECT check_that(format('%s on the distributed table = local copy, k = %s, %s queries', form, k, cardinality(qs)),
  differing(format('SELECT array_agg(id ORDER BY id)::text FROM docs WHERE %s', cond),
            format('SELECT array_agg(id ORDER BY id)::text FROM docs_local WHERE %s', cond), qs, k) = 0)
FROM (VALUES ('simdup_match(simhash, q, k)', 'simdup_match(simhash, $1::bigint, $2)'),
             ('hamming(simhash, q) <= k', 'hamming(simhash, $1::bigint) <= $2')) f(form, cond),
     (VALUES (3), (10)) v(k), (SELECT array_agg(fp::text ORDER BY id) AS qs FROM pool WHERE id % 10 = 1) q;

-- ---------------------------------------------------------------------------------------------
-- Random and bit-flipped fingerprints in an adopted bigint column: exact search on every shard
-- ---------------------------------------------------------------------------------------------
CREATE TABLE fps_local (id bigint PRIMARY KEY, fp bigint);
SELECT setseed(0.17);
INSERT INTO fps_local
SELECT i, (floor(random() * 4294967296)::bigint << 32) # floor(random() * 4294967296)::bigint
FROM generate_series(1, 100000) i;
-- 200 base fingerprints, each with variants at 1..12 flipped bits (distinct positions: 13 is
-- coprime with 64).
INSERT INTO fps_local
SELECT 1000000 + b.id * 100 + d, b.fp # (SELECT bit_or(1::bigint << ((j * 13 + b.id::int) % 64)) FROM generate_series(1, d) j)
FROM fps_local b, generate_series(1, 12) d WHERE b.id <= 200;
CREATE TABLE fps (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('fps', 'id');
INSERT INTO fps SELECT * FROM fps_local;
SELECT simdup_enable('fps', NULL, 'fp');
SELECT simdup_enable('fps_local', NULL, 'fp');
ANALYZE fps; ANALYZE fps_local;
SELECT check_that(format('%s, adopted fingerprint column: distributed = local, k = %s, 200 queries', form, k),
  differing(format('SELECT array_agg(id ORDER BY id)::text FROM fps WHERE %s', cond),
            format('SELECT array_agg(id ORDER BY id)::text FROM fps_local WHERE %s', cond), qs, k) = 0
  -- each base fingerprint finds itself and its variants at 1..k flipped bits at least
  AND (SELECT count(*) FROM fps_local d, fps_local q WHERE q.id <= 200 AND hamming(d.fp, q.fp) <= k) >= 200 * (k + 1))
FROM (VALUES ('simdup_match(fp, q, k)', 'simdup_match(fp, $1::bigint, $2)'),
             ('hamming(fp, q) <= k', 'hamming(fp, $1::bigint) <= $2')) f(form, cond),
     (VALUES (3), (10)) v(k), (SELECT array_agg(fp::text ORDER BY id) AS qs FROM fps_local WHERE id <= 200) q;

-- The plan: every task is a Tid Scan on ITS shard over _simdup_tids('<that shard>'::regclass, ...)
-- (simdup's planner step runs on the worker, where the shard query names the shard). tid_tasks
-- lists, per task of EXPLAIN with every task shown, the shard scanned and the shard given to
-- _simdup_tids (NULL when that task is not such a Tid Scan).
CREATE FUNCTION tid_tasks(q text, OUT task int, OUT scanned text, OUT probed text) RETURNS SETOF record LANGUAGE plpgsql AS $$
DECLARE l text; m text[];
BEGIN
  task := 0;
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ '->  Task$' THEN
      IF task > 0 THEN RETURN NEXT; END IF;
      task := task + 1; scanned := NULL; probed := NULL;
    END IF;
    m := regexp_match(l, 'Tid Scan on (\S+)');
    IF m IS NOT NULL THEN scanned := m[1]; END IF;
    m := regexp_match(l, 'TID Cond: \(ctid = ANY \((?:public\.)?_simdup_tids\(''([^'']+)''::regclass');
    IF m IS NOT NULL THEN probed := m[1]; END IF;
  END LOOP;
  IF task > 0 THEN RETURN NEXT; END IF;
END $$;
SELECT fp AS q7 FROM fps_local WHERE id = 7 \gset
BEGIN;
SET LOCAL citus.explain_all_tasks = on;
SELECT check_that(format('EXPLAIN %s on the distributed table, k = %s: every task is a Tid Scan on its own shard over _simdup_tids(''<that shard>'')', form, k),
  (SELECT count(*) FROM tid_tasks(format('SELECT id FROM fps WHERE %s', format(cond, :q7, k))) t
   WHERE t.scanned = t.probed AND t.scanned ~ '^fps_\d+$') = shard_count('fps')
  AND (SELECT count(DISTINCT scanned) FROM tid_tasks(format('SELECT id FROM fps WHERE %s', format(cond, :q7, k)))) = shard_count('fps')
  AND (SELECT array_agg(DISTINCT scanned ORDER BY scanned) FROM tid_tasks(format('SELECT id FROM fps WHERE %s', format(cond, :q7, k))))
      = (SELECT array_agg('fps_' || shardid ORDER BY 'fps_' || shardid) FROM pg_dist_shard WHERE logicalrelid = 'fps'::regclass),
  (SELECT string_agg(format('%s:%s/%s', task, scanned, probed), ' ') FROM tid_tasks(format('SELECT id FROM fps WHERE %s', format(cond, :q7, k)))))
FROM (VALUES ('simdup_match(fp, q, k)', 'simdup_match(fp, %s, %s)'), ('hamming(fp, q) <= k', 'hamming(fp, %s) <= %s')) f(form, cond),
     (VALUES (3), (10)) v(k);
-- q from a sub-select (Citus runs it first and sends read_intermediate_result to the workers):
-- simdup_match is still inlined there and the InitPlan's value served by _simdup_tids.
SELECT check_that('EXPLAIN simdup_match(fp, (SELECT fp FROM a local table ...), 3): every task is a Tid Scan on its own shard over _simdup_tids(''<that shard>'', ..., $0, 3)',
  (SELECT count(*) FROM tid_tasks('SELECT id FROM fps WHERE simdup_match(fp, (SELECT fp FROM fps_local WHERE id = 7), 3)') t
   WHERE t.scanned = t.probed AND t.scanned ~ '^fps_\d+$') = shard_count('fps'));
COMMIT;
SELECT check_that('simdup_match(fp, (SELECT fp FROM a local table ...), 3) = local',
  (SELECT array_agg(id ORDER BY id) FROM fps WHERE simdup_match(fp, (SELECT fp FROM fps_local WHERE id = 7), 3))
  = (SELECT array_agg(id ORDER BY id) FROM fps_local WHERE simdup_match(fp, (SELECT fp FROM fps_local l WHERE l.id = 7), 3)));
SELECT fp AS q9 FROM fps_local WHERE id = 9 \gset
-- (Citus cannot plan a multi-shard query with parameters as a generic plan: under
-- plan_cache_mode = force_generic_plan even hamming(fp, $1) <= 6 fails with 0A000 "could not
-- create distributed plan". By default it re-plans each execution with the values.)
PREPARE m(bigint, int) AS SELECT array_agg(id ORDER BY id)::text AS m FROM fps WHERE simdup_match(fp, $1, $2);
EXECUTE m(:q9, 6) \gset first_
EXECUTE m(:q9, 6) \g /dev/null
EXECUTE m(:q9, 6) \g /dev/null
EXECUTE m(:q9, 6) \g /dev/null
EXECUTE m(:q9, 6) \g /dev/null
EXECUTE m(:q9, 6) \g /dev/null
EXECUTE m(:q9, 6) \gset seventh_
SELECT check_that('a prepared simdup_match(fp, $1, $2), executed 7 times (past the custom-plan threshold) = local',
  :'first_m' = :'seventh_m' AND :'first_m' = (SELECT array_agg(id ORDER BY id)::text FROM fps_local WHERE simdup_match(fp, :q9, 6)));
SELECT check_that('ORDER BY fp <~> q, id LIMIT 5 across shards = local',
  (SELECT array(SELECT d.id FROM fps d ORDER BY d.fp <~> :q9, d.id LIMIT 5))
  = (SELECT array(SELECT l.id FROM fps_local l ORDER BY l.fp <~> :q9, l.id LIMIT 5)));

-- simdup_nearest(tbl, q, n) runs SELECT ... FROM tbl WHERE ctid = ANY (_simdup_nearest_tids(tbl's
-- OID, ...)): on a distributed table Citus would send that to the workers with the
-- COORDINATOR's OID of tbl, which names no relation there (or an unrelated one), so it is
-- refused with 0A000 and a hint. ORDER BY fp <~> q LIMIT n is the distributed alternative.
SET x.q9 = :q9;
DO $$ DECLARE msg text; state text; BEGIN
  PERFORM count(*) FROM simdup_nearest('fps', current_setting('x.q9')::bigint, 5, 'fp');
  RAISE EXCEPTION 'simdup_nearest ran on a distributed table';
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, state = RETURNED_SQLSTATE;
  PERFORM check_that(format('simdup_nearest on a distributed table is refused (%s: "%s"), on the local copy it gives 5 rows', state, msg),
    state = '0A000'
    AND (SELECT count(*) FROM simdup_nearest('fps_local', current_setting('x.q9')::bigint, 5, 'fp')) = 5, msg);
END $$;
SELECT check_that('the alternative ORDER BY fp <~> q LIMIT 5 on the distributed table = distances of simdup_nearest on the local copy',
  (SELECT array(SELECT d.fp <~> :q9 FROM fps d ORDER BY d.fp <~> :q9 LIMIT 5))
  = (SELECT array(SELECT distance FROM simdup_nearest('fps_local', :q9, 5, 'fp'))));

-- ---------------------------------------------------------------------------------------------
-- Batch functions (they read the table through SPI on the coordinator)
-- ---------------------------------------------------------------------------------------------
SELECT check_that(format('simdup_groups(distributed, %s) = local', k),
  NOT EXISTS (SELECT * FROM simdup_groups('docs', k) EXCEPT SELECT * FROM simdup_groups('docs_local', k))
  AND NOT EXISTS (SELECT * FROM simdup_groups('docs_local', k) EXCEPT SELECT * FROM simdup_groups('docs', k))
  AND (SELECT count(*) FROM simdup_groups('docs', k)) > 0)
FROM (VALUES (3), (10)) v(k);
SELECT check_that('simdup_groups(distributed fps, 10) = local (200 bit-flip families)',
  NOT EXISTS (SELECT * FROM simdup_groups('fps', 10) EXCEPT SELECT * FROM simdup_groups('fps_local', 10))
  AND NOT EXISTS (SELECT * FROM simdup_groups('fps_local', 10) EXCEPT SELECT * FROM simdup_groups('fps', 10))
  AND (SELECT count(DISTINCT group_id) FROM simdup_groups('fps', 10)) >= 200);
SELECT check_that(format('_simdup_fingerprint_pairs(distributed, %s) = local', k),
  NOT EXISTS (SELECT * FROM _simdup_fingerprint_pairs('docs', 'simhash', k) EXCEPT SELECT * FROM _simdup_fingerprint_pairs('docs_local', 'simhash', k))
  AND NOT EXISTS (SELECT * FROM _simdup_fingerprint_pairs('docs_local', 'simhash', k) EXCEPT SELECT * FROM _simdup_fingerprint_pairs('docs', 'simhash', k))
  AND (SELECT count(*) FROM _simdup_fingerprint_pairs('docs', 'simhash', k)) > 0)
FROM (VALUES (3), (10)) v(k);
-- simdup_pairs reads the rows of the pairs' fingerprints (and of duplicated ones) into the
-- coordinator and joins them there: no repartition join (citus.enable_repartition_joins off).
SELECT check_that(format('simdup_pairs(distributed, %s) = local, with citus.enable_repartition_joins off', k),
  NOT EXISTS (SELECT * FROM simdup_pairs('docs', k) EXCEPT SELECT * FROM simdup_pairs('docs_local', k))
  AND NOT EXISTS (SELECT * FROM simdup_pairs('docs_local', k) EXCEPT SELECT * FROM simdup_pairs('docs', k))
  AND (SELECT count(*) FROM simdup_pairs('docs', k)) = (SELECT count(*) FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) <= k)
  AND current_setting('citus.enable_repartition_joins') = 'off')
FROM (VALUES (3), (10)) v(k);
-- ---------------------------------------------------------------------------------------------
-- MinHash: generated signature column, GIN index on minhash_bands, jaccard
-- ---------------------------------------------------------------------------------------------
CREATE TABLE mh (id bigint PRIMARY KEY, body text NOT NULL, sig bigint[] GENERATED ALWAYS AS (minhash(body)) STORED);
SELECT create_distributed_table('mh', 'id');
CREATE INDEX mh_bands ON mh USING gin (minhash_bands(sig, 16, 8));
INSERT INTO mh (id, body) SELECT id, body FROM pool;
CREATE TABLE mh_local (id bigint PRIMARY KEY, body text NOT NULL, sig bigint[] GENERATED ALWAYS AS (minhash(body)) STORED);
INSERT INTO mh_local (id, body) SELECT id, body FROM pool;
SELECT check_that('minhash generated column on the shards = local', NOT EXISTS (
  SELECT 1 FROM mh JOIN mh_local l USING (id) WHERE mh.sig IS DISTINCT FROM l.sig));
SELECT check_that('GIN index on minhash_bands created on every shard as mh_bands_<shardid>',
  (SELECT bool_and(success AND result = 'mh_bands_' || shardid)
   FROM run_command_on_shards('mh', $$SELECT string_agg(indexrelid::regclass::text, ',') FROM pg_index
                                     WHERE indrelid = '%s'::regclass AND NOT indisprimary$$)));
SELECT check_that('minhash_bands && candidates: distributed = local, 30 queries',
  differing('SELECT array_agg(id ORDER BY id)::text FROM mh WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash($1), 16, 8)',
            'SELECT array_agg(id ORDER BY id)::text FROM mh_local WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash($1), 16, 8)',
            (SELECT array_agg(body ORDER BY id) FROM pool WHERE id % 20 = 1), 0) = 0);
BEGIN;
:explain_settings
SELECT check_that('minhash_bands && uses the GIN index of every shard',
  (SELECT count(DISTINCT m[1]) FROM explain_all(format('SELECT id FROM mh WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash(%L), 16, 8)',
      (SELECT body FROM pool WHERE id = 1))) l, regexp_matches(l, 'Bitmap Index Scan on (mh_bands_[0-9]+)') m)
  = shard_count('mh'));
COMMIT;
SELECT check_that('jaccard(body, q) >= 0.5 pushed down = local, 30 queries',
  differing('SELECT array_agg(id ORDER BY id)::text FROM mh WHERE jaccard(body, $1) >= 0.5',
            'SELECT array_agg(id ORDER BY id)::text FROM mh_local WHERE jaccard(body, $1) >= 0.5',
            (SELECT array_agg(body ORDER BY id) FROM pool WHERE id % 20 = 1), 0) = 0);

-- Verified similarity search: simdup_enable_similar puts its GIN index on every shard; the
-- search as a query (what simdup_similar runs) = local; simdup_similar itself returns ctids,
-- which name no row across shards, so it is refused with that query as its hint.
SELECT index AS sim_index, bands AS sim_bands, rows AS sim_rows FROM simdup_enable_similar('mh', 'body', 0.5) \gset
SELECT simdup_enable_similar('mh_local', 'body', 0.5);
SELECT check_that('simdup_enable_similar on a distributed table: its GIN index on every shard',
  (SELECT bool_and(success AND result = '1') FROM run_command_on_shards('mh',
     $$SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = '%s'::regclass AND c.relname LIKE 'mh_body_similar_idx%%'$$)));
SELECT check_that('similarity search as a query (the index expression && the query''s bands, jaccard >= 0.5) on the distributed table = local, 30 queries',
  differing(format('SELECT array_agg(id ORDER BY id)::text FROM mh WHERE _simdup_similar_bands(body, 5, %1$s, %2$s) && _simdup_similar_bands($1, 5, %1$s, %2$s) AND jaccard(shingles(body, 5), shingles($1, 5)) >= 0.5', :sim_bands, :sim_rows),
            format('SELECT array_agg(id ORDER BY id)::text FROM mh_local WHERE _simdup_similar_bands(body, 5, %1$s, %2$s) && _simdup_similar_bands($1, 5, %1$s, %2$s) AND jaccard(shingles(body, 5), shingles($1, 5)) >= 0.5', :sim_bands, :sim_rows),
            (SELECT array_agg(body ORDER BY id) FROM pool WHERE id % 20 = 1), 0) = 0
  AND (SELECT count(*) FROM simdup_similar('mh_local', (SELECT body FROM pool WHERE id = 1))) > 0);
DO $$ DECLARE msg text; hint text; BEGIN
  PERFORM simdup_similar('mh', (SELECT body FROM pool WHERE id = 1));
  RAISE EXCEPTION 'accepted';
EXCEPTION WHEN feature_not_supported THEN
  GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  PERFORM check_that('simdup_similar on a distributed table: 0A000, the query to run instead as its hint',
    msg = 'simdup_similar is not supported on distributed table public.mh' AND hint LIKE 'Query the table instead%FROM public.mh WHERE jaccard(body, q, 5) >= 0.5 ORDER BY similarity DESC', msg || ' / ' || hint);
END $$;

-- ---------------------------------------------------------------------------------------------
-- Dedup on a distributed table: simdup_enable(..., on_duplicate) puts the trigger on every
-- shard, where it refuses every write but the checked writes of the coordinator: plain INSERT,
-- COPY and simdup_insert (the cross-shard checks are in dedup_checks.sql)
-- ---------------------------------------------------------------------------------------------
CREATE TABLE guarded (id bigint PRIMARY KEY, body text NOT NULL, note text);
SELECT create_distributed_table('guarded', 'id');
SET citus.enable_unsafe_triggers = off;   -- simdup_enable needs no setting from its caller
SELECT simdup_enable('guarded', 'body', on_duplicate => 'reject', max_distance => 3);
SELECT check_that('simdup_enable with citus.enable_unsafe_triggers off: set for its own CREATE TRIGGER only, then back off',
  current_setting('citus.enable_unsafe_triggers') = 'off');
RESET citus.enable_unsafe_triggers;
SELECT check_that('simdup_enable(..., on_duplicate) on a hash-distributed table: the trigger on every shard, registry row on the coordinator',
  (SELECT bool_and(success AND result = 'simdup_dedup_' || shardid) FROM run_command_on_shards('guarded',
     $$SELECT string_agg(tgname, ',') FROM pg_trigger WHERE tgrelid = '%s'::regclass AND NOT tgisinternal$$))
  AND (SELECT on_duplicate = 'reject' AND max_distance = 3 FROM simdup_tables WHERE tbl = 'guarded'::regclass));
SELECT simdup_insert('guarded', jsonb_build_object('id', id, 'body', body)) FROM pool WHERE id = 1;
CREATE FUNCTION refused_with(sql text, code text, want text, OUT ok boolean, OUT detail text) LANGUAGE plpgsql AS $$
DECLARE st text; msg text; hint text;
BEGIN
  EXECUTE sql;
  ok := false; detail := 'accepted: ' || sql;
EXCEPTION WHEN others THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  ok := st = code AND msg = want;
  detail := format('%s: %s / %s', st, msg, hint);
END $$;
-- Plain writes on the coordinator are checked writes (src/citus/): stored when
-- new, 23505 for a near-duplicate on any shard.
INSERT INTO guarded (id, body) VALUES (100001, 'a text nobody has written before, for the guard');
INSERT INTO guarded (id, body) VALUES (100002, 'one new text for the guard, about harbours and ships'), (100003, 'another new text, this one about mountains and snow');
INSERT INTO guarded (id, body) SELECT id + 300000, body FROM pool WHERE id IN (2, 3) ORDER BY id;
SELECT check_that('plain INSERT ... VALUES (one row, many rows) and INSERT ... SELECT on the coordinator: checked and stored',
  array(SELECT id FROM guarded ORDER BY id) = '{1,100001,100002,100003,300002,300003}',
  (SELECT string_agg(id::text, ',' ORDER BY id) FROM guarded));
SELECT check_that('plain INSERT of a stored row''s text under another key: 23505', ok, detail)
FROM refused_with($$INSERT INTO guarded (id, body) SELECT 200001, body FROM pool WHERE id = 1$$, '23505',
                  'near-duplicate row violates simdup_dedup on relation "guarded"');
SELECT check_that('UPDATE of the text on the coordinator: checked, 23505 for another row''s text', ok, detail)
FROM refused_with($$UPDATE guarded SET body = (SELECT body FROM pool WHERE id = 1) WHERE id = 100001$$, '23505',
                  'near-duplicate row violates simdup_dedup on relation "guarded"');
DELETE FROM guarded WHERE id > 1;
UPDATE guarded SET note = 'kept' WHERE id = 1;
SELECT check_that('UPDATE of other columns works; nothing refused was stored',
  (SELECT string_agg(id || ':' || note, ',') FROM guarded) = '1:kept');
DELETE FROM guarded WHERE id = 1;
SELECT check_that('DELETE works', (SELECT count(*) FROM guarded) = 0);
SET citus.enable_unsafe_triggers = off;
SELECT simdup_disable('guarded');
RESET citus.enable_unsafe_triggers;
SELECT check_that('simdup_disable (citus.enable_unsafe_triggers off): the trigger, column and indexes are gone from every shard, the registry row too; plain INSERTs work again',
  (SELECT bool_and(success AND result = '0|0|0') FROM run_command_on_shards('guarded',
     $$SELECT (SELECT count(*) FROM pg_trigger WHERE tgrelid = '%1$s'::regclass AND NOT tgisinternal) || '|'
           || (SELECT count(*) FROM pg_attribute WHERE attrelid = '%1$s'::regclass AND attname = 'simhash' AND NOT attisdropped) || '|'
           || (SELECT count(*) FROM pg_index WHERE indrelid = '%1$s'::regclass AND NOT indisprimary)$$))
  AND NOT EXISTS (SELECT 1 FROM simdup_tables WHERE tbl = 'guarded'::regclass));
INSERT INTO guarded (id, body) VALUES (7, 'a plain insert after simdup_disable');

-- A reference table: one placement per node, each with the trigger and every row, so the
-- check per placement is a check of the whole table: the same rows stored as locally.
CREATE TABLE ref (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_reference_table('ref');
SELECT simdup_enable('ref', 'body', on_duplicate => 'skip', max_distance => 3);
CREATE TABLE ref_local (id bigint PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('ref_local', 'body', on_duplicate => 'skip', max_distance => 3);
SELECT check_that('reference table: the trigger is on the placement of each of the 3 nodes, as simdup_dedup_<shardid>',
  (SELECT count(*) FILTER (WHERE success AND result = 'simdup_dedup_' || shardid) FROM run_command_on_placements('ref',
     $$SELECT string_agg(tgname, ',') FROM pg_trigger WHERE tgrelid = '%s'::regclass AND NOT tgisinternal AND tgname LIKE 'simdup_dedup%%'$$)) = 3);
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT id, body FROM pool ORDER BY id LOOP
    INSERT INTO ref (id, body) VALUES (r.id, r.body);
    INSERT INTO ref_local (id, body) VALUES (r.id, r.body);
  END LOOP; END $$;
SELECT check_that('reference table, skip, k = 3, single-row INSERTs: the same rows stored as by the trigger on a local table',
  array(SELECT id FROM ref ORDER BY id) = array(SELECT id FROM ref_local ORDER BY id)
  AND (SELECT count(*) FROM ref) < (SELECT count(*) FROM pool));
SELECT check_that('reference table: every placement holds the same rows',
  (SELECT count(DISTINCT result) FROM run_command_on_placements('ref', $$SELECT string_agg(id::text, ',' ORDER BY id) FROM %s$$)) = 1);

-- A near-duplicate rejected on a reference table is reported with the table's name, not the
-- placement's.
CREATE TABLE ref_reject (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_reference_table('ref_reject');
SELECT simdup_enable('ref_reject', 'body', on_duplicate => 'reject', max_distance => 3);
SELECT a.id AS ref_a, b.id AS ref_b FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) BETWEEN 1 AND 3
ORDER BY 1, 2 LIMIT 1 \gset
INSERT INTO ref_reject (id, body) SELECT id, body FROM pool WHERE id = :ref_a;
SET x.ref_b = :ref_b;
DO $$ DECLARE b text := (SELECT body FROM pool WHERE id = current_setting('x.ref_b')::int); BEGIN
  INSERT INTO ref_reject (id, body) VALUES (current_setting('x.ref_b')::int, b);
  RAISE EXCEPTION 'accepted';
EXCEPTION WHEN unique_violation THEN
  PERFORM check_that('reference table, reject: 23505 naming the table, not the placement',
    SQLERRM = 'near-duplicate row violates simdup_dedup on relation "ref_reject"', SQLERRM);
END $$;

-- ---------------------------------------------------------------------------------------------
-- A table enabled with the trigger BEFORE it is distributed (the case simdup_enable cannot
-- see): with citus.enable_unsafe_triggers on, create_distributed_table copies the trigger to
-- every shard, where it is the same guard: plain writes refused, simdup_insert checked across
-- shards with the registered mode and k
-- ---------------------------------------------------------------------------------------------
CREATE TABLE marked (id bigint PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('marked', 'body', on_duplicate => 'mark', max_distance => 3);
INSERT INTO marked (id, body) SELECT id, body FROM pool WHERE id <= 100 ORDER BY id;   -- checked locally
CREATE TABLE marked_before AS SELECT id, dup_of FROM marked;
-- the same for dedup by similarity (its own trigger, the same rule for Citus's copy)
CREATE TABLE sim_marked (id bigint PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable_similar('sim_marked', 'body', 0.5, on_duplicate => 'mark');
INSERT INTO sim_marked (id, body) SELECT id, body FROM pool WHERE id <= 100 ORDER BY id;
CREATE TABLE sim_marked_before AS SELECT id, dup_of FROM sim_marked;
-- skip mode, with near-duplicates stored before simdup_enable (which does not check existing
-- rows): Citus's copy into the shards must not skip any of them
CREATE TABLE skipped (id bigint PRIMARY KEY, body text NOT NULL);
INSERT INTO skipped (id, body) SELECT id, body FROM pool WHERE id <= 100;
SELECT simdup_enable('skipped', 'body', on_duplicate => 'skip', max_distance => 3);
DO $$ BEGIN
  SET LOCAL citus.enable_unsafe_triggers = off;
  PERFORM create_distributed_table('marked', 'id');
  RAISE EXCEPTION 'create_distributed_table accepted a table with a trigger';
EXCEPTION WHEN others THEN
  PERFORM check_that('with citus.enable_unsafe_triggers off (Citus''s default), a table with simdup_dedup cannot be distributed',
                     SQLERRM = 'cannot distribute relation "marked" because it has triggers', SQLERRM);
END $$;
SELECT create_distributed_table('marked', 'id');   -- citus.enable_unsafe_triggers = on (postgresql.conf)
SELECT create_distributed_table('skipped', 'id');
SELECT create_distributed_table('sim_marked', 'id');
-- Citus copies the rows into each shard over connections that do not see the shard metadata it
-- is writing: the shard trigger recognises that copy (src/citus/shard.rs, citus_filling) and
-- keeps what was decided when the rows were first written, against the whole table.
-- Of distributed mark-mode table tbl: the rows whose dup_of is not the one they had in
-- tbl_before ("id: now, was before"), how many rows had theirs on another shard, and its rows.
CREATE FUNCTION dup_of_kept(tbl text, OUT changed text, OUT cross_shard bigint, OUT n bigint)
LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format($q$SELECT (SELECT string_agg(format('%%s: %%s, was %%s', id, m.dup_of, b.dup_of), '; ')
                            FROM %1$I m JOIN %2$I b USING (id) WHERE m.dup_of IS DISTINCT FROM b.dup_of),
                           (SELECT count(*) FROM %2$I b WHERE b.dup_of IS NOT NULL
                              AND get_shard_id_for_distribution_column(%1$L, b.id)
                                  <> get_shard_id_for_distribution_column(%1$L, b.dup_of)),
                           (SELECT count(*) FROM %1$I)$q$, tbl, tbl || '_before')
  INTO changed, cross_shard, n;
END $f$;
SELECT check_that('create_distributed_table of a mark-mode table: every copied row keeps the dup_of it had, cross-shard ones included (no shard re-decides it)',
  changed IS NULL AND n = 100 AND cross_shard > 0, changed) FROM dup_of_kept('marked');
SELECT check_that('create_distributed_table of a similarity mark-mode table: every copied row keeps its dup_of, cross-shard ones included',
  changed IS NULL AND n = 100 AND cross_shard > 0, changed) FROM dup_of_kept('sim_marked');
SELECT check_that('create_distributed_table of a skip-mode table holding near-duplicates: no copied row skipped',
  (SELECT count(*) FROM skipped) = 100
  AND EXISTS (SELECT 1 FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) <= 3
              WHERE b.id <= 100 AND get_shard_id_for_distribution_column('skipped', a.id)
                                  = get_shard_id_for_distribution_column('skipped', b.id)));
SELECT check_that('distributing a non-empty table with the trigger: its rows are copied to the shards (the guard does not refuse Citus''s copy), the trigger and dup_of reach every shard',
  (SELECT count(*) FROM marked) = 100
  AND (SELECT bool_and(success AND result = format('simdup_dedup_%s|dup_of', shardid))
       FROM run_command_on_shards('marked', $$SELECT (SELECT string_agg(tgname, ',') FROM pg_trigger WHERE tgrelid = '%1$s'::regclass AND NOT tgisinternal)
           || '|' || (SELECT attname FROM pg_attribute WHERE attrelid = '%1$s'::regclass AND attname = 'dup_of')$$)));
-- The other rows by one plain INSERT ... SELECT on the coordinator, ascending id: dup_of must be
-- the smallest earlier id within 3 bits ON ANY SHARD.
INSERT INTO marked (id, body) SELECT id, body FROM pool WHERE id > 100 ORDER BY id;
CREATE TABLE marked_expected AS
WITH s AS (SELECT id, fp, get_shard_id_for_distribution_column('marked', id) AS shard FROM pool)
SELECT r.id,
       (SELECT min(p.id) FROM s p WHERE p.shard = r.shard AND p.id < r.id AND hamming(p.fp, r.fp) <= 3) AS same_shard,
       (SELECT min(p.id) FROM s p WHERE p.id < r.id AND hamming(p.fp, r.fp) <= 3) AS anywhere
FROM s r;
SELECT check_that('mark, a plain INSERT ... SELECT after distribution: dup_of = the earliest near-duplicate on any shard',
  (SELECT count(*) FROM marked m JOIN marked_expected e USING (id) WHERE e.id > 100 AND m.dup_of IS DISTINCT FROM e.anywhere) = 0
  AND (SELECT count(*) FROM marked) = (SELECT count(*) FROM pool)
  AND (SELECT count(*) FROM marked_expected WHERE id > 100 AND same_shard IS DISTINCT FROM anywhere) > 0,
  (SELECT string_agg(format('%s: %s vs %s', m.id, m.dup_of, e.anywhere), '; ') FROM marked m JOIN marked_expected e USING (id)
   WHERE e.id > 100 AND m.dup_of IS DISTINCT FROM e.anywhere));
SELECT format('info: %s of the %s rows written after distribution have their earliest near-duplicate only on another shard (a per-shard check would miss them)',
              count(*) FILTER (WHERE same_shard IS DISTINCT FROM anywhere), count(*)) AS cross_shard
FROM marked_expected WHERE id > 100 \gset
\echo :cross_shard

-- What lets Citus's copy through is Citus's connection, a relation new in the transaction, and
-- the owner's rights together. A table an ordinary role fills in the transaction that created it
-- (here through a SECURITY DEFINER function, so the role is not its owner) is checked, even
-- with Citus's application_name and a shard-like name.
CREATE ROLE fresh_writer;
GRANT SELECT ON pool TO fresh_writer;
CREATE FUNCTION make_fresh(n text) RETURNS void LANGUAGE plpgsql SECURITY DEFINER
SET search_path = public, pg_catalog AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL)', n);
  PERFORM simdup_enable(n, 'body', on_duplicate => 'skip', max_distance => 3);
  EXECUTE format('GRANT SELECT, INSERT ON %I TO fresh_writer', n);
END $$;
GRANT EXECUTE ON FUNCTION make_fresh(text) TO fresh_writer;
CREATE TABLE fresh_ref (id bigint PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('fresh_ref', 'body', on_duplicate => 'skip', max_distance => 3);
INSERT INTO fresh_ref (id, body) SELECT id, body FROM pool WHERE id <= 100 ORDER BY id;
BEGIN;
SET LOCAL ROLE fresh_writer;
SET LOCAL application_name = 'citus_internal gpid=10000000001';
SELECT make_fresh('fresh_102999');
INSERT INTO fresh_102999 (id, body) SELECT id, body FROM pool WHERE id <= 100 ORDER BY id;
COMMIT;
SELECT check_that('a table named like a shard, created and filled in one transaction by a role that is not its owner, with Citus''s application_name: checked (the rows the trigger keeps on a table of its own)',
  array(SELECT id FROM fresh_102999 ORDER BY id) = array(SELECT id FROM fresh_ref ORDER BY id)
  AND (SELECT count(*) FROM fresh_ref) < 100,
  (SELECT count(*) FROM fresh_102999) || ' rows against ' || (SELECT count(*) FROM fresh_ref));
