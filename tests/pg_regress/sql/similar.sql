-- Verified similarity search: simdup_similar(tbl, query, threshold) returns exactly the rows
-- whose jaccard(body, query) (character 5-shingles) is at least the threshold, found through the
-- GIN index of simdup_enable_similar (MinHash LSH bands) and verified exactly.
\set SHOW_CONTEXT never

-------------------------------------------------------------------------------------------
-- Choosing bands x rows for a recall target: the steepest S-curve that finds a pair at the
-- threshold with probability >= recall, within 128 signature values.
-------------------------------------------------------------------------------------------
SELECT t AS threshold, c.bands, c.rows, c.bands * c.rows AS values_used,
       round(minhash_s_curve(t, c.bands, c.rows)::numeric, 4) AS p_at_threshold,
       round(minhash_s_curve(t - 0.1, c.bands, c.rows)::numeric, 4) AS p_at_minus_0_1,
       round(minhash_s_curve(0.1, c.bands, c.rows)::numeric, 5) AS p_at_0_1
FROM unnest(ARRAY[0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]::float8[]) t,
     LATERAL minhash_choose_bands(128, t, 0.99) c;
SELECT * FROM minhash_choose_bands(256, 0.5, 0.999);
-- Bad arguments: 22023 with a hint.
\set VERBOSITY default
SELECT * FROM minhash_choose_bands(128, 0, 0.99);
SELECT * FROM minhash_choose_bands(128, 0.5, 1);
SELECT * FROM minhash_choose_bands(2, 0.1, 0.99);
SELECT * FROM minhash_choose_bands(0, 0.5, 0.99);
SELECT * FROM minhash_choose_bands(NULL, 0.5, 0.99);
\set VERBOSITY terse

-------------------------------------------------------------------------------------------
-- Fixture: 60 documents of 20 random "words" (md5 hex, ~660 characters each) and, of each,
-- 12 copies with the first m = 1..12 words replaced: similarities from ~0.9 down to ~0.2.
-------------------------------------------------------------------------------------------
CREATE TABLE sim_docs (id integer PRIMARY KEY, base integer, m integer, body text);
INSERT INTO sim_docs
SELECT d * 100 + m, d, m,
       (SELECT string_agg(CASE WHEN w <= m THEN md5('new' || d || ':' || m || ':' || w)
                               ELSE md5('doc' || d || ':' || w) END, ' ' ORDER BY w)
        FROM generate_series(1, 20) w)
FROM generate_series(1, 60) d, generate_series(0, 12) m;
-- and a few Chinese ones, with NULL and empty bodies (never found).
INSERT INTO sim_docs VALUES
  (9001, NULL, NULL, '南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。'),
  (9002, NULL, NULL, '南京长江大桥于1968年建成通车，是长江上第一座由中国自行设计和建造的双层铁路、公路两用桥梁。'),
  (9003, NULL, NULL, '国家统计局今天发布数据显示，十月份全国居民消费价格同比上涨。'),
  (9004, NULL, NULL, NULL),
  (9005, NULL, NULL, '   ');

SELECT index, bands, rows, round(p_at_threshold::numeric, 4) AS p_at_threshold
FROM simdup_enable_similar('sim_docs', 'body', 0.3);
ANALYZE sim_docs;
\d sim_docs

-- The search, by hand: two Chinese sentences that differ in a few characters.
SELECT s.similarity = jaccard(d.body, q) AS exact, d.id, round(s.similarity::numeric, 4) AS similarity
FROM (VALUES ('南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。')) v(q),
     simdup_similar('sim_docs', q, 0.3) s JOIN sim_docs d ON d.ctid = s.ctid
ORDER BY s.similarity DESC, d.id;

-------------------------------------------------------------------------------------------
-- Indexed search against a sequential scan of jaccard(body, query) >= t, for every base
-- document as the query, at thresholds 0.3, 0.5 and 0.8. Precision must be exact (no row
-- below the threshold, every similarity equal to jaccard()); recall is the S-curve's.
-------------------------------------------------------------------------------------------
CREATE TABLE sim_truth AS
SELECT q.id AS qid, d.ctid AS rid, d.id, jaccard(d.body, q.body) AS j
FROM sim_docs q JOIN sim_docs d ON jaccard(d.body, q.body) >= 0.3
WHERE q.m = 0;
CREATE TABLE sim_found AS
SELECT q.id AS qid, t, s.ctid AS rid, s.similarity
FROM sim_docs q, unnest(ARRAY[0.3, 0.5, 0.8]::float8[]) t, simdup_similar('sim_docs', q.body, t) s
WHERE q.m = 0;

SELECT t AS threshold,
       (SELECT count(*) FROM sim_truth x WHERE x.j >= t) AS true_pairs,
       (SELECT count(*) FROM sim_found f WHERE f.t = th.t) AS found,
       (SELECT count(*) FROM sim_found f JOIN sim_truth x ON x.qid = f.qid AND x.rid = f.rid
        WHERE f.t = th.t AND x.j >= t AND f.similarity = x.j) AS found_and_exact,
       round((SELECT count(*) FROM sim_found f WHERE f.t = th.t)::numeric
             / (SELECT count(*) FROM sim_truth x WHERE x.j >= t), 4) AS recall,
       round(minhash_s_curve(t, 49, 2)::numeric, 4) AS s_curve_at_threshold
FROM unnest(ARRAY[0.3, 0.5, 0.8]::float8[]) th(t);
-- Nothing found is wrong: every row found is at or above the threshold with its exact value.
SELECT count(*) AS false_or_inexact
FROM sim_found f LEFT JOIN sim_truth x ON x.qid = f.qid AND x.rid = f.rid
WHERE x.j IS NULL OR x.j < f.t OR f.similarity <> x.j;
-- The pairs missed (true similarity, threshold): LSH misses near the threshold only.
SELECT f.t AS threshold, round(x.j::numeric, 3) AS similarity, count(*) AS missed
FROM sim_truth x CROSS JOIN (VALUES (0.3::float8), (0.5), (0.8)) f(t)
WHERE x.j >= f.t AND NOT EXISTS (SELECT FROM sim_found g WHERE g.qid = x.qid AND g.rid = x.rid AND g.t = f.t)
GROUP BY 1, 2 ORDER BY 1, 2;
-- Results come most similar first; the query itself has similarity 1.
SELECT d.id, round(s.similarity::numeric, 3) AS similarity
FROM sim_docs q, simdup_similar('sim_docs', q.body, 0.5) s JOIN sim_docs d ON d.ctid = s.ctid
WHERE q.id = 700;

-------------------------------------------------------------------------------------------
-- The GIN index serves the search: the query simdup_similar runs (sql/similar.sql), with the
-- index expression read from the index definition.
-------------------------------------------------------------------------------------------
SELECT index, text_expr, k, bands, rows FROM _simdup_similar_indexes('sim_docs');
-- simdup_similar runs it with enable_seqscan off (a sequential scan would compute a MinHash for
-- every row) and the query's shingle set and bands as parameters:
SET enable_seqscan = off;
SET plan_cache_mode = force_generic_plan;
PREPARE sim_query(bigint[], bigint[], float8) AS
SELECT s.ctid, s.similarity FROM (
  SELECT t.ctid, jaccard(shingles(body, 5), $1) AS similarity
  FROM sim_docs t WHERE _simdup_similar_bands(body, 5, 49, 2) && $2 OFFSET 0) s
WHERE s.similarity >= $3 ORDER BY s.similarity DESC, s.ctid;
EXPLAIN (COSTS OFF) EXECUTE sim_query(shingles('abc def'), _simdup_similar_bands('abc def', 5, 49, 2), 0.5);
DEALLOCATE sim_query;
RESET plan_cache_mode;
RESET enable_seqscan;
-- The function itself scans the index (its scan counter grows: the transaction's own counts,
-- which every major reports before they are flushed to pg_stat_user_indexes; 14 also counts
-- there what earlier transactions have not flushed yet).
BEGIN;
SELECT pg_stat_get_xact_numscans('sim_docs_body_similar_idx'::regclass) AS scans_before \gset
SELECT count(*) AS found FROM sim_docs q, simdup_similar('sim_docs', q.body, 0.5) s WHERE q.id = 700;
SELECT pg_stat_get_xact_numscans('sim_docs_body_similar_idx'::regclass) - :scans_before AS index_scans;
COMMIT;

-------------------------------------------------------------------------------------------
-- Edge cases and errors.
-------------------------------------------------------------------------------------------
-- NULL in, no rows out (STRICT); text without shingles has no similarity to anything.
SELECT count(*) AS null_query FROM simdup_similar('sim_docs', NULL);
SELECT count(*) AS null_threshold FROM simdup_similar('sim_docs', 'abc', NULL);
SELECT count(*) AS empty_query FROM simdup_similar('sim_docs', '');
SELECT count(*) AS whitespace_query FROM simdup_similar('sim_docs', E' \t ');
-- Threshold 1: the exact (shingle-set) copies only.
SELECT count(*) AS identical FROM sim_docs q, simdup_similar('sim_docs', q.body, 1) s WHERE q.id = 700;
\set VERBOSITY default
SELECT * FROM simdup_similar('sim_docs', 'abc', 0);
SELECT * FROM simdup_similar('sim_docs', 'abc', 1.5);
SELECT * FROM simdup_similar('sim_docs', 'abc', 0.5, 1);
-- Below the threshold the index was made for, the S-curve cannot promise the recall.
SELECT * FROM simdup_similar('sim_docs', 'abc', 0.2);
-- ... unless asked for less.
SELECT count(*) FROM simdup_similar('sim_docs', 'abc', 0.2, 0.5);
CREATE TABLE sim_plain (id integer, body text);
SELECT * FROM simdup_similar('sim_plain', 'abc');
SELECT * FROM simdup_enable_similar('sim_plain', 'nobody');
SELECT * FROM simdup_enable_similar('sim_plain', 'body', 0.5, 0);
SELECT * FROM simdup_enable_similar('sim_plain', 'body', 1.5);
SELECT * FROM simdup_enable_similar('sim_plain', NULL);
\set VERBOSITY terse
-- Short English texts: an index for 0.8 on character 3-shingles; k is read back from the index.
SELECT index, bands, rows, round(p_at_threshold::numeric, 4) AS p_at_threshold
FROM simdup_enable_similar('sim_plain', 'body', 0.8, k => 3);
INSERT INTO sim_plain VALUES (1, 'the quick brown fox jumps over the lazy dog'), (2, 'the quick brown fox jumped over the lazy dog');
SELECT id, round(s.similarity::numeric, 3) AS similarity
FROM simdup_similar('sim_plain', 'the quick brown fox jumps over the lazy dog', 0.8) s JOIN sim_plain p ON p.ctid = s.ctid
ORDER BY id;
SELECT id, round(jaccard(body, 'the quick brown fox jumps over the lazy dog', 3)::numeric, 3) AS jaccard3 FROM sim_plain ORDER BY id;

-- The search's plan is kept per backend (src/similarity/search.rs). In this one session: the index
-- replaced by one for another threshold and k, the table renamed, a row added; the answers are
-- still jaccard's own (the sequential scan's, simdup.index_search = off).
SELECT simdup_disable_similar('sim_plain');
SELECT bands, rows FROM simdup_enable_similar('sim_plain', 'body', 0.6, k => 4);
ALTER TABLE sim_plain RENAME TO sim_plain2;
INSERT INTO sim_plain2 VALUES (3, 'the quick brown fox jumps over the lazy cat'), (4, 'a slow green turtle walks under the busy bridge');
SELECT id, round(s.similarity::numeric, 3) AS similarity
FROM simdup_similar('sim_plain2', 'the quick brown fox jumps over the lazy dog', 0.6) s JOIN sim_plain2 p ON p.ctid = s.ctid
ORDER BY id;
SET simdup.index_search = off;
SELECT id, round(jaccard(body, 'the quick brown fox jumps over the lazy dog', 4)::numeric, 3) AS jaccard4
FROM sim_plain2 WHERE jaccard(body, 'the quick brown fox jumps over the lazy dog', 4) >= 0.6 ORDER BY id;
RESET simdup.index_search;
-- It runs as the caller: row-level security and privileges apply, also to a plan kept from a
-- call by another role.
CREATE ROLE simdup_sim_rls;
CREATE ROLE simdup_sim_none;
GRANT SELECT ON sim_plain2 TO simdup_sim_rls;
ALTER TABLE sim_plain2 ENABLE ROW LEVEL SECURITY;
CREATE POLICY sim_one ON sim_plain2 FOR SELECT TO simdup_sim_rls USING (id = 1);
SELECT count(*) AS owner_rows FROM simdup_similar('sim_plain2', 'the quick brown fox jumps over the lazy dog', 0.6);
SET ROLE simdup_sim_rls;
SELECT count(*) AS rls_rows FROM simdup_similar('sim_plain2', 'the quick brown fox jumps over the lazy dog', 0.6);
SET ROLE simdup_sim_none;
SELECT count(*) FROM simdup_similar('sim_plain2', 'the quick brown fox jumps over the lazy dog', 0.6);
RESET ROLE;
DROP POLICY sim_one ON sim_plain2;
REVOKE ALL ON sim_plain2 FROM simdup_sim_rls;
DROP ROLE simdup_sim_rls, simdup_sim_none;
-- The same search again after its index was dropped and made anew (the same configuration,
-- so the same kept plan, which PostgreSQL replans).
SELECT simdup_disable_similar('sim_plain2');
SELECT bands, rows FROM simdup_enable_similar('sim_plain2', 'body', 0.6, k => 4);
SELECT count(*) AS after_rebuild FROM simdup_similar('sim_plain2', 'the quick brown fox jumps over the lazy dog', 0.6);

DROP TABLE sim_docs, sim_truth, sim_found, sim_plain2;
