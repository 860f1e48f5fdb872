#!/usr/bin/env bash
# Liveness of the Citus checked write under concurrent writers of unrelated rows, with its
# pending-row records (src/citus/checked/pending.rs) and without them (simdup.checked_write_slots
# = 0: the stripes held to commit, as up to 0.4.0's change), side by side in one run.
#
#   bench/dedup/citus_liveness_bench.sh
#
# For each setting (0, then the default), a throwaway coordinator + 2 workers
# (scripts/citus_cluster.sh, port CITUS_LIVENESS_PORT, default 56432; synchronous_commit = off,
# as every node of that script), tables distributed by id: docs with simdup_enable(...,
# on_duplicate => 'skip') (SimHash, k = 10), sdocs with simdup_enable_similar(..., 0.5,
# on_duplicate => 'reject'), and plain, the same table without simdup. Texts: 30 random hex
# words each (no two rows are near-duplicates).
#
#   1. pgbench, LIVENESS_CLIENTS (8) clients, -j 2, LIVENESS_SECONDS (8) s a run, LIVENESS_REPS
#      (3) runs of each variant, interleaved with the plain table's: two inserts a transaction
#      and one; median tps, the ratio to plain, the share of failed transactions (40P01);
#   2. an open transaction holding 60 uncommitted rows (one INSERT ... SELECT) for 30 s while
#      another session makes 20 single-row inserts, each with lock_timeout = 1s: how many
#      finish, and how many simdup stripes the open transaction holds;
#   3. a COPY of LIVENESS_COPY_ROWS (3000) unrelated rows into docs (checked in batches of
#      1,000) while 4 pgbench clients insert one row a transaction for 20 s: both sides' errors,
#      the COPY's time and the writers' tps.
#
# simdup must be installed in the PostgreSQL 15 of SIMDUP_PG_CONFIG (scripts/install.sh).
BENCH_PG=0 . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"   # copy_beside_writers
export SIMDUP_PG_CONFIG="${SIMDUP_PG_CONFIG:-/usr/bin/pg_config}"
PG_BIN="$("$SIMDUP_PG_CONFIG" --bindir)"
BASE="${CITUS_LIVENESS_PORT:-56432}"
port=$BASE
SOCK=/tmp/simdup-citus-$BASE/sock
DB=simdup_citus
clients=${LIVENESS_CLIENTS:-8}; seconds=${LIVENESS_SECONDS:-8}; reps=${LIVENESS_REPS:-3}
copy_rows=${LIVENESS_COPY_ROWS:-3000}
WORK=$(mktemp -d /tmp/simdup-citus-liveness.XXXXXX)
chmod 755 "$WORK"
trap 'scripts/citus_cluster.sh stop "$BASE" >/dev/null 2>&1 || true' EXIT
sql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$BASE" -U postgres -d "$DB" "$@"; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $("$PG_BIN/postgres" --version)"

for t in docs sdocs plain; do
  for n in 1 2; do
    { echo "BEGIN;"; for _ in $(seq "$n"); do echo "INSERT INTO $t (body) VALUES (hex_text());"; done; echo "END;"; } >"$WORK/$t$n.sql"
  done
done
run() { # run TABLE N -> "tps failed%"
  local out tps failed total
  sql -c "TRUNCATE $1"
  out=$("$PG_BIN/pgbench" -n -h "$SOCK" -p "$BASE" -U postgres -c "$clients" -j 2 -T "$seconds" -f "$WORK/$1$2.sql" "$DB" 2>&1) || true
  tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -1)
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out" | head -1)
  total=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out" | head -1)
  echo "${tps:-0} $(python3 -c "import sys; f,t=int(sys.argv[1] or 0),int(sys.argv[2] or 0); print(f'{100*f/max(1,f+t):.2f}')" "${failed:-0}" "${total:-0}")"
}

for slots in 0 default; do
  conf=""; [ "$slots" = 0 ] && conf="simdup.checked_write_slots = 0"
  SIMDUP_CITUS_CONF="$conf" scripts/citus_cluster.sh start "$BASE" >/dev/null
  sql -c "SHOW simdup.checked_write_slots" -tA | sed 's/^/simdup.checked_write_slots = /'
  sql -o /dev/null <<'SQL'
CREATE FUNCTION hex_text() RETURNS text LANGUAGE sql VOLATILE
RETURN (SELECT string_agg(md5(random()::text), ' ') FROM generate_series(1, 30));
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('docs', 'id');
SELECT simdup_enable('docs', 'body', on_duplicate => 'skip', max_distance => 10);
CREATE TABLE sdocs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('sdocs', 'id');
SELECT simdup_enable_similar('sdocs', 'body', 0.5, on_duplicate => 'reject');
CREATE TABLE plain (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('plain', 'id');
SQL
  echo "| workload (slots: $slots) | trigger tps (median) | plain tps (median) | ratio | failed transactions (worst run) |"
  echo "| --- | ---: | ---: | ---: | ---: |"
  for t in docs sdocs; do
    for n in 2 1; do
      : >"$WORK/trig"; : >"$WORK/plain"; : >"$WORK/fail"
      for _ in $(seq "$reps"); do
        read -r tps _ < <(run plain "$n"); echo "$tps" >>"$WORK/plain"
        read -r tps f < <(run "$t" "$n"); echo "$tps" >>"$WORK/trig"; echo "$f" >>"$WORK/fail"
      done
      tt=$(median <"$WORK/trig"); pt=$(median <"$WORK/plain"); worst=$(sort -n "$WORK/fail" | tail -1)
      what=$([ "$t" = docs ] && echo "SimHash dedup (skip, k = 10)" || echo "similarity dedup (reject, 0.5)")
      printf '| %s clients, %s insert%s a transaction, %s | %.1f | %.1f | %.3f | %s %% |\n' "$clients" "$n" \
        "$([ "$n" = 2 ] && echo s)" "$what" "$tt" "$pt" "$(python3 -c "print($tt / max($pt, 1e-9))")" "$worst"
    done
  done
  for t in docs sdocs; do
    sql -c "TRUNCATE $t"
    sql -c "BEGIN" -c "INSERT INTO $t (body) SELECT hex_text() FROM generate_series(1, 60)" -c "SELECT pg_sleep(30)" -c "COMMIT" >/dev/null 2>&1 &
    holder=$!
    sleep 3
    held=$(sql -tA -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid IN (21316, 21317)")
    ok=0
    for _ in $(seq 20); do
      sql -c "SET lock_timeout = '1s'" -c "INSERT INTO $t (body) VALUES (hex_text())" >/dev/null 2>&1 && ok=$((ok + 1))
    done
    sql -o /dev/null -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()"
    wait "$holder" 2>/dev/null || true
    echo "slots $slots, $t: an open transaction with 60 uncommitted rows holds $held simdup stripes; $ok of 20 single-row inserts by another session finished within lock_timeout = 1s"
  done
  sql -c "TRUNCATE docs"
  echo "slots $slots: $(copy_beside_writers "$DB" docs "$copy_rows" 4 20)"
  scripts/citus_cluster.sh stop "$BASE" >/dev/null
done
rm -rf "$WORK"
