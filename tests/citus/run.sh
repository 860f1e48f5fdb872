#!/usr/bin/env bash
# simdup on Citus: start a coordinator + 2 workers (scripts/citus_cluster.sh), run
# the checks of what works now, stop the cluster. Exit status non-zero on the first failure.
#
#   tests/citus/run.sh
#
# Environment:
#   SIMDUP_PG_CONFIG            PostgreSQL 15 to use (default /usr/bin/pg_config)
#   SIMDUP_CITUS_PORT           coordinator port, workers on the next two (default 55432)
#   SIMDUP_CITUS_INSTALL=1      run `scripts/install.sh --pg-config $SIMDUP_PG_CONFIG` (release)
#                               first. Off by default (scripts/test.sh citus installs itself).
#                               Without it, simdup must already be installed there.
#   SIMDUP_CITUS_KEEP=1         leave the cluster running after a failure (to look around)
#
# What is checked (docs/citus.md says what each shows and what does not work):
#   checks.sql      simdup_enable on a distributed table; simhash, simdup_match and
#                   hamming(fp, q) <= k (k = 3, 10) against a local copy of the same rows, and
#                   EXPLAIN: a Tid Scan over _simdup_tids on every shard; simdup_nearest
#                   (fails), simdup_pairs (needs citus.enable_repartition_joins), simdup_groups,
#                   MinHash; simdup_enable(..., on_duplicate) refused on a distributed table,
#                   working on a reference table; the trigger of a table enabled before
#                   distribution, per shard (mark, reject);
#   here            COPY through the coordinator fires the shard's trigger; a shard trigger can
#                   tell whether the write came from the coordinator or from a worker (MX);
#   coordinator_dedup.sql + coordinator_dedup_checks.sql
#                   the prototype of cross-shard dedup on the coordinator (docs/citus.md,
#                   "Dedup across shards"): same answers as the dedup trigger on a local table;
#                   a concurrent near-duplicate on another shard waits and is then rejected;
#                   8 concurrent clients never store two rows within k on any shards.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export SIMDUP_PG_CONFIG="${SIMDUP_PG_CONFIG:-/usr/bin/pg_config}"
BASE="${SIMDUP_CITUS_PORT:-55432}"
PG_BIN="$("$SIMDUP_PG_CONFIG" --bindir)"
SOCK=/tmp/simdup-citus-$BASE/sock
DB=simdup_citus
export SIMDUP_CITUS_DB=$DB
t0=$(date +%s.%N)
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
step() { printf '== %s (%s s)\n' "$*" "$(since "$t0")" >&2; }
fail() { echo "FAIL: $*" >&2; exit 1; }
psql_on() { # psql_on PORT_OFFSET [args]: on a node, stop at the first error
  local o="$1"; shift
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p $((BASE + o)) -U postgres -d "$DB" "$@"
}

checks() { # checks FILE: run a check file on the coordinator, its "ok:" lines shown indented
  psql_on 0 -o /dev/null -f "$1" 2>&1 | sed 's/^psql:[^ ]* WARNING:  /  /' >&2 || fail "$1"
}

if [ "${SIMDUP_CITUS_INSTALL:-0}" = 1 ]; then
  step "scripts/install.sh --pg-config $SIMDUP_PG_CONFIG"
  scripts/install.sh --pg-config "$SIMDUP_PG_CONFIG" >/dev/null
fi
t0=$(date +%s.%N)   # the timed part: cluster, checks, teardown

step "start the cluster"
[ "${SIMDUP_CITUS_KEEP:-0}" = 1 ] || trap 'scripts/citus_cluster.sh stop "$BASE"' EXIT
scripts/citus_cluster.sh start "$BASE"

step "load the pool (fixture paragraphs and variants) on the coordinator"
# fixture(name, body): every paragraph of core/tests/fixtures/{zh,en}, read by psql itself.
{
  echo "CREATE TABLE fixture (name text PRIMARY KEY, body text NOT NULL);"
  for f in core/tests/fixtures/zh/*.txt core/tests/fixtures/en/*.txt; do
    echo "\\set body \`cat '$ROOT/$f'\`"
    echo "INSERT INTO fixture VALUES ('${f#core/tests/fixtures/}', :'body');"
  done
} | psql_on 0
psql_on 0 -f tests/citus/pool.sql
psql_on 0 -tA -c "SELECT format('pool: %s documents, %s pairs within 3 bits, %s within 10', count(*),
    (SELECT count(*) FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) <= 3),
    (SELECT count(*) FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) <= 10)) FROM pool" >&2

step "checks.sql"
checks tests/citus/checks.sql

step "COPY through the coordinator fires the shard's dedup trigger"
# Two rows of one shard within 3 bits: COPY of both into an empty table with the reject
# trigger (k = 3) must fail and store neither.
# (Enabled before distribution: simdup_enable refuses on_duplicate on a distributed table.)
psql_on 0 -o /dev/null -c "CREATE TABLE copied (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT simdup_enable('copied', 'body', on_duplicate => 'reject', max_distance => 3)" \
  -c "SELECT create_distributed_table('copied', 'id', shard_count => 4)"
pair="$(psql_on 0 -tA -F ' ' -c "SELECT a.id, b.id FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) <= 3
    AND get_shard_id_for_distribution_column('copied', a.id) = get_shard_id_for_distribution_column('copied', b.id)
    ORDER BY 1, 2 LIMIT 1")"
[ -n "$pair" ] || fail "no pair of pool rows within 3 bits in one shard of 'copied'"
set -- $pair
out="$(psql_on 0 -c "COPY (SELECT id, body FROM pool WHERE id IN ($1, $2) ORDER BY id) TO STDOUT" \
  | psql_on 0 -v VERBOSITY=verbose -c "COPY copied (id, body) FROM STDIN" 2>&1 || true)"
# (Citus forwards the error without its SQLSTATE: XX000, see docs/citus.md.)
grep -q 'ERROR:  XX000: near-duplicate row violates simdup_dedup on relation "copied_[0-9]*"' <<<"$out" \
  || fail "COPY of two same-shard near-duplicates was not rejected: $out"
[ "$(psql_on 0 -tA -c "SELECT count(*) FROM copied")" = 0 ] || fail "COPY stored a row"
echo "  ok: COPY through the coordinator: the shard trigger rejects a same-shard near-duplicate (as XX000)" >&2

step "a shard trigger sees where the write came from (citus_backend_gpid)"
psql_on 0 -o /dev/null <<'SQL'
CREATE TABLE origin (id bigint PRIMARY KEY, node int);
SELECT create_distributed_table('origin', 'id');
CREATE FUNCTION origin_node() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN NEW.node := citus_nodeid_for_gpid(citus_backend_gpid()); RETURN NEW; END $$;
CREATE TRIGGER origin_node BEFORE INSERT ON origin FOR EACH ROW EXECUTE FUNCTION origin_node();
INSERT INTO origin (id) SELECT g FROM generate_series(1, 8) g;
SQL
psql_on 1 -c "INSERT INTO origin (id) SELECT g FROM generate_series(11, 18) g"   # MX: through worker 1
want="$(psql_on 0 -tA -c "SELECT string_agg(DISTINCT format('%s:%s', o.id > 10, o.node = CASE WHEN o.id > 10 THEN w.nodeid ELSE c.nodeid END), ' ')
    FROM origin o, (SELECT nodeid FROM pg_dist_node WHERE groupid = 0) c, (SELECT nodeid FROM pg_dist_node WHERE nodeport = $((BASE + 1))) w")"
[ "$want" = "f:t t:t" ] || fail "shard triggers saw the wrong origin node: $want"
echo "  ok: rows written through the coordinator carry its node id, rows written through worker 1 (MX) worker 1's" >&2

step "prototype: cross-shard dedup on the coordinator (coordinator_dedup.sql)"
psql_on 0 -f tests/citus/coordinator_dedup.sql
checks tests/citus/coordinator_dedup_checks.sql

step "prototype under concurrency: a near-duplicate on another shard waits for the first writer, then 23505"
ab="$(psql_on 0 -tA -F ' ' -c "SELECT a.id, b.id FROM pool a JOIN pool b ON a.id < b.id
    AND hamming(a.fp, b.fp) BETWEEN 1 AND 3
    AND get_shard_id_for_distribution_column('conc', a.id) <> get_shard_id_for_distribution_column('conc', b.id)
    ORDER BY 1, 2 LIMIT 1")"
set -- $ab
# The first writer holds its lock stripes for 3 s before committing.
( psql_on 0 <<SQL
BEGIN;
SELECT simdup_citus_insert('conc', to_jsonb(p), 'reject', 3) FROM (SELECT id, body FROM pool WHERE id = $1) p;
SELECT pg_sleep(3);
COMMIT;
SQL
) >/dev/null &
first=$!
sleep 1
t_b=$(date +%s.%N)
out="$(psql_on 0 -v VERBOSITY=verbose -c "SELECT simdup_citus_insert('conc', to_jsonb(p), 'reject', 3) FROM (SELECT id, body FROM pool WHERE id = $2) p" 2>&1 || true)"
waited=$(since "$t_b")
wait "$first" || fail "the first writer failed"
grep -q "ERROR:  23505: near-duplicate row violates simdup_citus_insert on relation \"conc\"" <<<"$out" || fail "second writer: $out"
awk -v w="$waited" 'BEGIN { exit !(w > 1.5) }' || fail "the second writer did not wait for the first (${waited}s)"
[ "$(psql_on 0 -tA -c "SELECT string_agg(id::text, ',') FROM conc")" = "$1" ] || fail "conc holds the wrong rows"
printf '  ok: the second writer (row %s, another shard) waited %s s for the first (row %s), then got 23505\n' "$2" "$waited" "$1" >&2

step "prototype under 8 concurrent clients: no two stored rows within 3 bits, on any shards"
# Client c (0..7) writes the pool rows with id % 8 = 2 * (c % 4) under ids c * 100000 + id,
# one transaction per row, mode skip, k = 3; clients c and c + 4 send the same texts from
# opposite ends, so identical and near-duplicate texts race each other on different shards.
psql_on 0 -o /dev/null -c "CREATE TABLE conc8 (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT create_distributed_table('conc8', 'id')" -c "SELECT simdup_enable('conc8', 'body')"
pids=()
for c in 0 1 2 3 4 5 6 7; do
  dir=ASC; [ "$c" -ge 4 ] && dir=DESC
  psql_on 0 -o /dev/null >"/tmp/simdup-citus-$BASE/conc8.$c.log" 2>&1 <<SQL &
SELECT format('SELECT simdup_citus_insert(''conc8'', jsonb_build_object(''id'', %s, ''body'', body), ''skip'', 3) FROM pool WHERE id = %s',
              $c * 100000 + id, id)
FROM pool WHERE id % 8 = $((2 * (c % 4))) ORDER BY id $dir \gexec
SQL
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { cat "/tmp/simdup-citus-$BASE/conc8.$i.log" >&2; fail "concurrent client $i failed"; }
done
res="$(psql_on 0 -tA -F ' ' -c "CREATE TEMP TABLE s AS SELECT id, simhash, get_shard_id_for_distribution_column('conc8', id) AS shard FROM conc8;
  CREATE TEMP TABLE att AS SELECT c * 100000 + p.id AS id, p.fp, get_shard_id_for_distribution_column('conc8', c * 100000 + p.id) AS shard
    FROM pool p, generate_series(0, 7) c WHERE p.id % 8 = 2 * (c % 4);
  SELECT (SELECT count(*) FROM s),
         (SELECT count(*) FROM s a JOIN s b ON a.id < b.id AND hamming(a.simhash, b.simhash) <= 3),
         (SELECT count(*) FROM att a WHERE NOT EXISTS (SELECT FROM s WHERE hamming(s.simhash, a.fp) <= 3)),
         (SELECT count(*) FROM att a WHERE a.id NOT IN (SELECT id FROM s)
            AND NOT EXISTS (SELECT FROM s WHERE s.shard = a.shard AND hamming(s.simhash, a.fp) <= 3)),
         (SELECT count(*) FROM att)")"
set -- $res
[ "$2" = 0 ] || fail "8 clients: $2 pairs of stored rows within 3 bits"
[ "$3" = 0 ] || fail "8 clients: $3 attempted rows have no stored row within 3 bits (skipped without a near-duplicate?)"
[ "$4" -gt 0 ] || fail "8 clients: no row was skipped for a near-duplicate on another shard only (the test shows nothing)"
[ "$1" -gt 0 ] && [ "$1" -lt "$5" ] || fail "8 clients stored $1 rows of $5 attempts"
printf '  ok: 8 clients, %s single-row inserts (each even-numbered pool text twice): %s stored, no two within 3 bits across shards, every attempt has a stored row within 3; %s skipped for a near-duplicate on another shard only\n' "$5" "$1" "$4" >&2

step "stop the cluster"
scripts/citus_cluster.sh stop "$BASE"
trap - EXIT
step "all Citus checks passed"
