-- Every function is marked as it really is, and every public object has a comment.
SELECT p.oid::regprocedure AS function, p.provolatile AS volatile, p.proisstrict AS strict,
       p.proparallel AS parallel, obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simdup'
ORDER BY p.oid::regprocedure::text;

SELECT o.oid::regoperator AS operator, obj_description(o.oid, 'pg_operator') IS NOT NULL AS commented
FROM pg_operator o
JOIN pg_depend d ON d.classid = 'pg_operator'::regclass AND d.objid = o.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simdup'
ORDER BY o.oid::regoperator::text;

-- GUCs are namespaced and documented.
SELECT simhash('') IS NULL AS loaded;
SELECT name, setting, min_val, max_val, context FROM pg_settings WHERE name LIKE 'simdup.%' ORDER BY name;

-- The configuration table (kept by pg_dump) and the event trigger are documented too.
SELECT c.oid::regclass AS config_table, obj_description(c.oid, 'pg_class') IS NOT NULL AS commented,
       c.oid = ANY (e.extconfig) AS dumped
FROM pg_class c
JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'simdup'
ORDER BY 1::text;
SELECT evtname, evtevent, obj_description(oid, 'pg_event_trigger') IS NOT NULL AS commented
FROM pg_event_trigger WHERE evtname LIKE 'simdup%';
