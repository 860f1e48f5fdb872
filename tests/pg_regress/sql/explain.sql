-- simdup_explain: the figures behind a near-duplicate decision, the verdicts of the dedup
-- triggers, and the aligned passages of two texts. The figures must equal the SQL functions',
-- the verdicts what the triggers do, and the passages must reassemble both texts.
-- PL/pgSQL line numbers in error CONTEXT lines would tie this output to function bodies.
\set SHOW_CONTEXT never
SET client_min_messages = warning;

CREATE TABLE ex_pairs (n int PRIMARY KEY, what text, a text, b text);
INSERT INTO ex_pairs VALUES
  (1, 'edited Chinese copy',
      '在距离县城六十多公里的青山镇中心小学，一座由旧教室改建而成的图书馆日前正式向全校师生开放。图书馆面积约180平方米，藏书一万二千余册，涵盖科普、历史、文学和绘本等门类，另配有32个阅读座位和4台电子阅读终端。',
      '在距离县城六十多公里的青山镇中心小学，一座由旧教室改建而成的图书馆近日正式向全校师生开放。图书馆面积约180平方米，藏书一万二千余册，另配有32个阅读座位和4台电子阅读终端。'),
  (2, 'edited English copy',
      'Forest officials in the northern region warned on Thursday that this summer''s wildfire risk is the highest in more than a decade, after the driest spring since record keeping began in 1961. Rainfall between March and May was just 38 percent of the long-term average, according to the regional weather office.',
      'Forest officials in the northern region said on Thursday that this summer''s wildfire risk is the highest in more than a decade, after the driest spring since record keeping began in 1961. Rainfall between March and May was just 38 percent of the long-term average.'),
  (3, 'wrapped in a long footer',
      'The city council approved the new budget on Tuesday after a long debate about funding for public libraries and parks.',
      'The city council approved the new budget on Tuesday after a long debate about funding for public libraries and parks. Subscribe to our newsletter for more local news, weather and sports, delivered to your inbox every morning before seven.'),
  (4, 'unrelated',
      '临江市地铁5号线一期工程于12月28日上午9时正式开通运营。该线路全长31.6公里，共设车站24座。',
      'The city council approved the new budget on Tuesday after a long debate about funding for public libraries and parks.'),
  (5, 'short text with a typo',
      'the quick brown fox jumps over the dog',
      'the quick brown fox jumsp over the dog'),
  (6, 'featureless', '。。。', '。。。'),
  (7, 'empty', '', 'some text'),
  (8, 'identical', '同一段文字，一字不差。', '同一段文字，一字不差。');

-- ---------------------------------------------------------------------------------------------
-- 1. One explanation in full: without a table, the defaults of both dedup triggers.
-- ---------------------------------------------------------------------------------------------
SELECT jsonb_pretty(simdup_explain(a, b)) FROM ex_pairs WHERE n = 1;
SELECT * FROM simdup_explain_passages((SELECT a FROM ex_pairs WHERE n = 2), (SELECT b FROM ex_pairs WHERE n = 2));

-- ---------------------------------------------------------------------------------------------
-- 2. The figures equal simhash, hamming, jaccard and containment; a_in_b and b_in_a are the
-- shares of each text's shingles found in the other.
-- ---------------------------------------------------------------------------------------------
SELECT n, what,
       (e->'a'->>'simhash')::bigint IS NOT DISTINCT FROM simhash(a)
         AND (e->'b'->>'simhash')::bigint IS NOT DISTINCT FROM simhash(b) AS simhash,
       (e->>'hamming')::int IS NOT DISTINCT FROM hamming(simhash(a), simhash(b)) AS hamming,
       (e->>'jaccard')::float8 IS NOT DISTINCT FROM jaccard(a, b) AS jaccard,
       (e->>'containment')::float8 IS NOT DISTINCT FROM containment(a, b) AS containment,
       (e->>'a_in_b')::float8 IS NOT DISTINCT FROM
         (SELECT count(*)::float8 / cardinality(shingles(a)) FROM unnest(shingles(a)) x WHERE x = ANY (shingles(b))) AS a_in_b,
       (e->>'b_in_a')::float8 IS NOT DISTINCT FROM
         (SELECT count(*)::float8 / cardinality(shingles(b)) FROM unnest(shingles(b)) x WHERE x = ANY (shingles(a))) AS b_in_a,
       (e->'a'->>'shingles')::int = coalesce(cardinality(shingles(a)), 0) AS shingles,
       e->>'hamming' AS distance, round((e->>'jaccard')::numeric, 3) AS j, round((e->>'containment')::numeric, 3) AS c
FROM ex_pairs, simdup_explain(a, b) e ORDER BY n;

-- ---------------------------------------------------------------------------------------------
-- 3. The passages reassemble each text exactly, as rows and in the jsonb.
-- ---------------------------------------------------------------------------------------------
SELECT p.n,
       coalesce(string_agg(x.passage, '' ORDER BY x.ord) FILTER (WHERE x.side <> 'b'), '') = p.a AS a_reassembled,
       coalesce(string_agg(x.passage, '' ORDER BY x.ord) FILTER (WHERE x.side <> 'a'), '') = p.b AS b_reassembled,
       count(x.ord) FILTER (WHERE x.side = 'both') AS shared, count(x.ord) FILTER (WHERE x.side <> 'both') AS changed
FROM ex_pairs p LEFT JOIN LATERAL simdup_explain_passages(p.a, p.b) x ON true
GROUP BY p.n, p.a, p.b ORDER BY p.n;
SELECT n,
       coalesce((SELECT string_agg(q->>'text', '' ORDER BY i) FROM jsonb_array_elements(e->'passages') WITH ORDINALITY t(q, i) WHERE q->>'side' <> 'b'), '') = a AS a_reassembled,
       coalesce((SELECT string_agg(q->>'text', '' ORDER BY i) FROM jsonb_array_elements(e->'passages') WITH ORDINALITY t(q, i) WHERE q->>'side' <> 'a'), '') = b AS b_reassembled,
       e->'alignment' AS alignment
FROM ex_pairs, simdup_explain(a, b) e ORDER BY n;

-- ---------------------------------------------------------------------------------------------
-- 4. The verdicts are what the triggers do: each pair's a inserted, then its b, into a verified
-- SimHash dedup table and a similarity dedup table (mark mode: b's dup_of says it).
-- ---------------------------------------------------------------------------------------------
CREATE TABLE ex_simhash (id int PRIMARY KEY, body text);
SELECT simdup_enable('ex_simhash', 'body', on_duplicate => 'mark');
-- max_distance 64: every pair is a candidate, the verification alone decides.
CREATE TABLE ex_verify (id int PRIMARY KEY, body text);
SELECT simdup_enable('ex_verify', 'body', on_duplicate => 'mark', max_distance => 64);
CREATE TABLE ex_strict (id int PRIMARY KEY, body text);
SELECT simdup_enable('ex_strict', 'body', on_duplicate => 'mark', max_distance => 64, threshold => 0.75);
CREATE TABLE ex_similar (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('ex_similar', 'body', on_duplicate => 'mark');
CREATE TABLE ex_similar75 (id int PRIMARY KEY, body text);
SELECT bands, rows FROM simdup_enable_similar('ex_similar75', 'body', 0.75, on_duplicate => 'mark', containment => NULL);
CREATE TABLE ex_raw (id int PRIMARY KEY, body text);
SELECT simdup_enable('ex_raw', 'body', on_duplicate => 'reject', max_distance => 3, verify => false);
CREATE TABLE ex_outcome (tbl text, n int, duplicate boolean, PRIMARY KEY (tbl, n));
DO $$
DECLARE
    p record;
    t text;
BEGIN
    FOR p IN SELECT * FROM ex_pairs ORDER BY n LOOP
        FOREACH t IN ARRAY ARRAY['ex_simhash', 'ex_verify', 'ex_strict', 'ex_similar', 'ex_similar75'] LOOP
            EXECUTE format('DELETE FROM %I', t);
            EXECUTE format('INSERT INTO %I VALUES (1, $1)', t) USING p.a;
            EXECUTE format('INSERT INTO %I VALUES (2, $1)', t) USING p.b;
            EXECUTE format('INSERT INTO ex_outcome SELECT %L, %s, dup_of IS NOT NULL FROM %I WHERE id = 2', t, p.n, t);
        END LOOP;
        DELETE FROM ex_raw;
        INSERT INTO ex_raw VALUES (1, p.a);
        BEGIN
            INSERT INTO ex_raw VALUES (2, p.b);
            INSERT INTO ex_outcome VALUES ('ex_raw', p.n, false);
        EXCEPTION WHEN unique_violation THEN
            INSERT INTO ex_outcome VALUES ('ex_raw', p.n, true);
        END;
    END LOOP;
END
$$;
SELECT o.tbl, o.n, o.duplicate AS trigger_says, (v->>'duplicate')::boolean AS explained, v->>'rule' AS rule, v->>'action' AS action,
       v->'candidate_via' AS via
FROM ex_outcome o JOIN ex_pairs p USING (n), simdup_explain(p.a, p.b, o.tbl::regclass) e, jsonb_array_elements(e->'verdicts') v
ORDER BY o.tbl, o.n;
SELECT count(*) AS disagreements
FROM ex_outcome o JOIN ex_pairs p USING (n), simdup_explain(p.a, p.b, o.tbl::regclass) e
WHERE jsonb_array_length(e->'verdicts') <> 1 OR (e->'verdicts'->0->>'duplicate')::boolean IS DISTINCT FROM o.duplicate;
-- Why, for the wrapped copy, the unrelated texts and the short text with a typo:
SELECT o.tbl, o.n, e->'verdicts'->0->>'reason' AS reason
FROM ex_outcome o JOIN ex_pairs p USING (n), simdup_explain(p.a, p.b, o.tbl::regclass) e
WHERE o.n IN (3, 4, 5) ORDER BY o.tbl, o.n;
-- The table's settings, from its trigger's arguments; the default verdicts without a table.
SELECT v - 'reason' FROM jsonb_array_elements(simdup_explain('x', 'y', 'ex_simhash')->'verdicts') v;
SELECT v - 'reason' FROM jsonb_array_elements(simdup_explain('x', 'y', 'ex_similar')->'verdicts') v;
SELECT v->>'trigger' AS trigger, v->>'duplicate' AS duplicate, v->>'rule' AS rule
FROM ex_pairs, jsonb_array_elements(simdup_explain(a, b)->'verdicts') v WHERE n = 3;

-- ---------------------------------------------------------------------------------------------
-- 5. Two stored rows by their keys: the same explanation, with the keys; the caller's
-- privileges and row-level security apply.
-- ---------------------------------------------------------------------------------------------
DELETE FROM ex_simhash;
INSERT INTO ex_simhash SELECT n, a FROM ex_pairs WHERE n IN (1, 2);
INSERT INTO ex_simhash SELECT n + 10, b FROM ex_pairs WHERE n IN (1, 2);
SELECT id, dup_of FROM ex_simhash ORDER BY id;
SELECT simdup_explain_rows('ex_simhash', '1', '11') = simdup_explain(a, b, 'ex_simhash') || '{"keys": {"a": "1", "b": "11"}}'
       AS same_as_texts
FROM ex_pairs WHERE n = 1;
SELECT k.a, k.b, simdup_explain_rows('ex_simhash', k.a, k.b)->'verdicts'->0->>'duplicate' AS duplicate
FROM simdup_pairs('ex_simhash', 64) k ORDER BY k.a, k.b;
\set VERBOSITY default
SELECT simdup_explain_rows('ex_simhash', '1', '99');
SELECT simdup_explain_rows('ex_simhash', '1', 'one');
CREATE ROLE ex_reader;
SET ROLE ex_reader;
SELECT simdup_explain_rows('ex_simhash', '1', '11');
RESET ROLE;
GRANT SELECT (id) ON ex_simhash TO ex_reader;
SET ROLE ex_reader;
SELECT simdup_explain_rows('ex_simhash', '1', '11');
RESET ROLE;
GRANT SELECT ON ex_simhash TO ex_reader;
ALTER TABLE ex_simhash ENABLE ROW LEVEL SECURITY;
CREATE POLICY ex_first ON ex_simhash FOR SELECT USING (id < 10);
SET ROLE ex_reader;
SELECT simdup_explain_rows('ex_simhash', '1', '2')->'verdicts'->0->>'duplicate' AS visible_rows;
SELECT simdup_explain_rows('ex_simhash', '1', '11');
RESET ROLE;
ALTER TABLE ex_simhash DISABLE ROW LEVEL SECURITY;
-- A role that shadows the functions simdup_explain_rows uses never has them called.
GRANT CREATE ON SCHEMA public TO ex_reader;
SET ROLE ex_reader;
CREATE TABLE public.ex_ran (what text);
GRANT INSERT, SELECT ON public.ex_ran TO PUBLIC;
CREATE FUNCTION public.format(f text, a text, b regclass, c text, d regtype) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.ex_ran VALUES ('format'); RETURN pg_catalog.format(f, a, b, c, d); END$$;
CREATE FUNCTION public.jsonb_build_object(a text, b text, c text, d text) RETURNS jsonb LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.ex_ran VALUES ('jsonb_build_object'); RETURN '{}'; END$$;
CREATE FUNCTION public.quote_ident(a text) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.ex_ran VALUES ('quote_ident'); RETURN a; END$$;
RESET ROLE;
SET search_path = public, pg_catalog;
SELECT simdup_explain_rows('ex_simhash', '1', '11') IS NOT NULL AS explained;
SELECT simdup_explain_rows('ex_simhash', '1', '99');
RESET search_path;
SELECT count(*) AS shadow_calls FROM public.ex_ran;
DROP TABLE public.ex_ran;
DROP FUNCTION public.format(text, text, regclass, text, regtype), public.jsonb_build_object(text, text, text, text),
  public.quote_ident(text);
REVOKE CREATE ON SCHEMA public FROM ex_reader;
REVOKE ALL ON ex_simhash FROM ex_reader;
DROP POLICY ex_first ON ex_simhash;

-- ---------------------------------------------------------------------------------------------
-- 6. NULL, empty, featureless and wrong input; tables without a dedup trigger or text.
-- ---------------------------------------------------------------------------------------------
SELECT simdup_explain(NULL, 'x') IS NULL AS a_null, simdup_explain('x', NULL, 'ex_simhash') IS NULL AS b_null,
       simdup_explain_rows('ex_simhash', NULL, '1') IS NULL AS key_null,
       (SELECT count(*) FROM simdup_explain_passages(NULL, 'x')) AS passages_of_null;
SELECT e->'hamming' AS hamming, e->'jaccard' AS jaccard, e->'passages' AS passages,
       jsonb_path_query_array(e, '$.verdicts[*].reason') AS reasons
FROM simdup_explain('', '') e;
SELECT e->'hamming' AS hamming, e->'jaccard' AS jaccard, jsonb_path_query_array(e, '$.verdicts[*].reason') AS reasons
FROM simdup_explain('。。。', '！！！') e;
SELECT simdup_explain('a', 'b', 'pg_class');
CREATE TABLE ex_adopted (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable('ex_adopted', NULL, 'fp', on_duplicate => 'reject');
SELECT simdup_explain_rows('ex_adopted', '1', '2');
SELECT v->>'reason' AS reason FROM jsonb_array_elements(simdup_explain('南京长江大桥', '南京长江大桥', 'ex_adopted')->'verdicts') v;
\set VERBOSITY terse

-- ---------------------------------------------------------------------------------------------
-- 7. Huge input: a 100 KB pair (an edited copy, and unrelated text) returns, and its passages
-- still reassemble both texts; a text of more than 400,000 units is refused.
-- ---------------------------------------------------------------------------------------------
CREATE TABLE ex_huge AS
SELECT string_agg(z.a || '第' || i || '段。', '' ORDER BY i) AS a,
       string_agg(CASE WHEN i % 50 = 0 THEN z.b ELSE z.a END || '第' || i || '段。', '' ORDER BY i) AS b,
       string_agg(e.a || ' Paragraph ' || i || '.', ' ' ORDER BY i) AS other
FROM ex_pairs z, ex_pairs e, generate_series(1, 400) i WHERE z.n = 1 AND e.n = 2;
SELECT octet_length(a) > 100000 AS a_over_100kb, octet_length(b) > 100000 AS b_over_100kb, octet_length(other) > 100000 AS other_over_100kb FROM ex_huge;
SELECT (e->>'jaccard')::float8 = jaccard(a, b) AS jaccard,
       (SELECT string_agg(q->>'text', '' ORDER BY i) FROM jsonb_array_elements(e->'passages') WITH ORDINALITY t(q, i) WHERE q->>'side' <> 'b') = a AS a_reassembled,
       (SELECT string_agg(q->>'text', '' ORDER BY i) FROM jsonb_array_elements(e->'passages') WITH ORDINALITY t(q, i) WHERE q->>'side' <> 'a') = b AS b_reassembled,
       e->'alignment' AS alignment
FROM ex_huge, simdup_explain(a, b) e;
SELECT (SELECT string_agg(passage, '' ORDER BY ord) FROM simdup_explain_passages(a, other) WHERE side <> 'b') = a AS a_reassembled,
       (SELECT string_agg(passage, '' ORDER BY ord) FROM simdup_explain_passages(a, other) WHERE side <> 'a') = other AS other_reassembled,
       (SELECT count(*) FROM simdup_explain_passages(a, other)) AS passages
FROM ex_huge;
\set VERBOSITY default
SELECT simdup_explain(repeat('字', 400001), 'x');
SELECT count(*) FROM simdup_explain_passages('x', repeat('字', 400001));
\set VERBOSITY terse

DROP TABLE ex_pairs, ex_outcome, ex_simhash, ex_verify, ex_strict, ex_similar, ex_similar75, ex_raw, ex_adopted, ex_huge;
DROP ROLE ex_reader;
