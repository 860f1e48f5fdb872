//! The Rust half of near-duplicate search (issue #3). The public SQL API (simdup_enable,
//! simdup_match, simdup_pairs, simdup_groups, ...) is written in `sql/search.sql`; these are the
//! pieces it needs from Rust: the block probes, the "first qualifying block" rule of the batch
//! joins, and union-find for the connected components.

use pgrx::prelude::*;
use pgrx::spi::quote_identifier;
use pgrx::PgRelation;

use crate::errors::invalid_parameter;
use simdup_core::blocks::{block, block_radius, first_block, neighbours};
use simdup_core::components::Components;

const K_HINT: &str = "The maximum distance k is a Hamming distance between 64-bit fingerprints: 0 to 64.";

fn check_k(k: i32) -> u32 {
    if !(0..=64).contains(&k) {
        invalid_parameter(format!("maximum distance {k} is out of range"), K_HINT);
    }
    k as u32
}

fn check_block(i: i32) -> usize {
    if !(0..4).contains(&i) {
        invalid_parameter(
            format!("block index {i} is out of range"),
            "A fingerprint has four 16-bit blocks, numbered 0 to 3.",
        );
    }
    i as usize
}

/// Every value of block `i` of `q` within Hamming radius ⌊k/4⌋ (`q`'s own block included), as
/// 0..65535 in ascending order: the values `simhash_block(fp, i)` must take, for some `i`, when
/// `hamming(fp, q) <= k` (pigeonhole). 1, 17, 137, 697 ... values for k < 4, < 8, < 12, < 16.
#[pg_extern(immutable, strict, parallel_safe)]
fn simdup_probe(q: i64, i: i32, k: i32) -> Vec<i32> {
    let k = check_k(k);
    let i = check_block(i);
    neighbours(block(q as u64, i), block_radius(k)).into_iter().map(i32::from).collect()
}

/// For the batch joins: the first block (0..3) through which a probe around `a` finds `b` at
/// distance `k`, NULL when `hamming(a, b) > k`. Joining on every block and keeping a pair only
/// from this block yields each pair once without a DISTINCT.
#[pg_extern(immutable, strict, parallel_safe)]
fn simdup_pair_block(a: i64, b: i64, k: i32) -> Option<i32> {
    let k = check_k(k);
    first_block(a as u64, b as u64, k).map(|i| i as i32)
}

/// `simdup.max_distance`, the default k of the batch functions. A function (rather than
/// `current_setting(...)` in a DEFAULT) because it also loads the library, which defines the
/// parameter: `current_setting('simdup.max_distance')` fails in a session that has not yet used
/// simdup.
#[pg_extern(stable, parallel_safe)]
fn simdup_max_distance() -> i32 {
    crate::gucs::max_distance()
}

/// Rows fetched per cursor batch while reading the fingerprint pairs.
const BATCH: i64 = 10_000;

/// Connected components of the graph "distinct fingerprints within distance k" of a table
/// enabled with `simdup_enable`: one row per fingerprint that has at least one *other*
/// fingerprint within distance k, with the smallest fingerprint of its component as the
/// component id. Reads `simdup_fingerprint_pairs(tbl, k)` through a cursor; the union-find holds
/// only the fingerprints in those pairs.
#[pg_extern(stable, strict, parallel_restricted)]
fn simdup_fingerprint_components(
    tbl: PgRelation,
    k: i32,
) -> TableIterator<'static, (name!(fp, i64), name!(component, i64))> {
    check_k(k);
    let oid = tbl.oid();
    drop(tbl);
    let schema = Spi::get_one::<String>(
        "SELECT n.nspname::text FROM pg_catalog.pg_extension e \
         JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'simdup'",
    )
    .expect("SPI failed")
    .expect("extension simdup is not installed");
    let query = format!(
        "SELECT fa, fb FROM {}.simdup_fingerprint_pairs($1::pg_catalog.regclass, $2)",
        quote_identifier(schema)
    );

    let mut uf = Components::new();
    // pgrx frees fetched tuple tables only when an SPI session ends: one session per batch.
    let cursor = Spi::connect(|client| {
        client.open_cursor(query.as_str(), &[oid.into(), k.into()]).detach_into_name()
    });
    loop {
        let n = Spi::connect(|client| {
            let mut cursor = client.find_cursor(&cursor).expect("cursor vanished");
            let rows = cursor.fetch(BATCH).expect("fetch failed");
            let n = rows.len();
            for row in rows {
                let a: i64 = row.get(1).expect("fa").expect("fa is NULL");
                let b: i64 = row.get(2).expect("fb").expect("fb is NULL");
                uf.union(a, b);
            }
            if n == 0 {
                drop(cursor); // closes it
            } else {
                cursor.detach_into_name();
            }
            n
        });
        if n == 0 {
            break;
        }
        pgrx::check_for_interrupts!();
    }
    TableIterator::new(uf.labels())
}
