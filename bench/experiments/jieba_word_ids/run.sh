#!/usr/bin/env bash
# Experiment (issue #7, 2026-11-22): would jieba-rs word ids bring the core fingerprint to 0.8x
# of raw jieba-rs segmentation? Not part of simdup; kept so that the answer can be checked.
#
#   bench/experiments/jieba_word_ids/run.sh [ROUNDS]     (default 4; ~5 minutes with builds)
#
# jieba-rs 0.11.0 looks every dictionary word up while it segments, but does not say which word
# it found. jieba-rs-0.11.0.patch adds `Jieba::cut_with_ids` (each word with its dictionary id,
# from the private `cut_each` the crate already has), `word_id` and `word_count`.
# simdup-core.patch (against core/ at commit $BASE) builds, once, a table per dictionary id of
# what simdup computes per token (the feature filter, the xxh3 hash, the IDF), so that a word
# with an id costs one array read instead of a filter, a hash and an IDF probe; the IDF rides in
# the tally slot. Words without an id take the usual path. Fingerprints are unchanged: the
# patched core passes simdup-core's tests (golden vectors, and the property test of the hot path
# against the plain one), which this script runs.
#
# (The builds are of the tree at $BASE, where the benchmarks were still examples of simdup-core;
# hence `-p simdup-core --example throughput` below. Today's are in bench/rust.)
# Three builds of core/examples/throughput.rs, each timing raw jieba-rs `cut` and simhash over the
# same documents (bench/data/zh_news.jsonl) in one process, alternated ROUNDS times:
#   base   simdup at $BASE
#   ids    with word ids
#   free   with word ids and SIMDUP_FREE_LOOKUPS=1: a word with an id costs no memory access at
#          all (hash = id x constant, IDF 1): wrong fingerprints, a bound on what any lookup
#          scheme keyed by word ids could give.
# Prints the median ratio simhash / raw jieba-rs of each. Needs the git history back to $BASE
# (not a shallow clone) and the corpus of bench/fetch_data.sh (fetched if missing).
set -euo pipefail
BASE=c1f45fa
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
rounds=${1:-4}
data="$root/bench/data/zh_news.jsonl"
"$root/bench/fetch_data.sh" >/dev/null
work="$(mktemp -d /tmp/simdup-wordids.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# jieba-rs 0.11.0 as cargo fetched it, patched.
(cd "$root" && cargo fetch -q)
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/jieba-rs-0.11.0 | head -1)
cp -r "$src" "$work/jieba-rs"
patch -s -d "$work/jieba-rs" -p1 <"$here/jieba-rs-0.11.0.patch"

# simdup at BASE, as is and patched to use the ids.
for v in base ids; do
  mkdir "$work/$v"
  git -C "$root" archive "$BASE" | tar -x -C "$work/$v"
done
patch -s -d "$work/ids" -p1 <"$here/simdup-core.patch"
printf '\n[patch.crates-io]\njieba-rs = { path = "%s" }\n' "$work/jieba-rs" >>"$work/ids/Cargo.toml"
export SIMDUP_JIEBA_DICT="$work/jieba-rs/src/data/dict.txt"

echo "== simdup-core's tests with word ids (fingerprints must not change)" >&2
(cd "$work/ids" && CARGO_TARGET_DIR="$work/target-ids" cargo test -q --release -p simdup-core 2>&1 | grep -E "^test result|FAILED|panicked" >&2)
for v in base ids; do
  (cd "$work/$v" && CARGO_TARGET_DIR="$work/target-$v" cargo build -q --release -p simdup-core --example throughput)
done

run() { # VARIANT BINARY [ENV...]
  local v=$1 bin=$2; shift 2
  env "$@" "$bin" "$data" 3 | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sys.argv[1], d["jieba_cut_mb_s"], d["simhash_mb_s"], d["ratio"])' "$v"
}
out="$work/rounds"
for r in $(seq "$rounds"); do
  run base "$work/target-base/release/examples/throughput" | tee -a "$out" >&2
  run ids "$work/target-ids/release/examples/throughput" | tee -a "$out" >&2
  run free "$work/target-ids/release/examples/throughput" SIMDUP_FREE_LOOKUPS=1 | tee -a "$out" >&2
done
python3 - "$out" "$rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"| variant ({sys.argv[2]} alternating rounds, each the median of 3 passes) | raw jieba-rs MB/s | simhash MB/s | simhash / raw jieba-rs (median) |")
print("| --- | ---: | ---: | ---: |")
for v in ("base", "ids", "free"):
    r = [x for x in rows if x[0] == v]
    med = lambda i: statistics.median(float(x[i]) for x in r)
    print(f"| {v} | {med(1):.1f} | {med(2):.1f} | {med(3):.3f} |")
PY
