#!/usr/bin/env bash
# Liveness of dedup under concurrent writers of unrelated rows: do writers that never write
# near-duplicates of each other wait for each other, deadlock, or stall?
#
#   bench/dedup/liveness_bench.sh
#
# Texts: 30 random hex words each (md5 of random()), so that no two rows are near-duplicates.
# Tables: docs (id bigserial PRIMARY KEY, body text) with simdup_enable(..., on_duplicate =>
# 'skip') (SimHash, the default k, verified), sdocs with simdup_enable_similar(..., 0.5, on_duplicate =>
# 'reject'), and the same tables with their dedup trigger disabled ("plain": the fingerprint and
# the indexes still maintained). pgbench, LIVENESS_CLIENTS (8) clients, -j 2, LIVENESS_SECONDS
# (10) seconds a run, LIVENESS_REPS (3) runs of each variant, interleaved; the tables are
# truncated before each run. Reported: median transactions/s, the ratio trigger / plain, the
# share of failed transactions (40P01 deadlocks; pgbench counts them as failures), and how often
# the writers wait: pg_stat_activity sampled every 10 ms during each trigger run, the share of
# the samples of a backend running an INSERT in which it waits for a lock stripe (an advisory
# lock: another row's check window) or for another transaction (transactionid: a
# near-duplicate candidate in progress), summed over the runs.
#
#   1. two inserts a transaction and one insert a transaction, SimHash and similarity;
#   2. an open transaction holding 60 uncommitted unrelated rows (inserted in one statement and
#      in 60 statements) while another session makes 20 single-row inserts, each with
#      lock_timeout = 1s: how many finish;
#   3. a COPY of LIVENESS_COPY_ROWS (3000) unrelated rows (the bulk check loads the table's
#      fingerprints and locks the table) while LIVENESS_COPY_CLIENTS (4) clients insert one row
#      at a time for the COPY's duration: both sides' errors, and the COPY's time.
#
# Runs on its own throwaway cluster "<SIMDUP_CLUSTER>-liveness" (bench/common.sh: bench_cluster)
# with synchronous_commit = off (the figures show the locking, not the disk's flush).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
clients=${LIVENESS_CLIENTS:-8}; seconds=${LIVENESS_SECONDS:-10}; reps=${LIVENESS_REPS:-3}
copy_rows=${LIVENESS_COPY_ROWS:-3000}; copy_clients=${LIVENESS_COPY_CLIENTS:-4}
bench_workdir liveness
PG_EXTRA_OPTS="-c synchronous_commit=off -c max_connections=50 -c deadlock_timeout=100ms" bench_cluster liveness
sql() { psql -d postgres "$@"; }
sql <<'SQL'
CREATE EXTENSION simdup;
CREATE FUNCTION hex_text() RETURNS text LANGUAGE sql VOLATILE
RETURN (SELECT string_agg(md5(random()::text), ' ') FROM generate_series(1, 30));
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('docs', 'body', on_duplicate => 'skip');
CREATE TABLE sdocs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT index FROM simdup_enable_similar('sdocs', 'body', 0.5, on_duplicate => 'reject');
-- Samples of the writers' waits for `secs` seconds: samples of a backend running an INSERT, and
-- of those waiting for a lock stripe (advisory) or for another transaction.
CREATE FUNCTION wait_samples(secs float8, OUT inserting bigint, OUT on_stripe bigint, OUT on_xact bigint)
LANGUAGE plpgsql AS $$
DECLARE t_end timestamptz := clock_timestamp() + secs * interval '1 second'; a int; s int; x int;
BEGIN
  inserting := 0; on_stripe := 0; on_xact := 0;
  WHILE clock_timestamp() < t_end LOOP
    PERFORM pg_stat_clear_snapshot();
    SELECT count(*), count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'),
           count(*) FILTER (WHERE wait_event_type = 'Lock' AND wait_event = 'transactionid')
      INTO a, s, x
      FROM pg_stat_activity
     WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE 'INSERT%';
    inserting := inserting + a; on_stripe := on_stripe + s; on_xact := on_xact + x;
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
SQL

# 1. pgbench.
for t in docs sdocs; do
  for n in 1 2; do
    { echo "BEGIN;"; for _ in $(seq "$n"); do echo "INSERT INTO $t (body) VALUES (hex_text());"; done; echo "END;"; } >"$WORK/$t$n.sql"
  done
done
run() { # run TABLE N VARIANT -> "tps failed%"
  local t=$1 n=$2 v=$3 trig=simdup_dedup out
  [ "$t" = sdocs ] && trig=simdup_dedup_similar
  sql -c "TRUNCATE $t" -c "ALTER TABLE $t $([ "$v" = plain ] && echo DISABLE || echo ENABLE) TRIGGER $trig"
  local sampler=""
  if [ "$v" != plain ]; then
    sql -At -F ' ' -c "SELECT * FROM wait_samples($seconds - 1)" >>"$WORK/waits" &
    sampler=$!
  fi
  out=$("$PG_BIN/pgbench" -n -h "$SOCK" -p "$port" -U postgres -c "$clients" -j 2 -T "$seconds" -f "$WORK/$t$n.sql" postgres 2>&1) || true
  [ -z "$sampler" ] || wait "$sampler" || true
  local tps failed total
  tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -1)
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out" | head -1)
  total=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out" | head -1)
  echo "${tps:-0} $(python3 -c "import sys; f,t=int(sys.argv[1] or 0),int(sys.argv[2] or 0); print(f'{100*f/max(1,f+t):.2f}')" "${failed:-0}" "${total:-0}")"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "| workload | trigger tps (median) | plain tps (median) | ratio | failed transactions (trigger, worst run) | inserting writers waiting for a stripe / for a transaction (share of samples) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for t in docs sdocs; do
  for n in 2 1; do
    : >"$WORK/trig"; : >"$WORK/plain"; : >"$WORK/fail"; : >"$WORK/waits"
    for _ in $(seq "$reps"); do
      read -r tps _ < <(run "$t" "$n" plain); echo "$tps" >>"$WORK/plain"
      read -r tps f < <(run "$t" "$n" trigger); echo "$tps" >>"$WORK/trig"; echo "$f" >>"$WORK/fail"
    done
    tt=$(median <"$WORK/trig"); pt=$(median <"$WORK/plain"); worst=$(sort -n "$WORK/fail" | tail -1)
    what=$([ "$t" = docs ] && echo "SimHash dedup (skip)" || echo "similarity dedup (reject, 0.5)")
    waits=$(awk '{a += $1; s += $2; x += $3} END {printf "%.4f / %.4f (%d samples)", s / (a ? a : 1), x / (a ? a : 1), a}' "$WORK/waits")
    printf '| %s clients, %s insert%s a transaction, %s | %.1f | %.1f | %.3f | %s %% | %s |\n' "$clients" "$n" "$([ "$n" = 2 ] && echo s)" "$what" \
      "$tt" "$pt" "$(python3 -c "print($tt / max($pt, 1e-9))")" "$worst" "$waits"
  done
done

# 2. An open transaction beside single-row writers.
for t in docs sdocs; do
  for shape in "one statement" "60 statements"; do
    trig=simdup_dedup; [ "$t" = sdocs ] && trig=simdup_dedup_similar
    sql -c "TRUNCATE $t" -c "ALTER TABLE $t ENABLE TRIGGER $trig"
    if [ "$shape" = "one statement" ]; then
      hold="INSERT INTO $t (body) SELECT hex_text() FROM generate_series(1, 60);"
    else
      hold=$(for _ in $(seq 60); do echo "INSERT INTO $t (body) VALUES (hex_text());"; done)
    fi
    sql -c "BEGIN" -c "$hold" -c "SELECT pg_sleep(30)" -c "COMMIT" >/dev/null 2>&1 &
    holder=$!
    sleep 2
    ok=0
    for _ in $(seq 20); do
      sql -c "SET lock_timeout = '1s'" -c "INSERT INTO $t (body) VALUES (hex_text())" >/dev/null 2>&1 && ok=$((ok + 1))
    done
    kill "$holder" 2>/dev/null || true; wait "$holder" 2>/dev/null || true
    sql -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()" >/dev/null
    echo "open transaction with 60 uncommitted rows ($shape) in $t: $ok of 20 single-row inserts by another session finished within lock_timeout = 1s"
  done
done

# 3. COPY beside single-row writers.
sql -c "TRUNCATE docs" -c "ALTER TABLE docs ENABLE TRIGGER simdup_dedup"
sql -c "INSERT INTO docs (body) SELECT hex_text() FROM generate_series(1, 2000)"   # a table to load
copy_beside_writers postgres docs "$copy_rows" "$copy_clients" 15
