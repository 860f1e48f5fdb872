-- PL/pgSQL line numbers in error CONTEXT lines would tie this output to function bodies.
\set SHOW_CONTEXT never
-- Dedup by verified similarity: simdup_enable_similar(tbl, text_column, threshold,
-- on_duplicate => 'reject' | 'skip' | 'mark') installs a BEFORE INSERT OR UPDATE trigger that
-- treats a row whose text has exact Jaccard similarity (character 5-shingles) >= threshold with
-- a stored row as a unique constraint treats an equal key. Candidates come from the similarity
-- index (rows sharing an LSH band); each is verified with the exact Jaccard similarity.

-- ---------------------------------------------------------------------------------------------
-- The basics, by hand
-- ---------------------------------------------------------------------------------------------
CREATE TABLE notes (id int PRIMARY KEY, body text);
SELECT index, bands, rows, round(p_at_threshold::numeric, 4) AS p FROM simdup_enable_similar('notes', 'body', 0.6, on_duplicate => 'reject');
\d notes
INSERT INTO notes VALUES (1, '南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。');
-- Three characters changed (similarity 0.73): rejected, naming the stored row and the similarity.
\set VERBOSITY default
INSERT INTO notes VALUES (2, '南京市长江大桥于1968年建成通车，是长江上第一座由我国自行设计建造的双层铁路公路两用桥梁。');
\set VERBOSITY terse
-- Reworded (similarity 0.53, below the threshold), but short: the shorter text has fewer than 50
-- characters, so the short-text rule compares its 3-character shingles too (0.660): rejected.
\set VERBOSITY default
INSERT INTO notes VALUES (3, '南京长江大桥于1968年建成通车，是长江上第一座由中国自行设计和建造的双层铁路、公路两用桥梁。');
\set VERBOSITY terse
-- Another bridge, below the threshold by both measures: stored.
INSERT INTO notes VALUES (3, '武汉长江大桥于1957年建成通车，是长江上第一座公铁两用桥梁，被称为万里长江第一桥。');
SELECT round(jaccard(a.body, b.body)::numeric, 3) AS j, round(jaccard(a.body, b.body, 3)::numeric, 3) AS j3
FROM notes a, notes b WHERE a.id = 1 AND b.id = 3;
-- Featureless and NULL text is similar to nothing: stored.
INSERT INTO notes VALUES (4, NULL), (5, '   '), (6, '   ');
-- Within one statement, the second row sees the first.
INSERT INTO notes VALUES (7, 'The Harbor Point ferry service resumed on Monday after an eleven-month suspension.'),
                         (8, 'The Harbor Point ferry service resumed on Monday after an eleven month suspension!');
-- The error carries the fields drivers map unique violations by; the constraint is the trigger.
DO $$
DECLARE
    state text; sch text; tab text; con text; det text;
BEGIN
    INSERT INTO notes VALUES (9, 'The Harbor Point ferry service resumed on Monday after an 11-month suspension.');
EXCEPTION WHEN unique_violation THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, sch = SCHEMA_NAME, tab = TABLE_NAME,
                            con = CONSTRAINT_NAME, det = PG_EXCEPTION_DETAIL;
    RAISE NOTICE 'sqlstate %, schema %, table %, constraint %: %', state, sch, tab, con, det;
END
$$;
-- UPDATE: a changed text is checked against every other row; the row itself does not count.
UPDATE notes SET body = body || '据新华社报道。' WHERE id = 1;
UPDATE notes SET body = (SELECT body FROM notes WHERE id = 1) WHERE id = 3;
UPDATE notes SET id = 10 WHERE id = 3;  -- text unchanged: not checked
SELECT id, left(body, 12) AS body FROM notes ORDER BY id;
-- ON CONFLICT DO NOTHING does not cover it (a trigger is not an arbiter index), as for SimHash.
INSERT INTO notes VALUES (11, '南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。据新华社报道。')
ON CONFLICT DO NOTHING;

-- The index is the trigger's: dropping it stops writes with a clear error, not silently.
DROP INDEX notes_body_similar_idx;
\set VERBOSITY default
INSERT INTO notes VALUES (12, 'anything at all, long enough to have shingles');
\set VERBOSITY terse
SELECT simdup_disable_similar('notes');
\d notes
INSERT INTO notes VALUES (12, 'The Harbor Point ferry service resumed on Monday after an 11-month suspension.');

-- containment => c: a row is also a near-duplicate of a stored row when one text holds at least
-- c of the other's shingles (an added header and footer or paragraph lowers Jaccard, not
-- containment).
CREATE TABLE posts (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('posts', 'body', on_duplicate => 'reject', containment => 0.7);
SELECT replace(encode(tgargs, 'escape'), '\000', ' ') AS trigger_arguments FROM pg_trigger WHERE tgrelid = 'posts'::regclass AND tgname = 'simdup_dedup_similar';
INSERT INTO posts VALUES (1, 'The Harbor Point ferry service resumed on Monday after an eleven-month suspension, officials said.');
SELECT round(jaccard(a, b)::numeric, 3) AS j, round(containment(a, b)::numeric, 3) AS c,
       _simdup_similar_bands(a, 5, 35, 3) && _simdup_similar_bands(b, 5, 35, 3) AS shares_a_band
FROM (VALUES ('The Harbor Point ferry service resumed on Monday after an eleven-month suspension, officials said.',
              'Coast desk, updated hourly with reports from our correspondents along the bay, the islands and the northern harbors: The Harbor Point ferry service resumed on Monday after an eleven-month suspension, officials said. Reporting by the coast desk.')) v(a, b);
\set VERBOSITY default
INSERT INTO posts VALUES (2, 'Coast desk, updated hourly with reports from our correspondents along the bay, the islands and the northern harbors: The Harbor Point ferry service resumed on Monday after an eleven-month suspension, officials said. Reporting by the coast desk.');
\set VERBOSITY terse
-- Without it (containment => NULL: Jaccard alone, 0.420), the same row is stored.
CREATE TABLE posts_jaccard (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('posts_jaccard', 'body', on_duplicate => 'reject', containment => NULL);
SELECT replace(encode(tgargs, 'escape'), '\000', ' ') AS trigger_arguments FROM pg_trigger WHERE tgrelid = 'posts_jaccard'::regclass AND tgname = 'simdup_dedup_similar';
SELECT count(*) AS containment_indexes FROM _simdup_similar_indexes('posts_jaccard') WHERE bands IS NULL;
INSERT INTO posts_jaccard SELECT 1, body FROM posts WHERE id = 1;
INSERT INTO posts_jaccard VALUES (2, 'Coast desk, updated hourly with reports from our correspondents along the bay, the islands and the northern harbors: The Harbor Point ferry service resumed on Monday after an eleven-month suspension, officials said. Reporting by the coast desk.');
SELECT count(*) AS stored_by_jaccard_alone FROM posts_jaccard;
-- A short text contained in a stored one: rejected the other way round too.
INSERT INTO posts VALUES (3, 'ferry service resumed on Monday after an eleven-month suspension');
-- Unrelated text: stored.
INSERT INTO posts VALUES (4, 'The city council approved a new budget for parks and libraries on Tuesday.');
SELECT id FROM posts ORDER BY id;
DROP TABLE posts, posts_jaccard;

-- ---------------------------------------------------------------------------------------------
-- Arguments and prerequisites
-- ---------------------------------------------------------------------------------------------
SELECT * FROM simdup_enable_similar('notes', 'body', on_duplicate => 'skip', containment => 0);
SELECT * FROM simdup_enable_similar('notes', 'body', on_duplicate => 'skip', containment => 1.5);
SELECT _simdup_similar_dedup_trigger_args('skip', 0.5, 5, 35, 3, 'body', NULL, NULL);
CREATE TABLE nopk (body text);
SELECT * FROM simdup_enable_similar('nopk', 'body', on_duplicate => 'reject');
SELECT * FROM simdup_enable_similar('notes', 'body', on_duplicate => 'drop');
SELECT * FROM simdup_enable_similar('notes', 'body', 1.5, on_duplicate => 'skip');
CREATE TABLE parted (id int PRIMARY KEY, body text) PARTITION BY RANGE (id);
SELECT * FROM simdup_enable_similar('parted', 'body', on_duplicate => 'skip');
CREATE TABLE numbers (id int PRIMARY KEY, n int);
SELECT * FROM simdup_enable_similar('numbers', 'n', on_duplicate => 'skip');
-- One dedup trigger a table, whichever was first.
CREATE TABLE both_ways (id int PRIMARY KEY, body text);
SELECT simdup_enable('both_ways', 'body', on_duplicate => 'reject');
SELECT * FROM simdup_enable_similar('both_ways', 'body', on_duplicate => 'reject');
SELECT simdup_disable('both_ways');
SELECT index FROM simdup_enable_similar('both_ways', 'body', on_duplicate => 'mark');
SELECT simdup_enable('both_ways', 'body', on_duplicate => 'reject');
\d both_ways
-- Without on_duplicate: the index only, as before.
SELECT index FROM simdup_enable_similar('nopk', 'body');
\d nopk
DROP TABLE nopk, parted, numbers, both_ways;

-- ---------------------------------------------------------------------------------------------
-- Hostile names: quotes and dollar signs in table, column and key names
-- ---------------------------------------------------------------------------------------------
CREATE SCHEMA "we'ird $simdup$";
CREATE TABLE "we'ird $simdup$"."t$simdup$'x" ("k""ey" text PRIMARY KEY, "bo'dy $$" varchar);
SELECT index FROM simdup_enable_similar('"we''ird $simdup$"."t$simdup$''x"', 'bo''dy $$', on_duplicate => 'mark');
INSERT INTO "we'ird $simdup$"."t$simdup$'x" VALUES ('b', 'The Harbor Point ferry service resumed on Monday after an eleven-month suspension.'),
  ('a', 'The Harbor Point ferry service resumed on Monday after an eleven-month suspension!'),
  ('c', 'The Harbor Point ferry service resumed on Monday after an 11-month suspension.');
SELECT * FROM "we'ird $simdup$"."t$simdup$'x" ORDER BY 1;
SELECT simdup_disable_similar('"we''ird $simdup$"."t$simdup$''x"');
DROP SCHEMA "we'ird $simdup$" CASCADE;

-- ---------------------------------------------------------------------------------------------
-- Against brute force, on real text: the fixture paragraphs of core/tests/fixtures (10 Chinese,
-- 5 English news paragraphs, and an edited copy of each) and variants made here: typos every
-- n-th character, sentences dropped, truncated, source tags and footers added.
-- ---------------------------------------------------------------------------------------------
\set fixtures `python3 -c 'import glob, json; print(json.dumps({f.split("fixtures/")[1]: open(f, encoding="utf-8").read() for f in sorted(glob.glob("core/tests/fixtures/[ez][nh]/*.txt"))}, ensure_ascii=False))'`
CREATE TABLE fixture AS SELECT key AS name, value AS body FROM json_each_text(:'fixtures');
SELECT count(*) AS fixture_files, sum(length(body)) AS characters FROM fixture;
SELECT body AS zh01 FROM fixture WHERE name = 'zh/01.txt' \gset
CREATE FUNCTION pg_temp.sentences(t text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
  SELECT array_agg(m[1] ORDER BY n) FROM regexp_matches(t, '[^。！？.!?]+[。！？.!?]*\s*', 'g') WITH ORDINALITY AS x(m, n)
$$;
CREATE FUNCTION pg_temp.typos(t text, step int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(CASE WHEN i % step = 0 THEN CASE WHEN t ~ '[一-龥]' THEN '的' ELSE 'x' END ELSE substr(t, i, 1) END, '' ORDER BY i)
  FROM generate_series(1, length(t)) i
$$;
CREATE TABLE pool AS
WITH o AS (SELECT name, body, pg_temp.sentences(body) AS s FROM fixture WHERE name NOT LIKE '%edited%'),
v AS (
  SELECT name AS family, 'fixture' AS kind, body FROM o
  UNION ALL SELECT replace(name, '.edited', ''), 'edited', body FROM fixture WHERE name LIKE '%edited%'
  UNION ALL SELECT name, 'typos every ' || st, pg_temp.typos(body, st) FROM o, unnest(ARRAY[4, 6, 10, 20, 40]) st
  UNION ALL SELECT name, 'drop sentence ' || i, array_to_string(s[:i - 1] || s[i + 1:], '') FROM o, generate_series(1, 3) i
  UNION ALL SELECT name, 'first half', array_to_string(s[:cardinality(s) / 2], '') FROM o
  UNION ALL SELECT name, 'truncated ' || p, left(body, length(body) * p / 100) FROM o, unnest(ARRAY[60, 85]) p
  UNION ALL SELECT name, 'tag', '【本报讯】' || body FROM o
  UNION ALL SELECT name, 'footer', body || ' (Editing by John Smith)' FROM o)
SELECT row_number() OVER (ORDER BY md5(family || kind))::int AS ord,  -- insertion order
       (1000 + row_number() OVER (ORDER BY md5(kind || family)))::int AS id,  -- keys in another order
       family, kind, body
FROM v;
SELECT count(*) AS documents, count(DISTINCT family) AS families FROM pool;
-- Every pair with its exact similarity and whether it shares a band of the index made below.
CREATE TABLE pairs AS
SELECT a.id AS a, b.id AS b, jaccard(a.body, b.body) AS j, containment(a.body, b.body) AS c,
       _simdup_similar_bands(a.body, 5, 35, 3) && _simdup_similar_bands(b.body, 5, 35, 3) AS candidate,
       _simdup_similar_key_probe(a.body, 5, 0.8) && _simdup_similar_keys(b.body, 5, 0.8) AS key,
       least(cardinality(shingles(a.body)), cardinality(shingles(b.body))) < 50 AS tiny
FROM pool a JOIN pool b ON a.id <> b.id;
CREATE INDEX ON pairs (b, a);
SELECT count(*) FILTER (WHERE j >= 0.5) / 2 AS pairs_at_or_above_0_5,
       count(*) FILTER (WHERE j >= 0.5 AND candidate) / 2 AS found_by_the_bands,
       count(*) FILTER (WHERE j >= 0.45 AND j < 0.5) / 2 AS pairs_just_below,
       count(*) FILTER (WHERE j < 0.5 AND candidate) / 2 AS candidates_below
FROM pairs;

-- Jaccard alone first (containment => NULL). Serially, in the pool's order, the brute-force
-- answer of each mode at the default threshold (0.5): skip keeps a row unless a kept row has similarity >= 0.5; mark names the smallest key
-- among the earlier rows with similarity >= 0.5; reject rejects the rows skip drops, naming
-- the smallest such key among the rows kept. (brute_skip(pool, pairs, rule): the rows skip
-- keeps, in the pool's order; a kept row for which the rule holds (x a row of pairs, x.a the
-- kept row, x.b the new one) drops a row.)
CREATE FUNCTION pg_temp.brute_skip(pool regclass, pairs regclass, rule text) RETURNS SETOF int LANGUAGE plpgsql AS $$
DECLARE p record; kept int[] := '{}'; dropped boolean;
BEGIN
    FOR p IN EXECUTE format('SELECT id FROM %s ORDER BY ord', pool) LOOP
        EXECUTE format('SELECT EXISTS (SELECT FROM %s x WHERE x.b = $1 AND x.a = ANY ($2) AND (%s))', pairs, rule)
            INTO dropped USING p.id, kept;
        IF NOT dropped THEN
            kept := kept || p.id;
        END IF;
    END LOOP;
    RETURN QUERY SELECT unnest(kept);
END
$$;
CREATE TABLE brute_skip AS SELECT id FROM pg_temp.brute_skip('pool', 'pairs', 'x.j >= 0.5') id;
CREATE TABLE brute_mark AS
SELECT p.id, (SELECT min(q.id) FROM pool q JOIN pairs x ON x.a = q.id AND x.b = p.id
              WHERE q.ord < p.ord AND x.j >= 0.5) AS dup_of
FROM pool p;

CREATE TABLE dd_skip (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('dd_skip', 'body', on_duplicate => 'skip', containment => NULL);
INSERT INTO dd_skip SELECT id, body FROM pool ORDER BY ord;
CREATE TABLE dd_mark (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('dd_mark', 'body', on_duplicate => 'mark', containment => NULL);
-- COPY goes through the trigger as INSERT does.
COPY (SELECT id, body FROM pool ORDER BY ord) TO '/tmp/simdup_dedup_similar_pool.csv' CSV;
COPY dd_mark (id, body) FROM '/tmp/simdup_dedup_similar_pool.csv' CSV;
CREATE TABLE dd_reject (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('dd_reject', 'body', on_duplicate => 'reject', containment => NULL);
CREATE TABLE rejected (id int, detail text);
DO $$
DECLARE p record; det text;
BEGIN
    FOR p IN SELECT * FROM pool ORDER BY ord LOOP
        BEGIN
            INSERT INTO dd_reject VALUES (p.id, p.body);
        EXCEPTION WHEN unique_violation THEN
            GET STACKED DIAGNOSTICS det = PG_EXCEPTION_DETAIL;
            INSERT INTO rejected VALUES (p.id, det);
        END;
    END LOOP;
END
$$;
SELECT (SELECT count(*) FROM dd_skip) AS skip_stored, (SELECT count(*) FROM brute_skip) AS brute_stored,
       (SELECT count(*) FROM dd_skip FULL JOIN brute_skip USING (id) WHERE dd_skip.body IS NULL OR brute_skip.id IS NULL) AS skip_differences,
       (SELECT count(*) FROM dd_mark WHERE dup_of IS NOT NULL) AS marked,
       (SELECT count(*) FROM dd_mark m JOIN brute_mark b USING (id) WHERE m.dup_of IS DISTINCT FROM b.dup_of) AS mark_differences,
       (SELECT count(*) FROM rejected) AS rejected,
       (SELECT count(*) FROM dd_reject FULL JOIN brute_skip USING (id) WHERE dd_reject.body IS NULL OR brute_skip.id IS NULL) AS reject_differences;
-- Each rejection names the smallest key among the rows kept before it with similarity >= 0.5,
-- and its similarity.
SELECT count(*) AS rejections_checked,
       count(*) FILTER (WHERE r.detail = format('Key (id)=(%s) has Jaccard similarity %s with it (threshold 0.5).',
                                                 b.key, to_char(b.j, 'FM0.000'))) AS detail_as_brute_force
FROM rejected r JOIN pool p USING (id)
CROSS JOIN LATERAL (SELECT x.a AS key, x.j FROM brute_skip s JOIN pool q USING (id) JOIN pairs x ON x.a = s.id AND x.b = r.id
                    WHERE x.j >= 0.5 AND q.ord < p.ord ORDER BY x.a LIMIT 1) b;
-- What was dropped, by kind of edit: every edited copy of a stored paragraph.
SELECT kind, count(*) AS documents, count(*) FILTER (WHERE s.id IS NULL) AS skipped
FROM pool p LEFT JOIN dd_skip s USING (id) GROUP BY kind ORDER BY kind;
-- Precision is exact: every marked row's dup_of has similarity >= 0.5 with it.
SELECT count(*) AS marked_below_threshold FROM dd_mark m JOIN dd_mark o ON o.id = m.dup_of WHERE jaccard(m.body, o.body) < 0.5;

-- With the default containment (0.8), against brute force: a row is dropped when a kept row
-- shares a band with it and has Jaccard >= 0.5, or containment >= 0.8 with both texts of at
-- least 50 shingles, or when their containment keys meet (the containment index) and containment
-- >= 0.8 (the trigger's promise: candidates come from the indexes). Skip and mark, serially, in
-- the pool's order.
SELECT count(*) FILTER (WHERE c >= 0.8 AND j < 0.5) / 2 AS pairs_by_containment_only,
       count(*) FILTER (WHERE c >= 0.8 AND j < 0.5 AND (candidate AND NOT tiny OR key)) / 2 AS of_them_candidates,
       count(*) FILTER (WHERE key) AS meeting_keys, count(*) FILTER (WHERE key AND c < 0.8) AS of_them_below
FROM pairs;
CREATE TABLE brute_skip_c AS
SELECT id FROM pg_temp.brute_skip('pool', 'pairs', 'x.candidate AND (x.j >= 0.5 OR x.c >= 0.8 AND NOT x.tiny) OR x.key AND x.c >= 0.8') id;
CREATE TABLE dd_skip_c (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('dd_skip_c', 'body', on_duplicate => 'skip');
INSERT INTO dd_skip_c SELECT id, body FROM pool ORDER BY ord;
CREATE TABLE dd_mark_c (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('dd_mark_c', 'body', on_duplicate => 'mark');
INSERT INTO dd_mark_c SELECT id, body FROM pool ORDER BY ord;
SELECT (SELECT count(*) FROM dd_skip_c) AS skip_stored, (SELECT count(*) FROM brute_skip_c) AS brute_stored,
       (SELECT count(*) FROM dd_skip_c FULL JOIN brute_skip_c USING (id) WHERE dd_skip_c.body IS NULL OR brute_skip_c.id IS NULL) AS skip_differences,
       (SELECT count(*) FROM dd_mark_c m JOIN pool p USING (id)
        WHERE m.dup_of IS DISTINCT FROM (SELECT min(q.id) FROM pool q JOIN pairs x ON x.a = q.id AND x.b = p.id
                                         WHERE q.ord < p.ord AND (x.candidate AND (x.j >= 0.5 OR x.c >= 0.8 AND NOT x.tiny) OR x.key AND x.c >= 0.8))) AS mark_differences;
-- What containment adds, by kind of edit (skipped with Jaccard alone, and with containment too).
SELECT kind, count(*) AS documents, count(*) FILTER (WHERE s.id IS NULL) AS skipped_jaccard,
       count(*) FILTER (WHERE c.id IS NULL) AS skipped_with_containment
FROM pool p LEFT JOIN dd_skip s USING (id) LEFT JOIN dd_skip_c c USING (id) GROUP BY kind ORDER BY kind;

-- ---------------------------------------------------------------------------------------------
-- Short texts: the short-text rule and its index. The first 20 to 45 characters (or fewer) of
-- the fixtures' first three sentences, and copies with one typo, two typos, a dropped character
-- and a swapped pair of characters. A row is a near-duplicate of a kept row that shares a band
-- and has Jaccard >= 0.5, or that shares a band or a short band of the short-text index and, the
-- shorter text having fewer than 50 characters and both being short-banded (at most 100
-- distinct 3-shingles), has 3-shingle Jaccard >= 0.5.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE short_pool AS
WITH s AS (SELECT name || '/' || n AS family, left(btrim(x), 20 + (n::int * 7 + length(name)) % 26) AS body
           FROM fixture, unnest(pg_temp.sentences(body)) WITH ORDINALITY AS u(x, n)
           WHERE name NOT LIKE '%edited%' AND n <= 3 AND length(btrim(x)) >= 12),
v AS (
  SELECT family, 'original' AS kind, body FROM s
  UNION ALL SELECT family, 'typo', overlay(body PLACING CASE WHEN body ~ '[一-龥]' THEN '的' ELSE 'x' END FROM length(body) / 2 FOR 1) FROM s
  UNION ALL SELECT family, 'two typos', overlay(overlay(body PLACING CASE WHEN body ~ '[一-龥]' THEN '的' ELSE 'x' END FROM length(body) / 4 FOR 1)
                                               PLACING CASE WHEN body ~ '[一-龥]' THEN '了' ELSE 'q' END FROM 3 * length(body) / 4 FOR 1) FROM s
  UNION ALL SELECT family, 'dropped character', overlay(body PLACING '' FROM length(body) / 3 FOR 1) FROM s
  UNION ALL SELECT family, 'swapped characters', overlay(body PLACING substr(body, length(body) / 2 + 1, 1) || substr(body, length(body) / 2, 1)
                                                         FROM length(body) / 2 FOR 2) FROM s)
SELECT row_number() OVER (ORDER BY md5(family || kind))::int AS ord,
       (5000 + row_number() OVER (ORDER BY md5(kind || family)))::int AS id, family, kind, body
FROM v;
SELECT count(*) AS short_documents, count(DISTINCT family) AS families, min(length(body)) AS shortest,
       max(length(body)) AS longest FROM short_pool;
-- Every pair: Jaccard, whether the short-text rule applies and its 3-shingle Jaccard, whether
-- the pair shares a band and a short band, and whether it is a candidate (either).
CREATE TABLE short_pairs AS
SELECT *, band OR short_band AS candidate,
       band AND (j >= 0.5 OR short AND j3 >= 0.5) OR short_band AND short AND j3 >= 0.5 AS near,
       band AND (j >= 0.5 OR short AND j3 >= 0.5 OR c >= 0.8 AND NOT tiny) OR short_band AND short AND j3 >= 0.5
         OR key AND (c >= 0.8 OR short AND j3 >= 0.5) AS near_c
FROM (SELECT a.id AS a, b.id AS b, jaccard(a.body, b.body) AS j, jaccard(a.body, b.body, 3) AS j3,
             containment(a.body, b.body) AS c,
             least(cardinality(shingles(a.body)), cardinality(shingles(b.body))) < 50 AS tiny,
             _simdup_similar_key_probe(a.body, 5, 0.8) && _simdup_similar_keys(b.body, 5, 0.8) AS key,
             least(cardinality(shingles(a.body)), cardinality(shingles(b.body))) + 4 < 50
               AND _simdup_similar_short_bands(a.body, 0.5) IS NOT NULL AND _simdup_similar_short_bands(b.body, 0.5) IS NOT NULL AS short,
             _simdup_similar_bands(a.body, 5, 35, 3) && _simdup_similar_bands(b.body, 5, 35, 3) AS band,
             coalesce(_simdup_similar_short_bands(a.body, 0.5) && _simdup_similar_short_bands(b.body, 0.5), false) AS short_band
      FROM short_pool a JOIN short_pool b ON a.id <> b.id) x;
CREATE INDEX ON short_pairs (b, a);
SELECT count(*) FILTER (WHERE j >= 0.5) / 2 AS pairs_by_jaccard,
       count(*) FILTER (WHERE j < 0.5 AND short AND j3 >= 0.5) / 2 AS pairs_by_the_short_text_rule_only,
       count(*) FILTER (WHERE (j >= 0.5 OR short AND j3 >= 0.5) AND candidate) / 2 AS of_all_these_candidates,
       count(*) FILTER (WHERE NOT (j >= 0.5 OR short AND j3 >= 0.5) AND candidate) / 2 AS candidates_that_are_not
FROM short_pairs;
CREATE TABLE brute_short_skip AS
SELECT id FROM pg_temp.brute_skip('short_pool', 'short_pairs', 'x.near_c') id;
CREATE TABLE short_skip (id int PRIMARY KEY, body text);
SELECT index, bands, rows FROM simdup_enable_similar('short_skip', 'body', on_duplicate => 'skip');
SELECT index, k, bands, rows FROM _simdup_similar_indexes('short_skip') ORDER BY k DESC, bands NULLS LAST;
INSERT INTO short_skip SELECT id, body FROM short_pool ORDER BY ord;
CREATE TABLE short_mark (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('short_mark', 'body', on_duplicate => 'mark');
INSERT INTO short_mark SELECT id, body FROM short_pool ORDER BY ord;
SELECT (SELECT count(*) FROM short_skip) AS skip_stored, (SELECT count(*) FROM brute_short_skip) AS brute_stored,
       (SELECT count(*) FROM short_skip FULL JOIN brute_short_skip USING (id)
        WHERE short_skip.body IS NULL OR brute_short_skip.id IS NULL) AS skip_differences,
       (SELECT count(*) FROM short_mark WHERE dup_of IS NOT NULL) AS marked,
       (SELECT count(*) FROM short_mark m JOIN short_pool p USING (id)
        WHERE m.dup_of IS DISTINCT FROM (SELECT min(q.id) FROM short_pool q JOIN short_pairs x ON x.a = q.id AND x.b = p.id
                                         WHERE q.ord < p.ord AND x.near_c)) AS mark_differences;
-- By kind of edit: the copies skipped, and those Jaccard of 5-shingles alone would have let through.
SELECT kind, count(*) AS documents, count(*) FILTER (WHERE s.id IS NULL) AS skipped,
       count(*) FILTER (WHERE s.id IS NULL AND NOT EXISTS (
         SELECT FROM short_pairs x JOIN short_pool q ON q.id = x.a
         WHERE x.b = p.id AND q.ord < p.ord AND x.j >= 0.5)) AS by_the_short_text_rule
FROM short_pool p LEFT JOIN short_skip s USING (id) GROUP BY kind ORDER BY kind;
-- An English typo at threshold 0.8: 5-shingle similarity 0.733, 3-shingle 0.814. The DETAIL
-- names the rule that matched.
CREATE TABLE short_reject (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('short_reject', 'body', 0.8, on_duplicate => 'reject');
INSERT INTO short_reject VALUES (1, 'The quick brown fox jumps over the lazy dog');
\set VERBOSITY default
INSERT INTO short_reject VALUES (2, 'The quick brown fox jumsp over the lazy dog');
\set VERBOSITY terse
SELECT round(jaccard('The quick brown fox jumps over the lazy dog', 'The quick brown fox jumsp over the lazy dog')::numeric, 3) AS j5,
       round(jaccard('The quick brown fox jumps over the lazy dog', 'The quick brown fox jumsp over the lazy dog', 3)::numeric, 3) AS j3;
-- The short-text index is the trigger's too: dropping it stops writes of short texts.
DROP INDEX short_reject_body_similar_short_idx;
INSERT INTO short_reject VALUES (3, 'an unrelated short text');
-- A text of more than 100 distinct 3-shingles has no short bands: it needs only the similarity index.
INSERT INTO short_reject SELECT 4, string_agg(md5(i::text), ' ') FROM generate_series(1, 10) i;
-- The containment index too: every row looks up its containment keys there.
DROP INDEX short_reject_body_similar_keys_idx;
\set VERBOSITY default
INSERT INTO short_reject SELECT 5, string_agg(md5(i::text), ' ') FROM generate_series(11, 20) i;
\set VERBOSITY terse
SELECT id, length(body) FROM short_reject ORDER BY id;
-- Each candidate is judged by the rules its index's lock stripes cover: a row found only through
-- the short-text index (a shared short band, no shared band) by the short-text rule alone; a tiny
-- text (fewer than 50 shingles) by containment only through its containment keys (its
-- containment prefix, locked exclusively, against the other's sketch, locked shared). A tiny
-- text inside a longer one (containment 1, 3-shingle Jaccard 0.273) shares no band; its keys
-- meet the longer one's: rejected through the containment index, by containment.
SELECT _simdup_similar_bands(a, 5, 35, 3) && _simdup_similar_bands(b, 5, 35, 3) AS shares_a_band,
       _simdup_similar_short_bands(a, 0.5) && _simdup_similar_short_bands(b, 0.5) AS shares_a_short_band,
       _simdup_similar_key_probe(a, 5, 0.7) && _simdup_similar_keys(b, 5, 0.7) AS keys_meet,
       _simdup_similar_key_probe(b, 5, 0.7) && _simdup_similar_keys(a, 5, 0.7) AS keys_meet_reversed,
       round(containment(a, b)::numeric, 3) AS c, round(jaccard(a, b)::numeric, 3) AS j,
       round(jaccard(a, b, 3)::numeric, 3) AS j3,
       _simdup_similar_match(a, b, 5, 0.5, 0.7) IS NOT NULL AS by_band,
       _simdup_similar_short_match(a, b, 5, 0.5) IS NOT NULL AS by_the_short_text_rule,
       _simdup_similar_key_match(a, b, 5, 0.5, 0.7) IS NOT NULL AS by_keys
FROM (VALUES ('house wins new', 'house wins new jumps brown news rain school jumps dog')) v(a, b);
CREATE TABLE short_contained (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('short_contained', 'body', on_duplicate => 'reject', containment => 0.7);
INSERT INTO short_contained VALUES (1, 'house wins new');
\set VERBOSITY default
INSERT INTO short_contained VALUES (2, 'house wins new jumps brown news rain school jumps dog');
\set VERBOSITY terse
-- The other way round, in one statement: the second row sees the first (rejected: the statement
-- stores neither).
\set VERBOSITY default
INSERT INTO short_contained VALUES (3, 'the city council approved a new budget for parks and libraries'), (4, 'new budget for parks');
\set VERBOSITY terse
SELECT id FROM short_contained ORDER BY id;
-- _simdup_similar_key_match (the Citus check's condition for rows found through the containment
-- index) is containment or the short-text rule; NULL containment: NULL.
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (x.c >= 0.8 OR x.short AND x.j3 >= 0.5)
                        IS DISTINCT FROM (_simdup_similar_key_match(a.body, b.body, 5, 0.5, 0.8) IS NOT NULL)) AS differences
FROM short_pairs x JOIN short_pool a ON a.id = x.a JOIN short_pool b ON b.id = x.b;
SELECT _simdup_similar_key_match('a b c d e f', 'a b c d e f', 5, 0.5, NULL) IS NULL AS no_containment_no_match,
       _simdup_similar_keys(NULL, 5, 0.8) IS NULL AND _simdup_similar_keys('   ', 5, 0.8) IS NULL AS featureless,
       cardinality(_simdup_similar_keys(repeat('word', 500), 5, 0.8)) AS keys_of_4_shingles,
       (SELECT cardinality(_simdup_similar_keys(string_agg(md5(i::text), ' '), 5, 0.8)) FROM generate_series(1, 10) i) AS keys_of_a_long_text;
SELECT _simdup_similar_keys('x', 5, 0);
-- _simdup_similar_short_match (the Citus check's condition for such rows) is the short-text rule
-- on every pair of the short pool.
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (x.short AND x.j3 >= 0.5)
                        IS DISTINCT FROM (_simdup_similar_short_match(a.body, b.body, 5, 0.5) IS NOT NULL)) AS differences
FROM short_pairs x JOIN short_pool a ON a.id = x.a JOIN short_pool b ON b.id = x.b;
SELECT _simdup_similar_short_match(NULL, 'x', 5, 0.5) IS NULL AS null_in_null_out;
SELECT simdup_disable_similar('short_reject');
SELECT count(*) AS indexes_left FROM pg_index WHERE indrelid = 'short_reject'::regclass;
SELECT simdup_disable_similar('short_skip');
SELECT count(*) AS indexes_left FROM pg_index WHERE indrelid = 'short_skip'::regclass AND NOT indisprimary;

-- A row of one distinct shingle (mis-encoded text: one character repeated) is inside every text
-- holding that 5-gram, containment 1: the containment rule needs at least two shingles in the
-- smaller text, so neither direction marks; two identical junk rows are still copies (Jaccard 1),
-- and a text of two shingles is still found inside a longer one.
CREATE TABLE junk (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('junk', 'body', on_duplicate => 'mark');
INSERT INTO junk VALUES (1, '??????'), (2, '汉阳的老铁们玫瑰街还可以吃鸡吗？？？？？'), (3, '??????????'),
                        (4, '独家报道！！'), (5, '今天的新闻很多。独家报道！！记者从有关部门获悉，以下为最新发布的统计公报摘要。');
INSERT INTO junk VALUES (6, '肤白貌美陈妍希?????');
SELECT id, dup_of, round(containment(body, '??????')::numeric, 3) AS c_junk FROM junk ORDER BY id;
SELECT e->'verdicts'->1->>'duplicate' AS duplicate, e->'verdicts'->1->>'reason' AS reason
FROM simdup_explain('??????', '肤白貌美陈妍希?????') e;
DROP TABLE junk;

-- A row that is only a site's notice is not the original of every article that ends with it:
-- containment does not count when the larger text ends with the smaller one after more text than
-- the smaller holds (simdup_core::similarity::is_footer), in either order. A copy with the notice
-- wrapped in a header and a footer, or with a paragraph appended, is still a near-duplicate.
CREATE TABLE pages (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('pages', 'body', on_duplicate => 'mark');
INSERT INTO pages VALUES (1, 'Comments are moderated. Please keep to the topic and be respectful of other readers.');
INSERT INTO pages VALUES (2, 'The Harbor Point ferry service resumed on Monday after an eleven-month suspension, officials said. The first crossing left at seven with forty passengers aboard. Comments are moderated. Please keep to the topic and be respectful of other readers.'),
                         (3, 'Council approves the parks budget after a long debate on Tuesday evening. Comments are moderated. Please keep to the topic and be respectful of other readers. Posted by the city desk at noon, updated at four.'),
                         (4, 'Comments are moderated. Please keep to the topic and be respectful of other readers. The rules were updated in March after a vote of the members, and apply to every section of the site.');
SELECT id, dup_of, round(containment(body, (SELECT body FROM pages WHERE id = 1))::numeric, 3) AS c_notice,
       round(jaccard(body, (SELECT body FROM pages WHERE id = 1))::numeric, 3) AS j_notice
FROM pages ORDER BY id;
SELECT e->'verdicts'->1->>'duplicate' AS duplicate, e->'verdicts'->1->>'reason' AS reason
FROM simdup_explain((SELECT body FROM pages WHERE id = 1), (SELECT body FROM pages WHERE id = 2)) e;
SELECT e->'verdicts'->1->>'duplicate' AS duplicate
FROM simdup_explain((SELECT body FROM pages WHERE id = 2), (SELECT body FROM pages WHERE id = 1)) e;
DROP TABLE pages;

-- ---------------------------------------------------------------------------------------------
-- The verification limit: past simdup.similar_verify_limit candidates (64 by default; 0: no limit),
-- the trigger verifies those sharing the most index values with the new row (docs/dedup.md). The
-- identical copy shares all 35 bands, the row of the first 330 characters 11 (Jaccard 0.557,
-- and contained): both are near-duplicates, and the smaller key is named; with a limit of one,
-- only the copy is verified and named. Only a superuser sets the limit.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE limited (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('limited', 'body', on_duplicate => 'mark');
INSERT INTO limited VALUES (5, left(:'zh01', 330)), (10, :'zh01');
SHOW simdup.similar_verify_limit;
INSERT INTO limited VALUES (20, :'zh01');
SET simdup.similar_verify_limit = 1;
INSERT INTO limited VALUES (21, :'zh01');
SET simdup.similar_verify_limit = 0;
INSERT INTO limited VALUES (22, :'zh01');
RESET simdup.similar_verify_limit;
SELECT id, dup_of FROM limited WHERE id >= 20 ORDER BY id;
CREATE ROLE simdup_limit_user;
SET ROLE simdup_limit_user;
SET simdup.similar_verify_limit = 1;
RESET ROLE;
DROP ROLE simdup_limit_user;
DROP TABLE limited;

-- ---------------------------------------------------------------------------------------------
-- Privileges and row-level security: the trigger sees every row, names a key only to a
-- role that may read it.
-- ---------------------------------------------------------------------------------------------
CREATE ROLE simdup_sim_writer;
GRANT USAGE ON SCHEMA public TO simdup_sim_writer;
GRANT INSERT ON dd_reject TO simdup_sim_writer;
ALTER TABLE dd_reject ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_new ON dd_reject TO simdup_sim_writer USING (id > 100000) WITH CHECK (true);
SET ROLE simdup_sim_writer;
\set VERBOSITY default
INSERT INTO dd_reject VALUES (200000, '【本报讯】' || :'zh01');
\set VERBOSITY terse
RESET ROLE;
DROP POLICY only_new ON dd_reject;
REVOKE ALL ON dd_reject FROM simdup_sim_writer;
REVOKE ALL ON SCHEMA public FROM simdup_sim_writer;
DROP ROLE simdup_sim_writer;

DROP TABLE notes, fixture, pool, pairs, brute_skip, brute_mark, dd_skip, dd_mark, dd_reject, rejected,
           brute_skip_c, dd_skip_c, dd_mark_c, short_pool, short_pairs, brute_short_skip, short_skip, short_mark,
           short_reject, short_contained;
