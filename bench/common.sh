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
