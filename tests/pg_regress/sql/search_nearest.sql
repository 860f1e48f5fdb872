-- Exact nearest neighbours as a query: ORDER BY fp <~> q LIMIT n on a column with block
-- indexes is served by a Tid Scan of _simdup_nearest_tids(...), which returns every row within
-- the distance of the n-th nearest (ties included); the query's own sort and limit pick the
-- answer, so it is the full sort's. Compared here with the same queries with the planner step
-- off (a sequential scan and a sort), and the plans of the forms served and not served.
SELECT setseed(0.7);
-- 20,000 rows: clusters of near copies of 200 random bases (1 to 12 bits flipped, many ties),
-- random fingerprints, and 30 rows without a fingerprint.
CREATE TABLE nn (id int PRIMARY KEY, fp bigint);
INSERT INTO nn
SELECT g, hashint8extended(g % 200, 7)
       # (SELECT coalesce(bit_or(1::bigint << (hashint8extended(g * 64 + j, 9) & 62)::int), 0)
          FROM generate_series(1, (g / 200) % 13) j)
FROM generate_series(1, 15000) g;
INSERT INTO nn SELECT g, hashint8extended(g, 11) FROM generate_series(15001, 19970) g;
INSERT INTO nn SELECT g, NULL FROM generate_series(19971, 20000) g;
SELECT simdup_enable('nn', NULL, 'fp');
ANALYZE nn;

-- Queries: 20 bases (their clusters are near), 20 random values (nearest far away).
CREATE TEMP TABLE nq AS
SELECT 'base' AS kind, hashint8extended(b, 7) AS q FROM generate_series(0, 190, 10) b
UNION ALL SELECT 'far', hashint8extended(g, 13) FROM generate_series(1, 20) g;

-- EXPLAIN (COSTS OFF) without PostgreSQL 18's "Disabled: true" lines, the same on every major.
CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    CONTINUE WHEN l LIKE '%Disabled: true';
    RETURN NEXT l;
  END LOOP;
END $$;

-- The planner prices the search at the radius within which n rows would lie were fingerprints
-- uniform (about 18 bits for 5 of 20,000 rows): more than a sequential scan of a table this
-- small, so it keeps the sequential scan (on 1M rows the search is far cheaper, and chosen:
-- docs/performance.md).
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY fp <~> 1234567890123456789 LIMIT 5');
-- From here on enable_seqscan = off makes the planner take the index path where it exists.
SET enable_seqscan = off;
-- The served plans: a literal, ties broken by id, OFFSET, WITH TIES, hamming() for <~>.
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY fp <~> 1234567890123456789 LIMIT 5');
SELECT * FROM pg_temp.plan('SELECT id, fp <~> 1234567890123456789 AS d FROM nn ORDER BY d, id LIMIT 5 OFFSET 3');
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY hamming(fp, 1234567890123456789) FETCH FIRST 5 ROWS WITH TIES');

-- Every query, n = 1, 5, 50, 300 (past a cluster's size) and 19,990 (past every row with a
-- fingerprint: the NULLs sort last): served against sequential, three forms each.
-- (Each query is planned anew, with its literals, under the setting of that run.)
CREATE FUNCTION pg_temp.nearest_answers(use_index boolean, ns int[] DEFAULT '{1, 5, 50, 300, 19990}') RETURNS TABLE (form int, q bigint, n int, ids text)
LANGUAGE plpgsql AS $$
DECLARE
  qq bigint; nn_ int;
BEGIN
  PERFORM set_config('simdup.index_search', use_index::text, true);
  FOR qq IN SELECT nq.q FROM nq LOOP
    FOREACH nn_ IN ARRAY ns LOOP
      q := qq; n := nn_;
      form := 1;
      EXECUTE format('SELECT string_agg(id::text, '','') FROM (SELECT id FROM nn ORDER BY fp <~> %s, id LIMIT %s) x', qq, nn_) INTO ids;
      RETURN NEXT;
      form := 2;
      EXECUTE format('SELECT string_agg(id::text, '','') FROM (SELECT id FROM nn ORDER BY hamming(fp, %s), id DESC LIMIT %s OFFSET 2) x', qq, nn_) INTO ids;
      RETURN NEXT;
      form := 3; -- WITH TIES: compared as sets
      EXECUTE format('SELECT string_agg(id::text, '','' ORDER BY id) FROM (SELECT id FROM nn ORDER BY fp <~> %s FETCH FIRST %s ROWS WITH TIES) x', qq, nn_) INTO ids;
      RETURN NEXT;
    END LOOP;
  END LOOP;
END $$;
CREATE TEMP TABLE served AS SELECT * FROM pg_temp.nearest_answers(true);
-- The search widens its radius until n rows are within it, or reads the table once the next
-- radius would cost more than that (here: at once past 10 bits). Pricing the table's pages at
-- 1000 makes it widen up to 64 bits instead (n up to 50).
SET seq_page_cost = 1000;
CREATE TEMP TABLE served_wide AS SELECT * FROM pg_temp.nearest_answers(true, '{1, 5, 50}');
RESET seq_page_cost;
RESET enable_seqscan;
CREATE TEMP TABLE sequential AS SELECT * FROM pg_temp.nearest_answers(false);
SET enable_seqscan = off;
SELECT count(*) AS compared,
       count(*) FILTER (WHERE s.ids IS DISTINCT FROM q.ids) AS mismatches,
       count(w.ids) AS compared_wide,
       count(*) FILTER (WHERE w.ids IS DISTINCT FROM q.ids AND w.n IS NOT NULL) AS mismatches_wide
FROM served s JOIN sequential q USING (form, q, n) LEFT JOIN served_wide w USING (form, q, n);
-- And those queries were served: the plan of each with its literal.
SELECT count(*) AS queries,
       count(*) FILTER (WHERE (SELECT string_agg(l, ' ') FROM pg_temp.plan(format('SELECT id FROM nn ORDER BY fp <~> %s, id LIMIT 5', q)) l)
                              ~ '_simdup_nearest_tids') AS served
FROM nq;

-- Prepared statements: q and n parameters, and an offset (generic plans).
SET plan_cache_mode = force_generic_plan;
PREPARE near(bigint, bigint) AS SELECT id FROM nn ORDER BY fp <~> $1, id LIMIT $2;
SELECT * FROM pg_temp.plan('EXECUTE near(0, 5)');
PREPARE near_offset(bigint, bigint, bigint) AS SELECT id FROM nn ORDER BY fp <~> $1, id LIMIT $2 OFFSET $3;
SELECT * FROM pg_temp.plan('EXECUTE near_offset(0, 5, 10)');
SELECT q AS q0 FROM nq WHERE kind = 'base' LIMIT 1 \gset
EXECUTE near(:q0, 4);
EXECUTE near_offset(:q0, 3, 2);
-- LIMIT NULL is no limit, an OFFSET of NULL none: every row, as the query says.
CREATE TEMP TABLE every_row AS EXECUTE near(:q0, NULL);
SELECT count(*) FROM every_row;
RESET plan_cache_mode;
SELECT count(*) FROM (SELECT id FROM nn ORDER BY fp <~> :q0 LIMIT NULL) x;
SELECT count(*) FROM (SELECT id FROM nn ORDER BY fp <~> :q0 LIMIT 3 OFFSET NULL) x;
SELECT id FROM nn ORDER BY fp <~> :q0, id LIMIT 0;

-- Through a view (pulled up into the query) and a view with a condition (not served).
CREATE VIEW nn_all AS SELECT id, fp FROM nn;
CREATE VIEW nn_some AS SELECT id, fp FROM nn WHERE id > 100;
SELECT * FROM pg_temp.plan('SELECT id FROM nn_all ORDER BY fp <~> 0, id LIMIT 5');
SELECT * FROM pg_temp.plan('SELECT id FROM nn_some ORDER BY fp <~> 0, id LIMIT 5');
SELECT (SELECT array_agg(id) FROM (SELECT id FROM nn_all ORDER BY fp <~> :q0, id LIMIT 7) x)
     = (SELECT array_agg(id) FROM (SELECT id FROM nn ORDER BY fp <~> :q0, id + 0 LIMIT 7) x) AS same_as_table;
DROP VIEW nn_all, nn_some;

-- Nearest per outer row: a correlated subquery (q is the outer row's, a parameter).
SELECT * FROM pg_temp.plan('SELECT nq.kind, (SELECT n.id FROM nn n ORDER BY n.fp <~> nq.q, n.id LIMIT 1) FROM nq');
SELECT count(*) FILTER (WHERE a IS DISTINCT FROM b) AS mismatches FROM (
  SELECT (SELECT n.id FROM nn n ORDER BY n.fp <~> nq.q, n.id LIMIT 1) AS a,
         (SELECT n.id FROM nn n ORDER BY n.fp <~> nq.q + 0, n.id + 0 LIMIT 1) AS b
  FROM nq) x;

-- Not served: where something between the scan and the limit could drop or add rows (a WHERE,
-- a join, DISTINCT, GROUP BY), descending order or NULLS FIRST, LIMIT ALL, a sort key that is
-- not the distance first, a q that reads the row, FOR UPDATE, and a table without block indexes.
SELECT * FROM pg_temp.plan('SELECT id FROM nn WHERE id > 10 ORDER BY fp <~> 0 LIMIT 5');
SELECT * FROM pg_temp.plan('SELECT n.id FROM nn n JOIN nq ON true ORDER BY n.fp <~> 0 LIMIT 5');
-- (DISTINCT and GROUP BY: whether served only; the aggregate strategy differs between majors.)
SELECT q AS query, bool_or(l ~ '_simdup_nearest_tids') AS served
FROM unnest(ARRAY['SELECT DISTINCT fp <~> 0 AS d FROM nn ORDER BY 1 LIMIT 5',
                  'SELECT fp <~> 0 AS d, count(*) FROM nn GROUP BY 1 ORDER BY 1 LIMIT 5']) q,
     LATERAL pg_temp.plan(q) l
GROUP BY q ORDER BY q;
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY fp <~> 0 DESC LIMIT 5');
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY fp <~> 0 NULLS FIRST LIMIT 5');
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY fp <~> 0 LIMIT ALL');
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY id, fp <~> 0 LIMIT 5');
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY fp <~> id LIMIT 5');
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY fp <~> 0 LIMIT 5 FOR UPDATE');
CREATE TABLE nn_plain AS SELECT * FROM nn;
ANALYZE nn_plain;
SELECT * FROM pg_temp.plan('SELECT id FROM nn_plain ORDER BY fp <~> 0 LIMIT 5');
DROP TABLE nn_plain;

RESET enable_seqscan;
-- Under row-level security for the querying role, the policies filter a sequential scan.
CREATE ROLE nn_reader;
GRANT SELECT ON nn TO nn_reader;
ALTER TABLE nn ENABLE ROW LEVEL SECURITY;
CREATE POLICY nn_even ON nn TO nn_reader USING (id % 2 = 0);
SET ROLE nn_reader;
SET enable_seqscan = off;
SELECT * FROM pg_temp.plan('SELECT id FROM nn ORDER BY fp <~> 0 LIMIT 5');
SELECT bool_and(id % 2 = 0) AS only_even, count(*) FROM (SELECT id FROM nn ORDER BY fp <~> :q0 LIMIT 5) x;
-- A direct call of the search function is refused.
SELECT _simdup_nearest_tids('nn'::regclass, 2, 0, 5);
RESET enable_seqscan;
RESET ROLE;
DROP POLICY nn_even ON nn;
ALTER TABLE nn DISABLE ROW LEVEL SECURITY;
REVOKE SELECT ON nn FROM nn_reader;
DROP ROLE nn_reader;

-- simdup_nearest is a query of the served form.
SELECT count(*) AS rows, min(distance), max(distance) FROM simdup_nearest('nn', :q0, 20, 'fp');
\set SHOW_CONTEXT never
SELECT * FROM simdup_nearest('nn', 0, -1, 'fp');
SELECT _simdup_nearest_tids('nn'::regclass, 2, 0, -1);
\set SHOW_CONTEXT errors
SELECT _simdup_nearest_tids('nn'::regclass, 2, NULL, 5) IS NULL AS null_in_null_out;

DROP TABLE nn;
