-- simdup is a trusted extension: a non-superuser with CREATE on a database can install it
-- (its script runs as the bootstrap superuser; it has no SECURITY DEFINER function, its
-- functions only compute on their arguments, and simdup_enable runs as the caller, so it
-- grants nobody anything they could not do without it). Table owners can enable search and
-- dedup on their tables; others get insufficient_privilege (42501).
\set SHOW_CONTEXT never
CREATE ROLE simdup_alice LOGIN;
CREATE ROLE simdup_bob LOGIN;
CREATE DATABASE simdup_priv;
GRANT CREATE ON DATABASE simdup_priv TO simdup_alice;
\c simdup_priv
GRANT CREATE ON SCHEMA public TO simdup_alice, simdup_bob;
SET ROLE simdup_alice;
CREATE EXTENSION simdup;
SELECT rolsuper FROM pg_roles WHERE rolname = current_user;
SELECT simhash('今天天气很好，我们去公园散步。') IS NOT NULL AS can_fingerprint,
       hamming(1, 2) AS can_compare;
CREATE TABLE alice_docs (id int PRIMARY KEY, body text);
SELECT simdup_enable('alice_docs', 'body', on_duplicate => 'reject');
INSERT INTO alice_docs VALUES (1, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三。');
\set VERBOSITY sqlstate
INSERT INTO alice_docs VALUES (2, '国家统计局今天发布数据显示，今年前三季度全国居民人均可支配收入同比名义增长百分之六点三！');
SET ROLE simdup_bob;
SELECT simdup_enable('alice_docs', 'body');
SELECT simdup_disable('alice_docs');
DELETE FROM simdup_tables;
SELECT count(*) AS alice_rows_left FROM simdup_tables;
-- The search reads indexes and heap directly, so it checks what a query would: bob may not
-- read alice's table, so he cannot probe it either.
SELECT _simdup_tids('alice_docs'::regclass, 3, 0, 64);
SELECT * FROM simdup_nearest('alice_docs', 0, 1);
\set VERBOSITY default
-- With SELECT granted, bob can search; with row-level security in force for him, the planner
-- step is not offered (the policies apply through a sequential scan) and a direct call is
-- refused.
SET ROLE simdup_alice;
GRANT SELECT ON alice_docs TO simdup_bob;
SET ROLE simdup_bob;
SELECT cardinality(_simdup_tids('alice_docs'::regclass, 3, 0, 64)) AS rows_found;
SET ROLE simdup_alice;
ALTER TABLE alice_docs ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_none ON alice_docs FOR SELECT TO simdup_bob USING (false);
SET ROLE simdup_bob;
SELECT count(*) AS visible FROM alice_docs WHERE hamming(simhash, 0) <= 64;
\set VERBOSITY sqlstate
SELECT _simdup_tids('alice_docs'::regclass, 3, 0, 64);
\set VERBOSITY default
RESET ROLE;
SELECT count(*) AS rows FROM alice_docs;
\c simdup_regress
DROP DATABASE simdup_priv;
DROP ROLE simdup_alice;
DROP ROLE simdup_bob;
