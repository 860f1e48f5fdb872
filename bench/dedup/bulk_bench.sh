#!/usr/bin/env bash
# Bulk loads into a dedup table: INSERT ... SELECT and COPY of B rows into a table
# holding N random fingerprints, k = 10, on_duplicate => 'skip', side by side in one run:
#
#   plain  the INSERT ... SELECT with the dedup trigger disabled (the fingerprint column and
#          the block indexes still maintained): the floor;
#   bulk   the trigger with simdup.bulk_check = auto (the default): the INSERT's rows are read
#          first (src/dedup/readahead.rs) and their fingerprints checked by one pair join with
#          the table's, loaded into memory;
#   copy   COPY of the same rows (from a server-side file written once) with the trigger
#          disabled (copy plain) and enabled (copy: simdup reads the rows and writes them by
#          INSERT ... SELECT, read ahead as bulk), and PostgreSQL's own COPY with the trigger
#          (copy own: a COPY ... WHERE true is not read ahead; after 100 rows the statement
#          loads the table's fingerprints into memory and checks each row there);
#   select simdup_insert_select(t, 'SELECT id, fp FROM batch ORDER BY id') (one INSERT ... SELECT
#          through jsonb, read ahead as bulk);
#   row    the trigger with simdup.bulk_check = off, on the first B_ROW rows of the batch only
#          (one index search a row: minutes for the whole batch), reported per row.
#
#   bench/dedup/bulk_bench.sh [N [B]]        # defaults 1000000 200000
#
# The batch: B random fingerprints, one in ten of them a copy of a stored one with 2 bits
# flipped (skipped). Each variant runs in a transaction that is rolled back, so every run sees
# the same table; SIMDUP_BENCH_REPS (5) rounds, interleaved; medians. synchronous_commit = off;
# simdup preloaded (as the README recommends: a session reads an INSERT ahead once the library
# is loaded in it).
# Its own throwaway cluster "<SIMDUP_CLUSTER>-bulkbench" (bench/common.sh: bench_cluster).
# SIMDUP_BENCH_ROW_ROWS (B_ROW, default 10000).
N="${1:-1000000}"
B="${2:-200000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
REPS="${SIMDUP_BENCH_REPS:-5}"
B_ROW="${SIMDUP_BENCH_ROW_ROWS:-10000}"
PG_EXTRA_OPTS="-c shared_buffers=2GB -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off -c max_locks_per_transaction=1024 -c shared_preload_libraries=simdup" \
  bench_cluster bulkbench
bench_db
banner "simdup bulk-load benchmark: N = $N stored, B = $B inserted, k = 10, skip"
random_table "$N" ", on_duplicate => 'skip', max_distance => 10"
db <<SQL
CREATE TABLE batch (id bigint, fp bigint);
INSERT INTO batch SELECT $N + g,
  CASE WHEN g % 10 = 0 THEN hashint8extended((g * 7919) % $N + 1, 1) # 257 ELSE hashint8extended(g, 2) END
FROM generate_series(1, $B) g;
VACUUM ANALYZE t; VACUUM ANALYZE batch;
COPY (SELECT id, fp FROM batch ORDER BY id) TO '/tmp/simdup-$cluster/batch.copy';
SQL
versions

# One variant: milliseconds of its INSERT and the rows it stored.
run() {
  timed_rollback "$1" "${3:-INSERT INTO t SELECT id, fp FROM batch WHERE id <= $N + $2 ORDER BY id}" \
    "SELECT count(*) FROM t WHERE id > $N"
}
: > /tmp/simdup-bulkbench.$$
copy="COPY t FROM '/tmp/simdup-$cluster/batch.copy'"
for r in $(seq 1 "$REPS"); do
  p=$(run "ALTER TABLE t DISABLE TRIGGER simdup_dedup;" "$B")
  b=$(run "SET LOCAL simdup.bulk_check = auto;" "$B")
  cp=$(run "ALTER TABLE t DISABLE TRIGGER simdup_dedup;" "$B" "$copy")
  c=$(run "SET LOCAL simdup.bulk_check = auto;" "$B" "$copy")
  co=$(run "SET LOCAL simdup.bulk_check = auto;" "$B" "$copy WHERE true")
  w=$(run "SET LOCAL simdup.bulk_check = off;" "$B_ROW")
  f=$(run "" "$B" "SELECT simdup_insert_select('t', 'SELECT id, fp FROM batch ORDER BY id')")
  echo "round $r: plain ${p% *} ms (${p#* } rows), bulk ${b% *} ms (${b#* } rows), copy plain ${cp% *} ms (${cp#* } rows), copy ${c% *} ms (${c#* } rows), copy own ${co% *} ms (${co#* } rows), row-by-row ${w% *} ms for $B_ROW rows (${w#* } rows), simdup_insert_select ${f% *} ms (${f#* } rows)"
  echo "$p $b $w $f $cp $c $co" >> /tmp/simdup-bulkbench.$$
done
python3 - "$B" "$B_ROW" /tmp/simdup-bulkbench.$$ <<'PY'
import statistics, sys
b, brow, f = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rows = [l.split() for l in open(f)]
med = lambda i: statistics.median(float(r[i]) for r in rows)
plain, bulk, row, sel, cplain, copy, own = med(0), med(2), med(4), med(6), med(8), med(10), med(12)
print(f"medians: plain {plain:.0f} ms, bulk {bulk:.0f} ms ({bulk / plain:.2f}x plain), "
      f"row-by-row {row / brow * 1000:.1f} us a row (whole batch ~{row / brow * b / 1000:.0f} s, {row / brow * b / plain:.0f}x plain)")
print(f"copy plain {cplain:.0f} ms, copy {copy:.0f} ms ({copy / cplain:.2f}x copy plain), "
      f"copy own {own:.0f} ms ({own / cplain:.2f}x copy plain)")
print(f"simdup_insert_select {sel:.0f} ms ({sel / plain:.2f}x plain)")
print(f"a row beyond plain: bulk {(bulk - plain) / b * 1000:.1f} us, copy {(copy - cplain) / b * 1000:.1f} us; "
      f"row-by-row: {(row / brow - plain / b) * 1000:.1f} us")
PY
rm -f /tmp/simdup-bulkbench.$$
