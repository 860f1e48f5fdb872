-- Ordinary roles against simdup: row-level security, column privileges, inheritance, and hostile
-- names. Each answer of an index path is compared with a sequential scan's.
SET client_min_messages = warning;
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE ROLE hr_owner;
CREATE ROLE hr_reader;
CREATE ROLE hr_writer;
GRANT CREATE ON SCHEMA public TO hr_owner;
SET ROLE hr_owner;
CREATE TABLE hr_docs (id int PRIMARY KEY, owner text, fp bigint, body text);
INSERT INTO hr_docs SELECT g, CASE WHEN g % 3 = 0 THEN 'hr_reader' ELSE 'other' END, hashint8extended(g, 11), 'row ' || g
FROM generate_series(1, 20000) g;
UPDATE hr_docs SET fp = (SELECT fp FROM hr_docs WHERE id = 3) # 5 WHERE id IN (4, 6, 9);
SELECT simdup_enable('hr_docs', NULL, 'fp');
ANALYZE hr_docs;
CREATE FUNCTION hr_q() RETURNS bigint LANGUAGE sql STABLE AS 'SELECT fp FROM hr_docs WHERE id = 3';
GRANT EXECUTE ON FUNCTION hr_q() TO hr_reader;

-- 1. Row-level security: the reader sees its rows only, index path or not.
ALTER TABLE hr_docs ENABLE ROW LEVEL SECURITY;
CREATE POLICY hr_own ON hr_docs FOR SELECT TO hr_reader USING (owner = current_user);
CREATE POLICY hr_all ON hr_docs FOR SELECT TO hr_owner USING (true);
GRANT SELECT ON hr_docs TO hr_reader;
SET ROLE hr_reader;
SET enable_seqscan = off;
SELECT id FROM hr_docs WHERE hamming(fp, hr_q()) <= 3 ORDER BY id;
SET simdup.index_search = off;
SELECT id FROM hr_docs WHERE hamming(fp, hr_q()) <= 3 ORDER BY id;
RESET simdup.index_search;
RESET enable_seqscan;
SET ROLE hr_owner;

-- 2. Column privileges: a role that may read id and body only cannot search or pair on the
-- fingerprint column through simdup either.
CREATE TABLE hr_cols (id int PRIMARY KEY, body text);
SELECT simdup_enable('hr_cols', 'body');
INSERT INTO hr_cols VALUES (1, 'The Yangtze River Bridge in Nanjing opened in 1968.'), (2, 'The Yangtze River Bridge in Nanjing opened in 1968!');
GRANT SELECT (id, body) ON hr_cols TO hr_reader;
SET ROLE hr_reader;
SELECT id FROM hr_cols ORDER BY id;
SELECT id FROM hr_cols WHERE hamming(simhash, simhash('The Yangtze River Bridge in Nanjing opened in 1968.')) <= 3;
SELECT * FROM simdup_pairs('hr_cols', 3);
SELECT * FROM simdup_nearest('hr_cols', 0, 1);
SET ROLE hr_owner;

-- 3. Reject under row-level security names no key the writer may not read; mark stores the key
-- for the owner, and a writer without SELECT on dup_of cannot read it back.
CREATE TABLE hr_rej (id int PRIMARY KEY, body text);
SELECT simdup_enable('hr_rej', 'body', on_duplicate => 'reject');
CREATE TABLE hr_mark (id int PRIMARY KEY, body text);
SELECT simdup_enable('hr_mark', 'body', on_duplicate => 'mark');
INSERT INTO hr_rej VALUES (7, 'The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.');
INSERT INTO hr_mark VALUES (7, 'The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.');
ALTER TABLE hr_rej ENABLE ROW LEVEL SECURITY;
ALTER TABLE hr_mark ENABLE ROW LEVEL SECURITY;
CREATE POLICY hr_ins ON hr_rej FOR INSERT TO hr_writer WITH CHECK (true);
CREATE POLICY hr_ins ON hr_mark FOR INSERT TO hr_writer WITH CHECK (true);
GRANT INSERT ON hr_rej, hr_mark TO hr_writer;
GRANT SELECT (id, body) ON hr_mark TO hr_writer;
SET ROLE hr_writer;
INSERT INTO hr_rej VALUES (8, 'The Nanjing Yangtze River Bridge opened in 1968; it was the first double-deck road and rail bridge across the Yangtze designed and built by China.');
INSERT INTO hr_mark VALUES (8, 'The Nanjing Yangtze River Bridge opened in 1968; it was the first double-deck road and rail bridge across the Yangtze designed and built by China.') RETURNING dup_of;
INSERT INTO hr_mark VALUES (8, 'The Nanjing Yangtze River Bridge opened in 1968; it was the first double-deck road and rail bridge across the Yangtze designed and built by China.');
SET ROLE hr_owner;
SELECT id, dup_of FROM hr_mark ORDER BY id;

-- 4. Inheritance: the parent's query reads every child, each through its own indexes, with the
-- answer of a sequential scan.
CREATE TABLE hr_parent (id int PRIMARY KEY, fp bigint);
CREATE TABLE hr_child1 (PRIMARY KEY (id)) INHERITS (hr_parent);
CREATE TABLE hr_child2 (PRIMARY KEY (id)) INHERITS (hr_parent);
INSERT INTO hr_child1 SELECT g, hashint8extended(g, 5) FROM generate_series(1, 15000) g;
INSERT INTO hr_child2 SELECT g, hashint8extended(g, 5) # 1 FROM generate_series(15001, 30000) g;
INSERT INTO hr_child2 VALUES (40000, (SELECT fp FROM hr_child1 WHERE id = 1) # 6);
SELECT simdup_enable('hr_child1', NULL, 'fp'), simdup_enable('hr_child2', NULL, 'fp');
ANALYZE hr_child1, hr_child2;
SELECT id FROM hr_parent WHERE hamming(fp, (SELECT fp FROM hr_child1 WHERE id = 1)) <= 4 ORDER BY id;
SET simdup.index_search = off;
SELECT id FROM hr_parent WHERE hamming(fp, (SELECT fp FROM hr_child1 WHERE id = 1)) <= 4 ORDER BY id;
RESET simdup.index_search;

-- 5. Hostile names: quotes, dollar signs, the string $simdup$, spaces, upper case, semicolons.
RESET ROLE;
CREATE SCHEMA "We$ird ""sch'ema;" AUTHORIZATION hr_owner;
SET ROLE hr_owner;
CREATE TABLE "We$ird ""sch'ema;"."$simdup$ T'ab""le;" (id int PRIMARY KEY, "Bo dy$simdup$" text);
SELECT simdup_enable('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"', 'Bo dy$simdup$', 'f"p $x', on_duplicate => 'reject');
INSERT INTO "We$ird ""sch'ema;"."$simdup$ T'ab""le;" VALUES (1, 'The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.');
INSERT INTO "We$ird ""sch'ema;"."$simdup$ T'ab""le;" VALUES (2, 'The Nanjing Yangtze River Bridge opened in 1968; it was the first double-deck road and rail bridge across the Yangtze designed and built by China.');
SELECT simdup_insert('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"', '{"id": 3, "Bo dy$simdup$": "PostgreSQL is a powerful, open source object-relational database system."}');
SELECT simdup_insert_select('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"', $q$SELECT 4 AS id, 'PostgreSQL is a powerful, open source object-relational database system!' AS "Bo dy$simdup$"$q$);
SELECT id FROM "We$ird ""sch'ema;"."$simdup$ T'ab""le;" WHERE hamming("f""p $x", simhash('PostgreSQL is a powerful, open source object-relational database system.')) <= 10 ORDER BY id;
SELECT count(*) FROM simdup_pairs('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"', 64);
SELECT count(*) FROM simdup_groups('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"', 64);
SELECT count(*) FROM simdup_nearest('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"', simhash('PostgreSQL'), 2, 'f"p $x');
SELECT (simdup_enable_similar('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"', 'Bo dy$simdup$')).index IS NOT NULL AS similar_index;
SELECT count(*) FROM simdup_similar('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"', 'PostgreSQL is a powerful, open source object-relational database system.', 0.5);
SELECT simdup_disable('"We$ird ""sch''ema;"."$simdup$ T''ab""le;"');
SELECT attname FROM pg_attribute WHERE attrelid = '"We$ird ""sch''ema;"."$simdup$ T''ab""le;"'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;

RESET ROLE;
DROP SCHEMA "We$ird ""sch'ema;" CASCADE;
DROP TABLE hr_docs, hr_cols, hr_rej, hr_mark, hr_parent, hr_child1, hr_child2;
DROP FUNCTION hr_q();
REVOKE CREATE ON SCHEMA public FROM hr_owner;
DROP ROLE hr_owner;
DROP ROLE hr_reader;
DROP ROLE hr_writer;
