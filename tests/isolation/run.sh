#!/usr/bin/env bash
# Concurrency specs run by PostgreSQL's own isolation tester (pg_isolation_regress, from the
# server's PGXS directory): each spec's sessions interleave as its permutations say, and the
# output — who waited, who got which error, which rows remain — is compared with expected/.
#   tests/isolation/run.sh [SPEC...]      (default: every spec in tests/isolation/specs)
# Uses the installed simdup of SIMDUP_PG_CONFIG (default: pgrx.toml's PostgreSQL), a throwaway
# cluster "<SIMDUP_CLUSTER>-iso" on port SIMDUP_ISOLATION_PORT (default 54336).
set -euo pipefail
SIMDUP_NO_BUILD=1
. "$(dirname "$0")/../../scripts/setup.sh" >/dev/null 2>&1 || . "$(dirname "$0")/../../scripts/setup.sh"
cd "$SIMDUP_ROOT"
port=${SIMDUP_ISOLATION_PORT:-54336}
cluster=${SIMDUP_CLUSTER:-regress}-iso
out=/tmp/simdup-$cluster-out
tool="$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress"
[ -x "$tool" ] || { echo "isolation: no pg_isolation_regress at $tool" >&2; exit 1; }
specs=("$@")
((${#specs[@]})) || mapfile -t specs < <(cd tests/isolation/specs && ls *.spec | sed 's/\.spec$//' | sort)
trap 'scripts/cluster.sh stop "$cluster"' EXIT
scripts/cluster.sh start "$cluster" "$port"
rm -rf "$out"; mkdir -p "$out"
if ! "$tool" --bindir="$("$PG_CONFIG" --bindir)" --inputdir=tests/isolation --outputdir="$out" --host="/tmp/simdup-$cluster/sock" --port="$port" \
    --user=postgres --dbname=simdup_isolation --load-extension=simdup "${specs[@]}"; then
  cat "$out/regression.diffs" >&2 || true
  exit 1
fi
