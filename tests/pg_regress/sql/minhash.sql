-- MinHash and Jaccard similarity over k-shingles, with LSH bands served by a GIN index.
-- The hashes printed here are golden values of MinHash format 1 (the same as the core's
-- tests/minhash_props.rs, read as signed bigint): they must never change unless
-- minhash_format_version() changes on purpose.
SELECT minhash_format_version();

-------------------------------------------------------------------------------------------
-- shingles(body, k DEFAULT 5) -> bigint[]: the set of hashes of the character k-shingles of
-- the normalized text (NFKC, lower case, every whitespace run one space, trimmed).
-- 'Hello,  World!' becomes 'hello, world!': 13 characters, 11 distinct 3-shingles.
-- The set is sorted as unsigned 64-bit numbers, which is not bigint order.
-------------------------------------------------------------------------------------------
SELECT shingles('Hello,  World!', 3);

SELECT cardinality(shingles('Hello,  World!', 3)) AS en_3,
       cardinality(shingles('今天天气很好，我们去公园散步。', 2)) AS zh_2,
       cardinality(shingles('今天天气很好，我们去公园散步。')) AS zh_default_5,
       cardinality(shingles('ab', 5)) AS shorter_than_k;

-- Normalization: full-width forms, case and whitespace do not matter; punctuation does.
SELECT shingles('ＨＥＬＬＯ,　ｗｏｒｌｄ!', 3) = shingles('hello,   world!', 3) AS normalized,
       shingles(E'  hello\t\nworld ', 3) = shingles('hello world', 3) AS whitespace_collapsed,
       shingles('hello world', 3) <> shingles('hello, world', 3) AS punctuation_counts;

-- word_shingles(body, k DEFAULT 3) -> bigint[]: k consecutive words (jieba for Chinese,
-- English words and numbers as words; punctuation dropped).
SELECT cardinality(word_shingles('我们在北京，We love Beijing 2024!', 2)) AS words_2,
       cardinality(word_shingles('我们在北京，We love Beijing 2024!')) AS words_default_3,
       word_shingles('We love Beijing!') = word_shingles('we, LOVE ... beijing') AS punctuation_dropped;

-------------------------------------------------------------------------------------------
-- jaccard(a text, b text, k DEFAULT 5) -> float8: exact |A ∩ B| / |A ∪ B| of the shingle sets.
-- abc bcd cde def vs abc bcd cde deg: 3 shared of 5.
-------------------------------------------------------------------------------------------
SELECT jaccard('abcdef', 'abcdeg', 3) AS three_of_five,
       jaccard('abcdef', 'ABCDEF', 3) AS same_after_normalization,
       jaccard('abcdef', 'uvwxyz', 3) AS disjoint;

-- jaccard(bigint[], bigint[]) compares stored shingle sets (any order, duplicates ignored).
SELECT jaccard(shingles('abcdef', 3), shingles('abcdeg', 3)) AS from_sets,
       jaccard(ARRAY[1, 2, 3, 3, 2]::bigint[], ARRAY[4, 3, 2]::bigint[]) AS unsorted_with_duplicates,
       jaccard(ARRAY[-1, 1]::bigint[], ARRAY[1]::bigint[]) AS negative_values,
       jaccard(word_shingles('我们在北京，We love Beijing 2024!', 1),
               word_shingles('我们在上海，We love Shanghai 2024!', 1)) AS word_level;

-------------------------------------------------------------------------------------------
-- NULL behaviour: NULL in, NULL out (all functions are STRICT). Text without shingles (empty
-- or whitespace only; for word shingles: no word or number) gives NULL, not an empty array,
-- and a similarity involving it is NULL, not 0 or 1.
-------------------------------------------------------------------------------------------
SELECT shingles(NULL) IS NULL AS null_in,
       shingles('') IS NULL AS empty,
       shingles(E' \t\n\u3000 ') IS NULL AS whitespace,
       shingles('。。。') IS NULL AS punctuation_only_has_char_shingles,
       word_shingles('。，！…… 😀') IS NULL AS no_words,
       jaccard('', '') IS NULL AS jaccard_empty_empty,
       jaccard('abc', '   ') IS NULL AS jaccard_one_empty,
       jaccard('{}'::bigint[], '{}'::bigint[]) IS NULL AS jaccard_empty_sets,
       minhash('') IS NULL AS minhash_empty,
       minhash('{}'::bigint[]) IS NULL AS minhash_empty_set,
       minhash_jaccard('{}', '{}') IS NULL AS estimate_of_nothing;

-------------------------------------------------------------------------------------------
-- minhash(body, k DEFAULT 5, n DEFAULT 128) -> bigint[]: n minimum hash values, one per fixed
-- permutation (seeds documented in the core). Deterministic; a shorter signature is a prefix
-- of a longer one; minhash(bigint[], n) signs any stored shingle set.
-------------------------------------------------------------------------------------------
SELECT minhash('Hello,  World!', 3, 16);

SELECT cardinality(minhash('Hello, World!')) AS default_n,
       minhash('Hello, World!', 5, 32) = (minhash('Hello, World!'))[1:32] AS prefix,
       minhash('Hello, World!') = minhash(shingles('Hello, World!')) AS from_shingle_set,
       minhash('Hello, World!') = minhash('HELLO,   WORLD!') AS normalized,
       cardinality(minhash(word_shingles('我们在北京，We love Beijing 2024!'), 64)) AS from_word_set;

-- minhash_jaccard(a, b) -> float8: the fraction of agreeing positions estimates Jaccard
-- similarity with standard deviation sqrt(J(1 - J)/n). Equal sets agree everywhere and
-- disjoint sets nowhere (the permutations are bijections).
WITH t(a, b, c) AS (VALUES (
  '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九，城乡居民收入差距继续缩小，农村居民收入增速快于城镇居民。',
  '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，城乡居民收入差距继续缩小，农村居民收入增速快于城镇居民。',
  '本届马拉松比赛吸引了来自二十多个国家和地区的三万名跑者参加，男子组冠军以两小时八分的成绩打破赛会纪录。'))
SELECT round(jaccard(a, b)::numeric, 3) AS exact,
       round(minhash_jaccard(minhash(a), minhash(b))::numeric, 3) AS estimate_128,
       round(minhash_jaccard(minhash(a, 5, 1024), minhash(b, 5, 1024))::numeric, 3) AS estimate_1024,
       minhash_jaccard(minhash(a), minhash(a)) AS same,
       minhash_jaccard(minhash(a), minhash(c)) AS unrelated
FROM t;

-------------------------------------------------------------------------------------------
-- LSH bands. minhash_bands(sig, bands, rows) -> bigint[] hashes each run of `rows` signature
-- values into one band value; two documents with Jaccard similarity J share at least one band
-- value with probability minhash_s_curve(J, bands, rows) = 1 - (1 - J^rows)^bands.
-------------------------------------------------------------------------------------------
SELECT minhash_bands(minhash('Hello,  World!', 3, 16), 4, 4);

SELECT cardinality(minhash_bands(minhash('Hello, World!'), 16, 8)) AS bands,
       minhash_bands(minhash('Hello, World!'), 16, 4) = minhash_bands((minhash('Hello, World!'))[1:64], 16, 4)
         AS unused_values_ignored,
       minhash_bands(minhash('Hello, World!'), 1, 128) <> minhash_bands(minhash('Hello, World?'), 1, 128)
         AS one_band_of_128_rows_differs;

-- Choosing bands x rows for a threshold: the S-curve of candidate probability for n = 128.
SELECT b AS bands, r AS rows, round(minhash_s_curve(0.5, b, r)::numeric, 3) AS "J=0.5",
       round(minhash_s_curve(0.6, b, r)::numeric, 3) AS "J=0.6",
       round(minhash_s_curve(0.7, b, r)::numeric, 3) AS "J=0.7",
       round(minhash_s_curve(0.8, b, r)::numeric, 3) AS "J=0.8",
       round(minhash_s_curve(0.9, b, r)::numeric, 3) AS "J=0.9"
FROM (VALUES (32, 4), (21, 6), (16, 8), (8, 16)) v(b, r);

-- minhash_choose_bands(n, threshold) picks them: the pair minimizing the false-positive plus
-- false-negative area under the S-curve, with the similarity where the curve is steepest.
SELECT t AS threshold, c.bands, c.rows, round(c.approx_threshold::numeric, 3) AS approx_threshold,
       round(minhash_s_curve(t, c.bands, c.rows)::numeric, 3) AS p_candidate_at_threshold
FROM unnest(ARRAY[0.5, 0.7, 0.8, 0.9]) t, minhash_choose_bands(128, t) c;

-------------------------------------------------------------------------------------------
-- Setting up a table for MinHash search: a stored generated signature and a GIN index on its
-- band values (GIN's built-in array_ops serves && on bigint[]).
-------------------------------------------------------------------------------------------
CREATE TABLE news (
  id   int PRIMARY KEY,
  body text NOT NULL,
  sig  bigint[] GENERATED ALWAYS AS (minhash(body)) STORED
);
CREATE INDEX news_bands ON news USING gin (minhash_bands(sig, 16, 8));

INSERT INTO news (id, body) VALUES
  (1, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九，城乡居民收入差距继续缩小，农村居民收入增速快于城镇居民。'),
  (2, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九。城乡居民收入差距继续缩小，农村居民收入增速快于城镇居民！'),
  (3, '本届马拉松比赛吸引了来自二十多个国家和地区的三万名跑者参加，男子组冠军以两小时八分的成绩打破赛会纪录，赛道沿途有数十万市民为选手加油助威。'),
  (4, 'The city council approved a new budget on Tuesday that raises spending on public transport by ten percent and freezes property taxes for another year.'),
  (5, 'The city council approved a new budget on Tuesday, raising spending on public transport by ten percent and freezing property taxes for another year.'),
  (6, '   ');
INSERT INTO news (id, body)
SELECT 100 + i, format('第%s号公告：本市将于%s月%s日起对%s路公交线路进行调整，请乘客留意站台通知并合理安排出行时间。', i, 1 + i % 12, 1 + i % 28, i * 7)
FROM generate_series(1, 300) i;
ANALYZE news;

SELECT count(*) AS rows, count(sig) AS signed, min(cardinality(sig)) AS n FROM news;

-- The search: band values shared with the query's, then ranked by the estimate (and checked
-- with exact Jaccard on the few candidates if wanted). In a generic plan the query signature
-- is computed once (the last text is memoized per backend).
PREPARE near(text) AS
SELECT id, round(minhash_jaccard(sig, minhash($1))::numeric, 2) AS estimate,
       round(jaccard(body, $1)::numeric, 2) AS exact
FROM news
WHERE minhash_bands(sig, 16, 8) && minhash_bands(minhash($1), 16, 8)
ORDER BY minhash_jaccard(sig, minhash($1)) DESC, id;

-- On a table this small the planner would rather read it all; a large one uses the index
-- without being told (see bench/fingerprint/minhash_bench.sh).
SET enable_seqscan = off;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE near('anything');
EXECUTE near('国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九，城乡居民收入差距继续缩小，农村居民收入增速快于城镇居民。');
EXECUTE near('The city council approved a new budget on Tuesday that raises spending on public transport by ten percent and freezes property taxes for another year.');
EXECUTE near('完全无关的一句话，不会找到任何候选。');
RESET plan_cache_mode;
RESET enable_seqscan;

-------------------------------------------------------------------------------------------
-- The estimate's error against exact Jaccard stays within its statistical bound
-- |estimate - J| <= 4 sqrt(J(1 - J)/n) + 1/n, over 400 pairs of edited news-like text
-- (sentences kept, dropped, shifted and edited deterministically per pair).
-------------------------------------------------------------------------------------------
CREATE TEMP TABLE sentences (j int, t text);
INSERT INTO sentences VALUES
  (0,  '国家统计局今天发布数据显示，前三季度全国居民人均可支配收入同比名义增长百分之六点三。'),
  (1,  '扣除价格因素，实际增长百分之五点九，城乡居民收入差距继续缩小。'),
  (2,  'The central bank left its benchmark interest rate unchanged for the third meeting in a row. '),
  (3,  '农村居民人均可支配收入增速快于城镇居民，工资性收入仍是主要来源。'),
  (4,  'Analysts had expected the decision, citing slowing inflation and a cooling labour market. '),
  (5,  '本届马拉松比赛吸引了来自二十多个国家和地区的三万名跑者参加。'),
  (6,  '男子组冠军以两小时八分的成绩打破赛会纪录，女子组冠军由一名肯尼亚选手获得。'),
  (7,  'Heavy rain is forecast for the southern provinces over the weekend, with local flooding possible. '),
  (8,  '赛道沿途有数十万市民为选手加油助威，志愿者在补给站为跑者提供饮用水和能量胶。'),
  (9,  '气象台预计，受冷空气影响，本周后期北方大部地区气温将下降六到八摄氏度。'),
  (10, 'Schools in the affected districts will move classes online until the roads are cleared. '),
  (11, '市交通运输局表示，地铁三号线延伸段将于年底前开通试运营，新增车站七座。'),
  (12, '专家提醒，老人和儿童应注意防寒保暖，外出时做好防护措施。'),
  (13, 'The company reported quarterly revenue of 4.2 billion dollars, up twelve percent from a year earlier. '),
  (14, '该公司表示，新工厂投产后年产能将达到五十万辆，预计带动就业两千余人。'),
  (15, '博物馆新展厅展出了三百余件出土文物，其中包括多件首次公开展示的青铜器。'),
  (16, 'Its shares rose more than five percent in after-hours trading following the announcement. '),
  (17, '展览将持续到明年三月，观众可通过官方网站提前预约参观。'),
  (18, '今年夏粮总产量再创历史新高，小麦单产水平进一步提高。'),
  (19, 'The museum said the exhibition had attracted more than forty thousand visitors in its first week. '),
  (20, '农业农村部负责人介绍，各地加强田间管理，有效应对了干旱和病虫害等不利影响。'),
  (21, '新学期开始，多所中小学开设了人工智能和编程课程，受到学生欢迎。'),
  (22, 'Officials said the new bridge would cut travel times between the two cities by almost an hour. '),
  (23, '该桥全长十二公里，是目前世界上跨度最大的双层公路铁路两用桥之一。');

-- Pair i: text a is a run of 3 to 14 consecutive sentences (wrapping around); text b is the run
-- shifted by 0 to 3 sentences, and every sentence of b whose position fits a pattern is edited
-- (a character dropped, a clause swapped, a number changed, or cut in half).
CREATE TEMP TABLE pairs AS
WITH p AS (
  SELECT i, i % 24 AS start, 3 + i % 12 AS len, (i / 24) % 4 AS shift, 2 + (i / 7) % 5 AS every
  FROM generate_series(0, 399) i
)
SELECT i,
  (SELECT string_agg(s.t, '' ORDER BY o) FROM generate_series(0, len - 1) o
     JOIN sentences s ON s.j = (start + o) % 24) AS a,
  (SELECT string_agg(CASE WHEN (o + i) % every <> 0 THEN s.t
                          WHEN (o + i) % 4 = 0 THEN overlay(s.t PLACING '' FROM 1 + (i % 9) FOR 1)
                          WHEN (o + i) % 4 = 1 THEN regexp_replace(s.t, '^(.*?)[，,](.*)$', '\2，\1')
                          WHEN (o + i) % 4 = 2 THEN translate(s.t, '三五七', '四六八')
                          ELSE left(s.t, length(s.t) / 2) END, '' ORDER BY o)
     FROM generate_series(0, len - 1) o
     JOIN sentences s ON s.j = (start + shift + o) % 24) AS b
FROM p;

CREATE TEMP TABLE checked AS
SELECT i, n, jaccard(a, b) AS j, minhash_jaccard(minhash(a, 5, n), minhash(b, 5, n)) AS est
FROM pairs, (VALUES (64), (128), (256)) v(n);

SELECT count(*) AS pairs,
       count(DISTINCT (a, b)) AS distinct_pairs,
       count(*) FILTER (WHERE j = 0) AS disjoint,
       count(*) FILTER (WHERE j > 0 AND j < 0.5) AS "0<J<0.5",
       count(*) FILTER (WHERE j >= 0.5 AND j < 1) AS "0.5<=J<1",
       count(*) FILTER (WHERE j = 1) AS equal
FROM checked JOIN pairs USING (i) WHERE n = 128;

-- Violations of the 4-sigma bound, for signatures of 64, 128 and 256 values; and, as a check
-- that the bound is not trivially loose, most estimates are within one standard deviation.
SELECT n, count(*) AS pairs,
       count(*) FILTER (WHERE abs(est - j) > 4 * sqrt(j * (1 - j) / n) + 1.0 / n) AS violations,
       count(*) FILTER (WHERE abs(est - j) <= sqrt(j * (1 - j) / n) + 1.0 / n) > 0.6 * count(*)
         AS mostly_within_one_sigma
FROM checked GROUP BY n ORDER BY n;

-------------------------------------------------------------------------------------------
-- Bad arguments raise invalid_parameter_value (22023) with a hint; NULL elements inside an
-- array argument raise null_value_not_allowed (22004). Never a crash.
-------------------------------------------------------------------------------------------
\set VERBOSITY default
SELECT shingles('abc', 0);
SELECT minhash('abc', 5, 0);
SELECT minhash_bands(minhash('abc'), 16, 9);
SELECT minhash_jaccard(minhash('abc'), minhash('abc', 5, 64));
SELECT minhash_choose_bands(128, 1.0);
SELECT minhash_jaccard(ARRAY[1, NULL]::bigint[], ARRAY[1, 2]::bigint[]);
\set VERBOSITY sqlstate
SELECT shingles('abc', -1);
SELECT shingles('abc', 257);
SELECT word_shingles('abc', 0);
SELECT jaccard('a', 'b', 0);
SELECT minhash('abc', 0);
SELECT minhash('abc', 5, -1);
SELECT minhash('abc', 5, 4097);
SELECT minhash(ARRAY[1, 2]::bigint[], 0);
SELECT minhash_bands(minhash('abc'), 0, 8);
SELECT minhash_bands(minhash('abc'), 16, -8);
SELECT minhash_bands(minhash('abc'), 2147483647, 2147483647);
SELECT minhash_bands('{}', 1, 1);
SELECT minhash_s_curve(1.5, 16, 8);
SELECT minhash_s_curve('NaN', 16, 8);
SELECT minhash_choose_bands(128, 0);
SELECT minhash_choose_bands(128, 'NaN');
SELECT minhash_choose_bands(0, 0.5);
SELECT jaccard(ARRAY[NULL]::bigint[], ARRAY[1]::bigint[]);
SELECT minhash(ARRAY[1, NULL]::bigint[]);
SELECT minhash_bands(ARRAY[1, NULL]::bigint[], 1, 1);
\set VERBOSITY default

-- Long computations honour statement_timeout: the core checks for interrupts every 64 KiB of
-- text and every 16 Ki shingles. Three million random CJK characters (three million distinct
-- shingles) take several seconds at n = 4096; the cancel comes within a fraction of that.
CREATE TEMP TABLE long_text AS
SELECT string_agg(chr(19968 + (random() * 20901)::int), '') AS t FROM generate_series(1, 3000000);
SELECT length(t) AS chars FROM long_text;
SET statement_timeout = '500ms';
SELECT clock_timestamp() AS t0 \gset
SELECT cardinality(minhash(t, 5, 4096)) FROM long_text;
SELECT clock_timestamp() - :'t0' < interval '2 s' AS minhash_cancelled_promptly;
-- jaccard over two 9 MB texts takes about half a second here: a shorter timeout.
SET statement_timeout = '100ms';
SELECT clock_timestamp() AS t0 \gset
SELECT jaccard(t, t || 'x') FROM long_text;
SELECT clock_timestamp() - :'t0' < interval '2 s' AS jaccard_cancelled_promptly;
RESET statement_timeout;
SELECT cardinality(minhash(repeat('南京市长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。', 100000))) AS nine_mb_ok;

-- Leave nothing behind for the tests that follow.
DROP TABLE news;
