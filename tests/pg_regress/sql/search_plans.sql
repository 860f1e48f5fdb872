-- hamming(fp, q) <= k, fp <~> q < k and simdup_match (inlined to the first) are served by the
-- block indexes: a Tid Scan whose TID condition _simdup_tids(...) probes them, the condition
-- itself kept as the Filter. For literal queries, generic plans of prepared statements, joins
-- (parameterized by the outer row), and never on a table without block indexes. No enable_*
-- settings: 20,000 rows and ANALYZE make the index plans the cheapest.
SELECT setseed(0.3);
CREATE TABLE plan_docs (id int PRIMARY KEY, body text);
INSERT INTO plan_docs
SELECT g, 'report ' || g || ' on ' || md5(g::text) || ' and ' || md5((g * 7)::text) || ' 第' || g || '号文件'
FROM generate_series(1, 20000) g;
INSERT INTO plan_docs VALUES
  (20001, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。'),
  (20002, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九！'),
  (20003, '国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。');
SELECT simdup_enable('plan_docs', 'body');
ANALYZE plan_docs;

-- A literal query: simhash('...') is folded to a constant.
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs
WHERE simdup_match(simhash, simhash('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。'), 3);
SELECT id FROM plan_docs
WHERE simdup_match(simhash, simhash('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。'), 3)
ORDER BY id;

-- Nearest first: ORDER BY the distance operator <~>.
SELECT id, simhash <~> simhash('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。') AS distance
FROM plan_docs
WHERE simdup_match(simhash, simhash('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。'), 12)
ORDER BY distance, id;

-- A bigint constant and k = 6.
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs WHERE simdup_match(simhash, 1234567890123456789, 6);

-- The query forms: hamming(fp, q) <= k, the operator, < k (k - 1 is searched), and
-- the bound on the left.
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs WHERE hamming(simhash, 1234567890123456789) <= 3;
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs WHERE simhash <~> 1234567890123456789 < 11;
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs WHERE 10 >= 1234567890123456789 <~> simhash;
SELECT id FROM plan_docs
WHERE hamming(simhash, simhash('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。')) <= 10
ORDER BY id;

-- The first match in key order. PostgreSQL has no statistics for hamming(fp, q) and would
-- expect a third of the rows to match, so walking the primary key index and filtering would
-- look cheapest for ORDER BY id LIMIT 1 (on 1M rows: 132 ms instead of 4). simdup's row
-- estimate (the share of 64-bit values within k, at least one row) keeps the probe at k = 10;
-- at k = 30, which keeps about a third of random fingerprints, the key walk is right.
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs WHERE hamming(simhash, 1234567890123456789) <= 10 ORDER BY id LIMIT 1;
SELECT id FROM plan_docs
WHERE hamming(simhash, simhash('国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。')) <= 10
ORDER BY id LIMIT 1;
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs WHERE hamming(simhash, 1234567890123456789) <= 30 ORDER BY id LIMIT 1;

-- A condition that reads the row on both sides, and a volatile bound, are not served.
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs WHERE hamming(simhash, id::bigint) <= 3;
EXPLAIN (COSTS OFF)
SELECT id FROM plan_docs WHERE hamming(simhash, 1234567890123456789) <= (random() * 3)::int;

-- A table without block indexes keeps its plan.
CREATE TABLE plain_docs AS SELECT id, simhash FROM plan_docs;
ANALYZE plain_docs;
EXPLAIN (COSTS OFF)
SELECT id FROM plain_docs WHERE hamming(simhash, 1234567890123456789) <= 3;
DROP TABLE plain_docs;

-- A small table: a sequential scan is cheaper than 428 index probes, and the planner says so.
CREATE TABLE small_docs (id int PRIMARY KEY, fp bigint);
INSERT INTO small_docs SELECT g, hashint8extended(g, 0) FROM generate_series(1, 300) g;
SELECT simdup_enable('small_docs', NULL, 'fp');
ANALYZE small_docs;
EXPLAIN (COSTS OFF)
SELECT id FROM small_docs WHERE hamming(fp, 1234567890123456789) <= 10;
DROP TABLE small_docs;

-- Generic plans of prepared statements.
SET plan_cache_mode = force_generic_plan;

-- A bigint parameter (the fingerprint computed by the application or an earlier query) and a
-- parameter k: inlined; the search runs once per execution.
PREPARE by_fp(bigint, int) AS
  SELECT id FROM plan_docs WHERE simdup_match(simhash, $1, $2) ORDER BY id;
EXPLAIN (COSTS OFF) EXECUTE by_fp(0, 3);
SELECT simhash AS fp20001 FROM plan_docs WHERE id = 20001 \gset
EXECUTE by_fp(:fp20001, 3);

-- simhash($1) of a text parameter is inlined too: simhash is declared with the default cost, so
-- the planner expands simdup_match and the block indexes serve it. The TID condition computes
-- simhash($1) once per scan; the Filter repeats it per row found, where simhash's one-entry
-- memo (same text as the previous call) makes it a comparison, not a recomputation.
PREPARE by_text_inline(text) AS
  SELECT id FROM plan_docs WHERE simdup_match(simhash, simhash($1), 3) ORDER BY id;
EXPLAIN (COSTS OFF) EXECUTE by_text_inline('国家统计局今天发布数据显示');

-- The working pattern: compute the fingerprint once in a MATERIALIZED CTE and join it.
PREPARE by_text(text, int) AS
  WITH q AS MATERIALIZED (SELECT simhash($1) AS fp)
  SELECT d.id, d.simhash <~> q.fp AS distance
  FROM plan_docs d, q
  WHERE simdup_match(d.simhash, q.fp, $2)
  ORDER BY distance, d.id;
EXPLAIN (COSTS OFF) EXECUTE by_text('国家统计局今天发布数据显示', 3);
EXECUTE by_text('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。', 3);
-- Same answer as the inlined form.
EXECUTE by_text_inline('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。');

-- A subquery that the planner may not flatten (OFFSET 0) works too: simhash($1) is computed
-- once, in the Result node, and passed to the Tid Scan as a parameter.
PREPARE by_text_offset(text) AS
  SELECT d.id FROM (SELECT simhash($1) AS fp OFFSET 0) q, plan_docs d
  WHERE simdup_match(d.simhash, q.fp, 3);
EXPLAIN (COSTS OFF) EXECUTE by_text_offset('国家统计局今天发布数据显示');

RESET plan_cache_mode;
DEALLOCATE ALL;

-- Many queries at once, from a table of fingerprints: a nested loop over Tid Scans
-- parameterized by the outer row.
CREATE TEMP TABLE wanted AS SELECT simhash AS fp FROM plan_docs WHERE id IN (20001, 5, 77);
ANALYZE wanted;
EXPLAIN (COSTS OFF)
SELECT w.fp, d.id FROM wanted w JOIN plan_docs d ON simdup_match(d.simhash, w.fp, 3);
SELECT count(*) FROM wanted w JOIN plan_docs d ON simdup_match(d.simhash, w.fp, 3);

DROP TABLE plan_docs;
