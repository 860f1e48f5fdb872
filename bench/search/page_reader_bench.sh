#!/usr/bin/env bash
# The page reader (src/search/btree/) against the B-tree access method, side by
# side in one run, on a table of N random fingerprints (4 key indexes, the dedup trigger in skip
# mode at k = 10):
#
#   lookup   `SELECT count(*) FROM t WHERE hamming(fp, q) <= k` (the planner's Tid Scan), k = 3,
#            6, 10, SIMDUP_BENCH_QUERIES (200) random q per k and path, timed in the server
#            around each query (planning included; the key indexes prewarmed into shared
#            buffers; one process),
#            simdup.page_reader on / off alternating query by query, each path its own queries
#            (one just answered by the other path would find its leaves in the CPU's caches);
#            p50 / p99; every query answered by both paths, the answers compared;
#   trigger  INSERT ... SELECT of B_TRIG (5,000) new random fingerprints (each variant its own)
#            row by row
#            (simdup.bulk_check = off: one index search a row, with the trigger's dirty snapshot
#            and lock stripes) under page_reader on / off, against the same INSERT with the
#            trigger disabled; each in a rolled-back transaction; the overhead a row.
#   descent  the same lookups with k = 0 (one exact key per index: 4 descents and nothing to
#            read): what a descent costs on each path.
#
#   bench/search/page_reader_bench.sh [N]        # default 1000000
#
# SIMDUP_BENCH_REPS (5) interleaved rounds of everything; medians of the rounds.
# SIMDUP_BENCH_SHARED_BUFFERS (1GB): at 10M rows the table and its key indexes (~1.4 GB) do not
# fit 1GB, and some leaves come from the OS page cache; 3GB holds them.
# Its own throwaway cluster "<SIMDUP_CLUSTER>-prbench" (bench/common.sh: bench_cluster).
N="${1:-1000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
REPS="${SIMDUP_BENCH_REPS:-5}"
QUERIES="${SIMDUP_BENCH_QUERIES:-200}"
B_TRIG="${SIMDUP_BENCH_TRIGGER_ROWS:-5000}"
lookup_cluster prbench
banner "page reader vs access method: N = $N"
random_table "$N" ", on_duplicate => 'skip', max_distance => 10"
random_batches "$N" "$B_TRIG" 3
pct_function
db <<SQL
-- Milliseconds of each of n lookups at radius k with page_reader on and off, alternating;
-- and whether the two paths ever answered differently.
CREATE FUNCTION lookups(k int, n int, seed bigint, OUT on_ms float8[], OUT off_ms float8[], OUT differ int)
LANGUAGE plpgsql AS \$\$
DECLARE q bigint; a text; b text; t0 timestamptz;
BEGIN
  on_ms := '{}'; off_ms := '{}'; differ := 0;
  FOR i IN 1..n LOOP
    -- Each path times its own queries (a query just answered by the other path would find its
    -- leaves in the CPU's caches), then answers the other's untimed for the comparison.
    FOR j IN 0..1 LOOP
      q := hashint8extended(i, seed * 2 + j);
      PERFORM set_config('simdup.page_reader', CASE j WHEN 0 THEN 'on' ELSE 'off' END, true);
      t0 := clock_timestamp();
      EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM t WHERE hamming(fp, %s) <= %s', q, k) INTO a;
      IF j = 0 THEN
        on_ms := on_ms || extract(epoch FROM clock_timestamp() - t0)::float8 * 1000;
      ELSE
        off_ms := off_ms || extract(epoch FROM clock_timestamp() - t0)::float8 * 1000;
      END IF;
      PERFORM set_config('simdup.page_reader', CASE j WHEN 0 THEN 'off' ELSE 'on' END, true);
      EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM t WHERE hamming(fp, %s) <= %s', q, k) INTO b;
      IF a <> b THEN differ := differ + 1; END IF;
    END LOOP;
  END LOOP;
END \$\$;
SQL
versions shared_buffers
db -At -c "SELECT format('table %s, key indexes %s', pg_size_pretty(pg_table_size('t')), pg_size_pretty(sum(pg_relation_size(index)))) FROM simdup_block_indexes('t')"
prewarm_keys

trig() { timed_rollback "$1" "INSERT INTO t SELECT id, fp FROM batch WHERE variant = $2 ORDER BY id"; } # SETUP VARIANT -> ms
out=/tmp/simdup-prbench.$$
: >"$out"
for r in $(seq 1 "$REPS"); do
  for k in 0 3 6 10; do
    db -At -F ' ' -c "SELECT 'lookup', $k, round(pct(on_ms, 0.5)::numeric, 4), round(pct(on_ms, 0.99)::numeric, 4),
                             round(pct(off_ms, 0.5)::numeric, 4), round(pct(off_ms, 0.99)::numeric, 4), differ
                      FROM lookups($k, $QUERIES, $r)" | tee -a "$out"
  done
  # Each variant its own rows (the same rows again would find their leaves cached).
  p=$(trig "ALTER TABLE t DISABLE TRIGGER simdup_dedup;" 0)
  on=$(trig "SET LOCAL simdup.bulk_check = off; SET LOCAL simdup.page_reader = on;" 1)
  off=$(trig "SET LOCAL simdup.bulk_check = off; SET LOCAL simdup.page_reader = off;" 2)
  echo "trigger $p $on $off" | tee -a "$out"
done
python3 - "$out" "$B_TRIG" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
b = int(sys.argv[2])
print("medians over rounds (each round: the p50 / p99 of its queries), ms:")
print("| k | page reader p50 / p99 | access method p50 / p99 | access method / page reader (p50) | answers differing |")
print("| ---: | ---: | ---: | ---: | ---: |")
for k in ("0", "3", "6", "10"):
    rs = [r for r in rows if r[0] == "lookup" and r[1] == k]
    m = lambda i: st.median(float(r[i]) for r in rs)
    print(f"| {k} | {m(2):.3f} / {m(3):.3f} | {m(4):.3f} / {m(5):.3f} | {m(4) / m(2):.2f}x | {sum(int(r[6]) for r in rs)} |")
ts = [r for r in rows if r[0] == "trigger"]
p, on, off = (st.median(float(r[i]) for r in ts) for i in (1, 2, 3))
print(f"trigger, {b} rows row by row: plain {p:.0f} ms; page reader {on:.0f} ms ({(on - p) / b * 1000:.0f} us a row over plain); "
      f"access method {off:.0f} ms ({(off - p) / b * 1000:.0f} us a row over plain)")
PY
rm -f "$out"
