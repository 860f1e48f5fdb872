#!/usr/bin/env bash
# Sets everything up and runs every test of simdup:
#   1. the pure core: unit, property, golden-vector and known-answer tests (cargo test);
#   2. in-database #[pg_test]s (cargo pgrx test, cluster run by the postgres user);
#   3. the SQL API's pg_regress suite (tests/pg_regress) against a throwaway cluster;
#   4. the dedup trigger under 16 concurrent clients (tests/concurrency/dedup_concurrency.sh);
#   5. hardening: pg_dump/pg_restore and kill -9 crash recovery (tests/hardening/dump_and_crash.sh);
#   6. upgrade: 0.1.0 built from its commit, tables enabled under it, this build installed on the
#      running server, ALTER EXTENSION simdup UPDATE (tests/upgrade/upgrade.sh);
#   7. citus: a Citus 13.2 coordinator + 2 workers on loopback (Citus built from ../shared/citus
#      if missing), simdup on distributed tables (tests/citus/run.sh).
# Usage: scripts/test.sh [core|pg|regress|concurrency|hardening|upgrade|citus]...   (default: all)
# Builds are installed with scripts/install.sh (files renamed into place, safe under running
# servers).
# SIMDUP_CLUSTER / SIMDUP_REGRESS_PORT name the throwaway cluster (default regress / 54329);
# the concurrency part uses SIMDUP_CONCURRENCY_PORT (default: the regress port).
set -euo pipefail
. "$(dirname "$0")/setup.sh"
cd "$SIMDUP_ROOT"
parts=("$@"); ((${#parts[@]})) || parts=(core pg upgrade regress concurrency hardening citus)
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
installed=0
install_release() { # build and install the release extension once per run, for the parts that need it
  [ "$installed" = 1 ] && return
  scripts/install.sh --pg-config "$PG_CONFIG"
  installed=1
}

for part in "${parts[@]}"; do
  case "$part" in
  core)
    step "core: cargo test -p simdup-core -p simdup-bench"
    cargo test -p simdup-core -p simdup-bench --profile test-fast
    ;;
  pg)
    step "pg: cargo pgrx test pg$PG_MAJOR"
    pgdata=/tmp/simdup-pgtest-${SIMDUP_CLUSTER:-regress}
    mkdir -p "$pgdata"; chown postgres:postgres "$pgdata"
    cargo pgrx test "pg$PG_MAJOR" --runas postgres --pgdata "$pgdata/data"
    ;;
  regress)
    step "regress: install (scripts/install.sh), then pg_regress"
    install_release
    port=${SIMDUP_REGRESS_PORT:-54329}; cluster=${SIMDUP_CLUSTER:-regress}
    trap 'scripts/cluster.sh stop "$cluster"' EXIT
    scripts/cluster.sh start "$cluster" "$port"
    out=/tmp/simdup-$cluster-out; rm -rf "$out"; mkdir -p "$out"
    tests=$(cd tests/pg_regress/sql && ls *.sql | sed 's/\.sql$//' | sort)
    if ! "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
        --inputdir=tests/pg_regress --outputdir="$out" \
        --host="/tmp/simdup-$cluster/sock" --port="$port" --user=postgres \
        --dbname=simdup_regress --load-extension=simdup $tests; then
      cat "$out/regression.diffs" >&2 || true
      exit 1
    fi
    step "schema: the installed schema is the one recorded for this version"
    scripts/schema_check.sh "/tmp/simdup-$cluster/sock" "$port"
    scripts/cluster.sh stop "$cluster"; trap - EXIT
    ;;
  concurrency)
    step "concurrency: install (scripts/install.sh), then tests/concurrency/dedup_concurrency.sh"
    install_release
    tests/concurrency/dedup_concurrency.sh
    ;;
  hardening)
    step "hardening: install (scripts/install.sh), then tests/hardening/dump_and_crash.sh"
    install_release
    tests/hardening/dump_and_crash.sh
    ;;
  upgrade)
    step "upgrade: 0.1.0 -> this build, ALTER EXTENSION simdup UPDATE (tests/upgrade/upgrade.sh)"
    tests/upgrade/upgrade.sh
    installed=1   # it leaves this tree's release build installed
    ;;
  citus)
    step "citus: install, then a coordinator + 2 workers (tests/citus/run.sh)"
    install_release
    SIMDUP_PG_CONFIG="$PG_CONFIG" tests/citus/run.sh
    ;;
  *) echo "unknown part: $part (core|pg|regress|concurrency|hardening|upgrade|citus)" >&2; exit 2 ;;
  esac
done
step "all tests passed"
