#!/usr/bin/env bash
# Benchmark of near-duplicate search on the block indexes.
#
#   bench/search/search_bench.sh [N]        (default N = 1000000 random fingerprints)
#
# Builds a table of N random 64-bit fingerprints plus the fingerprints of the real news in
# bench/data/{zh,en}_news.jsonl (if present; SIMDUP_BENCH_DATA overrides the directory) and two
# edited copies of each, equips it with simdup_enable(bench, NULL, 'fp', blocks => m) (B-trees on
# _simdup_key(fp, offset), one per block), then measures, for each layout of SIMDUP_BENCH_LAYOUTS
# (default "4": the first is built by simdup_enable, the others by simdup_reindex(bench, m)):
#   - p50 / p99 latency of lookups at k = 3, 6, 10 (SIMDUP_BENCH_K) in the query form
#     `hamming(fp, q) <= k` ("hamming": the planner step's Tid Scan over _simdup_tids) and, for
#     the first layout, `simdup_match(fp, q, k)` ("match"), against a sequential scan of
#     `hamming(fp, q) <= k` under SET simdup.index_search = off ("seqscan"); single process
#     (max_parallel_workers_per_gather = 0), warm cache, planning included, server side; the
#     plan of each form is recorded (EXPLAIN) and printed beside its figures; also, at k = 10,
#     the first match in key order, `... WHERE hamming(fp, q) <= k ORDER BY id LIMIT 1`, served
#     ("first") and under SET simdup.index_search = off ("first_off": PostgreSQL's own plan,
#     which walks the primary key, expecting a third of the rows to match);
#   - exactness: every query's answer (count and sum of ids) of every index form and layout
#     against the sequential scan (the first SIMDUP_BENCH_SEQ_QUERIES queries) and against the
#     first layout's card form (all queries): 0 mismatches expected;
#   - table size and the block indexes' size (and their ratio) for each layout;
#   - the cost model's constants (src/search/cost.rs DESCENT_COST / CHECK_COST): medians of
#     _simdup_tids(bench, fp, q, k) alone for k in SIMDUP_BENCH_COST_K on SIMDUP_BENCH_COST_QUERIES
#     queries per layout, with each (layout, k)'s B-tree descents (key ranges, exactly as
#     src/search/scan.rs probes them) and expected candidates (probe values x rows / 2^width),
#     and a least-squares fit ms = a + descent x descents + check x candidates over them
#     (Python at the end of this script; the layouts differ in candidates per descent, which separates
#     the two);
#   - simdup_pairs / simdup_groups / _simdup_fingerprint_pairs on the whole table (k from
#     SIMDUP_BENCH_PAIR_K, default "10"; SIMDUP_BENCH_BATCH_TIMEOUT, default 10min, per
#     statement; pairs and groups are skipped when the fingerprint pairs alone time out), with
#     the backend's peak resident memory (VmHWM) during each;
#   - skew: SIMDUP_BENCH_SKEW (default 10000) identical fingerprints added to N/10 random ones.
#
# The table has a plain bigint column: random fingerprints are bulk-loaded directly (the
# generated column of simdup_enable(tbl, text_column) needs text). simdup_enable(tbl, NULL, 'fp')
# then builds exactly the indexes it builds for a generated column.
#
# Runs on its own throwaway cluster "<SIMDUP_CLUSTER>-search" (bench/common.sh: bench_cluster;
# SIMDUP_BENCH_KEEP=1 leaves it running). Other knobs: SIMDUP_BENCH_QUERIES (index queries per
# k, default 200), SIMDUP_BENCH_SEQ_QUERIES (sequential scans per k, default 15),
# SIMDUP_BENCH_SHARED_BUFFERS (default 2GB), SIMDUP_BENCH_WORK_MEM (default 256MB).
N="${1:-1000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
NQ="${SIMDUP_BENCH_QUERIES:-200}"
NSEQ="${SIMDUP_BENCH_SEQ_QUERIES:-15}"
KS="${SIMDUP_BENCH_K:-3 6 10}"
LAYOUTS="${SIMDUP_BENCH_LAYOUTS:-4}"
COST_K="${SIMDUP_BENCH_COST_K:-0 1 2 3 4 6 8 10}"
COST_Q="${SIMDUP_BENCH_COST_QUERIES:-60}"
PAIR_K="${SIMDUP_BENCH_PAIR_K:-10}"
BATCH_TIMEOUT="${SIMDUP_BENCH_BATCH_TIMEOUT:-10min}"
SKEW="${SIMDUP_BENCH_SKEW:-10000}"
first_layout="${LAYOUTS%% *}"

PG_EXTRA_OPTS="-c shared_buffers=${SIMDUP_BENCH_SHARED_BUFFERS:-2GB} -c max_wal_size=8GB -c checkpoint_timeout=30min" \
  bench_cluster search
bench_workdir searchbench
chmod 777 "$WORK"
bench_db
banner "simdup search benchmark: N = $N random fingerprints, layouts $LAYOUTS"
echo "simdup $(db -At -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'"), $(db -At -c 'SHOW server_version')"

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
  news_tsv "$DATA"/zh_news.jsonl "$DATA"/en_news.jsonl 2>/dev/null | db -c "\copy docs FROM STDIN"
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
\echo simdup_enable (blocks => $first_layout): B-tree indexes on _simdup_key(fp, offset)
SELECT simdup_enable('bench', NULL, 'fp', blocks => $first_layout);
VACUUM ANALYZE bench;
\timing off
SELECT kind, count(*) FROM bench GROUP BY kind ORDER BY kind;

CREATE TABLE sizes (layout int, table_bytes bigint, index_bytes bigint, one_index bigint);
-- Queries: fingerprints of random rows and of real documents (which have edited copies).
-- (interleaved, so that the first $NSEQ, also run as sequential scans, hold both kinds)
CREATE TABLE queries AS
SELECT row_number() OVER (ORDER BY r, kind) AS qid, fp FROM (
  (SELECT fp, kind, row_number() OVER (ORDER BY hashint8(id)) AS r FROM bench WHERE kind = 'random' ORDER BY hashint8(id) LIMIT $NQ / 2)
  UNION ALL
  (SELECT fp, kind, row_number() OVER (ORDER BY hashint8(id)) AS r FROM bench WHERE kind = 'text' ORDER BY hashint8(id) LIMIT $NQ / 2)) s;
INSERT INTO queries SELECT $NQ + g, hashint8extended(g, 99) FROM generate_series(1, $NQ - (SELECT count(*) FROM queries)) g;

CREATE TABLE timings (layout int, method text, k int, qid bigint, ms float8, matches bigint, idsum numeric);
CREATE TABLE plans (layout int, method text, k int, plan text);
-- method: hamming (the query form, served by the planner step), match (simdup_match), seqscan
-- (the query form with simdup.index_search off), first / first_off (the first match in key
-- order, ORDER BY id LIMIT 1, with simdup.index_search on / off).
CREATE FUNCTION time_queries(layout int, method text, k int, n int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
  q record; t0 timestamptz; cnt bigint; ids numeric; sql text; p text;
BEGIN
  PERFORM set_config('simdup.index_search', CASE WHEN method IN ('seqscan', 'first_off') THEN 'off' ELSE 'on' END, true);
  FOR q IN SELECT qid, fp FROM queries ORDER BY qid LIMIT n LOOP
    sql := CASE method
      WHEN 'match' THEN format('SELECT count(*), sum(id) FROM bench WHERE simdup_match(fp, %s, %s)', q.fp, k)
      WHEN 'first' THEN format('SELECT count(*), sum(id) FROM (SELECT id FROM bench WHERE hamming(fp, %s) <= %s ORDER BY id LIMIT 1) f', q.fp, k)
      WHEN 'first_off' THEN format('SELECT count(*), sum(id) FROM (SELECT id FROM bench WHERE hamming(fp, %s) <= %s ORDER BY id LIMIT 1) f', q.fp, k)
      ELSE format('SELECT count(*), sum(id) FROM bench WHERE hamming(fp, %s) <= %s', q.fp, k) END;
    IF q.qid = 1 THEN
      SELECT string_agg(trim(l), ' / ') INTO p FROM plan_lines(sql) l WHERE l ~ 'Scan';
      INSERT INTO plans VALUES (layout, method, k, p);
    END IF;
    t0 := clock_timestamp();
    EXECUTE sql INTO cnt, ids;
    INSERT INTO timings VALUES (layout, method, k, q.qid, 1000 * extract(epoch FROM clock_timestamp() - t0), cnt, coalesce(ids, 0));
  END LOOP;
  PERFORM set_config('simdup.index_search', 'on', true);
END \$\$;
CREATE FUNCTION plan_lines(sql text) RETURNS SETOF text LANGUAGE plpgsql AS \$\$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP RETURN NEXT l; END LOOP;
END \$\$;
-- _simdup_tids alone (no executor around it), for the cost constants.
CREATE TABLE tids_timings (layout int, k int, qid bigint, ms float8, tids int);
CREATE FUNCTION time_tids(layout int, k int, n int) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
  q record; t0 timestamptz; a tid[]; att int;
BEGIN
  SELECT attnum INTO att FROM pg_attribute WHERE attrelid = 'bench'::regclass AND attname = 'fp';
  FOR q IN SELECT qid, fp FROM queries ORDER BY qid LIMIT n LOOP
    t0 := clock_timestamp();
    a := _simdup_tids('bench'::regclass, att, q.fp, k);
    INSERT INTO tids_timings VALUES (layout, k, q.qid, 1000 * extract(epoch FROM clock_timestamp() - t0), cardinality(a));
  END LOOP;
END \$\$;
SQL

# ---------------------------------------------------------------------------------------------
# Lookups, layout by layout
for m in $LAYOUTS; do
  if [ "$m" != "$first_layout" ]; then
    db <<SQL
\timing on
\echo simdup_reindex(bench, $m):
SELECT simdup_reindex('bench', $m);
VACUUM ANALYZE bench;
SQL
  fi
  db <<SQL
INSERT INTO sizes SELECT $m, pg_table_size('bench'), sum(pg_relation_size(b.index)), min(pg_relation_size(b.index))
FROM simdup_block_indexes('bench') b;
SET max_parallel_workers_per_gather = 0;
-- warm-up: the table and the indexes into shared buffers
SET simdup.index_search = off;
SELECT count(*) FROM bench WHERE hamming(fp, 0) <= 3 \g /dev/null
RESET simdup.index_search;
SELECT time_queries($m, 'hamming', 10, $NQ) \g /dev/null
SELECT time_tids($m, 10, $NQ) \g /dev/null
DELETE FROM timings WHERE layout = $m; DELETE FROM plans WHERE layout = $m; DELETE FROM tids_timings WHERE layout = $m;
SELECT fp AS q1 FROM queries WHERE qid = 1 \gset
\echo layout $m, one lookup, k = 10:
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY ON)
SELECT count(*) FROM bench WHERE hamming(fp, :q1) <= 10;
SQL
  for k in $KS; do
    db -c "SET max_parallel_workers_per_gather = 0" -c "SELECT time_queries($m, 'hamming', $k, $NQ)" >/dev/null
    if [ "$m" = "$first_layout" ]; then
      db -c "SET max_parallel_workers_per_gather = 0" -c "SELECT time_queries($m, 'match', $k, $NQ)" \
         -c "SELECT time_queries(0, 'seqscan', $k, $NSEQ)" >/dev/null
      if [ "$k" = 10 ]; then
        db -c "SET max_parallel_workers_per_gather = 0" -c "SELECT time_queries($m, 'first', $k, $NQ)" \
           -c "SELECT time_queries($m, 'first_off', $k, $NSEQ)" >/dev/null
      fi
    fi
  done
  for k in $COST_K; do
    db -c "SELECT time_tids($m, $k, $COST_Q)" >/dev/null
  done
done

db <<SQL
\echo sizes (table: heap + TOAST + maps; block indexes: all of one layout):
SELECT layout AS blocks, pg_size_pretty(table_bytes) AS table_size, pg_size_pretty(index_bytes) AS block_indexes,
       round(index_bytes / table_bytes::numeric, 2) AS indexes_per_table, pg_size_pretty(one_index) AS one_index
FROM sizes ORDER BY layout = $first_layout DESC, layout;
\echo plans (EXPLAIN of the first query; seqscan: SET simdup.index_search = off):
SELECT layout AS blocks, method, k, plan FROM plans ORDER BY layout = 0, layout = $first_layout DESC, layout, method, k;
\echo lookup latency (ms, planning + execution, server side, single process; seqscan under blocks = 0):
SELECT layout AS blocks, k, method, count(*) AS queries,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p50_ms,
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 3) AS p99_ms,
       round(avg(matches), 1) AS avg_matches
FROM timings GROUP BY layout, k, method ORDER BY layout = 0, layout = $first_layout DESC, layout, k, method;
\echo index vs sequential scan (index percentiles over all queries, scan over its $NSEQ), and exactness:
WITH s AS (SELECT k, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
                  percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99 FROM timings WHERE method = 'seqscan' GROUP BY k),
     i AS (SELECT layout, method, k, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50,
                  percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99 FROM timings WHERE method NOT IN ('seqscan', 'first', 'first_off') GROUP BY layout, method, k)
SELECT i.layout AS blocks, i.method, i.k,
       round((s.p50 / i.p50)::numeric, 1) AS "seq/index p50",
       round((s.p99 / i.p99)::numeric, 1) AS "seq/index p99",
       (SELECT count(*) FROM timings a JOIN timings b ON b.method = 'seqscan' AND b.k = a.k AND b.qid = a.qid
        WHERE a.layout = i.layout AND a.method = i.method AND a.k = i.k
          AND (a.matches, a.idsum) IS DISTINCT FROM (b.matches, b.idsum)) AS count_mismatches,
       (SELECT count(*) FROM timings a JOIN timings b ON b.layout = $first_layout AND b.method = 'hamming' AND b.k = a.k AND b.qid = a.qid
        WHERE a.layout = i.layout AND a.method = i.method AND a.k = i.k
          AND (a.matches, a.idsum) IS DISTINCT FROM (b.matches, b.idsum)) AS mismatches_vs_first
FROM i JOIN s USING (k) ORDER BY i.layout = $first_layout DESC, i.layout, i.k, i.method;
\echo the first match in key order (ORDER BY id LIMIT 1, k = 10): served vs the plan without simdup, and the same answers:
WITH f AS (SELECT method, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50 FROM timings WHERE method IN ('first', 'first_off') GROUP BY method)
SELECT round((SELECT p50 FROM f WHERE method = 'first')::numeric, 3) AS first_p50_ms,
       round((SELECT p50 FROM f WHERE method = 'first_off')::numeric, 3) AS off_p50_ms,
       round(((SELECT p50 FROM f WHERE method = 'first_off') / (SELECT p50 FROM f WHERE method = 'first'))::numeric, 1) AS "off/first p50",
       (SELECT count(*) FROM timings a JOIN timings b ON b.method = 'first_off' AND b.qid = a.qid
        WHERE a.method = 'first' AND (a.matches, a.idsum) IS DISTINCT FROM (b.matches, b.idsum)) AS mismatches;
\copy (SELECT layout, k, qid, ms, tids FROM tids_timings) TO '$WORK/tids.tsv'
\copy (SELECT qid, fp FROM queries) TO '$WORK/queries.tsv'
SQL
db -At -c "SELECT reltuples::bigint FROM pg_class WHERE oid = 'bench'::regclass" >"$WORK/reltuples"
echo "cost of a B-tree descent vs a candidate check (_simdup_tids alone, $COST_Q queries per layout and k):"
python3 - "$(tr -dc 0-9 <"$WORK/reltuples")" "$WORK/queries.tsv" "$WORK/tids.tsv" <<'PY'
# The descents (key ranges) and expected candidates of each (layout, k), exactly as
# simdup_core::blocks::Layout::{thresholds_for, probes} choose them with the shipped constants
# (DESCENT_COST 1.0, CHECK_COST 0.02), then ms = a + descent * descents + check * candidates,
# least squares on relative error over the (layout, k) medians.
import itertools, statistics, sys
from math import comb
rows = float(sys.argv[1])
queries = {int(q): int(fp) & (2**64 - 1) for q, fp in (l.split("\t") for l in open(sys.argv[2]))}
times = {}
for l in open(sys.argv[3]):
    m, k, q, ms, _ = l.split("\t")
    times.setdefault((int(m), int(k)), []).append((int(q), float(ms)))
def widths(m):
    base, extra = 64 // m, 64 % m
    return [base + (i < extra) for i in range(m)]
def ball_size(w, t):
    return 0 if t < 0 else sum(comb(w, j) for j in range(min(t, w) + 1))
def thresholds(ws, k, descent=1.0, check=0.02):
    t = [-1] * len(ws)
    cost = lambda i, ti: ball_size(ws[i], ti) * (descent + rows / 2 ** ws[i] * check)
    budget = min(k, 64) + 1
    while budget > 0:
        cands = [i for i in range(len(ws)) if t[i] < ws[i]]
        if not cands:
            break
        i = min(cands, key=lambda i: (cost(i, t[i] + 1) - cost(i, t[i]), i))
        t[i] += 1; budget -= 1
        if t[i] == ws[i]:
            break
    return t
def ranges(ws, q, t):
    n, off = 0, 0
    for w, ti in zip(ws, t):
        v = ((q << off | q >> (64 - off)) & (2**64 - 1)) >> (64 - w) if off else q >> (64 - w)
        off += w
        if ti < 0:
            continue
        if ball_size(w, ti) * 8 > 2 ** w:
            n += 1; continue
        vals = sorted(v ^ sum(1 << b for b in bits) for r in range(ti + 1) for bits in itertools.combinations(range(w), r))
        n += 1 + sum(1 for a, b in zip(vals, vals[1:]) if b != a + 1)
    return n
pts = []
print(f"rows (reltuples) {rows:.0f}")
print("| blocks | k | thresholds | probe values | descents (key ranges, mean) | expected candidates | median ms | p90 ms |")
print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
for (m, k) in sorted(times):
    ws = widths(m)
    t = thresholds(ws, k)
    vals = sum(ball_size(w, ti) for w, ti in zip(ws, t))
    cand = sum(rows if ball_size(w, ti) * 8 > 2 ** w else ball_size(w, ti) * rows / 2 ** w for w, ti in zip(ws, t) if ti >= 0)
    ts = times[(m, k)]
    desc = statistics.mean(ranges(ws, queries[q], t) for q, _ in ts)
    ms = statistics.median(x for _, x in ts)
    p90 = statistics.quantiles([x for _, x in ts], n=10)[-1] if len(ts) > 1 else ms
    pts.append((m, k, desc, cand, ms))
    print(f"| {m} | {k} | {','.join(map(str, t))} | {vals} | {desc:.1f} | {cand:.0f} | {ms:.3f} | {p90:.3f} |")
# weighted least squares: minimise sum(((a + d D + c C) - ms) / ms)^2
X = [[1 / ms, D / ms, C / ms] for _, _, D, C, ms in pts]
y = [1.0] * len(pts)
A = [[sum(r[i] * r[j] for r in X) for j in range(3)] for i in range(3)]
b = [sum(r[i] * yy for r, yy in zip(X, y)) for i in range(3)]
def solve(A, b):
    n = len(b); M = [row[:] + [bb] for row, bb in zip(A, b)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(M[r][c])); M[c], M[p] = M[p], M[c]
        for r in range(n):
            if r != c:
                f = M[r][c] / M[c][c]
                M[r] = [x - f * y for x, y in zip(M[r], M[c])]
    return [M[i][n] / M[i][i] for i in range(n)]
if len(pts) >= 3 and len({(round(D / max(C, 1e-9), 3)) for _, _, D, C, _ in pts}) > 1:
    a, d, c = solve(A, b)
    print(f"fit: ms = {a:.4f} + {d * 1000:.3f} us x descents + {c * 1000:.4f} us x candidates"
          f"  (one descent = {d / c:.0f} candidate checks; shipped DESCENT_COST / CHECK_COST = 1.0 / 0.02 = 50)")
    worst = max(abs((a + d * D + c * C) / ms - 1) for _, _, D, C, ms in pts)
    print(f"fit: largest relative error over the {len(pts)} points {worst * 100:.0f} %")
    for m in sorted({p[0] for p in pts}) if d > 0 and c > 0 else []:
        ws = widths(m); k = 10; t = thresholds(ws, k, d, c)
        vals = sum(ball_size(w, ti) for w, ti in zip(ws, t))
        print(f"fit: {m} blocks, k = 10 with the fitted constants: thresholds {t}, {vals} probe values")
PY

# ---------------------------------------------------------------------------------------------
# Batch, with the backend's peak resident memory
batch() { # batch LABEL SQL: one statement in its own backend, its time and VmHWM
  local label="$1" sql="$2" pidf="$WORK/pid.$RANDOM" peak=0 pid hwm
  echo "$label"
  db -v ON_ERROR_STOP=0 >"$WORK/batch.out" 2>&1 <<SQL &
SET work_mem = '${SIMDUP_BENCH_WORK_MEM:-256MB}';
SET statement_timeout = '$BATCH_TIMEOUT';
\t on
\o $pidf
SELECT pg_backend_pid();
\o
\t off
\timing on
$sql
SQL
  local job=$!
  while kill -0 "$job" 2>/dev/null; do
    pid=$({ tr -dc 0-9 <"$pidf"; } 2>/dev/null || true)
    if [ -n "$pid" ]; then
      hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$hwm" ] && [ "$hwm" -gt "$peak" ] && peak=$hwm
    fi
    sleep 0.5
  done
  wait "$job" || true
  cat "$WORK/batch.out"
  echo "backend peak RSS (VmHWM): $((peak / 1024)) MB"
  ! grep -q ERROR "$WORK/batch.out"   # a timeout: the caller skips the larger statements
}
# simdup_pairs and simdup_groups both start with _simdup_fingerprint_pairs: if it does not finish
# within the timeout, they are not run.
for k in $PAIR_K; do
  batch "_simdup_fingerprint_pairs(bench, fp, $k): distinct fingerprints, in-memory block join" \
    "SELECT count(*) AS fingerprint_pairs FROM _simdup_fingerprint_pairs('bench', 'fp', $k);" || continue
  batch "simdup_groups(bench, $k):" \
    "SELECT count(*) AS grouped_rows, count(DISTINCT group_id) AS groups FROM simdup_groups('bench', $k);" || true
  batch "simdup_pairs(bench, $k):" \
    "SELECT count(*) AS pairs, count(*) FILTER (WHERE distance = 0) AS identical FROM simdup_pairs('bench', $k);" || true
done

# ---------------------------------------------------------------------------------------------
# Skew
if [ "$SKEW" -gt 0 ]; then
db <<SQL
SET work_mem = '${SIMDUP_BENCH_WORK_MEM:-256MB}';
CREATE TABLE skew (id bigint PRIMARY KEY, fp bigint);
INSERT INTO skew SELECT g, CASE WHEN g <= $SKEW THEN 4242 ELSE hashint8extended(g, 5) END
FROM generate_series(1, $SKEW + $N / 10) g;
SELECT simdup_enable('skew', NULL, 'fp') \g /dev/null
VACUUM ANALYZE skew;
\echo skew: $SKEW identical fingerprints among $((SKEW + N / 10)) rows
\timing on
SELECT count(*) AS fingerprint_pairs FROM _simdup_fingerprint_pairs('skew', 'fp', 3);
SELECT count(*) AS grouped_rows, count(DISTINCT group_id) AS groups FROM simdup_groups('skew', 3);
SELECT count(*) AS pairs FROM simdup_pairs('skew', 3);
SET max_parallel_workers_per_gather = 0;
SELECT count(*) AS lookup_matches FROM skew WHERE hamming(fp, 4242) <= 3;
SQL
fi
