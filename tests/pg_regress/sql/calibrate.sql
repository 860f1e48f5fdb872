-- simdup_calibrate: its histograms must equal a sequential computation of each row's nearest
-- other row (Hamming) and most similar candidate (Jaccard); the suggestion sits at the valley
-- between the planted near-duplicates and the rest; bad arguments get clear errors.
\set SHOW_CONTEXT never
SET client_min_messages = warning;

-- 200 unrelated texts of 30 random hex words, 40 copies with one word changed, 20 exact
-- copies, and one row without words (no fingerprint, no shingles).
CREATE TABLE cal (id int PRIMARY KEY, body text);
INSERT INTO cal SELECT g, (SELECT string_agg(substr(md5((g * 100 + i)::text), 1, 8), ' ')
                           FROM generate_series(1, 30) i)
FROM generate_series(1, 200) g;
INSERT INTO cal SELECT 200 + id, regexp_replace(body, '^[0-9a-f]+', 'changed') FROM cal WHERE id <= 40;
INSERT INTO cal SELECT 240 + id, body FROM cal WHERE id BETWEEN 41 AND 60;
INSERT INTO cal VALUES (261, '。。。');
SELECT simdup_enable('cal', 'body') IS NOT NULL AS enabled;
SELECT simdup_enable_similar('cal', 'body') IS NOT NULL AS enabled_similar;

-- The whole table (sample above its size): the SimHash histogram against a sequential
-- computation of each row's nearest other row, bucketed likewise (beyond 12 bits: "> 12").
CREATE TEMP TABLE got AS SELECT * FROM simdup_calibrate('cal', sample => 100000);
SET simdup.index_search = off;
CREATE TEMP TABLE seq_simhash AS
SELECT CASE WHEN d IS NULL OR d > 12 THEN '> 12' ELSE d::text END AS bucket, count(*) AS rows
FROM (SELECT (SELECT min(hamming(b.simhash, a.simhash)) FROM cal b WHERE b.id <> a.id) AS d
      FROM cal a WHERE a.simhash IS NOT NULL) s
GROUP BY 1;
RESET simdup.index_search;
SELECT count(*) AS simhash_buckets, sum(rows) AS simhash_rows FROM got WHERE method = 'simhash';
SELECT g.bucket, g.rows AS calibrate, s.rows AS sequential
FROM (SELECT * FROM got WHERE method = 'simhash' AND rows > 0) g
FULL JOIN seq_simhash s USING (bucket)
WHERE g.rows IS DISTINCT FROM s.rows;   -- no row: equal

-- The similarity histogram against each row's best Jaccard among the rows sharing a band of the
-- similarity index, computed by a nested loop over every row's shingles and bands.
CREATE TEMP TABLE sig AS
SELECT a.id, shingles(a.body, ix.k) AS set, _simdup_similar_bands(a.body, ix.k, ix.bands, ix.rows) AS bands
FROM cal a, (SELECT k, bands, rows FROM _simdup_similar_indexes('cal') WHERE bands IS NOT NULL LIMIT 1) ix;
CREATE TEMP TABLE seq_similar AS
WITH best AS (
  SELECT (SELECT max(jaccard(b.set, a.set)) FROM sig b WHERE b.id <> a.id AND b.bands && a.bands) AS j
  FROM sig a WHERE a.set IS NOT NULL)
SELECT CASE WHEN j IS NULL THEN 'none'
            ELSE to_char(least(floor(j * 20 + 1e-9), 19) / 20.0, 'FM0.00') || '-' ||
                 to_char(least(floor(j * 20 + 1e-9), 19) / 20.0 + 0.05, 'FM0.00') END AS bucket,
       count(*) AS rows
FROM best GROUP BY 1;
SELECT count(*) AS similarity_buckets, sum(rows) AS similarity_rows FROM got WHERE method = 'similarity';
SELECT g.bucket, g.rows AS calibrate, s.rows AS sequential
FROM (SELECT * FROM got WHERE method = 'similarity' AND rows > 0) g
FULL JOIN seq_similar s USING (bucket)
WHERE g.rows IS DISTINCT FROM s.rows;   -- no row: equal

-- What a psql user reads: the buckets that hold rows, their bars, and the notes (the seconds
-- taken vary: masked).
SELECT method, bucket, rows, length(bar) AS bar, regexp_replace(note, '[0-9]+\.[0-9] s', 'N s') AS note
FROM got WHERE rows > 0 OR note IS NOT NULL;

-- A sample: about 100 of the 261 rows, the same ones for the same seed.
SELECT (SELECT sum(rows) FROM simdup_calibrate('cal', sample => 100) WHERE method = 'simhash')
     = (SELECT sum(rows) FROM simdup_calibrate('cal', sample => 100) WHERE method = 'simhash') AS repeatable,
       (SELECT sum(rows) FROM simdup_calibrate('cal', sample => 100) WHERE method = 'simhash') BETWEEN 60 AND 140 AS about_100;
-- A smaller radius: everything farther is in its last bucket.
SELECT bucket, rows FROM simdup_calibrate('cal', sample => 100000, radius => 2) WHERE method = 'simhash';

-- NULL in, nothing out; bad arguments; tables it cannot calibrate.
SELECT count(*) FROM simdup_calibrate(NULL);
SELECT count(*) FROM simdup_calibrate('cal', sample => NULL);
SELECT count(*) FROM _simdup_calibrate_simhash(NULL, 12, 1, NULL, 0);
SELECT count(*) FROM _simdup_calibrate_similarity('{0.5}', NULL, 3, 1, NULL, 0);
SELECT * FROM simdup_calibrate('cal', sample => 0);
SELECT * FROM simdup_calibrate('cal', sample => 1000001);
SELECT * FROM simdup_calibrate('cal', radius => -1);
SELECT * FROM simdup_calibrate('cal', radius => 21);
CREATE TABLE cal_plain (id int, body text);
SELECT * FROM simdup_calibrate('cal_plain');
-- An empty enabled table: zero rows sampled, no suggestion.
CREATE TABLE cal_empty (id int PRIMARY KEY, body text);
SELECT simdup_enable('cal_empty', 'body') IS NOT NULL AS enabled;
SELECT method, bucket, rows, regexp_replace(note, '[0-9]+\.[0-9] s', 'N s') AS note
FROM simdup_calibrate('cal_empty') WHERE note IS NOT NULL;
-- It reads the table as the caller.
CREATE ROLE cal_nobody;
SET ROLE cal_nobody;
SELECT * FROM simdup_calibrate('cal');
RESET ROLE;
DROP ROLE cal_nobody;
DROP TABLE cal, cal_plain, cal_empty;
