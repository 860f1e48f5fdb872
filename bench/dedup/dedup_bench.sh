#!/usr/bin/env bash
# Insert throughput with the dedup trigger against the same table with only the fingerprint
# (generated column + block indexes, trigger disabled). The trigger searches the block indexes
# (B-trees on _simdup_key(fp, offset), SIMDUP_BENCH_BLOCKS blocks, default 4) directly, page by
# page (src/search/btree/), no SPI, no plan cache.
#
#   bench/dedup/dedup_bench.sh
#
# Documents: the 7,282 real Chinese news articles of bench/data/zh_news.jsonl (title + body,
# median ~700 characters, ~3.4 KB of UTF-8 on average; bench/fetch/news.sh downloads them;
# SIMDUP_BENCH_DATA names another directory holding zh_news.jsonl). Each measurement inserts
# SIMDUP_BENCH_DOCS (3000) of them, each once, one document per transaction
# (pgbench, -c clients, the same documents in the same order for both variants), into a table
#
#   docs (id bigserial PRIMARY KEY, body text) + simdup_enable('docs', 'body',
#                                                  on_duplicate => SIMDUP_BENCH_MODE (skip),
#                                                  blocks => SIMDUP_BENCH_BLOCKS (4))
#
# that already holds E rows, for E in SIMDUP_BENCH_EXISTING ("0 100000"; add 1000000 if you
# have time): synthetic documents of 20 random sentences of the corpus (distinct from every real
# article), loaded with the trigger disabled, then VACUUM ANALYZE. Variants: "trigger" (the
# dedup trigger enabled) and "plain" (ALTER TABLE docs DISABLE TRIGGER simdup_dedup: the
# fingerprint is still computed, the indexes still maintained). Clients: SIMDUP_BENCH_CLIENTS
# ("1 8"). SIMDUP_BENCH_REPS (3) repetitions, interleaved (plain, trigger, plain, ...); the
# inserted rows are deleted after each run and the table vacuumed before the next. Reported:
# medians of the documents/s and the ratio trigger / plain, and the table and block-index sizes
# at each E.
#
# SIMDUP_BENCH_LOAD=N (0) adds a bulk load after the last E: N new documents (nine in ten new
# synthetic ones, one in ten a stored row's text) written by one INSERT ... SELECT, with the
# trigger disabled ("plain"), enabled ("trigger": the INSERT read ahead, its texts fingerprinted
# on simdup.batch_threads threads and checked by one pair join, simdup.bulk_check = auto), and
# enabled with the rows from a function estimated at one row ("set": not read ahead, the bulk
# check's copy in memory), and enabled with the same rows sent by `COPY docs (body) FROM stdin`
# ("copy": batches of simdup.copy_batch_memory, each batch's texts fingerprinted while the one
# before it is written), SIMDUP_BENCH_LOAD_REPS (SIMDUP_BENCH_REPS) times interleaved, the rows
# deleted and the table vacuumed after each; medians in seconds.
#
# SIMDUP_BENCH_TEXT=title inserts the corpus's 7,281 news titles (24 characters on average)
# instead of its articles, into tables whose existing rows are the first 15 to 40 characters of
# one random sentence each: short texts, where the similarity trigger's short-text rule and
# index work (SIMDUP_BENCH_DOCS up to 7,281).
#
# SIMDUP_BENCH_SIMILAR=1 adds dedup by verified similarity side by side: a second table sdocs
# with the same rows and simdup_enable_similar('sdocs', 'body', SIMDUP_BENCH_THRESHOLD (0.5),
# on_duplicate => SIMDUP_BENCH_MODE), variants "similar" (its trigger enabled) and
# "similar-plain" (disabled: the GIN index still maintained), in the same interleaved runs.
# sdocs has the default containment rule (0.8) and its containment index. SIMDUP_BENCH_SIMILAR=2
# adds a third table jdocs, the same with containment => NULL (Jaccard and the short-text rule
# only, no containment index), variant "similar-jaccard" (its trigger enabled): what the
# containment rule costs an insert.
#
# skip rather than reject: pgbench stops a client at its first error, and the real corpus has
# reposts; a rejected insert does the same work as a skipped one. synchronous_commit = off, so
# that the figures show the CPU cost of the trigger rather than the disk's flush latency.
#
# Runs on its own throwaway cluster "<SIMDUP_CLUSTER>-dedupbench" (bench/common.sh:
# bench_cluster).
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
EXISTING="${SIMDUP_BENCH_EXISTING:-0 100000}"
CLIENTS="${SIMDUP_BENCH_CLIENTS:-1 8}"
DOCS="${SIMDUP_BENCH_DOCS:-3000}"
REPS="${SIMDUP_BENCH_REPS:-3}"
MODE="${SIMDUP_BENCH_MODE:-skip}"
case "${SIMDUP_BENCH_TEXT:-article}" in
  article) TEXT_TABLE=raw SENTENCES=20 CLIP=1000000000 ;;
  title) TEXT_TABLE=titles SENTENCES=1 CLIP="15 + p.g % 26" ;;
  *) echo "SIMDUP_BENCH_TEXT is article or title" >&2; exit 2 ;;
esac
BLOCKS="${SIMDUP_BENCH_BLOCKS:-4}"
SIMILAR="${SIMDUP_BENCH_SIMILAR:-0}"
THRESHOLD="${SIMDUP_BENCH_THRESHOLD:-0.5}"
LOAD="${SIMDUP_BENCH_LOAD:-0}"
LOAD_REPS="${SIMDUP_BENCH_LOAD_REPS:-$REPS}"
variants="plain trigger"
[ "$SIMILAR" = 1 ] && variants="plain trigger similar-plain similar"
[ "$SIMILAR" = 2 ] && variants="plain trigger similar-plain similar similar-jaccard"
[ -f "$DATA/zh_news.jsonl" ] || { echo "no $DATA/zh_news.jsonl: run bench/fetch/news.sh (or set SIMDUP_BENCH_DATA)" >&2; exit 1; }

PG_EXTRA_OPTS="-c shared_buffers=${SIMDUP_BENCH_SHARED_BUFFERS:-1GB} -c max_wal_size=8GB -c checkpoint_timeout=30min -c synchronous_commit=off -c shared_preload_libraries=simdup" \
  bench_cluster dedupbench
bench_workdir dedupbench
bench_db
banner "simdup dedup insert benchmark: mode $MODE, $BLOCKS blocks, $DOCS documents a run"

python3 - "$DATA/zh_news.jsonl" "$WORK/titles.tsv" <<'PY' >"$WORK/zh.tsv"
import json, sys
esc = lambda s: s.replace("\\", "\\\\").replace("\t", " ").replace("\n", "\\n").replace("\r", " ")
with open(sys.argv[2], "w", encoding="utf-8") as titles:
    for line in open(sys.argv[1], encoding="utf-8"):
        d = json.loads(line)
        print(esc((d.get("title") or "") + "\n" + (d.get("body") or "")))
        if (d.get("title") or "").strip():
            print(esc(d["title"].strip()), file=titles)
PY
db <<SQL
CREATE TABLE raw (body text);
\copy raw FROM '$WORK/zh.tsv'
CREATE TABLE titles (body text);
\copy titles FROM '$WORK/titles.tsv'
SELECT setseed(0.5) \g /dev/null
CREATE TABLE src AS SELECT (row_number() OVER (ORDER BY random()) - 1)::int AS n, body FROM $TEXT_TABLE;
ALTER TABLE src ADD PRIMARY KEY (n);
CREATE TABLE sentences AS
SELECT row_number() OVER ()::int AS i, s FROM raw, regexp_split_to_table(body, '(?<=[。！？])') s WHERE length(s) > 8;
ALTER TABLE sentences ADD PRIMARY KEY (i);
-- n synthetic documents: 20 random sentences of the corpus each (titles: the first 15 to 40
-- characters of one).
CREATE FUNCTION synthetic(n int) RETURNS SETOF text LANGUAGE sql AS \$\$
  SELECT string_agg(left(t.s, $CLIP), '' ORDER BY p.j)
  FROM (SELECT g, j, 1 + floor(random() * (SELECT count(*) FROM sentences))::int AS i
        FROM generate_series(1, n) g, generate_series(1, $SENTENCES) j) p
  JOIN sentences t USING (i) GROUP BY p.g
\$\$;
CREATE SEQUENCE ctr MINVALUE 0 START 0;
CREATE TABLE docs (id bigserial PRIMARY KEY, body text);
SELECT simdup_enable('docs', 'body', on_duplicate => '$MODE', blocks => $BLOCKS);
CREATE TABLE sdocs (id bigserial PRIMARY KEY, body text);
SELECT index, bands, rows FROM simdup_enable_similar('sdocs', 'body', $THRESHOLD, on_duplicate => '$MODE') WHERE $SIMILAR >= 1;
CREATE TABLE jdocs (id bigserial PRIMARY KEY, body text);
SELECT index, bands, rows FROM simdup_enable_similar('jdocs', 'body', $THRESHOLD, on_duplicate => '$MODE', containment => NULL) WHERE $SIMILAR = 2;
SELECT 'simdup ' || extversion FROM pg_extension WHERE extname = 'simdup';
SELECT format('%s documents, %s characters on average; %s sentences for the synthetic rows',
              count(*), round(avg(length(body))), (SELECT count(*) FROM sentences)) FROM src;
SQL
ndocs=$(db -At -c "SELECT count(*) FROM src")
[ "$DOCS" -le "$ndocs" ] || { echo "SIMDUP_BENCH_DOCS=$DOCS > $ndocs documents" >&2; exit 1; }

cat >"$WORK/insert.sql" <<'SQL'
SELECT nextval('ctr') AS n \gset
INSERT INTO :tbl (body) SELECT body FROM src WHERE n = :n;
SQL

results="$WORK/results"; : >"$results"
have=0
for e in $EXISTING; do
  if [ "$e" -gt "$have" ]; then
    echo "-- loading $((e - have)) synthetic existing rows (trigger disabled)"
    db <<SQL
ALTER TABLE docs DISABLE TRIGGER simdup_dedup;
-- Seeded: the same synthetic rows in every run, so that runs of two builds store the same rows.
SELECT setseed(0.75) \g /dev/null
\timing on
INSERT INTO docs (body) SELECT synthetic($((e - have)));
\timing off
ALTER TABLE docs ENABLE TRIGGER simdup_dedup;
VACUUM ANALYZE docs;
SQL
    similar_tables=""
    [ "$SIMILAR" -ge 1 ] && similar_tables="sdocs"
    [ "$SIMILAR" = 2 ] && similar_tables="sdocs jdocs"
    for st in $similar_tables; do
      db <<SQL
ALTER TABLE $st DISABLE TRIGGER simdup_dedup_similar;
INSERT INTO $st (id, body) SELECT id, body FROM docs WHERE id > (SELECT coalesce(max(id), 0) FROM $st);
SELECT setval('${st}_id_seq', (SELECT max(id) FROM $st));
ALTER TABLE $st ENABLE TRIGGER simdup_dedup_similar;
VACUUM ANALYZE $st;
SQL
    done
    have=$e
  fi
  db -At -c "SELECT format('existing=%s: table %s, block indexes %s (%s x the table)', $e, pg_size_pretty(pg_table_size('docs')),
                 pg_size_pretty(sum(pg_relation_size(b.index))), round(sum(pg_relation_size(b.index)) / pg_table_size('docs')::numeric, 2))
               FROM simdup_block_indexes('docs') b"
  base=$(db -At -c "SELECT coalesce(max(id), 0) FROM docs")
  for c in $CLIENTS; do
    per=$((DOCS / c))
    for rep in $(seq 1 "$REPS"); do
      for variant in $variants; do
        case "$variant" in
          plain) tbl=docs trigger=simdup_dedup on=DISABLE ;;
          trigger) tbl=docs trigger=simdup_dedup on=ENABLE ;;
          similar-plain) tbl=sdocs trigger=simdup_dedup_similar on=DISABLE ;;
          similar) tbl=sdocs trigger=simdup_dedup_similar on=ENABLE ;;
          similar-jaccard) tbl=jdocs trigger=simdup_dedup_similar on=ENABLE ;;
        esac
        db <<SQL
VACUUM ANALYZE $tbl;
ALTER SEQUENCE ctr RESTART;
ALTER TABLE $tbl $on TRIGGER $trigger;
SQL
        tps=$("$PG_BIN/pgbench" -n -h "$SOCK" -p "$port" -U postgres -c "$c" -j "$c" -t "$per" -D tbl="$tbl" -f "$WORK/insert.sql" bench 2>&1 \
              | sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p')
        stored=$(db -At -c "SELECT count(*) FROM $tbl WHERE id > $base")
        db -c "DELETE FROM $tbl WHERE id > $base"
        echo "existing=$e clients=$c rep=$rep $variant: $tps docs/s ($stored of $((per * c)) stored)"
        echo "$e $c $variant $tps" >>"$results"
      done
    done
  done
done
db -c "ALTER TABLE docs ENABLE TRIGGER simdup_dedup"

if [ "$LOAD" -gt 0 ]; then
  # The bulk load: LOAD new documents (nine in ten new synthetic ones, one in ten a copy of a
  # stored row's text, shuffled) written by one INSERT ... SELECT into the table as it is after
  # the last E, with the trigger disabled ("plain": fingerprints and indexes only) and enabled
  # (the trigger, with its bulk check at the default simdup.bulk_check = auto), interleaved.
  echo "-- bulk load: $LOAD documents by one INSERT ... SELECT, $LOAD_REPS repetitions"
  db <<SQL
SELECT setseed(0.25) \g /dev/null
CREATE TABLE newdocs AS
SELECT row_number() OVER (ORDER BY random())::int AS n, body FROM (
  SELECT synthetic($LOAD - $LOAD / 10) AS body
  UNION ALL
  (SELECT body FROM docs ORDER BY random() LIMIT $LOAD / 10)) x;
VACUUM ANALYZE newdocs;
\copy (SELECT body FROM newdocs ORDER BY n) TO '$WORK/newdocs.tsv'
CREATE FUNCTION newdocs_unestimated() RETURNS SETOF text LANGUAGE plpgsql ROWS 1 AS \$\$
BEGIN
    RETURN QUERY SELECT body FROM newdocs ORDER BY n;
END
\$\$;
SQL
  base=$(db -At -c "SELECT coalesce(max(id), 0) FROM docs")
  for rep in $(seq 1 "$LOAD_REPS"); do
    for variant in plain trigger set copy; do
      on=$([ "$variant" = plain ] && echo DISABLE || echo ENABLE)
      load="INSERT INTO docs (body) SELECT body FROM newdocs ORDER BY n;"
      [ "$variant" = set ] && load="INSERT INTO docs (body) SELECT * FROM newdocs_unestimated();"
      [ "$variant" = copy ] && load="\\copy docs (body) FROM '$WORK/newdocs.tsv'"
      db -c "ALTER TABLE docs $on TRIGGER simdup_dedup" -c "CHECKPOINT"
      ms=$(db -At <<SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
\timing on
$load
SQL
)
      stored=$(db -At -c "SELECT count(*) FROM docs WHERE id > $base")
      db -c "DELETE FROM docs WHERE id > $base" -c "VACUUM docs"
      echo "bulk load rep=$rep $variant: $ms ms ($stored of $LOAD stored)"
      echo "$variant $ms" >>"$WORK/load"
    done
  done
  db -c "ALTER TABLE docs ENABLE TRIGGER simdup_dedup"
  echo "== bulk load of $LOAD documents into $(db -At -c "SELECT count(*) FROM docs") stored, medians of $LOAD_REPS"
  db <<SQL
CREATE TEMP TABLE l (variant text, ms float8);
\copy l FROM '$WORK/load' WITH (DELIMITER ' ')
SELECT round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'plain') / 1000)::numeric, 1) AS "plain s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'trigger') / 1000)::numeric, 1) AS "trigger s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'trigger')
            / percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'plain'))::numeric, 2) AS "trigger / plain",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'set') / 1000)::numeric, 1) AS "set s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'set')
            / percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'plain'))::numeric, 2) AS "set / plain",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'copy') / 1000)::numeric, 1) AS "copy s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'copy')
            / percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FILTER (WHERE variant = 'plain'))::numeric, 2) AS "copy / plain"
FROM l;
SQL
fi

echo
echo "== medians of $REPS (documents/s; one document per transaction; mode $MODE)"
db <<SQL
CREATE TEMP TABLE r (existing int, clients int, variant text, tps float8);
\copy r FROM '$results' WITH (DELIMITER ' ')
SELECT existing, clients,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'plain')) AS "plain docs/s",
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'trigger')) AS "trigger docs/s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'trigger')
            / percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'plain'))::numeric, 2) AS "trigger / plain",
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'similar-plain')) AS "similar-plain docs/s",
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'similar')) AS "similar docs/s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'similar')
            / percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'trigger'))::numeric, 2) AS "similar / trigger",
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'similar-jaccard')) AS "similar-jaccard docs/s",
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'similar')
            / percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) FILTER (WHERE variant = 'similar-jaccard'))::numeric, 2) AS "similar / similar-jaccard"
FROM r GROUP BY existing, clients ORDER BY existing, clients;
SQL
