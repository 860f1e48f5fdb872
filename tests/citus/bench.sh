#!/usr/bin/env bash
# Lookup latency of the card's query on one node vs a Citus cluster, same rows (docs/citus.md,
# "How it scales"). Not part of run.sh: it loads 1M rows (a few minutes on 2 cores).
#
#   tests/citus/bench.sh [ROWS]            default 1000000
#
# Starts the cluster of scripts/citus_cluster.sh (coordinator + 2 workers, all on this
# machine), then on the coordinator:
#   one_node    a plain table of ROWS random fingerprints (plus 200 families of bit-flipped
#               variants), simdup_enable'd: served by the coordinator alone;
#   dist4       the same rows, create_distributed_table with 4 shards (2 per worker);
#   dist32      the same rows, 32 shards (Citus's default shard count);
# and for each table and k = 3 and 10, `pgbench -n -c 1 -T SECS` of
#   SELECT fp AS q FROM bench_q WHERE i = :i \gset        (one of 200 stored fingerprints)
#   SELECT count(*) FROM TABLE WHERE hamming(fp, :q) <= K;
# printing the average latency per transaction. One machine (2 cores) shared by the three
# nodes: this shows the overhead of distribution, not a speed-up.
#
# Environment: SIMDUP_PG_CONFIG, SIMDUP_CITUS_PORT (default 55432), BENCH_SECS (default 10),
# SIMDUP_CITUS_KEEP=1 (leave the cluster running).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
ROWS="${1:-1000000}"
export SIMDUP_PG_CONFIG="${SIMDUP_PG_CONFIG:-/usr/bin/pg_config}"
BASE="${SIMDUP_CITUS_PORT:-55432}"
SECS="${BENCH_SECS:-10}"
PG_BIN="$("$SIMDUP_PG_CONFIG" --bindir)"
SOCK=/tmp/simdup-citus-$BASE/sock
export SIMDUP_CITUS_DB=simdup_citus
psql0() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$BASE" -U postgres -d simdup_citus "$@"; }

[ "${SIMDUP_CITUS_KEEP:-0}" = 1 ] || trap 'scripts/citus_cluster.sh stop "$BASE"' EXIT
scripts/citus_cluster.sh start "$BASE"

t0=$(date +%s)
psql0 -o /dev/null <<SQL
SELECT setseed(0.5);
CREATE TABLE one_node (id bigint PRIMARY KEY, fp bigint);
INSERT INTO one_node
SELECT i, (floor(random() * 4294967296)::bigint << 32) # floor(random() * 4294967296)::bigint
FROM generate_series(1, $ROWS) i;
INSERT INTO one_node
SELECT 100000000 + b.id * 100 + d, b.fp # (SELECT bit_or(1::bigint << ((j * 13 + b.id::int) % 64)) FROM generate_series(1, d) j)
FROM one_node b, generate_series(1, 12) d WHERE b.id <= 200;
CREATE TABLE bench_q (i int PRIMARY KEY, fp bigint);
INSERT INTO bench_q SELECT id, fp FROM one_node WHERE id <= 200;
CREATE TABLE dist4 (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('dist4', 'id', shard_count => 4);
INSERT INTO dist4 SELECT * FROM one_node;
CREATE TABLE dist32 (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('dist32', 'id', shard_count => 32);
INSERT INTO dist32 SELECT * FROM one_node;
SELECT simdup_enable('one_node', NULL, 'fp');
SELECT simdup_enable('dist4', NULL, 'fp');
SELECT simdup_enable('dist32', NULL, 'fp');
VACUUM ANALYZE one_node; VACUUM ANALYZE dist4; VACUUM ANALYZE dist32;
SQL
echo "loaded $ROWS rows (+2400 variants) three times and built the indexes in $(( $(date +%s) - t0 )) s" >&2

script=$(mktemp)
printf '%-8s %3s %12s %8s\n' table k latency_ms matches
for t in one_node dist4 dist32; do
  for k in 3 10; do
    cat >"$script" <<SQL
\set i random(1, 200)
SELECT fp AS q FROM bench_q WHERE i = :i \gset
SELECT count(*) FROM $t WHERE hamming(fp, :q) <= $k;
SQL
    lat=$("$PG_BIN/pgbench" -n -c 1 -T "$SECS" -f "$script" -h "$SOCK" -p "$BASE" -U postgres simdup_citus 2>/dev/null \
          | awk '/latency average/ { print $4 }')
    # (rows found per query, on the plain table: the distributed ones answer the same, run.sh)
    n=$(psql0 -tA -c "SELECT round(avg(c), 1) FROM (SELECT (SELECT count(*) FROM one_node WHERE hamming(fp, q.fp) <= $k) c FROM bench_q q WHERE i <= 20) x")
    printf '%-8s %3s %12s %8s\n' "$t" "$k" "$lat" "$n"
  done
done
rm -f "$script"
q1=$(psql0 -tAc "SELECT fp FROM bench_q WHERE i = 1")
echo "plan (one task shown) of dist4 at k = 10:" >&2
psql0 -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM dist4 WHERE hamming(fp, $q1) <= 10" >&2
