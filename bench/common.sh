# The preamble every shell benchmark sources (it is not run on its own):
#   . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
# It sets `set -euo pipefail`, BENCH (this directory), ROOT (the checkout, made the working
# directory) and DATA (the corpora of bench/fetch/news.sh: bench/data, or SIMDUP_BENCH_DATA), and
# sources scripts/setup.sh for PG_CONFIG and PG_BIN (SIMDUP_PG_CONFIG picks another PostgreSQL);
# `BENCH_PG=0 . .../common.sh` skips that for a benchmark without PostgreSQL. Then:
#
#   bench_cluster NAME      this tree's release build installed (scripts/install.sh, once a run;
#                           SIMDUP_BENCH_NO_INSTALL=1 skips it), then a throwaway cluster
#                           "<SIMDUP_CLUSTER>-NAME" ("regress-NAME" without SIMDUP_CLUSTER) on
#                           port SIMDUP_BENCH_PORT (default SIMDUP_REGRESS_PORT, else 54329),
#                           started with PG_EXTRA_OPTS, stopped and removed on exit
#                           (SIMDUP_BENCH_KEEP=1 leaves it running); sets cluster, port, SOCK
#   psql ARGS               psql on it as postgres (-X -q, ON_ERROR_STOP)
#   bench_db                CREATE DATABASE bench there, with simdup; db ARGS: psql -d bench
#   bench_citus             the cluster of scripts/citus_cluster.sh (a coordinator and 2
#                           workers, simdup already installed) on base port SIMDUP_CITUS_PORT
#                           (55432), stopped on exit unless SIMDUP_CITUS_KEEP=1; psql0 ARGS:
#                           psql on the coordinator's database simdup_citus
#   on_exit COMMAND         COMMAND (a string, evaluated) run on exit, before those added earlier
#   bench_workdir NAME      WORK: a new directory /tmp/simdup-NAME.XXXXXX, removed on exit
#   banner TEXT             prints "== TEXT; C cores, load L, DATE UTC"
#   timed_rollback SETUP STATEMENT [EXPRESSION]
#                           in database bench: SETUP, then STATEMENT timed in the server, in a
#                           transaction that is rolled back (every call sees the same table);
#                           prints the milliseconds, and EXPRESSION's value (SQL, evaluated
#                           before the rollback) after a space
#   news_tsv FILE...        the documents of corpora like bench/data/zh_news.jsonl as lines of
#                           COPY's text format, title TAB body
#   log TEXT                "bench: TEXT" on stderr
#
# The tables and reports several benchmarks share, in database bench:
#   lookup_cluster NAME     bench_cluster NAME with the lookup benchmarks' settings
#                           (shared_buffers SIMDUP_BENCH_SHARED_BUFFERS (1GB), max_wal_size 8GB,
#                           synchronous_commit off, no parallel workers), then bench_db
#   versions [SETTING...]   prints "simdup VERSION, SERVER VERSION" and each SETTING's value
#   random_table N [ARGS]   table t (id bigint PRIMARY KEY, fp bigint) of N random fingerprints
#                           (ids 1 to N), then simdup_enable('t', NULL, 'fp'ARGS): ARGS, if
#                           given, begins with a comma
#   random_batches N B V    table batch (variant, id, fp): V variants (0 to V - 1) of B new random
#                           fingerprints each, ids after N; then VACUUM ANALYZE of t and batch
#   pct_function            SQL function pct(xs float8[], p float8): the p-quantile of xs
#   prewarm_keys            t's key indexes read into shared buffers (pg_prewarm, PostgreSQL's
#                           contrib), then one lookup
#   news_table N            the news of bench/data/{zh,en}_news.jsonl (bench/fetch/news.sh
#                           fetches them if absent) and two edited copies of each (last sentence
#                           dropped, first tenth dropped): table docs (title, body), table texts
#                           (id, kind 'text' or 'text-edit', body), and table bench (id, fp,
#                           kind): N random fingerprints (kind 'random', ids 1 to N) and the
#                           texts' SimHash (ids N + texts.id); simdup_enable('bench', NULL, 'fp'),
#                           VACUUM ANALYZE; prints the rows of each kind
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH/.." && pwd)"
cd "$ROOT"
DATA="${SIMDUP_BENCH_DATA:-$BENCH/data}"
if [ "${BENCH_PG:-1}" != 0 ]; then
  . scripts/setup.sh >/dev/null   # its log on stderr: what it checked, or why it stopped
fi

log() { printf '\033[1mbench:\033[0m %s\n' "$*" >&2; }

_bench_exit=()
_bench_on_exit() { local c; for c in "${_bench_exit[@]}"; do eval "$c" || true; done; }
on_exit() { _bench_exit=("$1" "${_bench_exit[@]}"); trap _bench_on_exit EXIT; }

bench_workdir() {
  WORK="$(mktemp -d "/tmp/simdup-$1.XXXXXX")"
  chmod 755 "$WORK"   # the server (user postgres) reads the files written here
  on_exit 'rm -rf "$WORK"'
}

banner() { echo "== $*; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %H:%M UTC')"; }

_bench_installed=0
bench_cluster() {
  cluster="${SIMDUP_CLUSTER:-regress}-$1"
  port="${SIMDUP_BENCH_PORT:-${SIMDUP_REGRESS_PORT:-54329}}"
  SOCK="/tmp/simdup-$cluster/sock"
  if [ "${SIMDUP_BENCH_NO_INSTALL:-0}" != 1 ] && [ "$_bench_installed" = 0 ]; then
    scripts/install.sh --pg-config "$PG_CONFIG" >/dev/null
    _bench_installed=1
  fi
  scripts/cluster.sh start "$cluster" "$port"
  if [ "${SIMDUP_BENCH_KEEP:-0}" = 1 ]; then
    on_exit 'echo "cluster $cluster left running: $PG_BIN/psql -h $SOCK -p $port -U postgres" >&2'
  else
    on_exit 'scripts/cluster.sh stop "$cluster"'
  fi
}
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$port" -U postgres "$@"; }
db() { psql -d bench "$@"; }
bench_db() {
  psql -d postgres -c "CREATE DATABASE bench"
  db -c "CREATE EXTENSION simdup"
}

bench_citus() {
  export SIMDUP_PG_CONFIG="$PG_CONFIG" SIMDUP_CITUS_DB=simdup_citus
  BASE="${SIMDUP_CITUS_PORT:-55432}"
  SOCK="/tmp/simdup-citus-$BASE/sock"
  [ "${SIMDUP_CITUS_KEEP:-0}" = 1 ] || on_exit 'scripts/citus_cluster.sh stop "$BASE"'
  scripts/citus_cluster.sh start "$BASE" >&2
}
psql0() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$BASE" -U postgres -d simdup_citus "$@"; }

# copy_beside_writers DB TABLE ROWS CLIENTS SECONDS: a COPY of ROWS texts of hex_text() into
# TABLE (body) while CLIENTS pgbench clients insert one row a transaction into it for SECONDS
# (the COPY starts 2 s in); prints the COPY's outcome and time, and the writers' tps and error
# lines. Needs $WORK, and hex_text() in DB of the cluster at $SOCK, $port.
copy_beside_writers() {
  local db=$1 table=$2 rows=$3 clients=$4 secs=$5 out writers t0 t1 werr wtps
  local q=("$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$port" -U postgres -d "$db")
  "${q[@]}" -c "COPY (SELECT hex_text() FROM generate_series(1, $rows)) TO STDOUT" >"$WORK/copy.txt"
  echo "INSERT INTO $table (body) VALUES (hex_text());" >"$WORK/one.sql"
  "$PG_BIN/pgbench" -n -h "$SOCK" -p "$port" -U postgres -c "$clients" -j 2 -T "$secs" -f "$WORK/one.sql" "$db" \
    >"$WORK/writers.out" 2>&1 &
  writers=$!
  sleep 2
  t0=$(date +%s.%N)
  out=$("${q[@]}" -c "\\copy $table (body) FROM '$WORK/copy.txt'" 2>&1 && echo ok) || true
  t1=$(date +%s.%N)
  wait "$writers" || true
  werr=$(grep -c "ERROR\|error" "$WORK/writers.out" || true)
  wtps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$WORK/writers.out" | head -1)
  printf 'COPY of %s rows beside %s single-row writers: COPY %s in %.2f s; writers: %s tps, %s error lines\n' \
    "$rows" "$clients" "$([ "${out##*$'\n'}" = ok ] && echo finished || echo "FAILED: $out")" \
    "$(echo "$t1 - $t0" | bc)" "${wtps:-0}" "$werr"
}

timed_rollback() {
  db -At <<SQL | tail -1
BEGIN;
$1
SELECT clock_timestamp() AS t0 \gset
$2;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0') * 1000, 1)${3:+ || ' ' || ($3)};
ROLLBACK;
SQL
}

news_tsv() {
  cat "$@" | python3 -c '
import json, sys
esc = lambda s: s.replace("\\", "\\\\").replace("\t", " ").replace("\n", "\\n").replace("\r", " ")
for line in sys.stdin:
    d = json.loads(line)
    print(esc(d.get("title") or "") + "\t" + esc(d.get("body") or ""))
'
}

lookup_cluster() {
  PG_EXTRA_OPTS="-c shared_buffers=${SIMDUP_BENCH_SHARED_BUFFERS:-1GB} -c max_wal_size=8GB -c synchronous_commit=off -c max_parallel_workers_per_gather=0" \
    bench_cluster "$1"
  bench_db
}

versions() {
  local line s
  line="simdup $(db -At -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'"), $(db -At -c 'SHOW server_version')"
  for s in "$@"; do line="$line, $s $(db -At -c "SHOW $s")"; done
  echo "$line"
}

random_table() {
  db <<SQL
CREATE TABLE t (id bigint PRIMARY KEY, fp bigint);
INSERT INTO t SELECT g, hashint8extended(g, 1) FROM generate_series(1, $1) g;
SELECT simdup_enable('t', NULL, 'fp'${2:-});
SQL
}

random_batches() {
  db <<SQL
CREATE TABLE batch (variant int, id bigint, fp bigint);
INSERT INTO batch SELECT v, $1 + g, hashint8extended(g, 2 + v) FROM generate_series(1, $2) g, generate_series(0, $3 - 1) v;
VACUUM ANALYZE t; VACUUM ANALYZE batch;
SQL
}

pct_function() {
  db -c "CREATE FUNCTION pct(xs float8[], p float8) RETURNS float8 LANGUAGE sql AS
    \$\$ SELECT percentile_cont(p) WITHIN GROUP (ORDER BY x) FROM unnest(xs) x \$\$"
}

prewarm_keys() {
  db -At -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" -c "SELECT sum(pg_prewarm(index)) FROM simdup_block_indexes('t')" >/dev/null
  db -At -c "SELECT count(*) FROM t WHERE hamming(fp, 1) <= 10" >/dev/null
}

news_table() {
  [ -f "$DATA/zh_news.jsonl" ] || bench/fetch/news.sh >/dev/null
  db -c "CREATE TABLE docs (title text, body text)"
  news_tsv "$DATA"/zh_news.jsonl "$DATA"/en_news.jsonl | db -c "\copy docs FROM STDIN"
  db <<SQL
CREATE TABLE texts (id bigserial PRIMARY KEY, kind text, body text);
INSERT INTO texts (kind, body)
SELECT 'text', title || E'\n' || body FROM docs
UNION ALL
SELECT 'text-edit', title || E'\n' || regexp_replace(body, '[^。！？.!?]*[。！？.!?]?\s*$', '') FROM docs
UNION ALL
SELECT 'text-edit', title || E'\n' || substr(body, length(body) / 10) FROM docs;
CREATE TABLE bench (id bigint PRIMARY KEY, fp bigint, kind text NOT NULL DEFAULT 'random');
INSERT INTO bench (id, fp) SELECT g, hashint8extended(g, 7) FROM generate_series(1, $1) g;
INSERT INTO bench (id, fp, kind) SELECT $1 + id, simhash(body), kind FROM texts WHERE simhash(body) IS NOT NULL;
SELECT simdup_enable('bench', NULL, 'fp');
VACUUM ANALYZE bench;
SELECT kind, count(*) FROM bench GROUP BY kind ORDER BY kind;
SQL
}
