#!/usr/bin/env bash
# The near-duplicate quality benchmark, everything in one go (docs/quality.md):
#   1. corpora (bench/fetch/news.sh) and the Python baselines' venv (bench/python/setup_venv.sh);
#   2. labelled pairs from real news, exported once: quality_pairs export -> texts.jsonl, pairs.jsonl;
#   3. simdup's schemes and variants score them (quality_pairs score -> scores_simdup.tsv), and
#      count false positives among all pairs of each length bucket's corpus pool (quality_pairs
#      pool -> pool_fpr.tsv);
#   4. the Python recipes score the same pairs (jieba + simhash, datasketch MinHash ->
#      scores_python.tsv);
#   5. bench/quality/quality_report.py writes bench/data/results/quality.md, and
#      bench/quality/containment_eval.py the similarity trigger's rules with containment
#      (bench/data/results/quality_containment.md);
#   6. the same for a corpus no other measurement uses, the prose of the Python 3.11 documentation
#      (Debian package python3.11-doc, bench/fetch/pydoc.sh), as English only:
#      bench/data/quality_pydoc/ and bench/data/results/quality_pydoc.md (PYDOC=0 skips it).
# Usage: bench/quality/quality.sh [--per-bucket N] [--hard H] [--random R] [--seed S]
#   defaults 200 / 4 / 0 (= all pairs of subjects) / 1 (about 5 minutes on 2 busy cores);
#   --per-bucket 30 for a quick look.
# Output: bench/data/quality/ and the report (QUALITY_DIR=..., QUALITY_REPORT=... to change);
# CARGO_TARGET_DIR is honoured.
BENCH_PG=0 . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
DIR="${QUALITY_DIR:-$DATA/quality}"
REPORT="${QUALITY_REPORT:-$DATA/results/quality.md}"
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

step "corpora and Python venv"
bench/fetch/news.sh >/dev/null
bench/python/setup_venv.sh >/dev/null

step "export pairs"
cargo run -q --release -p simdup-bench --example quality_pairs -- export \
  --zh "$DATA/zh_news.jsonl" --en "$DATA/en_news.jsonl" --out "$DIR" "$@"

step "score: simdup"
cargo run -q --release -p simdup-bench --example quality_pairs -- score --dir "$DIR"

step "all pairs of the corpus pools: simdup"
seed=1; args=("$@"); for ((i = 0; i < ${#args[@]}; i++)); do [[ "${args[i]}" == --seed ]] && seed="${args[i+1]}"; done
cargo run -q --release -p simdup-bench --example quality_pairs -- pool \
  --zh "$DATA/zh_news.jsonl" --en "$DATA/en_news.jsonl" --out "$DIR" --seed "$seed"

step "score: Python recipes"
"$BENCH/.venv/bin/python" bench/quality/quality_py.py "$DIR"

step "report"
"$BENCH/.venv/bin/python" bench/quality/quality_report.py "$DIR" --out "$REPORT"
echo "$REPORT"

step "dedup by similarity with the containment rule (bench/quality/containment_eval.py)"
python3 bench/quality/containment_eval.py "$DIR" >"${REPORT%.md}_containment.md"
echo "${REPORT%.md}_containment.md"

[ "${PYDOC:-1}" = 1 ] || exit 0
PDIR="${QUALITY_PYDOC_DIR:-$DATA/quality_pydoc}"
PREPORT="${QUALITY_PYDOC_REPORT:-$DATA/results/quality_pydoc.md}"
step "Python documentation (Debian python3.11-doc): export, score, pool, Python recipes, report"
bench/fetch/pydoc.sh
cargo run -q --release -p simdup-bench --example quality_pairs -- export --en "$DATA/en_pydoc.jsonl" --out "$PDIR" "$@"
cargo run -q --release -p simdup-bench --example quality_pairs -- score --dir "$PDIR"
cargo run -q --release -p simdup-bench --example quality_pairs -- pool --en "$DATA/en_pydoc.jsonl" --out "$PDIR" --seed "$seed"
"$BENCH/.venv/bin/python" bench/quality/quality_py.py "$PDIR"
"$BENCH/.venv/bin/python" bench/quality/quality_report.py "$PDIR" --out "$PREPORT"
echo "$PREPORT"
