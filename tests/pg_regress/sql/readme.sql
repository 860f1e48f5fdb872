-- The SQL examples of the README ("Quick start") and of docs/reference.md ("Reference",
-- "Near-duplicate search", "MinHash and Jaccard"), as written there, so they cannot drift:
-- change one, change the other, and copy the output shown here into the document. The schema keeps the README's table names away from
-- the other tests'. Fast: under 10 s.
\set SHOW_CONTEXT never
CREATE SCHEMA readme;
SET search_path = readme, public;
CREATE EXTENSION IF NOT EXISTS simdup;

-- Quick start: fingerprints and distances.
SELECT simhash('南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。');

SELECT simhash(a) <~> simhash(b) AS distance
FROM (VALUES ('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。',
              '国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。')) t(a, b);

SELECT hamming(simhash('The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.'),
               simhash('The Nanjing Yangtze River Bridge opened in 1968; it was the first double-deck road and rail bridge across the Yangtze designed and built by China.'));

SELECT * FROM simhash_features('数据库 数据库 的 PostgreSQL，今天！');

-- Quick start: a table equipped for search.
CREATE TABLE docs (id bigserial PRIMARY KEY, body text NOT NULL);
INSERT INTO docs (body) VALUES
  ('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。'),
  ('国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。'),
  ('南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。'),
  ('The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.'),
  ('The Nanjing Yangtze River Bridge opened in 1968; it was the first double-deck road and rail bridge across the Yangtze designed and built by China.');
SELECT simdup_enable('docs', 'body');   -- adds column "simhash" and four B-tree indexes

WITH q AS (SELECT simhash('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。') AS fp)
SELECT d.id, d.simhash <~> q.fp AS distance
FROM docs d, q
WHERE hamming(d.simhash, q.fp) <= 10
ORDER BY distance, d.id;

PREPARE near(text, int) AS
  SELECT d.id, d.simhash <~> q.fp AS distance
  FROM docs d, (SELECT simhash($1) AS fp) q
  WHERE simdup_match(d.simhash, q.fp, $2)
  ORDER BY distance, d.id;
EXECUTE near('The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.', 10);
DEALLOCATE near;

SELECT d.id, d.simhash <~> simhash('南京长江大桥1968年建成通车，是长江上第一座由我国自行设计建造的双层铁路公路两用桥。') AS distance
FROM docs d
ORDER BY distance, d.id
LIMIT 2;

SELECT * FROM simdup_pairs('docs') ORDER BY a, b;     -- every pair within k once
SELECT * FROM simdup_groups('docs') ORDER BY key;     -- connected components
SELECT * FROM simdup_groups('docs', method => 'leader') ORDER BY key;   -- no chaining
SELECT * FROM simdup_block_indexes('docs');
SELECT simdup_reindex('docs', 3);
SELECT index, bit_offset, bits FROM simdup_block_indexes('docs');

-- Near-duplicate search, "When the index is used": the planner compares the cost of the probes
-- with a sequential scan's.
CREATE TABLE fps (id int PRIMARY KEY, fp bigint);
INSERT INTO fps SELECT g, hashint8extended(g, 0) FROM generate_series(1, 20000) g;
SELECT simdup_enable('fps', NULL, 'fp');   -- adopts the bigint column fp
ANALYZE fps;
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE hamming(fp, 1234567890123456789) <= 10;
DELETE FROM fps WHERE id > 1000;
ANALYZE fps;
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE hamming(fp, 1234567890123456789) <= 10;
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE hamming(fp, 1234567890123456789) <= 3;
SET simdup.index_search = off;
EXPLAIN (COSTS OFF) SELECT id FROM fps WHERE hamming(fp, 1234567890123456789) <= 3;
RESET simdup.index_search;

-- Quick start: dedup on insert.
CREATE TABLE news (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('news', 'body', on_duplicate => 'reject');
INSERT INTO news (body) VALUES ('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。');
INSERT INTO news (body) VALUES ('国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。');

-- Reference, "Dedup trigger": catching 23505 and its fields; ON CONFLICT does not apply.
DO $$
DECLARE
    schema_name text;
    table_name text;
    constraint_name text;
BEGIN
    INSERT INTO news (body) VALUES ('国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。');
EXCEPTION WHEN unique_violation THEN
    GET STACKED DIAGNOSTICS schema_name = SCHEMA_NAME, table_name = TABLE_NAME, constraint_name = CONSTRAINT_NAME;
    RAISE NOTICE 'near-duplicate: schema %, table %, constraint %', schema_name, table_name, constraint_name;
END
$$;

INSERT INTO news (body) VALUES ('国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。')
ON CONFLICT DO NOTHING;

CREATE TABLE feed (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('feed', 'body', on_duplicate => 'skip', max_distance => 8);
INSERT INTO feed (body) SELECT body FROM docs ORDER BY id;
SELECT id, left(body, 20) AS body FROM feed ORDER BY id;   -- rows 2 and 5 were skipped

CREATE TABLE archive (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT simdup_enable('archive', 'body', on_duplicate => 'mark');
INSERT INTO archive (body) SELECT body FROM docs ORDER BY id;
SELECT id, dup_of, left(body, 20) AS body FROM archive ORDER BY id;

CREATE TABLE posts (id bigserial PRIMARY KEY, body text NOT NULL);
SELECT index FROM simdup_enable_similar('posts', 'body', 0.6, on_duplicate => 'reject');
INSERT INTO posts (body) VALUES ('The Harbor Point ferry service resumed on Monday after an eleven-month suspension, the county said.');
SELECT hamming(simhash(a), simhash(b)), round(jaccard(a, b)::numeric, 3)
FROM (VALUES ('The Harbor Point ferry service resumed on Monday after an eleven-month suspension, the county said.',
              'The Harbour Point ferry servise resumed on Monday after an eleven month suspention, the county said.')) v(a, b);
INSERT INTO posts (body) VALUES ('The Harbour Point ferry servise resumed on Monday after an eleven month suspention, the county said.');

SELECT tbl, text_column, fingerprint_column, on_duplicate, max_distance FROM simdup_tables ORDER BY tbl::text;

-- A table without a single-column primary key: search works, dedup does not.
CREATE TABLE notes (body text);
SELECT simdup_enable('notes', 'body');
CREATE TABLE notes2 (body text);
SELECT simdup_enable('notes2', 'body', on_duplicate => 'skip');

-- MinHash and Jaccard.
SELECT round(jaccard('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三。',
                     '国家统计局发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三。')::numeric, 3) AS jaccard;

-- Undo.
SELECT simdup_disable('docs');
SELECT simdup_disable('news');
\d news
-- Near-duplicate search: what simdup_enable runs, as plain DDL.
ALTER TABLE docs ADD COLUMN simhash bigint GENERATED ALWAYS AS (simhash(body)) STORED;
CREATE INDEX docs_simhash_k0_idx  ON docs ((_simdup_key(simhash, 0)));
CREATE INDEX docs_simhash_k16_idx ON docs ((_simdup_key(simhash, 16)));
CREATE INDEX docs_simhash_k32_idx ON docs ((_simdup_key(simhash, 32)));
CREATE INDEX docs_simhash_k48_idx ON docs ((_simdup_key(simhash, 48)));
INSERT INTO simdup_tables (tbl, text_column, fingerprint_column)
  VALUES ('docs', 'body', 'simhash');   -- only needed by simdup_pairs / simdup_groups
SELECT * FROM simdup_block_indexes('docs');
SELECT * FROM simdup_pairs('docs') ORDER BY a, b;
RESET search_path;
DROP SCHEMA readme CASCADE;
