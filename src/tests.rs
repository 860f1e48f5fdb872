//! In-database tests of what pg_regress cannot show well: big inputs, the counters of index
//! and heap reads, the locks the dedup trigger holds, and internal argument checks.

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
    fn layouts_and_k() {
        let offsets = Spi::get_one::<Vec<i32>>("SELECT _simdup_layout(4)").unwrap().unwrap();
        assert_eq!(offsets, vec![0, 16, 32, 48]);
        let offsets = Spi::get_one::<Vec<i32>>("SELECT _simdup_layout(3)").unwrap().unwrap();
        assert_eq!(offsets, vec![0, 22, 43]);
        assert_eq!(Spi::get_one::<i32>("SELECT _simdup_check_k(64)").unwrap(), Some(64));
    }

    #[pg_test(error = "9 blocks is out of range")]
    fn layout_out_of_range() {
        Spi::run("SELECT _simdup_layout(9)").unwrap();
    }

    #[pg_test(error = "maximum distance 65 is out of range")]
    fn k_out_of_range() {
        Spi::run("SELECT _simdup_check_k(65)").unwrap();
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
             FROM _simdup_fingerprint_pairs('p_t', 'fp', 2)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(got, "-2,-1:1 0,1:1 0,3:2 1,3:1");
    }

    #[pg_test(error = "table public.not_enabled is not enabled for simdup")]
    fn pairs_need_enable() {
        Spi::run("CREATE TABLE not_enabled (id int PRIMARY KEY, fp bigint)").unwrap();
        Spi::run("SELECT * FROM simdup_pairs('not_enabled', 3)").unwrap();
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
             FROM _simdup_fingerprint_components('c_t', 'fp', 1)",
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

    /// The dedup trigger checks candidates in the index: a new row whose block value is shared
    /// by 2,000 rows, none of them within k, reads 2,000 index entries and no heap tuple.
    #[pg_test]
    fn dedup_checks_candidates_in_the_index() {
        Spi::run(
            "CREATE TABLE dh (id int PRIMARY KEY, fp bigint);
             SELECT simdup_enable('dh', NULL, 'fp', on_duplicate => 'reject', max_distance => 3);
             ALTER TABLE dh DISABLE TRIGGER simdup_dedup;
             INSERT INTO dh SELECT g, g::bigint << 20 FROM generate_series(1, 2000) g;
             ALTER TABLE dh ENABLE TRIGGER simdup_dedup;",
        )
        .unwrap();
        let counters = "SELECT sum(pg_stat_get_xact_tuples_returned(b.index))::bigint || ' ' ||
                               sum(pg_stat_get_xact_tuples_fetched(b.index))::bigint
                        FROM simdup_block_indexes('dh') b";
        let before = Spi::get_one::<String>(counters).unwrap().unwrap();
        // 7 = 0b111: block 0 (the top 16 bits) is 0, as for every row; 3 + popcount(g) > 3 bits
        // from row g.
        Spi::run("INSERT INTO dh VALUES (5000, 7)").unwrap();
        let after = Spi::get_one::<String>(counters).unwrap().unwrap();
        let parse = |s: &str| -> Vec<i64> { s.split(' ').map(|x| x.parse().unwrap()).collect() };
        let (b, a) = (parse(&before), parse(&after));
        assert!(a[0] - b[0] >= 2000, "index entries read: {} -> {}", before, after);
        assert_eq!(a[1] - b[1], 0, "heap tuples fetched: {} -> {}", before, after);
    }

    /// While it checks a row (its check window) the trigger holds exactly the lock stripes
    /// _simdup_lock_stripes names, exclusively, under simdup's own advisory tag (objsubid
    /// 21316), keyed (table OID, stripe); once the statement has ended it holds none, though its
    /// transaction goes on.
    #[pg_test]
    fn dedup_trigger_locks_its_stripes_in_its_window() {
        Spi::run(
            "CREATE TABLE dk (id int PRIMARY KEY, body text);
             SELECT simdup_enable('dk', 'body', on_duplicate => 'reject', max_distance => 8);
             CREATE TABLE seen (stripes int[], exclusive boolean, subids int[], granted boolean);
             -- A BEFORE trigger that fires after simdup_dedup (names in order), inside the window.
             CREATE FUNCTION observe() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
               INSERT INTO seen
               SELECT array_agg(l.objid::int ORDER BY l.objid), bool_and(l.mode = 'ExclusiveLock'),
                      array_agg(DISTINCT l.objsubid::int), bool_and(l.granted)
               FROM pg_locks l
               WHERE l.locktype = 'advisory' AND l.classid = 'dk'::regclass::oid AND l.pid = pg_backend_pid();
               RETURN NEW;
             END $$;
             CREATE TRIGGER zz_observe BEFORE INSERT ON dk FOR EACH ROW EXECUTE FUNCTION observe();
             INSERT INTO dk VALUES (1, '今天天气很好，我们去公园散步，然后回家吃饭。');",
        )
        .unwrap();
        let same = Spi::get_one::<bool>(
            "SELECT stripes = (SELECT _simdup_lock_stripes(simhash, 8) FROM dk) AND exclusive
                    AND subids = ARRAY[21316] AND granted
             FROM seen",
        )
        .unwrap();
        assert_eq!(same, Some(true));
        let held = |subid: i32| {
            Spi::get_one::<i64>(&format!(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 'dk'::regclass::oid
                   AND objsubid = {subid} AND pid = pg_backend_pid()"
            ))
            .unwrap()
        };
        // The statement has ended: its window is closed, in the same transaction.
        assert_eq!(held(21316), Some(0));
        // pg_advisory_xact_lock on the same (table OID, stripe) keys takes other locks (objsubid
        // 2): a role cannot hold simdup's stripes through the advisory lock functions.
        let taken = Spi::get_one::<i64>(
            "SELECT count(*) FROM (SELECT pg_advisory_xact_lock('dk'::regclass::oid::int, s)
                                   FROM unnest((SELECT _simdup_lock_stripes(simhash, 8) FROM dk)) s) x",
        )
        .unwrap();
        assert_eq!(held(2), taken);
        assert_eq!(held(21316), Some(0));
    }
}
