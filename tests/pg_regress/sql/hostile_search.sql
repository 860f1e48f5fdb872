-- The search path against hostile or unusual use: partitioned tables, missing relations, rows a
-- statement locks or modifies, generic plans, views, and direct calls of the internal search.
SET client_min_messages = warning;
CREATE TABLE hs (id int PRIMARY KEY, fp bigint, note text);
INSERT INTO hs SELECT g, hashint8extended(g, 7), '' FROM generate_series(1, 30000) g;
-- three near-duplicates of row 1 (distance 2)
UPDATE hs SET fp = (SELECT fp FROM hs WHERE id = 1) # 3 WHERE id IN (20002, 20003, 20004);
SELECT simdup_enable('hs', NULL, 'fp');
ANALYZE hs;
CREATE FUNCTION hs_q() RETURNS bigint LANGUAGE sql STABLE AS 'SELECT fp FROM hs WHERE id = 1';

-- A partitioned table: the search functions refuse it (42809) instead of crashing; the query
-- form runs on every partition and equals a sequential scan.
CREATE TABLE hp (id int PRIMARY KEY, body text) PARTITION BY RANGE (id);
CREATE TABLE hp1 PARTITION OF hp FOR VALUES FROM (0) TO (1000);
CREATE TABLE hp2 PARTITION OF hp FOR VALUES FROM (1000) TO (2000);
SELECT simdup_enable('hp', 'body');
INSERT INTO hp SELECT g, 'document number ' || g || ' about ' || md5(g::text) FROM generate_series(0, 1999) g;
\set VERBOSITY default
SELECT * FROM simdup_nearest('hp', simhash('document number 5 about'), 3);
SELECT count(*) FROM simdup_nearest('hp1', simhash('document number 5 about'), 3);
SELECT count(*) FROM hp WHERE hamming(simhash, simhash('document number 5 about')) <= 12;
SET simdup.index_search = off;
SELECT count(*) FROM hp WHERE hamming(simhash, simhash('document number 5 about')) <= 12;
RESET simdup.index_search;
-- No such relation: 42P01, not an internal error.
SELECT _simdup_tids(0, 1, 1, 1);
SELECT * FROM _simdup_block_indexes(0, 1);
\set VERBOSITY terse

-- Rows the statement locks or modifies get no index path (EvalPlanQual would recheck the tid
-- condition on a concurrently updated row's new version): the sequential scan's answer.
-- (Plans without PostgreSQL 18's "Disabled: true" lines, the same on every major.)
CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    CONTINUE WHEN l LIKE '%Disabled: true';
    RETURN NEXT l;
  END LOOP;
END $$;
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan('SELECT id FROM hs WHERE hamming(fp, hs_q()) <= 3');
SELECT * FROM pg_temp.plan('SELECT id FROM hs WHERE hamming(fp, hs_q()) <= 3 FOR UPDATE');
SELECT * FROM pg_temp.plan('DELETE FROM hs WHERE hamming(fp, hs_q()) <= 3');
SELECT * FROM pg_temp.plan($$UPDATE hs SET note = 'x' WHERE hamming(fp, hs_q()) <= 3$$);
-- ... but a table only read in such a statement keeps it (its rows are re-read as they were).
SELECT * FROM pg_temp.plan($$UPDATE hs h SET note = 'x' FROM hs m WHERE hamming(m.fp, hs_q()) <= 3 AND h.id = m.id + 1$$);
BEGIN;
UPDATE hs h SET note = 'next of a match' FROM hs m WHERE hamming(m.fp, hs_q()) <= 3 AND h.id = m.id + 1 RETURNING h.id;
ROLLBACK;
SELECT id FROM hs WHERE hamming(fp, hs_q()) <= 3 ORDER BY id FOR UPDATE;
RESET enable_seqscan;

-- A generic plan of hamming(fp, q) < $1: k - 1 never overflows ($1 = -2147483648 finds
-- nothing, as a sequential scan does), and simdup.index_search = off is honoured by the cached
-- plan (every row goes through the filter).
PREPARE lt(int) AS SELECT count(*) FROM hs WHERE hamming(fp, hs_q()) < $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE lt(3);
EXECUTE lt(-2147483648);
EXECUTE lt(0);
EXECUTE lt(3);
SET simdup.index_search = off;
EXECUTE lt(3);
EXECUTE lt(65);
RESET simdup.index_search;
EXECUTE lt(65);
RESET plan_cache_mode;
DEALLOCATE lt;

-- Views: a role that may read the view but not its table gets the view's rows through the
-- index path (PostgreSQL checks the table as the view's owner); calling the internal search
-- directly still needs SELECT on the table.
CREATE ROLE hs_viewer;
CREATE VIEW hs_v AS SELECT id, fp FROM hs;
CREATE VIEW hs_sb WITH (security_barrier) AS SELECT id, fp FROM hs WHERE id % 2 = 0;
GRANT SELECT ON hs_v, hs_sb TO hs_viewer;
GRANT EXECUTE ON FUNCTION hs_q() TO hs_viewer;
SET ROLE hs_viewer;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM hs_v WHERE hamming(fp, -1) <= 3;
SELECT id FROM hs_v WHERE hamming(fp, (SELECT fp FROM hs_v WHERE id = 1)) <= 3 ORDER BY id;
SELECT id FROM hs_sb WHERE hamming(fp, (SELECT fp FROM hs_v WHERE id = 1)) <= 3 ORDER BY id;
SET simdup.index_search = off;
SELECT id FROM hs_v WHERE hamming(fp, (SELECT fp FROM hs_v WHERE id = 1)) <= 3 ORDER BY id;
SELECT id FROM hs_sb WHERE hamming(fp, (SELECT fp FROM hs_v WHERE id = 1)) <= 3 ORDER BY id;
RESET simdup.index_search;
RESET enable_seqscan;
SELECT _simdup_tids('hs'::regclass, 2, 1, 3);
SELECT * FROM hs WHERE hamming(fp, 1) <= 3;
RESET ROLE;
DROP VIEW hs_v, hs_sb;
REVOKE EXECUTE ON FUNCTION hs_q() FROM hs_viewer;
DROP ROLE hs_viewer;
DROP TABLE hs, hp;
DROP FUNCTION hs_q();
