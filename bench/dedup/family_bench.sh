#!/usr/bin/env bash
# What one insert costs the similarity dedup trigger when the table holds a family of texts that
# share a long common part and stay under the thresholds (a site's long footer, a template, or a
# writer who builds such a family on purpose): every family row shares LSH bands with the new
# one and is verified.
#
#   bench/dedup/family_bench.sh [F ...]        # default: 1000 10000
#
# Texts: windows of the real Chinese news of bench/data/zh_news.jsonl (bench/fetch/news.sh), the
# bodies joined. The common part is the first SIMDUP_BENCH_CORE (450) characters; family row i
# is the common part followed by its own window of SIMDUP_BENCH_OWN (300) characters, windows
# taken one after the other (skipping repeated and repetitive passages), so two family rows have
# Jaccard about 0.42 and containment about 0.6 under the defaults (5-character shingles;
# threshold 0.5, containment 0.8): no row is a near-duplicate of another (`mark` mode counts the
# inserts it marked: 0 expected).
#
# The table: fam (id bigserial PRIMARY KEY, body text) with
# simdup_enable_similar('fam', 'body', 0.5, on_duplicate => 'mark') (which adds dup_of). For each F the table is
# filled with F family rows with the trigger disabled (the similarity and containment indexes
# are maintained), vacuumed and analyzed. Then three kinds of single-row insert, each timed in
# the server and rolled back, SIMDUP_BENCH_INSERTS (20) of each, interleaved:
#
#   family     a new family row (its own window never stored);
#   unrelated  a further window of SIMDUP_BENCH_CORE + SIMDUP_BENCH_OWN characters;
#   plain      the new family row with the trigger disabled.
#
# Reported: the medians in ms, family / unrelated, and how many stored rows share a band with
# the family insert (counted with `_simdup_similar_bands` / `&&` by a sequential scan): its
# candidates, of which the trigger verifies at most simdup.similar_verify_limit (64 by default;
# docs/dedup.md, "the verification limit"). Every candidate verified, as up to 0.3.0:
#
#   PGOPTIONS='-c simdup.similar_verify_limit=0' bench/dedup/family_bench.sh
# Its own throwaway cluster "<SIMDUP_CLUSTER>-family" (bench/common.sh: bench_cluster).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
SIZES="${*:-1000 10000}"
INSERTS="${SIMDUP_BENCH_INSERTS:-20}"
CORE="${SIMDUP_BENCH_CORE:-450}"
OWN="${SIMDUP_BENCH_OWN:-300}"
[ -f "$DATA/zh_news.jsonl" ] || { echo "no $DATA/zh_news.jsonl: run bench/fetch/news.sh" >&2; exit 1; }
bench_workdir family
max=0; for f in $SIZES; do [ "$f" -gt "$max" ] && max=$f; done
# The texts: kind, n, body (TSV). Family rows 1..max are stored, max+1..max+INSERTS inserted;
# the unrelated windows come from the corpus's far end.
python3 - "$DATA/zh_news.jsonl" "$max" "$INSERTS" "$CORE" "$OWN" "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)" > "$WORK/texts.tsv" <<'PY'
import sys
path, stored, inserts, core, own = sys.argv[1], *map(int, sys.argv[2:6])
sys.path.insert(0, sys.argv[6])
from windows import Windows
corpus = Windows(path, core)
for i, w in enumerate(corpus.take(own, stored + inserts), 1):
    print(f"family\t{i}\t{corpus.common}{w}")
for i, w in enumerate(corpus.take(core + own, inserts), 1):
    print(f"unrelated\t{i}\t{w}")
PY
bench_cluster family
bench_db
banner "similarity dedup inserts beside a family of near-threshold texts: F = $SIZES, $INSERTS inserts of each kind"
db <<SQL
CREATE TABLE texts (kind text, n int, body text, PRIMARY KEY (kind, n));
\copy texts FROM '$WORK/texts.tsv'
ANALYZE texts;
CREATE TABLE fam (id bigserial PRIMARY KEY, body text);
SELECT simdup_enable_similar('fam', 'body', 0.5, on_duplicate => 'mark') IS NOT NULL AS enabled;
SQL
echo "simdup.similar_verify_limit = $(db -At -c "LOAD 'simdup'" -c 'SHOW simdup.similar_verify_limit') (0: every candidate verified; PGOPTIONS='-c simdup.similar_verify_limit=0' sets it)"
echo "simdup $(db -At -c "SELECT extversion FROM pg_extension WHERE extname = 'simdup'"), $(db -At -c 'SHOW server_version'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src core sql || echo ' + uncommitted changes')"
db -At -c "SELECT format('two family rows: jaccard %s, containment of one in the other by 5-shingles %s',
  round(jaccard(a.body, b.body)::numeric, 3), round((SELECT count(*) FROM (SELECT unnest(shingles(a.body, 5)) INTERSECT SELECT unnest(shingles(b.body, 5))) s)::numeric / cardinality(shingles(a.body, 5)), 3))
  FROM texts a, texts b WHERE a.kind = 'family' AND a.n = 1 AND b.kind = 'family' AND b.n = 2" 2>/dev/null || true
stored=0
out="$WORK/times"
for f in $SIZES; do
  log "filling to $f family rows"
  db -c "ALTER TABLE fam DISABLE TRIGGER simdup_dedup_similar;
         INSERT INTO fam (body) SELECT body FROM texts WHERE kind = 'family' AND n > $stored AND n <= $f ORDER BY n;
         ALTER TABLE fam ENABLE TRIGGER simdup_dedup_similar"
  db -c "VACUUM ANALYZE fam"
  stored=$f
  : > "$out"
  for i in $(seq 1 "$INSERTS"); do
    for kind in family unrelated plain; do
      src=$kind; pre=""
      [ $kind = plain ] && { src=family; pre="ALTER TABLE fam DISABLE TRIGGER simdup_dedup_similar;"; }
      n=$i; [ $src = family ] && n=$((f + i))
      ms=$(timed_rollback "$pre" "INSERT INTO fam (body) SELECT body FROM texts WHERE kind = '$src' AND n = $n" \
        "(SELECT coalesce(max(dup_of), 0) FROM fam WHERE id = currval('fam_id_seq'))")
      echo "$kind $ms" >> "$out"
    done
  done
  cand=$(db -At -c "SELECT count(*) FROM fam, (SELECT _simdup_similar_bands(body, 5, 35, 3) b FROM texts WHERE kind = 'family' AND n = $((f + 1))) q
                    WHERE _simdup_similar_bands(fam.body, 5, 35, 3) && q.b" 2>/dev/null || echo "?")
  python3 - "$out" "$f" "$cand" <<'PY'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {k: st.median(float(r[1]) for r in rows if r[0] == k) for k in ("family", "unrelated", "plain")}
marked = {k: sum(1 for r in rows if r[0] == k and len(r) > 2 and r[2] != "0") for k in ("family", "unrelated")}
print(f"F = {sys.argv[2]}: family {med['family']:.2f} ms, unrelated {med['unrelated']:.2f} ms, plain {med['plain']:.2f} ms"
      f" (medians); family / unrelated {med['family'] / med['unrelated']:.1f}x;"
      f" stored rows sharing a band with the first family insert: {sys.argv[3]}; marked: family {marked['family']}, unrelated {marked['unrelated']}")
PY
done
banner "done"
