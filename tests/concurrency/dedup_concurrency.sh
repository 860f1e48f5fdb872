#!/usr/bin/env bash
# Concurrency test of the dedup trigger: near-duplicates written at the same time by
# different transactions must never both land.
#
#   tests/concurrency/dedup_concurrency.sh        (scripts/test.sh concurrency runs it)
#
# On a throwaway cluster "<SIMDUP_CLUSTER>-conc" (port SIMDUP_CONCURRENCY_PORT, default
# SIMDUP_REGRESS_PORT, default 54329), with the installed simdup (run `scripts/install.sh`
# first; scripts/test.sh does):
#
# 1. Two deterministic two-session cases: a writer waits for a concurrent writer of a
#    near-duplicate and then gets 23505; a REPEATABLE READ transaction whose snapshot predates
#    a committed near-duplicate still sees it (the trigger looks up with a fresh snapshot).
# 2. Three rounds (reject, skip, mark; k = 10) of SIMDUP_CONC_CLIENTS (16) concurrent psql
#    clients, each inserting, one autocommit INSERT at a time, an overlapping random subset of
#    a pool of ~600 documents: the 15 fixture paragraphs of core/tests/fixtures (10 Chinese,
#    5 English news paragraphs of ~500 characters) and variants edited in SQL (sentences
#    dropped, source tags and editor lines added, characters changed, truncated). Half of the
#    clients go through the pool family by family, so the same near-duplicates are written at
#    the same moment. The pool must contain pairs within k = 10 whose four 16-bit blocks all
#    differ (found by the block search only through a neighbouring block value).
#    Afterwards:
#      reject, skip: no two stored rows within distance 10 (simdup_pairs, and a brute-force
#        self-join), and no document lost: every document any client tried has a stored row
#        within distance 10 (itself or the near-duplicate that kept it out);
#      mark: every attempted insert is stored; the rows without dup_of are pairwise more than
#        10 apart; every dup_of names a row within distance 10;
#      all rounds: no client saw any error but 23505 (reject) — no deadlock (40P01), no
#        serialization failure, nothing else.
# 3. Two more rounds (skip, mark) with the bulk check on (src/dedup/bulk.rs): the even clients
#    write batches of 20 rows, each in a transaction that takes the table lock first, so that
#    the statement checks them in memory; the odd clients' single-row INSERTs load the table's
#    fingerprints when no other transaction is writing, else check row by row. The same checks,
#    and statements must have loaded the fingerprints (simdup's DEBUG line). Two more (skip,
#    mark) on a table that adopts its fingerprints, the even clients' batches written by turns
#    by simdup_insert_select and a plain INSERT ... SELECT, both read ahead and checked by one
#    pair join (its DEBUG line).
# 4. Three rounds (reject, skip, mark) of dedup by verified similarity (simdup_enable_similar,
#    threshold 0.5), and a fourth (skip) with containment => 0.7, the same clients and pool: no
#    two stored rows (reject, skip) or unmarked rows (mark) share a band of the similarity index
#    and have Jaccard similarity >= 0.5 (or containment >= 0.7 in the fourth); no
#    document lost; every dup_of names such a row; no error but 23505. Pairs of similarity
#    >= 0.5 that share no band (the index's misses, not the trigger's promise) are shown.
#    Then two more (skip, mark) on a pool of short texts (11 to 45 characters, with typos),
#    where the short-text rule decides (3-shingle similarity >= 0.5, candidates from the
#    short-text index) and every row takes the lock stripes of its 3-shingle prefix filter.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. scripts/setup.sh >/dev/null 2>&1
. tests/similar_rule.sh
CLIENTS="${SIMDUP_CONC_CLIENTS:-16}"
SHARE="${SIMDUP_CONC_SHARE:-0.4}"   # fraction of the pool each client inserts
K=10
cluster="${SIMDUP_CLUSTER:-regress}-conc"
port="${SIMDUP_CONCURRENCY_PORT:-${SIMDUP_REGRESS_PORT:-54329}}"
work="$(mktemp -d /tmp/simdup-conc.XXXXXX)"
chmod 755 "$work"

PG_EXTRA_OPTS="-c max_connections=$((CLIENTS + 20)) -c deadlock_timeout=200ms" \
  scripts/cluster.sh start "$cluster" "$port"
trap 'scripts/cluster.sh stop "$cluster"; rm -rf "$work"' EXIT
sock="/tmp/simdup-$cluster/sock"
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d conc "$@"; }
"$PG_BIN/psql" -X -q -h "$sock" -p "$port" -U postgres -d postgres -c "CREATE DATABASE conc"
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { printf '== %s\n' "$*" >&2; }

# ---------------------------------------------------------------------------------------------
step "pool: fixture paragraphs and edited variants"
{
  echo "CREATE EXTENSION simdup;"
  echo "CREATE TABLE base (family int, name text, body text);"
  fam=0
  for f in core/tests/fixtures/zh/??.txt core/tests/fixtures/en/??.txt; do
    fam=$((fam + 1))
    for g in "$f" "${f%.txt}.edited.txt"; do
      printf 'INSERT INTO base VALUES (%d, %s, $fixture$%s$fixture$);\n' "$fam" "'${g#core/tests/fixtures/}'" "$(cat "$g")"
    done
  done
} | psql
psql <<'SQL'
\o /dev/null
SELECT setseed(0.4);
\o
CREATE FUNCTION sentences(t text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array_agg(m[1] ORDER BY n) FROM regexp_matches(t, '[^。！？.!?]+[。！？.!?]*\s*', 'g') WITH ORDINALITY AS x(m, n)
$$;
CREATE FUNCTION without(s text[], VARIADIC drop int[]) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(s[i], '' ORDER BY i) FROM generate_subscripts(s, 1) i WHERE i <> ALL (drop)
$$;
-- Every 'step'-th character from 'start' replaced (typos, OCR errors).
CREATE FUNCTION typos(t text, start int, step int, c text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(CASE WHEN i >= start AND (i - start) % step = 0 THEN c ELSE substr(t, i, 1) END, '' ORDER BY i)
  FROM generate_series(1, length(t)) i
$$;
CREATE TABLE variants (family int, kind text, body text);
INSERT INTO variants SELECT family, 'fixture:' || name, body FROM base;
WITH o AS (SELECT family, body, sentences(body) AS s FROM base WHERE name NOT LIKE '%edited%')
INSERT INTO variants
SELECT family, 'drop sentence ' || i, without(s, i) FROM o, generate_series(1, cardinality(s)) i
UNION ALL
SELECT family, 'drop sentences ' || i || ',' || i + 3, without(s, i, i + 3) FROM o, generate_series(1, cardinality(s) - 3) i
UNION ALL
SELECT family, 'tag ' || t, t || body FROM o, unnest(ARRAY['【本报讯】', '新华社北京电 ', 'Reuters - ', '（来源：中国新闻网）']) t
UNION ALL
SELECT family, 'footer ' || t, body || t FROM o, unnest(ARRAY['（责任编辑：王伟）', ' (Editing by John Smith)', '本文来源：人民网，转载请注明出处。']) t
UNION ALL
SELECT family, 'typos ' || st, typos(body, st, st * 7, CASE WHEN body ~ '[一-龥]' THEN '的' ELSE 'x' END) FROM o, generate_series(5, 11, 3) st
UNION ALL
SELECT family, 'truncated ' || p, left(body, length(body) * p / 100) FROM o, unnest(ARRAY[80, 90, 95]) p
UNION ALL
SELECT family, 'drop first + tag', '【快讯】' || without(s, 1) FROM o
UNION ALL
SELECT family, 'drop last + footer', without(s, cardinality(s)) || '（完）' FROM o;
CREATE TABLE pool AS
SELECT row_number() OVER (ORDER BY family, md5(body))::int AS id, family, kind, body, simhash(body) AS fp
FROM (SELECT DISTINCT ON (body) * FROM variants ORDER BY body, kind) v;
ALTER TABLE pool ADD PRIMARY KEY (id);
SQL
psql -At <<SQL
SELECT format('pool: %s documents in %s families; %s pairs within k = $K, %s of them with no equal 16-bit block (found only through a neighbouring block value), %s of different families', count(*), count(DISTINCT family),
  (SELECT count(*) FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) <= $K),
  (SELECT count(*) FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) <= $K
     AND NOT EXISTS (SELECT FROM generate_series(0, 3) i WHERE simhash_block(a.fp, i) = simhash_block(b.fp, i))),
  (SELECT count(*) FROM pool a JOIN pool b ON a.id < b.id AND a.family <> b.family AND hamming(a.fp, b.fp) <= $K))
FROM pool;
SQL
nb=$(psql -At -c "SELECT count(*) FROM pool a JOIN pool b ON a.id < b.id AND hamming(a.fp, b.fp) <= $K
     AND NOT EXISTS (SELECT FROM generate_series(0, 3) i WHERE simhash_block(a.fp, i) = simhash_block(b.fp, i))")
[ "$nb" -gt 0 ] || fail "the pool has no near-duplicate pair without an equal block"
[ "$(psql -At -c 'SELECT count(*) FROM pool WHERE fp IS NULL')" = 0 ] || fail "featureless pool document"

# Per-client insert lists: a random share of the pool each; odd clients in random order, even
# clients family by family (random order within a family), so that the same family is written
# by several clients at the same moment.
# (make_plan: the plan of the pool as it is, and each client's script of single-row INSERTs.)
make_plan() {
  psql -At -F ' ' <<SQL | sed '/^$/d' >"$work/plan"
SELECT setseed(0.7);
SELECT c, id FROM (
  SELECT c, id, family, random() AS r FROM generate_series(1, $CLIENTS) c, pool WHERE random() < $SHARE
) x ORDER BY c, CASE WHEN c % 2 = 0 THEN family ELSE 0 END, r;
SQL
  for c in $(seq 1 "$CLIENTS"); do
    { echo '\set VERBOSITY sqlstate'
      echo 'SELECT pg_advisory_lock_shared(42);'   # start barrier
      awk -v c="$c" '$1 == c { print "INSERT INTO docs (body) SELECT body FROM pool WHERE id = " $2 ";" }' "$work/plan"
    } >"$work/client$c.sql"
  done
}
make_plan
# Client c's rows of the plan, 20 to a line, comma-separated: the batches of the bulk rounds.
batches() {
  awk -v c="$1" '$1 == c { ids = ids (n++ ? "," : "") $2; if (n == 20) { print ids; ids = ""; n = 0 } }
                 END { if (n) print ids }' "$work/plan"
}
for c in $(seq 1 "$CLIENTS"); do
  # The bulk rounds (bulk check on from the first row): even clients write their rows 20 at a
  # time, each batch a transaction that takes the table lock the bulk check needs first (as a
  # bulk loader would: a multi-row writer that checks row by row can deadlock on lock stripes,
  # docs/dedup.md "Deadlocks"), so its statement checks every row in memory; odd clients write
  # one row a statement, each of which loads the table's fingerprints whenever no other
  # transaction is writing (ConditionalLockRelation) and else checks row by row.
  { echo '\set VERBOSITY sqlstate'
    echo 'SET client_min_messages = debug1;'
    echo 'SET simdup.bulk_check = on;'
    echo 'SELECT pg_advisory_lock_shared(42);'
    if (( c % 2 == 0 )); then
      batches "$c" | while read -r ids; do
        echo "BEGIN; LOCK TABLE docs IN SHARE ROW EXCLUSIVE MODE;"
        echo "INSERT INTO docs (body) SELECT p.body FROM unnest('{$ids}'::int[]) WITH ORDINALITY u(id, n) JOIN pool p USING (id) ORDER BY u.n;"
        echo "COMMIT;"
      done
    else
      awk -v c="$c" '$1 == c { print "INSERT INTO docs (body) SELECT body FROM pool WHERE id = " $2 ";" }' "$work/plan"
    fi
  } >"$work/bulkclient$c.sql"
  # The hinted round: the table adopts its fingerprints; even clients write their rows 20 at a
  # time, by turns through simdup_insert_select and a plain INSERT ... SELECT, both read ahead,
  # which gives the batch to the bulk check up front (one pair join, docs/dedup.md "A batch
  # known up front"), each batch in a transaction that takes the table lock first (its DEBUG
  # lines in full); odd clients one row a statement, as above.
  { echo '\set VERBOSITY sqlstate'
    echo 'SET simdup.bulk_check = on;'
    echo 'SELECT pg_advisory_lock_shared(42);'
    if (( c % 2 == 0 )); then
      turn=0
      batches "$c" | while read -r ids; do
        rows="SELECT p.body, p.fp AS simhash FROM unnest('{$ids}'::int[]) WITH ORDINALITY u(id, n) JOIN pool p USING (id) ORDER BY u.n"
        echo "BEGIN; LOCK TABLE docs IN SHARE ROW EXCLUSIVE MODE; SET LOCAL client_min_messages = debug1;"
        echo '\set VERBOSITY default'
        if (( turn++ % 2 == 0 )); then
          echo "SELECT simdup_insert_select('docs', \$q\$$rows\$q\$);"
        else
          echo "INSERT INTO docs (body, simhash) $rows;"
        fi
        echo '\set VERBOSITY sqlstate'
        echo "COMMIT;"
      done
    else
      awk -v c="$c" '$1 == c { print "INSERT INTO docs (body, simhash) SELECT body, fp FROM pool WHERE id = " $2 ";" }' "$work/plan"
    fi
  } >"$work/hintclient$c.sql"
done
echo "clients: $CLIENTS, $(wc -l <"$work/plan") inserts a round" >&2

# ---------------------------------------------------------------------------------------------
step "two sessions: a writer waits for a concurrent near-duplicate, then gets 23505"
psql >/dev/null <<SQL
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('docs', 'body', on_duplicate => 'reject', max_distance => $K);
SQL
a_id=$(psql -At -c "SELECT id FROM pool WHERE kind = 'fixture:zh/01.txt'")
b_id=$(psql -At -c "SELECT id FROM pool WHERE kind = 'fixture:zh/01.edited.txt'")
# The first writer's row is in the table, in progress, and its window's stripes are released
# once its statement has ended (src/dedup/window.rs): the second writer finds the row and waits
# for the first writer's transaction (a lock on its transaction id), as for a duplicate key.
in_progress() { # the first writer's INSERT has ended and its transaction sleeps
  psql -At -c "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%pg_sleep(3)%'"
}
waits_for_xact() { # a session waits for a transaction's end
  psql -At -c "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'transactionid'"
}
stripes_held() { # advisory locks on docs' stripes, held or wanted
  psql -At -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 'docs'::regclass::oid"
}
psql -c "BEGIN; INSERT INTO docs (body) SELECT body FROM pool WHERE id = $a_id; SELECT pg_sleep(3); COMMIT;" >/dev/null &
holder=$!
for _ in $(seq 100); do [ "$(in_progress)" = 1 ] && break; sleep 0.1; done
[ "$(stripes_held)" = 0 ] || fail "an open transaction holds lock stripes after its statement ended"
t0=$(date +%s.%N)
"$PG_BIN/psql" -X -q -h "$sock" -p "$port" -U postgres -d conc -v VERBOSITY=sqlstate \
  -c "INSERT INTO docs (body) SELECT body FROM pool WHERE id = $b_id" >"$work/second" 2>&1 &
second=$!
seen_waiting=0
for _ in $(seq 20); do [ "$(waits_for_xact)" = 0 ] || { seen_waiting=1; break; }; sleep 0.1; done
wait "$second" || true
t1=$(date +%s.%N)
wait "$holder"
out=$(cat "$work/second")
waited=$(echo "$t1 - $t0" | bc)
echo "second writer: '$out' after ${waited}s; seen waiting for the first writer's transaction: $seen_waiting" >&2
[[ "$out" == *23505* ]] || fail "expected 23505 for the concurrent near-duplicate, got: $out"
[ "$seen_waiting" = 1 ] && (( $(echo "$waited > 0.5" | bc) )) || fail "the second writer did not wait for the first"

step "two sessions: REPEATABLE READ sees a near-duplicate committed after its snapshot"
psql -c "TRUNCATE docs"
out=$("$PG_BIN/psql" -X -q -At -h "$sock" -p "$port" -U postgres -d conc -v VERBOSITY=sqlstate 2>&1 <<SQL || true
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM docs;
\! "$PG_BIN/psql" -X -q -h "$sock" -p "$port" -U postgres -d conc -c "INSERT INTO docs (body) SELECT body FROM pool WHERE id = $a_id"
SELECT 'snapshot still sees ' || count(*) || ' rows' FROM docs;
INSERT INTO docs (body) SELECT body FROM pool WHERE id = $b_id;
COMMIT;
SQL
)
echo "$out" | tr '\n' ' ' >&2; echo >&2
[[ "$out" == *"snapshot still sees 0 rows"* && "$out" == *23505* ]] || fail "REPEATABLE READ writer missed the committed near-duplicate"
psql -c "DROP TABLE docs"

# ---------------------------------------------------------------------------------------------
run_round() { # MODE [bulk|hinted|similar]; VERIFY=false: SimHash dedup by the distance alone
  local mode=$1 kind=${2:-}
  # The SimHash trigger's decision, restated through the public functions: within k, and (with
  # verification, the default for a text column; an adopted fingerprint has none) the texts
  # verified by _simdup_verified at simdup_enable's default thresholds.
  local verify=${VERIFY:-true}
  [ "$kind" = hinted ] && verify=false
  near() { # near X Y: rows X and Y (columns simhash or fp, body) are near-duplicates
    local fx=$1.simhash fy=$2.simhash
    [ "$1" = p ] && fx=p.fp
    [ "$2" = p ] && fy=p.fp
    printf 'hamming(%s, %s) <= %s' "$fx" "$fy" "$K"
    [ "$verify" = true ] && printf ' AND _simdup_verified(%s.body, %s.body, 0.5, 0.8)' "$1" "$2"
    return 0
  }
  local script=client
  [ "$kind" = bulk ] && script=bulkclient
  [ "$kind" = hinted ] && script=hintclient
  if [ "$kind" = hinted ]; then
    step "round '$mode' (hinted): $CLIENTS concurrent clients, k = $K, the fingerprints adopted"
    psql >/dev/null <<SQL
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL, simhash bigint);
SELECT simdup_enable('docs', NULL, 'simhash', on_duplicate => '$mode', max_distance => $K);
SQL
  elif [ "$kind" = similar ]; then
    step "round '$mode' (similar): $CLIENTS concurrent clients, Jaccard similarity >= $T or containment >= ${C:-0.8}"
    psql >/dev/null <<SQL
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable_similar('docs', 'body', $T, on_duplicate => '$mode'${C:+, containment => $C});
SQL
    # SLOW=1: a trigger after simdup's sleeps 1 ms before the row is written, which widens the
    # window between a writer's check and its index entries, where only the lock stripes keep
    # two writers of near-duplicates apart.
    [ "${SLOW:-0}" = 1 ] && psql >/dev/null <<'SQL'
CREATE OR REPLACE FUNCTION slow_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.001); RETURN NEW; END $$;
CREATE TRIGGER zz_slow_write BEFORE INSERT ON docs FOR EACH ROW EXECUTE FUNCTION slow_write();
SQL
  else
    step "round '$mode'${kind:+ ($kind)}: $CLIENTS concurrent clients, k = $K, verify => $verify"
    psql >/dev/null <<SQL
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('docs', 'body', on_duplicate => '$mode', max_distance => $K, verify => $verify);
SQL
  fi
  # The barrier: clients wait for this session's advisory lock, then start together.
  psql -c "SELECT pg_advisory_lock(42), pg_sleep(2)" >/dev/null &
  local gate=$!
  sleep 0.5
  local pids=() t0 t1
  t0=$(date +%s.%N)
  for c in $(seq 1 "$CLIENTS"); do
    "$PG_BIN/psql" -X -q -h "$sock" -p "$port" -U postgres -d conc -f "$work/$script$c.sql" \
      >"$work/out$c" 2>"$work/err$c" &
    pids+=($!)
  done
  wait "$gate"
  for p in "${pids[@]}"; do wait "$p" || true; done
  t1=$(date +%s.%N)
  local inserts errors
  inserts=$(wc -l <"$work/plan")
  if [ "$kind" = bulk ]; then
    local loads
    # (VERBOSITY sqlstate: a DEBUG line is its SQLSTATE, 00000; simdup's is its only one.)
    loads=$(cat "$work"/err* | grep -c 'DEBUG:  00000' || true)
    echo "    statements that loaded the table's fingerprints: $loads" >&2
    [ "$loads" -gt 0 ] || fail "round $mode (bulk): no statement loaded the table's fingerprints"
    sed -i '/DEBUG:  00000/d' "$work"/err*
  fi
  if [ "$kind" = hinted ]; then
    local joins
    joins=$(cat "$work"/err* | grep -c 'DEBUG:  simdup: bulk check of [0-9]* hinted rows by one join' || true)
    echo "    batches (simdup_insert_select, INSERT ... SELECT) checked by one pair join: $joins" >&2
    [ "$joins" -gt 0 ] || fail "round $mode (hinted): no call was checked by the pair join"
    sed -i '/DEBUG:  simdup: /d' "$work"/err*
  fi
  cat "$work"/err* | grep -o 'ERROR:  [0-9A-Z]\{5\}' | sort | uniq -c | sed 's/^/    /' >&2 || true
  errors=$(cat "$work"/err* | grep -c 'ERROR' || true)
  local others
  others=$(cat "$work"/err* | grep -v 'ERROR:  23505' | grep -c . || true)
  [ "$others" = 0 ] || { grep -hv 'ERROR:  23505' "$work"/err* | sort | uniq -c | head >&2; fail "clients saw errors other than 23505"; }
  if [ "$mode" != reject ] && [ "$errors" != 0 ]; then fail "mode $mode raised $errors errors"; fi
  psql -At -F ' ' <<SQL >&2
SELECT format('%s inserts in %s s (%s/s): %s rows stored, %s rejected', $inserts, round(($t1 - $t0)::numeric, 1),
              round($inserts / ($t1 - $t0)::numeric), count(*), $errors) FROM docs;
SQL
  if [ "$mode" = reject ]; then
    [ "$(psql -At -c "SELECT count(*) + $errors FROM docs")" = "$inserts" ] \
      || fail "round reject: stored rows + rejected inserts <> inserts"
  fi
  # Every attempted document, with its fingerprint.
  psql -c "CREATE TEMP TABLE x (c int, id int)" -c "\copy x FROM '$work/plan' WITH (DELIMITER ' ')" \
       -c "CREATE TABLE attempted AS SELECT DISTINCT p.id, p.fp, p.body FROM x JOIN pool p USING (id)"
  local bad
  if [ "$kind" = similar ]; then
    # The trigger's criterion (tests/similar_rule.sh: the rule through the index that found the
    # pair) and brute force (jaccard >= T over every pair) must both hold.
    local near; near="$(similar_near "$T" "${C:-0.8}" "$BANDS" "$ROWS")"
    if [ "$mode" = mark ]; then
      bad=$(psql -At <<SQL
SELECT concat_ws(' ',
  NULLIF((SELECT count(*) FROM docs) - $inserts, 0) || ' rows missing or extra',
  NULLIF((SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id AND $near WHERE a.dup_of IS NULL AND b.dup_of IS NULL), 0)
    || ' unmarked similar pairs',
  NULLIF((SELECT count(*) FROM docs a LEFT JOIN docs b ON b.id = a.dup_of
          WHERE a.dup_of IS NOT NULL AND (b.id IS NULL OR NOT $near)), 0) || ' bad dup_of');
SQL
)
      psql -At -c "SELECT format('    %s originals, %s marked', count(*) FILTER (WHERE dup_of IS NULL), count(dup_of)) FROM docs" >&2
    else
      bad=$(psql -At <<SQL
SELECT concat_ws(' ',
  NULLIF((SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id AND $near), 0) || ' stored similar pairs',
  NULLIF((SELECT count(*) FROM attempted p JOIN pool b USING (id)
          WHERE NOT EXISTS (SELECT FROM docs a WHERE $near)), 0) || ' documents lost');
SQL
)
    fi
    local unmarked=""
    [ "$mode" = mark ] && unmarked="AND a.dup_of IS NULL AND b.dup_of IS NULL"
    # Brute force: pairs of similarity >= T that share no band are the index's misses, which
    # the trigger does not promise to find (a pair at T shares a band with probability
    # minhash_s_curve(T, bands, rows) >= 0.99); shown with that probability, not counted.
    psql -At <<SQL >&2
SELECT format('    brute force: %s pairs of kept rows with similarity >= $T, %s of them sharing no band%s', count(*),
              count(*) FILTER (WHERE NOT shared),
              ' (' || string_agg(format('similarity %s, found with probability %s', round(j::numeric, 3),
                                        round(minhash_s_curve(j, $BANDS, $ROWS)::numeric, 4)), '; ') FILTER (WHERE NOT shared) || ')')
FROM (SELECT jaccard(a.body, b.body) AS j,
             _simdup_similar_bands(a.body, 5, $BANDS, $ROWS) && _simdup_similar_bands(b.body, 5, $BANDS, $ROWS) AS shared
      FROM docs a JOIN docs b ON a.id < b.id
      WHERE jaccard(a.body, b.body) >= $T $unmarked) x;
SQL
  elif [ "$mode" = mark ]; then
    bad=$(psql -At <<SQL
SELECT concat_ws(' ',
  NULLIF((SELECT count(*) FROM docs) - $inserts, 0) || ' rows missing or extra',
  NULLIF((SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id AND $(near a b)
          WHERE a.dup_of IS NULL AND b.dup_of IS NULL), 0) || ' unmarked near-duplicate pairs',
  NULLIF((SELECT count(*) FROM docs d LEFT JOIN docs o ON o.id = d.dup_of
          WHERE d.dup_of IS NOT NULL AND (o.id IS NULL OR NOT ($(near d o)))), 0) || ' bad dup_of',
  NULLIF((SELECT count(*) FROM docs WHERE simhash IS DISTINCT FROM simhash(body)), 0) || ' wrong fingerprints');
SQL
)
    psql -At -c "SELECT format('    %s originals, %s marked', count(*) FILTER (WHERE dup_of IS NULL), count(dup_of)) FROM docs" >&2
  else
    bad=$(psql -At <<SQL
SELECT concat_ws(' ',
  NULLIF((SELECT count(*) FROM simdup_pairs('docs', $K, verify => $verify)), 0) || ' stored near-duplicate pairs (simdup_pairs)',
  NULLIF((SELECT count(*) FROM docs a JOIN docs b ON a.id < b.id AND $(near a b)), 0)
    || ' stored near-duplicate pairs (self-join)',
  NULLIF((SELECT count(*) FROM attempted p
          WHERE NOT EXISTS (SELECT FROM docs d WHERE $(near d p))), 0) || ' documents lost',
  NULLIF((SELECT count(*) FROM docs WHERE simhash IS DISTINCT FROM simhash(body)), 0) || ' wrong fingerprints');
SQL
)
  fi
  [ -z "$bad" ] || fail "round $mode: $bad"
  psql -c "DROP TABLE docs, attempted"
  echo "    ok" >&2
}

run_round reject
run_round skip
run_round mark
# ... by the distance alone (verify => false), as an adopted fingerprint column decides.
VERIFY=false run_round skip
run_round skip bulk
run_round mark bulk
run_round skip hinted
run_round mark hinted
# Dedup by verified similarity (simdup_enable_similar, on_duplicate): the same clients.
T=0.5
read -r BANDS ROWS < <(psql -At -F ' ' -c "SELECT bands, rows FROM minhash_choose_bands(128, $T, 0.99)")
run_round reject similar
run_round skip similar
run_round mark similar
# ... with the containment rule (containment => 0.7).
C=0.7 run_round skip similar
# ... on short texts, where the short-text rule and its index decide, and every short text takes
# the stripes of its 3-shingle prefix filter: the first 20 to 45 characters (or fewer) of the fixtures'
# sentences, with typos, a dropped and a swapped character. A typo every 10 characters leaves
# 5-shingle similarity 0.3-0.4 with the original, so that many such pairs share no band of the
# similarity index and only the short texts' prefix stripes keep their writers apart. (A build without
# those stripes passed these rounds too, three times: with 0.3-0.4 most pairs still share a band,
# and a race needs two writers of such a pair inside one check-to-write window, which SLOW=1
# widens to a millisecond. These rounds show the rule under concurrency; the two sessions
# before them prove the stripe: that build failed there, its second writer stored at once.)
step "pool: short texts (up to 45 characters) and their variants"
psql <<'SQL'
TRUNCATE pool;
WITH s AS (SELECT b.family * 100 + n::int AS family, left(btrim(x), 20 + (n::int * 7 + b.family) % 26) AS body
           FROM base b, unnest(sentences(b.body)) WITH ORDINALITY AS u(x, n)
           WHERE b.name NOT LIKE '%edited%' AND length(btrim(x)) >= 12),
v AS (
  SELECT family, 'short' AS kind, body FROM s
  UNION ALL SELECT family, 'short typo', typos(body, length(body) / 2, 1000, CASE WHEN body ~ '[一-龥]' THEN '的' ELSE 'x' END) FROM s
  UNION ALL SELECT family, 'short two typos', typos(body, length(body) / 4, length(body) / 2, CASE WHEN body ~ '[一-龥]' THEN '了' ELSE 'q' END) FROM s
  UNION ALL SELECT family, 'short typos every 10 from ' || st, typos(body, st, 10, CASE WHEN body ~ '[一-龥]' THEN '的' ELSE 'x' END)
            FROM s, unnest(ARRAY[5, 8]) st
  UNION ALL SELECT family, 'short dropped', overlay(body PLACING '' FROM length(body) / 3 FOR 1) FROM s
  UNION ALL SELECT family, 'short swapped', overlay(body PLACING substr(body, length(body) / 2 + 1, 1) || substr(body, length(body) / 2, 1)
                                                    FROM length(body) / 2 FOR 2) FROM s)
INSERT INTO pool
SELECT row_number() OVER (ORDER BY family, md5(body))::int, family, kind, body, simhash(body)
FROM (SELECT DISTINCT ON (body) * FROM v ORDER BY body, kind) d;
SQL
psql -At -c "SELECT format('pool: %s short documents in %s families, %s to %s characters', count(*), count(DISTINCT family),
                           min(length(body)), max(length(body))) FROM pool" >&2
# Two sessions: the second writes a short near-duplicate (3-shingle similarity >= 0.5) of the
# first's row that shares no band of the similarity index, while the first is between its check
# and its write (a trigger after simdup's sleeps 3 s there). Only the short texts' prefix
# stripes keep them apart (the pair shares a 3-shingle prefix element, so a stripe): the second must wait for the first to commit, then get 23505.
# second_writer FIRST_SQL SECOND_SQL LABEL: FIRST_SQL in a transaction that sleeps 3 s between
# simdup's check and its write (conc.sleep, the slow_write trigger), then, a second later,
# SECOND_SQL in another session: true when the second waited for the first (more than a second)
# and then failed with 23505.
second_writer() {
  psql -c "BEGIN; SET LOCAL conc.sleep = 3; $1; COMMIT;" >/dev/null &
  local holder=$! t0 t1 out waited
  sleep 1
  t0=$(date +%s.%N)
  out=$("$PG_BIN/psql" -X -q -h "$sock" -p "$port" -U postgres -d conc -v VERBOSITY=sqlstate -c "$2" 2>&1 || true)
  t1=$(date +%s.%N)
  wait "$holder"
  waited=$(echo "$t1 - $t0" | bc)
  echo "    $3: second writer '$out' after ${waited}s" >&2
  [[ "$out" == *23505* ]] && (( $(echo "$waited > 1" | bc) ))
}
# slow_docs: an empty similarity dedup table docs (reject, t = 0.5) whose rows wait conc.sleep
# seconds (1 ms unless set) between simdup's check and their write.
slow_docs() {
  psql >/dev/null <<'SQL'
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable_similar('docs', 'body', 0.5, on_duplicate => 'reject');
CREATE OR REPLACE FUNCTION slow_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_sleep(coalesce(nullif(current_setting('conc.sleep', true), '')::float8, 0.001)); RETURN NEW; END $$;
CREATE TRIGGER zz_slow_write BEFORE INSERT ON docs FOR EACH ROW EXECUTE FUNCTION slow_write();
SQL
}
step "two sessions, short texts: a writer waits for a concurrent short near-duplicate sharing no band"
slow_docs
read -r s_a s_b < <(psql -At -F ' ' -c "
  SELECT a.id, b.id FROM pool a JOIN pool b ON a.family = b.family AND a.id < b.id
  WHERE NOT (_simdup_similar_bands(a.body, 5, 35, 3) && _simdup_similar_bands(b.body, 5, 35, 3))
    AND _simdup_similar_short_bands(a.body, 0.5) && _simdup_similar_short_bands(b.body, 0.5)
    AND least(cardinality(shingles(a.body)), cardinality(shingles(b.body))) + 4 < 50
    AND jaccard(a.body, b.body, 3) >= 0.5
  ORDER BY a.id, b.id LIMIT 1")
[ -n "$s_b" ] || fail "the short pool has no short near-duplicate pair sharing no band"
second_writer "INSERT INTO docs (body) SELECT body FROM pool WHERE id = $s_a" \
              "INSERT INTO docs (body) SELECT body FROM pool WHERE id = $s_b" \
              "pair $s_a, $s_b (3-shingle similarity $(psql -At -c "SELECT round(jaccard(a.body, b.body, 3)::numeric, 3) FROM pool a, pool b WHERE a.id = $s_a AND b.id = $s_b"), no shared band)" \
  || fail "the second writer of a short near-duplicate did not wait for the first and get 23505"
psql -c "DROP TABLE docs"
# The same for containment keys: a tiny text (fewer than 50 5-shingles) and a copy wrapped in a
# header and footer longer than itself, which share no band and no short band; only the key
# stripes (the tiny text's containment prefix exclusive, the copy's sketch shared) keep their
# writers apart, whichever comes first.
step "two sessions, containment keys: a writer waits for a concurrent wrapped copy of a tiny text"
slow_docs
psql >/dev/null <<'SQL'
CREATE TABLE wrapped AS
SELECT p.id, p.body AS tiny,
       'Source: the morning desk of a regional news site, updated hourly | ' || p.body || ' | Editor on duty, all rights reserved, reprints by permission' AS copy
FROM pool p WHERE cardinality(shingles(p.body)) < 50 ORDER BY p.id;
SQL
read -r w_id < <(psql -At -c "
  SELECT id FROM wrapped
  WHERE NOT coalesce(_simdup_similar_bands(tiny, 5, 35, 3) && _simdup_similar_bands(copy, 5, 35, 3), false)
    AND NOT coalesce(_simdup_similar_short_bands(tiny, 0.5) && _simdup_similar_short_bands(copy, 0.5), false)
    AND _simdup_similar_key_probe(tiny, 5, 0.8) && _simdup_similar_keys(copy, 5, 0.8)
    AND containment(tiny, copy) >= 0.8 AND jaccard(tiny, copy) < 0.5
  ORDER BY id LIMIT 1")
[ -n "$w_id" ] || fail "the short pool has no tiny text whose wrapped copy shares only containment keys with it"
for first in tiny copy; do
  second=copy; [ "$first" = copy ] && second=tiny
  psql -c "TRUNCATE docs" >/dev/null
  second_writer "INSERT INTO docs (body) SELECT $first FROM wrapped WHERE id = $w_id" \
                "INSERT INTO docs (body) SELECT $second FROM wrapped WHERE id = $w_id" \
                "text $w_id ($(psql -At -c "SELECT format('containment %s, similarity %s', round(containment(tiny, copy)::numeric, 3), round(jaccard(tiny, copy)::numeric, 3)) FROM wrapped WHERE id = $w_id"), no shared band), $first first" \
    || fail "the second writer of a wrapped tiny text ($first first) did not wait for the first and get 23505"
done
psql -c "DROP TABLE docs, wrapped"
make_plan
SLOW=1 run_round skip similar
SLOW=1 run_round mark similar
step "concurrency: all checks passed"
