#!/usr/bin/env bash
# What a larger maximum distance k costs: lookups and the dedup trigger at k = 10, 11 and 12 (K)
# side by side in one run, on a table of N random fingerprints (an adopted bigint column, the
# four 16-bit key indexes of simdup_enable).
#
#   lookup   `SELECT count(*) FROM t WHERE hamming(fp, q) <= k` (the planner's Tid Scan),
#            SIMDUP_BENCH_QUERIES (200) random q per k a round, the k interleaved query by query
#            (each k its own queries), timed in the server around each query (planning
#            included; the key indexes prewarmed into shared buffers; one process); p50 / p99;
#            the first 20 queries of each k also answered by a sequential scan
#            (simdup.index_search = off) and compared;
#   trigger  INSERT ... SELECT of B_TRIG (5,000) new random fingerprints row by row into the
#            table with the dedup trigger in skip mode at each k (simdup_enable again for each
#            k; simdup.bulk_check = off: one index search a row, with the trigger's dirty snapshot
#            and lock stripes), each k its own rows, against the same INSERT with the trigger
#            disabled; each in a rolled-back transaction; the overhead a row.
#
# Random fingerprints carry no text, so the trigger decides by the distance: what verification
# adds on real text (the candidates a row reads) is measured by bench/quality/precision_scale.sh.
#
#   bench/search/k_cost_bench.sh [N]        # default 1000000
#
# SIMDUP_BENCH_REPS (5) rounds; medians of the rounds. SIMDUP_BENCH_SHARED_BUFFERS (1GB).
# Its own throwaway cluster "<SIMDUP_CLUSTER>-kbench" (bench/common.sh: bench_cluster).
N="${1:-1000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
REPS="${SIMDUP_BENCH_REPS:-5}"
QUERIES="${SIMDUP_BENCH_QUERIES:-200}"
B_TRIG="${SIMDUP_BENCH_TRIGGER_ROWS:-5000}"
K="${K:-10 11 12}"
lookup_cluster kbench
karr="{$(echo $K | tr ' ' ',')}"
banner "cost of k: N = $N, k = $K"
random_table "$N"
random_batches "$N" "$B_TRIG" 21
pct_function
db <<SQL
-- Milliseconds of n lookups for each k of ks, interleaved query by query, each k its own
-- queries; the first 20 of each also answered by a sequential scan and compared.
CREATE FUNCTION lookups(ks int[], n int, seed bigint, OUT k int, OUT ms float8[], OUT differ int)
RETURNS SETOF record LANGUAGE plpgsql AS \$\$
DECLARE q bigint; a text; b text; t0 timestamptz; times float8[][]; d int[];
BEGIN
  times := array_fill(NULL::float8, ARRAY[cardinality(ks), n]);
  d := array_fill(0, ARRAY[cardinality(ks)]);
  FOR i IN 1..n LOOP
    FOR j IN 1..cardinality(ks) LOOP
      q := hashint8extended(i, seed * 100 + j);
      t0 := clock_timestamp();
      EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM t WHERE hamming(fp, %s) <= %s', q, ks[j]) INTO a;
      times[j][i] := extract(epoch FROM clock_timestamp() - t0)::float8 * 1000;
      IF i <= 20 THEN
        PERFORM set_config('simdup.index_search', 'off', true);
        EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM t WHERE hamming(fp, %s) <= %s', q, ks[j]) INTO b;
        PERFORM set_config('simdup.index_search', 'on', true);
        IF a <> b THEN d[j] := d[j] + 1; END IF;
      END IF;
    END LOOP;
  END LOOP;
  FOR j IN 1..cardinality(ks) LOOP
    k := ks[j]; differ := d[j];
    ms := ARRAY(SELECT times[j][x] FROM generate_series(1, n) x);
    RETURN NEXT;
  END LOOP;
END \$\$;
SQL
versions shared_buffers
prewarm_keys

trig() { # K VARIANT -> ms (K = 0: the trigger disabled)
  db -At -o /dev/null -c "SELECT simdup_disable('t')" \
    -c "SELECT simdup_enable('t', NULL, 'fp', on_duplicate => 'skip', max_distance => greatest($1, 1))" \
    -c "SELECT sum(pg_prewarm(index)) FROM simdup_block_indexes('t')"
  timed_rollback "SET LOCAL simdup.bulk_check = off; $([ "$1" = 0 ] && echo "ALTER TABLE t DISABLE TRIGGER simdup_dedup;" || true)" \
    "INSERT INTO t SELECT id, fp FROM batch WHERE variant = $2 ORDER BY id"
}
out=/tmp/simdup-kbench.$$
: >"$out"
v=0
for r in $(seq 1 "$REPS"); do
  db -At -F ' ' -c "SELECT 'lookup', k, round(pct(ms, 0.5)::numeric, 4), round(pct(ms, 0.99)::numeric, 4), differ
                    FROM lookups('$karr', $QUERIES, $r)" | tee -a "$out"
  line="trigger"
  for k in 0 $K; do
    line="$line $k:$(trig "$k" $((v % 21)))"; v=$((v + 1))
  done
  echo "$line" | tee -a "$out"
done
python3 - "$out" "$B_TRIG" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
b = int(sys.argv[2])
print("medians over rounds (each round: the p50 / p99 of its queries), ms:")
print("| k | lookup p50 / p99 ms | answers differing from a sequential scan | trigger, us a row over plain |")
print("| ---: | ---: | ---: | ---: |")
look = [r for r in rows if r[0] == "lookup"]
trig = [dict(x.split(":") for x in r[1:]) for r in rows if r[0] == "trigger"]
plain = st.median(float(t["0"]) for t in trig)
for k in sorted({r[1] for r in look}, key=int):
    rs = [r for r in look if r[1] == k]
    m = lambda i: st.median(float(r[i]) for r in rs)
    over = (st.median(float(t[k]) for t in trig) - plain) / b * 1000
    print(f"| {k} | {m(2):.3f} / {m(3):.3f} | {sum(int(r[4]) for r in rs)} | {over:.0f} |")
print(f"plain insert of {b} rows: {plain:.0f} ms (median)")
PY
rm -f "$out"
