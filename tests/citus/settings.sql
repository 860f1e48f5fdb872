-- The checked write stores the values the writer's statement gave, whatever the writer's
-- session settings: a distributed dedup table written under
-- standard_conforming_strings = off, DateStyle = 'SQL, DMY', IntervalStyle = sql_standard,
-- extra_float_digits = -3, bytea_output = escape, TimeZone = 'Asia/Shanghai', and all of them
-- at once, by one-row INSERT ... VALUES, multi-row VALUES, prepared INSERTs (generic and custom
-- plans), COPY FROM STDIN, INSERT ... SELECT from a distributed table, text-changing UPDATEs
-- (literals, an expression of the stored values, prepared) and RETURNING, stores exactly the rows a local table with the same dedup trigger
-- stores given the same statements, compared as text under fixed settings. The writer is an
-- ordinary role with INSERT and UPDATE, and SELECT on the columns its WHERE clauses and
-- expressions read. check_that() is from checks.sql.
\set ON_ERROR_STOP 1
\set VERBOSITY terse
SET citus.shard_count = 4;
SET client_min_messages = warning;

CREATE ROLE settings_writer LOGIN;
CREATE TABLE st_dist (id bigint PRIMARY KEY, body text, d date, iv interval, f float8, b bytea, tz timestamptz, ts timestamp);
SELECT create_distributed_table('st_dist', 'id');
SELECT simdup_enable_similar('st_dist', 'body', 0.5, on_duplicate => 'reject');
CREATE TABLE st_local (LIKE st_dist);
ALTER TABLE st_local ADD PRIMARY KEY (id);
SELECT simdup_enable_similar('st_local', 'body', 0.5, on_duplicate => 'reject');
GRANT INSERT, UPDATE, SELECT (id, body, d, iv, f, tz, ts) ON st_dist, st_local TO settings_writer;
-- (A checked UPDATE reads each row's ctid as the writer, through Citus: SELECT on it too.)
GRANT SELECT (ctid) ON st_dist TO settings_writer;
-- A row to INSERT ... SELECT from: distributed for the distributed round, local for the local.
CREATE TABLE st_src (LIKE st_dist);
SELECT create_distributed_table('st_src', 'id');
INSERT INTO st_src VALUES (1, 'Nimble otters\\juggle pebbles by the reedy shore', '2019-05-06', '-1 day -02:03:04',
  0.7071067811865476, '\\x00ff', '2019-05-06 07:08:09+00', '2019-05-06 07:08:09');
CREATE TABLE st_src_local AS SELECT * FROM st_src;
GRANT SELECT ON st_src, st_src_local TO settings_writer;

-- The rows of both tables, pulled to the coordinator, as text under fixed settings: NULL when
-- they are equal, else the rows that differ.
CREATE FUNCTION settings_diff() RETURNS text LANGUAGE plpgsql
SET DateStyle = 'ISO, MDY' SET IntervalStyle = postgres SET extra_float_digits = 3
SET bytea_output = hex SET TimeZone = 'UTC' SET standard_conforming_strings = on AS $$
DECLARE diff text;
BEGIN
  CREATE TEMP TABLE st_got AS SELECT * FROM st_dist;
  SELECT string_agg(format('id %s: distributed %s, local %s', id, g.r, l.r), '; ' ORDER BY id) INTO diff
    FROM (SELECT id, s::text AS r FROM st_got s) g FULL JOIN (SELECT id, s::text AS r FROM st_local s) l USING (id)
   WHERE g.r IS DISTINCT FROM l.r;
  DROP TABLE st_got;
  RETURN diff;
END $$;

-- One round: both tables emptied, the same writes into each under :set_cmd, then the rows and
-- the RETURNING rows compared.
\set writer settings_writer
\set round_begin 'TRUNCATE st_dist; TRUNCATE st_local;'
\set open ''
\set close ''

-- standard_conforming_strings = off. First the case that was broken: S, 80 short words
-- joined by two backslashes, stored (by the owner, standard strings); then the writer sends T,
-- the same words joined by one backslash (written '\\' with standard_conforming_strings off),
-- no near-duplicate of S: T is stored as T, not with its backslashes doubled (= S).
:round_begin
INSERT INTO st_dist (id, body) SELECT 100, string_agg('w' || i, '\\' ORDER BY i) FROM generate_series(1, 80) i;
INSERT INTO st_local (id, body) SELECT 100, string_agg('w' || i, '\\' ORDER BY i) FROM generate_series(1, 80) i;
SET ROLE settings_writer;
SET standard_conforming_strings = off;
SET escape_string_warning = off;
INSERT INTO st_dist VALUES (101, 'w1\\w2\\w3\\w4\\w5\\w6\\w7\\w8\\w9\\w10\\w11\\w12\\w13\\w14\\w15\\w16\\w17\\w18\\w19\\w20\\w21\\w22\\w23\\w24\\w25\\w26\\w27\\w28\\w29\\w30\\w31\\w32\\w33\\w34\\w35\\w36\\w37\\w38\\w39\\w40\\w41\\w42\\w43\\w44\\w45\\w46\\w47\\w48\\w49\\w50\\w51\\w52\\w53\\w54\\w55\\w56\\w57\\w58\\w59\\w60\\w61\\w62\\w63\\w64\\w65\\w66\\w67\\w68\\w69\\w70\\w71\\w72\\w73\\w74\\w75\\w76\\w77\\w78\\w79\\w80');
INSERT INTO st_local VALUES (101, 'w1\\w2\\w3\\w4\\w5\\w6\\w7\\w8\\w9\\w10\\w11\\w12\\w13\\w14\\w15\\w16\\w17\\w18\\w19\\w20\\w21\\w22\\w23\\w24\\w25\\w26\\w27\\w28\\w29\\w30\\w31\\w32\\w33\\w34\\w35\\w36\\w37\\w38\\w39\\w40\\w41\\w42\\w43\\w44\\w45\\w46\\w47\\w48\\w49\\w50\\w51\\w52\\w53\\w54\\w55\\w56\\w57\\w58\\w59\\w60\\w61\\w62\\w63\\w64\\w65\\w66\\w67\\w68\\w69\\w70\\w71\\w72\\w73\\w74\\w75\\w76\\w77\\w78\\w79\\w80');
RESET standard_conforming_strings;
RESET escape_string_warning;
RESET ROLE;
SELECT check_that('standard_conforming_strings = off, the reproduction: T (80 words joined by one backslash) stored as sent, not as S (joined by two) that a reject similarity table holds',
  (SELECT body FROM st_dist WHERE id = 101) = (SELECT replace(body, '\\', '\') FROM st_local WHERE id = 100)
  AND (SELECT body FROM st_dist WHERE id = 101) <> (SELECT body FROM st_dist WHERE id = 100)
  AND (SELECT jaccard(a.body, b.body) < 0.5 FROM st_local a, st_local b WHERE a.id = 100 AND b.id = 101)
  AND settings_diff() IS NULL, coalesce(settings_diff(), ''));

\set set_cmd 'SET standard_conforming_strings = off; SET escape_string_warning = off;'
\set label 'standard_conforming_strings = off: INSERT (one row, several, prepared generic and custom, ... SELECT), COPY, UPDATE (literals, an expression, prepared) and RETURNING: the local table''s rows'
\set rows 12
\ir settings_round.sql

-- DateStyle = 'SQL, DMY'
:round_begin
\set set_cmd 'SET DateStyle = ''SQL, DMY'';'
\set label 'DateStyle = ''SQL, DMY'': the same writes store the local table''s rows'
\set rows 10
\ir settings_round.sql

-- IntervalStyle = sql_standard
:round_begin
\set set_cmd 'SET IntervalStyle = sql_standard;'
\set label 'IntervalStyle = sql_standard: the same writes store the local table''s rows'
\set rows 10
\ir settings_round.sql

-- extra_float_digits = -3
:round_begin
\set set_cmd 'SET extra_float_digits = -3;'
\set label 'extra_float_digits = -3: the same writes store the local table''s rows'
\set rows 10
\ir settings_round.sql

-- bytea_output = escape
:round_begin
\set set_cmd 'SET bytea_output = escape;'
\set label 'bytea_output = escape: the same writes store the local table''s rows'
\set rows 10
\ir settings_round.sql

-- TimeZone = 'Asia/Shanghai'
:round_begin
\set set_cmd 'SET TimeZone = ''Asia/Shanghai'';'
\set label 'TimeZone = ''Asia/Shanghai'': the same writes store the local table''s rows'
\set rows 10
\ir settings_round.sql

-- all of them at once
:round_begin
\set set_cmd 'SET standard_conforming_strings = off; SET escape_string_warning = off; SET DateStyle = ''SQL, DMY''; SET IntervalStyle = sql_standard; SET extra_float_digits = -3; SET bytea_output = escape; SET TimeZone = ''Asia/Shanghai'';'
\set label 'all of them at once: the same writes store the local table''s rows'
\set rows 10
\ir settings_round.sql

-- all of them at once, with SET LOCAL in one transaction per table, sent to the workers too
-- (citus.propagate_set_commands = local): the checked write sets its own again on the workers
-- before its statements. As the owner: Citus refuses a placement to a user in a transaction
-- where another user wrote it (the checked write writes as the owner), and the UPDATEs read
-- the rows as the writer.
:round_begin
\set writer postgres
\set set_cmd 'SET LOCAL citus.propagate_set_commands = local; SET LOCAL standard_conforming_strings = off; SET LOCAL escape_string_warning = off; SET LOCAL DateStyle = ''SQL, DMY''; SET LOCAL IntervalStyle = sql_standard; SET LOCAL extra_float_digits = -3; SET LOCAL bytea_output = escape; SET LOCAL TimeZone = ''Asia/Shanghai'';'
\set open 'BEGIN;'
\set close 'COMMIT;'
\set label 'all of them at once, SET LOCAL in a transaction and sent to the workers: the same writes store the local table''s rows'
\set rows 10
\ir settings_round.sql
