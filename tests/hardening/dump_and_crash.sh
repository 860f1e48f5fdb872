#!/usr/bin/env bash
# Hardening tests on a throwaway cluster "<SIMDUP_CLUSTER>-hard" (port
# SIMDUP_HARDENING_PORT, default SIMDUP_REGRESS_PORT + 1), with the installed simdup:
#
# 1. pg_dump / pg_restore of a simdup-enabled table with the dedup trigger (reject, k = 10)
#    keeps the rows, the fingerprints, the four block indexes, the trigger and the
#    simdup_tables row, and the restored trigger still rejects a near-duplicate (23505); and of
#    a table deduplicated by similarity (mark): rows, dup_of, the similarity index and the
#    trigger come back, and the restored trigger marks a near-duplicate. A table-only (-t) and a
#    schema-only (-n, a schema other than the extension's) dump restored into another database
#    bring the table back without its simdup_tables row: simdup_pairs refuses with a HINT, the
#    trigger still rejects, and simdup_register records the table again from the catalog.
# 2. kill -9 of a backend, and then of the postmaster, during a bulk load through the dedup
#    trigger (skip mode): after restart (crash recovery) the block indexes pass amcheck's
#    bt_index_check(heapallindexed) and no two stored rows are within k.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. scripts/setup.sh >/dev/null 2>&1
cluster="${SIMDUP_CLUSTER:-regress}-hard"
port="${SIMDUP_HARDENING_PORT:-$(( ${SIMDUP_REGRESS_PORT:-54329} + 1 ))}"
dir="/tmp/simdup-$cluster"
scripts/cluster.sh start "$cluster" "$port"
trap 'scripts/cluster.sh stop "$cluster"' EXIT
sock="$dir/sock"
q() { local db="$1"; shift; "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d "$db" "$@"; }
as_pg() { if [ "$(id -un)" = postgres ]; then "$@"; else sudo -u postgres "$@"; fi; }
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { printf '== %s\n' "$*" >&2; }

# Distinct documents: 31 words of their own each (md5 hex strings), so that any two are far
# apart (about 32 bits) and the dedup trigger keeps them all.
load_docs() { # $1 = database, $2 = count, $3 = offset
  q "$1" <<SQL
INSERT INTO docs (body)
SELECT (SELECT string_agg(md5((i * 1000 + j)::text), ' ') FROM generate_series(1, 31) j)
FROM generate_series($3 + 1, $3 + $2) i;
SQL
}

# ---------------------------------------------------------------------------------------------
step "1. pg_dump / pg_restore"
q postgres -c "CREATE DATABASE dumpsrc" -c "CREATE DATABASE dumpdst"
q dumpsrc <<'SQL'
CREATE EXTENSION simdup;
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('docs', 'body', on_duplicate => 'reject', max_distance => 10);
SQL
load_docs dumpsrc 300 0
i=0; for f in core/tests/fixtures/zh/??.txt; do
  i=$((i + 1)); q dumpsrc -c "INSERT INTO docs (body) VALUES (\$f\$$(cat "$f")\$f\$)"
done
before=$(q dumpsrc -c "SELECT count(*), sum(simhash % 1000003) FROM docs")
as_pg "$PG_BIN/pg_dump" -h "$sock" -p "$port" -U postgres -Fc -d dumpsrc -f "$dir/dump.pgc"
as_pg "$PG_BIN/pg_restore" -h "$sock" -p "$port" -U postgres -d dumpdst "$dir/dump.pgc"
after=$(q dumpdst -c "SELECT count(*), sum(simhash % 1000003) FROM docs")
[ "$before" = "$after" ] || fail "rows/fingerprints differ after restore: $before vs $after"
[ "$(q dumpdst -c "SELECT count(*) FROM simdup_block_indexes('docs')")" = 4 ] || fail "block indexes missing"
[ "$(q dumpdst -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'docs'::regclass AND NOT tgisinternal")" -ge 1 ] || fail "trigger missing"
[ "$(q dumpdst -c "SELECT on_duplicate || ' ' || max_distance FROM simdup_tables WHERE tbl = 'docs'::regclass")" = "reject 10" ] \
  || fail "simdup_tables row not restored"
[ "$(q dumpdst -c "SELECT count(*) FROM docs WHERE simhash IS DISTINCT FROM simhash(body)")" = 0 ] || fail "fingerprints recomputed differently"
edited=$(sed 's/，[^，。]*，/，/' core/tests/fixtures/zh/01.txt)
set +e
out=$(q dumpdst -v VERBOSITY=sqlstate -c "\\set VERBOSITY sqlstate" -c "INSERT INTO docs (body) VALUES (\$f\$$edited\$f\$)" 2>&1)
set -e
echo "$out" | grep -q 23505 || fail "restored trigger did not reject a near-duplicate: $out"
echo "    rows, fingerprints, 4 block indexes, trigger and simdup_tables restored; near-duplicate rejected (23505)" >&2

step "1a. a table-only (-t) and a schema-only (-n) dump: the table comes back without its simdup_tables row"
# pg_dump writes an extension's configuration rows only with the extension. The readers of the
# configuration say so (55000, HINT simdup_register), the trigger still rejects, and
# simdup_register records the table again from the catalog, after which everything works.
# (-n: a schema other than the extension's, whose rows pg_dump then leaves out.)
q dumpsrc <<'SQL'
CREATE SCHEMA app;
CREATE TABLE app.docs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('app.docs', 'body', on_duplicate => 'reject', max_distance => 10);
INSERT INTO app.docs (body) SELECT body FROM public.docs ORDER BY id;
SQL
for form in "-t public.docs" "-n app"; do
  t=${form#* }; [ "$t" = app ] && t=app.docs
  q postgres -c "CREATE DATABASE partdst"
  q partdst -c "CREATE EXTENSION simdup"
  # shellcheck disable=SC2086
  as_pg "$PG_BIN/pg_dump" -h "$sock" -p "$port" -U postgres $form -d dumpsrc -f "$dir/part.sql"
  as_pg "$PG_BIN/psql" -X -q -h "$sock" -p "$port" -U postgres -d partdst -f "$dir/part.sql" >/dev/null 2>"$dir/part.err" || true
  [ "$(q partdst -c "SELECT count(*) FROM $t")" = "$(cut -d'|' -f1 <<<"$before")" ] || fail "$form: rows not restored: $(cat "$dir/part.err")"
  [ "$(q partdst -c "SELECT count(*) FROM simdup_tables")" = 0 ] || fail "$form: simdup_tables came back (the premise of this test changed)"
  set +e
  out=$(q partdst -c "SELECT count(*) FROM simdup_pairs('$t')" 2>&1)
  rej=$(q partdst -c "\\set VERBOSITY sqlstate" -c "INSERT INTO $t (body) VALUES (\$f\$$edited\$f\$)" 2>&1)
  set -e
  grep -q "no row in simdup_tables" <<<"$out" && grep -q "simdup_register" <<<"$out" || fail "$form: simdup_pairs did not say how to re-register: $out"
  grep -q 23505 <<<"$rej" || fail "$form: the restored trigger did not reject a near-duplicate: $rej"
  q partdst -c "SELECT simdup_register('$t')" >/dev/null
  got=$(q partdst -c "SELECT concat_ws(' ', text_column, fingerprint_column, on_duplicate, max_distance, threshold, containment) FROM simdup_tables")
  [ "$got" = "body simhash reject 10 0.5 0.8" ] || fail "$form: simdup_register recorded '$got'"
  [ "$(q partdst -c "SELECT count(*) FROM simdup_pairs('$t', 10, verify => true)")" = "$(q dumpsrc -c "SELECT count(*) FROM simdup_pairs('$t', 10, verify => true)")" ] \
    || fail "$form: simdup_pairs after simdup_register differs from the source's"
  q partdst -c "SELECT simdup_disable('$t')" >/dev/null
  [ "$(q partdst -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = '$t'::regclass AND NOT tgisinternal")" = 0 ] || fail "$form: simdup_disable left the trigger"
  q postgres -c "DROP DATABASE partdst"
  echo "    $form: rows restored without the simdup_tables row; simdup_pairs refused with the hint, the trigger rejected; simdup_register recorded '$got'; pairs and disable work" >&2
done

step "1b. pg_dump / pg_restore of dedup by similarity (mark)"
q postgres -c "CREATE DATABASE simsrc" -c "CREATE DATABASE simdst"
q simsrc <<'SQL'
CREATE EXTENSION simdup;
CREATE TABLE notes (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT index FROM simdup_enable_similar('notes', 'body', 0.6, on_duplicate => 'mark');
SQL
for f in core/tests/fixtures/zh/??.txt core/tests/fixtures/zh/??.edited.txt core/tests/fixtures/en/??.txt; do
  q simsrc -c "INSERT INTO notes (body) VALUES (\$f\$$(cat "$f")\$f\$)"
done
before=$(q simsrc -c "SELECT count(*), count(dup_of), string_agg(id || ':' || coalesce(dup_of::text, '-'), ',' ORDER BY id) FROM notes")
as_pg "$PG_BIN/pg_dump" -h "$sock" -p "$port" -U postgres -Fc -d simsrc -f "$dir/simdump.pgc"
as_pg "$PG_BIN/pg_restore" -h "$sock" -p "$port" -U postgres -d simdst "$dir/simdump.pgc"
after=$(q simdst -c "SELECT count(*), count(dup_of), string_agg(id || ':' || coalesce(dup_of::text, '-'), ',' ORDER BY id) FROM notes")
[ "$before" = "$after" ] || fail "similarity dedup rows/dup_of differ after restore: $before vs $after"
[ "$(q simdst -c "SELECT string_agg(k::text, ',' ORDER BY k DESC) FROM _simdup_similar_indexes('notes')")" = 5,5,3 ] \
  || fail "similarity index, containment index or short-text index missing"
[ "$(q simdst -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'notes'::regclass AND tgname = 'simdup_dedup_similar'")" = 1 ] \
  || fail "similarity dedup trigger missing"
marked=$(q simdst -c "INSERT INTO notes (body) VALUES (\$f\$$edited\$f\$) RETURNING dup_of IS NOT NULL")
[ "$marked" = t ] || fail "restored similarity trigger did not mark a near-duplicate"
# A short text and a copy with two typos (5-shingle similarity 0.459, 3-shingle 0.657, threshold
# 0.6): marked by the short-text rule, through the restored short-text index.
q simdst -c "INSERT INTO notes (body) VALUES ('南京长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。')" >/dev/null
marked=$(q simdst -c "INSERT INTO notes (body) VALUES ('南京长江大挢于1968年建成通车，是第一座双层铁跻公路两用桥。') RETURNING dup_of IS NOT NULL")
[ "$marked" = t ] || fail "restored short-text index: a short near-duplicate was not marked"
# A tiny text and a copy wrapped in a header and footer (containment 1, similarity below 0.3):
# marked by the default containment rule, through the restored containment index.
q simdst -c "INSERT INTO notes (body) VALUES ('渡轮航线周一恢复运营')" >/dev/null
marked=$(q simdst -c "INSERT INTO notes (body) VALUES ('本报讯 记者从市交通运输局获悉：渡轮航线周一恢复运营。欢迎转发，转载请注明出处，联系电话见官网') RETURNING dup_of IS NOT NULL")
[ "$marked" = t ] || fail "restored containment index: a wrapped copy of a tiny text was not marked"
echo "    rows and dup_of ($(cut -d'|' -f1,2 <<<"$after" | tr '|' ' ') marked) restored, indexes and trigger restored; a near-duplicate, a short one and a wrapped tiny one marked" >&2

# ---------------------------------------------------------------------------------------------
step "2. kill -9 during a bulk load through the dedup trigger"
q postgres -c "CREATE DATABASE crash"
q crash <<'SQL'
CREATE EXTENSION simdup;
CREATE EXTENSION amcheck;
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
-- skip rather than reject: a rare chance near-duplicate among the generated documents must not
-- abort the long INSERT; the invariant checked afterwards is the same (no stored pair within k).
SELECT simdup_enable('docs', 'body', on_duplicate => 'skip', max_distance => 10);
SQL
load_docs crash 2000 0
# A long load in the background; kill its backend with SIGKILL in the middle.
( load_docs crash 200000 100000 >"$dir/load1.log" 2>&1 || true ) &
sleep 3
pid=$(q crash -c "SELECT pid FROM pg_stat_activity WHERE datname = 'crash' AND query LIKE 'INSERT INTO docs%' AND state = 'active'" | head -1)
[ -n "$pid" ] || fail "no loading backend found: $(cat "$dir/load1.log")"
kill -9 "$pid"
wait || true
# The postmaster reinitializes (crash recovery) after a backend is killed; wait for it.
for _ in $(seq 60); do q postgres -c "SELECT 1" >/dev/null 2>&1 && break; sleep 1; done
# Then a second load, and kill -9 of the postmaster itself.
( load_docs crash 200000 400000 >"$dir/load2.log" 2>&1 || true ) &
sleep 3
postmaster=$(head -1 "$dir/data/postmaster.pid")
children=$(pgrep -P "$postmaster" || true)
# Everything dies at once, as in a power cut: the postmaster, then its children (orphaned
# backends would otherwise go on with their statements).
kill -9 "$postmaster"
[ -z "$children" ] || kill -9 $children 2>/dev/null || true
wait || true
# As after a reboot: the dead postmaster's PID and socket lock files are gone (a killed
# postmaster can linger as a zombie here, and PostgreSQL would take its PID for a live one).
rm -f "$dir/data/postmaster.pid" "$sock"/.s.PGSQL.*
as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w \
  -o "-p $port -k $sock -c listen_addresses=''" start >/dev/null || fail "restart failed: $(tail -5 "$dir/data/server.log")"
rows=$(q crash -c "SELECT count(*) FROM docs")
checked=$(q crash -c "SELECT count(*) FROM (SELECT bt_index_check(index, true) FROM simdup_block_indexes('docs')) s")
[ "$checked" = 4 ] || fail "amcheck did not check the 4 block indexes"
q crash -c "SELECT bt_index_check('docs_pkey'::regclass, true)" >/dev/null
close=$(q crash -c "SELECT count(*) FROM simdup_pairs('docs', 10)")
[ "$close" = 0 ] || fail "$close stored pairs within k = 10 after the crashes"
echo "    after kill -9 of a backend and of the postmaster: $rows rows, block indexes and primary key pass bt_index_check(heapallindexed), 0 pairs within k" >&2
step "hardening: all checks passed"
