-- PL/pgSQL line numbers in error CONTEXT lines would tie this output to function bodies.
\set SHOW_CONTEXT never
-- simdup_pairs and simdup_groups against a brute-force self-join, for several k.
SELECT setseed(0.7);
CREATE TABLE bt (id int PRIMARY KEY, fp bigint);
-- (Random 64-bit values from hashint8extended, uniform over all 64 bits.)
-- 400 clusters: a random centre and 0..6 variants 0..14 bits away (random bits), 500 lone
-- random rows, 60 copies of one fingerprint (identical documents), 5 copies of another, rows
-- without a fingerprint.
CREATE TEMP TABLE centres AS
SELECT c, hashint8extended(c, 3) AS fp, (random() * 6)::int AS variants
FROM generate_series(1, 400) c;
CREATE FUNCTION pg_temp.flip_random(fp bigint, n int) RETURNS bigint LANGUAGE sql AS $$
  SELECT fp # coalesce((SELECT bit_or(CASE WHEN b = 63 THEN (-9223372036854775807 - 1)::bigint
                                         ELSE 1::bigint << b END)
                        FROM (SELECT b FROM generate_series(0, 63) b ORDER BY random() LIMIT n) s), 0)
$$;
CREATE SEQUENCE bt_id;
INSERT INTO bt SELECT nextval('bt_id'), fp FROM centres;
INSERT INTO bt
SELECT nextval('bt_id'), pg_temp.flip_random(c.fp, (random() * 14)::int)
FROM centres c, LATERAL generate_series(1, c.variants) v;
INSERT INTO bt SELECT nextval('bt_id'), hashint8extended(g, 4) FROM generate_series(1, 500) g;
INSERT INTO bt SELECT nextval('bt_id'), 4242424242424242 FROM generate_series(1, 60);
INSERT INTO bt SELECT nextval('bt_id'), pg_temp.flip_random(4242424242424242, 2) FROM generate_series(1, 1);
INSERT INTO bt SELECT nextval('bt_id'), -77 FROM generate_series(1, 5);
INSERT INTO bt SELECT nextval('bt_id'), NULL FROM generate_series(1, 3);
SELECT count(*) AS rows, count(DISTINCT fp) AS fingerprints FROM bt;
SELECT simdup_enable('bt', NULL, 'fp');
ANALYZE bt;

-- Brute force: every pair of rows within distance 12 (the largest k below), by a nested loop.
CREATE TEMP TABLE brute AS
SELECT x.id::text AS a, y.id::text AS b, hamming(x.fp, y.fp) AS distance
FROM bt x JOIN bt y ON x.id < y.id AND hamming(x.fp, y.fp) <= 12;
CREATE FUNCTION pg_temp.brute_pairs(k int) RETURNS TABLE (a text, b text, distance int)
LANGUAGE sql AS $$ SELECT a, b, distance FROM brute WHERE distance <= k $$;

SELECT k,
       (SELECT count(*) FROM simdup_pairs('bt', k)) AS pairs,
       (SELECT count(*) FROM pg_temp.brute_pairs(k)) AS brute_pairs,
       (SELECT count(*) FROM ((SELECT * FROM simdup_pairs('bt', k) EXCEPT ALL SELECT * FROM pg_temp.brute_pairs(k))
                              UNION ALL
                              (SELECT * FROM pg_temp.brute_pairs(k) EXCEPT ALL SELECT * FROM simdup_pairs('bt', k))) x) AS mismatches
FROM unnest(ARRAY[0, 1, 3, 4, 6, 8, 10, 12]) k;

-- Each pair once, a < b in the key's order (integer order here, not text order).
SELECT count(*) FILTER (WHERE a::int >= b::int) AS misordered,
       count(*) - count(DISTINCT (a, b)) AS repeated
FROM simdup_pairs('bt', 6);

-- Groups: connected components of the brute-force pairs, by label propagation.
CREATE FUNCTION pg_temp.brute_groups(k int) RETURNS TABLE (id int, label int)
LANGUAGE plpgsql AS $$
DECLARE changed bigint;
BEGIN
  CREATE TEMP TABLE edges ON COMMIT DROP AS SELECT a::int AS a, b::int AS b FROM pg_temp.brute_pairs(k);
  CREATE TEMP TABLE lab ON COMMIT DROP AS
    SELECT x.id, x.id AS label FROM (SELECT a AS id FROM edges UNION SELECT b FROM edges) x;
  LOOP
    WITH m AS (
      SELECT l.id, least(l.label, min(n.label)) AS label
      FROM lab l
      JOIN (SELECT a AS x, b AS y FROM edges UNION ALL SELECT b, a FROM edges) e ON e.x = l.id
      JOIN lab n ON n.id = e.y
      GROUP BY l.id, l.label)
    UPDATE lab SET label = m.label FROM m WHERE lab.id = m.id AND lab.label > m.label;
    GET DIAGNOSTICS changed = ROW_COUNT;
    EXIT WHEN changed = 0;
  END LOOP;
  RETURN QUERY SELECT lab.id, lab.label FROM lab;
  DROP TABLE lab, edges;
END $$;

CREATE TEMP TABLE group_check (k int, grouped bigint, groups bigint, brute_rows bigint,
                               brute_groups bigint, same_partition boolean, numbered_by_smallest_key boolean);
DO $$
DECLARE k int;
BEGIN
  FOREACH k IN ARRAY ARRAY[0, 3, 6, 10] LOOP
    CREATE TEMP TABLE g AS SELECT key::int AS id, group_id FROM simdup_groups('bt', k);
    CREATE TEMP TABLE bg AS SELECT * FROM pg_temp.brute_groups(k);
    INSERT INTO group_check
    SELECT k, (SELECT count(*) FROM g), (SELECT count(DISTINCT group_id) FROM g),
           (SELECT count(*) FROM bg), (SELECT count(DISTINCT label) FROM bg),
           -- same rows, and a bijection between group ids and brute-force labels
           (SELECT count(*) FROM g FULL JOIN bg USING (id) WHERE g.id IS NULL OR bg.id IS NULL) = 0
             AND (SELECT count(DISTINCT (g.group_id, bg.label)) FROM g JOIN bg USING (id))
                 = (SELECT count(DISTINCT label) FROM bg)
             AND (SELECT count(DISTINCT group_id) FROM g) = (SELECT count(DISTINCT label) FROM bg),
           -- group 1 holds the smallest key, and groups are numbered by their smallest key
           (SELECT array_agg(group_id ORDER BY m) = array_agg(group_id ORDER BY group_id)
                   AND min(group_id) = 1 AND max(group_id) = count(*)
            FROM (SELECT group_id, min(id) AS m FROM g GROUP BY group_id) s);
    DROP TABLE g, bg;
  END LOOP;
END $$;
SELECT * FROM group_check ORDER BY k;

-- The 60 identical rows and their 2-bit neighbour form one group at k = 3.
SELECT count(*) AS members, count(DISTINCT group_id) AS groups
FROM simdup_groups('bt', 3) g JOIN bt ON bt.id = g.key::int
WHERE hamming(bt.fp, 4242424242424242) <= 2;

-- Skew: 2000 identical fingerprints give 1,999,000 pairs (the output itself), computed
-- without an all-pairs scan of the other rows.
CREATE TABLE skew (id int PRIMARY KEY, fp bigint);
INSERT INTO skew SELECT g, CASE WHEN g <= 2000 THEN 99 ELSE hashint8extended(g, 5) END
FROM generate_series(1, 5000) g;
SELECT simdup_enable('skew', NULL, 'fp');
SELECT count(*), min(distance), max(distance) FROM simdup_pairs('skew', 3);
SELECT count(*), count(DISTINCT group_id) FROM simdup_groups('skew', 3);

-- Inside parallel queries: the queries run by simdup_pairs / simdup_groups get parallel plans
-- here, so their leader is in parallel mode, where nothing may assign a transaction ID (the
-- Rust side uses read-only SPI only).
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT x.id, y.id FROM skew x JOIN skew y ON x.fp = y.fp AND x.id < y.id;
SELECT count(*) FROM simdup_pairs('skew', 3);
SELECT count(*), count(DISTINCT group_id) FROM simdup_groups('bt', 3);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- The default k is simdup.max_distance.
SET simdup.max_distance = 0;
SELECT count(*) FROM simdup_pairs('bt') WHERE distance > 0;
SELECT count(*) = (SELECT count(*) FROM simdup_pairs('bt', 0)) AS default_is_guc FROM simdup_pairs('bt');
RESET simdup.max_distance;

-- Groups that do not chain: a chain 0 - 1 - 3 - 7 (each one bit from the next) at k = 1 is
-- one connected component, but two leader groups, {1, 2} and {3, 4}: every member is within
-- k of its group's first row. Rows 5 and 6 are identical: a group either way.
CREATE TABLE chain (id int PRIMARY KEY, fp bigint);
INSERT INTO chain VALUES (1, 0), (2, 1), (3, 3), (4, 7), (5, 7::bigint << 40), (6, 7::bigint << 40);
SELECT simdup_enable('chain', NULL, 'fp');
SELECT * FROM simdup_groups('chain', 1);
SELECT * FROM simdup_groups('chain', 1, 'leader');
-- On the larger table: every member within k of its group's leader (its smallest key), each
-- grouped row in one group, and no more rows than the components hold.
WITH g AS (SELECT key::int AS id, group_id FROM simdup_groups('bt', 6, 'leader')),
     l AS (SELECT DISTINCT ON (group_id) group_id, id AS leader FROM g ORDER BY group_id, id)
SELECT count(*) AS grouped,
       count(DISTINCT g.id) = count(*) AS once,
       max(hamming(b.fp, bl.fp)) <= 6 AS within_k_of_leader,
       count(*) <= (SELECT count(*) FROM simdup_groups('bt', 6)) AS at_most_components
FROM g JOIN l USING (group_id) JOIN bt b ON b.id = g.id JOIN bt bl ON bl.id = l.leader;
SELECT max(d) > 6 AS components_chain FROM (
  SELECT hamming(a.fp, b.fp) AS d FROM simdup_groups('bt', 6) x JOIN simdup_groups('bt', 6) y USING (group_id)
  JOIN bt a ON a.id = x.key::int JOIN bt b ON b.id = y.key::int) s;
SELECT * FROM simdup_groups('chain', 1, 'stars');
DROP TABLE chain;

-- Errors.
CREATE TABLE nokey (fp bigint);
SELECT simdup_enable('nokey', NULL, 'fp');
CREATE TABLE twokey (a int, b int, fp bigint, PRIMARY KEY (a, b));
SELECT simdup_enable('twokey', NULL, 'fp');
CREATE TABLE plain (id int PRIMARY KEY, fp bigint);
SELECT * FROM simdup_pairs('nokey', 3);
SELECT * FROM simdup_groups('twokey', 3);
SELECT * FROM simdup_pairs('plain', 3);
SELECT * FROM simdup_pairs('bt', 65);
\set VERBOSITY sqlstate
SELECT * FROM simdup_pairs('nokey', 3);
SELECT * FROM simdup_groups('twokey', 3);
SELECT * FROM simdup_pairs('plain', 3);
SELECT * FROM simdup_pairs('bt', 65);
SELECT * FROM simdup_groups('bt', -1);
\set VERBOSITY default
-- NULL arguments: no rows (STRICT).
SELECT count(*) FROM simdup_pairs('bt', NULL);

DROP TABLE bt, skew, nokey, twokey, plain;
