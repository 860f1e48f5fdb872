-- The block indexes find exactly what a sequential scan with hamming(fp, q) <= k finds, for
-- k = 0..16, through simdup_match and the query forms (hamming(fp, q) <= k, fp <~> q < k),
-- for the default layout (four 16-bit blocks), layouts of 3 and 8 blocks, and the 0.1.0 block
-- indexes (simhash_block(fp, i) INCLUDE (fp)) that tables enabled before 0.2.0 keep.
-- Fingerprints: variants of a few bases with bits
-- flipped where it is hardest for the block scheme (spread evenly over the four blocks, at block
-- boundaries, all in one block) and at random, plus random fingerprints and fingerprints of
-- edited real text.
SELECT setseed(0.42);
CREATE TABLE ex (id serial PRIMARY KEY, kind text NOT NULL, fp bigint);

CREATE TEMP TABLE bases (base_id int, fp bigint);
INSERT INTO bases VALUES (1, 0), (2, -1), (3, x'0123456789abcdef'::bigint),
  (4, x'8000000000000001'::bigint), (5, x'00000000ffffffff'::bigint);
-- Random 64-bit values: hashint8extended is uniform over all 64 bits (random() * 2^64 is not:
-- a double has 53 significant bits).
INSERT INTO bases SELECT 5 + g, hashint8extended(g, 1) FROM generate_series(1, 5) g;

-- Bit orders: spread round-robin over the blocks (0, 16, 32, 48, 1, 17, ...), around the block
-- boundaries, inside one block, and random. Bit n is value 1 << n (bit 63 = sign).
CREATE TEMP TABLE orders (name text, bits int[]);
INSERT INTO orders VALUES
  ('spread', ARRAY(SELECT (j % 4) * 16 + j / 4 FROM generate_series(0, 63) j)),
  ('boundaries', '{15,16,31,32,47,48,63,0,14,17,30,33,46,49,62,1,13,18}'),
  ('block0', ARRAY(SELECT 48 + j FROM generate_series(0, 15) j)),
  ('block1', ARRAY(SELECT 32 + j FROM generate_series(0, 15) j)),
  ('block2', ARRAY(SELECT 16 + j FROM generate_series(0, 15) j)),
  ('block3', ARRAY(SELECT j FROM generate_series(0, 15) j));
INSERT INTO orders SELECT 'random' || r, ARRAY(SELECT j FROM generate_series(0, 63) j ORDER BY random())
FROM generate_series(1, 3) r;

CREATE FUNCTION pg_temp.flip(fp bigint, bits int[]) RETURNS bigint LANGUAGE sql AS $$
  SELECT fp # coalesce((SELECT bit_or(CASE WHEN b = 63 THEN (-9223372036854775807 - 1)::bigint
                                         ELSE 1::bigint << b END) FROM unnest(bits) b), 0)
$$;

-- Every base, every order, 0..18 flipped bits.
INSERT INTO ex (kind, fp)
SELECT 'flipped', pg_temp.flip(b.fp, o.bits[1:d])
FROM bases b, orders o, generate_series(0, 18) d
WHERE d <= cardinality(o.bits);
-- Random fingerprints.
INSERT INTO ex (kind, fp) SELECT 'random', hashint8extended(g, 2) FROM generate_series(1, 3000) g;
-- Edited copies of real text: sentences dropped, characters replaced, punctuation changed.
CREATE TEMP TABLE texts (t text);
INSERT INTO texts VALUES
  ('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。城乡居民收入差距继续缩小，农村居民收入增速快于城镇居民。消费支出稳步恢复，服务性消费增长较快。'),
  ('本届马拉松比赛吸引了来自二十多个国家和地区的三万名跑者参加，男子组冠军以两小时八分的成绩打破赛会纪录。赛道沿途有数十万市民为选手加油助威。组委会表示明年将继续扩大参赛规模。'),
  ('The city council approved a new budget on Tuesday that increases spending on public transport and schools. The mayor said the plan would be funded by higher parking fees. Opponents argued that small businesses would suffer.'),
  ('Researchers at the university have developed a battery that charges in five minutes and lasts for ten years. The team plans to test it in electric buses next spring. Investors have already shown strong interest.');
INSERT INTO ex (kind, fp)
SELECT 'text', simhash(v)
FROM texts,
LATERAL (
  SELECT t UNION ALL
  SELECT regexp_replace(t, '[。.][^。.]*[。.]$', '。') UNION ALL
  SELECT replace(t, '，', '、') UNION ALL
  SELECT substr(t, 1, length(t) * 3 / 4) UNION ALL
  SELECT substr(t, length(t) / 5) UNION ALL
  SELECT overlay(t placing '某某' from (g * 7) for 2) FROM generate_series(1, 12) g UNION ALL
  SELECT t || ' 附加说明：本文有删改。'
) s(v);
SELECT kind, count(*) FROM ex GROUP BY kind ORDER BY kind;

SELECT simdup_enable('ex', NULL, 'fp');
ANALYZE ex;

-- Queries: the bases, some random rows and some text rows of the table, and a few fingerprints
-- not in the table.
CREATE TEMP TABLE queries AS
SELECT 'base' AS kind, fp FROM bases
UNION ALL (SELECT 'random', fp FROM ex WHERE kind = 'random' ORDER BY id LIMIT 20)
UNION ALL (SELECT 'text', fp FROM ex WHERE kind = 'text' ORDER BY id LIMIT 30)
UNION ALL SELECT 'outside', pg_temp.flip(fp, '{5,21,37,53,6,22,38,54}') FROM bases;
ANALYZE queries;

-- Through the indexes: each (query, k) runs as a Tid Scan over _simdup_tids, parameterized by
-- the outer row (plan below; enable_seqscan = off only guards this plan against a cost change).
-- (The plan without PostgreSQL 18's "Disabled: true" lines, the same on every major.)
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
SELECT * FROM pg_temp.plan('SELECT q.fp, k, e.id FROM queries q, generate_series(0, 16) k, ex e WHERE simdup_match(e.fp, q.fp, k)');
CREATE TEMP TABLE via_index AS
SELECT q.fp AS q, k, e.id FROM queries q, generate_series(0, 16) k, ex e WHERE simdup_match(e.fp, q.fp, k);
RESET enable_seqscan;

-- The same by brute force: simdup's planner step off, so a sequential scan.
SET simdup.index_search = off;
EXPLAIN (COSTS OFF)
SELECT q.fp, k, e.id FROM queries q, generate_series(0, 16) k, ex e WHERE hamming(e.fp, q.fp) <= k;
CREATE TEMP TABLE via_seq AS
SELECT q.fp AS q, k, e.id FROM queries q, generate_series(0, 16) k, ex e WHERE hamming(e.fp, q.fp) <= k;
RESET simdup.index_search;

SELECT count(*) AS mismatches FROM (
  (TABLE via_index EXCEPT ALL TABLE via_seq) UNION ALL (TABLE via_seq EXCEPT ALL TABLE via_index)
) x;

-- The query forms, for any block layout: mismatches against the sequential scan, and whether
-- the plan used the block indexes.
CREATE FUNCTION pg_temp.form_mismatches() RETURNS TABLE (form text, tid_scan boolean, mismatches bigint)
LANGUAGE plpgsql AS $$
DECLARE
  f text;
BEGIN
  SET LOCAL enable_seqscan = off;
  FOREACH f IN ARRAY ARRAY['hamming(e.fp, q.fp) <= k', 'e.fp <~> q.fp < k + 1', 'k >= q.fp <~> e.fp'] LOOP
    EXECUTE 'CREATE TEMP TABLE via_form AS SELECT q.fp AS q, k, e.id FROM queries q, generate_series(0, 16) k, ex e WHERE ' || f;
    SELECT count(*) INTO mismatches FROM (
      (TABLE via_form EXCEPT ALL TABLE via_seq) UNION ALL (TABLE via_seq EXCEPT ALL TABLE via_form)) x;
    DROP TABLE via_form;
    form := f;
    SELECT bool_or(l LIKE '%Tid Scan on ex%') INTO tid_scan
    FROM pg_temp.explain_lines('SELECT q.fp, k, e.id FROM queries q, generate_series(0, 16) k, ex e WHERE ' || f) l;
    RETURN NEXT;
  END LOOP;
END $$;
CREATE FUNCTION pg_temp.explain_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL enable_seqscan = off;
  RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;
SELECT * FROM pg_temp.form_mismatches();
-- The same through the B-tree access method instead of simdup's page reader.
SET simdup.page_reader = off;
SELECT * FROM pg_temp.form_mismatches();
RESET simdup.page_reader;

-- Three blocks (22, 21, 21 bits), then eight of 8 bits.
SELECT simdup_reindex('ex', 3);
SELECT block, bit_offset, bits, kind FROM simdup_block_indexes('ex');
SELECT * FROM pg_temp.form_mismatches();
SELECT simdup_reindex('ex', 8);
SELECT count(*) AS blocks, min(bits), max(bits) FROM simdup_block_indexes('ex');
SELECT * FROM pg_temp.form_mismatches();

-- The block indexes of simdup 0.1.0, as its simdup_enable built them.
DO $$
DECLARE idx regclass;
BEGIN
  FOR idx IN SELECT index FROM simdup_block_indexes('ex') LOOP
    EXECUTE format('DROP INDEX %s', idx);
  END LOOP;
END $$;
CREATE INDEX ex_fp_b0_idx ON ex ((simhash_block(fp, 0))) INCLUDE (fp);
CREATE INDEX ex_fp_b1_idx ON ex ((simhash_block(fp, 1))) INCLUDE (fp);
CREATE INDEX ex_fp_b2_idx ON ex ((simhash_block(fp, 2))) INCLUDE (fp);
CREATE INDEX ex_fp_b3_idx ON ex ((simhash_block(fp, 3))) INCLUDE (fp);
SELECT block, bit_offset, bits, kind FROM simdup_block_indexes('ex');
SELECT * FROM pg_temp.form_mismatches();
-- simdup_reindex moves them to the key indexes of 0.2.0.
SELECT simdup_reindex('ex');
SELECT index, block, bit_offset, bits, kind FROM simdup_block_indexes('ex');
SELECT * FROM pg_temp.form_mismatches();
-- Any layout to any other, the same one included: 4 -> 4 -> 8 -> 2 -> 3 -> 4 (two 32-bit blocks
-- are not searched here: at k = 16 they would probe one block in full).
SELECT simdup_reindex('ex'), simdup_reindex('ex', 8), simdup_reindex('ex', 2), simdup_reindex('ex', 3);
SELECT block, bit_offset, bits, kind FROM simdup_block_indexes('ex');
SELECT * FROM pg_temp.form_mismatches();
SELECT simdup_reindex('ex');
SELECT count(*) AS blocks, min(bits), max(bits), min(kind) AS kind FROM simdup_block_indexes('ex');

SELECT k, count(*) AS matches FROM via_index GROUP BY k ORDER BY k;

-- The same with literal constants, one statement per (query, k), as an application would send
-- them; k up to 16.
CREATE FUNCTION pg_temp.literal_mismatches() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  qfp bigint; kk int; n bigint := 0; got int[]; want int[];
BEGIN
  FOR qfp IN SELECT DISTINCT fp FROM queries LOOP
    FOR kk IN 0..16 LOOP
      EXECUTE format('SELECT array_agg(id ORDER BY id) FROM ex WHERE simdup_match(fp, %s, %s)', qfp, kk) INTO got;
      SELECT array_agg(DISTINCT v.id ORDER BY v.id) INTO want FROM via_seq v WHERE v.q = qfp AND v.k = kk;
      IF got IS DISTINCT FROM want THEN n := n + 1; END IF;
    END LOOP;
  END LOOP;
  RETURN n;
END $$;
SELECT pg_temp.literal_mismatches() AS mismatches, count(DISTINCT fp) * 17 AS statements FROM queries;

-- Exact nearest neighbours: simdup_nearest(tbl, q, n) against a sort of the whole table by
-- distance (ties by ctid), for every query and n = 1, 5, 50.
CREATE FUNCTION pg_temp.nearest_mismatches() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  qfp bigint; n int; bad bigint := 0; got text; want text;
BEGIN
  SET LOCAL simdup.index_search = off;
  FOR qfp IN SELECT DISTINCT fp FROM queries LOOP
    FOREACH n IN ARRAY ARRAY[1, 5, 50] LOOP
      SELECT string_agg(ctid::text || ':' || distance, ' ' ORDER BY distance, ctid) INTO got
      FROM simdup_nearest('ex', qfp, n, 'fp');
      SELECT string_agg(c::text || ':' || d, ' ' ORDER BY d, c) INTO want
      FROM (SELECT ctid AS c, hamming(fp, qfp) AS d FROM ex ORDER BY 2, 1 LIMIT n) x;
      IF got IS DISTINCT FROM want THEN bad := bad + 1; END IF;
    END LOOP;
  END LOOP;
  RETURN bad;
END $$;
SELECT pg_temp.nearest_mismatches() AS mismatches, count(DISTINCT fp) * 3 AS searches FROM queries;
\set SHOW_CONTEXT never
SELECT * FROM simdup_nearest('ex', 0, 0, 'fp');
SELECT * FROM simdup_nearest('ex', 0, 3, 'nope');
\set SHOW_CONTEXT errors

-- Distances exactly at the edge: for every base and order, the variant with d flipped bits is
-- found at k = d and not at k = d - 1.
SELECT count(*) FILTER (WHERE NOT found_at_d) AS missed_at_d,
       count(*) FILTER (WHERE found_below) AS found_below_d
FROM (
  SELECT EXISTS (SELECT FROM ex e WHERE e.fp = v.fp AND simdup_match(e.fp, b.fp, v.d)) AS found_at_d,
         v.d > 0 AND simdup_match(v.fp, b.fp, v.d - 1) AS found_below
  FROM bases b, orders o,
       LATERAL (SELECT d, pg_temp.flip(b.fp, o.bits[1:d]) AS fp
                FROM generate_series(0, 18) d WHERE d <= cardinality(o.bits)) v
) s;

DROP TABLE ex;

-- Many copies of a few fingerprints: B-tree deduplication stores them as posting lists (the
-- key indexes come out far smaller than 16 bytes an entry), which the page reader expands.
-- Every copy is found, by both readers, as by a sequential scan.
CREATE TABLE copies (id serial PRIMARY KEY, fp bigint);
INSERT INTO copies (fp)
SELECT hashint8extended(g % 7, 3) # CASE WHEN g % 5 = 0 THEN 1::bigint << (g % 64) ELSE 0 END
FROM generate_series(1, 20000) g;
SELECT simdup_enable('copies', NULL, 'fp');
SELECT max(pg_relation_size(index)) < 20000 * 16 AS posting_lists FROM simdup_block_indexes('copies');
CREATE FUNCTION pg_temp.copies_answers(reader text, via text) RETURNS TABLE (q int, k int, n bigint, ids bigint)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('simdup.page_reader', reader, true);
  PERFORM set_config('simdup.index_search', CASE WHEN via = 'index' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_seqscan', CASE WHEN via = 'index' THEN 'off' ELSE 'on' END, true);
  FOR q, k IN SELECT g, kk FROM generate_series(0, 7) g, unnest(ARRAY[0, 1, 3, 10]) kk LOOP
    EXECUTE format('SELECT count(*), sum(id) FROM copies WHERE hamming(fp, %s) <= %s',
                   hashint8extended(q, 3), k) INTO n, ids;
    RETURN NEXT;
  END LOOP;
END $$;
SELECT count(*) FILTER (WHERE p IS DISTINCT FROM s) AS page_reader_mismatches,
       count(*) FILTER (WHERE a IS DISTINCT FROM s) AS access_method_mismatches,
       sum((s).n) AS rows_found
FROM (SELECT x.q, x.k, x AS s FROM pg_temp.copies_answers('on', 'scan') x) s
JOIN (SELECT x.q, x.k, x AS p FROM pg_temp.copies_answers('on', 'index') x) p USING (q, k)
JOIN (SELECT x.q, x.k, x AS a FROM pg_temp.copies_answers('off', 'index') x) a USING (q, k);
DROP TABLE copies;

-- A temporary table: its indexes live in the backend's local buffers, which the page reader
-- reads (and finds again through ReadRecentBuffer) as it reads shared ones.
CREATE TEMP TABLE tt (id serial PRIMARY KEY, fp bigint);
INSERT INTO tt (fp) SELECT hashint8extended(g % 5000, 1) # (1::bigint << (g % 64)) FROM generate_series(1, 50000) g;
SELECT simdup_enable('tt', NULL, 'fp');
ANALYZE tt;
CREATE TEMP TABLE tt_answers AS
SELECT q, k, (SELECT count(*) || ':' || coalesce(sum(id), 0) FROM tt WHERE hamming(fp, hashint8extended(q, 1)) <= k) AS via_index
FROM generate_series(1, 40) q, unnest(ARRAY[0, 3, 10, 16]) k;
SELECT bool_or(l LIKE '%Tid Scan on tt%') AS served FROM pg_temp.explain_lines(
  'SELECT q, (SELECT count(*) FROM tt WHERE hamming(fp, hashint8extended(q, 1)) <= 3) FROM generate_series(1, 2) q') l;
SET simdup.index_search = off;
SELECT count(*) FILTER (WHERE via_index IS DISTINCT FROM
         (SELECT count(*) || ':' || coalesce(sum(id), 0) FROM tt WHERE hamming(fp, hashint8extended(q, 1)) <= k)) AS mismatches,
       sum(split_part(via_index, ':', 1)::bigint) AS rows_found
FROM tt_answers;
RESET simdup.index_search;
DROP TABLE tt, tt_answers;
