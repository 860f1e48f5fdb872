-- PL/pgSQL line numbers in error CONTEXT lines would tie this output to function bodies.
\set SHOW_CONTEXT never
-- Verified SimHash dedup: a row within max_distance of a stored row is a near-duplicate only
-- when the two texts are too (Jaccard of character 5-shingles >= threshold, default 0.5, or
-- containment >= containment, default 0.8). It is the default wherever there is a text column.
-- max_distance => 64 makes every pair of fingerprints a candidate, so what decides below is the
-- verification alone (in a large table, unrelated rows within k = 10 are common: docs/quality.md).

CREATE TABLE vnews (id int PRIMARY KEY, body text);
SELECT simdup_enable('vnews', 'body', on_duplicate => 'mark', max_distance => 64);
SELECT tbl, on_duplicate, max_distance, threshold, containment FROM simdup_tables WHERE tbl = 'vnews'::regclass;
SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'vnews'::regclass AND tgname = 'simdup_dedup';

INSERT INTO vnews VALUES
  (1, '临江市地铁5号线一期工程于12月28日上午9时正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的一条线路。'),
  -- unrelated: within k (every pair is), not a near-duplicate
  (2, 'The city council approved the new budget on Tuesday after a long debate about funding for public libraries and parks.'),
  -- an edited copy of 1: marked
  (3, '临江市地铁5号线一期工程于12月28日上午9时正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的线路。'),
  -- 2 with a long footer: Jaccard below 0.5, containment above 0.8: marked
  (4, 'The city council approved the new budget on Tuesday after a long debate about funding for public libraries and parks. Subscribe to our newsletter for more local news, weather and sports, delivered to your inbox every morning before seven.'),
  -- featureless: never a near-duplicate
  (5, '。。。');
SELECT v.id, v.dup_of, round(jaccard(v.body, d.body)::numeric, 2) AS jaccard, round(containment(v.body, d.body)::numeric, 2) AS containment
FROM vnews v LEFT JOIN vnews d ON d.id = v.dup_of ORDER BY v.id;

-- The decision equals the rule applied pair by pair in SQL (_simdup_verified, the same Rust
-- decision): dup_of is the smallest earlier key whose text verifies.
SELECT count(*) AS disagreements FROM vnews v
WHERE v.dup_of IS DISTINCT FROM (
    SELECT min(o.id) FROM vnews o
    WHERE o.id < v.id AND hamming(o.simhash, v.simhash) <= 64 AND _simdup_verified(o.body, v.body, 0.5, 0.8));

-- An UPDATE that changes the text is verified again (not against itself).
UPDATE vnews SET body = body || ' Updated.' WHERE id = 2 RETURNING id, dup_of;
UPDATE vnews SET body = '今天上午，一场春雨降临城市，气温明显下降，市民纷纷添衣。气象部门预计降雨将持续到周末。' WHERE id = 3 RETURNING id, dup_of;

-- Without containment (containment => NULL), the wrapped copy is no longer a near-duplicate.
CREATE TABLE vjac (id int PRIMARY KEY, body text);
SELECT simdup_enable('vjac', 'body', on_duplicate => 'mark', max_distance => 64, containment => NULL);
SELECT threshold, containment FROM simdup_tables WHERE tbl = 'vjac'::regclass;
INSERT INTO vjac SELECT id, body FROM vnews WHERE id IN (2, 4) ORDER BY id;
SELECT id, dup_of FROM vjac ORDER BY id;

-- verify => false: every row within k is a near-duplicate (0.3.0's rule; the adopted
-- fingerprint column's only one).
CREATE TABLE vraw (id int PRIMARY KEY, body text);
SELECT simdup_enable('vraw', 'body', on_duplicate => 'mark', max_distance => 64, verify => false);
SELECT threshold, containment FROM simdup_tables WHERE tbl = 'vraw'::regclass;
INSERT INTO vraw SELECT id, body FROM vnews WHERE id IN (1, 2) ORDER BY id;
SELECT id, dup_of FROM vraw ORDER BY id;

-- reject and skip, one row and many: the statement's own rows count, verified the same way.
CREATE TABLE vrej (id int PRIMARY KEY, body text);
SELECT simdup_enable('vrej', 'body', on_duplicate => 'reject', max_distance => 64);
INSERT INTO vrej SELECT id, body FROM vnews WHERE id IN (1, 2);
INSERT INTO vrej VALUES (3, '临江市地铁5号线一期工程于12月28日上午9时正式开通运营。该线路全长31.6公里，共设车站24座，其中换乘站7座，自西向东连接高新区、老城区和东部新城，是目前全市站点最多的线路。');
INSERT INTO vrej VALUES (3, '今天上午，一场春雨降临城市，气温明显下降，市民纷纷添衣。气象部门预计降雨将持续到周末。');
SELECT id FROM vrej ORDER BY id;

-- skip over a batch large enough for the bulk check (its copy of fingerprints only clears
-- rows; every candidate is read and verified): 300 distinct texts, then the same texts with a
-- word changed. Only the copies are skipped.
CREATE TABLE vskip (id int PRIMARY KEY, body text);
SELECT simdup_enable('vskip', 'body', on_duplicate => 'skip', max_distance => 64);
CREATE TEMP TABLE vsrc AS
SELECT g AS id, format('Report %s: the %s committee met on day %s to discuss item %s, and %s members voted for plan %s while %s abstained.',
                       g, md5(g::text), g % 31, md5((g * 7)::text), g % 17, md5((g * 13)::text), g % 5) AS body
FROM generate_series(1, 300) g;
INSERT INTO vskip SELECT id, body FROM vsrc ORDER BY id;
INSERT INTO vskip SELECT 1000 + id, replace(body, 'committee', 'board') FROM vsrc ORDER BY id;
SELECT count(*) FILTER (WHERE id < 1000) AS originals, count(*) FILTER (WHERE id >= 1000) AS copies FROM vskip;

-- simdup_pairs and simdup_groups verify on request, with the same rule.
SELECT a, b, distance <= 64 AS within FROM simdup_pairs('vnews', 64, verify => true) ORDER BY a::int, b::int;
SELECT count(*) AS unverified_pairs FROM simdup_pairs('vnews', 64);
-- Against a join of the table with itself (the pairs' definition):
SELECT count(*) AS disagreements FROM (
  (SELECT a::int, b::int FROM simdup_pairs('vskip', 64, verify => true)
   EXCEPT ALL
   SELECT x.id, y.id FROM vskip x JOIN vskip y ON x.id < y.id
   WHERE hamming(x.simhash, y.simhash) <= 64 AND _simdup_verified(x.body, y.body, 0.5, 0.8))
  UNION ALL
  (SELECT x.id, y.id FROM vskip x JOIN vskip y ON x.id < y.id
   WHERE hamming(x.simhash, y.simhash) <= 64 AND _simdup_verified(x.body, y.body, 0.5, 0.8)
   EXCEPT ALL
   SELECT a::int, b::int FROM simdup_pairs('vskip', 64, verify => true))) d;
SELECT * FROM simdup_groups('vnews', 64, verify => true);
SELECT * FROM simdup_groups('vnews', 64, 'leader', verify => true);
SELECT count(DISTINCT group_id) AS groups, count(*) AS rows FROM simdup_groups('vnews', 64);
-- A chain that verifies pair by pair: components join it, leaders do not.
CREATE TABLE vchain (id int PRIMARY KEY, body text);
SELECT simdup_enable('vchain', 'body', max_distance => NULL);
INSERT INTO vchain VALUES
  (1, 'alpha beta gamma delta epsilon zeta eta theta iota kappa'),
  (2, 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron'),
  (3, 'epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau');
SELECT x.id, y.id, _simdup_verified(x.body, y.body, 0.5, NULL) AS verified FROM vchain x JOIN vchain y ON x.id < y.id ORDER BY 1, 2;
SELECT * FROM simdup_groups('vchain', 64, containment => NULL, verify => true);
SELECT * FROM simdup_groups('vchain', 64, 'leader', containment => NULL, verify => true);

-- NULL in, nothing out; bad thresholds and verification without a text raise 22023.
SELECT count(*) FROM simdup_pairs(NULL, 3, true);
SELECT count(*) FROM simdup_pairs('vnews', 3, NULL);
SELECT count(*) FROM simdup_groups('vnews', 3, NULL, true);
SELECT _simdup_verified(NULL, 'x', 0.5, 0.8), _simdup_verified('x', NULL, 0.5, 0.8), _simdup_verified('', '', 0.5, NULL);
\set VERBOSITY sqlstate
SELECT _simdup_verified('a', 'b', NULL, 0.8);
SELECT count(*) FROM simdup_pairs('vnews', 64, verify => true, threshold => 0);
SELECT count(*) FROM simdup_pairs('vnews', 64, verify => true, threshold => 1.5);
SELECT count(*) FROM simdup_groups('vnews', 64, verify => true, containment => 0);
CREATE TABLE vbad (id int PRIMARY KEY, body text, fp bigint);
SELECT simdup_enable('vbad', 'body', on_duplicate => 'reject', threshold => 0);
SELECT simdup_enable('vbad', 'body', on_duplicate => 'reject', threshold => 'NaN');
SELECT simdup_enable('vbad', 'body', on_duplicate => 'reject', containment => 1.01);
SELECT simdup_enable('vbad', 'body', verify => true);
SELECT simdup_enable('vbad', NULL, 'fp', on_duplicate => 'reject', verify => true);
\set VERBOSITY default
SELECT simdup_enable('vbad', NULL, 'fp', on_duplicate => 'reject', verify => true);
SELECT count(*) FROM simdup_tables WHERE tbl = 'vbad'::regclass;
-- An adopted fingerprint column has no text: its trigger decides by the distance alone, and
-- pairs cannot be verified.
SELECT simdup_enable('vbad', NULL, 'fp', on_duplicate => 'reject', max_distance => 3);
SELECT threshold, containment FROM simdup_tables WHERE tbl = 'vbad'::regclass;
\set VERBOSITY sqlstate
SELECT count(*) FROM simdup_pairs('vbad', 3, verify => true);
\set VERBOSITY default

-- Without verification, simdup_enable warns when the table is already large enough for the
-- distance alone to catch unrelated rows (1 % of new rows or more, at the rate measured on real
-- news). 2,000 random fingerprints: at k = 3 no warning, at k = 16 a warning (its DETAIL gives
-- the expected share and the largest safe size).
CREATE TABLE vwarn (id int PRIMARY KEY, fp bigint);
INSERT INTO vwarn SELECT g, hashint8extended(g, 3) FROM generate_series(1, 2000) g;
SELECT simdup_enable('vwarn', NULL, 'fp', on_duplicate => 'reject', max_distance => 3);
SELECT simdup_disable('vwarn');
\set VERBOSITY terse
SELECT simdup_enable('vwarn', NULL, 'fp', on_duplicate => 'reject', max_distance => 16);
\set VERBOSITY default
SELECT simdup_disable('vwarn');
-- verify => false on a text column warns the same way.
ALTER TABLE vwarn ADD COLUMN body text;
\set VERBOSITY terse
SELECT simdup_enable('vwarn', 'body', 'fp2', on_duplicate => 'reject', max_distance => 64, verify => false);
\set VERBOSITY default

DROP TABLE vnews, vjac, vraw, vrej, vskip, vchain, vbad, vwarn;

-- A generated text column cannot be checked by a BEFORE trigger (it sees the column as NULL):
-- simdup_enable_similar refuses it with 0A000, as an ordinary role that owns the table, and
-- nothing is installed.
CREATE ROLE simdup_gen_owner;
GRANT CREATE ON SCHEMA public TO simdup_gen_owner;
SET ROLE simdup_gen_owner;
CREATE TABLE vgen (id int PRIMARY KEY, raw text, body text GENERATED ALWAYS AS (lower(raw)) STORED);
SELECT * FROM simdup_enable_similar('vgen', 'body', 0.5, on_duplicate => 'reject');
SELECT count(*) AS triggers FROM pg_trigger WHERE tgrelid = 'vgen'::regclass AND NOT tgisinternal;
SELECT count(*) AS indexes FROM pg_index WHERE indrelid = 'vgen'::regclass AND NOT indisprimary;
DROP TABLE vgen;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM simdup_gen_owner;
DROP ROLE simdup_gen_owner;
