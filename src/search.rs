//! The Rust half of near-duplicate search (issue #3). The public SQL API (simdup_enable,
//! simdup_match, simdup_pairs, simdup_groups, ...) is written in `sql/search.sql`; these are the
//! pieces it needs from Rust: the block probes, the block join of the batch functions (in
//! memory, `simdup_core::pairs`) and union-find for the connected components.

use pgrx::prelude::*;
use pgrx::spi::quote_identifier;
use pgrx::PgRelation;

use crate::errors::{invalid_parameter, not_in_prerequisite_state};
use simdup_core::blocks::{block, block_radius, neighbours};
use simdup_core::components::Components;
use simdup_core::pairs::near_pairs;

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

/// `simdup.max_distance`, the default k of the batch functions. A function (rather than
/// `current_setting(...)` in a DEFAULT) because it also loads the library, which defines the
/// parameter: `current_setting('simdup.max_distance')` fails in a session that has not yet used
/// simdup.
#[pg_extern(stable, parallel_safe)]
fn simdup_max_distance() -> i32 {
    crate::gucs::max_distance()
}

/// Rows fetched per cursor batch while reading fingerprints.
const BATCH: i64 = 50_000;

/// Schema of the extension, quoted for SQL.
///
/// Read-only SPI only (`select`, not `Spi::get_one`, which marks the transaction as writing and
/// assigns it a transaction ID): these functions run inside parallel queries ("cannot assign
/// XIDs during a parallel operation") and on hot standbys.
fn extension_schema() -> String {
    let schema: String = Spi::connect(|client| {
        client
            .select(
                "SELECT n.nspname::text FROM pg_catalog.pg_extension e \
                 JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace \
                 WHERE e.extname = 'simdup'",
                Some(1),
                &[],
            )
            .expect("SPI failed")
            .first()
            .get_one()
            .expect("SPI failed")
            .expect("extension simdup is not installed")
    });
    quote_identifier(schema)
}

/// Every non-NULL fingerprint of a table enabled with `simdup_enable` (duplicates included),
/// read through a cursor.
fn table_fingerprints(tbl: pg_sys::Oid) -> Vec<u64> {
    let config = format!(
        "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), \
                quote_ident(s.fingerprint_column) \
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
         LEFT JOIN {}.simdup_tables s ON s.tbl = c.oid WHERE c.oid = $1",
        extension_schema()
    );
    let (rel, fp) = Spi::connect(|client| {
        let row = client.select(&config, Some(1), &[tbl.into()]).expect("SPI failed").first();
        let rel: String = row.get(1).expect("relation name").expect("relation without a name");
        let fp: Option<String> = row.get(2).expect("fingerprint column");
        (rel, fp)
    });
    let Some(fp) = fp else {
        not_in_prerequisite_state(
            format!("table {rel} is not enabled for simdup"),
            "Call simdup_enable(table, text_column) first.",
        );
    };
    let query = format!("SELECT {fp} FROM {rel} WHERE {fp} IS NOT NULL");
    let mut fps = Vec::new();
    // pgrx frees fetched tuple tables only when an SPI session ends: one session per batch.
    let cursor = Spi::connect(|client| client.open_cursor(query.as_str(), &[]).detach_into_name());
    loop {
        let n = Spi::connect(|client| {
            let mut cursor = client.find_cursor(&cursor).expect("cursor vanished");
            let rows = cursor.fetch(BATCH).expect("fetch failed");
            let n = rows.len();
            for row in rows {
                let v: i64 = row.get(1).expect("fingerprint").expect("NULL fingerprint");
                fps.push(v as u64);
            }
            if n > 0 {
                cursor.detach_into_name();
            } // else dropping it closes it
            n
        });
        if n == 0 {
            break;
        }
        pgrx::check_for_interrupts!();
    }
    fps
}

/// Pairs of distinct fingerprints within distance k of an enabled table, each once, with
/// fa < fb (as bigints).
fn fingerprint_pairs(tbl: pg_sys::Oid, k: i32) -> Vec<(i64, i64)> {
    let k = check_k(k);
    let fps = table_fingerprints(tbl);
    near_pairs(fps, k, &mut || {
        pgrx::check_for_interrupts!();
    })
        .into_iter()
        .map(|(a, b)| {
            let (a, b) = (a as i64, b as i64);
            if a < b { (a, b) } else { (b, a) }
        })
        .collect()
}

/// All pairs of distinct fingerprints of a table enabled with `simdup_enable` within Hamming
/// distance k, each once (fa < fb), with their distance. The distinct fingerprints are read
/// once and joined in memory on equal (k < 4) or neighbouring (radius ⌊k/4⌋) values of each
/// 16-bit block, a pair being kept from its first qualifying block (`simdup_core::pairs`):
/// never all pairs, and many copies of one fingerprint cost nothing. Memory: about 16 bytes per
/// distinct fingerprint, plus the output.
#[pg_extern(stable, strict, parallel_restricted)]
fn simdup_fingerprint_pairs(
    tbl: PgRelation,
    k: i32,
) -> TableIterator<'static, (name!(fa, i64), name!(fb, i64), name!(distance, i32))> {
    let oid = tbl.oid();
    drop(tbl);
    let pairs = fingerprint_pairs(oid, k);
    TableIterator::new(
        pairs.into_iter().map(|(a, b)| (a, b, simdup_core::hamming(a as u64, b as u64) as i32)),
    )
}

/// Connected components of the graph "distinct fingerprints within distance k" of a table
/// enabled with `simdup_enable`: one row per fingerprint that has at least one *other*
/// fingerprint within distance k, with the smallest fingerprint (as a bigint) of its component
/// as the component id.
#[pg_extern(stable, strict, parallel_restricted)]
fn simdup_fingerprint_components(
    tbl: PgRelation,
    k: i32,
) -> TableIterator<'static, (name!(fp, i64), name!(component, i64))> {
    let oid = tbl.oid();
    drop(tbl);
    let mut uf = Components::new();
    for (a, b) in fingerprint_pairs(oid, k) {
        uf.union(a, b);
    }
    TableIterator::new(uf.labels())
}
