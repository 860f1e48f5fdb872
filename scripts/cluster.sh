#!/usr/bin/env bash
# A throwaway PostgreSQL cluster run by the `postgres` OS user (initdb refuses root).
#   scripts/cluster.sh start NAME PORT   -> creates /tmp/simdup-NAME/{data,sock}, starts it
#   scripts/cluster.sh restart NAME      -> restarts it with the options it was started with
#                                           (a preloaded library is loaded again)
#   scripts/cluster.sh stop NAME         -> stops it and removes the directory
# Connect with: psql -h /tmp/simdup-NAME/sock -p PORT -U postgres
set -euo pipefail
SIMDUP_NO_BUILD=1
. "$(dirname "$0")/setup.sh" >/dev/null 2>&1 || . "$(dirname "$0")/setup.sh"
cmd="$1"; name="$2"; dir="/tmp/simdup-$name"
as_pg() { if [ "$(id -un)" = postgres ]; then "$@"; else sudo -u postgres "$@"; fi; }
case "$cmd" in
  start)
    port="$3"
    if [ -f "$dir/data/postmaster.pid" ]; then as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true; fi
    rm -rf "$dir"; mkdir -p "$dir/sock"; chown -R postgres:postgres "$dir"
    as_pg "$PG_BIN/initdb" -D "$dir/data" -U postgres -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log"; exit 1; }
    as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w \
      -o "-p $port -k $dir/sock -c listen_addresses='' ${PG_EXTRA_OPTS:-}" start >/dev/null
    echo "cluster $name running: psql -h $dir/sock -p $port -U postgres" >&2
    ;;
  restart)
    # pg_ctl restart without -o reuses the options of the last start (data/postmaster.opts).
    as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -m fast -w restart >/dev/null
    ;;
  stop)
    if [ -d "$dir/data" ]; then as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true; fi
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 start NAME PORT | restart NAME | stop NAME" >&2; exit 2 ;;
esac
