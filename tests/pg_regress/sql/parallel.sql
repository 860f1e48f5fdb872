-- simhash is PARALLEL SAFE: a scan computing fingerprints over a large table can use parallel
-- workers (cost settings lowered so that this small table gets a parallel plan).
CREATE TABLE par_docs AS
SELECT i AS id, '第' || i || '篇文章：南京市长江大桥于1968年建成通车，是长江上第一座双层铁路公路两用桥。' AS body
FROM generate_series(1, 20000) i;
ANALYZE par_docs;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT sum(simhash(body) % 1000) FROM par_docs;
CREATE TEMP TABLE par_result AS SELECT sum(simhash(body) % 1000) AS s, count(simhash(body)) AS n FROM par_docs;

-- The same answer without workers.
SET max_parallel_workers_per_gather = 0;
SELECT p.n, p.s = (SELECT sum(simhash(body) % 1000) FROM par_docs) AS same_as_serial FROM par_result p;

RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
DROP TABLE par_docs;
