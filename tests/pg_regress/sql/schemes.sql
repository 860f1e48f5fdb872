-- simhash(body, title) and simhash(body, title, scheme): title-aware fingerprints and the
-- alternative weighting schemes (docs/quality.md). Golden values: they must never change
-- (core/tests/golden.rs pins the same ones).
\pset null '(null)'

-- simhash(body, title) is format 1 of title || E'\n' || body; no title, simhash(body).
WITH t(body, title) AS (VALUES
  ('南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。综上所述，它是一座重要的桥梁。', '南京长江大桥通车'),
  ('The quick brown fox jumps over the lazy dog near the river bank. However, the dog did not wake up.', 'Quick fox, lazy dog'))
SELECT simhash(body, title) AS with_title,
       simhash(body, title) = simhash(title || E'\n' || body) AS is_title_newline_body,
       simhash(body, NULL) = simhash(body) AS null_title_is_body,
       simhash(body, '') = simhash(body) AS empty_title_is_body
FROM t;

-- The three schemes, golden values.
WITH t(n, body, title) AS (VALUES
  (1, '南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。综上所述，它是一座重要的桥梁。', '南京长江大桥通车'),
  (2, 'The quick brown fox jumps over the lazy dog near the river bank. However, the dog did not wake up.', 'Quick fox, lazy dog'),
  (3, 'Rust 语言的 PostgreSQL 扩展 simdup 用 SimHash 查找近似重复文档。', NULL))
SELECT n, s.scheme, simhash(body, title, s.scheme) AS fp
FROM t CROSS JOIN (VALUES ('default'), ('title'), ('improved')) s(scheme)
ORDER BY n, s.scheme;

-- 'default' is simhash(body, title); without a title, 'title' is simhash(body). Names are
-- matched case-insensitively, surrounding spaces ignored.
SELECT simhash('今天天气很好，我们去公园散步。', '公园', 'default') = simhash('今天天气很好，我们去公园散步。', '公园') AS default_is_two_arg,
       simhash('今天天气很好，我们去公园散步。', NULL, 'title') = simhash('今天天气很好，我们去公园散步。') AS title_without_title,
       simhash('今天天气很好，我们去公园散步。', '公园', ' Improved ') = simhash('今天天气很好，我们去公园散步。', '公园', 'improved') AS case_insensitive;

-- NULL body, NULL fingerprint. A body without words has no fingerprint, except under 'default'
-- with a title that has words (the title is fingerprinted with the body).
SELECT simhash(NULL, 'title') AS null_body,
       simhash(NULL, NULL) AS both_null,
       simhash(NULL, 'title', 'improved') AS null_body_scheme,
       simhash('。。。', '标题') AS no_words_with_title_is_title,
       simhash('。。。', NULL, 'improved') AS no_words;

-- The title weighs body words (scheme 'title': x5), visible in simhash_features.
SELECT token, round(weight::numeric, 3) AS weight, count, round(idf::numeric, 3) AS idf
FROM simhash_features('数据库 数据库 的 PostgreSQL，今天！', '数据库', 'title');
SELECT token, round(weight::numeric, 3) AS weight
FROM simhash_features('综上所述，我们的数据库很快。', NULL, 'improved');
SELECT count(*) AS null_body_no_rows FROM simhash_features(NULL, 'x', 'default');

-- The new functions are usable in generated columns (IMMUTABLE) with a nullable title.
CREATE TABLE docs (id int PRIMARY KEY, title text, body text,
                   fp bigint GENERATED ALWAYS AS (simhash(body, title)) STORED);
INSERT INTO docs VALUES (1, '公园', '今天天气很好，我们去公园散步。'), (2, NULL, '今天天气很好，我们去公园散步。');
SELECT id, fp = simhash(body, title) AS same, fp = simhash(body) AS body_only FROM docs ORDER BY id;
DROP TABLE docs;

-- Errors: an unknown scheme is 22023, a NULL scheme 22004, each with a hint.
\set VERBOSITY default
SELECT simhash('abc', NULL, 'zhang');
SELECT simhash('abc', NULL, NULL);
\set VERBOSITY sqlstate
SELECT simhash('abc', 'x', '');
SELECT simhash(NULL, NULL, 'nope');
SELECT * FROM simhash_features('abc', NULL, 'nope');
\set VERBOSITY default
