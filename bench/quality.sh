#!/usr/bin/env bash
# The near-duplicate quality benchmark, everything in one go (docs/quality.md):
#   1. corpora (bench/fetch_data.sh) and the Python baselines' venv (bench/setup_venv.sh);
#   2. labelled pairs from real news, exported once: quality_pairs export -> texts.jsonl, pairs.jsonl;
#   3. simdup's schemes and variants score them (quality_pairs score -> scores_simdup.tsv), and
#      count false positives among all pairs of each length bucket's corpus pool (quality_pairs
#      pool -> pool_fpr.tsv);
#   4. the Python recipes score the same pairs (jieba + simhash, datasketch MinHash ->
#      scores_python.tsv);
#   5. bench/quality_report.py writes bench/data/results/quality.md, and
#      bench/containment_eval.py the similarity trigger's rules with containment
#      (bench/data/results/quality_containment.md);
#   6. the same for a corpus no other measurement uses, the prose of the Python 3.11 documentation
#      (Debian package python3.11-doc, bench/fetch_pydoc.sh), as English only:
#      bench/data/quality_pydoc/ and bench/data/results/quality_pydoc.md (PYDOC=0 skips it).
# Usage: bench/quality.sh [--per-bucket N] [--hard H] [--random R] [--seed S]
#   defaults 200 / 4 / 0 (= all pairs of subjects) / 1 (about 5 minutes on 2 busy cores);
#   --per-bucket 30 for a quick look.
# Output: bench/data/quality/ and the report (QUALITY_DIR=..., QUALITY_REPORT=... to change);
# CARGO_TARGET_DIR is honoured.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
DIR="${QUALITY_DIR:-$BENCH_DIR/data/quality}"
REPORT="${QUALITY_REPORT:-$BENCH_DIR/data/results/quality.md}"
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

step "corpora and Python venv"
"$BENCH_DIR/fetch_data.sh" >/dev/null
"$BENCH_DIR/setup_venv.sh" >/dev/null

cd "$ROOT"
step "export pairs"
cargo run -q --release -p simdup-bench --example quality_pairs -- export \
  --zh "$BENCH_DIR/data/zh_news.jsonl" --en "$BENCH_DIR/data/en_news.jsonl" --out "$DIR" "$@"

step "score: simdup"
cargo run -q --release -p simdup-bench --example quality_pairs -- score --dir "$DIR"

step "all pairs of the corpus pools: simdup"
seed=1; args=("$@"); for ((i = 0; i < ${#args[@]}; i++)); do [[ "${args[i]}" == --seed ]] && seed="${args[i+1]}"; done
cargo run -q --release -p simdup-bench --example quality_pairs -- pool \
  --zh "$BENCH_DIR/data/zh_news.jsonl" --en "$BENCH_DIR/data/en_news.jsonl" --out "$DIR" --seed "$seed"

step "score: Python recipes"
"$BENCH_DIR/.venv/bin/python" "$BENCH_DIR/quality_py.py" "$DIR"

step "report"
"$BENCH_DIR/.venv/bin/python" "$BENCH_DIR/quality_report.py" "$DIR" --out "$REPORT"
echo "$REPORT"

step "dedup by similarity with the containment rule (bench/containment_eval.py)"
python3 "$BENCH_DIR/containment_eval.py" "$DIR" >"${REPORT%.md}_containment.md"
echo "${REPORT%.md}_containment.md"

[ "${PYDOC:-1}" = 1 ] || exit 0
PDIR="${QUALITY_PYDOC_DIR:-$BENCH_DIR/data/quality_pydoc}"
PREPORT="${QUALITY_PYDOC_REPORT:-$BENCH_DIR/data/results/quality_pydoc.md}"
step "Python documentation (Debian python3.11-doc): export, score, pool, Python recipes, report"
"$BENCH_DIR/fetch_pydoc.sh"
cargo run -q --release -p simdup-bench --example quality_pairs -- export --en "$BENCH_DIR/data/en_pydoc.jsonl" --out "$PDIR" "$@"
cargo run -q --release -p simdup-bench --example quality_pairs -- score --dir "$PDIR"
cargo run -q --release -p simdup-bench --example quality_pairs -- pool --en "$BENCH_DIR/data/en_pydoc.jsonl" --out "$PDIR" --seed "$seed"
"$BENCH_DIR/.venv/bin/python" "$BENCH_DIR/quality_py.py" "$PDIR"
"$BENCH_DIR/.venv/bin/python" "$BENCH_DIR/quality_report.py" "$PDIR" --out "$PREPORT"
echo "$PREPORT"
