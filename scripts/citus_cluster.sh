#!/usr/bin/env bash
# A throwaway Citus cluster for simdup: a coordinator and two workers on loopback, run by the
# `postgres` OS user (initdb refuses root), data under /tmp/simdup-citus-BASEPORT/ (one directory per
# base port, so that runs on other ports do not touch each other's cluster).
#
#   scripts/citus_cluster.sh start [BASEPORT]   coordinator on BASEPORT (default 55432), workers
#                                               on BASEPORT+1 and BASEPORT+2; prints how to connect
#   scripts/citus_cluster.sh stop [BASEPORT]    stops every node (also stale ones of an earlier
#                                               run) and removes /tmp/simdup-citus-BASEPORT/
#
# Environment:
#   SIMDUP_PG_CONFIG   pg_config of the PostgreSQL 15 to run (default /usr/bin/pg_config); its
#                      bin dir provides initdb, pg_ctl, postgres, psql. simdup must already be
#                      installed there (scripts/install.sh --pg-config ...).
#   SIMDUP_CITUS_DB    database created on every node (default simdup_citus)
#   SIMDUP_CITUS_UNSAFE_TRIGGERS  citus.enable_unsafe_triggers in postgresql.conf (default on)
#   SIMDUP_CITUS_CONF  more lines for every node's postgresql.conf (a benchmark's settings)
#
# Citus is installed first if the pg_config's PostgreSQL has none ($ROOT/../shared/citus/install.sh).
# Every node preloads 'citus,simdup' (Citus must come first). The database gets CREATE EXTENSION
# citus on every node (Citus requires that before citus_add_node), the workers are registered
# with citus_set_coordinator_host / citus_add_node, and CREATE EXTENSION simdup is run on the
# coordinator only: Citus propagates it to the workers (docs/citus.md); start checks that it did.
#
# Connect:  psql -h /tmp/simdup-citus-BASEPORT/sock -p BASEPORT -U postgres -d simdup_citus
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cmd="${1:-}"; base="${2:-55432}"
PG_CONFIG="${SIMDUP_PG_CONFIG:-/usr/bin/pg_config}"
DB="${SIMDUP_CITUS_DB:-simdup_citus}"
DIR=/tmp/simdup-citus-$base
SOCK="$DIR/sock"
NODES=(coord w1 w2)   # node i listens on base + i

as_pg() { if [ "$(id -un)" = postgres ]; then "$@"; else sudo -u postgres "$@"; fi; }
log() { printf 'citus_cluster: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
port_of() { echo $((base + $1)); }

[[ "$base" =~ ^[0-9]+$ ]] || die "BASEPORT must be a number, got '$base'"
[ -x "$PG_CONFIG" ] || die "pg_config not found: $PG_CONFIG (set SIMDUP_PG_CONFIG)"
PG_BIN="$("$PG_CONFIG" --bindir)"

# PIDs of postmasters listening on a TCP port whose command line names a data dir under $DIR.
stale_pids() {
  local port="$1" pid
  for pid in $(ss -Hltnp "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$DIR/"; then echo "$pid"; fi
  done
}

stop_all() {
  local i node pid n
  for node in "${NODES[@]}"; do   # the nodes at once: each stop takes seconds
    if [ -f "$DIR/$node/postmaster.pid" ]; then
      as_pg "$PG_BIN/pg_ctl" -D "$DIR/$node" -m immediate -w -t 30 stop >/dev/null 2>&1 &
    fi
  done
  wait || true
  for i in "${!NODES[@]}"; do
    # A server of an earlier run whose data dir is gone, or started by another pg_ctl.
    for pid in $(stale_pids "$(port_of "$i")"); do
      log "stopping stale postmaster $pid on port $(port_of "$i")"
      kill -QUIT "$pid" 2>/dev/null || true   # immediate shutdown
      for n in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    done
  done
  rm -rf "$DIR"
}

psql_node() { # psql_node I [psql args...]: as postgres, on node I, database $DB
  local i="$1"; shift
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$(port_of "$i")" -U postgres -d "$DB" "$@"
}

case "$cmd" in
start)
  # 1. Citus and simdup present in this PostgreSQL?
  libdir="$("$PG_CONFIG" --pkglibdir)"; sharedir="$("$PG_CONFIG" --sharedir)"
  if [ ! -f "$libdir/citus.so" ] || [ ! -f "$sharedir/extension/citus.control" ]; then
    installer="$ROOT/../shared/citus/install.sh"
    [ -x "$installer" ] || [ -f "$installer" ] || die "Citus is not installed in $libdir and $installer is missing"
    log "installing Citus with $installer (about 3 minutes)"
    PG_CONFIG="$PG_CONFIG" bash "$installer"
  fi
  [ -f "$libdir/simdup.so" ] && [ -f "$sharedir/extension/simdup.control" ] \
    || die "simdup is not installed in $libdir: scripts/install.sh --pg-config $PG_CONFIG"

  # 2. Fresh data dirs; stale servers of an earlier run stopped first.
  stop_all
  mkdir -p "$SOCK"
  chown -R postgres:postgres "$DIR"
  pids=()
  for node in "${NODES[@]}"; do   # the three initdbs at once
    as_pg "$PG_BIN/initdb" -D "$DIR/$node" -U postgres -E UTF8 --locale=C.UTF-8 -A trust \
      >"$DIR/$node.initdb.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!NODES[@]}"; do
    wait "${pids[$i]}" || { cat "$DIR/${NODES[$i]}.initdb.log" >&2; die "initdb of ${NODES[$i]} failed"; }
  done
  for i in "${!NODES[@]}"; do
    node="${NODES[$i]}"
    cat >>"$DIR/$node/postgresql.conf" <<EOF
# scripts/citus_cluster.sh
port = $(port_of "$i")
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCK'
shared_preload_libraries = 'citus,simdup'
citus.enable_unsafe_triggers = ${SIMDUP_CITUS_UNSAFE_TRIGGERS:-on}
max_prepared_transactions = 100
max_connections = 150
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
${SIMDUP_CITUS_CONF:-}
EOF
  done
  for i in "${!NODES[@]}"; do
    node="${NODES[$i]}"
    as_pg "$PG_BIN/pg_ctl" -D "$DIR/$node" -l "$DIR/$node.log" -w -t 60 start >/dev/null \
      || { tail -20 "$DIR/$node.log" >&2; die "node $node did not start"; }
  done
  for i in "${!NODES[@]}"; do
    for n in $(seq 100); do
      "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$(port_of "$i")" && break
      [ "$n" = 100 ] && die "node ${NODES[$i]} is not accepting TCP connections on port $(port_of "$i")"
      sleep 0.1
    done
  done

  # 3. The database with Citus on every node, the workers registered, simdup on the coordinator.
  for i in "${!NODES[@]}"; do
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$(port_of "$i")" -U postgres -d postgres \
      -c "CREATE DATABASE $DB"
    psql_node "$i" -c "CREATE EXTENSION citus"
  done
  psql_node 0 -o /dev/null <<EOF
SELECT citus_set_coordinator_host('127.0.0.1', $(port_of 0));
SELECT citus_add_node('127.0.0.1', $(port_of 1));
SELECT citus_add_node('127.0.0.1', $(port_of 2));
CREATE EXTENSION simdup;
EOF
  for i in 1 2; do
    v="$(psql_node "$i" -tAc "SELECT extversion FROM pg_extension WHERE extname = 'simdup'")"
    [ -n "$v" ] || die "CREATE EXTENSION simdup was not propagated to worker ${NODES[$i]}"
  done
  workers="$(psql_node 0 -tAc "SELECT count(*) FROM citus_get_active_worker_nodes()")"
  [ "$workers" = 2 ] || die "expected 2 active workers, got $workers"
  log "running: coordinator psql -h $SOCK -p $(port_of 0) -U postgres -d $DB; workers on ports $(port_of 1), $(port_of 2)"
  ;;
stop)
  stop_all
  ;;
*)
  echo "usage: $0 start|stop [BASEPORT]   (SIMDUP_PG_CONFIG=/path/to/pg_config)" >&2
  exit 2
  ;;
esac
