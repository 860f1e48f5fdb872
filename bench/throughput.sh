#!/usr/bin/env bash
# SimHash throughput on real Chinese news, side by side in one run:
#   - raw jieba-rs segmentation and simdup's core fingerprint, in one Rust process
#     (core/examples/throughput.rs: medians of REPEATS passes, alternating);
#   - `SELECT simhash(body)` in PostgreSQL over the same documents (a throwaway cluster);
#   - the common Python recipe (jieba + PyPI simhash) and raw Python jieba (bench/py_baselines.py).
# Prints one markdown table of medians and ratios. Usage: bench/throughput.sh [REPEATS]
# Cluster "bench" ("$SIMDUP_CLUSTER-bench" if SIMDUP_CLUSTER is set) on port SIMDUP_BENCH_PORT
# (54331); SIMDUP_BENCH_NO_INSTALL=1 skips `cargo pgrx install`.
set -euo pipefail
. "$(dirname "$0")/../scripts/setup.sh" >/dev/null 2>&1
cd "$SIMDUP_ROOT"
repeats=${1:-5}
port=${SIMDUP_BENCH_PORT:-54331}
cluster=${SIMDUP_CLUSTER:+$SIMDUP_CLUSTER-}bench
data=bench/data/zh_news.jsonl
bench/fetch_data.sh >/dev/null
bench/setup_venv.sh >/dev/null

rust=$(cargo run --release -q -p simdup-core --example throughput -- "$data" "$repeats")

[ "${SIMDUP_BENCH_NO_INSTALL:-0}" = 1 ] || cargo pgrx install --release --pg-config "$PG_CONFIG" >/dev/null
trap 'scripts/cluster.sh stop "$cluster"' EXIT
scripts/cluster.sh start "$cluster" "$port" 2>/dev/null
psql=(psql -X -q -At -v ON_ERROR_STOP=1 -h "/tmp/simdup-$cluster/sock" -p "$port" -U postgres -d postgres)
"${psql[@]}" -c "CREATE EXTENSION simdup; CREATE TABLE docs (body text); SET max_parallel_workers_per_gather = 0;" >/dev/null
python3 -c '
import csv, json, sys
w = csv.writer(sys.stdout)
for l in open(sys.argv[1], encoding="utf-8"):
    w.writerow([json.loads(l)["body"]])' "$data" | "${psql[@]}" -c "\copy docs FROM STDIN WITH (FORMAT csv)"
mb=$("${psql[@]}" -c "SELECT sum(octet_length(body))/1e6 FROM docs")
# Warm the dictionary, then time full passes (no parallel workers: one core, like the others).
sql_runs=()
for _ in $(seq "$repeats"); do
  ms=$("${psql[@]}" <<'SQL' | tail -1
SET max_parallel_workers_per_gather = 0;
SELECT simhash('预热');
\timing on
SELECT count(simhash(body)) FROM docs;
SQL
)
  sql_runs+=("$ms")
done
sql_ms=$(printf '%s\n' "${sql_runs[@]}" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')

# Python is ~20x slower: one pass (PY_REPEATS) over the same documents.
pyout=$(mktemp)
bench/.venv/bin/python bench/py_baselines.py "$data" -r "${PY_REPEATS:-1}" --only jieba,simhash --out "$pyout" >/dev/null 2>&1 || true
py=$(cat "$pyout" 2>/dev/null || echo '{}'); rm -f "$pyout"

python3 - "$rust" "$mb" "$sql_ms" "$py" <<'PY'
import json, sys
rust = json.loads(sys.argv[1]); mb = float(sys.argv[2]); sql = mb / (float(sys.argv[3]) / 1000)
try:
    stages = json.loads(sys.argv[4])["stages"]
    py_jieba, py_simhash = stages["jieba"]["mb_per_s"], stages["simhash"]["mb_per_s"]
except Exception:
    py_jieba = py_simhash = None
j = rust["jieba_cut_mb_s"]
print(f"| what (zh_news.jsonl, {rust['docs']} docs, {mb:.1f} MB, median of {rust['repeats']}) | MB/s | vs raw jieba-rs |")
print("| --- | ---: | ---: |")
print(f"| raw jieba-rs segmentation (`Jieba::cut`, HMM off) | {j:.2f} | 1.00 |")
print(f"| simdup core fingerprint (Rust, same process) | {rust['simhash_mb_s']:.2f} | {rust['simhash_mb_s']/j:.2f} |")
print(f"| `SELECT count(simhash(body)) FROM docs` (PostgreSQL, 1 backend) | {sql:.2f} | {sql/j:.2f} |")
if py_simhash:
    print(f"| Python recipe: jieba + PyPI simhash | {py_simhash:.2f} | {py_simhash/j:.2f} |")
if py_jieba:
    print(f"| Python jieba.lcut alone | {py_jieba:.2f} | {py_jieba/j:.2f} |")
PY
