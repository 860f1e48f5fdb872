-- Similarity search as a query: WHERE jaccard(body, q) >= t on a table with a similarity index
-- (simdup_enable_similar) is served by a Bitmap Heap Scan over its GIN index (candidates: rows
-- sharing an LSH band with q), the condition kept as the filter: every row returned has
-- jaccard >= t. Served answers are compared with the sequential scan's
-- (simdup.index_search = off), and the plans of the forms served and not served.
\set SHOW_CONTEXT never
-- EXPLAIN (COSTS OFF) without PostgreSQL 18's "Disabled: true" lines, and with the query's
-- band values (a long constant array) cut short.
CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    CONTINUE WHEN l LIKE '%Disabled: true';
    RETURN NEXT regexp_replace(l, '''\{[-0-9,]+\}''', '''{...}''');
  END LOOP;
END $$;

-- Fixture: 100 documents of 20 random "words" (md5 hex, ~660 characters each) and, of each, 12
-- copies with the first m = 1..12 words replaced (similarities from ~0.9 down to ~0.2), 60
-- rows without text, and real sentences in Chinese and English with edited copies.
CREATE TABLE sq (id integer PRIMARY KEY, base integer, m integer, body text);
INSERT INTO sq
SELECT d * 100 + m, d, m,
       (SELECT string_agg(CASE WHEN w <= m THEN md5('new' || d || ':' || m || ':' || w)
                               ELSE md5('doc' || d || ':' || w) END, ' ' ORDER BY w)
        FROM generate_series(1, 20) w)
FROM generate_series(1, 100) d, generate_series(0, 12) m;
INSERT INTO sq SELECT 90000 + g, NULL, NULL, NULL FROM generate_series(1, 60) g;
INSERT INTO sq VALUES
  (99001, NULL, NULL, '南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。'),
  (99002, NULL, NULL, '南京长江大桥于1968年建成通车，是长江上第一座由中国自行设计和建造的双层铁路、公路两用桥梁。'),
  (99003, NULL, NULL, 'The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.'),
  (99004, NULL, NULL, 'The Yangtze River Bridge at Nanjing opened in 1968; it was the first double deck road and rail bridge across the Yangtze designed and built in China.');
SELECT * FROM simdup_enable_similar('sq', 'body', 0.5);
ANALYZE sq;

-- The served forms: a literal, > t, the threshold on the left, the query text first, k given.
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'') >= 0.5');
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'') > 0.6');
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE 0.5 <= jaccard(''abc def ghi'', body, 5)');
-- With other conditions: they join the filter.
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'') >= 0.7 AND m > 3');

-- Every document of 8 bases, and the real sentences, as the query, thresholds 0.5, 0.6, 0.8:
-- served against sequential.
-- (Each query planned anew with its literals.)
CREATE FUNCTION pg_temp.answers(use_index boolean) RETURNS TABLE (q int, t float8, ids text, served boolean)
LANGUAGE plpgsql AS $$
DECLARE
  r record; tt float8; sql text;
BEGIN
  PERFORM set_config('simdup.index_search', use_index::text, true);
  FOR r IN SELECT id, body FROM sq WHERE base <= 8 OR id > 99000 ORDER BY id LOOP
    FOREACH tt IN ARRAY ARRAY[0.5, 0.6, 0.8] LOOP
      sql := format('SELECT string_agg(id::text, '','' ORDER BY id) FROM sq WHERE jaccard(body, %L) >= %s', r.body, tt);
      q := r.id; t := tt;
      EXECUTE sql INTO ids;
      SELECT bool_or(l ~ 'Bitmap Index Scan on sq_body_similar_idx') INTO served FROM pg_temp.plan(sql) l;
      RETURN NEXT;
    END LOOP;
  END LOOP;
END $$;
CREATE TEMP TABLE via_index AS SELECT * FROM pg_temp.answers(true);
CREATE TEMP TABLE via_seq AS SELECT * FROM pg_temp.answers(false);
-- Precision is exact (no row the sequential scan does not return); recall is the index's: a
-- row at similarity s is a candidate with probability minhash_s_curve(s, 35, 3), 0.9907 at
-- 0.5. MinHash is deterministic, so the rows missed are the same on every run: listed below.
SELECT count(*) AS compared,
       count(*) FILTER (WHERE i.served) AS served,
       count(*) FILTER (WHERE s.served) AS served_when_off,
       sum(cardinality(string_to_array(s.ids, ','))) AS rows_sequential,
       sum(cardinality(string_to_array(i.ids, ','))) AS rows_served
FROM via_index i JOIN via_seq s USING (q, t);
SELECT count(*) AS extra_rows
FROM via_index i JOIN via_seq s USING (q, t), unnest(string_to_array(i.ids, ',')) x
WHERE x <> ALL (coalesce(string_to_array(s.ids, ','), '{}'));
SELECT s.q, s.t, miss::int AS missed,
       round(jaccard((SELECT body FROM sq WHERE id = s.q), (SELECT body FROM sq WHERE id = miss::int))::numeric, 3) AS similarity,
       round(minhash_s_curve(jaccard((SELECT body FROM sq WHERE id = s.q), (SELECT body FROM sq WHERE id = miss::int)), 35, 3)::numeric, 4) AS p_found
FROM via_index i JOIN via_seq s USING (q, t), unnest(string_to_array(s.ids, ',')) miss
WHERE miss <> ALL (coalesce(string_to_array(i.ids, ','), '{}'))
ORDER BY 1, 2, 3;
-- NULL and empty queries find nothing either way.
SELECT count(*) FROM sq WHERE jaccard(body, NULL) >= 0.5;
SELECT count(*) FROM sq WHERE jaccard(body, '') >= 0.5;

-- A prepared statement with the text as a parameter: generic plans are served too.
SET plan_cache_mode = force_generic_plan;
PREPARE similar_to(text) AS SELECT id FROM sq WHERE jaccard(body, $1) >= 0.5 ORDER BY id;
SELECT * FROM pg_temp.plan('EXECUTE similar_to(''abc'')');
EXECUTE similar_to('南京长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。');
-- A threshold parameter is not: the index's recall at it is not known when planning.
PREPARE similar_at(text, float8) AS SELECT id FROM sq WHERE jaccard(body, $1) >= $2;
SELECT * FROM pg_temp.plan('EXECUTE similar_at(''abc'', 0.5)');
RESET plan_cache_mode;
DEALLOCATE ALL;

-- Not served: a threshold where the index's recall is below 0.99 (made for 0.5: at 0.3 it would
-- find a pair with probability 0.53), another k, a comparison the other way, a text that reads
-- the row on both sides, a table without a similarity index, row-level security.
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'') >= 0.3');
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'', 4) >= 0.5');
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'') <= 0.5');
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, body || ''x'') >= 0.5');
CREATE TABLE sq_plain AS SELECT * FROM sq;
SELECT * FROM pg_temp.plan('SELECT id FROM sq_plain WHERE jaccard(body, ''abc def ghi'') >= 0.5');
DROP TABLE sq_plain;
CREATE ROLE sq_reader;
GRANT SELECT ON sq TO sq_reader;
ALTER TABLE sq ENABLE ROW LEVEL SECURITY;
CREATE POLICY sq_chinese ON sq TO sq_reader USING (id > 99000);
SET ROLE sq_reader;
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'') >= 0.5');
SELECT id FROM sq WHERE jaccard(body, '南京长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。') >= 0.5 ORDER BY id;
RESET ROLE;
DROP POLICY sq_chinese ON sq;
ALTER TABLE sq DISABLE ROW LEVEL SECURITY;
REVOKE SELECT ON sq FROM sq_reader;
DROP ROLE sq_reader;

-- A second index made for 0.8 (fewer, longer bands): at 0.8 both reach recall 0.99 and the
-- planner takes the cheaper (0.8's, fewer false candidates); at 0.3 neither serves.
SELECT index, bands, rows FROM simdup_enable_similar('sq', 'body', 0.8);
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'') >= 0.8');
SELECT * FROM pg_temp.plan('SELECT id FROM sq WHERE jaccard(body, ''abc def ghi'') >= 0.3');

DROP TABLE sq;
