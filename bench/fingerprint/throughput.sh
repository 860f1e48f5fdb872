#!/usr/bin/env bash
# SimHash throughput on real Chinese news, side by side in one run:
#   - raw jieba-rs segmentation and simdup's core fingerprint, in one Rust process
#     (bench/rust/examples/throughput.rs), and `SELECT simhash(body)` in PostgreSQL over the same
#     documents (a throwaway cluster), in REPEATS rounds of one pass each; ratios per round;
#   - the common Python recipe (jieba + PyPI simhash) and raw Python jieba (bench/python/py_baselines.py).
# Prints one markdown table of medians and ratios. Usage: bench/fingerprint/throughput.sh [REPEATS]
# Its own throwaway cluster "<SIMDUP_CLUSTER>-throughput" (bench/common.sh: bench_cluster).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
repeats=${1:-5}
data="$DATA/zh_news.jsonl"
bench/fetch/news.sh >/dev/null
bench/python/setup_venv.sh >/dev/null

cargo build --release -q -p simdup-bench --example throughput
bench_cluster throughput
sql() { psql -At -d postgres "$@"; }
sql -c "CREATE EXTENSION simdup; CREATE TABLE docs (body text); SET max_parallel_workers_per_gather = 0;" >/dev/null
python3 -c '
import csv, json, sys
w = csv.writer(sys.stdout)
for l in open(sys.argv[1], encoding="utf-8"):
    w.writerow([json.loads(l)["body"]])' "$data" | sql -c "\copy docs FROM STDIN WITH (FORMAT csv)"
mb=$(sql -c "SELECT sum(octet_length(body))/1e6 FROM docs")
# Rounds: one pass of raw jieba-rs and one of the core fingerprint (the Rust example, REPEATS 1),
# then one SQL pass in a new backend (dictionary warmed first, no parallel workers: one core, like
# the others). Ratios are taken within each round (a SQL pass against the raw jieba-rs passes
# just before and after it) and their median reported, so that the speed of this shared machine
# drifting between rounds does not enter them.
rounds=()
for _ in $(seq "$repeats"); do
  r=$(cargo run --release -q -p simdup-bench --example throughput -- "$data" 1)
  ms=$(sql <<'SQL' | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
SET max_parallel_workers_per_gather = 0;
SELECT simhash('预热');
\timing on
SELECT count(simhash(body)) FROM docs;
SQL
)
  rounds+=("$r $ms")
done
# One more Rust pass after the last SQL pass: each SQL pass is compared with the raw jieba-rs
# passes just before and just after it.
last=$(cargo run --release -q -p simdup-bench --example throughput -- "$data" 1)

# Python is ~20x slower: one pass (PY_REPEATS) over the same documents.
pyout=$(mktemp)
bench/.venv/bin/python bench/python/py_baselines.py "$data" -r "${PY_REPEATS:-1}" --only jieba,simhash --out "$pyout" >/dev/null 2>&1 || true
py=$(cat "$pyout" 2>/dev/null || echo '{}'); rm -f "$pyout"

python3 - "$mb" "$py" "$last" "${rounds[@]}" <<'PY'
import json, statistics, sys
mb = float(sys.argv[1])
rounds = []
for r in sys.argv[4:]:
    rust, ms = r.rsplit(" ", 1)
    rust = json.loads(rust)
    rounds.append((rust["jieba_cut_mb_s"], rust["simhash_mb_s"], mb / (float(ms) / 1000), rust["docs"]))
after = [r[0] for r in rounds[1:]] + [json.loads(sys.argv[3])["jieba_cut_mb_s"]]
# A SQL pass against the mean of the raw jieba-rs passes before and after it.
sql_base = [(r[0] + a) / 2 for r, a in zip(rounds, after)]
med = lambda xs: statistics.median(xs)
j, core, sql = (med([r[i] for r in rounds]) for i in range(3))
core_ratio = med([r[1] / r[0] for r in rounds])
sql_ratio = med([r[2] / b for r, b in zip(rounds, sql_base)])
try:
    stages = json.loads(sys.argv[2])["stages"]
    py_jieba, py_simhash = stages["jieba"]["mb_per_s"], stages["simhash"]["mb_per_s"]
except Exception:
    py_jieba = py_simhash = None
print(f"| what (zh_news.jsonl, {rounds[0][3]} docs, {mb:.1f} MB, median of {len(rounds)} rounds) | MB/s | vs raw jieba-rs (median of the rounds' ratios) |")
print("| --- | ---: | ---: |")
print(f"| raw jieba-rs segmentation (`Jieba::cut`, HMM off) | {j:.2f} | 1.00 |")
print(f"| simdup core fingerprint (Rust, same process) | {core:.2f} | {core_ratio:.2f} |")
print(f"| `SELECT count(simhash(body)) FROM docs` (PostgreSQL, 1 backend) | {sql:.2f} | {sql_ratio:.2f} |")
if py_simhash:
    print(f"| Python recipe: jieba + PyPI simhash (one pass) | {py_simhash:.2f} | {py_simhash/j:.3f} |")
if py_jieba:
    print(f"| Python jieba.lcut alone (one pass) | {py_jieba:.2f} | {py_jieba/j:.3f} |")
print()
print("| round | raw jieba-rs MB/s | core MB/s | SQL MB/s | core / jieba | SQL / jieba (mean of the passes before and after) |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
for i, ((a, b, c, _), base) in enumerate(zip(rounds, sql_base), 1):
    print(f"| {i} | {a:.2f} | {b:.2f} | {c:.2f} | {b/a:.2f} | {c/base:.2f} |")
PY
