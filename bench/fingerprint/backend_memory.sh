#!/usr/bin/env bash
# Dictionary loading: first-call latency in a new connection and private memory per backend,
# with and without shared_preload_libraries = 'simdup', on one throwaway cluster each.
#   bench/fingerprint/backend_memory.sh [CONNECTIONS]     (default 20)
# Memory is read from /proc/PID/smaps_rollup of each backend after it computed one simhash:
# Private_Clean + Private_Dirty (memory only this backend holds) and Pss (its share of all).
# Its own throwaway cluster "<SIMDUP_CLUSTER>-mem" (bench/common.sh: bench_cluster), started
# once for each setting.
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
conns=${1:-20}
sql() { psql -At -d postgres "$@"; }

measure() { # $1 = label, $2 = extra server options
  PG_EXTRA_OPTS="$2" bench_cluster mem
  sql -c "CREATE EXTENSION simdup" >/dev/null
  # First call in a new connection, 5 connections, median.
  local firsts=()
  for _ in 1 2 3 4 5; do
    firsts+=("$(sql <<'SQL' | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
\timing on
SELECT simhash('南京市长江大桥于1968年建成通车') IS NOT NULL;
SQL
)")
  done
  local first
  first=$(printf '%s\n' "${firsts[@]}" | sort -n | sed -n 3p)
  # CONNECTIONS backends that each computed a fingerprint and then wait.
  for _ in $(seq "$conns"); do
    sql -c "SELECT simhash('南京市长江大桥于1968年建成通车')" -c "SELECT pg_sleep(20)" >/dev/null &
  done
  sleep 8
  local pids
  pids=$(sql -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(20)%' AND pid <> pg_backend_pid()")
  python3 - "$1" "$first" $pids <<'PY'
import statistics, sys
label, first, pids = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
priv, pss = [], []
for pid in pids:
    f = {}
    for line in open(f"/proc/{pid}/smaps_rollup"):
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":"):
            f[parts[0][:-1]] = int(parts[1])
    priv.append((f["Private_Clean"] + f["Private_Dirty"]) / 1024)
    pss.append(f["Pss"] / 1024)
print(f"| {label} | {len(pids)} | {first:.1f} | {statistics.median(priv):.1f} | {statistics.median(pss):.1f} |")
PY
  wait
  scripts/cluster.sh stop "$cluster" >/dev/null 2>&1
}

echo "| setting | backends | first simhash() in a new connection, ms (median of 5) | private memory per backend, MB (median) | PSS per backend, MB (median) |"
echo "| --- | ---: | ---: | ---: | ---: |"
measure "lazy (default)" ""
measure "shared_preload_libraries = 'simdup'" "-c shared_preload_libraries=simdup"
