-- PL/pgSQL line numbers in error CONTEXT lines would tie this output to function bodies.
\set SHOW_CONTEXT never
-- Dedup on insert: simdup_enable(tbl, text_column, on_duplicate => 'reject' | 'skip' | 'mark',
-- max_distance => k) installs a BEFORE INSERT OR UPDATE trigger that treats near-duplicate
-- text (fingerprints at most k bits apart) the way a unique constraint treats equal keys.
-- The table needs a single-column primary key (rows are named and marked by it).

-- ---------------------------------------------------------------------------------------------
-- reject: an error with SQLSTATE 23505 (unique_violation), naming the existing row
-- ---------------------------------------------------------------------------------------------
CREATE TABLE news (id int PRIMARY KEY, body text);
SELECT simdup_enable('news', 'body', on_duplicate => 'reject');
\d news
-- max_distance defaults to simdup.max_distance at enable time (10), recorded here:
SELECT tbl, text_column, fingerprint_column, on_duplicate, max_distance FROM simdup_tables;

INSERT INTO news VALUES (1, '临江市地铁5号线一期工程于12月28日上午9时正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的一条线路。开通首日，不少市民早早来到起点站滨河公园站排队体验。');
-- The same news with a source tag in front and a word changed: rejected, like a duplicate key.
INSERT INTO news VALUES (2, '【本报讯】临江市地铁5号线一期工程于12月28日上午9时正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的一条线路。开通首日，许多市民早早来到起点站滨河公园站排队体验。');
\set VERBOSITY sqlstate
INSERT INTO news VALUES (2, '【本报讯】临江市地铁5号线一期工程于12月28日上午9时正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的一条线路。开通首日，许多市民早早来到起点站滨河公园站排队体验。');
\set VERBOSITY default
-- Applications handle it like any unique violation:
DO $$
BEGIN
    INSERT INTO news VALUES (2, '临江市地铁5号线一期工程于12月28日正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的一条线路。开通首日，不少市民早早来到起点站滨河公园站排队体验。');
EXCEPTION WHEN unique_violation THEN
    RAISE NOTICE 'not stored: %', SQLERRM;
END
$$;
-- The error carries the fields drivers and ORMs map unique violations by (libpq's
-- PG_DIAG_SCHEMA_NAME, PG_DIAG_TABLE_NAME, PG_DIAG_CONSTRAINT_NAME; psql's \errverbose shows
-- them): the table, and simdup_dedup as the constraint.
DO $$
DECLARE
    state text; sch text; tab text; con text; det text;
BEGIN
    INSERT INTO news VALUES (3, '临江市地铁5号线一期工程于12月28日正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的一条线路。开通首日，不少市民早早来到起点站滨河公园站排队体验。');
EXCEPTION WHEN unique_violation THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, sch = SCHEMA_NAME, tab = TABLE_NAME,
                            con = CONSTRAINT_NAME, det = PG_EXCEPTION_DETAIL;
    RAISE NOTICE 'sqlstate %, schema %, table %, constraint %, detail: %', state, sch, tab, con, det;
END
$$;
-- It is a trigger, not a constraint: INSERT ... ON CONFLICT DO NOTHING does not apply (use
-- on_duplicate => 'skip', or catch 23505).
INSERT INTO news VALUES (4, '临江市地铁5号线一期工程于12月28日正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的一条线路。开通首日，不少市民早早来到起点站滨河公园站排队体验。')
ON CONFLICT DO NOTHING;
-- Different news passes; the generated column holds the fingerprint the trigger computed.
INSERT INTO news VALUES (2, 'The city council approved the new budget on Tuesday after a long debate about funding for public libraries and parks.');
-- Text without words has no fingerprint and is never a duplicate.
INSERT INTO news VALUES (3, '。。。'), (4, '！！！');
SELECT id, simhash IS NULL AS no_fp, simhash = simhash(body) AS same FROM news ORDER BY id;

-- Near-duplicates inside one statement are caught too: multi-row INSERT, INSERT ... SELECT and
-- COPY check each row against the rows stored before it, the same statement's included.
INSERT INTO news VALUES
  (10, 'Heavy rain is expected across the northern provinces this weekend, and officials urged residents to prepare for flooding. Schools in three counties will close on Monday, and the weather service warned that rivers could rise quickly after the storm passes.'),
  (11, 'Heavy rain is expected across the northern provinces this weekend, and officials urged residents to prepare for possible flooding. Schools in three counties will close on Monday, and the weather service warned that rivers could rise quickly after the storm passes.');
CREATE TABLE incoming (id int, body text);
INSERT INTO incoming VALUES
  (20, 'Scientists have discovered a new species of frog in the rainforest, with bright blue legs and a distinctive call. The team spent two years recording the animals before publishing their findings in a scientific journal this week.'),
  (21, 'Scientists have discovered a new species of frog in the rainforest, with bright blue legs and a distinctive call. The team spent two years recording the animals before publishing their findings this week.');
INSERT INTO news SELECT id, body FROM incoming;
COPY news (id, body) FROM STDIN;
30	A local bakery won the national bread competition with a sourdough recipe passed down through four generations. The owners said they would use the prize money to train young bakers from the neighbourhood.
31	A local bakery won the national bread competition with a sourdough recipe that was passed down through four generations. The owners said they would use the prize money to train young bakers from the neighbourhood.
\.
SELECT count(*) FROM news;

-- UPDATE re-checks when the text changes, not counting the row itself; other columns and
-- unchanged text are not checked.
ALTER TABLE news ADD COLUMN views int DEFAULT 0;
UPDATE news SET views = views + 1 WHERE id = 1;
-- (Row 1 with a sentence appended is 8 bits from its old text: not a duplicate of itself.)
UPDATE news SET body = body || '据临江地铁集团介绍，5号线采用6节编组A型列车。' WHERE id = 1;
UPDATE news SET body = (SELECT body FROM news WHERE id = 1) || '！' WHERE id = 2;
\set VERBOSITY sqlstate
UPDATE news SET body = (SELECT body FROM news WHERE id = 1) || '！' WHERE id = 2;
\set VERBOSITY default
SELECT id, views, simhash = simhash(body) AS same FROM news ORDER BY id;

-- Errors in a statement roll back all of its rows, as for a unique constraint.
INSERT INTO news VALUES (40, 'A brand new story about the harbour festival.'), (41, (SELECT body FROM news WHERE id = 2));
SELECT count(*) FROM news WHERE id IN (40, 41);

-- ---------------------------------------------------------------------------------------------
-- skip: the near-duplicate is silently not stored, like ON CONFLICT DO NOTHING
-- ---------------------------------------------------------------------------------------------
CREATE TABLE feed (id bigint PRIMARY KEY, body text);
SELECT simdup_enable('feed', 'body', on_duplicate => 'skip');
-- RETURNING and the row counts show what was stored: 101 and 103, not their near-duplicates.
INSERT INTO feed VALUES
  (101, 'Heavy rain is expected across the northern provinces this weekend, and officials urged residents to prepare for flooding. Schools in three counties will close on Monday, and the weather service warned that rivers could rise quickly after the storm passes.'),
  (102, 'Heavy rain is expected across the northern provinces this weekend, and officials urged residents to prepare for possible flooding. Schools in three counties will close on Monday, and the weather service warned that rivers could rise quickly after the storm passes.'),
  (103, 'Scientists have discovered a new species of frog in the rainforest, with bright blue legs and a distinctive call. The team spent two years recording the animals before publishing their findings in a scientific journal this week.'),
  (104, 'Scientists have discovered a new species of frog in the rainforest, with bright blue legs and a distinctive call. The team spent two years recording the animals before publishing their findings this week.')
RETURNING id;
-- INSERT ... SELECT: copies of the stored rows are all skipped.
INSERT INTO feed SELECT id + 100, body FROM feed RETURNING id;
-- Of two near-duplicates in one statement, the first is stored.
INSERT INTO feed VALUES
  (301, 'The museum will reopen next month after a two-year renovation of its east wing and sculpture garden. Visitors will be able to see the restored ceiling paintings for the first time in decades.'),
  (302, 'The museum will reopen next month after a long renovation of its east wing and sculpture garden. Visitors will be able to see the restored ceiling paintings for the first time in many decades.')
RETURNING id;
COPY feed (id, body) FROM STDIN;
400	A local bakery won the national bread competition with a sourdough recipe passed down through four generations. The owners said they would use the prize money to train young bakers from the neighbourhood.
401	A local bakery won the national bread competition with a sourdough recipe that was passed down through four generations. The owners said they would use the prize money to train young bakers from the neighbourhood.
402	Train services between the two cities will be suspended on Sunday for track maintenance.
\.
\echo COPY :ROW_COUNT
SELECT id, left(body, 40) AS body FROM feed ORDER BY id;
-- An UPDATE that would make a row a near-duplicate is skipped: the row keeps its old text.
UPDATE feed SET body = (SELECT body FROM feed WHERE id = 101) WHERE id = 301;
SELECT id, left(body, 40) AS body FROM feed WHERE id = 301;

-- ---------------------------------------------------------------------------------------------
-- mark: every row is stored; dup_of (added by simdup_enable, of the primary key's type) holds
-- the smallest primary key among the existing rows within max_distance, NULL when none is
-- ---------------------------------------------------------------------------------------------
CREATE TABLE archive (code text PRIMARY KEY, body text);
SELECT simdup_enable('archive', 'body', on_duplicate => 'mark', max_distance => 6);
\d archive
INSERT INTO archive VALUES
  ('m', 'The museum will reopen next month after a two-year renovation of its east wing and sculpture garden. Visitors will be able to see the restored ceiling paintings for the first time in decades.'),
  ('k', 'The museum will reopen next month after a long renovation of its east wing and sculpture garden. Visitors will be able to see the restored ceiling paintings for the first time in many decades.'),
  ('z', 'The museum will reopen next month after a two-year renovation of its east wing and sculpture garden. Visitors will be able to see the restored ceiling paintings for the first time in decades.!'),
  ('a', 'Train services between the two cities will be suspended on Sunday for track maintenance.'),
  ('n', '。。。');
-- 'k' points at 'm', its only earlier near-duplicate. 'z' is at distance 0 from 'm' and 5 from
-- 'k', and points at 'k': "earliest" is the smallest primary key, not the nearest row.
SELECT code, dup_of, simhash <~> (SELECT simhash FROM archive WHERE code = a.dup_of) AS distance,
       simhash <~> (SELECT simhash FROM archive WHERE code = 'm') AS from_m
FROM archive a ORDER BY code;
-- A new text re-marks the row; a dup_of given by the application is overwritten.
UPDATE archive SET body = 'Train services between the two cities will be suspended on Sunday for urgent track maintenance.', dup_of = 'x' WHERE code = 'z';
INSERT INTO archive (code, body, dup_of) VALUES ('b', 'A completely different story about a chess tournament.', 'm');
SELECT code, dup_of FROM archive ORDER BY code;

-- ---------------------------------------------------------------------------------------------
-- max_distance: fixed per table at enable time
-- ---------------------------------------------------------------------------------------------
SET simdup.max_distance = 3;
CREATE TABLE strict3 (id int PRIMARY KEY, body text);
SELECT simdup_enable('strict3', 'body', on_duplicate => 'reject');
RESET simdup.max_distance;
SELECT tbl, on_duplicate, max_distance FROM simdup_tables WHERE tbl = 'strict3'::regclass;
-- Distance 5 is no near-duplicate at k = 3, although simdup.max_distance is now 10 again.
INSERT INTO strict3 VALUES
  (1, 'The museum will reopen next month after a two-year renovation of its east wing and sculpture garden. Visitors will be able to see the restored ceiling paintings for the first time in decades.'),
  (2, 'The museum will reopen next month after a long renovation of its east wing and sculpture garden. Visitors will be able to see the restored ceiling paintings for the first time in many decades.');
SELECT a.id, b.id, a.simhash <~> b.simhash AS distance FROM strict3 a, strict3 b WHERE a.id < b.id;
-- k + 1 lock stripes a row (pieces of the fingerprint; see core/src/locks.rs), held only while
-- the row is checked and written (its check window, src/dedup/window.rs): a transaction that
-- wrote 2,000 rows and stays open holds none (until 0.3.0 it held up to 640 at k = 10, to its
-- end). They are advisory locks under simdup's own tag (objsubid 21316), which pg_advisory_lock
-- (objsubid 1 or 2) cannot take: no role can hold them to stall dedup writers.
SELECT k, cardinality(_simdup_lock_stripes(simhash('PostgreSQL'), k)) AS stripes
FROM unnest('{0,3,10,63,64}'::int[]) k;
-- (Row by row: the bulk check, dedup_bulk.sql, would take a table lock instead after 100 rows.)
BEGIN;
SET LOCAL simdup.bulk_check = off;
INSERT INTO feed SELECT 1000 + g, 'Report ' || g || ': ' || (SELECT string_agg(md5(g || '/' || j), ' ') FROM generate_series(1, 12) j)
FROM generate_series(1, 2000) g;
SELECT count(*) AS locks_held_after_the_statement, (SELECT count(*) FROM feed WHERE id > 1000) AS rows_written
FROM pg_locks WHERE locktype = 'advisory' AND classid = 'feed'::regclass::oid AND pid = pg_backend_pid();
ROLLBACK;

-- ---------------------------------------------------------------------------------------------
-- An adopted bigint fingerprint column: the trigger reads the fingerprint from the new row
-- ---------------------------------------------------------------------------------------------
CREATE TABLE fps (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable('fps', NULL, 'fp', on_duplicate => 'reject', max_distance => 2);
INSERT INTO fps VALUES (1, 0), (2, 7), (3, NULL), (4, NULL);
INSERT INTO fps VALUES (5, 3);
UPDATE fps SET fp = 1 WHERE id = 2;
UPDATE fps SET fp = 6 WHERE id = 1;
SELECT * FROM fps ORDER BY id;

-- ---------------------------------------------------------------------------------------------
-- Errors, each with its SQLSTATE
-- ---------------------------------------------------------------------------------------------
CREATE TABLE nokey (body text);
CREATE TABLE twokey (a int, b int, body text, PRIMARY KEY (a, b));
CREATE TABLE parted (id int PRIMARY KEY, body text) PARTITION BY RANGE (id);
SELECT simdup_enable('strict3', 'body', on_duplicate => 'reject');
SELECT simdup_enable('incoming', 'body', on_duplicate => 'ignore');
SELECT simdup_enable('incoming', 'body', on_duplicate => 'reject', max_distance => 65);
SELECT simdup_enable('incoming', 'body', on_duplicate => 'reject', max_distance => -1);
SELECT simdup_enable('incoming', 'body', max_distance => 3);
SELECT simdup_enable('nokey', 'body', on_duplicate => 'skip');
SELECT simdup_enable('twokey', 'body', on_duplicate => 'skip');
SELECT simdup_enable('parted', 'body', on_duplicate => 'skip');
\set VERBOSITY sqlstate
SELECT simdup_enable('strict3', 'body', on_duplicate => 'reject');
SELECT simdup_enable('incoming', 'body', on_duplicate => 'ignore');
SELECT simdup_enable('incoming', 'body', on_duplicate => 'reject', max_distance => 65);
SELECT simdup_enable('incoming', 'body', max_distance => 3);
SELECT simdup_enable('nokey', 'body', on_duplicate => 'skip');
SELECT simdup_enable('parted', 'body', on_duplicate => 'skip');
\set VERBOSITY default
-- Nothing was changed by the failed calls.
SELECT count(*) FROM simdup_tables WHERE tbl IN ('incoming'::regclass, 'nokey'::regclass, 'twokey'::regclass, 'parted'::regclass);
\d incoming
DROP TABLE nokey, twokey, parted, incoming;
-- The trigger function checks how it is called.
CREATE TABLE misuse (id int PRIMARY KEY, body text);
CREATE TRIGGER t AFTER INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION simdup_dedup_trigger('reject', '10', 'body', 'body', 'id');
INSERT INTO misuse VALUES (1, 'x');
DROP TRIGGER t ON misuse;
CREATE TRIGGER t BEFORE INSERT ON misuse FOR EACH ROW EXECUTE FUNCTION simdup_dedup_trigger('reject', '10');
INSERT INTO misuse VALUES (1, 'x');
DROP TABLE misuse;

-- ---------------------------------------------------------------------------------------------
-- Names that need quoting, another schema, and a hostile search_path
-- ---------------------------------------------------------------------------------------------
CREATE SCHEMA "Dedup Schema";
CREATE TABLE "Dedup Schema"."News ""Quoted"" 表" ("Key" varchar(10) PRIMARY KEY, "Body Text" text);
SELECT simdup_enable('"Dedup Schema"."News ""Quoted"" 表"', 'Body Text', 'Fp "Col"', on_duplicate => 'mark');
\d "Dedup Schema"."News ""Quoted"" 表"
-- Functions and operators of the same names earlier on the search_path do not change what the
-- trigger computes: it calls simdup's own (schema-qualified) and pg_catalog's.
CREATE SCHEMA hijack;
CREATE FUNCTION hijack.hamming(bigint, bigint) RETURNS integer LANGUAGE sql AS 'SELECT 0';
CREATE FUNCTION hijack.simhash(text) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION hijack._simdup_key(bigint, integer) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint';
CREATE FUNCTION hijack.always(integer, integer) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR hijack.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = hijack.always);
CREATE FUNCTION hijack.never(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR hijack.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hijack.never);
SET search_path = hijack, public, pg_catalog;
INSERT INTO "Dedup Schema"."News ""Quoted"" 表" VALUES
  ('a''1', '今天天气很好，我们去公园散步，然后回家吃饭。'),
  ('B 2',  '今天天气很好，我们去公园散步，然后回家吃饭！'),
  ('c3',   'PostgreSQL 扩展 simdup 查找近似重复文档。');
RESET search_path;
SELECT "Key", dup_of, "Fp ""Col""" = simhash("Body Text") AS same FROM "Dedup Schema"."News ""Quoted"" 表" ORDER BY 1;
SELECT simdup_disable('"Dedup Schema"."News ""Quoted"" 表"');
\d "Dedup Schema"."News ""Quoted"" 表"
DROP SCHEMA hijack CASCADE;
DROP SCHEMA "Dedup Schema" CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Privileges: only the owner may enable; the check itself sees every row, whoever inserts
-- ---------------------------------------------------------------------------------------------
CREATE ROLE regress_dedup_owner;
CREATE ROLE regress_dedup_writer;
CREATE SCHEMA dedup_owned AUTHORIZATION regress_dedup_owner;
GRANT USAGE ON SCHEMA dedup_owned TO regress_dedup_writer;
SET ROLE regress_dedup_owner;
CREATE TABLE dedup_owned.posts (id int PRIMARY KEY, author name DEFAULT current_user, body text);
RESET ROLE;
SET ROLE regress_dedup_writer;
\set VERBOSITY sqlstate
SELECT simdup_enable('dedup_owned.posts', 'body', on_duplicate => 'reject');
\set VERBOSITY default
SELECT simdup_enable('dedup_owned.posts', 'body', on_duplicate => 'reject');
RESET ROLE;
SET ROLE regress_dedup_owner;
SELECT simdup_enable('dedup_owned.posts', 'body', on_duplicate => 'reject');
-- The writer may only INSERT, and row-level security hides the owner's rows from it.
ALTER TABLE dedup_owned.posts ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON dedup_owned.posts USING (author = current_user);
GRANT INSERT ON dedup_owned.posts TO regress_dedup_writer;
INSERT INTO dedup_owned.posts (id, body) VALUES (1, 'The harbour festival opens on Friday with fireworks, boat races and food stalls along the pier. Organisers expect more than twenty thousand visitors over the three days.');
RESET ROLE;
SET ROLE regress_dedup_writer;
-- Still rejected; the DETAIL does not show a key the writer may not read.
INSERT INTO dedup_owned.posts (id, body) VALUES (2, 'The harbour festival opens on Friday with fireworks, boat races and food stalls along the old pier. Organisers expect more than twenty thousand visitors over the three days.');
INSERT INTO dedup_owned.posts (id, body) VALUES (3, 'Tickets for the spring concert series go on sale at the town hall on Monday morning.');
RESET ROLE;
SELECT id, author FROM dedup_owned.posts ORDER BY id;
DROP SCHEMA dedup_owned CASCADE;
DROP ROLE regress_dedup_owner;
DROP ROLE regress_dedup_writer;

-- ---------------------------------------------------------------------------------------------
-- simdup_insert (JSON rows) and simdup_insert_select (a query): the checked write that also
-- works on Citus distributed tables; on a plain table the trigger checks each row. They return
-- the number of rows stored; columns are matched by name, others take their defaults.
-- ---------------------------------------------------------------------------------------------
SELECT simdup_insert('feed', '{"id": 501, "body": "Heavy rain is expected across the northern provinces this weekend, and officials urged residents to prepare for flooding. Schools in three counties will close on Monday, and the weather service warned that rivers could rise quickly after the storm passes!"}') AS stored;
SELECT simdup_insert('feed', '[{"id": 502, "body": "A chess prodigy aged nine drew with the world champion in an exhibition game on Saturday."},
                              {"id": 503, "body": "A chess prodigy aged nine drew with the world champion in an exhibition game on Saturday!"}]') AS stored;
SELECT simdup_insert_select('feed', $$SELECT id + 1000 AS id, body FROM feed WHERE id IN (101, 502) UNION ALL SELECT 1600, 'The city council approved a new bicycle lane network after two years of consultation.'$$) AS stored;
SELECT id, left(body, 40) AS body FROM feed WHERE id > 500 ORDER BY id;
SELECT simdup_insert('archive', '{"code": "p", "body": "The museum will reopen next month after a two-year renovation of its east wing and sculpture garden. Visitors will be able to see the restored ceiling paintings for the first time in decades!"}') AS stored;
SELECT code, dup_of FROM archive WHERE code = 'p';
SELECT simdup_insert('feed', '{"id": 504, "bdy": "x"}');
SELECT simdup_insert('feed', '[1, 2]');
CREATE TABLE plain_table (id int PRIMARY KEY, body text);
SELECT simdup_insert('plain_table', '{"id": 1, "body": "x"}');
DROP TABLE plain_table;
SELECT simdup_insert(NULL, '{}'), simdup_insert_select('feed', NULL);
-- A table named like a Citus shard (name_digits) on a server without Citus is an ordinary
-- table: its trigger checks the row (src/citus/shard.rs finds no shard metadata).
CREATE TABLE posts_2024 (id int PRIMARY KEY, body text);
SELECT simdup_enable('posts_2024', 'body', on_duplicate => 'reject', max_distance => 3);
INSERT INTO posts_2024 VALUES (1, 'The museum will reopen next month after a two-year renovation of its east wing and sculpture garden.');
INSERT INTO posts_2024 VALUES (2, 'The museum will reopen next month after a two-year renovation of its east wing and sculpture garden!');
DROP TABLE posts_2024;

-- ---------------------------------------------------------------------------------------------
-- Removing it
-- ---------------------------------------------------------------------------------------------
-- simdup_disable drops the trigger (and dup_of) with the rest.
SELECT simdup_disable('archive');
\d archive
-- Dropping the fingerprint column forgets the table and drops its trigger (event trigger), so
-- inserts keep working.
ALTER TABLE feed DROP COLUMN simhash;
\d feed
INSERT INTO feed VALUES (9999, (SELECT body FROM feed WHERE id = 101));
SELECT tbl FROM simdup_tables ORDER BY 1::text;

DROP TABLE news, feed, archive, strict3, fps;
SELECT count(*) AS rows_left FROM simdup_tables;
