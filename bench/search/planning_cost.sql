-- What the planner step adds to planning a served query, hook on against hook off
-- (simdup.index_search), 201 alternating plans in one session, medians; then one query's plan
-- with its buffers. Needs a table t (id, fp) with simdup_enable('t', NULL, 'fp'), e.g.
--   CREATE TABLE t (id int PRIMARY KEY, fp bigint);
--   INSERT INTO t SELECT g, hashint8extended(g, 7) FROM generate_series(1, 1000000) g;
--   SELECT simdup_enable('t', NULL, 'fp'); ANALYZE t;
-- Run: psql -f bench/search/planning_cost.sql (three times; quote the medians).
\o /dev/null
SELECT 1 FROM t WHERE hamming(fp, 1234567) <= 10;
\o
DO $$
DECLARE on_ms float8[] := '{}'; off_ms float8[] := '{}'; r json; i int;
BEGIN
  FOR i IN 1..201 LOOP
    SET LOCAL simdup.index_search = on;
    EXECUTE 'EXPLAIN (FORMAT JSON, SUMMARY) SELECT id FROM t WHERE hamming(fp, ' || (1000 + i) || ') <= 10' INTO r;
    on_ms := on_ms || (r->0->>'Planning Time')::float8;
    SET LOCAL simdup.index_search = off;
    EXECUTE 'EXPLAIN (FORMAT JSON, SUMMARY) SELECT id FROM t WHERE hamming(fp, ' || (1000 + i) || ') <= 10' INTO r;
    off_ms := off_ms || (r->0->>'Planning Time')::float8;
  END LOOP;
  RAISE NOTICE 'planning ms, median of 201: index_search on %, off %, added %',
    (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(on_ms) x),
    (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(off_ms) x),
    (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(on_ms) x) - (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(off_ms) x);
END $$;
EXPLAIN (ANALYZE, BUFFERS, SUMMARY) SELECT id FROM t WHERE hamming(fp, 1234567) <= 10;
