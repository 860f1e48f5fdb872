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
}
