-- The test documents: the fixture paragraphs of core/tests/fixtures (10 Chinese, 5 English news
-- paragraphs and an edited copy of each, loaded by run.sh into fixture(name, body)) and
-- variants edited here, so that the pool holds many near-duplicates at small and larger
-- distances. pool is a plain table on the coordinator: the local reference for every check.
CREATE FUNCTION pool_sentences(t text) RETURNS text[] LANGUAGE sql IMMUTABLE
RETURN (SELECT array_agg(m[1] ORDER BY n)
        FROM regexp_matches(t, '[^。！？.!?]+[。！？.!?]*\s*', 'g') WITH ORDINALITY AS x(m, n));
CREATE FUNCTION pool_drop(s text[], i int) RETURNS text LANGUAGE sql IMMUTABLE
RETURN (SELECT string_agg(s[j], '' ORDER BY j) FROM generate_subscripts(s, 1) j WHERE j <> i);

CREATE TABLE pool (id int PRIMARY KEY, family int NOT NULL, kind text NOT NULL, body text NOT NULL,
                   fp bigint GENERATED ALWAYS AS (simhash(body)) STORED);
WITH f AS (SELECT dense_rank() OVER (ORDER BY replace(name, '.edited', '')) AS family, name, body,
                  pool_sentences(body) AS s
           FROM fixture),
v AS (
  SELECT family, name AS kind, body FROM f
  UNION ALL
  SELECT family, name || ' without sentence ' || i, pool_drop(s, i)
  FROM f, generate_series(1, cardinality(s)) i WHERE cardinality(s) > 2
  UNION ALL
  SELECT family, name || ' tagged ' || t, t || body
  FROM f, unnest(ARRAY['【本报讯】', 'Reuters - ', '（来源：新华网）']) t
  UNION ALL
  SELECT family, name || ' footer', body || '（责任编辑：李明）' FROM f
  UNION ALL
  SELECT family, name || ' cut to ' || p || '%', left(body, length(body) * p / 100)
  FROM f, unnest(ARRAY[70, 85]) p
)
INSERT INTO pool (id, family, kind, body)
SELECT row_number() OVER (ORDER BY family, kind), family, kind, body
FROM (SELECT DISTINCT ON (body) * FROM v ORDER BY body, kind) d;
