#!/usr/bin/env bash
# Precision of dedup by similarity on real documents, judged pair by pair: the demo's corpus
# (bench/data/zh_news.jsonl + en_news.jsonl, 7,632 real articles; bench/fetch/news.sh) is loaded
# by one COPY into a table with simdup_enable_similar(news, body, on_duplicate => 'mark') at its
# defaults (threshold 0.5, containment 0.8), and every marked row is judged against its dup_of:
#
# - a pair whose Jaccard similarity reaches the threshold is a near-duplicate by the table's own
#   definition (rule 1; what a threshold of 0.5 keeps or drops is the user's choice of threshold);
# - a pair below it was marked by the containment or the short-text rule, and is looked up in
#   bench/quality/judged/demo_marked.tsv, a judgement of each such pair read by a person (id,
#   dup_of, dup or not, the kind of pair, why). A marked pair missing there is printed as
#   unjudged and fails the run: judge it and add it.
#
# Prints the marked rows, those judged not near-duplicates by kind, and the precision.
#
#   bench/quality/marked_precision.sh
#   SIMDUP_BENCH_CONTAINMENT=NULL bench/quality/marked_precision.sh   # containment => NULL (or a threshold)
#
# Runs on its own throwaway cluster "<SIMDUP_CLUSTER>-markedprecision" (bench/common.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
JUDGED="$BENCH/quality/judged/demo_marked.tsv"
CONTAINMENT="${SIMDUP_BENCH_CONTAINMENT:-}"
[[ -z "$CONTAINMENT" || "$CONTAINMENT" == NULL || "$CONTAINMENT" =~ ^[0-9.]+$ ]] || { echo "SIMDUP_BENCH_CONTAINMENT is NULL or a number" >&2; exit 2; }
bench/fetch/news.sh >/dev/null
bench_cluster markedprecision
bench_workdir markedprecision
bench_db
banner "marked rows of dedup by similarity on the demo corpus, judged (containment ${CONTAINMENT:-default})"

python3 - "$DATA/zh_news.jsonl" "$DATA/en_news.jsonl" >"$WORK/news.csv" <<'PY'
import csv, json, sys
w = csv.writer(sys.stdout)
for path in sys.argv[1:]:
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        w.writerow([d["id"], d["body"]])
PY
cp "$JUDGED" "$WORK/judged.tsv"
db <<SQL
CREATE TABLE news (id text PRIMARY KEY, body text NOT NULL);
SELECT index FROM simdup_enable_similar('news', 'body', on_duplicate => 'mark'${CONTAINMENT:+, containment => $CONTAINMENT}) \g /dev/null
\copy news (id, body) FROM '$WORK/news.csv' WITH (FORMAT csv)
CREATE TABLE judged (id text, dup_of text, judgement text, class text, note text);
\copy judged FROM '$WORK/judged.tsv' WITH (FORMAT csv, DELIMITER E'\t', HEADER true)
CREATE TABLE marked AS
SELECT n.id, n.dup_of, jaccard(n.body, d.body) AS j, j.judgement, j.class
FROM news n JOIN news d ON d.id = n.dup_of
LEFT JOIN judged j ON j.id = n.id AND j.dup_of = n.dup_of;
\echo 'marked rows below the threshold that the judgement file does not hold (unjudged):'
SELECT id, dup_of, round(j::numeric, 3) AS jaccard FROM marked WHERE j < 0.5 AND judgement IS NULL ORDER BY id;
\echo 'judged not near-duplicates, by kind:'
SELECT class, count(*) FROM marked WHERE j < 0.5 AND judgement = 'not' GROUP BY class ORDER BY 2 DESC, 1;
SELECT count(*) AS rows, count(*) FILTER (WHERE j >= 0.5) AS marked_by_jaccard,
       count(*) FILTER (WHERE j < 0.5) AS marked_below_threshold,
       count(*) FILTER (WHERE j < 0.5 AND judgement = 'not') AS not_near_duplicates,
       round(1 - count(*) FILTER (WHERE j < 0.5 AND judgement = 'not')::numeric / nullif(count(*), 0), 4) AS precision
FROM marked;
SQL
unjudged=$(db -At -c "SELECT count(*) FROM marked WHERE j < 0.5 AND judgement IS NULL")
[ "$unjudged" = 0 ] || { echo "$unjudged marked pairs are not judged in $JUDGED" >&2; exit 1; }
