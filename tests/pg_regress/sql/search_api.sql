-- PL/pgSQL line numbers in error CONTEXT lines would tie this output to function bodies.
\set SHOW_CONTEXT never
-- simdup_enable / simdup_disable: what they add and remove, quoting, ownership, errors.
CREATE TABLE docs (id int PRIMARY KEY, body text);
INSERT INTO docs VALUES
  (1, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三。'),
  (2, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三！'),
  (3, 'The quick brown fox jumps over the lazy dog near the river bank.'),
  (4, '。。。');
SELECT simdup_enable('docs', 'body');
\d docs
SELECT tbl, text_column, fingerprint_column FROM simdup_tables;
SELECT * FROM simdup_block_indexes('docs');

-- The generated column holds simhash(body), for old and new rows; no words -> NULL.
INSERT INTO docs VALUES (5, 'The quick brown fox jumps over the lazy dog near the river.');
SELECT id, simhash = simhash(body) AS same, simhash IS NULL AS no_fp FROM docs ORDER BY id;

-- A query, and ORDER BY distance with <~>.
SELECT id, simhash <~> simhash('The quick brown fox jumps over the lazy dog near the river bank.') AS d
FROM docs
WHERE simdup_match(simhash, simhash('The quick brown fox jumps over the lazy dog near the river bank.'), 12)
ORDER BY d, id;

-- NULL arguments match nothing (simdup_match is not STRICT, so that it can be inlined).
SELECT count(*) FROM docs WHERE simdup_match(simhash, NULL, 3);
SELECT simdup_match(NULL, 1, 3) IS NULL AS null_fp, simdup_match(1, 1, NULL) IS NULL AS null_k;

-- Errors, each with its SQLSTATE.
\set VERBOSITY sqlstate
SELECT simdup_enable('docs', 'body');
SELECT simdup_match(0, 0, 65);
SELECT simdup_match(0, 0, -1);
\set VERBOSITY default
SELECT simdup_enable('docs', 'body');
SELECT simdup_match(0, 0, 65);
CREATE TABLE nums (id int PRIMARY KEY, n int, fp text);
SELECT simdup_enable('nums', 'nope');
SELECT simdup_enable('nums', 'n');
SELECT simdup_enable('nums', NULL, 'fp');
SELECT simdup_enable('nums', NULL, 'nope');
CREATE VIEW docs_view AS SELECT * FROM docs;
SELECT simdup_enable('docs_view', 'body');
SELECT simdup_disable('nums');
\set VERBOSITY sqlstate
SELECT simdup_enable('nums', 'nope');
SELECT simdup_enable('nums', 'n');
SELECT simdup_enable('nums', NULL, 'fp');
SELECT simdup_enable('docs_view', 'body');
SELECT simdup_disable('nums');
\set VERBOSITY default
DROP VIEW docs_view;

-- simdup_disable removes exactly what simdup_enable added; an index of your own on the table
-- (not on the fingerprint column) stays.
CREATE INDEX docs_body_idx ON docs (body);
SELECT simdup_disable('docs');
\d docs
SELECT count(*) AS rows_left FROM simdup_tables;

-- Identifiers that need quoting, in another schema; a text primary key.
CREATE SCHEMA "Other Schema";
CREATE TABLE "Other Schema"."Docs ""Quoted"" 表" ("Key" text PRIMARY KEY, "Body Text" varchar(200));
INSERT INTO "Other Schema"."Docs ""Quoted"" 表" VALUES
  ('a''1', '今天天气很好，我们去公园散步，然后回家吃饭。'),
  ('B 2',  '今天天气很好，我们去公园散步，然后回家吃饭！'),
  ('c3',   'PostgreSQL 扩展 simdup 查找近似重复文档。');
SELECT simdup_enable('"Other Schema"."Docs ""Quoted"" 表"', 'Body Text', 'Fp "Col"');
\d "Other Schema"."Docs ""Quoted"" 表"
SELECT * FROM simdup_pairs('"Other Schema"."Docs ""Quoted"" 表"', 3);
SELECT "Key" FROM "Other Schema"."Docs ""Quoted"" 表"
WHERE simdup_match("Fp ""Col""", simhash('今天天气很好，我们去公园散步，然后回家吃饭。'), 3) ORDER BY 1;
SELECT simdup_disable('"Other Schema"."Docs ""Quoted"" 表"');
\d "Other Schema"."Docs ""Quoted"" 表"

-- A very long table name: index names are clipped to fit in 63 bytes.
CREATE TABLE "一个非常非常非常非常非常非常非常长的表名字用来测试索引名字截断" (id int PRIMARY KEY, body text);
SELECT simdup_enable('"一个非常非常非常非常非常非常非常长的表名字用来测试索引名字截断"', 'body');
SELECT index, block, (SELECT octet_length(relname::text) FROM pg_class WHERE oid = index) AS bytes
FROM simdup_block_indexes('"一个非常非常非常非常非常非常非常长的表名字用来测试索引名字截断"');
DROP TABLE "一个非常非常非常非常非常非常非常长的表名字用来测试索引名字截断";

-- Adopting an existing bigint column: only the indexes are added, and only they are removed.
CREATE TABLE fps (id bigint PRIMARY KEY, fp bigint);
SELECT simdup_enable('fps', NULL, 'fp');
SELECT tbl, text_column, fingerprint_column FROM simdup_tables;
SELECT simdup_disable('fps');
\d fps

-- Dropping the table or the fingerprint column forgets the table (event trigger).
SELECT simdup_enable('fps', NULL, 'fp');
SELECT simdup_enable('nums', NULL, 'id');
ALTER TABLE fps DROP COLUMN fp;
SELECT tbl FROM simdup_tables;
DROP TABLE nums;
SELECT count(*) AS rows_left FROM simdup_tables;

-- Ownership: only the owner of a table (or a member of the owning role) may equip it.
CREATE ROLE regress_simdup_owner;
CREATE ROLE regress_simdup_other;
-- (CREATE INDEX needs the CREATE privilege on the table's schema.)
CREATE SCHEMA owners AUTHORIZATION regress_simdup_owner;
CREATE TABLE owners.owned (id int PRIMARY KEY, body text);
ALTER TABLE owners.owned OWNER TO regress_simdup_owner;
GRANT USAGE ON SCHEMA owners TO regress_simdup_other;
SET ROLE regress_simdup_other;
\set VERBOSITY sqlstate
SELECT simdup_enable('owners.owned', 'body');
\set VERBOSITY default
SELECT simdup_enable('owners.owned', 'body');
INSERT INTO simdup_tables (tbl, text_column, fingerprint_column) VALUES ('owners.owned', 'body', 'simhash');
RESET ROLE;
SET ROLE regress_simdup_owner;
SELECT simdup_enable('owners.owned', 'body');
SELECT count(*) FROM simdup_block_indexes('owners.owned');
RESET ROLE;
SET ROLE regress_simdup_other;
SELECT simdup_disable('owners.owned');
DELETE FROM simdup_tables;
SELECT tbl FROM simdup_tables;
RESET ROLE;
SET ROLE regress_simdup_owner;
SELECT simdup_disable('owners.owned');
SELECT tbl FROM simdup_tables;
RESET ROLE;
DROP SCHEMA owners CASCADE;
DROP ROLE regress_simdup_owner;
DROP ROLE regress_simdup_other;

-- pg_dump keeps the configuration table's rows.
SELECT unnest(extconfig)::regclass AS config_table, unnest(extcondition) AS condition
FROM pg_extension WHERE extname = 'simdup';

-- DROP EXTENSION with the event trigger in place, and back.
DROP TABLE docs, fps;
DROP SCHEMA "Other Schema" CASCADE;
DROP EXTENSION simdup;
CREATE EXTENSION simdup;
SELECT count(*) FROM simdup_tables;
