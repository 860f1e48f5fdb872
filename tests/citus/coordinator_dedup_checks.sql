-- The prototype simdup_citus_insert (coordinator_dedup.sql) gives on a distributed table the
-- answers the dedup trigger gives on a local table fed the same rows in the same order, for
-- skip and mark, k = 3 and 10, near-duplicates on any shard. check_that() is from checks.sql.
\set ON_ERROR_STOP 1
\set VERBOSITY terse
SET citus.shard_count = 4;
SET client_min_messages = warning;

CREATE FUNCTION make_pair(name text, mode text, k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- distributed, enabled without the trigger; local, with the trigger
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL%s)', name,
                 CASE WHEN mode = 'mark' THEN ', dup_of bigint' ELSE '' END);
  PERFORM create_distributed_table(name, 'id');
  PERFORM simdup_enable(name::regclass, 'body');
  EXECUTE format('CREATE TABLE %I (id bigint PRIMARY KEY, body text NOT NULL)', name || '_local');
  PERFORM simdup_enable((name || '_local')::regclass, 'body', on_duplicate => mode, max_distance => k);
END $$;

-- skip, k = 10: all pool rows in ONE statement (one transaction: later rows must see the
-- earlier ones, on every shard).
SELECT make_pair('cd_skip', 'skip', 10);
SELECT count(simdup_citus_insert('cd_skip', to_jsonb(p), 'skip', 10)) FROM (SELECT id, body FROM pool ORDER BY id) p;
INSERT INTO cd_skip_local (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('prototype skip, k = 10, one statement: the same rows stored as by the dedup trigger on a local table',
  array(SELECT id FROM cd_skip ORDER BY id) = array(SELECT id FROM cd_skip_local ORDER BY id)
  AND (SELECT count(*) FROM cd_skip) < (SELECT count(*) FROM pool),
  format('%s vs %s rows', (SELECT count(*) FROM cd_skip), (SELECT count(*) FROM cd_skip_local)));
SELECT check_that('prototype skip, k = 10: no two stored rows within 10 bits, across shards',
  NOT EXISTS (SELECT 1 FROM cd_skip a JOIN cd_skip_local b ON a.id < b.id AND hamming(a.simhash, b.simhash) <= 10
              WHERE b.id IN (SELECT id FROM cd_skip)));

-- mark, k = 3: one autocommit statement per row.
SELECT make_pair('cd_mark', 'mark', 3);
SELECT format('SELECT simdup_citus_insert(''cd_mark'', to_jsonb(p), ''mark'', 3) FROM (SELECT id, body FROM pool WHERE id = %s) p', id)
FROM pool ORDER BY id \gexec
INSERT INTO cd_mark_local (id, body) SELECT id, body FROM pool ORDER BY id;
SELECT check_that('prototype mark, k = 3, a transaction per row: dup_of = the dedup trigger''s on a local table, for every row',
  (SELECT count(*) FROM cd_mark d FULL JOIN cd_mark_local l USING (id) WHERE d.dup_of IS DISTINCT FROM l.dup_of OR d.id IS NULL OR l.id IS NULL) = 0
  AND (SELECT count(dup_of) FROM cd_mark) > 0);
SELECT check_that('prototype mark: rows marked with a near-duplicate on ANOTHER shard (what the per-shard trigger misses)',
  (SELECT count(*) FROM (SELECT id, dup_of FROM cd_mark WHERE dup_of IS NOT NULL) d
   WHERE get_shard_id_for_distribution_column('cd_mark', d.id) <> get_shard_id_for_distribution_column('cd_mark', d.dup_of)) > 0);

-- reject: a near-duplicate on another shard raises 23505.
SELECT make_pair('cd_reject', 'reject', 3);
SELECT a.id AS x_a, b.id AS x_b FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) BETWEEN 1 AND 3
 AND get_shard_id_for_distribution_column('cd_reject', a.id) <> get_shard_id_for_distribution_column('cd_reject', b.id)
ORDER BY 1, 2 LIMIT 1 \gset
SELECT simdup_citus_insert('cd_reject', to_jsonb(p), 'reject', 3) FROM (SELECT id, body FROM pool WHERE id = :x_a) p;
SET x.x_b = :x_b;
DO $$ BEGIN
  PERFORM simdup_citus_insert('cd_reject', to_jsonb(p), 'reject', 3) FROM (SELECT id, body FROM pool WHERE id = current_setting('x.x_b')::int) p;
  RAISE EXCEPTION 'accepted';
EXCEPTION WHEN unique_violation THEN
  PERFORM check_that('prototype reject: a near-duplicate on another shard raises 23505', SQLERRM LIKE 'near-duplicate row violates simdup_citus_insert%', SQLERRM);
END $$;
BEGIN ISOLATION LEVEL REPEATABLE READ;
DO $$ BEGIN
  PERFORM simdup_citus_insert('cd_reject', '{"id": 1, "body": "x"}', 'reject', 3);
  RAISE EXCEPTION 'accepted';
EXCEPTION WHEN feature_not_supported THEN
  PERFORM check_that('prototype: REPEATABLE READ is refused (0A000)', true);
END $$;
ROLLBACK;

-- For the concurrency step of run.sh.
CREATE TABLE conc (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('conc', 'id');
SELECT simdup_enable('conc', 'body');
