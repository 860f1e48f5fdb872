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
}
