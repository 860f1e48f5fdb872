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
#   checks.sql        simdup_enable on a distributed table; simhash, simdup_match and
#                     hamming(fp, q) <= k (k = 3, 10) against a local copy of the same rows, and
#                     EXPLAIN: a Tid Scan over _simdup_tids on every shard; simdup_nearest
#                     (refused), simdup_pairs, simdup_groups, MinHash; simdup_enable(...,
#                     on_duplicate) on a distributed table: plain INSERTs on the coordinator
#                     checked, text-changing UPDATEs checked; reference tables; a table enabled
#                     before distribution (then a plain INSERT ... SELECT marks across shards);
#   dedup_checks.sql  dedup across shards (docs/citus.md, "Dedup across shards"): simdup_insert,
#                     simdup_insert_select and plain INSERT (... SELECT, a statement a row,
#                     multi-row VALUES, prepared with generic and custom plans) give the dedup
#                     trigger's answers on a local table (skip, mark, reject; k = 3, 10; SimHash
#                     and similarity); 23505 with its fields; INSERT and UPDATE ... RETURNING
#                     (the local table's rows, in order; privileges; refused forms); ON
#                     CONFLICT DO NOTHING (the local table's rows); DO UPDATE refused;
#                     EXPLAIN; hostile schema, table and column names on every write path;
#   settings.sql      the writer's session settings (standard_conforming_strings, DateStyle,
#                     IntervalStyle, extra_float_digits, bytea_output, TimeZone, one at a time and
#                     all at once) change nothing a checked write stores: INSERT (a row, several,
#                     prepared), COPY, UPDATE and RETURNING give the local table's rows, as an
#                     ordinary role (settings_writes.sql: the writes of one round;
#                     settings_round.sql: one round into both tables, compared);
#   here              COPY into the table checked (the local trigger's answers), COPY ... WHERE
#                     and (ON_ERROR) refused; writes through
#                     a worker (MX) refused; an ordinary role's every way around the check (SET
#                     LOCAL, ALTER ROLE SET, PGOPTIONS on a worker, data-modifying WITH,
#                     defaults, direct calls): 23505 or refused; a concurrent near-duplicate on
#                     another shard waits, then gets 23505; an open transaction's checked
#                     writes hold no stripe and unrelated writers beside it do not wait (SimHash,
#                     similarity); two transactions crossing on near-duplicates of each other's
#                     pending rows: one 40P01, the other's rows stored; with 64 slots a 100-row
#                     transaction holds its stripes to commit (a near-duplicate waits, then 23505)
#                     and the slots are free again after it; 8 concurrent clients with plain
#                     INSERTs (SimHash) and simdup_insert (similarity) in reject mode never store
#                     two near-duplicates on any shards, lose no document and see no error but
#                     23505; COPY into a similarity table (mark) and 8 clients in skip mode, a row
#                     and 8 rows a statement (the batch), likewise.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. tests/similar_rule.sh
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

step "dedup across shards (dedup_checks.sql)"
checks tests/citus/dedup_checks.sql

step "the writer's session settings: checked writes store what a local table stores (settings.sql)"
checks tests/citus/settings.sql

step "COPY into a distributed table with dedup: every row checked across shards, the local trigger's answers"
psql_on 0 -o /dev/null -c "CREATE TABLE copied (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT create_distributed_table('copied', 'id', shard_count => 4)" \
  -c "SELECT simdup_enable('copied', 'body', on_duplicate => 'skip', max_distance => 3)" \
  -c "CREATE TABLE copied_local (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT simdup_enable('copied_local', 'body', on_duplicate => 'skip', max_distance => 3)" \
  -c "INSERT INTO copied_local (id, body) SELECT id, body FROM pool ORDER BY id"
# All 584 rows in one COPY (batches of 1,000 rows at most: one), then again in CSV through
# a column list: every row a near-duplicate of a stored one now, so none stored.
copy_in() { # copy_in SQL: a COPY ... FROM STDIN on the coordinator, its command tag printed
  "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -h "$SOCK" -p "$BASE" -U postgres -d "$DB" -c "$1"
}
out="$(psql_on 0 -c "COPY (SELECT id, body FROM pool ORDER BY id) TO STDOUT" | copy_in "COPY copied (id, body) FROM STDIN")"
want="$(psql_on 0 -tA -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM copied_local")"
got="$(psql_on 0 -tA -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM copied")"
[ "$got" = "$want" ] && [ "$out" = "COPY $(tr ',' '\n' <<<"$got" | wc -l)" ] || fail "COPY stored ($out): $got, want $want"
out2="$(psql_on 0 -c "COPY (SELECT id + 1000, body FROM pool ORDER BY id) TO STDOUT (FORMAT csv)" | copy_in "COPY copied (id, body) FROM STDIN (FORMAT csv)")"
[ "$out2" = "COPY 0" ] || fail "a COPY of stored texts under new keys stored rows: $out2"
echo "  ok: COPY of the pool into the table (skip, k = 3): the rows the local trigger keeps ($out of $(psql_on 0 -tA -c "SELECT count(*) FROM pool")); the same texts again under new keys, CSV: $out2" >&2
# COPY ... WHERE, and ON_ERROR (PostgreSQL 17+), whose skipped rows the batches would not skip:
# refused before any row is read, nothing stored.
stored="$(psql_on 0 -tA -c "SELECT count(*) FROM copied")"
refusals=("WHERE id > 0|COPY … FROM … WHERE")
if [ "$(psql_on 0 -tA -c "SHOW server_version_num")" -ge 170000 ]; then refusals+=("(ON_ERROR ignore)|COPY … FROM … (ON_ERROR)"); fi
for r in "${refusals[@]}"; do
  out="$(printf '%s\t%s\n' 990001 'a new text that the refused COPY must not store' \
         | "$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -h "$SOCK" -p "$BASE" -U postgres -d "$DB" \
             -c "COPY copied (id, body) FROM STDIN ${r%%|*}" 2>&1 || true)"
  grep -qF "ERROR:  0A000: ${r#*|} is not supported on distributed dedup table public.copied" <<<"$out" \
    || fail "COPY ... ${r%%|*} into a distributed dedup table: $out"
  echo "  ok: COPY ... ${r%%|*} into a distributed dedup table: 0A000" >&2
done
[ "$(psql_on 0 -tA -c "SELECT count(*) FROM copied")" = "$stored" ] || fail "a refused COPY stored rows"

step "COPY into a distributed similarity-dedup table (mark): checked in batches, the local similarity trigger's dup_of"
psql_on 0 -o /dev/null -c "CREATE TABLE copied_sim (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT create_distributed_table('copied_sim', 'id', shard_count => 4)" \
  -c "SELECT simdup_enable_similar('copied_sim', 'body', 0.5, on_duplicate => 'mark')" \
  -c "CREATE TABLE copied_sim_local (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT simdup_enable_similar('copied_sim_local', 'body', 0.5, on_duplicate => 'mark')" \
  -c "INSERT INTO copied_sim_local (id, body) SELECT id, body FROM pool ORDER BY id" \
  -c "INSERT INTO copied_sim_local (id, body) SELECT id + 1000, body FROM pool ORDER BY id DESC"
out="$(psql_on 0 -c "COPY (SELECT id, body FROM pool ORDER BY id) TO STDOUT" | copy_in "COPY copied_sim (id, body) FROM STDIN")"
out2="$(psql_on 0 -c "COPY (SELECT id + 1000, body FROM pool ORDER BY id DESC) TO STDOUT (FORMAT csv)" | copy_in "COPY copied_sim (id, body) FROM STDIN (FORMAT csv)")"
want="$(psql_on 0 -tA -c "SELECT string_agg(id || ':' || coalesce(dup_of::text, '-'), ',' ORDER BY id) FROM copied_sim_local")"
got="$(psql_on 0 -tA -c "SELECT string_agg(id || ':' || coalesce(dup_of::text, '-'), ',' ORDER BY id) FROM copied_sim")"
pool_rows="$(psql_on 0 -tA -c "SELECT count(*) FROM pool")"
marked="$(psql_on 0 -tA -c "SELECT count(*) FILTER (WHERE id < 1000 AND dup_of IS NOT NULL) || ' / ' || count(*) FILTER (WHERE id > 1000 AND dup_of < 1000) FROM copied_sim")"
[ "$got" = "$want" ] && [ "$out" = "COPY $pool_rows" ] && [ "$out2" = "COPY $pool_rows" ] || fail "similarity COPY ($out, $out2): $got, want $want"
echo "  ok: COPY of the pool, then of its texts under new keys in reverse (CSV), into a similarity table in mark mode: dup_of = the local trigger's for all $((2 * pool_rows)) rows (marked: $marked in the first / second COPY)" >&2

step "writes through a worker (MX) are refused, simdup_insert there too"
out="$(psql_on 1 -v VERBOSITY=verbose -c "INSERT INTO conc (id, body) VALUES (1, 'a text written through worker 1')" 2>&1 || true)"
grep -q 'ERROR:  0A000: this write to distributed table public.conc cannot be checked for near-duplicates' <<<"$out" || fail "INSERT through a worker: $out"
out="$(psql_on 1 -v VERBOSITY=verbose -c "SELECT simdup_insert('conc', '{\"id\": 1, \"body\": \"a text\"}')" 2>&1 || true)"
grep -q 'ERROR:  0A000: simdup_insert into distributed table public.conc must run on the coordinator' <<<"$out" || fail "simdup_insert on a worker: $out"
[ "$(psql_on 0 -tA -c "SELECT count(*) FROM conc")" = 0 ] || fail "a write through the worker was stored"
before="$(psql_on 0 -tA -c "SELECT md5(string_agg(body, ',' ORDER BY id)) FROM up_reject")"
out="$(psql_on 1 -v VERBOSITY=verbose -c "UPDATE up_reject SET body = body || ' (changed through worker 1)'" 2>&1 || true)"
grep -q 'ERROR:  0A000: this write to distributed table public.up_reject cannot be checked for near-duplicates' <<<"$out" || fail "UPDATE of the text through a worker: $out"
[ "$(psql_on 0 -tA -c "SELECT md5(string_agg(body, ',' ORDER BY id)) FROM up_reject")" = "$before" ] || fail "an UPDATE through the worker changed rows"
echo "  ok: INSERT and UPDATE of the text through worker 1 (MX): 0A000, nothing changed; simdup_insert on worker 1: 0A000 (its locks would not serialize the coordinator's writers)" >&2

step "no bypass: an ordinary role with SELECT and INSERT tries every way around the check"
# guard_t: reject, k = 3; the text and a who column have defaults. The role writer is not the
# owner. Each attempt must store nothing unchecked: on the coordinator every write is checked
# whatever simdup.checked_write says (23505 for a copy of a stored row), through a worker it is
# refused (0A000).
psql_on 0 -o /dev/null <<'SQL'
CREATE ROLE writer LOGIN;
CREATE ROLE outsider LOGIN;
CREATE TABLE guard_t (id bigint PRIMARY KEY, body text DEFAULT 'The committee approved the annual budget after a long debate about school funding and road repairs in the northern districts.', who text DEFAULT current_user);
SELECT create_distributed_table('guard_t', 'id', shard_count => 4);
SELECT simdup_enable('guard_t', 'body', on_duplicate => 'reject', max_distance => 3);
GRANT SELECT, INSERT ON guard_t TO writer;
GRANT SELECT ON pool TO writer;
SQL
as_role() { # as_role ROLE PORT_OFFSET [psql args]: a session of ROLE on a node
  local r="$1" o="$2"; shift 2
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -h "$SOCK" -p $((BASE + o)) -U "$r" -d "$DB" "$@"
}
count() { psql_on 0 -tA -c "SELECT count(*) FROM guard_t"; }
refused() { # refused WHAT OUTPUT: the output holds the shard trigger's refusal
  grep -q "ERROR:  0A000: this write to distributed table public.guard_t cannot be checked for near-duplicates" <<<"$2" || fail "$1 was not refused: $2"
}
rejected() { # rejected WHAT OUTPUT: the output holds the check's 23505
  grep -q 'ERROR:  23505: near-duplicate row violates simdup_dedup on relation "guard_t"' <<<"$2" || fail "$1 was not rejected with 23505: $2"
}
# simdup_insert works for the role, as the role: the defaults are its own, the text checked.
as_role writer 0 -o /dev/null -c "SELECT simdup_insert_select('guard_t', 'SELECT id, body FROM pool p WHERE NOT EXISTS (SELECT FROM pool q WHERE q.id < p.id AND hamming(q.fp, p.fp) <= 3) ORDER BY id LIMIT 5')"
as_role writer 0 -o /dev/null -c "SELECT simdup_insert('guard_t', '{\"id\": 100}')"
[ "$(psql_on 0 -tA -c "SELECT who FROM guard_t WHERE id = 100")" = writer ] || fail "a default (current_user) was not evaluated as the caller"
before=$(count)
out="$(as_role writer 0 -c "SELECT simdup_insert('guard_t', '{\"id\": 101}')" 2>&1 || true)"
grep -q "ERROR:  23505: near-duplicate row violates simdup_dedup on relation \"guard_t\"" <<<"$out" || fail "a default text equal to a stored one: $out"
# The attack of the issue: the marker set with SET LOCAL, propagated to the workers.
out="$(as_role writer 0 2>&1 <<'SQL' || true
BEGIN;
SET LOCAL citus.propagate_set_commands = 'local';
SET LOCAL simdup.checked_write = 'public.guard_t';
INSERT INTO guard_t (id, body) SELECT 5000000 + id, body FROM guard_t ORDER BY id LIMIT 5;
COMMIT;
SQL
)"
rejected "INSERT ... SELECT of stored rows with SET LOCAL simdup.checked_write" "$out"
# The same, session-wide and persistent: ALTER ROLE ... SET (Citus propagates it), then PGOPTIONS on a worker.
as_role writer 0 -o /dev/null -c "ALTER ROLE writer SET simdup.checked_write = 'public.guard_t'"
out="$(as_role writer 0 -c "INSERT INTO guard_t (id, body) SELECT 6000000 + id, body FROM guard_t ORDER BY id LIMIT 5" 2>&1 || true)"
rejected "INSERT ... SELECT under ALTER ROLE writer SET simdup.checked_write" "$out"
out="$(as_role writer 0 -c "SELECT id + 6100000, body, who FROM guard_t ORDER BY id LIMIT 5" -A -t -F $'\t' | as_role writer 0 -c "COPY guard_t (id, body, who) FROM STDIN" 2>&1 || true)"
rejected "COPY of stored rows under ALTER ROLE writer SET simdup.checked_write" "$out"
as_role writer 0 -o /dev/null -c "ALTER ROLE writer RESET simdup.checked_write"
out="$(PGOPTIONS="-c simdup.checked_write=public.guard_t" as_role writer 1 -c "INSERT INTO guard_t (id, body) SELECT 7000000 + id, body FROM guard_t ORDER BY id LIMIT 5" 2>&1 || true)"
refused "INSERT through a worker with PGOPTIONS='-c simdup.checked_write=...'" "$out"
# A data-modifying WITH in simdup_insert_select's query.
out="$(as_role writer 0 -c "SELECT simdup_insert_select('guard_t', 'WITH w AS (INSERT INTO guard_t (id, body) SELECT 8000000 + id, body FROM guard_t RETURNING id) SELECT id FROM w')" 2>&1 || true)"
grep -q "ERROR:" <<<"$out" || fail "a data-modifying WITH in simdup_insert_select's query ran: $out"
# A data-modifying WITH around an INSERT into the table: Citus plans it as a subplan, through
# simdup's planner hook, so it is a checked write (it took the server down while Citus read
# simdup's plan node as its own, before 0.3.0), with RETURNING and without.
out="$(as_role writer 0 -c "WITH w AS (INSERT INTO guard_t (id, body) SELECT 8100000 + id, body FROM guard_t RETURNING id) SELECT count(*) FROM w" 2>&1 || true)"
rejected "a data-modifying WITH into the table (RETURNING)" "$out"
out="$(as_role writer 0 -c "WITH w AS (INSERT INTO guard_t (id, body) SELECT 8200000 + id, body FROM guard_t) SELECT 1" 2>&1 || true)"
rejected "a data-modifying WITH into the table" "$out"
# Plain INSERTs that leave the text to its default: the default is checked like any text.
out="$(as_role writer 0 -c "INSERT INTO guard_t (id) VALUES (102)" 2>&1 || true)"
rejected "a plain INSERT leaving the text to a default equal to a stored text" "$out"
# _simdup_checked_insert called directly: the same check.
copy="$(psql_on 0 -tA -c "SELECT (to_jsonb(g) - 'simhash') || '{\"id\": 9000000}' FROM guard_t g WHERE id = 1")"
out="$(as_role writer 0 -v row="$copy" 2>&1 <<<"SELECT _simdup_checked_insert('guard_t', :'row');" || true)"
grep -q "ERROR:  23505: near-duplicate row violates simdup_dedup on relation \"guard_t\"" <<<"$out" || fail "_simdup_checked_insert of a stored row's copy: $out"
[ "$(count)" = "$before" ] || fail "the bypass attempts stored $(( $(count) - before )) rows"
# A role without INSERT cannot write through it.
psql_on 0 -o /dev/null -c "GRANT SELECT ON guard_t TO outsider"
out="$(as_role outsider 0 -c "SELECT simdup_insert('guard_t', '{\"id\": 200, \"body\": \"a text nobody stored before, about rivers\"}')" 2>&1 || true)"
grep -q "ERROR:  42501: permission denied for table guard_t" <<<"$out" || fail "simdup_insert without INSERT: $out"
[ "$(count)" = "$before" ] || fail "a role without INSERT stored a row"
# UPDATEs of the text: 42501 without UPDATE; with UPDATE on the text, as the role, with
# simdup.checked_write set locally and propagated: the UPDATE is checked, 23505 for a stored text.
psql_on 0 -o /dev/null -c "INSERT INTO guard_t (id, body) VALUES (9100000, 'A row of its own for the UPDATE attempts, about the lighthouse keepers of the bay.')"
steal="UPDATE guard_t SET body = (SELECT body FROM guard_t WHERE id = 1) WHERE id = 9100000"
out="$(as_role writer 0 -c "$steal" 2>&1 || true)"
grep -q "ERROR:  42501: permission denied for table guard_t" <<<"$out" || fail "UPDATE without the UPDATE privilege: $out"
psql_on 0 -o /dev/null -c "GRANT UPDATE (body) ON guard_t TO writer"
out="$(as_role writer 0 2>&1 <<SQL || true
BEGIN;
SET LOCAL citus.propagate_set_commands = 'local';
SET LOCAL simdup.checked_write = 'public.guard_t';
$steal;
COMMIT;
SQL
)"
rejected "an UPDATE giving a row a stored text, with SET LOCAL simdup.checked_write" "$out"
[ "$(psql_on 0 -tA -c "SELECT left(body, 16) FROM guard_t WHERE id = 9100000")" = "A row of its own" ] || fail "an UPDATE attempt changed row 9100000"
psql_on 0 -o /dev/null -c "DELETE FROM guard_t WHERE id = 9100000" -c "REVOKE UPDATE (body) ON guard_t FROM writer"
echo "  ok: as a role with only SELECT and INSERT: simdup_insert stores checked rows (defaults evaluated as the role); a default text equal to a stored one (simdup_insert, plain INSERT): 23505; SET LOCAL simdup.checked_write (propagated) and ALTER ROLE ... SET: plain INSERT ... SELECT and COPY of stored rows get 23505; PGOPTIONS on a worker: refused (0A000); a data-modifying WITH in simdup_insert_select's query: refused; around a plain INSERT (with RETURNING and without): 23505; _simdup_checked_insert called directly: 23505; without INSERT: 42501; an UPDATE giving a row a stored text: 42501 without UPDATE, 23505 with it (and SET LOCAL simdup.checked_write); nothing stored unchecked" >&2

step "concurrency: a near-duplicate on another shard waits for the first writer, then 23505"
ab="$(psql_on 0 -tA -F ' ' -c "SELECT a.id, b.id FROM pool a JOIN pool b ON a.id < b.id
    AND hamming(a.fp, b.fp) BETWEEN 1 AND 3
    AND get_shard_id_for_distribution_column('conc', a.id) <> get_shard_id_for_distribution_column('conc', b.id)
    ORDER BY 1, 2 LIMIT 1")"
set -- $ab
# hold_first SQL [HOLD [AFTER [LOG]]]: runs SQL in a transaction of its own that commits HOLD
# (3) s later, in the background (its pid in $first), its errors to LOG (stderr), and returns
# AFTER (1) s after it started.
hold_first() {
  ( [ -z "${4:-}" ] || exec 2>"$4"   # (not 2>/dev/stderr: that would truncate a log file on fd 2)
    psql_on 0 <<SQL
BEGIN;
$1;
SELECT pg_sleep(${2:-3});
COMMIT;
SQL
  ) >/dev/null &
  first=$!
  sleep "${3:-1}"
}
# The first writer holds its lock stripes for 3 s before committing.
hold_first "SELECT simdup_insert_select('conc', 'SELECT id, body FROM pool WHERE id = $1')"
t_b=$(date +%s.%N)
out="$(psql_on 0 -v VERBOSITY=verbose -c "SELECT simdup_insert_select('conc', 'SELECT id, body FROM pool WHERE id = $2')" 2>&1 || true)"
waited=$(since "$t_b")
wait "$first" || fail "the first writer failed"
grep -q "ERROR:  23505: near-duplicate row violates simdup_dedup on relation \"conc\"" <<<"$out" || fail "second writer: $out"
awk -v w="$waited" 'BEGIN { exit !(w > 1.5) }' || fail "the second writer did not wait for the first (${waited}s)"
[ "$(psql_on 0 -tA -c "SELECT string_agg(id::text, ',') FROM conc")" = "$1" ] || fail "conc holds the wrong rows"
printf '  ok: the second writer (row %s, another shard) waited %s s for the first (row %s), then got 23505\n' "$2" "$waited" "$1" >&2

step "liveness: an open transaction's checked writes hold no stripe; unrelated writers do not wait for it"
# The issue's shape on Citus: one transaction writes 60 unrelated rows (a multi-row INSERT: a
# batch; then single-row INSERTs) and stays open for 8 s; another session writes 20 unrelated
# rows a statement at a time with lock_timeout = 1s. Until 0.4.0 the checked write held its
# stripes to commit (60 rows: most of a k = 10 table's 640), and the others timed out.
for kind in simhash similar; do
  tbl="live_$kind"
  enable="SELECT simdup_enable('$tbl', 'body', on_duplicate => 'reject', max_distance => 10)"
  [ "$kind" = similar ] && enable="SELECT simdup_enable_similar('$tbl', 'body', 0.5, on_duplicate => 'reject')"
  psql_on 0 -o /dev/null -c "CREATE TABLE $tbl (id bigint PRIMARY KEY, body text NOT NULL)" \
    -c "SELECT create_distributed_table('$tbl', 'id')" -c "$enable"
  words="SELECT string_agg(md5(random()::text || w), ' ') FROM generate_series(1, 30) w"
  hold_first "INSERT INTO $tbl SELECT g, ($words WHERE g > 0) FROM generate_series(1, 50) g;
INSERT INTO $tbl VALUES (51, ($words));
INSERT INTO $tbl VALUES (52, ($words)), (53, ($words));
INSERT INTO $tbl SELECT g, ($words WHERE g > 0) FROM generate_series(54, 60) g" 8 2 "/tmp/simdup-citus-$BASE/$tbl.first.log"
  held=$(psql_on 0 -tA -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid IN (21316, 21317)")
  t_b=$(date +%s.%N)
  for i in $(seq 101 120); do echo "INSERT INTO $tbl VALUES ($i, ($words));"; done |
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=0 -h "$SOCK" -p "$BASE" -U postgres -d "$DB" \
      -c "SET lock_timeout = '1s'" -f - >"/tmp/simdup-citus-$BASE/$tbl.others.log" 2>&1 || true
  took=$(since "$t_b")
  open=$(kill -0 "$first" 2>/dev/null && echo yes || echo no)
  wait "$first" || { cat "/tmp/simdup-citus-$BASE/$tbl.first.log" >&2; fail "$kind: the open transaction failed"; }
  [ "$held" = 0 ] || fail "$kind: $held simdup stripes held while the open transaction sat idle (want 0)"
  errors=$(grep -c 'ERROR' "/tmp/simdup-citus-$BASE/$tbl.others.log" || true)
  [ "$errors" = 0 ] || { head -5 "/tmp/simdup-citus-$BASE/$tbl.others.log" >&2; fail "$kind: $errors of 20 unrelated writes failed beside the open transaction"; }
  [ "$open" = yes ] || fail "$kind: the open transaction ended before the others finished (the test shows nothing)"
  [ "$(psql_on 0 -tA -c "SELECT count(*) FROM $tbl")" = 80 ] || fail "$kind: $tbl does not hold the 80 rows"
  printf '  ok (%s): the open transaction (60 rows, 4 statements) held 0 stripes; 20 unrelated single-row INSERTs beside it, lock_timeout 1s: all stored in %s s, before it committed\n' "$kind" "$took" >&2
done

step "crossing near-duplicates: two transactions each write a near-duplicate of the other's pending row: one 40P01, the other stores its rows"
# T1 writes a1, T2 writes b1 (pending, not near-duplicates of each other); then T1 writes b2 (a
# near-duplicate of b1: it waits for T2) and T2 writes a2 (of a1: it waits for T1). The
# coordinator's deadlock detector ends one; the other's wait returns and it stores its second row.
quad="$(psql_on 0 -tA -F ' ' -c "WITH p AS (SELECT a.id x, b.id y FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) BETWEEN 1 AND 3)
  SELECT p.x, p.y, q.x, q.y FROM p JOIN p q ON q.x > p.y
   WHERE NOT EXISTS (SELECT FROM pool u, pool v WHERE u.id IN (p.x, p.y) AND v.id IN (q.x, q.y) AND hamming(u.fp, v.fp) <= 10)
   ORDER BY 1, 2, 3, 4 LIMIT 1")"
set -- $quad
psql_on 0 -o /dev/null -c "CREATE TABLE cross_t (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT create_distributed_table('cross_t', 'id')" \
  -c "SELECT simdup_enable('cross_t', 'body', on_duplicate => 'reject', max_distance => 3)"
ins() { echo "INSERT INTO cross_t SELECT id, body FROM pool WHERE id = $1;"; }
( { echo "BEGIN;"; ins "$1"; echo "SELECT pg_sleep(2);"; ins "$4"; echo "COMMIT;"; } |
    psql_on 0 -v VERBOSITY=verbose >/dev/null 2>"/tmp/simdup-citus-$BASE/cross.1.log" ) &
p1=$!
sleep 0.5
( { echo "BEGIN;"; ins "$3"; echo "SELECT pg_sleep(2);"; ins "$2"; echo "COMMIT;"; } |
    psql_on 0 -v VERBOSITY=verbose >/dev/null 2>"/tmp/simdup-citus-$BASE/cross.2.log" ) &
p2=$!
r1=0; wait "$p1" || r1=$?
r2=0; wait "$p2" || r2=$?
dead=$(cat /tmp/simdup-citus-$BASE/cross.[12].log | grep -c "ERROR:  40P01" || true)
others=$(cat /tmp/simdup-citus-$BASE/cross.[12].log | grep "ERROR" | grep -vc "40P01" || true)
[ "$dead" = 1 ] && [ "$others" = 0 ] || { cat /tmp/simdup-citus-$BASE/cross.[12].log >&2; fail "crossing near-duplicates: $dead deadlock errors, $others other errors (want 1 and 0)"; }
[ $((r1 == 0 ? 1 : 0)) != $((r2 == 0 ? 1 : 0)) ] || fail "crossing near-duplicates: exit statuses $r1 and $r2 (want one failure)"
stored="$(psql_on 0 -tA -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM cross_t")"
want="$([ "$r1" = 0 ] && printf '%s' "$(printf '%s\n' "$1" "$4" | sort -n | paste -sd,)" || printf '%s' "$(printf '%s\n' "$3" "$2" | sort -n | paste -sd,)")"
[ "$stored" = "$want" ] || fail "crossing near-duplicates: cross_t holds $stored, want $want (the survivor's two rows)"
printf '  ok: T1 (rows %s, %s) and T2 (rows %s, %s), each second row a near-duplicate of the other'"'"'s first: one 40P01, the other stored %s\n' "$1" "$4" "$3" "$2" "$stored" >&2

step "concurrency: an UPDATE of the text whose row another transaction changes meanwhile reads it again (READ COMMITTED)"
# The first transaction changes a row of up_mark and holds it for 3 s; an UPDATE of that row's
# text started meanwhile has read the row as it was: its checked write (by key and ctid) waits
# for the first, finds the row changed, and reads it again as it is now, as READ COMMITTED
# re-reads a row: its new values computed from the first one's row, checked, written (UPDATE 1);
# a row that no longer satisfies its WHERE is left out (UPDATE 0). A statement of many rows
# (a batch) gets 40001 instead: the batch's later rows were decided with that row's new text.
row="$(psql_on 0 -tA -c "SELECT min(id) FROM up_mark WHERE id % 6 <> 0")"
hold_first "UPDATE up_mark SET note = 'first', body = 'The first writer''s text, about the harbour walls after the storm of the winter.' WHERE id = $row"
out="$(psql_on 0 -v QUIET=off -v VERBOSITY=verbose -c "UPDATE up_mark SET body = body || ' The second writer added this sentence about the gulls.' WHERE id = $row" 2>&1 || true)"
wait "$first" || fail "the first transaction failed"
grep -q "^UPDATE 1" <<<"$out" || fail "the second UPDATE: $out"
[ "$(psql_on 0 -tA -c "SELECT note || ':' || body FROM up_mark WHERE id = $row")" \
  = "first:The first writer's text, about the harbour walls after the storm of the winter. The second writer added this sentence about the gulls." ] \
  || fail "row $row: not the second UPDATE computed from the first one's row: $(psql_on 0 -tA -c "SELECT note || ':' || body FROM up_mark WHERE id = $row")"
# The same with a prepared statement (its parameters passed to the re-read): prepared_second
# FIRST COND runs, while FIRST holds row $row changed, a prepared UPDATE appending to the row's
# text WHERE id = $row AND COND; its output in $out.
prepared_second() {
  hold_first "$1"
  out="$(psql_on 0 -v QUIET=off -v VERBOSITY=verbose <<SQL 2>&1 || true
PREPARE second(text, bigint) AS UPDATE up_mark SET body = body || \$1 WHERE id = \$2 AND $2;
EXECUTE second(' Appended by a prepared statement.', $row);
SQL
)"
  wait "$first" || fail "the first transaction failed"
}
# A WHERE the first transaction's change makes false: UPDATE 0.
prepared_second "UPDATE up_mark SET note = 'again', body = 'Another text of the first writer, on the lighthouse keepers and their logbooks.' WHERE id = $row" "note = 'first'"
grep -q "^UPDATE 0" <<<"$out" || fail "the prepared UPDATE whose WHERE the first made false: $out"
[ "$(psql_on 0 -tA -c "SELECT note || ':' || left(body, 25) FROM up_mark WHERE id = $row")" = "again:Another text of the first" ] \
  || fail "row $row: the first transaction's change lost, or the second's written"
prepared_second "UPDATE up_mark SET note = 'third' WHERE id = $row" "note IS NOT NULL"
grep -q "^UPDATE 1" <<<"$out" || fail "the prepared UPDATE re-read: $out"
[ "$(psql_on 0 -tA -c "SELECT note || ':' || right(body, 34) FROM up_mark WHERE id = $row")" = "third: Appended by a prepared statement." ] \
  || fail "row $row: the prepared UPDATE's re-read row not written"
# Many rows in one statement: 40001 (nothing of it written), the first one's change kept.
others="$(psql_on 0 -tA -c "SELECT string_agg(id::text, ',') FROM (SELECT id FROM up_mark WHERE id % 6 <> 0 AND id <> $row ORDER BY id LIMIT 5) x")"
hold_first "UPDATE up_mark SET note = 'batch' WHERE id = $row"
out="$(psql_on 0 -v VERBOSITY=verbose -c "UPDATE up_mark SET body = body || ' (many)' WHERE id IN ($row, $others)" 2>&1 || true)"
wait "$first" || fail "the first transaction failed"
grep -q "ERROR:  40001: could not serialize access due to concurrent update" <<<"$out" || fail "the UPDATE of many rows: $out"
[ "$(psql_on 0 -tA -c "SELECT count(*) FROM up_mark WHERE body LIKE '% (many)'")" = 0 ] || fail "the UPDATE of many rows wrote some"
echo "  ok: an UPDATE of the text of row $row started while another transaction held that row changed: once the other committed, the row read again and its new text computed from the other's row, checked and written; prepared, with a WHERE the other made false: UPDATE 0; prepared, still true: written; a statement of many rows (a batch): 40001, nothing written, the other's change kept" >&2

# clients NAME: 8 psql clients on the coordinator at once, client c (0..7) running the SQL that
# `client_sql c` prints, errors going on (ON_ERROR_STOP=0) into /tmp/simdup-citus-$BASE/NAME.c.log;
# waits for all of them.
clients() {
  local name="$1" c i pids=()
  for c in 0 1 2 3 4 5 6 7; do
    client_sql "$c" | "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=0 -v VERBOSITY=verbose -h "$SOCK" -p "$BASE" -U postgres \
      -d "$DB" -o /dev/null >"/tmp/simdup-citus-$BASE/$name.$c.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { cat "/tmp/simdup-citus-$BASE/$name.$i.log" >&2; fail "concurrent client $i failed"; }
  done
}

step "8 concurrent clients, plain INSERTs, reject: no two stored rows within 3 bits on any shards, no document lost, only 23505"
# Client c (0..7) writes the pool rows with id % 8 = 2 * (c % 4) under ids c * 100000 + id,
# one plain INSERT (one transaction) per row, reject, k = 3; clients c and c + 4 send the same
# texts from opposite ends, so identical and near-duplicate texts race each other on different
# shards. psql goes on after an error; every error reaches the client's log.
psql_on 0 -o /dev/null -c "CREATE TABLE conc8 (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT create_distributed_table('conc8', 'id')" \
  -c "SELECT simdup_enable('conc8', 'body', on_duplicate => 'reject', max_distance => 3)"
client_sql() {
  local c="$1" dir=ASC; [ "$1" -ge 4 ] && dir=DESC
  echo "SELECT format('INSERT INTO conc8 (id, body) VALUES (%s, %L)', $c * 100000 + id, body)
        FROM pool WHERE id % 8 = $((2 * (c % 4))) ORDER BY id $dir \\gexec"
}
clients conc8
errors=$(cat /tmp/simdup-citus-$BASE/conc8.*.log | grep -c 'ERROR:' || true)
rejected=$(cat /tmp/simdup-citus-$BASE/conc8.*.log | grep -c 'ERROR:  23505: near-duplicate row violates simdup_dedup on relation "conc8"' || true)
[ "$errors" = "$rejected" ] || { grep -h 'ERROR:' /tmp/simdup-citus-$BASE/conc8.*.log | grep -v 23505 | head >&2; fail "8 clients: $((errors - rejected)) errors other than 23505"; }
res="$(psql_on 0 -tA -F ' ' -c "CREATE TEMP TABLE s AS SELECT id, simhash, get_shard_id_for_distribution_column('conc8', id) AS shard FROM conc8;
  CREATE TEMP TABLE att AS SELECT c * 100000 + p.id AS id, p.id AS pid, p.fp, get_shard_id_for_distribution_column('conc8', c * 100000 + p.id) AS shard
    FROM pool p, generate_series(0, 7) c WHERE p.id % 8 = 2 * (c % 4);
  SELECT (SELECT count(*) FROM s),
         (SELECT count(*) FROM s a JOIN s b ON a.id < b.id AND hamming(a.simhash, b.simhash) <= 3),
         (SELECT count(*) FROM att a WHERE NOT EXISTS (SELECT FROM s WHERE hamming(s.simhash, a.fp) <= 3)),
         (SELECT count(DISTINCT a.pid) FROM att a WHERE NOT EXISTS (SELECT FROM att b WHERE b.pid <> a.pid AND hamming(a.fp, b.fp) <= 3)),
         (SELECT count(DISTINCT a.pid) FROM att a WHERE NOT EXISTS (SELECT FROM att b WHERE b.pid <> a.pid AND hamming(a.fp, b.fp) <= 3)
            AND (SELECT count(*) FROM s JOIN att x ON x.id = s.id WHERE x.pid = a.pid) = 1),
         (SELECT count(*) FROM att a WHERE a.id NOT IN (SELECT id FROM s)
            AND NOT EXISTS (SELECT FROM s WHERE s.shard = a.shard AND hamming(s.simhash, a.fp) <= 3)),
         (SELECT count(*) FROM att)")"
set -- $res
[ "$2" = 0 ] || fail "8 clients: $2 pairs of stored rows within 3 bits"
[ "$3" = 0 ] || fail "8 clients: $3 attempted rows have no stored row within 3 bits (rejected without a near-duplicate?)"
[ "$4" -gt 0 ] && [ "$5" = "$4" ] || fail "8 clients: of $4 texts without another text within 3 bits, only $5 are stored exactly once"
[ "$6" -gt 0 ] || fail "8 clients: no row was rejected for a near-duplicate on another shard only (the test shows nothing)"
[ "$1" -gt 0 ] && [ $(( $1 + rejected )) = "$7" ] || fail "8 clients stored $1 rows and got $rejected rejections for $7 attempts"
printf '  ok: 8 clients, %s single-row plain INSERTs (each even-numbered pool text twice): %s stored, %s rejected with 23505 and no other error; no two stored rows within 3 bits across shards; every attempt has a stored row within 3; each of the %s texts without a near-duplicate stored exactly once; %s rejected for a near-duplicate on another shard only\n' "$7" "$1" "$rejected" "$4" "$6" >&2

step "8 concurrent clients, similarity reject: no two stored rows similar (the rule: jaccard >= 0.5 through a band, containment >= 0.8 through keys, the short-text rule) on any shards, no document lost, only 23505"
# The same clients and rows as above, into a table deduplicated by verified similarity.
psql_on 0 -o /dev/null -c "CREATE TABLE sconc8 (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT create_distributed_table('sconc8', 'id')" \
  -c "SELECT simdup_enable_similar('sconc8', 'body', 0.5, on_duplicate => 'reject')"
client_sql() {
  local c="$1" dir=ASC; [ "$1" -ge 4 ] && dir=DESC
  echo "SELECT format('SELECT simdup_insert(''sconc8'', %L)', jsonb_build_object('id', $c * 100000 + id, 'body', body))
        FROM pool WHERE id % 8 = $((2 * (c % 4))) ORDER BY id $dir \\gexec"
}
clients sconc8
errors=$(cat /tmp/simdup-citus-$BASE/sconc8.*.log | grep -c 'ERROR:' || true)
rejected=$(cat /tmp/simdup-citus-$BASE/sconc8.*.log | grep -c 'ERROR:  23505: near-duplicate row violates simdup_dedup_similar on relation "sconc8"' || true)
[ "$errors" = "$rejected" ] || { grep -h 'ERROR:' /tmp/simdup-citus-$BASE/sconc8.*.log | grep -v 23505 | head >&2; fail "8 clients (similarity): $((errors - rejected)) errors other than 23505"; }
# The trigger's rule at the defaults (containment 0.8), restated in SQL (tests/similar_rule.sh).
near="$(similar_near 0.5 0.8 35 3)"
# The attempted pool texts of a similarity round that have no similar stored row, each with the
# stored row most like it (its jaccard and containment): what a "document lost" failure shows.
lost_detail() { # lost_detail TABLE
  psql_on 0 -tA -c "SELECT format('  pool text %s: closest stored row %s, jaccard %s, containment %s', b.id, c.id,
                                   round(jaccard(b.body, c.body)::numeric, 3), round(containment(b.body, c.body)::numeric, 3))
    FROM pool b CROSS JOIN LATERAL (SELECT a.id, a.body FROM $1 a ORDER BY jaccard(a.body, b.body) DESC LIMIT 1) c
    WHERE b.id % 2 = 0 AND NOT EXISTS (SELECT FROM $1 a WHERE $near) ORDER BY b.id LIMIT 5" >&2
}
res="$(psql_on 0 -tA -F ' ' -c "CREATE TEMP TABLE s AS SELECT id, body FROM sconc8;
  CREATE TEMP TABLE att AS SELECT c * 100000 + p.id AS id, p.body FROM pool p, generate_series(0, 7) c WHERE p.id % 8 = 2 * (c % 4);
  SELECT (SELECT count(*) FROM s),
         (SELECT count(*) FROM s a JOIN s b ON a.id < b.id AND $near),
         (SELECT count(*) FROM att b WHERE NOT EXISTS (SELECT FROM s a WHERE $near)),
         (SELECT count(*) FROM att)")"
set -- $res
[ "$2" = 0 ] || fail "8 clients (similarity): $2 pairs of similar stored rows"
[ "$3" = 0 ] || { lost_detail sconc8; fail "8 clients (similarity): $3 attempted rows have no similar stored row (rejected without a near-duplicate?)"; }
[ "$1" -gt 0 ] && [ $(( $1 + rejected )) = "$4" ] || fail "8 clients (similarity) stored $1 rows and got $rejected rejections for $4 attempts"
printf '  ok: 8 clients, %s single-row simdup_insert calls into a similarity-dedup table: %s stored, %s rejected with 23505 and no other error; no two stored rows similar across shards; every attempt has a similar stored row\n' "$4" "$1" "$rejected" >&2

step "8 concurrent clients, similarity skip, plain INSERTs a row and 8 rows at a time: no two stored rows similar, no document lost, no error"
# The same clients and rows, skip mode: clients 0-3 one plain INSERT a row (the checked write of
# one row), clients 4-7 the same texts from the other end, 8 rows to an INSERT ... SELECT (the
# batch: every row's stripes taken at once, one query over every shard, the batch's own rows
# checked in Rust), so that single rows and batches race for the same bands on different shards.
psql_on 0 -o /dev/null -c "CREATE TABLE sbatch8 (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT create_distributed_table('sbatch8', 'id')" \
  -c "SELECT simdup_enable_similar('sbatch8', 'body', 0.5, on_duplicate => 'skip')"
client_sql() {
  local c="$1" dir=ASC per=1; [ "$1" -ge 4 ] && { dir=DESC; per=8; }
  echo "SELECT format('INSERT INTO sbatch8 (id, body) SELECT $c * 100000 + id, body FROM pool WHERE id = ANY (%L) ORDER BY id $dir', array_agg(id))
        FROM (SELECT id, (row_number() OVER (ORDER BY id $dir) - 1) / $per AS g FROM pool WHERE id % 8 = $((2 * (c % 4)))) x
        GROUP BY g ORDER BY g \\gexec"
}
clients sbatch8
errors=$(cat /tmp/simdup-citus-$BASE/sbatch8.*.log | grep -c 'ERROR:' || true)
[ "$errors" = 0 ] || { grep -h 'ERROR:' /tmp/simdup-citus-$BASE/sbatch8.*.log | head >&2; fail "8 clients (similarity, skip): $errors errors"; }
res="$(psql_on 0 -tA -F ' ' -c "CREATE TEMP TABLE s AS SELECT id, body FROM sbatch8;
  CREATE TEMP TABLE att AS SELECT c * 100000 + p.id AS id, p.body FROM pool p, generate_series(0, 7) c WHERE p.id % 8 = 2 * (c % 4);
  SELECT (SELECT count(*) FROM s),
         (SELECT count(*) FROM s a JOIN s b ON a.id < b.id AND $near),
         (SELECT count(*) FROM att b WHERE NOT EXISTS (SELECT FROM s a WHERE $near)),
         (SELECT count(*) FROM s WHERE id >= 400000),
         (SELECT count(*) FROM att)")"
set -- $res
[ "$2" = 0 ] || fail "8 clients (similarity, skip): $2 pairs of similar stored rows"
[ "$3" = 0 ] || { lost_detail sbatch8; fail "8 clients (similarity, skip): $3 attempted rows have no similar stored row (a document lost)"; }
[ "$1" -gt 0 ] && [ "$4" -gt 0 ] && [ "$1" -lt "$5" ] || fail "8 clients (similarity, skip): $1 of $5 rows stored, $4 of them by the batch clients"
printf '  ok: 8 clients, %s rows into a similarity-dedup table in skip mode (4 clients a row a statement, 4 clients 8 rows a statement): %s stored (%s of them by the batches), no error; no two stored rows similar across shards; every attempted row has a similar stored row\n' "$5" "$1" "$4" >&2

step "pending rows: with too few slots the checked write holds its stripes to commit (still exact); slots freed at commit"
# The coordinator restarted with simdup.checked_write_slots = 64: a transaction writing 100 rows
# in one statement cannot record them, so it holds their stripes to its end; a near-duplicate of
# one of them waits (lock_timeout: 55P03) while it is open and gets 23505 once it committed; then
# a 10-row transaction records its rows (the slots were freed) and holds no stripe.
as_pg() { if [ "$(id -un)" = postgres ]; then "$@"; else sudo -u postgres "$@"; fi; }
psql_on 0 -o /dev/null -c "ALTER SYSTEM SET simdup.checked_write_slots = 64"
as_pg "$PG_BIN/pg_ctl" -D "/tmp/simdup-citus-$BASE/coord" -w -t 60 restart -l "/tmp/simdup-citus-$BASE/coord.log" >/dev/null
[ "$(psql_on 0 -tA -c "SHOW simdup.checked_write_slots")" = 64 ] || fail "the coordinator did not take simdup.checked_write_slots = 64"
psql_on 0 -o /dev/null -c "CREATE TABLE few (id bigint PRIMARY KEY, body text NOT NULL)" \
  -c "SELECT create_distributed_table('few', 'id')" \
  -c "SELECT simdup_enable('few', 'body', on_duplicate => 'reject', max_distance => 3)"
# Row g's text: 30 hex words of its own, the same each time it is written.
text_of() { echo "(SELECT string_agg(md5($1 || '-' || w), ' ') FROM generate_series(1, 30) w)"; }
hold_first "INSERT INTO few SELECT g, $(text_of g) FROM generate_series(1, 100) g" 4 2 "/tmp/simdup-citus-$BASE/few.log"
held=$(psql_on 0 -tA -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 21316 AND granted")
out="$(psql_on 0 -v VERBOSITY=verbose -c "SET lock_timeout = '1s'" -c "INSERT INTO few VALUES (1000, $(text_of 7))" 2>&1 || true)"
wait "$first" || { cat "/tmp/simdup-citus-$BASE/few.log" >&2; fail "slots: the 100-row transaction failed"; }
[ "$held" -gt 0 ] || fail "slots: a 100-row transaction with 64 slots held no stripe"
grep -q "ERROR:  55P03" <<<"$out" || fail "slots: a near-duplicate written while the 100-row transaction was open did not wait: $out"
out="$(psql_on 0 -v VERBOSITY=verbose -c "INSERT INTO few VALUES (1000, $(text_of 7))" 2>&1 || true)"
grep -q "ERROR:  23505" <<<"$out" || fail "slots: the near-duplicate after the commit: $out"
hold_first "INSERT INTO few SELECT g, $(text_of g) FROM generate_series(201, 210) g" 3 1.5
held2=$(psql_on 0 -tA -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 21316")
wait "$first" || fail "slots: the 10-row transaction failed"
[ "$held2" = 0 ] || fail "slots: a 10-row transaction held $held2 stripes after the 100-row one committed (slots not freed?)"
psql_on 0 -o /dev/null -c "ALTER SYSTEM RESET simdup.checked_write_slots"
printf '  ok: 64 slots: an open 100-row transaction held %s stripes; a near-duplicate of its row waited (55P03 at lock_timeout 1s), then got 23505 after its commit; a 10-row transaction then held 0\n' "$held" >&2

step "stop the cluster"
scripts/citus_cluster.sh stop "$BASE"
trap - EXIT
step "all Citus checks passed"
