-- simhash(text) -> bigint: a 64-bit SimHash fingerprint of Chinese and English text.
-- These values are golden vectors of fingerprint format 1: they must never change
-- unless the format version changes on purpose.
SELECT simdup_fingerprint_version();

SELECT simhash('南京市长江大桥于1968年建成通车，是长江上第一座由中国自行设计建造的双层铁路公路两用桥。') AS zh,
       simhash('The quick brown fox jumps over the lazy dog near the river bank.') AS en,
       simhash('Rust 语言的 PostgreSQL 扩展 simdup 用 SimHash 查找近似重复文档。') AS mixed;

-- Normalization: full-width letters and digits, case and spacing do not matter.
SELECT simhash('ＰｏｓｔｇｒｅＳＱＬ １５ 数据库') = simhash('postgresql 15 数据库') AS fullwidth_equal,
       simhash('Hello   World') = simhash('hello world') AS case_and_space_equal;

-- Punctuation carries no weight: only words and numbers are features.
SELECT simhash('今天天气很好！！！') = simhash('今天天气很好。') AS punctuation_ignored;

-- NULL in, NULL out; text without any word or number has no fingerprint.
SELECT simhash(NULL) IS NULL AS null_in_null_out,
       simhash('') IS NULL AS empty,
       simhash('   ') IS NULL AS whitespace,
       simhash('。。。') IS NULL AS punctuation_only,
       simhash('😀🎉👍') IS NULL AS emoji_only;

-- A lightly edited copy is close; an unrelated text is far.
WITH t(a, b, c) AS (VALUES (
  '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，扣除价格因素实际增长百分之五点九，城乡居民收入差距继续缩小，农村居民收入增速快于城镇居民。',
  '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三，城乡居民收入差距继续缩小，农村居民收入增速快于城镇居民。',
  '本届马拉松比赛吸引了来自二十多个国家和地区的三万名跑者参加，男子组冠军以两小时八分的成绩打破赛会纪录，赛道沿途有数十万市民为选手加油助威。'))
SELECT simhash(a) <~> simhash(b) AS edited_distance,
       simhash(a) <~> simhash(c) AS unrelated_distance
FROM t;

-- simhash_features(text): what went into a fingerprint.
SELECT token, round(weight::numeric, 3) AS weight, count, round(idf::numeric, 3) AS idf, hash
FROM simhash_features('数据库 数据库 的 PostgreSQL，今天！');

SELECT count(*) AS no_features FROM simhash_features('……！！');
