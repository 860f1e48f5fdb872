#!/usr/bin/env bash
# Lookup latency of the query on one node vs a Citus cluster, same rows (docs/citus.md,
# "How it scales"). Not part of tests/citus/run.sh: it loads 1M rows (a few minutes on 2 cores).
#
#   bench/citus/citus_bench.sh [ROWS]            default 1000000
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
# printing the average latency per transaction. Then dedup on write, 1 client, rows with new
# random fingerprints (none is a near-duplicate, so every row is checked and stored) added to
# copies of the same ROWS rows, `pgbench -n -c 1 -T SECS`, rows a second:
#   one_node  plain INSERT, no dedup | plain INSERT through the dedup trigger (skip, k = 10) |
#             simdup_insert into the same kind of table;
#   dist4     plain INSERT into the distributed table without dedup | simdup_insert into a
#             distributed table with dedup (skip, k = 10; the check across shards).
# Before those writes, simdup_groups(t, 10) on one_node and dist4 (the same rows): time and
# the coordinator backend's peak resident memory (VmHWM, shared pages it touched included). One machine (2 cores) shared by the three nodes: this shows the overhead of
# distribution, not a speed-up.
#
# Environment: SIMDUP_PG_CONFIG, SIMDUP_CITUS_PORT (default 55432), BENCH_SECS (default 10),
# SIMDUP_CITUS_KEEP=1 (leave the cluster running; bench/common.sh: bench_citus).
ROWS="${1:-1000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
SECS="${BENCH_SECS:-10}"
bench_citus

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
CREATE TABLE one_node_dd (id bigint PRIMARY KEY, fp bigint);
INSERT INTO one_node_dd SELECT * FROM one_node;
CREATE TABLE one_node_plain (id bigint PRIMARY KEY, fp bigint);
INSERT INTO one_node_plain SELECT * FROM one_node;
CREATE TABLE dist4_dd (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('dist4_dd', 'id', shard_count => 4);
INSERT INTO dist4_dd SELECT * FROM one_node;
SELECT simdup_enable('one_node', NULL, 'fp');
SELECT simdup_enable('dist4', NULL, 'fp');
SELECT simdup_enable('dist32', NULL, 'fp');
SELECT simdup_enable('one_node_dd', NULL, 'fp', on_duplicate => 'skip', max_distance => 10);
SELECT simdup_enable('one_node_plain', NULL, 'fp');
SELECT simdup_enable('dist4_dd', NULL, 'fp', on_duplicate => 'skip', max_distance => 10);
CREATE SEQUENCE bench_ids START 500000000;
VACUUM ANALYZE one_node; VACUUM ANALYZE dist4; VACUUM ANALYZE dist32;
VACUUM ANALYZE one_node_dd; VACUUM ANALYZE one_node_plain; VACUUM ANALYZE dist4_dd;
SQL
echo "loaded $ROWS rows (+2400 variants) six times and built the indexes in $(( $(date +%s) - t0 )) s" >&2

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

# Batch: simdup_groups at k = 10, time and the backend's peak resident memory.
printf '\n%-10s %12s %10s %14s\n' table groups_s rows peak_rss_MB
for t in one_node dist4; do
  out=$(psql0 -tA <<SQL
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
SELECT count(*) AS n FROM simdup_groups('$t', 10) \gset
SELECT round((extract(epoch FROM clock_timestamp()) - :t0)::numeric, 2) || ' ' || :n || ' '
    || (regexp_match(pg_read_file('/proc/self/status'), 'VmHWM:\s+(\d+)'))[1]::bigint / 1024;
SQL
)
  read -r secs n rss <<<"$out"
  printf '%-10s %12s %10s %14s\n' "$t" "$secs" "$n" "$rss"
done

# Dedup on write: rows a second, 1 client.
fp_expr="(floor(random() * 4294967296)::bigint << 32) # floor(random() * 4294967296)::bigint"
printf '\n%-10s %-44s %10s\n' table write rows_per_s
for w in "one_node_plain|INSERT (no dedup)|INSERT INTO one_node_plain VALUES (nextval('bench_ids'), $fp_expr)" \
         "one_node_dd|INSERT (dedup trigger, skip, k = 10)|INSERT INTO one_node_dd VALUES (nextval('bench_ids'), $fp_expr)" \
         "one_node_dd|simdup_insert (skip, k = 10)|SELECT simdup_insert('one_node_dd', jsonb_build_object('id', nextval('bench_ids'), 'fp', $fp_expr))" \
         "dist4|INSERT (no dedup)|INSERT INTO dist4 VALUES (nextval('bench_ids'), $fp_expr)" \
         "dist4_dd|simdup_insert (skip, k = 10, across shards)|SELECT simdup_insert('dist4_dd', jsonb_build_object('id', nextval('bench_ids'), 'fp', $fp_expr))"; do
  IFS='|' read -r t what sql <<<"$w"
  echo "$sql;" >"$script"
  tps=$("$PG_BIN/pgbench" -n -c 1 -T "$SECS" -f "$script" -h "$SOCK" -p "$BASE" -U postgres simdup_citus 2>/dev/null \
        | awk '/^tps/ { print $3 }')
  printf '%-10s %-44s %10.0f\n' "$t" "$what" "$tps"
done
rm -f "$script"
q1=$(psql0 -tAc "SELECT fp FROM bench_q WHERE i = 1")
echo "plan (one task shown) of dist4 at k = 10:" >&2
psql0 -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM dist4 WHERE hamming(fp, $q1) <= 10" >&2
