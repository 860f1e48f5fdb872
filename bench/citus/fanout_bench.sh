#!/usr/bin/env bash
# What fanning a lookup out to more shards costs on Citus: the same ROWS random fingerprints
# (fp = hashint8extended(id, 1)) in a plain table on the coordinator and in distributed tables of
# 4, 8, 16 and 32 shards (SIMDUP_BENCH_SHARDS), each simdup_enable'd with the dedup trigger
# (skip, k = 10); the cluster of scripts/citus_cluster.sh (a coordinator and 2 workers on this
# machine: this shows the cost of distribution, not a speed-up).
#
#   bench/citus/fanout_bench.sh [ROWS]          # default 2000000
#
# For each table, `pgbench -n -c 1` with per-transaction logs (-l), one connection, a first run
# of 100 transactions discarded, then SIMDUP_BENCH_REPS (3) runs of SIMDUP_BENCH_QUERIES (300):
#   lookup   SELECT count(*) FROM t WHERE hamming(fp, q) <= 10, q = pgbench's hash() of a random
#            number (a random fingerprint, a new one each transaction): every shard's task;
#   router   the same with `id = random` added: one shard's task through Citus's router, what a
#            lookup costs without the fan-out;
#   insert   INSERT INTO t VALUES (nextval, a random fingerprint), autocommit: on a distributed
#            dedup table the coordinator checks the row across every shard; against the same
#            insert into a 32-shard table without simdup and into the one-node table (its trigger);
#            SIMDUP_BENCH_INSERTS (300) a run.
# Latency per transaction, client side (one round trip to the coordinator included): p50 / p99
# of each run, medians over the runs. Exactness: 20 lookups on every table against a
# sequential scan of the one-node table (simdup.index_search = off): the number that differ.
#
# SIMDUP_BENCH_PGOPTIONS: PGOPTIONS of the pgbench sessions, such as "-c
# citus.max_cached_conns_per_worker=16" (Citus keeps 1 connection a worker between statements by
# default and opens the others again for every multi-shard statement).
#
# Environment: SIMDUP_PG_CONFIG, SIMDUP_CITUS_PORT (55432; bench/common.sh: bench_citus).
ROWS="${1:-2000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
SHARDS="${SIMDUP_BENCH_SHARDS:-4 8 16 32}"
TX="${SIMDUP_BENCH_QUERIES:-300}"
REPS="${SIMDUP_BENCH_REPS:-3}"
INS="${SIMDUP_BENCH_INSERTS:-300}"
bench_citus
bench_workdir fanout
banner "Citus fan-out: $ROWS rows, shards $SHARDS${SIMDUP_BENCH_PGOPTIONS:+, PGOPTIONS $SIMDUP_BENCH_PGOPTIONS}"
t0=$(date +%s)
psql0 -o /dev/null <<SQL
CREATE TABLE one_node (id bigint PRIMARY KEY, fp bigint);
INSERT INTO one_node SELECT g, hashint8extended(g, 1) FROM generate_series(1, $ROWS) g;
SELECT simdup_enable('one_node', NULL, 'fp', on_duplicate => 'skip', max_distance => 10);
CREATE TABLE plain32 (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('plain32', 'id', shard_count => 32);
CREATE SEQUENCE ids START 1000000000;
VACUUM ANALYZE one_node;
SQL
for s in $SHARDS; do
  psql0 -o /dev/null <<SQL
CREATE TABLE d$s (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('d$s', 'id', shard_count => $s);
INSERT INTO d$s SELECT * FROM one_node;
SELECT simdup_enable('d$s', NULL, 'fp', on_duplicate => 'skip', max_distance => 10);
VACUUM ANALYZE d$s;
SQL
done
log "loaded and indexed in $(($(date +%s) - t0)) s"
echo "simdup $(psql0 -At -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'"), citus $(psql0 -At -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'"), $(psql0 -At -c 'SHOW server_version')"

psql0 -o /dev/null <<'SQL'
CREATE FUNCTION differing(tbl text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int := 0; a bigint; b bigint; q bigint;
BEGIN
  FOR i IN 1..20 LOOP
    q := hashint8extended(i, 99);
    PERFORM set_config('simdup.index_search', 'off', true);
    EXECUTE format('SELECT count(*) FROM one_node WHERE hamming(fp, %s) <= 10', q) INTO a;
    PERFORM set_config('simdup.index_search', 'on', true);
    EXECUTE format('SELECT count(*) FROM %I WHERE hamming(fp, %s) <= 10', tbl, q) INTO b;
    IF a <> b THEN n := n + 1; END IF;
  END LOOP;
  RETURN n;
END $$;
SQL

# pgbench of SQL on TABLE, N transactions, logged to FILE; prints "p50 p99" in ms.
bench() { # KIND TABLE N LOGPREFIX
  local f="$WORK/$1.$2.sql"
  case "$1" in
    lookup) printf '\\set i random(1, 1000000000000)\n\\set q hash(:i)\nSELECT count(*) FROM %s WHERE hamming(fp, :q) <= 10;\n' "$2" ;;
    router) printf '\\set i random(1, 1000000000000)\n\\set q hash(:i)\n\\set id random(1, %s)\nSELECT count(*) FROM %s WHERE id = :id AND hamming(fp, :q) <= 10;\n' "$ROWS" "$2" ;;
    insert) printf '\\set i random(1, 1000000000000)\n\\set f hash(:i, 7)\nINSERT INTO %s VALUES (nextval('"'ids'"'), :f);\n' "$2" ;;
  esac >"$f"
  rm -f "$4".*
  PGOPTIONS="${SIMDUP_BENCH_PGOPTIONS:-}" "$PG_BIN/pgbench" -n -c 1 -t "$3" -f "$f" -l --log-prefix="$4" -h "$SOCK" -p "$BASE" -U postgres simdup_citus >/dev/null 2>&1 \
    || { log "pgbench failed: $1 $2"; "$PG_BIN/pgbench" -n -c 1 -t 1 -f "$f" -h "$SOCK" -p "$BASE" -U postgres simdup_citus >&2; exit 1; }
  cat "$4".* | awk '{ print $3 / 1000 }' | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f %.3f\n", v[int((NR + 1) / 2)], v[int(NR * 0.99 + 0.5)] }'
}
out="$WORK/results"
for t in one_node $(for s in $SHARDS; do echo "d$s"; done); do
  bench lookup "$t" 100 "$WORK/warm" >/dev/null
  for r in $(seq 1 "$REPS"); do
    for kind in lookup router; do
      [ "$kind" = router ] && [ "$t" = one_node ] && continue
      echo "$t $kind $(bench "$kind" "$t" "$TX" "$WORK/log")" >>"$out"
    done
  done
  echo "$t exact $(psql0 -At -c "SELECT differing('$t')")" >>"$out"
done
for r in $(seq 1 "$REPS"); do
  for t in plain32 one_node $(for s in $SHARDS; do echo "d$s"; done); do
    echo "$t insert $(bench insert "$t" "$INS" "$WORK/log")" >>"$out"
  done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
tables = list(dict.fromkeys(r[0] for r in rows if r[0] != "plain32"))
def cell(t, kind):
    rs = [r for r in rows if r[0] == t and r[1] == kind]
    if not rs:
        return "–"
    return f"{st.median(float(r[2]) for r in rs):.3f} / {st.median(float(r[3]) for r in rs):.3f}"
print("ms, client side, p50 / p99 (medians over runs):")
print("| table | shards | lookup k = 10 | one shard by the router | dedup insert | lookups differing (of 20) |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for t in tables:
    shards = "1 (no Citus)" if t == "one_node" else t[1:]
    ex = [r[2] for r in rows if r[0] == t and r[1] == "exact"]
    print(f"| {t} | {shards} | {cell(t, 'lookup')} | {cell(t, 'router')} | {cell(t, 'insert')} | {ex[0] if ex else '–'} |")
print(f"| plain32 (no simdup) | 32 | – | – | {cell('plain32', 'insert')} | – |")
PY
banner "done"
