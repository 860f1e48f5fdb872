#!/usr/bin/env bash
# Exact lookups while the key indexes split and shrink under them (src/search/btree/, the
# page reader, and its locking argument in docs/search.md).
#
#   tests/concurrency/lookups_during_splits.sh     (scripts/test.sh concurrency runs it)
#
# On a throwaway cluster "<SIMDUP_CLUSTER>-splits", with the installed simdup:
#   * a table of fingerprints (simdup_enable on a bigint column, 4 key indexes) seeded with
#     clusters of near-duplicates around 40 query fingerprints, so that the leaves the lookups
#     read are the ones that fill;
#   * 3 writers insert more of them, 50 rows a transaction, splitting those leaves (each run
#     reports how many pages the indexes grew by); 1 deleter deletes old rows and runs
#     VACUUM, which removes their entries from the leaves being read (and deletes a page it
#     empties; the test does not count those);
#   * at the same time 3 readers run lookups `hamming(fp, q) <= k` (k 0, 3, 6, 10, 16, 24,
#     their thresholds from every probe shape: exact keys, merged runs, a whole index) in
#     REPEATABLE READ transactions, each answered twice in one snapshot: through the planner's
#     index path (page reader) and by a sequential scan (simdup.index_search = off). The
#     answers (count, sum of ids) must be equal, every time.
# Fails if any answer differs, if the lookup is not served by the index path, or if the
# indexes grew by less than a quarter.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
. scripts/setup.sh >/dev/null 2>&1
SECONDS_TO_RUN="${SIMDUP_SPLIT_SECONDS:-20}"
cluster="${SIMDUP_CLUSTER:-regress}-splits"
port="${SIMDUP_CONCURRENCY_PORT:-${SIMDUP_REGRESS_PORT:-54329}}"
work="$(mktemp -d /tmp/simdup-splits.XXXXXX)"
chmod 755 "$work"
scripts/cluster.sh start "$cluster" "$port"
trap 'scripts/cluster.sh stop "$cluster"; rm -rf "$work"' EXIT
sock="/tmp/simdup-$cluster/sock"
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d splits "$@"; }
"$PG_BIN/psql" -X -q -h "$sock" -p "$port" -U postgres -d postgres -c "CREATE DATABASE splits"
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { printf '== %s\n' "$*" >&2; }

step "table: 40 query fingerprints, clusters of near-duplicates around them"
psql >/dev/null <<'SQL'
CREATE EXTENSION simdup;
SELECT setseed(0.25);
CREATE TABLE q (qid int PRIMARY KEY, fp bigint NOT NULL);
INSERT INTO q SELECT i, (random() * 2^62)::bigint * 2 - (random() * 2^62)::bigint FROM generate_series(1, 40) i;
-- A fingerprint near one of the queries: a few random bits flipped (0..20 of them).
CREATE FUNCTION near(seed float8) RETURNS bigint LANGUAGE sql VOLATILE AS $$
  SELECT (SELECT fp FROM q WHERE qid = 1 + (seed * 40)::int % 40)
         # coalesce((SELECT bit_or((1::bigint << b)) FROM (SELECT (random() * 63)::int b FROM generate_series(1, (random() * 20)::int)) s), 0)
$$;
CREATE TABLE t (id bigserial PRIMARY KEY, fp bigint);
INSERT INTO t (fp) SELECT near(random()) FROM generate_series(1, 20000);
INSERT INTO t (fp) SELECT (random() * 2^62)::bigint * 2 - (random() * 2^62)::bigint FROM generate_series(1, 20000);
SELECT simdup_enable('t', NULL, 'fp');
VACUUM ANALYZE t;
CREATE TABLE mismatches (at timestamptz DEFAULT clock_timestamp(), qid int, k int, index_answer text, scan_answer text);
CREATE TABLE served (n bigint);
SQL
leaves() {
  psql -At -c "SELECT sum(pg_relation_size(i.indexrelid) / current_setting('block_size')::int)
               FROM pg_index i WHERE i.indrelid = 't'::regclass AND i.indexprs IS NOT NULL"
}
before=$(leaves)
plan=$(psql -At -c "EXPLAIN (COSTS OFF) SELECT id FROM t WHERE hamming(fp, 12345) <= 10")
[[ "$plan" == *"Tid Scan"* ]] || fail "the lookup is not served by the index path: $plan"

cat >"$work/writer.sql" <<SQL
DO \$\$
DECLARE stop timestamptz := clock_timestamp() + interval '$SECONDS_TO_RUN s';
BEGIN
  WHILE clock_timestamp() < stop LOOP
    INSERT INTO t (fp) SELECT near(random()) FROM generate_series(1, 50);
    COMMIT;
  END LOOP;
END \$\$;
SQL
cat >"$work/deleter.sh" <<SH
end=\$((\$(date +%s) + $SECONDS_TO_RUN))
while [ "\$(date +%s)" -lt "\$end" ]; do
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d splits \
    -c "DELETE FROM t WHERE id IN (SELECT id FROM t ORDER BY id LIMIT 3000)" -c "VACUUM t" || exit 1
  sleep 1
done
SH
cat >"$work/reader.sql" <<SQL
CREATE TEMP TABLE answers (qid int, k int, idx text, seq text);
DO \$\$
DECLARE
  stop timestamptz := clock_timestamp() + interval '$SECONDS_TO_RUN s';
  r record; k int; a text; b text; n int := 0;
BEGIN
  WHILE clock_timestamp() < stop LOOP
    FOR r IN SELECT qid, fp # (1::bigint << (random() * 63)::int) AS fp FROM q ORDER BY random() LIMIT 5 LOOP
      FOREACH k IN ARRAY ARRAY[0, 3, 6, 10, 16, 24] LOOP
        -- One snapshot for both answers: this block runs in one REPEATABLE READ transaction
        -- per round (COMMIT below).
        PERFORM set_config('simdup.index_search', 'on', true);
        EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM t WHERE hamming(fp, %s) <= %s', r.fp, k) INTO a;
        PERFORM set_config('simdup.index_search', 'off', true);
        EXECUTE format('SELECT count(*) || '':'' || coalesce(sum(id), 0) FROM t WHERE hamming(fp, %s) <= %s', r.fp, k) INTO b;
        IF a <> b THEN
          INSERT INTO mismatches (qid, k, index_answer, scan_answer) VALUES (r.qid, k, a, b);
        END IF;
        n := n + 1;
      END LOOP;
    END LOOP;
    COMMIT; -- the next transaction is REPEATABLE READ too (default_transaction_isolation)
  END LOOP;
  INSERT INTO served VALUES (n);
END \$\$;
SQL

step "3 writers, 1 deleter (with VACUUM), 3 readers comparing index and scan answers, ${SECONDS_TO_RUN}s"
pids=()
for c in 1 2 3; do
  psql -f "$work/writer.sql" >"$work/w$c.out" 2>&1 & pids+=($!)
  PGOPTIONS="-c default_transaction_isolation=repeatable\ read" psql -f "$work/reader.sql" >"$work/r$c.out" 2>&1 & pids+=($!)
done
bash "$work/deleter.sh" >"$work/d.out" 2>&1 & pids+=($!)
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
[ "$status" = 0 ] || { cat "$work"/*.out >&2; fail "a client failed"; }
after=$(leaves)
psql -At -F ' ' <<SQL >&2
SELECT format('    lookups compared: %s; rows now %s; index pages %s -> %s', (SELECT sum(n) FROM served), (SELECT count(*) FROM t), $before, $after);
SQL
bad=$(psql -At -c "SELECT count(*) FROM mismatches")
[ "$bad" = 0 ] || { psql -c "SELECT * FROM mismatches LIMIT 10" >&2; fail "$bad lookups answered differently through the index"; }
[ "$(psql -At -c "SELECT sum(n) FROM served")" -gt 100 ] || fail "too few lookups ran"
[ "$after" -ge $((before * 5 / 4)) ] || fail "the indexes grew by less than a quarter (too few splits to test against): $before -> $after"
step "lookups during splits: all answers equal"
