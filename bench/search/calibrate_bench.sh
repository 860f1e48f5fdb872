#!/usr/bin/env bash
# Benchmark of simdup_calibrate: its running time at a sample of n rows, side by side with the
# unit it is made of (one k = radius lookup per sampled row), and its sampling error against
# the table's known near-duplicates.
#
#   bench/search/calibrate_bench.sh [N]      (default N = 1000000 random fingerprints)
#
# SimHash: a narrow table of N random 64-bit fingerprints plus the fingerprints of the real news
# of bench/data/{zh,en}_news.jsonl (bench/fetch/news.sh) and two edited copies of each (last
# sentence dropped, first tenth dropped): the rows with a near-duplicate are those 3 × 7,6xx.
# Similarity: the news texts and the same two edited copies (about 23,000 rows) with
# simdup_enable_similar's index.
# Each of SIMDUP_BENCH_RUNS (default 3) runs times simdup_calibrate at sample = 1,000 and 10,000
# (radius 12) and 200 single lookups `hamming(fp, q) <= 12` of sampled rows; the medians are
# printed at the end.
#
# Runs on its own throwaway cluster "<SIMDUP_CLUSTER>-calibrate" (bench/common.sh: bench_cluster).
N="${1:-1000000}"
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
RUNS="${SIMDUP_BENCH_RUNS:-3}"
PG_EXTRA_OPTS="-c shared_buffers=${SIMDUP_BENCH_SHARED_BUFFERS:-1GB} -c max_wal_size=8GB" bench_cluster calibrate
bench_db
banner "simdup_calibrate benchmark: N = $N random fingerprints"
versions
news_table "$N"
db <<SQL
SELECT simdup_enable_similar('texts', 'body') IS NOT NULL AS similarity_index;
VACUUM ANALYZE texts;
-- What a full computation would flag at the suggested k is not computed (1M lookups); the rows
-- with a planted near-duplicate are the text rows, whose copies are a few bits away.
CREATE TABLE timings (run int, what text, ms float8, flagged text);
SQL

for run in $(seq 1 "$RUNS"); do
  db -q <<SQL
\set run $run
SELECT setseed(0.$run);
-- One k = 12 lookup of each of 200 sampled rows, the unit simdup_calibrate repeats.
DO \$\$
DECLARE t0 timestamptz; q bigint; d int; n int := 0;
BEGIN
  t0 := clock_timestamp();
  FOR q IN SELECT fp FROM bench TABLESAMPLE BERNOULLI (0.02) REPEATABLE ($run) WHERE fp IS NOT NULL LIMIT 200 LOOP
    SELECT min(hamming(fp, q)) INTO d FROM bench WHERE hamming(fp, q) <= 12;
    n := n + 1;
  END LOOP;
  INSERT INTO timings VALUES ($run, 'lookup k=12 (one row)', extract(epoch FROM clock_timestamp() - t0) * 1000 / n, NULL);
END \$\$;
DO \$\$
DECLARE t0 timestamptz; s int; note text;
BEGIN
  FOREACH s IN ARRAY ARRAY[1000, 10000] LOOP
    t0 := clock_timestamp();
    SELECT string_agg(c.note, ' | ') INTO note FROM simdup_calibrate('bench', sample => s, seed => $run) c
      WHERE c.note LIKE '%suggested%';
    INSERT INTO timings VALUES ($run, 'simhash calibrate sample=' || s, extract(epoch FROM clock_timestamp() - t0) * 1000, note);
    t0 := clock_timestamp();
    SELECT string_agg(c.note, ' | ') INTO note FROM simdup_calibrate('texts', sample => s, seed => $run) c
      WHERE c.note LIKE '%suggested%';
    INSERT INTO timings VALUES ($run, 'similarity calibrate (texts) sample=' || s, extract(epoch FROM clock_timestamp() - t0) * 1000, note);
  END LOOP;
END \$\$;
SQL
done
db <<'SQL'
\echo '== medians over the runs (ms; a lookup: per row)'
SELECT what, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2) AS median_ms,
       round(min(ms)::numeric, 2) AS min_ms, round(max(ms)::numeric, 2) AS max_ms, count(*) AS runs
FROM timings GROUP BY what ORDER BY what;
\echo '== the suggestions of each run'
SELECT run, what, flagged FROM timings WHERE flagged IS NOT NULL ORDER BY what, run;
\echo '== one full report at sample = 10000'
SELECT method, bucket, rows, bar, note FROM simdup_calibrate('bench', sample => 10000) WHERE rows > 0 OR note IS NOT NULL;
SELECT method, bucket, rows, bar, note FROM simdup_calibrate('texts', sample => 10000) WHERE rows > 0 OR note IS NOT NULL;
SQL
