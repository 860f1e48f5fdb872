# The preamble the benchmarks share; sourced, not run:
#   . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
#   bench_cluster NAME          # after scripts/install.sh (SIMDUP_BENCH_NO_INSTALL=1 skips it)
# gives PG_CONFIG and PG_BIN (scripts/setup.sh), the checkout as the working directory, a
# throwaway cluster "<SIMDUP_CLUSTER>-NAME" on port SIMDUP_BENCH_PORT (default
# SIMDUP_REGRESS_PORT, else 54329) started with PG_EXTRA_OPTS and stopped on exit, and `psql`
# connected to it as postgres (arguments passed on).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/setup.sh >/dev/null 2>&1
bench_cluster() {
  cluster="${SIMDUP_CLUSTER:-regress}-$1"
  port="${SIMDUP_BENCH_PORT:-${SIMDUP_REGRESS_PORT:-54329}}"
  if [ "${SIMDUP_BENCH_NO_INSTALL:-0}" != 1 ]; then
    scripts/install.sh --pg-config "$PG_CONFIG" >/dev/null
  fi
  scripts/cluster.sh start "$cluster" "$port"
  trap 'scripts/cluster.sh stop "$cluster"' EXIT
}
psql() { "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "/tmp/simdup-$cluster/sock" -p "$port" -U postgres "$@"; }
