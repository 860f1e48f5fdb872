#!/usr/bin/env bash
# Benchmark of near-duplicate search on the block indexes (issue #3).
#
#   bench/search_bench.sh [N]        (default N = 1000000 random fingerprints)
#
# Builds a table of N random 64-bit fingerprints plus the fingerprints of the real news in
# bench/data/{zh,en}_news.jsonl (if present; SIMDUP_BENCH_DATA overrides the directory) and two
# edited copies of each, then measures:
#   - p50 / p99 latency of lookups simdup_match(fp, <constant>, k) for k = 3, 6, 10 (index:
#     BitmapOr over the four block indexes) against a sequential scan of hamming(fp, q) <= k,
#     both single-process (max_parallel_workers_per_gather = 0), warm cache, planning included;
#     the two answers are compared for every query (exactness at scale);
#   - table and index sizes;
#   - simdup_fingerprint_pairs / simdup_pairs / simdup_groups on the whole table (k from
#     SIMDUP_BENCH_PAIR_K, default "3 6");
#   - skew: SIMDUP_BENCH_SKEW (default 10000) identical fingerprints added to N/10 random ones.
#
# The table has a plain bigint column: random fingerprints are bulk-loaded directly (the
# generated column of simdup_enable(tbl, text_column) needs text). simdup_enable(tbl, NULL, 'fp')
# then builds exactly the indexes it builds for a generated column.
#
# Runs on its own throwaway cluster "<SIMDUP_CLUSTER>-bench" (port SIMDUP_BENCH_PORT, default
# SIMDUP_REGRESS_PORT) after `cargo pgrx install --release` (SIMDUP_BENCH_NO_INSTALL=1 skips it).
# Other knobs: SIMDUP_BENCH_QUERIES (index queries per k, default 200), SIMDUP_BENCH_SEQ_QUERIES
# (sequential scans per k, default 15), SIMDUP_BENCH_SHARED_BUFFERS (default 2GB),
# SIMDUP_BENCH_WORK_MEM (default 256MB), SIMDUP_BENCH_KEEP=1 (leave the cluster running).
set -euo pipefail
N="${1:-1000000}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/setup.sh >/dev/null 2>&1
DATA="${SIMDUP_BENCH_DATA:-$ROOT/bench/data}"
NQ="${SIMDUP_BENCH_QUERIES:-200}"
NSEQ="${SIMDUP_BENCH_SEQ_QUERIES:-15}"
PAIR_K="${SIMDUP_BENCH_PAIR_K:-3 6}"
SKEW="${SIMDUP_BENCH_SKEW:-10000}"
cluster="${SIMDUP_CLUSTER:-regress}-bench"
port="${SIMDUP_BENCH_PORT:-${SIMDUP_REGRESS_PORT:-54329}}"

if [ "${SIMDUP_BENCH_NO_INSTALL:-0}" != 1 ]; then
  cargo pgrx install --release --pg-config "$PG_CONFIG" $([ "$(id -u)" -eq 0 ] || echo --sudo) >/dev/null
fi
PG_EXTRA_OPTS="-c shared_buffers=${SIMDUP_BENCH_SHARED_BUFFERS:-2GB} -c max_wal_size=8GB -c checkpoint_timeout=30min" \
  scripts/cluster.sh start "$cluster" "$port"
[ "${SIMDUP_BENCH_KEEP:-0}" = 1 ] || trap 'scripts/cluster.sh stop "$cluster"' EXIT
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "/tmp/simdup-$cluster/sock" -p "$port" -U postgres "$@"; }
psql -c "CREATE DATABASE bench" postgres
db() { psql -d bench "$@"; }
db -c "CREATE EXTENSION simdup"
echo "== simdup search benchmark: N = $N random fingerprints, $(nproc) cores, $(date -u +%F)"

# ---------------------------------------------------------------------------------------------
# Data
db <<SQL
\timing on
CREATE TABLE bench (id bigint PRIMARY KEY, fp bigint, kind text NOT NULL DEFAULT 'random');
\echo load $N random fingerprints (hashint8extended: uniform over all 64 bits)
INSERT INTO bench (id, fp) SELECT g, hashint8extended(g, 7) FROM generate_series(1, $N) g;
CREATE TABLE docs (title text, body text);
SQL
if [ -f "$DATA/zh_news.jsonl" ]; then
  cat "$DATA"/zh_news.jsonl "$DATA"/en_news.jsonl 2>/dev/null | python3 -c '
import json, sys
esc = lambda s: s.replace("\\", "\\\\").replace("\t", " ").replace("\n", "\\n").replace("\r", " ")
for line in sys.stdin:
    d = json.loads(line)
    print(esc(d.get("title") or "") + "\t" + esc(d.get("body") or ""))
' | db -c "\copy docs FROM STDIN"
fi
db <<SQL
\timing on
\echo fingerprints of the real documents and of two edited copies of each
INSERT INTO bench (id, fp, kind)
SELECT $N + row_number() OVER (), fp, kind FROM (
  SELECT simhash(title || E'\n' || body) AS fp, 'text' AS kind FROM docs
  UNION ALL  -- last sentence dropped
  SELECT simhash(title || E'\n' || regexp_replace(body, '[^。！？.!?]*[。！？.!?]?\s*$', '')), 'text-edit' FROM docs
  UNION ALL  -- first tenth dropped
  SELECT simhash(title || E'\n' || substr(body, length(body) / 10)), 'text-edit' FROM docs
) s WHERE fp IS NOT NULL;
VACUUM ANALYZE bench;
\echo simdup_enable: four B-tree indexes (simhash_block(fp, i)) INCLUDE (fp)
SELECT simdup_enable('bench', NULL, 'fp');
VACUUM ANALYZE bench;
\timing off
SELECT kind, count(*) FROM bench GROUP BY kind ORDER BY kind;
SELECT pg_size_pretty(pg_table_size('bench')) AS table_size,
       pg_size_pretty(sum(pg_relation_size(b.index))) AS block_indexes,
       round(sum(pg_relation_size(b.index)) / pg_table_size('bench')::numeric, 2) AS indexes_per_table,
       pg_size_pretty(min(pg_relation_size(b.index))) AS one_index
FROM simdup_block_indexes('bench') b;

-- Queries: fingerprints of random rows and of real documents (which have edited copies).
-- (interleaved, so that the first $NSEQ, also run as sequential scans, hold both kinds)
CREATE TABLE queries AS
SELECT row_number() OVER (ORDER BY r, kind) AS qid, fp FROM (
  (SELECT fp, kind, row_number() OVER (ORDER BY hashint8(id)) AS r FROM bench WHERE kind = 'random' ORDER BY hashint8(id) LIMIT $NQ / 2)
  UNION ALL
  (SELECT fp, kind, row_number() OVER (ORDER BY hashint8(id)) AS r FROM bench WHERE kind = 'text' ORDER BY hashint8(id) LIMIT $NQ / 2)) s;
INSERT INTO queries SELECT $NQ + g, hashint8extended(g, 99) FROM generate_series(1, $NQ - (SELECT count(*) FROM queries)) g;

CREATE TABLE timings (method text, k int, qid bigint, ms float8, matches bigint);
CREATE FUNCTION time_queries(method text, k int, n int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
  q record; t0 timestamptz; cnt bigint; sql text;
BEGIN
  FOR q IN SELECT qid, fp FROM queries ORDER BY qid LIMIT n LOOP
    sql := CASE method
      WHEN 'index' THEN format('SELECT count(*) FROM bench WHERE simdup_match(fp, %s, %s)', q.fp, k)
      ELSE format('SELECT count(*) FROM bench WHERE hamming(fp, %s) <= %s', q.fp, k) END;
    t0 := clock_timestamp();
    EXECUTE sql INTO cnt;
    INSERT INTO timings VALUES (method, k, q.qid, 1000 * extract(epoch FROM clock_timestamp() - t0), cnt);
  END LOOP;
END \$\$;
SQL

# ---------------------------------------------------------------------------------------------
# Lookups
db <<SQL
SET max_parallel_workers_per_gather = 0;
-- warm-up: the table and the indexes into shared buffers
SELECT count(*) FROM bench WHERE hamming(fp, 0) <= 3;
SELECT time_queries('index', 10, $NQ);
TRUNCATE timings;
SELECT fp AS q1 FROM queries WHERE qid = 1 \gset
\echo one lookup, k = 3:
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT count(*) FROM bench WHERE simdup_match(fp, :q1, 3);
SELECT time_queries('index', 3, $NQ), time_queries('seqscan', 3, $NSEQ),
       time_queries('index', 6, $NQ), time_queries('seqscan', 6, $NSEQ),
       time_queries('index', 10, $NQ), time_queries('seqscan', 10, $NSEQ);
\echo lookup latency (ms, planning + execution, server side, single process):
SELECT k, method, count(*) AS queries,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p50_ms,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p99_ms,
       round(avg(matches), 1) AS avg_matches
FROM timings GROUP BY k, method ORDER BY k, method;
\echo index vs sequential scan (same queries), and exactness:
SELECT i.k,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY s.ms) / percentile_cont(0.5) WITHIN GROUP (ORDER BY i.ms))::numeric, 1) AS "seq/index p50",
       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY s.ms) / percentile_cont(0.99) WITHIN GROUP (ORDER BY i.ms))::numeric, 1) AS "seq/index p99",
       count(*) FILTER (WHERE i.matches <> s.matches) AS count_mismatches
FROM timings i JOIN timings s ON s.k = i.k AND s.qid = i.qid AND s.method = 'seqscan'
WHERE i.method = 'index' GROUP BY i.k ORDER BY i.k;
SQL

# ---------------------------------------------------------------------------------------------
# Batch
for k in $PAIR_K; do
db <<SQL
SET work_mem = '${SIMDUP_BENCH_WORK_MEM:-256MB}';
\timing on
\echo simdup_fingerprint_pairs(bench, $k): distinct fingerprints, in-memory block join
SELECT count(*) AS fingerprint_pairs FROM simdup_fingerprint_pairs('bench', $k);
\echo simdup_pairs(bench, $k):
SELECT count(*) AS pairs, count(*) FILTER (WHERE distance = 0) AS identical FROM simdup_pairs('bench', $k);
\echo simdup_groups(bench, $k):
SELECT count(*) AS grouped_rows, count(DISTINCT group_id) AS groups FROM simdup_groups('bench', $k);
SQL
done

# ---------------------------------------------------------------------------------------------
# Skew
if [ "$SKEW" -gt 0 ]; then
db <<SQL
SET work_mem = '${SIMDUP_BENCH_WORK_MEM:-256MB}';
CREATE TABLE skew (id bigint PRIMARY KEY, fp bigint);
INSERT INTO skew SELECT g, CASE WHEN g <= $SKEW THEN 4242 ELSE hashint8extended(g, 5) END
FROM generate_series(1, $SKEW + $N / 10) g;
SELECT simdup_enable('skew', NULL, 'fp');
VACUUM ANALYZE skew;
\echo skew: $SKEW identical fingerprints among $((SKEW + N / 10)) rows
\timing on
SELECT count(*) AS fingerprint_pairs FROM simdup_fingerprint_pairs('skew', 3);
SELECT count(*) AS grouped_rows, count(DISTINCT group_id) AS groups FROM simdup_groups('skew', 3);
SELECT count(*) AS pairs FROM simdup_pairs('skew', 3);
SET max_parallel_workers_per_gather = 0;
SELECT count(*) AS lookup_matches FROM skew WHERE simdup_match(fp, 4242, 3);
SQL
fi
