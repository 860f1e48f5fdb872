#!/usr/bin/env bash
# One node at large N: what building, searching and deduplicating N random 64-bit fingerprints
# costs, and whether every served answer is the exact one.
#
#   bench/search/scale_bench.sh [N]          # default 1000000; 100000000 is the large run
#
# The table `t (id bigint PRIMARY KEY, fp bigint)`, loaded by INSERT ... SELECT of
# generate_series in chunks of 10M rows, in the transaction that creates it (wal_level =
# minimal: no WAL for the rows), then simdup_enable('t', NULL, 'fp', on_duplicate => 'skip',
# max_distance => 10, blocks => SIMDUP_BENCH_BLOCKS (4)). The fingerprints, SIMDUP_BENCH_SET:
#
#   random     (the default) fp = hashint8extended(id, 1): every bit fair, no near-duplicates;
#   clustered  text-like: 70 % of the rows are centres whose fingerprints have the bit skew
#              measured on fingerprints of text (26 of the 64 bits lean 62.5 : 37.5; 13 towards
#              1, 13 towards 0), 30 % are near copies of the first 10 % of the centres, a copy's
#              centre drawn with probability falling as 1/sqrt(rank) (the largest cluster a few
#              thousand rows, most centres without a copy), each copy d bits from its centre:
#              d = 0 for 20 %, 1-3 for 35 %, 4-6 for 25 %, 7-10 for 15 %, 11-14 for 5 %.
#
# It prints:
#
#   build     seconds to load, to build the primary key, to VACUUM, to simdup_enable (the block
#             indexes and the trigger), and sizes: table, primary key, block indexes, bytes a row;
#   lookups   `SELECT count(*) ... WHERE hamming(fp, q) <= k` at k = 3 and 10 and
#             `ORDER BY fp <~> q LIMIT 10`, each query timed in the server around its EXECUTE
#             (planning included), one connection, the block indexes prewarmed, a first round
#             of other queries discarded, then SIMDUP_BENCH_REPS (3) rounds of
#             SIMDUP_BENCH_QUERIES (200) distinct fingerprints each: half random, half a stored
#             row with 1 to 10 of its bits flipped; p50 / p99 a round, the median over rounds,
#             and p50 / p99 of all rounds pooled;
#   exact     the served answers (count and sum of ids within k; the 10 smallest distances)
#             of SIMDUP_BENCH_EXACT (20) measured queries against one sequential pass with
#             simdup.index_search = off: the number that differ (0 expected);
#   plans     EXPLAIN (ANALYZE, BUFFERS) of a k = 10 lookup and a top-10 query, random q:
#             the shared buffers a query touches;
#   dedup     SIMDUP_BENCH_TRIGGER_ROWS (2000) new random fingerprints by INSERT ... SELECT row
#             by row (simdup.bulk_check = off: one index search a row, as a single-row insert
#             does) against the same insert with the trigger disabled, each rolled back, each
#             round its own rows; the overhead a row (median of the rounds).
#   batch     with SIMDUP_BENCH_BATCH=1 (the default up to 20M rows): `simdup_pairs(t, 10)` and
#             `simdup_groups(t, 10)` counted, each in a new session with simdup.batch_threads =
#             SIMDUP_BENCH_BATCH_THREADS (2) and simdup.batch_memory = SIMDUP_BENCH_BATCH_MEMORY
#             (1GB): seconds, rows, and the backend's peak resident memory (VmHWM, the shared
#             buffers it touched included).
#
# Server: shared_buffers SIMDUP_BENCH_SHARED_BUFFERS (1GB below 10M rows, 3GB below 50M, 6GB
# from 50M; from about 30M rows these hold less than the block indexes and primary key, 112 bytes
# a row, and the lookups then measure the OS page cache too: 8GB at 31.25M, 12GB at 100M hold
# them), maintenance_work_mem SIMDUP_BENCH_MWM (2GB), autovacuum off,
# max_parallel_workers_per_gather = 0. It stops before loading unless the disk holding the
# cluster has N × 200 bytes + 10 GB free. Its own throwaway cluster "<SIMDUP_CLUSTER>-scale"
# (bench/common.sh: bench_cluster; SIMDUP_BENCH_KEEP=1 leaves it running). 100M rows: about
# 15 GB of disk; load, primary key and simdup_enable took 16 minutes on a busy 2-core VM.
N="${1:-1000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
REPS="${SIMDUP_BENCH_REPS:-3}"
QUERIES="${SIMDUP_BENCH_QUERIES:-200}"
EXACT="${SIMDUP_BENCH_EXACT:-20}"
B_TRIG="${SIMDUP_BENCH_TRIGGER_ROWS:-2000}"
BLOCKS="${SIMDUP_BENCH_BLOCKS:-4}"
SET="${SIMDUP_BENCH_SET:-random}"
if [ "$N" -le 20000000 ]; then BATCH="${SIMDUP_BENCH_BATCH:-1}"; else BATCH="${SIMDUP_BENCH_BATCH:-0}"; fi
if [ "$N" -ge 50000000 ]; then sb=6GB; elif [ "$N" -ge 10000000 ]; then sb=3GB; else sb=1GB; fi
SB="${SIMDUP_BENCH_SHARED_BUFFERS:-$sb}"

need_kb=$((N / 1024 * 200 / 1024 + 10 * 1024 * 1024))
free_kb=$(df -Pk /tmp | awk 'NR == 2 { print $4 }')
if [ "$free_kb" -lt "$need_kb" ]; then
  log "$N rows need about $((need_kb / 1024 / 1024)) GB free on /tmp (with 10 GB to spare); $((free_kb / 1024 / 1024)) GB are"
  exit 1
fi

PG_EXTRA_OPTS="-c shared_buffers=$SB -c maintenance_work_mem=${SIMDUP_BENCH_MWM:-2GB} -c work_mem=64MB"
PG_EXTRA_OPTS+=" -c wal_level=minimal -c max_wal_senders=0 -c max_wal_size=16GB -c checkpoint_timeout=1h"
PG_EXTRA_OPTS+=" -c synchronous_commit=off -c autovacuum=off -c max_parallel_workers_per_gather=0"
PG_EXTRA_OPTS+=" -c max_parallel_maintenance_workers=0"
PG_EXTRA_OPTS="$PG_EXTRA_OPTS" bench_cluster scale
bench_db
banner "one node at scale: N = $N $SET fingerprints, $BLOCKS blocks"
echo "simdup $(db -At -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'"), $(db -At -c 'SHOW server_version'), shared_buffers $SB, commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src core sql || echo ' + uncommitted changes')"

secs() { local t0; t0=$(date +%s.%N); "$@" >/dev/null; echo "$(date +%s.%N) - $t0" | bc; } # COMMAND -> seconds
# fp_of(id): the fingerprint of row id in the chosen set.
centres=$((N / 10 * 7)); copied=$((N / 10))
db <<SQL
-- 26 bits leaning 62.5 : 37.5 (bits 0, 5, .., 60: r1 | r2 & r3, towards 1; bits 2, 7, .., 62:
-- r1 & (r2 | r3), towards 0), the rest fair.
CREATE FUNCTION skewed(i bigint) RETURNS bigint IMMUTABLE LANGUAGE sql AS \$\$
  SELECT (r1 & ~(up | down)) | ((r1 | (r2 & r3)) & up) | ((r1 & (r2 | r3)) & down)
  FROM (SELECT hashint8extended(i, 1) r1, hashint8extended(i, 21) r2, hashint8extended(i, 31) r3,
               x'1084210842108421'::bigint up, x'4210842108421084'::bigint down) s \$\$;
-- d bits drawn by hash (sometimes the same bit twice: then fewer).
CREATE FUNCTION flips(i bigint, d int) RETURNS bigint IMMUTABLE LANGUAGE sql AS \$\$
  SELECT coalesce(bit_or(1::bigint << (abs(hashint8extended(i * 64 + b, 61)) % 64)::int), 0)
  FROM generate_series(1, d) b \$\$;
CREATE FUNCTION copy_distance(i bigint) RETURNS int IMMUTABLE LANGUAGE sql AS \$\$
  SELECT CASE WHEN v < 20 THEN 0 WHEN v < 55 THEN 1 + v % 3 WHEN v < 80 THEN 4 + v % 3
              WHEN v < 95 THEN 7 + v % 4 ELSE 11 + v % 4 END
  FROM (SELECT abs(hashint8extended(i, 51)) % 100 v) s \$\$;
CREATE FUNCTION fp_of(i bigint) RETURNS bigint IMMUTABLE LANGUAGE sql AS \$\$
  SELECT CASE WHEN '$SET' = 'random' THEN hashint8extended(i, 1)
              WHEN i <= $centres THEN skewed(i)
              ELSE skewed(1 + floor($copied * ((abs(hashint8extended(i, 41)) % 1000000000) / 1e9) ^ 2)::bigint)
                   # flips(i, copy_distance(i)) END \$\$;
SQL
chunk=10000000
load_sql() {
  echo "BEGIN; CREATE TABLE t (id bigint, fp bigint);"
  for ((lo = 1; lo <= N; lo += chunk)); do
    hi=$((lo + chunk - 1)); [ "$hi" -le "$N" ] || hi=$N
    if [ "$SET" = random ]; then
      echo "INSERT INTO t SELECT g, hashint8extended(g, 1) FROM generate_series($lo, $hi) g;"
    else
      echo "INSERT INTO t SELECT g, fp_of(g) FROM generate_series($lo, $hi) g;"
    fi
  done
  echo "COMMIT;"
}
log "loading $N rows"
t_load=$(secs db -c "$(load_sql)")
log "load ${t_load}s; primary key"
t_pk=$(secs db -c "ALTER TABLE t ADD PRIMARY KEY (id)")
log "primary key ${t_pk}s; vacuum"
t_vac=$(secs db -c "VACUUM (ANALYZE) t")
log "vacuum ${t_vac}s; simdup_enable"
t_enable=$(secs db -c "SELECT simdup_enable('t', NULL, 'fp', on_duplicate => 'skip', max_distance => 10, blocks => $BLOCKS)")
log "simdup_enable ${t_enable}s"
db -c "ANALYZE t"
printf 'build: load %.1f s, primary key %.1f s, vacuum %.1f s, simdup_enable %.1f s\n' "$t_load" "$t_pk" "$t_vac" "$t_enable"
db -At <<SQL
SELECT format('sizes: table %s, primary key %s, block indexes %s (%s indexes): %s bytes a row; table %s, primary key %s bytes a row',
  pg_size_pretty(pg_table_size('t')), pg_size_pretty(pg_relation_size('t_pkey')),
  pg_size_pretty(sum(pg_relation_size(index))), count(*),
  round(sum(pg_relation_size(index)) / $N.0, 1),
  round(pg_table_size('t') / $N.0, 1), round(pg_relation_size('t_pkey') / $N.0, 1))
FROM simdup_block_indexes('t');
SQL

# The queries: round 0 the discarded warm-up, rounds 1..REPS measured; odd i random, even i a
# stored row with 1 to 10 bits flipped (positions drawn by hash, so sometimes fewer).
db <<SQL
CREATE TABLE queries (round int, i int, kind text, q bigint, PRIMARY KEY (round, i));
INSERT INTO queries
SELECT r, i, CASE WHEN i % 2 = 1 THEN 'random' ELSE 'near' END,
       CASE WHEN i % 2 = 1 THEN hashint8extended(i, 1000 + r)
            ELSE (SELECT t.fp FROM t WHERE t.id = 1 + abs(hashint8extended(i, 2000 + r)) % $N)
                 # (SELECT coalesce(bit_or(1::bigint << (abs(hashint8extended(i * 64 + b, 3000 + r)) % 64)::int), 0)
                    FROM generate_series(1, 1 + (i / 2) % 10) b) END
FROM generate_series(0, $REPS) r, generate_series(1, $QUERIES) i;
CREATE TABLE served (round int, i int, what text, ms float8, answer text);
CREATE FUNCTION answer_sql(what text, q bigint) RETURNS text LANGUAGE sql AS \$\$
  SELECT CASE what
    WHEN 'k3' THEN format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM t WHERE hamming(fp, %s) <= 3', q)
    WHEN 'k10' THEN format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM t WHERE hamming(fp, %s) <= 10', q)
    ELSE format('SELECT string_agg(d::text, '','' ORDER BY d) FROM (SELECT hamming(fp, %1\$s) d FROM t ORDER BY fp <~> %1\$s LIMIT 10) s', q) END \$\$;
CREATE FUNCTION time_round(r int, what text) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE x record; t0 timestamptz; a text; s text;
BEGIN
  FOR x IN SELECT * FROM queries WHERE round = r ORDER BY i LOOP
    s := answer_sql(what, x.q);
    t0 := clock_timestamp();
    EXECUTE s INTO a;
    INSERT INTO served VALUES (r, x.i, what, 1000 * extract(epoch FROM clock_timestamp() - t0), a);
  END LOOP;
END \$\$;
CREATE EXTENSION pg_prewarm;
SQL
db -At -c "SELECT 'prewarmed ' || sum(pg_prewarm(index)) || ' blocks' FROM simdup_block_indexes('t')"
# Warm-up round, then the measured rounds; each round of each kind in one session.
for r in $(seq 0 "$REPS"); do
  for what in k3 k10 top10; do db -o /dev/null -c "SELECT time_round($r, '$what')"; done
done
echo "lookups (ms, server side, planning included; $QUERIES queries a round, $REPS rounds; load $(cut -d' ' -f1-3 /proc/loadavg)):"
db <<'SQL'
\pset footer off
WITH per_round AS (
  SELECT what, round, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) p50,
         percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) p99
  FROM served WHERE round > 0 GROUP BY what, round),
pooled AS (
  SELECT what, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) p50,
         percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) p99, count(*) n,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE q.kind = 'near') near_p50,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE q.kind = 'random') random_p50
  FROM served JOIN queries q USING (round, i) WHERE round > 0 GROUP BY what)
SELECT what, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY r.p50)::numeric, 3) AS "p50 (median of rounds)",
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY r.p99)::numeric, 3) AS "p99 (median of rounds)",
       round(min(p.p50)::numeric, 3) AS "p50 pooled", round(min(p.p99)::numeric, 3) AS "p99 pooled",
       round(min(p.near_p50)::numeric, 3) AS "near p50", round(min(p.random_p50)::numeric, 3) AS "random p50",
       min(p.n) AS queries
FROM per_round r JOIN pooled p USING (what) GROUP BY what ORDER BY what;
\echo answers within k (served, mean rows a query):
SELECT what, q.kind, round(avg(split_part(answer, ':', 1)::int), 2) AS rows
FROM served s JOIN queries q USING (round, i) WHERE what <> 'top10' AND round > 0 GROUP BY 1, 2 ORDER BY 1, 2;
SQL

log "exactness: one sequential pass for $EXACT queries"
db <<SQL
\pset footer off
SET simdup.index_search = off;
CREATE TEMP TABLE near_rows AS
SELECT x.i, t.id, hamming(t.fp, x.q) AS d
FROM t, (SELECT i, q FROM queries WHERE round = 1 AND i <= $EXACT) x
WHERE hamming(t.fp, x.q) <= 18;
CREATE TEMP TABLE exact AS
SELECT x.i,
  (SELECT count(*) || ':' || coalesce(sum(id), 0) FROM near_rows n WHERE n.i = x.i AND d <= 3) AS k3,
  (SELECT count(*) || ':' || coalesce(sum(id), 0) FROM near_rows n WHERE n.i = x.i AND d <= 10) AS k10,
  (SELECT string_agg(d::text, ',' ORDER BY d) FROM (SELECT d FROM near_rows n WHERE n.i = x.i ORDER BY d LIMIT 10) s) AS top10
FROM (SELECT i FROM queries WHERE round = 1 AND i <= $EXACT) x;
\echo exactness (served against a sequential scan, round 1):
SELECT s.what, count(*) AS compared,
       count(*) FILTER (WHERE s.answer IS DISTINCT FROM CASE s.what WHEN 'k3' THEN e.k3 WHEN 'k10' THEN e.k10 ELSE e.top10 END) AS differing
FROM served s JOIN exact e USING (i) WHERE s.round = 1 GROUP BY s.what ORDER BY s.what;
SQL

echo "plans (a random q; each the second run in its session):"
q=$(db -At -c "SELECT q FROM queries WHERE round = 1 AND i = 1")
for s in "SELECT count(*) FROM t WHERE hamming(fp, $q) <= 10" "SELECT id FROM t ORDER BY fp <~> $q LIMIT 10"; do
  printf '\\o /dev/null\n%s\n\\o\n%s\n' "EXPLAIN (ANALYZE, BUFFERS) $s;" "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) $s;" | db -At | grep -v '^ *$'
done

db -c "CREATE TABLE batch (round int, variant int, id bigint, fp bigint);
       INSERT INTO batch SELECT r, v, $N + (r * 2 + v) * $B_TRIG + g, hashint8extended(g, 10 + r * 2 + v)
       FROM generate_series(1, $B_TRIG) g, generate_series(0, 1) v, generate_series(1, $REPS) r;
       ANALYZE batch"
trig() { timed_rollback "$1" "INSERT INTO t SELECT id, fp FROM batch WHERE round = $2 AND variant = $3 ORDER BY id"; }
out=$(mktemp /tmp/simdup-scale.XXXXXX)
on_exit "rm -f $out"
for r in $(seq 1 "$REPS"); do
  p=$(trig "ALTER TABLE t DISABLE TRIGGER simdup_dedup;" "$r" 0)
  d=$(trig "SET LOCAL simdup.bulk_check = off;" "$r" 1)
  echo "$p $d" | tee -a "$out"
done
python3 - "$out" "$B_TRIG" <<'PY'
import statistics as st, sys
rows = [[float(x) for x in l.split()] for l in open(sys.argv[1])]
b = int(sys.argv[2])
p, d = (st.median(r[i] for r in rows) for i in (0, 1))
each = ", ".join(f"{(r[1] - r[0]) / b * 1000:.0f}" for r in rows)
print(f"dedup insert, {b} rows row by row (medians of {len(rows)} rounds): plain {p:.0f} ms, with the trigger {d:.0f} ms:"
      f" {(d - p) / b * 1000:.0f} us a row over plain (rounds: {each})")
PY
if [ "$BATCH" = 1 ]; then
  bt="${SIMDUP_BENCH_BATCH_THREADS:-2}"; bm="${SIMDUP_BENCH_BATCH_MEMORY:-1GB}"
  for what in pairs groups; do
    if [ $what = pairs ]; then call="SELECT count(*) FROM simdup_pairs('t', 10)"
    else call="SELECT count(*) || ' rows in ' || count(DISTINCT group_id) || ' groups' FROM simdup_groups('t', 10)"; fi
    db -At <<SQL
SET simdup.batch_threads = $bt; SET simdup.batch_memory = '$bm';
SELECT clock_timestamp() AS t0, substring(pg_read_file('/proc/self/status') from 'VmHWM:\s*(\d+ kB)') AS hwm0 \gset
SELECT ($call) AS result \gset
SELECT format('batch: simdup_$what(t, 10), %s threads, batch_memory %s: %s s, %s; backend peak (VmHWM) %s (%s before the call)',
  $bt, '$bm', round(extract(epoch FROM clock_timestamp() - :'t0')::numeric, 1), :'result',
  substring(pg_read_file('/proc/self/status') from 'VmHWM:\s*(\d+ kB)'), :'hwm0');
SQL
  done
fi
banner "done"
