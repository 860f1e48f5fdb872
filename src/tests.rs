//! In-database tests of what pg_regress cannot show well: interrupts and big inputs.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn simhash_of_text_is_not_null() {
        let fp = Spi::get_one::<i64>("SELECT simhash('今天天气很好，我们去公园散步。')").unwrap();
        assert!(fp.is_some());
    }

    #[pg_test]
    fn featureless_text_is_null() {
        for s in ["''", "'。。。'", "'   '", "'😀🎉'", "E'\\t\\n\\r\\x01'"] {
            let fp = Spi::get_one::<i64>(&format!("SELECT simhash({s})")).unwrap();
            assert_eq!(fp, None, "{s}");
        }
    }

    #[pg_test]
    fn ten_megabytes() {
        // 10 MB of text: a value, no crash.
        let fp = Spi::get_one::<i64>(
            "SELECT simhash(repeat('南京市长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。', 120000))",
        )
        .unwrap();
        assert!(fp.is_some());
    }

    #[pg_test(error = "block index 4 is out of range")]
    fn block_out_of_range() {
        Spi::run("SELECT simhash_block(0, 4)").unwrap();
    }

    #[pg_test]
    fn probe_sizes() {
        for (k, n) in [(0, 1), (3, 1), (4, 17), (7, 17), (8, 137), (11, 137), (12, 697), (64, 65536)] {
            let len = Spi::get_one::<i32>(&format!("SELECT cardinality(simdup_probe(-1, 2, {k}))"))
                .unwrap()
                .unwrap();
            assert_eq!(len, n, "k = {k}");
        }
    }

    #[pg_test(error = "maximum distance 65 is out of range")]
    fn probe_k_out_of_range() {
        Spi::run("SELECT simdup_probe(0, 0, 65)").unwrap();
    }

    #[pg_test(error = "block index 4 is out of range")]
    fn probe_block_out_of_range() {
        Spi::run("SELECT simdup_probe(0, 4, 3)").unwrap();
    }

    #[pg_test]
    fn fingerprint_pairs_of_a_small_table() {
        Spi::run(
            "CREATE TABLE p_t (id int PRIMARY KEY, fp bigint);
             INSERT INTO p_t VALUES (1, 0), (2, 1), (3, 3), (4, 0), (5, -1), (6, -2), (7, NULL);
             SELECT simdup_enable('p_t', NULL, 'fp');",
        )
        .unwrap();
        // fa < fb as bigints: (-2, -1) not (-1, -2); identical fingerprints (0, 0) collapsed.
        let got = Spi::get_one::<String>(
            "SELECT string_agg(fa || ',' || fb || ':' || distance, ' ' ORDER BY fa, fb)
             FROM simdup_fingerprint_pairs('p_t', 2)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(got, "-2,-1:1 0,1:1 0,3:2 1,3:1");
    }

    #[pg_test(error = "table public.not_enabled is not enabled for simdup")]
    fn fingerprint_pairs_needs_enable() {
        Spi::run("CREATE TABLE not_enabled (id int PRIMARY KEY, fp bigint)").unwrap();
        Spi::run("SELECT * FROM simdup_fingerprint_pairs('not_enabled', 3)").unwrap();
    }

    #[pg_test]
    fn components_of_a_small_table() {
        Spi::run(
            "CREATE TABLE c_t (id int PRIMARY KEY, fp bigint);
             INSERT INTO c_t VALUES (1, 0), (2, 1), (3, 3), (4, 1000000), (5, 0), (6, -1);
             SELECT simdup_enable('c_t', NULL, 'fp');",
        )
        .unwrap();
        // 0 - 1 - 3 chain at k = 1; 1000000 and -1 are alone; rows 1 and 5 are identical.
        let got = Spi::get_one::<String>(
            "SELECT string_agg(fp || ':' || component, ' ' ORDER BY fp)
             FROM simdup_fingerprint_components('c_t', 1)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(got, "0:0 1:0 3:0");
        let groups = Spi::get_one::<String>(
            "SELECT string_agg(key || ':' || group_id, ' ' ORDER BY group_id, key) FROM simdup_groups('c_t', 1)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(groups, "1:1 2:1 3:1 5:1");
    }

    #[pg_test]
    fn max_distance_follows_the_guc() {
        Spi::run("SET simdup.max_distance = 7").unwrap();
        assert_eq!(Spi::get_one::<i32>("SELECT simdup_max_distance()").unwrap(), Some(7));
    }

    #[pg_test]
    fn minhash_memo_is_keyed_on_every_argument() {
        // The per-backend memo of minhash(text) must not return a signature made with other k, n.
        let row = Spi::get_one::<String>(
            "SELECT format('%s %s %s %s', cardinality(minhash('今天天气很好')), \
                    cardinality(minhash('今天天气很好', 5, 64)), \
                    minhash('今天天气很好', 2, 64) = minhash('今天天气很好', 5, 64), \
                    minhash('今天天气很好', 2, 64) = (minhash('今天天气很好', 2, 128))[1:64])",
        )
        .unwrap();
        assert_eq!(row.as_deref(), Some("128 64 f t"));
    }

    #[pg_test]
    fn minhash_of_a_megabyte_equals_minhash_of_its_shingles() {
        let same = Spi::get_one::<bool>(
            "WITH t(b) AS (SELECT repeat('南京市长江大桥于1968年建成通车，是第一座双层铁路公路两用桥。 ', 12000)) \
             SELECT minhash(b, 5, 256) = minhash(shingles(b, 5), 256) FROM t",
        )
        .unwrap();
        assert_eq!(same, Some(true));
    }

    #[pg_test(error = "signature must not contain NULL elements")]
    fn null_signature_element() {
        Spi::run("SELECT minhash_bands(ARRAY[1, NULL]::bigint[], 1, 1)").unwrap();
    }

    #[pg_test(error = "threshold must be strictly between 0 and 1, got 1")]
    fn threshold_one() {
        Spi::run("SELECT * FROM minhash_choose_bands(128, 1)").unwrap();
    }

    /// The dedup trigger's lookup (src/dedup.rs) goes through the four block indexes, never a
    /// sequential scan, in the generic plan it runs.
    #[pg_test]
    fn dedup_lookup_uses_the_block_indexes() {
        Spi::run(
            "CREATE TABLE dl (id bigint PRIMARY KEY, body text);
             SELECT simdup_enable('dl', 'body', on_duplicate => 'skip');
             ALTER TABLE dl DISABLE TRIGGER simdup_dedup;
             INSERT INTO dl SELECT g, md5(g::text) || ' ' || md5((-g)::text) FROM generate_series(1, 20000) g;
             ANALYZE dl;",
        )
        .unwrap();
        let query = crate::dedup::lookup_query("public", "public.dl", "simhash", "id", 10);
        Spi::run(&format!("PREPARE dl_lookup(bigint, tid) AS {query}")).unwrap();
        Spi::run("SET LOCAL plan_cache_mode = force_generic_plan").unwrap();
        let plan: Vec<String> = Spi::connect(|c| {
            c.select("EXPLAIN (COSTS OFF) EXECUTE dl_lookup(12345, '(0,0)')", None, &[])
                .unwrap()
                .map(|row| row.get::<String>(1).unwrap().unwrap())
                .collect()
        });
        let plan = plan.join("\n");
        // (Index-only scans once VACUUM has set the visibility map, which a test transaction
        // cannot run; bitmap scans of the same indexes before.)
        for i in 0..4 {
            assert!(plan.contains(&format!("dl_simhash_b{i}_idx")), "block {i}: {plan}");
        }
        assert!(!plan.contains("Seq Scan"), "{plan}");
        Spi::run("DEALLOCATE dl_lookup").unwrap();
    }

    /// A lookup planned while the table was empty (and known to be: ANALYZE of an empty table,
    /// or a table emptied and vacuumed) is planned again as the table grows, instead of keeping
    /// the plan that reads whole block indexes for every row inserted. Counted in index entries
    /// the lookups read in this transaction: the kept plan read 17,984,337 for these 3,000 rows
    /// (about 2 n², quadratic), planned again 179,196 (the first ~8 blocks' worth of rows are
    /// still checked by whole-index reads, then a few candidates a row).
    #[pg_test]
    fn dedup_lookup_is_planned_again_as_the_table_grows() {
        Spi::run(
            "CREATE TABLE dg (id int PRIMARY KEY, body text);
             SELECT simdup_enable('dg', 'body', on_duplicate => 'skip');
             ANALYZE dg;
             INSERT INTO dg SELECT n, concat_ws(' ', md5('a' || n), md5('b' || n), md5('c' || n), md5('d' || n), md5('e' || n))
             FROM generate_series(1, 3000) n;",
        )
        .unwrap();
        let read = Spi::get_one::<i64>(
            "SELECT sum(pg_stat_get_xact_tuples_returned(format('dg_simhash_b%s_idx', i)::regclass))::bigint
             FROM generate_series(0, 3) i",
        )
        .unwrap()
        .unwrap();
        let stored = Spi::get_one::<i64>("SELECT count(*) FROM dg").unwrap().unwrap();
        assert!(stored >= 2990, "{stored} rows stored");
        assert!(read < 600_000, "the lookups read {read} block index entries for 3,000 rows");
    }

    /// A backend keeps at most 64 lookup plans (~130 KB each, kept after their table is
    /// dropped), the most recently used: inserting into 66 tables leaves 64, the last one's
    /// among them and the first one's not.
    #[pg_test]
    fn dedup_keeps_at_most_64_lookup_plans() {
        Spi::run(
            "DO $$ BEGIN FOR i IN 1..66 LOOP
               EXECUTE format('CREATE TABLE dp%s (id int PRIMARY KEY, body text)', i);
               PERFORM simdup_enable(format('dp%s', i)::regclass, 'body', on_duplicate => 'skip');
               EXECUTE format('INSERT INTO dp%s VALUES (1, %L)', i, '今天天气很好，我们去公园散步。' || i);
             END LOOP; END $$;",
        )
        .unwrap();
        let kept = |filter: &str| {
            Spi::get_one::<i64>(&format!(
                "SELECT count(*) FROM pg_backend_memory_contexts
                 WHERE name = 'CachedPlanSource' AND ident LIKE 'WITH f AS MATERIALIZED%' {filter}"
            ))
            .unwrap()
            .unwrap()
        };
        assert_eq!(kept(""), 64);
        assert_eq!(kept("AND ident LIKE '%public.dp66 %'"), 1);
        assert_eq!(kept("AND ident LIKE '%public.dp1 %'"), 0);
    }

    /// The trigger holds exactly the advisory locks simdup_lock_stripes names, keyed
    /// (table OID, stripe) as pg_advisory_xact_lock(int4, int4) does, exclusively.
    #[pg_test]
    fn dedup_trigger_locks_its_stripes() {
        Spi::run(
            "CREATE TABLE dk (id int PRIMARY KEY, body text);
             SELECT simdup_enable('dk', 'body', on_duplicate => 'reject', max_distance => 8);
             INSERT INTO dk VALUES (1, '今天天气很好，我们去公园散步，然后回家吃饭。');",
        )
        .unwrap();
        let same = Spi::get_one::<bool>(
            "SELECT array_agg(l.objid::int ORDER BY l.objid) = (SELECT simdup_lock_stripes(simhash, 8) FROM dk)
                    AND bool_and(l.mode = 'ExclusiveLock' AND l.objsubid = 2 AND l.granted)
             FROM pg_locks l
             WHERE l.locktype = 'advisory' AND l.classid = 'dk'::regclass::oid AND l.pid = pg_backend_pid()",
        )
        .unwrap();
        assert_eq!(same, Some(true));
        // The same keys as the SQL function takes: asking for one again is granted at once
        // (own locks never conflict), and the lock count does not grow.
        let n = Spi::get_one::<i64>(
            "SELECT count(*) FROM (SELECT pg_advisory_xact_lock('dk'::regclass::oid::int, s)
                                   FROM unnest((SELECT simdup_lock_stripes(simhash, 8) FROM dk)) s) x",
        )
        .unwrap();
        let held = Spi::get_one::<i64>(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 'dk'::regclass::oid AND pid = pg_backend_pid()",
        )
        .unwrap();
        assert_eq!(n, held);
    }
}
