#!/usr/bin/env bash
# Checks bench/quality/quality_py.py's pg_trgm similarity against PostgreSQL's own pg_trgm on
# the pairs of a quality run: loads the texts of N pairs (every kind, both languages) into a
# throwaway cluster (UTF-8, locale C.UTF-8, as scripts/cluster.sh makes it), computes
# similarity(a, b) there, and compares it with the pg_trgm column of DIR/scores_python.tsv.
#   bench/quality/check_trgm.sh [DIR] [N]     (default bench/data/quality, 3000 pairs)
# Prints the number of pairs compared, how many differ by more than 1e-4 and the largest
# difference. Its own throwaway cluster "<SIMDUP_CLUSTER>-trgm" (bench/common.sh: bench_cluster).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
dir=${1:-$DATA/quality}
n=${2:-3000}
SIMDUP_BENCH_NO_INSTALL=1 bench_cluster trgm   # PostgreSQL's pg_trgm only: no simdup
sql() { psql -At -d postgres "$@"; }
sql -c "CREATE EXTENSION pg_trgm; CREATE TABLE p (id text, a text, b text, py float8);"
python3 - "$dir" "$n" <<'PY' | sql -c "\copy p FROM STDIN WITH (FORMAT csv)"
import csv, json, random, sys
d, n = sys.argv[1], int(sys.argv[2])
texts = {}
for l in open(f"{d}/texts.jsonl", encoding="utf-8"):
    t = json.loads(l)
    texts[t["id"]] = t["body"]
py = {}
with open(f"{d}/scores_python.tsv", encoding="utf-8") as f:
    for r in csv.DictReader(f, delimiter="\t"):
        py[r["pair"]] = r["pg_trgm"]
pairs = [json.loads(l) for l in open(f"{d}/pairs.jsonl", encoding="utf-8")]
random.Random(1).shuffle(pairs)
w = csv.writer(sys.stdout)
for p in pairs[:n]:
    w.writerow([p["id"], texts[p["a"]], texts[p["b"]], py[p["id"]]])
PY
sql -c "SELECT count(*) AS pairs, count(*) FILTER (WHERE abs(similarity(a, b) - py) > 1e-4) AS differ,
  round(max(abs(similarity(a, b) - py))::numeric, 6) AS max_diff FROM p" -F ' ' | sed 's/^/pairs, differing by > 1e-4, largest difference: /'
sql -F ' ' -c "SELECT id, round(similarity(a, b)::numeric, 4) AS pg, py FROM p
  WHERE abs(similarity(a, b) - py) > 1e-4 ORDER BY abs(similarity(a, b) - py) DESC LIMIT 5" | sed 's/^/largest: /'
