-- The SQL surface against hostile or unusual use: functions and operators that shadow the ones
-- simdup calls, rows with different keys, long and colliding names, renamed, retyped and
-- dropped columns, generated fingerprint columns, internal functions called on the wrong
-- columns, and batch calls that would need more memory than allowed.
SET client_min_messages = warning;
\set VERBOSITY default
\set SHOW_CONTEXT never

-- 1. A role that can create objects in a schema on other roles' search_path shadows what
-- simdup's SQL uses; nothing it defines may run when a superuser or a table owner calls simdup.
CREATE ROLE hq_evil;
GRANT CREATE ON SCHEMA public TO hq_evil;
CREATE TABLE hq_t (id int PRIMARY KEY, body text);
SELECT simdup_enable('hq_t', 'body', on_duplicate => 'reject');
SET ROLE hq_evil;
CREATE TABLE public.hq_ran (what text);
GRANT INSERT, SELECT ON public.hq_ran TO PUBLIC;
CREATE FUNCTION public.format(fmt text, a name, b name) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('format(text, name, name)'); RETURN pg_catalog.format(fmt, a, b); END$$;
CREATE FUNCTION public.format(fmt text, a text) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('format(text, text)'); RETURN pg_catalog.format(fmt, a); END$$;
CREATE FUNCTION public.jsonb_typeof(j jsonb) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('jsonb_typeof'); RETURN pg_catalog.jsonb_typeof(j); END$$;
CREATE FUNCTION public.jsonb_object_keys(j jsonb) RETURNS SETOF text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('jsonb_object_keys'); RETURN QUERY SELECT pg_catalog.jsonb_object_keys(j); END$$;
CREATE FUNCTION public.hq_has_key(j jsonb, k name) RETURNS boolean LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('?(jsonb, name)'); RETURN j OPERATOR(pg_catalog.?) k::text; END$$;
CREATE OPERATOR public.? (LEFTARG = jsonb, RIGHTARG = name, FUNCTION = public.hq_has_key);
CREATE FUNCTION public.hq_eq(a name, b text) RETURNS boolean LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('=(name, text)'); RETURN a::text OPERATOR(pg_catalog.=) b; END$$;
CREATE OPERATOR public.= (LEFTARG = name, RIGHTARG = text, FUNCTION = public.hq_eq);
CREATE FUNCTION public.string_agg(text, text) RETURNS text LANGUAGE sql AS 'SELECT NULL::text';
CREATE FUNCTION public.left(text, integer) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('left'); RETURN pg_catalog.left($1, $2); END$$;
CREATE FUNCTION public.octet_length(text) RETURNS integer LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('octet_length'); RETURN pg_catalog.octet_length($1); END$$;
CREATE FUNCTION public.current_setting(text) RETURNS text LANGUAGE plpgsql AS
  $$BEGIN INSERT INTO public.hq_ran VALUES ('current_setting'); RETURN pg_catalog.current_setting($1); END$$;
RESET ROLE;
SET search_path = public, pg_catalog;
SELECT simdup_insert('hq_t', '[{"id": 1, "body": "The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China."}]');
SELECT simdup_insert_select('hq_t', $q$SELECT 2 AS id, 'PostgreSQL is a powerful, open source object-relational database system.' AS body$q$);
SELECT simdup_insert('hq_t', '{"id": 3, "body": "The Nanjing Yangtze River Bridge opened in 1968; it was the first double-deck road and rail bridge across the Yangtze designed and built by China."}');
CREATE TABLE hq_u (id int PRIMARY KEY, body text);
SELECT simdup_enable('hq_u', 'body', on_duplicate => 'mark');
SELECT count(*) FROM simdup_pairs('hq_t', 3);
SELECT count(*) FROM simdup_groups('hq_t', 3);
SELECT simdup_enable_similar('hq_t', 'body') IS NOT NULL AS similar_enabled;
SELECT simdup_disable('hq_u');
SELECT what, count(*) FROM public.hq_ran GROUP BY what;
SELECT rolsuper FROM pg_roles WHERE rolname = 'hq_evil';
RESET search_path;
DROP TABLE public.hq_ran;
DROP FUNCTION public.format(text, name, name), public.format(text, text), public.jsonb_typeof(jsonb),
  public.jsonb_object_keys(jsonb), public.string_agg(text, text), public.left(text, integer),
  public.octet_length(text), public.current_setting(text);
DROP OPERATOR public.? (jsonb, name);
DROP OPERATOR public.= (name, text);
DROP FUNCTION public.hq_has_key(jsonb, name), public.hq_eq(name, text);
REVOKE CREATE ON SCHEMA public FROM hq_evil;
DROP ROLE hq_evil;

-- 2. Every key of every row is written: a later row's keys are not dropped because the first
-- row lacks them; a key that names no column stores nothing of the call (42703).
CREATE TABLE hq_keys (id int PRIMARY KEY, body text, note text DEFAULT 'default note');
SELECT simdup_enable('hq_keys', 'body', on_duplicate => 'skip');
SELECT simdup_insert('hq_keys', '[{"id": 24}, {"id": 25, "body": "A recipe for dumplings: mix flour and water, rest the dough, roll it thin and fill it."}, {"id": 26, "note": "given"}]');
SELECT id, body, note FROM hq_keys ORDER BY id;
SELECT simdup_insert('hq_keys', '[{"id": 27, "body": "x"}, {"id": 28, "nocolumn": 1}]');
SELECT count(*) FROM hq_keys;

-- 3. Names: two 63-byte table names that share their first 54 bytes, and a second similarity
-- index on one column, get indexes of their own.
CREATE TABLE "a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____one" (id int PRIMARY KEY, body text);
CREATE TABLE "a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____two" (id int PRIMARY KEY, body text);
SELECT simdup_enable('"a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____one"', 'body');
SELECT simdup_enable('"a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____two"', 'body');
SELECT count(*) AS block_indexes FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
WHERE i.indrelid IN ('"a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____one"'::regclass,
                     '"a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____two"'::regclass);
SELECT (simdup_enable_similar('"a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____one"', 'body', 0.5)).index IS NOT NULL AS first,
       (simdup_enable_similar('"a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____one"', 'body', 0.8)).index IS NOT NULL AS second;
SELECT count(*) AS similarity_indexes FROM _simdup_similar_indexes('"a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____one"');
DROP TABLE "a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____one", "a_table_name_of_exactly_sixty_three_bytes_shared_prefix_____two";

-- 4. Renamed columns: simdup_disable and the batch functions find the fingerprint column where
-- the rename moved it.
CREATE TABLE hq_ren (id int PRIMARY KEY, body text);
SELECT simdup_enable('hq_ren', 'body');
INSERT INTO hq_ren VALUES (1, 'The Yangtze River Bridge in Nanjing opened in 1968.'), (2, 'The Yangtze River Bridge in Nanjing opened in 1968!');
ALTER TABLE hq_ren RENAME COLUMN simhash TO fp;
SELECT count(*) AS block_indexes FROM simdup_block_indexes('hq_ren');
SELECT * FROM simdup_pairs('hq_ren', 3);
SELECT simdup_disable('hq_ren');
SELECT attname FROM pg_attribute WHERE attrelid = 'hq_ren'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
SELECT count(*) FROM pg_index WHERE indrelid = 'hq_ren'::regclass;
DROP TABLE hq_ren;

-- 5. The dedup trigger checks the columns it reads and writes on every row: retyped, renamed
-- and dropped columns give an error, never a wrong datum written (the server stays up).
CREATE TEMP TABLE hq_m (id bigint PRIMARY KEY, body text);
SELECT simdup_enable('pg_temp.hq_m', 'body', on_duplicate => 'mark');
ALTER TABLE hq_m ALTER COLUMN dup_of TYPE text;
INSERT INTO hq_m VALUES (1, 'The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.');
ALTER TABLE hq_m ALTER COLUMN dup_of TYPE bigint USING dup_of::bigint;
INSERT INTO hq_m VALUES (1, 'The Yangtze River Bridge in Nanjing opened in 1968. It was the first double-deck road and rail bridge over the Yangtze designed and built in China.');
INSERT INTO hq_m VALUES (2, 'The Nanjing Yangtze River Bridge opened in 1968; it was the first double-deck road and rail bridge across the Yangtze designed and built by China.') RETURNING id, dup_of;
ALTER TABLE hq_m ALTER COLUMN id TYPE text;
INSERT INTO hq_m VALUES ('3', 'The Nanjing Yangtze River Bridge opened in 1968, the first double-deck road and rail bridge across the Yangtze designed and built by China.');
ALTER TABLE hq_m RENAME COLUMN body TO txt;
INSERT INTO hq_m VALUES ('4', 'anything');
CREATE TABLE hq_fp (id int PRIMARY KEY, fp bigint);
SELECT simdup_enable('hq_fp', NULL, 'fp', on_duplicate => 'reject');
ALTER TABLE hq_fp ALTER COLUMN fp TYPE integer;
INSERT INTO hq_fp VALUES (1, 42);
DROP TABLE hq_fp;
-- An adopted generated fingerprint column would never be checked (a BEFORE trigger sees it as
-- NULL): refused; search on it works.
CREATE TABLE hq_gen (id int PRIMARY KEY, body text, fp bigint GENERATED ALWAYS AS (simhash(body)) STORED);
SELECT simdup_enable('hq_gen', NULL, 'fp', on_duplicate => 'reject');
SELECT simdup_enable('hq_gen', NULL, 'fp');
DROP TABLE hq_gen;

-- 6. Internal functions on the wrong input give real SQLSTATEs, not internal errors.
SELECT * FROM _simdup_fingerprint_pairs('hq_t', 'body', 3);
SELECT * FROM _simdup_fingerprint_pairs('hq_t', 'nocolumn', 3);
SELECT * FROM minhash_choose_bands(-1, 0.5, 0.9);
SELECT * FROM minhash_choose_bands(-1, 0.5);
SELECT _simdup_check_dedup(0);

-- 7. The batch functions hold their pairs within simdup.batch_memory: more stops them with
-- 54000 before they use more memory.
CREATE TABLE hq_many (id int PRIMARY KEY, fp bigint);
INSERT INTO hq_many SELECT g, hashint8extended(g, 3) FROM generate_series(1, 2000) g;
SELECT simdup_enable('hq_many', NULL, 'fp');
SET simdup.batch_memory = '1MB';
SELECT count(*) FROM simdup_pairs('hq_many', 10);
SELECT count(*) FROM simdup_pairs('hq_many', 64);
SELECT count(*) FROM simdup_groups('hq_many', 64);
RESET simdup.batch_memory;
SELECT count(*) FROM simdup_pairs('hq_many', 64);
-- The memory settings are user-settable, but the DBA's ceiling simdup.memory_limit
-- (superuser-only) caps them: an ordinary role that raises simdup.batch_memory to 2000GB still
-- stops at the ceiling (1MB here: 2,000 rows at k = 64 make 1,999,000 pairs, 32 MB), and cannot
-- raise the ceiling.
SET simdup.memory_limit = '1MB';
CREATE ROLE hq_mem;
GRANT SELECT ON hq_many TO hq_mem;
SET ROLE hq_mem;
SET simdup.batch_memory = '2000GB';
SET simdup.bulk_check_memory = '2000GB';
SET simdup.copy_batch_memory = '1GB';
SELECT count(*) FROM simdup_pairs('hq_many', 64);
SET simdup.memory_limit = '2000GB';
RESET ROLE;
RESET simdup.batch_memory; RESET simdup.bulk_check_memory; RESET simdup.copy_batch_memory;
RESET simdup.memory_limit;
SELECT count(*) FROM simdup_pairs('hq_many', 64);
REVOKE ALL ON hq_many FROM hq_mem;
DROP ROLE hq_mem;
DROP TABLE hq_many, hq_t, hq_u, hq_keys;
